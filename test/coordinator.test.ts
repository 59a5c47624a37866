// The built-in coordinator: milestones that chain, are signed by its keys, reference the past cone in white-flag order
// with the TIP-4 Merkle root of the included transactions, book the ledger, survive a restart on the same store, and
// are issued once per index by instances sharing a store.
import { describe, expect, it } from "vitest";
import { concatBytes } from "../src/bytes/bytes.js";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import { outputId, transactionId } from "../src/model/ids.js";
import { payloadToJson } from "../src/model/json.js";
import { milestonePublicKey, verifyMilestoneSignatures } from "../src/model/milestone.js";
import type { MilestonePayload } from "../src/model/types.js";
import { createCoordinator, createNode, merkleRoot, MemoryStore, type ChrysalisNode, type NodeEvent } from "../src/node/index.js";
import { startNode, COORDINATOR_KEY_SECRET } from "../src/cli/setup.js";
import { genesisLedger, GENESIS_TX, indexationJson, wallet } from "./node-helpers.js";

const seed = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(32));
const leaf = (id: Uint8Array): Uint8Array => blake2b256(concatBytes([Uint8Array.of(0), id]));
const inner = (l: Uint8Array, r: Uint8Array): Uint8Array => blake2b256(concatBytes([Uint8Array.of(1), l, r]));

async function milestonePayload(node: ChrysalisNode, index: number): Promise<MilestonePayload> {
  const record = await node.store.milestone(index);
  const stored = await node.store.get(record!.messageId);
  if (stored?.message.payload?.type !== 1) throw new Error(`milestone ${index} has no milestone message`);
  return stored.message.payload;
}

describe("the white-flag Merkle root (TIP-4)", () => {
  it("empty, one leaf, and splits at the largest power of two below the count", () => {
    const ids = [1, 2, 3, 4, 5].map((n) => new Uint8Array(32).fill(n));
    expect(merkleRoot([])).toEqual(blake2b256(new Uint8Array(0)));
    expect(merkleRoot(ids.slice(0, 1))).toEqual(leaf(ids[0]!));
    expect(merkleRoot(ids.slice(0, 2))).toEqual(inner(leaf(ids[0]!), leaf(ids[1]!)));
    expect(merkleRoot(ids.slice(0, 3))).toEqual(inner(inner(leaf(ids[0]!), leaf(ids[1]!)), leaf(ids[2]!)));
    const four = inner(inner(leaf(ids[0]!), leaf(ids[1]!)), inner(leaf(ids[2]!), leaf(ids[3]!)));
    expect(merkleRoot(ids)).toEqual(inner(four, leaf(ids[4]!)));
  });
});

