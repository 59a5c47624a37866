// The embedded engine's writes made many at a time: accepts in flight together share one LMDB transaction (lmdb-js
// batches them), each accept's records gathered while it reads and checks and written at its end. The rules: what a
// batch of accepts leaves is what the same accepts one by one leave (the memory engine is the reference), an accept
// refused inside a batch leaves nothing while the others land, and a nonce redeemed by many at once is redeemed once.
import { afterEach, describe, expect, it } from "vitest";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { LmdbStore, MemoryStore, ZERO_MESSAGE_ID, type Acceptance, type NodeStore } from "../src/node/index.js";
import { GENESIS_OUTPUT, NETWORK, dag, genesisOf, indexation, refusal, single, spend, tempDir, wallet } from "./store-helpers.js";

function sorted(ids: readonly string[]): string[] {
  return [...ids].sort();
}

describe("accepts in flight together leave what the same accepts one by one leave", () => {
  const stores: NodeStore[] = [];
  const dirs: { remove(): void }[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) dir.remove();
  });

  async function lmdb(maxTips: number): Promise<LmdbStore> {
    const dir = tempDir("lmdb-writes");
    dirs.push(dir);
    const store = new LmdbStore({ path: dir.path, maxTips });
    stores.push(store);
    await store.open({ network: NETWORK });
    return store;
  }

  it.each([3, 1000])("tips (at most %i), children, index, metadata: the same as the memory engine's, and verify() finds nothing wrong", async (maxTips) => {
    const messages = dag(300, maxTips);
    const reference = new MemoryStore({ maxTips });
    await reference.open({ network: NETWORK });
    for (const m of messages) expect((await reference.accept(m)).stored).toBe(true);
    const store = await lmdb(maxTips);
    // In groups of 40 started together (one LMDB transaction, or a few), each group after the previous one landed.
    for (let at = 0; at < messages.length; at += 40) {
      const results = await Promise.all(messages.slice(at, at + 40).map((m) => store.accept(m)));
      expect(results.every((r) => r.stored)).toBe(true);
    }
    expect(sorted(store.allTips())).toEqual(sorted(reference.allTips()));
    for (const m of messages) {
      expect(sorted(await store.children(m.id, 100))).toEqual(sorted(await reference.children(m.id, 100)));
      expect((await store.metadata(m.id))?.referencedByMilestoneIndex).toBeUndefined();
    }
    expect(sorted(await store.children(ZERO_MESSAGE_ID, 1000))).toEqual(sorted(await reference.children(ZERO_MESSAGE_ID, 1000)));
    const index = new TextEncoder().encode(`dag ${maxTips} 3`);
    expect(await store.findByIndex(index, 1000)).toEqual(await reference.findByIndex(index, 1000));
    // Accepting any of them again stores nothing, in a batch as alone.
    const again = await Promise.all(messages.slice(0, 20).map((m) => store.accept(m)));
    expect(again.every((r) => !r.stored)).toBe(true);
    expect(await store.verify()).toBeUndefined();
  });

  it("a store opened again with a smaller maxTips drops the oldest tip the accept leaves, not a parent it removes", async () => {
    const dir = tempDir("lmdb-writes");
    dirs.push(dir);
    const first = new LmdbStore({ path: dir.path, maxTips: 1000 });
    await first.open({ network: NETWORK });
    const tips: string[] = [];
    for (let i = 0; i < 6; i++) {
      const m = indexation([ZERO_MESSAGE_ID], `tip ${i}`);
      await first.accept(m);
      tips.push(m.id);
    }
    await first.close();
    const store = new LmdbStore({ path: dir.path, maxTips: 3 });
    stores.push(store);
    await store.open({ network: NETWORK });
    // Its parent is the oldest tip: that one goes as a parent, and the oldest of the rest as the one too many.
    const m = indexation([tips[0]!], "on the oldest");
    await store.accept(m);
    expect(sorted(store.allTips())).toEqual(sorted([...tips.slice(2), m.id]));
    // Each accept drops one more until the bound holds again.
    const n = indexation([m.id], "on the newest");
    await store.accept(n);
    expect(sorted(store.allTips())).toEqual(sorted([...tips.slice(3), n.id]));
    expect(await store.verify()).toBeUndefined();
  });

  it("of several spends of one output in one batch exactly one lands; the refused ones leave nothing, the messages beside them land", async () => {
    const dir = tempDir("lmdb-writes");
    dirs.push(dir);
    const owner = wallet();
    const store = new LmdbStore({ path: dir.path });
    stores.push(store);
    await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    const parent = indexation([ZERO_MESSAGE_ID], "parent");
    await store.accept(parent);
    const thieves = Array.from({ length: 6 }, () => wallet());
    const spends = thieves.map((to, i) => spend(owner, [GENESIS_OUTPUT], [single(to, TOTAL_SUPPLY)], [parent.id], `spend ${i}`));
    const notes = Array.from({ length: 6 }, (_, i) => indexation([parent.id], `note ${i}`));
    // Interleaved, all started together: one LMDB transaction holds the winner, the refused ones and the notes.
    const order = spends.flatMap((s, i) => [s.acceptance, notes[i]!]);
    const settled = await Promise.allSettled(order.map((a) => store.accept(a)));
    const stored = order.filter((_, i) => settled[i]!.status === "fulfilled");
    const winners = spends.filter((s) => stored.includes(s.acceptance));
    expect(winners).toHaveLength(1);
    for (const note of notes) expect(stored).toContain(note);
    for (const [i, s] of spends.entries()) {
      if (s === winners[0]) continue;
      const outcome = settled[order.indexOf(s.acceptance)]!;
      expect(outcome.status).toBe("rejected");
      const error = await refusal(Promise.reject((outcome as PromiseRejectedResult).reason));
      expect(error.code).toBe("INPUT_SPENT");
      expect(await store.has(s.acceptance.id)).toBe(false);
      expect(await store.metadata(s.acceptance.id)).toBeUndefined();
      expect(await store.findByIndex(new TextEncoder().encode(`spend ${i}`), 10)).toEqual([]);
      expect(await store.output(s.created[0]!)).toBeUndefined();
      expect(await store.addressBalance(thieves[i]!.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    }
    const winner = winners[0]!;
    expect(sorted(await store.children(parent.id, 100))).toEqual(sorted([winner.acceptance.id, ...notes.map((n) => n.id)]));
    expect(sorted(store.allTips())).toEqual(sorted([winner.acceptance.id, ...notes.map((n) => n.id)]));
    expect((await store.output(GENESIS_OUTPUT))?.spent?.transactionId).toBe(winner.transactionId);
    expect(await store.addressBalance(owner.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.verify()).toBeUndefined();
  });

  it("a nonce redeemed by many at once, beside other nonces, is redeemed once; each other nonce once", async () => {
    const store = await lmdb(1000);
    const now = Date.now();
    const calls = Array.from({ length: 48 }, (_, i) => (i % 3 === 0 ? "shared" : `own ${i}`));
    const results = await Promise.all(calls.map((nonce) => store.redeemNonce(nonce, now + 60_000)));
    expect(results.filter((r, i) => r && calls[i] === "shared")).toHaveLength(1);
    expect(results.filter((r, i) => r && calls[i] !== "shared")).toHaveLength(32);
    expect(await Promise.all(["shared", "own 1", "own 47"].map((nonce) => store.redeemNonce(nonce, now + 60_000)))).toEqual([false, false, false]);
  });

  it("nonces redeemed one an event turn while earlier ones commit (grouped commits): each once, and still after reopening", async () => {
    const store = await lmdb(1000);
    const now = Date.now();
    const calls = Array.from({ length: 60 }, (_, i) => (i % 4 === 3 ? `nonce ${i - 2}` : `nonce ${i}`));
    const pending: Promise<boolean>[] = [];
    for (const nonce of calls) {
      pending.push(store.redeemNonce(nonce, now + 60_000));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await Promise.all(pending);
    const distinct = new Set(calls);
    for (const nonce of distinct) expect(results.filter((r, i) => r && calls[i] === nonce)).toHaveLength(1);
    expect(results.filter((r) => r)).toHaveLength(distinct.size);
    await store.close();
    const again = new LmdbStore({ path: store.path });
    stores.push(again);
    await again.open({ network: NETWORK });
    expect(await Promise.all([...distinct].map((nonce) => again.redeemNonce(nonce, now + 60_000)))).toEqual([...distinct].map(() => false));
  });

  it("close() lets the writes already made finish, those waiting for their group included, and refuses the calls after it", async () => {
    const store = await lmdb(1000);
    const now = Date.now();
    const nonces = Array.from({ length: 30 }, (_, i) => `before close ${i}`);
    const accept = indexation([ZERO_MESSAGE_ID], "before close", "a message");
    const made = [...nonces.map((nonce) => store.redeemNonce(nonce, now + 60_000)), store.accept(accept).then((r) => r.stored)];
    const closed = store.close();
    expect((await refusal(store.redeemNonce("after close", now + 60_000))).code).toBe("STORE_UNAVAILABLE");
    expect(await Promise.all(made)).toEqual(made.map(() => true));
    await closed;
    const again = new LmdbStore({ path: store.path });
    stores.push(again);
    await again.open({ network: NETWORK });
    expect(await Promise.all(nonces.map((nonce) => again.redeemNonce(nonce, now + 60_000)))).toEqual(nonces.map(() => false));
    expect(await again.has(accept.id)).toBe(true);
    expect(await again.redeemNonce("after close", now + 60_000)).toBe(true);
  });
});
