// Our own client (chrysalis-core/client) on the routes users need, against a node that answers in Hornet's shapes: a
// transfer from genesis read back through metadata, children, outputs, addresses and milestones.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { bech32Address } from "../src/crypto/address.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import { outputId, transactionId } from "../src/model/ids.js";
import { createClient, ClientError, type ChrysalisClient } from "../src/client/index.js";
import { startFullNode, within } from "./clients-helpers.js";
import { GENESIS_TX, indexationJson, wallet } from "./node-helpers.js";

describe("chrysalis-core/client reads metadata, children, outputs, addresses and milestones", () => {
  const owner = wallet();
  const other = wallet();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  let client: ChrysalisClient;
  beforeAll(async () => {
    run = await startFullNode({ genesisAddress: owner.address, coordinator: { intervalMs: 300 } });
    client = createClient(run.url);
  });
  afterAll(() => run.close());

  it("a transfer, then every read of it with typed results", async () => {
    const payload = buildTransactionPayload({
      inputs: [{ transactionId: GENESIS_TX, transactionOutputIndex: 0, seed: owner.seed }],
      outputs: [
        { type: 0, address: { type: 0, address: other.address }, amount: 5_000_000 },
        { type: 0, address: { type: 0, address: owner.address }, amount: 2_779_530_283_277_761 - 5_000_000 },
      ],
    });
    const txId = transactionId(payload);
    const id = await client.submitMessage({ payload });
    const child = await client.submitMessage({ parentMessageIds: [id], ...indexationJson("child of a transfer") });
    // A milestone issued meanwhile may name the transfer as a parent too (the coordinator runs every 300 ms).
    expect(await client.getMessageChildren(id)).toContain(child);
    expect(await client.findMessages("child of a transfer")).toEqual([child]);
    const metadata = await within(5000, (async () => {
      for (;;) {
        const m = await client.getMessageMetadata(id);
        if (m.referencedByMilestoneIndex !== undefined) return m;
        await new Promise((r) => setTimeout(r, 30));
      }
    })(), "the transfer's milestone");
    expect(metadata).toMatchObject({ messageId: id, isSolid: true, ledgerInclusionState: "included" });
    const milestone = await client.getMilestone(metadata.referencedByMilestoneIndex!);
    expect(milestone.index).toBe(metadata.referencedByMilestoneIndex);
    const changes = await client.getMilestoneUtxoChanges(milestone.index);
    expect(changes.consumedOutputs).toEqual([outputId(GENESIS_TX, 0)]);
    expect(changes.createdOutputs).toHaveLength(2);
    const index = payload.essence.outputs.findIndex((o) => toHex(o.address.address) === toHex(other.address));
    expect(await client.getOutput(outputId(txId, index))).toMatchObject({ messageId: id, transactionId: txId, outputIndex: index, isSpent: false, output: { amount: 5_000_000 } });
    expect(await client.getOutput(outputId(GENESIS_TX, 0))).toMatchObject({ isSpent: true, milestoneIndexSpent: milestone.index, transactionIdSpent: txId });
    const byBech32 = await client.getAddress(bech32Address("atoi", other.address));
    expect(byBech32).toMatchObject({ addressType: 0, address: toHex(other.address), balance: 5_000_000, dustAllowed: false });
    expect(await client.getAddress(toHex(other.address))).toEqual(byBech32);
    expect((await client.getAddressOutputs(toHex(owner.address), { includeSpent: true })).outputIds).toEqual([outputId(txId, 1 - index), outputId(GENESIS_TX, 0)]);
    expect((await client.getAddressOutputs(bech32Address("atoi", other.address), { type: 1 })).count).toBe(0);
    expect((await client.getTransactionIncludedMessage(txId)).payload).toMatchObject({ type: 0 });
    expect(await client.getHealth()).toBe(true);
    expect((await client.getInfo()).latestMilestoneIndex).toBeGreaterThanOrEqual(milestone.index);
  });

  it("errors are ClientErrors with the node's status and reason", async () => {
    await expect(client.getMilestone(4_000_000_000)).rejects.toMatchObject({ status: 404 });
    const error = await client.getAddress("atoi1notanaddress").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ status: 400, reason: "INVALID_BECH32" });
  });
});
