// The embedded engine's writes made many at a time: accepts in flight together share one LMDB transaction (lmdb-js
// batches them), each accept's records gathered while it reads and checks and written at its end, a coordinator's
// milestone in a nested transaction beside them. The rules: what a batch of writes leaves is what the same writes one
// by one leave (the memory engine is the reference), a write refused inside a batch leaves nothing while the others
// land, and a nonce redeemed by many at once is redeemed once.
import { afterEach, describe, expect, it } from "vitest";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { LmdbStore, MemoryStore, ZERO_MESSAGE_ID, type Acceptance, type NodeStore, type ReferencedMessage } from "../src/node/index.js";
import { GENESIS_OUTPUT, NETWORK, dag, genesisOf, indexation, milestoneApplication, refusal, single, spend, tempDir, wallet } from "./store-helpers.js";

function sorted(ids: readonly string[]): string[] {
  return [...ids].sort();
}

const MI = 1_000_000;

describe("writes in flight together leave what the same writes one by one leave", () => {
  const stores: NodeStore[] = [];
  const dirs: { remove(): void }[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) dir.remove();
  });

  async function lmdb(open: Parameters<NodeStore["open"]>[0] = { network: NETWORK }): Promise<LmdbStore> {
    const dir = tempDir("lmdb-writes");
    dirs.push(dir);
    const store = new LmdbStore({ path: dir.path });
    stores.push(store);
    await store.open(open);
    return store;
  }

  it.each([40, 300])("in groups of %i started together: unreferenced, children, index, metadata the same as the memory engine's, and verify() finds nothing wrong", async (group) => {
    const messages = dag(300, group);
    const reference = new MemoryStore();
    await reference.open({ network: NETWORK });
    for (const m of messages) expect((await reference.accept(m)).stored).toBe(true);
    const store = await lmdb();
    // Each group in one LMDB transaction (or a few), after the previous one landed.
    for (let at = 0; at < messages.length; at += group) {
      const results = await Promise.all(messages.slice(at, at + group).map((m) => store.accept(m)));
      expect(results.every((r) => r.stored)).toBe(true);
    }
    expect(await store.unreferenced(1000)).toEqual(await reference.unreferenced(1000));
    for (const m of messages) {
      expect(await store.children(m.id, 100)).toEqual(await reference.children(m.id, 100));
      expect((await store.metadata(m.id))?.referencedByMilestoneIndex).toBeUndefined();
    }
    expect(await store.children(ZERO_MESSAGE_ID, 1000)).toEqual(await reference.children(ZERO_MESSAGE_ID, 1000));
    const index = new TextEncoder().encode(`dag ${group} 3`);
    expect(await store.findByIndex(index, 1000)).toEqual(await reference.findByIndex(index, 1000));
    // Accepting any of them again stores nothing, in a batch as alone.
    const again = await Promise.all(messages.slice(0, 20).map((m) => store.accept(m)));
    expect(again.every((r) => !r.stored)).toBe(true);
    expect(await store.verify()).toBeUndefined();
  });

  it("a coordinator's milestone among accepts in flight (a nested write beside flat ones): each write answers and leaves what it does one by one", async () => {
    const owner = wallet();
    const to = wallet();
    const open = { network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) };
    const reference = new MemoryStore();
    await reference.open(open);
    const store = await lmdb(open);
    const first = spend(owner, [GENESIS_OUTPUT], [single(to, MI), single(owner, TOTAL_SUPPLY - MI)]);
    for (const s of [reference, store]) expect(await s.accept(first.acceptance)).toEqual({ stored: true });
    const rest = first.created[first.payload.essence.outputs.findIndex((o) => o.amount === TOTAL_SUPPLY - MI)]!;
    const note = indexation([first.acceptance.id], "in the batch");
    const ms = indexation([note.id], "milestone 1");
    const referenced: ReferencedMessage[] = [
      { messageId: first.acceptance.id, ledgerInclusionState: "included" },
      { messageId: note.id, ledgerInclusionState: "noTransaction" },
    ];
    const milestone = await milestoneApplication(reference, { index: 1, timestamp: 1_700_000_001, message: ms, referenced, included: [first] });
    const rival = indexation([note.id], "milestone 1 again");
    // In call order: the note, the milestone confirming it, a spend of the output the milestone creates (claimed), a
    // spend of the output it spent (refused), a second milestone 1 (refused), and one more note.
    const onward = spend(owner, [rest], [single(to, TOTAL_SUPPLY - MI)], [ms.id]);
    const late = spend(owner, [GENESIS_OUTPUT], [single(to, TOTAL_SUPPLY)], [ms.id], "late");
    const writes: Acceptance[] = [
      note,
      { ...ms, milestone },
      onward.acceptance,
      late.acceptance,
      { ...rival, milestone: { ...milestone, messageId: rival.id, referenced: [{ messageId: rival.id, ledgerInclusionState: "noTransaction" }] } },
      indexation([ms.id], "after the milestone"),
    ];
    const outcome = (r: PromiseSettledResult<unknown>): unknown => (r.status === "fulfilled" ? r.value : (r.reason as { code?: string }).code);
    const alone: unknown[] = [];
    for (const w of writes) alone.push(outcome((await Promise.allSettled([reference.accept(w)]))[0]!));
    const together = (await Promise.allSettled(writes.map((w) => store.accept(w)))).map(outcome);
    expect(together).toEqual(alone);
    expect(together).toEqual([{ stored: true }, { stored: true }, { stored: true }, "INPUT_SPENT", "MILESTONE_CONFLICT", { stored: true }]);

    const state = async (s: NodeStore): Promise<unknown> => ({
      unreferenced: await s.unreferenced(100),
      metadata: await Promise.all(writes.map(async (w) => (await s.metadata(w.id)) ?? null)),
      claims: await Promise.all([GENESIS_OUTPUT, rest].map(async (o) => (await s.claim(o)) ?? null)),
      outputs: await Promise.all([GENESIS_OUTPUT, ...first.created, ...onward.created].map(async (o) => (await s.output(o)) ?? null)),
      balances: await Promise.all([owner, to].map((w) => s.addressBalance(w.address))),
      addressOutputs: await Promise.all([owner, to].map((w) => s.addressOutputs(w.address, { max: 10, includeSpent: true }))),
      latest: await s.latestMilestone(),
      changes: await s.utxoChanges(1),
    });
    const [mine, theirs] = [await state(store), await state(reference)];
    // (Arrival times are the same objects' on both; metadata is compared whole.)
    expect(mine).toEqual(theirs);
    expect((await store.claim(rest))?.transactionId).toBe(onward.transactionId);
    expect(await store.verify()).toBeUndefined();
  });

  it("of several claims on one output in one batch exactly one lands; the refused ones leave nothing, the messages beside them land, and the ledger moves at none of them", async () => {
    const owner = wallet();
    const store = await lmdb({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
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
    }
    const winner = winners[0]!;
    expect(sorted(await store.children(parent.id, 100))).toEqual(sorted([winner.acceptance.id, ...notes.map((n) => n.id)]));
    expect(await store.unreferenced(100)).toEqual([parent.id, ...order.filter((a) => stored.includes(a)).map((a) => a.id)]);
    expect(await store.claim(GENESIS_OUTPUT)).toEqual({ transactionId: winner.transactionId, messageId: winner.acceptance.id, index: 0 });
    // The ledger is what no milestone changed: nothing spent, nothing created.
    expect((await store.output(GENESIS_OUTPUT))?.spent).toBeUndefined();
    for (const s of spends) expect(await store.output(s.created[0]!)).toBeUndefined();
    expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY, dustAllowance: 0, dustOutputs: 0 });
    for (const t of thieves) expect(await store.addressBalance(t.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.verify()).toBeUndefined();
  });

  it("a nonce redeemed by many at once, beside other nonces, is redeemed once; each other nonce once", async () => {
    const store = await lmdb();
    const now = Date.now();
    const calls = Array.from({ length: 48 }, (_, i) => (i % 3 === 0 ? "shared" : `own ${i}`));
    const results = await Promise.all(calls.map((nonce) => store.redeemNonce(nonce, now + 60_000)));
    expect(results.filter((r, i) => r && calls[i] === "shared")).toHaveLength(1);
    expect(results.filter((r, i) => r && calls[i] !== "shared")).toHaveLength(32);
    expect(await Promise.all(["shared", "own 1", "own 47"].map((nonce) => store.redeemNonce(nonce, now + 60_000)))).toEqual([false, false, false]);
  });

  it("nonces redeemed one an event turn while earlier ones commit (grouped commits): each once, and still after reopening", async () => {
    const store = await lmdb();
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
    const store = await lmdb();
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
