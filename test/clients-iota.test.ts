// iota.js 1.8.6, unmodified, against a real node on loopback: every SingleNodeClient call a wallet or explorer makes, the
// high-level helpers (send, sendData, retrieveData, promote, reattach, retry), LocalPowProvider, and a wallet flow end to
// end with MqttClient waiting for the milestone. The node is the one `chrysalis serve` assembles.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Converter, WriteStream } from "@iota/util.js";
import {
  Bech32Helper,
  LocalPowProvider,
  SingleNodeClient,
  promote,
  reattach,
  retrieveData,
  retry,
  send,
  sendData,
  serializeMessage,
  type MessageJson,
} from "@iota/iota.js";
import { MqttClient } from "@iota/mqtt.js";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { messageId as idOf, outputId, transactionId } from "../src/model/ids.js";
import { verifyMilestoneSignatures } from "../src/model/milestone.js";
import { decodeMessage } from "../src/model/codec.js";
import { createCoordinator, createHandler, createNode, MemoryStore, serve, type Coordinator } from "../src/node/index.js";
import { closeMqtt, firstEvent, NETWORK, randomSeed, startFullNode, walletAddress, within } from "./clients-helpers.js";
import { GENESIS_TX } from "./node-helpers.js";

const HRP = "atoi";

describe("SingleNodeClient against a node with its coordinator: every read and write a wallet makes", () => {
  const genesisSeed = randomSeed();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  let client: SingleNodeClient;
  beforeAll(async () => {
    run = await startFullNode({ genesisAddress: walletAddress(genesisSeed) });
    client = new SingleNodeClient(run.url);
    await within(5000, (async () => {
      while (((await client.info()).latestMilestoneIndex ?? 0) < 1) await new Promise((r) => setTimeout(r, 50));
    })(), "the first milestone");
  });
  afterAll(() => run.close());

  it("health() is true once milestones flow; info() has Hornet's fields and the network's name", async () => {
    expect(await client.health()).toBe(true);
    const info = await client.info();
    expect(info).toMatchObject({ networkId: NETWORK, bech32HRP: HRP, minPoWScore: 50, isHealthy: true, pruningIndex: 0, features: ["PoW"] });
    expect(info.latestMilestoneIndex).toBeGreaterThanOrEqual(1);
    expect(info.confirmedMilestoneIndex).toBe(info.latestMilestoneIndex);
    expect(Math.abs(info.latestMilestoneTimestamp - Date.now() / 1000)).toBeLessThan(60);
    for (const key of ["messagesPerSecond", "referencedMessagesPerSecond", "referencedRate"] as const) expect(typeof info[key]).toBe("number");
  });

  it("tips() answers up to 4 sorted ids", async () => {
    const { tipMessageIds } = await client.tips();
    expect(tipMessageIds.length).toBeGreaterThanOrEqual(1);
    expect(tipMessageIds.length).toBeLessThanOrEqual(4);
    expect([...tipMessageIds].sort()).toEqual(tipMessageIds);
  });

  it("messageSubmit (node fills and mines), message, messageRaw, messageMetadata, messageChildren, messagesFind", async () => {
    const payload = { type: 2 as const, index: Converter.utf8ToHex("wallet-reads"), data: Converter.utf8ToHex("one") };
    const id = await client.messageSubmit({ payload });
    const message = await client.message(id);
    expect(message.payload).toEqual(payload);
    expect(message.networkId).toBeDefined();
    const raw = await client.messageRaw(id);
    expect(idOf(raw)).toBe(id);
    const child = await client.messageSubmit({ parentMessageIds: [id], payload: { type: 2, index: Converter.utf8ToHex("wallet-reads"), data: "" } });
    const children = await client.messageChildren(id);
    // A milestone issued meanwhile may name the message as a parent too (the coordinator runs every 500 ms).
    expect(children).toMatchObject({ messageId: id, maxResults: 1000 });
    expect(children.childrenMessageIds).toContain(child);
    expect(children.count).toBe(children.childrenMessageIds.length);
    const found = await client.messagesFind("wallet-reads");
    expect(found).toMatchObject({ index: Converter.utf8ToHex("wallet-reads"), maxResults: 1000, count: 2 });
    expect(found.messageIds).toEqual(expect.arrayContaining([id, child]));
    const fresh = await client.messageMetadata(child);
    expect(fresh.messageId).toBe(child);
    expect(fresh.parentMessageIds).toEqual([id]);
    expect(fresh.isSolid).toBe(true);
    // Until the next milestone: solid, unreferenced, both advice flags present; after it: referenced, no advice.
    const referenced = await within(5000, (async () => {
      for (;;) {
        const m = await client.messageMetadata(child);
        if (m.referencedByMilestoneIndex !== undefined) return m;
        expect(m).toMatchObject({ shouldPromote: false, shouldReattach: false });
        await new Promise((r) => setTimeout(r, 50));
      }
    })(), "the child's milestone");
    expect(referenced.ledgerInclusionState).toBe("noTransaction");
    expect(referenced).not.toHaveProperty("shouldPromote");
    const milestone = await client.milestone(referenced.referencedByMilestoneIndex!);
    expect(milestone.index).toBe(referenced.referencedByMilestoneIndex);
    const milestoneMessage = await client.message(milestone.messageId);
    expect(milestoneMessage.payload?.type).toBe(1);
    const milestoneMeta = await client.messageMetadata(milestone.messageId);
    expect(milestoneMeta).toMatchObject({ referencedByMilestoneIndex: milestone.index, milestoneIndex: milestone.index, ledgerInclusionState: "noTransaction" });
  });

  it("messageSubmitRaw with networkId 0 and nonce 0: the node fills the network and mines", async () => {
    const { tipMessageIds } = await client.tips();
    const stream = new WriteStream();
    serializeMessage(stream, { networkId: "0", parentMessageIds: tipMessageIds, payload: { type: 2, index: Converter.utf8ToHex("raw"), data: "" }, nonce: "0" });
    const id = await client.messageSubmitRaw(stream.finalBytes());
    const stored = decodeMessage(await client.messageRaw(id));
    expect(stored.networkId).not.toBe(0n);
    expect(stored.parents.map(toHex)).toEqual(tipMessageIds);
  });

  it("sendData and retrieveData round-trip an indexation payload", async () => {
    const { messageId } = await sendData(client, "data-key", "some data");
    const data = await retrieveData(client, messageId);
    expect(Converter.bytesToUtf8(data!.index)).toBe("data-key");
    expect(Converter.bytesToUtf8(data!.data!)).toBe("some data");
  });

  it("send from the genesis seed: address, addressEd25519, addressOutputs (type, include-spent), output, transactionIncludedMessage, milestoneUtxoChanges", async () => {
    const recipientSeed = randomSeed();
    const recipient = walletAddress(recipientSeed);
    const recipientBech32 = Bech32Helper.toBech32(0, recipient, HRP);
    const { messageId, message } = await send(client, genesisSeed, 0, recipientBech32, 3_000_000);
    const tx = message.payload!;
    const txId = transactionIdIn(await client.messageRaw(messageId));
    // The ledger moves when a milestone confirms the transaction (the coordinator runs every 500 ms).
    await within(10_000, (async () => {
      while ((await client.messageMetadata(messageId)).ledgerInclusionState !== "included") await new Promise((r) => setTimeout(r, 50));
    })(), "the transaction's confirmation");

    const balance = await client.address(recipientBech32);
    expect(balance).toMatchObject({ addressType: 0, address: toHex(recipient), balance: 3_000_000, dustAllowed: false });
    expect(await client.addressEd25519(toHex(recipient))).toMatchObject({ balance: 3_000_000 });
    const outputs = await client.addressOutputs(recipientBech32);
    expect(outputs).toMatchObject({ addressType: 0, address: toHex(recipient), maxResults: 1000, count: 1 });
    expect((await client.addressEd25519Outputs(toHex(recipient), 1)).count).toBe(0);
    expect((await client.addressEd25519Outputs(toHex(recipient), 0, true)).outputIds).toEqual(outputs.outputIds);
    const output = await client.output(outputs.outputIds[0]!);
    expect(output).toMatchObject({ messageId, transactionId: txId, isSpent: false, output: { type: 0, address: { type: 0, address: toHex(recipient) }, amount: 3_000_000 } });
    expect(tx.essence!.inputs).toEqual([{ type: 0, transactionId: GENESIS_TX, transactionOutputIndex: 0 }]);
    // The genesis output is spent by this transaction; with include-spent it is listed after the unspent ones.
    const genesisHex = toHex(walletAddress(genesisSeed));
    const spentToo = await client.addressEd25519Outputs(genesisHex, undefined, true);
    expect(spentToo.outputIds.at(-1)).toBe(outputId(GENESIS_TX, 0));
    expect((await client.output(outputId(GENESIS_TX, 0))).isSpent).toBe(true);

    expect(idOfMessage(await client.transactionIncludedMessage(txId))).toBe(messageId);
    const meta = await within(5000, (async () => {
      for (;;) {
        const m = await client.messageMetadata(messageId);
        if (m.referencedByMilestoneIndex !== undefined) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
    })(), "the transaction's milestone");
    expect(meta.ledgerInclusionState).toBe("included");
    const changes = await client.milestoneUtxoChanges(meta.referencedByMilestoneIndex!);
    expect(changes.index).toBe(meta.referencedByMilestoneIndex);
    expect(changes.createdOutputs).toEqual(expect.arrayContaining(outputs.outputIds));
    expect(changes.consumedOutputs).toContain(outputId(GENESIS_TX, 0));
    const booked = await client.output(outputId(GENESIS_TX, 0));
    expect(booked).toMatchObject({ isSpent: true, milestoneIndexSpent: meta.referencedByMilestoneIndex, transactionIdSpent: txId });
  });

  it("receipts() and treasury(): a network without migration has no receipts and an empty treasury", async () => {
    expect(await client.receipts()).toEqual({ receipts: [] });
    expect(await client.receipts(3)).toEqual({ receipts: [] });
    expect(await client.treasury()).toEqual({ milestoneId: "0".repeat(64), amount: 0 });
  });

  it("the milestones are signed by the coordinator's key over the essence (verifyMilestoneSignatures)", async () => {
    const { latestMilestoneIndex } = await client.info();
    const milestone = await client.milestone(latestMilestoneIndex);
    const message = decodeMessage(await client.messageRaw(milestone.messageId));
    if (message.payload?.type !== 1) throw new Error("not a milestone message");
    expect(message.payload.index).toBe(latestMilestoneIndex);
    const keys = run.coordinator!.publicKeys.map((k) => fromHex(k, "key", 32));
    expect(verifyMilestoneSignatures(message.payload, { publicKeys: keys })).toEqual({ valid: true });
  });

  it("errors come back as iota.js ClientErrors with Hornet's code", async () => {
    await expect(client.message("ab".repeat(32))).rejects.toMatchObject({ httpStatus: 404, code: "404" });
    await expect(client.milestone(999_999)).rejects.toMatchObject({ httpStatus: 404 });
    await expect(client.address("iota1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqjqpy2wl")).rejects.toMatchObject({ httpStatus: 400 });
  });
});

describe("a wallet end to end: fund from genesis with send, wait for the milestone with MqttClient, read the balance, spend again", () => {
  it("two transfers, each confirmed by a milestone announced over MQTT", async () => {
    const genesisSeed = randomSeed();
    const run = await startFullNode({ genesisAddress: walletAddress(genesisSeed) });
    const mqtt = new MqttClient(run.mqttUrl);
    try {
      const client = new SingleNodeClient(run.url);
      const alice = randomSeed();
      const bob = randomSeed();
      const aliceHex = toHex(walletAddress(alice));
      const aliceBech32 = Bech32Helper.toBech32(0, walletAddress(alice), HRP);
      const bobBech32 = Bech32Helper.toBech32(0, walletAddress(bob), HRP);

      // Subscribe first: the output event for Alice's address comes when the milestone confirms the transfer.
      const funded = firstEvent<{ isSpent: boolean; output: { amount: number } }>((cb) => mqtt.addressEd25519Outputs(aliceHex, cb), (d) => !d.isSpent, 10_000, "Alice's output over MQTT");
      await new Promise((r) => setTimeout(r, 200));
      const fund = await send(client, genesisSeed, 0, aliceBech32, 2_000_000);
      const event = await funded;
      expect(event.data.output.amount).toBe(2_000_000);
      const confirmedAt = await firstEvent<{ index: number; timestamp: number }>((cb) => mqtt.milestonesConfirmed(cb), () => true, 5000, "a confirmed milestone");
      const fundMeta = await client.messageMetadata(fund.messageId);
      expect(fundMeta.ledgerInclusionState).toBe("included");
      expect(fundMeta.referencedByMilestoneIndex).toBeLessThanOrEqual(confirmedAt.data.index);
      expect((await client.address(aliceBech32)).balance).toBe(2_000_000);

      // Alice spends half to Bob; the rest comes back to her address (iota.js's remainder).
      const bobOutput = firstEvent<{ isSpent: boolean; output: { amount: number } }>((cb) => mqtt.addressOutputs(bobBech32, cb), (d) => !d.isSpent, 10_000, "Bob's output over MQTT");
      await new Promise((r) => setTimeout(r, 200));
      const spend = await send(client, alice, 0, bobBech32, 1_000_000);
      expect((await bobOutput).data.output.amount).toBe(1_000_000);
      expect((await client.address(bobBech32)).balance).toBe(1_000_000);
      expect((await client.address(aliceBech32)).balance).toBe(1_000_000);
      expect((await client.messageMetadata(spend.messageId)).ledgerInclusionState).toBe("included");
      // The genesis address holds the rest of the supply.
      expect((await client.addressEd25519(toHex(walletAddress(genesisSeed)))).balance).toBe(TOTAL_SUPPLY - 2_000_000);
    } finally {
      closeMqtt(mqtt);
      await run.close();
    }
  });
});

describe("LocalPowProvider: the client mines, the node checks", () => {
  it("messageSubmit and messageSubmitRaw with a LocalPowProvider at the node's score", async () => {
    // iota.js's JavaScript Curl does about 3 k hashes/s here, so the score is low enough for a second or two of mining.
    const run = await startFullNode({ minPoWScore: 10, pow: false, coordinator: false });
    try {
      const client = new SingleNodeClient(run.url, { powProvider: new LocalPowProvider() });
      const id = await client.messageSubmit({ payload: { type: 2, index: Converter.utf8ToHex("local pow"), data: "" } });
      const stored = decodeMessage(await client.messageRaw(id));
      expect(stored.nonce).not.toBe(0n);
      const { tipMessageIds } = await client.tips();
      const stream = new WriteStream();
      serializeMessage(stream, { networkId: "0", parentMessageIds: tipMessageIds, payload: { type: 2, index: Converter.utf8ToHex("local pow raw"), data: "" }, nonce: "0" });
      const rawId = await client.messageSubmitRaw(stream.finalBytes());
      expect(idOf(await client.messageRaw(rawId))).toBe(rawId);
      // Without a provider the node (PoW off) refuses to mine, as Hornet: 400.
      await expect(new SingleNodeClient(run.url).messageSubmit({ payload: { type: 2, index: "00", data: "" } })).rejects.toMatchObject({ httpStatus: 400 });
    } finally {
      await run.close();
    }
  });
});

describe("promote, reattach and retry follow Hornet's advice", () => {
  // Milestones are issued by hand here so the test decides how far the confirmed index moves; the node's Tangle in
  // memory remembers one message, so a message can be left out of every later milestone (the coordinator forgot it).
  let node: ReturnType<typeof createNode>;
  let coordinator: Coordinator;
  let server: Awaited<ReturnType<typeof serve>>;
  let client: SingleNodeClient;
  beforeAll(async () => {
    node = createNode({ network: NETWORK, minPoWScore: 1, store: new MemoryStore(), tangle: { maxMessages: 1 }, pow: { workers: 1 } });
    coordinator = createCoordinator(node, { keys: [globalThis.crypto.getRandomValues(new Uint8Array(32))] });
    server = await serve(createHandler(node), { host: "127.0.0.1", port: 0, onClose: () => node.close() });
    client = new SingleNodeClient(server.url);
  });
  afterAll(async () => {
    await coordinator.stop();
    await server.close();
  });
  const milestones = async (n: number): Promise<number> => {
    let index = 0;
    for (let i = 0; i < n; i++) index = (await coordinator.issue())!.index;
    return index;
  };

  it("an old message is promoted, a forgotten one reattached; retry picks which, and refuses a fresh one", async () => {
    await milestones(1);
    const { messageId: anchor } = await sendData(client, "anchor");
    const anchorIndex = await milestones(1);
    expect((await client.messageMetadata(anchor)).referencedByMilestoneIndex).toBe(anchorIndex);
    await milestones(10);
    // Attached to a message confirmed 10 milestones ago: its youngest cone root lags more than 8, so promote.
    const old = await client.messageSubmit({ parentMessageIds: [anchor], payload: { type: 2, index: Converter.utf8ToHex("old"), data: "" } });
    expect(await client.messageMetadata(old)).toMatchObject({ shouldPromote: true, shouldReattach: false });
    const promoted = await retry(client, old);
    expect((await client.message(promoted.messageId)).parentMessageIds).toContain(old);
    const direct = await promote(client, old);
    expect((await client.message(direct.messageId)).parentMessageIds).toContain(old);

    await milestones(5);
    // 15 milestones behind: still attachable; then another message takes the only tip slot and a milestone passes.
    const forgotten = await client.messageSubmit({ parentMessageIds: [anchor], payload: { type: 2, index: Converter.utf8ToHex("forgotten"), data: Converter.utf8ToHex("again") } });
    const latest = await client.milestone((await client.info()).latestMilestoneIndex);
    await client.messageSubmit({ parentMessageIds: [latest.messageId], payload: null });
    await milestones(1);
    const advice = await client.messageMetadata(forgotten);
    expect(advice).toMatchObject({ shouldPromote: false, shouldReattach: true });
    expect(advice.referencedByMilestoneIndex).toBeUndefined();
    const reattached = await retry(client, forgotten);
    expect((await client.message(reattached.messageId)).payload).toEqual((await client.message(forgotten)).payload);
    const again = await reattach(client, forgotten);
    expect(again.messageId).not.toBe(forgotten);

    const fresh = await client.messageSubmit({ payload: { type: 2, index: Converter.utf8ToHex("fresh"), data: "" } });
    await expect(retry(client, fresh)).rejects.toThrow(/should not be promoted or reattached/);
  });
});

function idOfMessage(message: MessageJson): string {
  const stream = new WriteStream();
  serializeMessage(stream, message);
  return idOf(stream.finalBytes());
}

// The transaction id of the transaction in a stored message, from its bytes (not from iota.js's model).
function transactionIdIn(raw: Uint8Array): string {
  const message = decodeMessage(raw);
  if (message.payload?.type !== 0) throw new Error("not a transaction message");
  return transactionId(message.payload);
}