describe("milestones: chained, signed, confirming their past cone", () => {
  it("each milestone is index + 1, has the previous one among its parents and verifies against both keys", async () => {
    const node = createNode({ network: "chrysalis-coo", minPoWScore: 10, pow: { workers: 1 } });
    const keys = [seed(), seed()];
    const coordinator = createCoordinator(node, { keys });
    try {
      const first = (await coordinator.issue())!;
      await node.submitMessage(indexationJson("between"));
      const second = (await coordinator.issue())!;
      expect([first.index, second.index]).toEqual([1, 2]);
      expect(second.timestamp).toBeGreaterThanOrEqual(first.timestamp);
      const payload = await milestonePayload(node, 2);
      expect(payload.parents.map(toHex)).toContain(first.messageId);
      expect(payload.publicKeys.map(toHex)).toEqual(keys.map((k) => toHex(milestonePublicKey(k))).sort());
      expect(coordinator.publicKeys).toEqual(payload.publicKeys.map(toHex));
      expect(verifyMilestoneSignatures(payload, { publicKeys: keys.map((k) => milestonePublicKey(k)), threshold: 2 })).toEqual({ valid: true });
      expect(verifyMilestoneSignatures(payload, { publicKeys: [milestonePublicKey(seed())] }).valid).toBe(false);
      expect(await node.health()).toBe(true);
      expect(await node.nodeInfo()).toMatchObject({ latestMilestoneIndex: 2, confirmedMilestoneIndex: 2, latestMilestoneTimestamp: second.timestamp, isHealthy: true });
    } finally {
      await coordinator.stop();
      await node.close();
    }
  });

  it("a transaction is included (UTXO changes, Merkle root of its message); its copy in another message is conflicting; the events follow the write", async () => {
    const owner = wallet();
    const other = wallet();
    const node = createNode({ network: "chrysalis-coo", minPoWScore: 1, ledger: genesisLedger(owner), pow: { workers: 1 } });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const events: NodeEvent[] = [];
    node.subscribe((e) => events.push(e));
    try {
      await coordinator.issue();
      const payload = buildTransactionPayload({
        inputs: [{ transactionId: GENESIS_TX, transactionOutputIndex: 0, seed: owner.seed }],
        outputs: [{ type: 0, address: { type: 0, address: other.address }, amount: 2_779_530_283_277_761 }],
      });
      const txId = transactionId(payload);
      const { messageId: first } = await node.submitMessage({ payload: payloadToJson(payload) });
      // The same transaction in a second message (a reattachment): stored without touching the ledger again.
      const { messageId: copy } = await node.submitMessage({ parentMessageIds: [first], payload: payloadToJson(payload) });
      expect(copy).not.toBe(first);
      const noise = (await node.submitMessage(indexationJson("noise"))).messageId;
      events.length = 0;
      const milestone = (await coordinator.issue())!;
      const meta = async (id: string) => node.store.metadata(id);
      expect(await meta(first)).toMatchObject({ referencedByMilestoneIndex: 2, ledgerInclusionState: "included" });
      expect(await meta(copy)).toMatchObject({ referencedByMilestoneIndex: 2, ledgerInclusionState: "conflicting", conflictReason: 2 });
      expect(await meta(noise)).toMatchObject({ referencedByMilestoneIndex: 2, ledgerInclusionState: "noTransaction" });
      expect(await meta(milestone.messageId)).toMatchObject({ referencedByMilestoneIndex: 2, milestoneIndex: 2 });
      expect(await node.store.utxoChanges(2)).toEqual({ index: 2, createdOutputs: [outputId(txId, 0)], consumedOutputs: [outputId(GENESIS_TX, 0)] });
      expect((await node.store.output(outputId(txId, 0)))?.milestoneIndexBooked).toBe(2);
      expect((await node.store.output(outputId(GENESIS_TX, 0)))?.spent?.milestoneIndex).toBe(2);
      expect((await milestonePayload(node, 2)).inclusionMerkleProof).toEqual(leaf(fromHex(first, "id", 32)));
      // Events after the write: referenced messages, both outputs, the transaction, then the milestone last.
      const kinds = events.map((e) => e.type);
      expect(kinds.at(-1)).toBe("milestone");
      expect(events.filter((e) => e.type === "referenced").map((e) => (e as { stored: { id: string } }).stored.id)).toEqual(expect.arrayContaining([first, copy, noise, milestone.messageId]));
      expect(events.filter((e) => e.type === "output")).toHaveLength(2);
      expect(events.find((e) => e.type === "transaction")).toMatchObject({ transactionId: txId, milestoneIndex: 2 });

      // A third copy after confirmation: the transaction is booked already, so that copy conflicts with reason 1.
      const late = (await node.submitMessage({ payload: payloadToJson(payload) })).messageId;
      await coordinator.issue();
      expect(await meta(late)).toMatchObject({ ledgerInclusionState: "conflicting", conflictReason: 1 });
    } finally {
      await coordinator.stop();
      await node.close();
    }
  });

  it("a milestone payload from a submitter is refused: milestones come from the coordinator only", async () => {
    const node = createNode({ network: "chrysalis-coo", minPoWScore: 1, pow: { workers: 1 } });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    try {
      await coordinator.issue();
      const payload = await milestonePayload(node, 1);
      await expect(node.submitMessage({ payload: payloadToJson({ ...payload, index: 2 }) })).rejects.toMatchObject({ code: "MILESTONE_REFUSED", status: 400, path: "payload" });
      expect((await node.store.latestMilestone())?.index).toBe(1);
    } finally {
      await coordinator.stop();
      await node.close();
    }
  });
});

describe("milestones survive a restart and instances sharing a store issue each index once", () => {
  it("a node restarted on the same store continues at the next index with the key it kept there", async () => {
    const store = new MemoryStore();
    const options = { network: "chrysalis-coo", minPoWScore: 1, pow: { workers: 1 }, store, host: "127.0.0.1", port: 0, coordinator: { intervalMs: 60_000 } } as const;
    const first = await startNode({ ...options });
    await waitFor(async () => ((await store.latestMilestone())?.index ?? 0) >= 1);
    const keyBefore = first.coordinator!.publicKeys;
    // Stop the coordinator and server only; the store stays open, as a database outlives the process.
    await first.coordinator!.stop();
    const kept = await store.secret(COORDINATOR_KEY_SECRET, () => new Uint8Array(32));
    expect(toHex(milestonePublicKey(kept))).toBe(keyBefore[0]);
    const second = createNode({ network: "chrysalis-coo", minPoWScore: 1, pow: { workers: 1 }, store });
    const coordinator = createCoordinator(second, { keys: [kept] });
    try {
      const next = (await coordinator.issue())!;
      expect(next.index).toBe(2);
      expect((await milestonePayload(second, 2)).parents.map(toHex)).toContain((await store.milestone(1))!.messageId);
    } finally {
      await coordinator.stop();
      await first.server.close();
    }
  });

  it("two coordinators racing on one store: one milestone per index, the loser's round ends without error", async () => {
    const store = new MemoryStore();
    const a = createNode({ network: "chrysalis-coo", minPoWScore: 1, pow: { workers: 1 }, store });
    const b = createNode({ network: "chrysalis-coo", minPoWScore: 1, pow: { workers: 1 }, store });
    const key = seed();
    const ca = createCoordinator(a, { keys: [key] });
    const cb = createCoordinator(b, { keys: [key] });
    try {
      for (let round = 0; round < 4; round++) {
        const results = await Promise.all([ca.issue(), cb.issue()]);
        const issued = results.filter((r) => r !== undefined);
        expect(issued.length).toBeGreaterThanOrEqual(1);
        expect(new Set(issued.map((r) => r!.index)).size).toBe(issued.length);
      }
      const latest = (await store.latestMilestone())!.index;
      for (let i = 1; i <= latest; i++) expect(await store.milestone(i)).toBeDefined();
    } finally {
      await ca.stop();
      await cb.stop();
      await a.close();
    }
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
