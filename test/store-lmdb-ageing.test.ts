// The embedded engine's ageing, on real LMDB files: pruning by milestone (what goes, what stays, across reopening),
// snapshots read from one store and loaded into a new one, verify() naming a record damaged on purpose, the
// migration of a schema-1 store, and compaction (smaller file, refused while another process has the store open).
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { auth } from "../src/cli/commands.js";
import { openSharedStore } from "../src/cli/setup.js";
import { dbCommand } from "../src/cli/storage.js";
import { createPruner } from "../src/node/pruning.js";
import { LmdbStore, ZERO_MESSAGE_ID, type Acceptance, type LedgerSnapshot, type PruneStep, type ReferencedMessage } from "../src/node/index.js";
import { GENESIS_OUTPUT, NETWORK, asSchema3, dustAllowance, genesisOf, hexOf, indexation, milestoneApplication, refusal, single, spend, splitMessageRecords, tempDir, wallet, type Spend, type Wallet } from "./store-helpers.js";

const MI = 1_000_000;
const utf8 = new TextEncoder();
const dirs = tempDir("lmdb-ageing");
afterAll(() => dirs.remove());
let made = 0;
const freshPath = (): string => join(dirs.path, `store-${++made}`);

/** One milestone's worth of messages, as `build` made them. */
interface Round {
  readonly index: number;
  readonly note: Acceptance;
  readonly tx: Spend;
  readonly milestone: Acceptance;
  /** The output the owner spent in this round, and the one paid to the round's recipient. */
  readonly spent: string;
  readonly paid: string;
  readonly recipient: Wallet;
}

/** The milestone `index` as the coordinator hands it to `store`: its message confirms `referenced` and itself, and the
 * transactions `included` move the ledger. */
async function milestoneOf(store: LmdbStore, index: number, parents: string[], referenced: ReferencedMessage[], included: Spend[]): Promise<Acceptance> {
  const message = indexation(parents, `milestone ${index}`);
  return { ...message, milestone: await milestoneApplication(store, { index, timestamp: 1_700_000_000 + index, message, referenced, included }) };
}

/**
 * A ledger store with `rounds` milestones. In round i the owner pays 1 Mi to a new recipient (spending last round's
 * change), a note carries index `note i` and the shared index `shared`, and milestone i confirms both. Before
 * milestone 1 an orphan arrives that no milestone ever references.
 */
async function build(path: string, rounds: number, padding = ""): Promise<{ store: LmdbStore; owner: Wallet; rounds: Round[]; orphan: Acceptance }> {
  const store = new LmdbStore(path);
  const owner = wallet();
  await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
  const orphan = indexation([ZERO_MESSAGE_ID], "orphan");
  await store.accept(orphan);
  const out: Round[] = [];
  let parent = ZERO_MESSAGE_ID;
  let input = GENESIS_OUTPUT;
  let left = TOTAL_SUPPLY;
  for (let index = 1; index <= rounds; index++) {
    const recipient = wallet();
    const note = indexation([parent], `note ${index}`, padding);
    const shared = indexation([parent], "shared", padding);
    const tx = spend(owner, [input], [single(recipient, MI), single(owner, left - MI)], [parent]);
    for (const a of [note, shared, tx.acceptance]) expect(await store.accept(a)).toEqual({ stored: true });
    const outputs = tx.payload.essence.outputs;
    const paid = tx.created[outputs.findIndex((o) => hexOf(o.address.address) === hexOf(recipient.address))]!;
    const change = tx.created[outputs.findIndex((o) => hexOf(o.address.address) === hexOf(owner.address))]!;
    const milestone = await milestoneOf(
      store,
      index,
      [note.id, shared.id, tx.acceptance.id],
      [
        { messageId: note.id, ledgerInclusionState: "noTransaction" },
        { messageId: shared.id, ledgerInclusionState: "noTransaction" },
        { messageId: tx.acceptance.id, ledgerInclusionState: "included" },
      ],
      [tx],
    );
    expect(await store.accept(milestone)).toEqual({ stored: true });
    out.push({ index, note, tx, milestone, spent: input, paid, recipient });
    parent = milestone.id;
    input = change;
    left -= MI;
  }
  return { store, owner, rounds: out, orphan };
}

/** Prunes to `target` in steps of `batch`, as the pruner does; returns the steps. */
async function pruneTo(store: LmdbStore, target: number, batch: number): Promise<{ steps: number; messages: number }> {
  let steps = 0;
  let messages = 0;
  for (;;) {
    const step = await store.prune(target, batch);
    steps++;
    messages += step.messages;
    expect(step.messages).toBeLessThanOrEqual(batch);
    if (step.done) return { steps, messages };
    expect(steps).toBeLessThan(10_000);
  }
}

/** Raw access to a closed store's LMDB environment, as damage or an older version would leave it. */
async function raw<T>(path: string, body: (db: import("lmdb").RootDatabase<Buffer, Buffer>) => T | Promise<T>): Promise<T> {
  const { open } = await import("lmdb");
  const db = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
  try {
    return await body(db);
  } finally {
    await db.close();
  }
}

/** Another process with the store's environment open (a slot in LMDB's reader table), until end(). */
async function heldOpenElsewhere(path: string): Promise<{ pid: number; end(): Promise<void> }> {
  const script = `const { open } = require(${JSON.stringify(require.resolve("lmdb"))});
    const db = open({ path: ${JSON.stringify(path)}, keyEncoding: "binary", encoding: "binary" });
    db.get(Buffer.from([0]));
    process.stdout.write("ready\\n");
    process.stdin.on("data", () => {}).on("end", () => process.exit(0));`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => (chunk.toString().includes("ready") ? resolve() : undefined));
    child.once("exit", (code) => reject(new Error(`the child exited with ${code}`)));
  });
  return {
    pid: child.pid!,
    end: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

/** What verify() says of the store at `path`, opened for it alone. */
async function verifyAt(path: string): Promise<string | undefined> {
  const s = new LmdbStore(path);
  await s.open({ network: NETWORK });
  try {
    return await s.verify();
  } finally {
    await s.close();
  }
}

/** A big-endian u32, as keys and records hold one. */
const u32 = (n: number): Buffer => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/** `build` of three rounds, then the owner's change claimed by a pending transaction. */
async function buildWithClaim(path: string): Promise<Awaited<ReturnType<typeof build>> & { change: string; pending: Spend }> {
  const built = await build(path, 3);
  const last = built.rounds[2]!;
  const change = last.tx.created.find((id) => id !== last.paid)!;
  const pending = spend(built.owner, [change], [single(built.owner, TOTAL_SUPPLY - 3 * MI)], [last.milestone.id]);
  await built.store.accept(pending.acceptance);
  return { ...built, change, pending };
}

const keyOf = (prefix: number, ...parts: (string | Uint8Array)[]): Buffer =>
  Buffer.concat([Buffer.from([prefix]), ...parts.map((p) => (typeof p === "string" ? Buffer.from(p, "hex") : Buffer.from(p)))]);

describe("pruning on LMDB: the confirmed cones below the target go, the ledger stays exact", () => {
  it("pruned messages, milestones and spent outputs are gone; kept ones are intact byte for byte; none is left unreferenced", async () => {
    const path = freshPath();
    const { store, owner, rounds, orphan } = await build(path, 12);
    const sharedBefore = await store.findByIndex(utf8.encode("shared"), 1000);
    expect(sharedBefore).toHaveLength(12);
    expect(await store.pruningIndex()).toBe(0);

    // Batches of 2: milestone 1 (orphan + 4 messages) takes three steps, so a step never finishes it early.
    const { steps, messages } = await pruneTo(store, 5, 2);
    expect(messages).toBe(1 + 5 * 4);
    expect(steps).toBeGreaterThanOrEqual(11);
    expect(await store.pruningIndex()).toBe(5);

    for (const round of rounds.slice(0, 5)) {
      for (const id of [round.note.id, round.tx.acceptance.id, round.milestone.id]) {
        expect(await store.get(id)).toBeUndefined();
        expect(await store.has(id)).toBe(false);
        expect(await store.metadata(id)).toBeUndefined();
        expect(await store.children(id, 10)).toEqual([]);
      }
      expect(await store.findByIndex(utf8.encode(`note ${round.index}`), 10)).toEqual([]);
      expect(await store.milestone(round.index)).toBeUndefined();
      expect(await store.utxoChanges(round.index)).toBeUndefined();
      // The output the round spent is gone with it; what it paid stays, unspent, with its balance.
      expect(await store.output(round.spent)).toBeUndefined();
      expect(await store.output(round.paid)).toMatchObject({ outputId: round.paid, milestoneIndexBooked: round.index });
      expect((await store.output(round.paid))?.spent).toBeUndefined();
      expect(await store.addressBalance(round.recipient.address)).toEqual({ balance: MI, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressOutputs(round.recipient.address, { max: 10, includeSpent: true })).toEqual([round.paid]);
    }
    expect(await store.get(orphan.id)).toBeUndefined();
    expect(await store.metadata(orphan.id)).toBeUndefined();
    expect(await store.findByIndex(utf8.encode("shared"), 1000)).toEqual(sharedBefore.slice(5));

    for (const round of rounds.slice(5)) {
      const kept = await store.get(round.note.id);
      expect(Buffer.from(kept!.bytes).equals(Buffer.from(round.note.bytes))).toBe(true);
      expect(await store.metadata(round.milestone.id)).toMatchObject({ referencedByMilestoneIndex: round.index, milestoneIndex: round.index });
      expect(await store.milestone(round.index)).toEqual({ index: round.index, messageId: round.milestone.id, timestamp: 1_700_000_000 + round.index });
      expect(await store.utxoChanges(round.index)).toMatchObject({ consumedOutputs: [round.spent] });
      expect((await store.output(round.spent))?.spent?.milestoneIndex).toBe(round.index);
    }
    // Milestone 6's message still lists its children; milestone 5's, pruned, none (its entries as a parent went too).
    expect(new Set(await store.children(rounds[5]!.milestone.id, 10))).toEqual(new Set([rounds[6]!.note.id, rounds[6]!.tx.acceptance.id, (await store.findByIndex(utf8.encode("shared"), 1000))[1]!]));
    // The orphan, never referenced, went with milestone 1; every other message is referenced.
    expect(await store.unreferenced(1000)).toEqual([]);

    // The owner's balance is exact; the genesis output, spent and pruned, is refused as not found.
    expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY - 12 * MI, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.addressOutputs(owner.address, { max: 10, includeSpent: true })).toHaveLength(1 + 7);
    const respend = spend(owner, [GENESIS_OUTPUT], [single(owner, TOTAL_SUPPLY)], [rounds[11]!.milestone.id]);
    expect((await refusal(store.accept(respend.acceptance))).code).toBe("INPUT_NOT_FOUND");
    expect(await store.verify()).toBeUndefined();

    // The pruning index survives reopening; pruning stops short of the latest milestone whatever the target.
    await store.close();
    const again = new LmdbStore(path);
    await again.open({ network: NETWORK });
    expect(await again.pruningIndex()).toBe(5);
    const last = await again.prune(1000, 1000);
    expect(last.done).toBe(false);
    await pruneTo(again, 1000, 1000);
    expect(await again.pruningIndex()).toBe(11);
    expect(await again.latestMilestone()).toMatchObject({ index: 12 });
    expect(await again.get(rounds[11]!.milestone.id)).toBeDefined();
    expect(await again.prune(1000, 10)).toEqual({ pruningIndex: 11, messages: 0, done: true });
    expect(await again.verify()).toBeUndefined();
    await again.close();
  });

  it("a message not yet referenced that arrived after milestone m's message stays when m is pruned", async () => {
    const { store, rounds } = await build(freshPath(), 3);
    const late = indexation([rounds[2]!.milestone.id], "late");
    await store.accept(late);
    await pruneTo(store, 2, 100);
    expect(await store.has(late.id)).toBe(true);
    expect(await store.unreferenced(10)).toEqual([late.id]);
    expect(await store.verify()).toBeUndefined();
    await store.close();
  });
});

describe("pruning keeps an LMDB store at a plateau while the ledger moves at confirmation", () => {
  it("150 rounds of claims, double spends, notes and milestones, pruned to the last 20: pages in use and the file stop growing, no claim, pending output or spent output left behind", async () => {
    const path = freshPath();
    const store = new LmdbStore(path);
    const ring = Array.from({ length: 6 }, () => wallet());
    await store.open({ network: NETWORK, genesis: genesisOf(ring[0]!, TOTAL_SUPPLY) });
    const ROUNDS = 150;
    const KEEP = 20;
    let held = GENESIS_OUTPUT;
    let parent = ZERO_MESSAGE_ID;
    const samples: { bytes: number; file: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const from = ring[(round - 1) % ring.length]!;
      const to = ring[round % ring.length]!;
      // The holder passes the whole supply on through the API (a claim on its output); a peer's message spends the
      // same output elsewhere (no claim: found conflicting); notes beside them.
      const pass = spend(from, [held], [single(to, TOTAL_SUPPLY)], [parent], "ring");
      const rival = spend(from, [held], [single(wallet(), TOTAL_SUPPLY)], [pass.acceptance.id]);
      const notes = Array.from({ length: 3 }, (_, i) => indexation([parent], `round ${round % 10}`, `note ${i} ${"x".repeat(400)}`));
      expect(await store.accept(pass.acceptance)).toEqual({ stored: true });
      expect(await store.accept({ ...rival.acceptance, claim: undefined })).toEqual({ stored: true });
      for (const n of notes) await store.accept(n);
      expect((await store.claim(held))?.transactionId).toBe(pass.transactionId);
      const milestone = await milestoneOf(
        store,
        round,
        [rival.acceptance.id, ...notes.map((n) => n.id)],
        [
          { messageId: pass.acceptance.id, ledgerInclusionState: "included" },
          { messageId: rival.acceptance.id, ledgerInclusionState: "conflicting", conflictReason: 2 },
          ...notes.map((n) => ({ messageId: n.id, ledgerInclusionState: "noTransaction" as const })),
        ],
        [pass],
      );
      expect(await store.accept(milestone)).toEqual({ stored: true });
      expect(await store.claim(held)).toBeUndefined();
      held = pass.created[0]!;
      parent = milestone.id;
      if (round > KEEP) await pruneTo(store, round - KEEP, 32);
      const stats = await store.stats();
      samples.push({ bytes: stats.bytes, file: stats.fileBytes });
      if (round % 50 === 0) expect(await store.verify()).toBeUndefined();
    }
    // What is kept: the last 20 milestones' messages (6 a round), one unspent output, no claim or pending output, no
    // spent output but those of the kept milestones.
    expect(await store.stats()).toMatchObject({ messages: KEEP * 6, unspentOutputs: 1, latestMilestoneIndex: ROUNDS, pruningIndex: ROUNDS - KEEP });
    await store.close();
    const counts = await raw(path, (db) => Object.fromEntries([0x07, 0x08, 0x14, 0x15, 0x16].map((p) => [p, db.getKeysCount({ start: Buffer.from([p]), end: Buffer.from([p + 1]) })])));
    expect(counts).toEqual({ [0x07]: 1 + KEEP, [0x08]: KEEP, [0x14]: 0, [0x15]: 0, [0x16]: 0 });
    // The plateau rule of the node's ageing test: the last third's peak rises above the middle third's by less than
    // half of the first third's rise.
    const third = ROUNDS / 3;
    const pages = (x: (typeof samples)[number]): number => x.bytes;
    for (const pick of [pages, (x: (typeof samples)[number]) => x.file]) {
      const peak = (from: number, to: number): number => Math.max(...samples.slice(from, to).map(pick));
      const [first, middle, last] = [peak(0, third), peak(third, 2 * third), peak(2 * third, ROUNDS)];
      const growthFirst = first - pick(samples[0]!);
      const line = `peaks ${first} / ${middle} / ${last} bytes, from ${pick(samples[0]!)}`;
      console.log(`LMDB under pruning, ${pick === pages ? "pages in use" : "data.mdb"}: ${line}`);
      expect(growthFirst).toBeGreaterThan(0);
      expect(last - middle, line).toBeLessThan(growthFirst / 2);
    }
  });
});

describe("pruning on LMDB trusts no stale 11/12 entry, and verify checks them against the metadata", () => {
  it("a stale entry naming milestone 25's message under milestone 1 (or as unreferenced): verify names it; pruning drops the entry, never the message", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 25);
    await store.close();
    const latest = rounds[24]!.milestone.id;
    // As an older node writing on a migrated store (or a crash of a past version) could leave them.
    await raw(path, async (db) => {
      await db.put(keyOf(0x12, "00000001", latest), Buffer.alloc(0));
      await db.put(keyOf(0x11, "0000000000000000", latest), Buffer.alloc(0));
    });
    const again = new LmdbStore(path);
    await again.open({ network: NETWORK });
    expect(await again.verify()).toBe(`unreferenced entry ${latest}: message ${latest} is referenced by milestone 25`);
    await raw(path, (db) => db.remove(keyOf(0x11, "0000000000000000", latest)));
    expect(await again.verify()).toBe(`entry of milestone 1 → ${latest}: message ${latest} is referenced by milestone 25`);
    await raw(path, (db) => db.put(keyOf(0x11, "0000000000000000", latest), Buffer.alloc(0)));

    await pruneTo(again, 1, 100);
    expect(await again.pruningIndex()).toBe(1);
    // The latest milestone's own message, its metadata and its children are intact; milestone 1's cone is gone.
    expect(await again.has(latest)).toBe(true);
    expect(await again.metadata(latest)).toMatchObject({ referencedByMilestoneIndex: 25, milestoneIndex: 25 });
    expect(await again.latestMilestone()).toMatchObject({ index: 25, messageId: latest });
    expect(await again.has(rounds[0]!.milestone.id)).toBe(false);
    expect(await again.has(rounds[1]!.milestone.id)).toBe(true);
    expect(await again.verify()).toBeUndefined();
    await pruneTo(again, 24, 100);
    expect(await again.has(latest)).toBe(true);
    expect(await again.verify()).toBeUndefined();
    await again.close();
  });

  it("an entry at a seq not its message's, a message with no entry, a milestone kept below the pruning index or without its message", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 4);
    const late = indexation([rounds[3]!.milestone.id], "late");
    await store.accept(late);
    await store.close();
    const check = (): Promise<string | undefined> => verifyAt(path);
    expect(await check()).toBeUndefined();
    const lateSeq = await raw(path, (db) => {
      const entry = [...db.getKeys({ start: Buffer.from([0x11]), end: Buffer.from([0x12]) })].map((k) => Buffer.from(k)).find((k) => k.subarray(9).toString("hex") === late.id);
      return entry!.subarray(1, 9);
    });

    // A second 11 entry of a message not referenced, at a seq below the first milestone's: verify names it, and
    // pruning milestone 1 drops it and keeps the message (it arrived after milestone 4).
    await raw(path, (db) => db.put(keyOf(0x11, "0000000000000000", late.id), Buffer.alloc(0)));
    expect(await check()).toBe(`unreferenced entry ${late.id}: at seq 0, but message ${late.id} has seq ${lateSeq.readBigUInt64BE(0)}`);
    const pruner = new LmdbStore(path);
    await pruner.open({ network: NETWORK });
    await pruneTo(pruner, 1, 100);
    expect(await pruner.has(late.id)).toBe(true);
    expect(await pruner.verify()).toBeUndefined();
    await pruner.close();

    // A message whose entry is missing.
    const note = rounds[2]!.note.id;
    await raw(path, (db) => db.remove(keyOf(0x12, "00000003", note)));
    expect(await check()).toBe(`message ${note}: no entry of milestone 3 lists it`);
    await raw(path, (db) => db.put(keyOf(0x12, "00000003", note), Buffer.alloc(0)));
    await raw(path, (db) => db.remove(keyOf(0x11, lateSeq, late.id)));
    expect(await check()).toBe(`message ${late.id}: no unreferenced entry lists it`);
    await raw(path, (db) => db.put(keyOf(0x11, lateSeq, late.id), Buffer.alloc(0)));
    expect(await check()).toBeUndefined();

    // A milestone whose message is not stored (above pruning index + 1, where only a snapshot's may be missing).
    const record = await raw(path, (db) => Buffer.from(db.get(keyOf(0x0c, "00000003"))!));
    const ghost = "ef".repeat(32);
    await raw(path, (db) => db.put(keyOf(0x0c, "00000003"), Buffer.concat([Buffer.from(ghost, "hex"), record.subarray(32)])));
    expect(await check()).toBe(`milestone 3: its message ${ghost} is not stored`);
    await raw(path, (db) => db.put(keyOf(0x0c, "00000003"), record));

    // A milestone record, and messages it referenced, at or below the pruning index.
    const meta = Buffer.concat([Buffer.from([0]), Buffer.from("pruning")]);
    await raw(path, (db) => db.put(meta, Buffer.from([0, 0, 0, 2])));
    expect(await check()).toMatch(/^message [0-9a-f]{64}: referenced by milestone 2, at or below the pruning index 2, yet still stored$/);
    await raw(path, (db) => db.put(meta, Buffer.from([0, 0, 0, 1])));
    expect(await check()).toBeUndefined();
    await raw(path, (db) => db.put(keyOf(0x0c, "00000001"), record));
    expect(await check()).toBe("milestone 1: at or below the pruning index 1, yet still stored");
  });
});

describe("pruning on LMDB bounds the child entries a step deletes", () => {
  /** `count` messages naming `parent` as their only parent, accepted a few hundred at a time. */
  async function children(store: LmdbStore, parent: string, count: number, label: string): Promise<string[]> {
    const ids: string[] = [];
    for (let at = 0; at < count; at += 500) {
      const batch = Array.from({ length: Math.min(500, count - at) }, (_, i) => indexation([parent], `${label} ${at + i}`));
      await Promise.all(batch.map((a) => store.accept(a)));
      ids.push(...batch.map((a) => a.id));
    }
    return ids;
  }

  it("a message named as parent by 10,000 children: its child entries go over several steps, each state consistent", async () => {
    const { store, rounds, orphan } = await build(freshPath(), 22);
    // Children of the orphan (pruned with milestone 1) that arrive after the last milestone: they stay.
    const kids = await children(store, orphan.id, 10_000, "child of the orphan");
    expect(await store.children(orphan.id, 100_000)).toHaveLength(10_000);
    const steps: PruneStep[] = [];
    let left = 10_000;
    while ((await store.pruningIndex()) < 1) {
      const step = await store.prune(1, 200);
      steps.push(step);
      expect(step.messages).toBeLessThanOrEqual(200);
      const now = (await store.children(orphan.id, 100_000)).length;
      // At most 4096 child entries a step (PRUNE_STEP_ENTRIES in lmdb.ts).
      expect(left - now).toBeLessThanOrEqual(4096);
      left = now;
      expect(await store.verify()).toBeUndefined();
      expect(steps.length).toBeLessThan(20);
    }
    expect(left).toBe(0);
    // Two steps took 4096 child entries each and no message (progress all the same), the third the rest and the cone.
    expect(steps.slice(0, 2)).toEqual([
      { pruningIndex: 0, messages: 0, entries: 4096, done: false },
      { pruningIndex: 0, messages: 0, entries: 4096, done: false },
    ]);
    expect(await store.has(orphan.id)).toBe(false);
    expect(await store.has(rounds[0]!.note.id)).toBe(false);
    for (const id of [kids[0]!, kids[5000]!, kids[9999]!]) expect(await store.has(id)).toBe(true);

    // The pruner carries on through a step that deletes entries only: 10,000 children of milestone 2's note.
    const note = rounds[1]!.note.id;
    await children(store, note, 10_000, "child of note 2");
    const seen: PruneStep[] = [];
    const pruner = createPruner(store, { keep: 20, batch: 200, onStep: (step) => seen.push(step) });
    expect(await pruner.runOnce()).toMatchObject({ pruningIndex: 2 });
    expect(seen).toContainEqual({ pruningIndex: 1, messages: 0, entries: 4096, done: false });
    expect(await store.children(note, 10)).toEqual([]);
    expect(await store.has(note)).toBe(false);
    expect(await store.verify()).toBeUndefined();
    await pruner.stop();
    await store.close();
  });
});

describe("snapshots on LMDB: read in one transaction, loaded into a new store only", () => {
  it("a snapshot of a pruned store starts a new one with the same ledger, milestone and entry points; it takes spends", async () => {
    const { store, owner, rounds } = await build(freshPath(), 8);
    await pruneTo(store, 4, 50);
    const snapshot = await store.readSnapshot();
    const latest = rounds[7]!.milestone.id;
    expect(snapshot).toMatchObject({ network: NETWORK, ledger: true, milestone: { index: 8, messageId: latest }, coordinatorPublicKeys: [] });
    // Every message the last 15 milestones referenced that pruning left (milestones 5 to 8), and the zero id the store
    // began with (within reach: 8 − 0 < 15), in id order.
    const shared = await store.findByIndex(utf8.encode("shared"), 100);
    expect(shared).toHaveLength(4);
    const entryPoints = [
      { messageId: ZERO_MESSAGE_ID, index: 0 },
      ...rounds.slice(4).flatMap((r, i) => [r.note.id, shared[i]!, r.tx.acceptance.id, r.milestone.id].map((messageId) => ({ messageId, index: r.index }))),
    ].sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
    expect(snapshot.entryPoints).toEqual(entryPoints);
    expect(snapshot.outputs).toHaveLength(9);
    expect(snapshot.outputs.map((o) => o.outputId)).toEqual(snapshot.outputs.map((o) => o.outputId).sort());
    expect(snapshot.outputs.reduce((sum, o) => sum + o.output.amount, 0)).toBe(TOTAL_SUPPLY);
    expect(snapshot.outputs.find((o) => o.outputId === rounds[0]!.paid)).toMatchObject({ messageId: rounds[0]!.tx.acceptance.id, milestoneIndexBooked: 1 });

    const path = freshPath();
    const loaded = new LmdbStore(path);
    expect(await loaded.open({ network: NETWORK, snapshot })).toEqual({ created: true, ledger: true, coordinatorPublicKeys: [] });
    const asMap = new Map(entryPoints.map((e) => [e.messageId, e.index]));
    expect(new Map(loaded.entryPoints)).toEqual(asMap);
    expect(await loaded.unreferenced(10)).toEqual([]);
    expect(await loaded.latestMilestone()).toEqual(await store.latestMilestone());
    expect(await loaded.pruningIndex()).toBe(7);
    expect(await loaded.has(latest)).toBe(false);
    for (const o of snapshot.outputs) {
      const [a, b] = [await store.output(o.outputId), await loaded.output(o.outputId)];
      expect(b).toEqual(a);
      expect(await loaded.addressBalance(o.output.address.address)).toEqual(await store.addressBalance(o.output.address.address));
    }
    expect(await loaded.verify()).toBeUndefined();
    const again = await loaded.readSnapshot();
    expect(again).toEqual(snapshot);

    // The owner spends its change from the snapshot on the new store; spending it twice is refused.
    const change = snapshot.outputs.find((o) => hexOf(o.output.address.address) === hexOf(owner.address))!;
    const tx = spend(owner, [change.outputId], [single(owner, change.output.amount)], [latest]);
    expect(await loaded.accept(tx.acceptance)).toEqual({ stored: true });
    const twice = spend(owner, [change.outputId], [single(wallet(), change.output.amount)], [latest], "twice");
    expect((await refusal(loaded.accept(twice.acceptance))).code).toBe("INPUT_SPENT");
    // The coordinator continues at the next index, and pruning carries on from the snapshot's milestone.
    expect(await loaded.claim(change.outputId)).toEqual({ transactionId: tx.transactionId, messageId: tx.acceptance.id, index: 8 });
    const next = await milestoneOf(loaded, 9, [tx.acceptance.id], [{ messageId: tx.acceptance.id, ledgerInclusionState: "included" }], [tx]);
    expect(await loaded.accept(next)).toEqual({ stored: true });
    expect(await loaded.output(change.outputId)).toMatchObject({ milestoneIndexBooked: 8, spent: { transactionId: tx.transactionId, milestoneIndex: 9 } });
    expect(await loaded.output(tx.created[0]!)).toMatchObject({ milestoneIndexBooked: 9 });
    expect(await loaded.claim(change.outputId)).toBeUndefined();
    expect(await loaded.prune(8, 10)).toEqual({ pruningIndex: 8, messages: 0, done: true });
    expect(await loaded.milestone(8)).toBeUndefined();
    expect(await loaded.verify()).toBeUndefined();
    await loaded.close();

    // Reopened: the entry points are the persisted ones whatever the constructor says.
    const reopened = new LmdbStore({ path, entryPoints: [ZERO_MESSAGE_ID] });
    expect(await reopened.open({ network: NETWORK })).toEqual({ created: false, ledger: true, coordinatorPublicKeys: [] });
    expect(new Map(reopened.entryPoints)).toEqual(asMap);
    await reopened.close();
    await store.close();
  });

  it("the coordinator's keys of a snapshot are kept and returned by every open; an unbooked output is booked at its milestone; another network creates nothing", async () => {
    const owner = wallet();
    const keys = ["11".repeat(32), "22".repeat(32)];
    // As a snapshot written while the ledger moved at acceptance may carry it: no milestone booked it yet.
    const unbooked = { outputId: "ef".repeat(32) + "0100", messageId: "ef".repeat(32), output: single(owner, MI) };
    const snapshot: LedgerSnapshot = {
      network: NETWORK,
      ledger: true,
      milestone: { index: 40, messageId: "ab".repeat(32), timestamp: 1_700_000_040 },
      coordinatorPublicKeys: keys,
      entryPoints: [
        { messageId: "ab".repeat(32), index: 40 },
        { messageId: "cd".repeat(32), index: 39 },
      ],
      outputs: [{ outputId: GENESIS_OUTPUT, messageId: ZERO_MESSAGE_ID, milestoneIndexBooked: 0, output: single(owner, TOTAL_SUPPLY - MI) }, unbooked],
    };
    const elsewhere = freshPath();
    expect((await refusal(new LmdbStore(elsewhere).open({ network: "another-network", snapshot }))).code).toBe("STORE_WRONG_NETWORK");
    expect(existsSync(elsewhere)).toBe(false);

    const path = freshPath();
    const store = new LmdbStore(path);
    expect(await store.open({ network: NETWORK, snapshot })).toEqual({ created: true, ledger: true, coordinatorPublicKeys: keys });
    expect(new Map(store.entryPoints)).toEqual(new Map([["ab".repeat(32), 40], ["cd".repeat(32), 39]]));
    expect(await store.unreferenced(10)).toEqual([]);
    const read = await store.readSnapshot();
    expect(read.coordinatorPublicKeys).toEqual(keys);
    expect(read.entryPoints).toEqual(snapshot.entryPoints);
    expect(read.outputs).toEqual([snapshot.outputs[0], { ...unbooked, milestoneIndexBooked: 40 }]);
    expect(await store.pruningIndex()).toBe(39);
    expect(await store.stats()).toMatchObject({ engine: "lmdb", network: NETWORK, messages: 0, unspentOutputs: 2, latestMilestoneIndex: 40, pruningIndex: 39 });
    expect(await store.verify()).toBeUndefined();
    await store.close();
    const again = new LmdbStore(path);
    // A snapshot given to an existing store is not applied again.
    expect(await again.open({ network: NETWORK, snapshot: { ...snapshot, coordinatorPublicKeys: [] } })).toEqual({ created: false, ledger: true, coordinatorPublicKeys: keys });
    expect(await again.verify()).toBeUndefined();
    await again.close();
  });
});

describe("verify() on LMDB names the first record damaged on purpose", () => {
  it("a message whose bytes changed, a balance that changed, a child entry with no message", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 3);
    expect(await store.verify()).toBeUndefined();
    await store.close();
    const note = rounds[1]!.note;
    const recipient = rounds[0]!.recipient;

    // The message's record is its metadata, then its bytes: one bit of the bytes flipped.
    const record = await raw(path, (db) => Buffer.from(db.get(keyOf(0x01, note.id))!));
    expect(record.subarray(record.length - note.bytes.length)).toEqual(Buffer.from(note.bytes));
    const damaged = Buffer.from(record);
    damaged[damaged.length - 9]! ^= 0x01;
    await raw(path, (db) => db.put(keyOf(0x01, note.id), damaged));
    const check = (): Promise<string | undefined> => verifyAt(path);
    expect(await check()).toMatch(new RegExp(`^message ${note.id}: its bytes hash to [0-9a-f]{64}$`));
    await raw(path, (db) => db.put(keyOf(0x01, note.id), record.subarray(0, 9)));
    expect(await check()).toBe(`message ${note.id}: its record is 9 bytes, too short to hold its metadata (35)`);
    await raw(path, (db) => db.put(keyOf(0x01, note.id), record));
    expect(await check()).toBeUndefined();

    const balance = Buffer.alloc(20);
    balance.writeUInt32BE(999, 4);
    await raw(path, (db) => db.put(keyOf(0x0b, recipient.address), balance));
    expect(await check()).toBe(
      `balance of address ${hexOf(recipient.address)}: stored 999 (dust allowance 0, 0 dust outputs), its unspent outputs give ${MI} (dust allowance 0, 0 dust outputs)`,
    );
    const good = Buffer.alloc(20);
    good.writeUInt32BE(MI, 4);
    await raw(path, (db) => db.put(keyOf(0x0b, recipient.address), good));
    expect(await check()).toBeUndefined();

    const ghost = "ef".repeat(32);
    await raw(path, (db) => db.put(keyOf(0x03, rounds[2]!.milestone.id, "00".repeat(8), ghost), Buffer.alloc(0)));
    expect(await check()).toBe(`child entry ${rounds[2]!.milestone.id} → ${ghost}: no message ${ghost} is stored`);
  });

  it("a record of an older schema's tip set, a child entry at another seq than its child's, a message without its index entry, an index entry at another seq, a header seq not above every message's", async () => {
    const path = freshPath();
    const { store, rounds, orphan } = await build(path, 3);
    const latest = rounds[2]!.milestone.id;
    await store.close();
    const check = (): Promise<string | undefined> => verifyAt(path);
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    const seqOf = (s: Buffer): string => String(s.readBigUInt64BE(0));
    const note = rounds[2]!.note.id;
    const noteSeq = await raw(path, (db) => Buffer.from(db.get(keyOf(0x01, note))!.subarray(0, 8)));

    // The tip set schemas 1 to 3 kept (the migration drops it): an entry by id or by age, or its count, left behind.
    for (const [left, named] of [
      [keyOf(0x05, latest), `tip entry 05${latest}: a record of the tip set an older schema kept`],
      [keyOf(0x06, noteSeq, note), `tip entry 06${hexOf(noteSeq)}${note}: a record of the tip set an older schema kept`],
      [meta("tips"), `header: the "tips" record of an older schema is left`],
    ] as const) {
      await raw(path, (db) => db.put(left, Buffer.alloc(8)));
      expect(await check()).toBe(named);
      await raw(path, (db) => db.remove(left));
    }
    expect(await check()).toBeUndefined();

    // A child entry naming a stored message (the note) at another seq than the note's.
    await raw(path, (db) => db.put(keyOf(0x03, orphan.id, "00".repeat(8), note), Buffer.alloc(0)));
    expect(await check()).toBe(`child entry ${orphan.id} → ${note}: at seq 0, but message ${note} has seq ${seqOf(noteSeq)}`);
    await raw(path, (db) => db.remove(keyOf(0x03, orphan.id, "00".repeat(8), note)));
    expect(await check()).toBeUndefined();

    // The note's index entry gone: findByIndex would miss it.
    const index = utf8.encode("note 3");
    const indexKey = keyOf(0x04, Uint8Array.of(index.length), index, noteSeq);
    const indexValue = await raw(path, (db) => Buffer.from(db.get(indexKey)!));
    await raw(path, (db) => db.remove(indexKey));
    expect(await check()).toBe(`message ${note}: no index entry under its index ${hexOf(index)}`);
    await raw(path, (db) => db.put(indexKey, indexValue));
    expect(await check()).toBeUndefined();
    // An index entry at another seq than its message's: findByIndex would give it out of order.
    const strayIndex = keyOf(0x04, Uint8Array.of(index.length), index, "00".repeat(8));
    await raw(path, (db) => db.put(strayIndex, indexValue));
    expect(await check()).toBe(`index entry ${hexOf(index)} → ${note}: at seq 0, but message ${note} has seq ${seqOf(noteSeq)}`);
    await raw(path, (db) => db.remove(strayIndex));

    // The header's next seq at or below a stored message's: the next message would share that seq's entries.
    const next = await raw(path, (db) => Buffer.from(db.get(meta("seq"))!));
    const firstMessage = await raw(path, (db) => [...db.getKeys({ start: Buffer.from([0x01]), end: Buffer.from([0x02]), limit: 1 })].map((k) => Buffer.from(k))[0]!);
    const firstSeq = await raw(path, (db) => Buffer.from(db.get(firstMessage)!.subarray(0, 8)));
    await raw(path, (db) => db.put(meta("seq"), firstSeq));
    expect(await check()).toBe(`message ${hexOf(firstMessage.subarray(1))}: at seq ${seqOf(firstSeq)}, not below the header's next seq ${seqOf(firstSeq)}`);
    await raw(path, (db) => db.put(meta("seq"), next));
    expect(await check()).toBeUndefined();
  });

  it("the ledger is what confirmed milestones made it: an output booked by no milestone or a later one, a spend confirmed by none, an output at the next output seq, an address entry at another seq, a claim on a spent or unknown output or made later", async () => {
    const path = freshPath();
    // The owner's change, claimed by a pending transaction.
    const { store, rounds, change } = await buildWithClaim(path);
    expect(await store.verify()).toBeUndefined();
    await store.close();
    const check = (): Promise<string | undefined> => verifyAt(path);
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    /** Writes `bytes` at `at` into the record under `recordKey`, checks verify names it `named`, and puts it back. */
    const damaged = async (recordKey: Buffer, at: number, bytes: Buffer, named: string): Promise<void> => {
      const record = await raw(path, (db) => Buffer.from(db.get(recordKey)!));
      const changed = Buffer.from(record);
      bytes.copy(changed, at);
      await raw(path, (db) => db.put(recordKey, changed));
      expect(await check()).toBe(named);
      await raw(path, (db) => db.put(recordKey, record));
      expect(await check()).toBeUndefined();
    };
    const paid = rounds[2]!.paid;
    // Output: messageId 32 | seq u64 | milestoneIndexBooked u32 | …; spent record and claim: two ids | u32.
    await damaged(keyOf(0x07, paid), 40, u32(0xffffffff), `output ${paid}: booked by no milestone`);
    await damaged(keyOf(0x07, paid), 40, u32(9), `output ${paid}: booked by milestone 9, after the latest 3`);
    const spentByRound2 = rounds[1]!.spent;
    await damaged(keyOf(0x08, spentByRound2), 64, u32(0xffffffff), `spent record ${spentByRound2}: confirmed by no milestone`);
    await damaged(keyOf(0x08, spentByRound2), 64, u32(4), `spent record ${spentByRound2}: confirmed by milestone 4, after the latest 3`);
    await damaged(keyOf(0x14, change), 64, u32(4), `claim on output ${change}: made at milestone 4, after the latest 3`);

    // The header's next output seq at or below an output's: the next milestone would book an output at its seq.
    const firstOutput = await raw(path, (db) => [...db.getRange({ start: Buffer.from([0x07]), end: Buffer.from([0x08]), limit: 1 })].map(({ key, value }) => ({ id: hexOf(key.subarray(1)), seq: Buffer.from(value.subarray(32, 40)) }))[0]!);
    const nextOutput = await raw(path, (db) => Buffer.from(db.get(meta("outputSeq"))!));
    expect(nextOutput.readBigUInt64BE(0)).toBe(1n + 3n * 2n);
    await raw(path, (db) => db.put(meta("outputSeq"), firstOutput.seq));
    const seqText = String(firstOutput.seq.readBigUInt64BE(0));
    expect(await check()).toBe(`output ${firstOutput.id}: at output seq ${seqText}, not below the header's next output seq ${seqText}`);
    await raw(path, (db) => db.remove(meta("outputSeq")));
    expect(await check()).toBe(`header: the "outputSeq" record is missing`);
    await raw(path, (db) => db.put(meta("outputSeq"), nextOutput));

    // An address entry of an output at another seq than the output's: the list would name it twice.
    const recipient = rounds[2]!.recipient.address;
    const paidSeq = await raw(path, (db) => Buffer.from(db.get(keyOf(0x07, paid))!.subarray(32, 40)));
    const stray = keyOf(0x09, recipient, "00".repeat(8), paid);
    await raw(path, (db) => db.put(stray, Buffer.from([0])));
    expect(await check()).toBe(`address ${hexOf(recipient)}: its unspent outputs list ${paid} at output seq 0, but the output has seq ${paidSeq.readBigUInt64BE(0)}`);
    await raw(path, (db) => db.remove(stray));

    // A claim on an output the ledger spent (its claim should have gone with the spend). One on an output neither the
    // ledger nor a pending transaction holds is harmless (its pending output went first) and only needs its entry.
    const claim = await raw(path, (db) => Buffer.from(db.get(keyOf(0x14, change))!));
    await raw(path, (db) => db.put(keyOf(0x14, spentByRound2), claim));
    expect(await check()).toBe(`claim on output ${spentByRound2}: the output is spent`);
    await raw(path, (db) => db.remove(keyOf(0x14, spentByRound2)));
    const unknown = "ab".repeat(32) + "0000";
    await raw(path, (db) => db.put(keyOf(0x14, unknown), claim));
    expect(await check()).toMatch(new RegExp(`^claim on output ${unknown}: made at milestone \\d+, but no entry of that index lists it$`));
    await raw(path, (db) => db.remove(keyOf(0x14, unknown)));
    expect(await check()).toBeUndefined();
  });

  it("claims and pending outputs: a claim on a pending output is sound; a pending output the ledger books, or made later; an entry by index missing, naming nothing, or at another index", async () => {
    const path = freshPath();
    // A pending transaction, and a chained spend claiming its output: both sound.
    const { store, owner, rounds, change, pending } = await buildWithClaim(path);
    const chained = spend(owner, [pending.created[0]!], [single(owner, TOTAL_SUPPLY - 3 * MI)], [pending.acceptance.id]);
    expect(await store.accept(chained.acceptance)).toEqual({ stored: true });
    expect(await store.claim(pending.created[0]!)).toMatchObject({ transactionId: chained.transactionId, index: 3 });
    expect(await store.verify()).toBeUndefined();
    await store.close();
    const check = (): Promise<string | undefined> => verifyAt(path);
    const made = pending.created[0]!;
    const entry = (index: number, kind: number, id: string): Buffer => keyOf(0x16, u32(index), Uint8Array.of(kind), id);
    const record = await raw(path, (db) => Buffer.from(db.get(keyOf(0x15, made))!));
    expect(record).toHaveLength(78);

    // Booked by the ledger as well (a confirmation that left it behind).
    await raw(path, (db) => db.put(keyOf(0x15, rounds[2]!.paid), record));
    expect(await check()).toBe(`pending output ${rounds[2]!.paid}: the ledger books it already`);
    await raw(path, (db) => db.remove(keyOf(0x15, rounds[2]!.paid)));
    // Pending record: messageId 32 | index u32 | …: made after the latest, and its entry then at the wrong index.
    const later = Buffer.from(record);
    u32(4).copy(later, 32);
    await raw(path, (db) => db.put(keyOf(0x15, made), later));
    expect(await check()).toBe(`pending output ${made}: made at milestone 4, after the latest 3`);
    await raw(path, (db) => db.put(keyOf(0x15, made), record));
    expect(await check()).toBeUndefined();

    // The entries by index: one missing (pruning would never find the record), one naming no record, one at another
    // index than its record's.
    await raw(path, (db) => db.remove(entry(3, 0x15, made)));
    expect(await check()).toBe(`pending output ${made}: made at milestone 3, but no entry of that index lists it`);
    await raw(path, (db) => db.put(entry(3, 0x15, made), Buffer.alloc(0)));
    await raw(path, (db) => db.remove(entry(3, 0x14, change)));
    expect(await check()).toBe(`claim on output ${change}: made at milestone 3, but no entry of that index lists it`);
    await raw(path, (db) => db.put(entry(3, 0x14, change), Buffer.alloc(0)));
    expect(await check()).toBeUndefined();
    const ghost = "cd".repeat(32) + "0000";
    await raw(path, (db) => db.put(entry(2, 0x15, ghost), Buffer.alloc(0)));
    expect(await check()).toBe(`entry of milestone 2 → pending output ${ghost}: none is stored`);
    await raw(path, (db) => db.remove(entry(2, 0x15, ghost)));
    await raw(path, (db) => db.put(entry(1, 0x14, change), Buffer.alloc(0)));
    expect(await check()).toBe(`entry of milestone 1 → claim on output ${change}: made at milestone 3`);
    await raw(path, (db) => db.remove(entry(1, 0x14, change)));
    await raw(path, (db) => db.put(entry(1, 0x13, change), Buffer.alloc(0)));
    expect(await check()).toBe(`entry 16${hexOf(u32(1))}13${change} of the claims and pending outputs by index: 40 bytes of kind 13, expected 40 of kind 14 or 15`);
    await raw(path, (db) => db.remove(entry(1, 0x13, change)));
    expect(await check()).toBeUndefined();
  });
});

describe("a schema-1 store is migrated when it opens", () => {
  it("the unreferenced and referenced lists are rebuilt from the metadata, the entry points and pruning index written", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 4);
    const tail = indexation([rounds[3]!.milestone.id], "not referenced yet");
    await store.accept(tail);
    await store.close();
    const prefixes = [0x11, 0x12, 0x13];
    const listed = (db: import("lmdb").RootDatabase<Buffer, Buffer>): string[] =>
      prefixes.flatMap((p) => [...db.getKeys({ start: Buffer.from([p]), end: Buffer.from([p + 1]) })].map((k) => Buffer.from(k).toString("hex")));
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    // Schema 1 as the previous version wrote it: metadata apart from the messages, none of the records schema 2 added.
    const before = await raw(path, async (db) => {
      const keys = listed(db);
      await db.transaction(() => {
        asSchema3(db);
        for (const k of keys) db.removeSync(Buffer.from(k, "hex"));
        db.removeSync(meta("pruning"));
        db.putSync(meta("schema"), Buffer.from([0, 0, 0, 1]));
        splitMessageRecords(db);
      });
      expect(listed(db)).toEqual([]);
      return keys;
    });
    // 2 unreferenced (the orphan, the tail), 4 × 4 referenced by milestones 1–4, and the zero entry point.
    expect(before).toHaveLength(2 + 16 + 1);

    const migrated = new LmdbStore(path);
    await migrated.open({ network: NETWORK });
    await migrated.close();
    await raw(path, (db) => {
      expect(listed(db)).toEqual(before);
      expect(db.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 4]));
      expect(db.get(meta("pruning"))).toEqual(Buffer.from([0, 0, 0, 0]));
      expect([...db.getKeys({ start: Buffer.from([0x02]), end: Buffer.from([0x03]) })]).toEqual([]);
    });
    const again = new LmdbStore(path);
    await again.open({ network: NETWORK });
    await pruneTo(again, 2, 3);
    expect(await again.has(rounds[1]!.note.id)).toBe(false);
    expect(await again.has(tail.id)).toBe(true);
    expect(await again.verify()).toBeUndefined();
    await again.close();
  });

  it("a tool beside a node (openExisting) migrates nothing: it refuses a schema-1 store, but for revocations", async () => {
    const path = freshPath();
    const { store } = await build(path, 2);
    await store.close();
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    await raw(path, async (db) => {
      await db.transaction(() => {
        asSchema3(db);
        for (const p of [0x11, 0x12, 0x13]) for (const k of [...db.getKeys({ start: Buffer.from([p]), end: Buffer.from([p + 1]) })]) db.removeSync(Buffer.from(k));
        db.removeSync(meta("pruning"));
        db.putSync(meta("schema"), Buffer.from([0, 0, 0, 1]));
        splitMessageRecords(db);
      });
    });
    const schema = (): Promise<Buffer | undefined> => raw(path, (db) => db.get(meta("schema")));
    const message = `the store at ${path} is at schema version 1: start chrysalis serve on it once to migrate it`;

    // db stats|verify|compact and snapshot create: refused, the store untouched (an older node may be running on it).
    const tool = new LmdbStore(path);
    const refused = await refusal(tool.openExisting());
    expect(refused).toMatchObject({ code: "STORE_UNAVAILABLE", message });
    await tool.close();
    expect((await refusal(openSharedStore({ dataDir: path }))).message).toBe(message);
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 1]));

    // auth revoke: its record is the same in every schema, so it is written; nothing else is allowed.
    const revoker = await openSharedStore({ dataDir: path }, { revocationsOnly: true });
    await revoker.revokeToken("jti-1", Date.now() + 60_000);
    expect(await revoker.isTokenRevoked("jti-1")).toBe(true);
    for (const call of [() => revoker.verify(), () => revoker.stats(), () => revoker.readSnapshot(), () => revoker.prune(1, 10), () => revoker.latestMilestone()]) {
      expect(await refusal(call())).toMatchObject({ code: "STORE_UNAVAILABLE", message });
    }
    await revoker.close();
    // The commands themselves: db verify refused with that line, auth revoke done.
    await expect(dbCommand.run(["verify", "--data-dir", path])).rejects.toThrow(message);
    const printed = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      await auth.run(["revoke", "jti-2", "--data-dir", path]);
      expect(String(printed.mock.calls[0]?.[0])).toMatch(/^revoked jti-2 until /);
    } finally {
      printed.mockRestore();
    }
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 1]));

    // The node (serve: open) migrates it; the revocation holds, and tools open it from then on.
    const node = new LmdbStore(path);
    await node.open({ network: NETWORK });
    expect(await node.isTokenRevoked("jti-1")).toBe(true);
    expect(await node.isTokenRevoked("jti-2")).toBe(true);
    await node.close();
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 4]));
    const later = await openSharedStore({ dataDir: path });
    expect(await later.verify()).toBeUndefined();
    await later.close();
  });
});

describe("a schema-2 store is migrated when it opens", () => {
  it("each metadata record joins its message's record; every read gives what it gave before, and verify passes", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 3);
    await store.close();
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    const schema = (): Promise<Buffer | undefined> => raw(path, (db) => db.get(meta("schema")));
    const apart = (): Promise<string[]> => raw(path, (db) => [...db.getKeys({ start: Buffer.from([0x02]), end: Buffer.from([0x03]) })].map((k) => Buffer.from(k).toString("hex")));
    const reads = async (s: LmdbStore, ids: string[]) =>
      Promise.all(ids.map(async (id) => ({ id, bytes: hexOf((await s.get(id))!.bytes), metadata: await s.metadata(id), children: await s.children(id, 100) })));
    const ids = await raw(path, (db) => [...db.getKeys({ start: Buffer.from([0x01]), end: Buffer.from([0x02]) })].map((k) => Buffer.from(k).subarray(1).toString("hex")));
    expect(ids.length).toBe(1 + 3 * 4);
    const reader = new LmdbStore(path);
    await reader.open({ network: NETWORK });
    const before = await reads(reader, ids);
    const statsBefore = await reader.stats();
    await reader.close();
    expect(before.find((r) => r.id === rounds[2]!.milestone.id)?.metadata).toMatchObject({ referencedByMilestoneIndex: 3, milestoneIndex: 3 });

    // Schema 2 as the previous version wrote it, and a metadata record whose message is gone (damage).
    const orphan = "ee".repeat(32);
    await raw(path, (db) =>
      db.transaction(() => {
        asSchema3(db);
        db.putSync(meta("schema"), Buffer.from([0, 0, 0, 2]));
        expect(splitMessageRecords(db).sort()).toEqual([...ids].sort());
        db.putSync(keyOf(0x02, orphan), Buffer.alloc(35));
      }),
    );
    expect(await apart()).toHaveLength(ids.length + 1);

    // A tool beside a node refuses it; a metadata record of the wrong size stops the migration with nothing written.
    const tool = new LmdbStore(path);
    expect(await refusal(tool.openExisting())).toMatchObject({ code: "STORE_UNAVAILABLE", message: `the store at ${path} is at schema version 2: start chrysalis serve on it once to migrate it` });
    await tool.close();
    const wrong = keyOf(0x02, "dd".repeat(32));
    await raw(path, (db) => db.put(wrong, Buffer.alloc(34)));
    const refused = new LmdbStore(path);
    expect(await refusal(refused.open({ network: NETWORK }))).toMatchObject({ code: "STORE_CORRUPT", message: `the store at ${path} cannot be migrated: the metadata of ${"dd".repeat(32)} is 34 bytes, not 35` });
    await refused.close();
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 2]));
    expect(await apart()).toHaveLength(ids.length + 2);
    await raw(path, (db) => db.remove(wrong));
    // Nor a message with no metadata (damage): its bytes would be read as metadata and a message they are not.
    const bare = keyOf(0x02, ids[0]!);
    const kept = await raw(path, (db) => Buffer.from(db.get(bare)!));
    await raw(path, (db) => db.remove(bare));
    const damaged = new LmdbStore(path);
    expect(await refusal(damaged.open({ network: NETWORK }))).toMatchObject({
      code: "STORE_CORRUPT",
      message: `the store at ${path} cannot be migrated: 1 of its ${ids.length} messages have no metadata (\`chrysalis db verify\` of the previous version names them)`,
    });
    await damaged.close();
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 2]));
    expect(await apart()).toHaveLength(ids.length);
    await raw(path, (db) => db.put(bare, kept));

    // Nor while another process has it open (an older node would go on with the old layout).
    const other = await heldOpenElsewhere(path);
    try {
      const busy = new LmdbStore(path);
      const error = await refusal(busy.open({ network: NETWORK }));
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(error.message).toContain(`the store at ${path} is at schema version 2 and in use by another process (pid ${other.pid}); stop it before starting this version, which migrates the store`);
      await busy.close();
    } finally {
      await other.end();
    }
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 2]));

    const node = new LmdbStore(path);
    await node.open({ network: NETWORK });
    expect(await reads(node, ids)).toEqual(before);
    expect(await node.has(orphan)).toBe(false);
    expect(await node.stats()).toMatchObject({ messages: statsBefore.messages, unspentOutputs: statsBefore.unspentOutputs, latestMilestoneIndex: 3 });
    expect(await node.verify()).toBeUndefined();
    // It goes on: a new message, its parent's milestone pruned.
    const next = indexation([rounds[2]!.milestone.id], "after the migration");
    expect(await node.accept(next)).toEqual({ stored: true });
    await pruneTo(node, 1, 100);
    expect(await node.has(rounds[0]!.milestone.id)).toBe(false);
    expect(await node.verify()).toBeUndefined();
    await node.close();
    expect(await schema()).toEqual(Buffer.from([0, 0, 0, 4]));
    expect(await apart()).toEqual([]);
  });
});

describe("a schema-3 store is migrated when it opens: the ledger becomes what confirmed milestones made it", () => {
  it("the tip set goes, unbooked outputs and unconfirmed spends are rolled back into pending outputs and claims (so a chained spend goes on working), and nothing else changes; the store goes on as one made at schema 4", async () => {
    const path = freshPath();
    const owner = wallet();
    const alice = wallet();
    const bob = wallet();
    const store = new LmdbStore(path);
    await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    const amount = (s: Spend, to: Wallet, value: number): string =>
      s.created[s.payload.essence.outputs.findIndex((o) => hexOf(o.address.address) === hexOf(to.address) && o.amount === value)]!;
    // Milestone 1 confirms a payment to Alice.
    const paid = spend(owner, [GENESIS_OUTPUT], [single(alice, 10 * MI), single(owner, TOTAL_SUPPLY - 10 * MI)]);
    await store.accept(paid.acceptance);
    const ms1 = await milestoneOf(store, 1, [paid.acceptance.id], [{ messageId: paid.acceptance.id, ledgerInclusionState: "included" }], [paid]);
    await store.accept(ms1);
    const change = amount(paid, owner, TOTAL_SUPPLY - 10 * MI);
    // Pending: the owner pays Bob (through the API: a claim on the change), with a dust allowance; Bob passes 5 Mi on
    // to Alice (from a peer: no claim, and its input is not in the confirmed ledger).
    const rest = TOTAL_SUPPLY - 16 * MI;
    const toBob = spend(owner, [change], [single(bob, 5 * MI), dustAllowance(bob, MI), single(owner, rest)], [ms1.id]);
    expect(await store.accept(toBob.acceptance)).toEqual({ stored: true });
    const onward = spend(bob, [amount(toBob, bob, 5 * MI)], [single(alice, 5 * MI)], [toBob.acceptance.id]);
    expect(await store.accept({ ...onward.acceptance, claim: undefined })).toEqual({ stored: true });
    // Milestone 2 confirms a note only; a message after it is still unreferenced.
    const note = indexation([ms1.id], "note");
    await store.accept(note);
    const ms2 = await milestoneOf(store, 2, [note.id], [{ messageId: note.id, ledgerInclusionState: "noTransaction" }], []);
    await store.accept(ms2);
    const tail = indexation([ms2.id], "tail");
    await store.accept(tail);
    expect(await store.redeemNonce("kept nonce", Date.now() + 60_000)).toBe(true);
    await store.revokeToken("kept jti", Date.now() + 60_000);
    const secret = Buffer.from(await store.secret("kept secret", () => new Uint8Array(32).fill(5)));
    const messages = [paid.acceptance, ms1, toBob.acceptance, onward.acceptance, note, ms2, tail];
    const outputs = [GENESIS_OUTPUT, ...paid.created, ...toBob.created, ...onward.created];
    const wallets = [owner, alice, bob];
    /** Everything a reader sees, but the claims. */
    const seen = async (s: LmdbStore): Promise<unknown> => ({
      messages: await Promise.all(messages.map(async (m) => ({ bytes: hexOf((await s.get(m.id))!.bytes), metadata: await s.metadata(m.id), children: await s.children(m.id, 10) }))),
      index: await s.findByIndex(utf8.encode("note"), 10),
      unreferenced: await s.unreferenced(10),
      outputs: await Promise.all(outputs.map(async (o) => (await s.output(o)) ?? null)),
      balances: await Promise.all(wallets.map((w) => s.addressBalance(w.address))),
      addressOutputs: await Promise.all(wallets.map((w) => s.addressOutputs(w.address, { max: 10, includeSpent: true }))),
      milestones: await Promise.all([1, 2].map(async (i) => [await s.milestone(i), await s.utxoChanges(i)])),
      stats: (({ messages: m, unspentOutputs, latestMilestoneIndex, pruningIndex }) => ({ m, unspentOutputs, latestMilestoneIndex, pruningIndex }))(await s.stats()),
    });
    const native = await seen(store);
    expect(await store.claim(change)).toEqual({ transactionId: toBob.transactionId, messageId: toBob.acceptance.id, index: 1 });
    expect(await store.verify()).toBeUndefined();
    await store.close();
    // The same store at schema 4, kept aside to compare with.
    const reference = freshPath();
    mkdirSync(reference);
    cpSync(join(path, "data.mdb"), join(reference, "data.mdb"));

    // Schema 3 as the previous version wrote it: the two pending transactions applied at acceptance, the tip set.
    await raw(path, (db) => db.transaction(() => asSchema3(db, [toBob, onward])));
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    await raw(path, (db) => {
      expect(db.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 3]));
      // The tips: the pending payment onward and the tail (every other message has a child).
      const tips = [...db.getKeys({ start: Buffer.from([0x05]), end: Buffer.from([0x06]) })].map((k) => hexOf(k.subarray(1)));
      expect(tips.sort()).toEqual([onward.acceptance.id, tail.id].sort());
      expect(db.get(meta("tips"))!.readBigUInt64BE(0)).toBe(2n);
      expect(db.get(meta("outputSeq"))).toBeUndefined();
      // The ledger moved at acceptance: the change spent by no milestone, Bob's outputs unbooked, Alice paid twice.
      expect(db.get(keyOf(0x08, change))!.subarray(64)).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xff]));
      expect(db.get(keyOf(0x07, onward.created[0]!))!.subarray(40, 44)).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xff]));
      expect(db.get(keyOf(0x0b, alice.address))!.readBigUInt64BE(0)).toBe(BigInt(15 * MI));
      expect(db.get(keyOf(0x14, change))).toBeUndefined();
    });
    // A tool beside a node refuses it, the store untouched.
    const tool = new LmdbStore(path);
    expect(await refusal(tool.openExisting())).toMatchObject({ code: "STORE_UNAVAILABLE", message: `the store at ${path} is at schema version 3: start chrysalis serve on it once to migrate it` });
    await tool.close();

    const migrated = new LmdbStore(path);
    expect(await migrated.open({ network: NETWORK })).toEqual({ created: false, ledger: true });
    expect(await seen(migrated)).toEqual(native);
    // The rolled-back spend is a claim made at the latest milestone (2): it lapses 15 milestones after the migration.
    expect(await migrated.claim(change)).toEqual({ transactionId: toBob.transactionId, messageId: toBob.acceptance.id, index: 2 });
    // The unbooked outputs are pending outputs made at 2, whoever sent their transaction (schema 3 could not tell): a
    // submission may spend them as it could before the migration. Bob's 5 Mi, spent onward, is held by that spend.
    const bobs = amount(toBob, bob, 5 * MI);
    for (const s of [toBob, onward]) {
      for (const [i, output] of s.payload.essence.outputs.entries()) {
        expect(await migrated.pendingOutput(s.created[i]!)).toEqual({ outputId: s.created[i], transactionId: s.transactionId, messageId: s.acceptance.id, output, index: 2 });
      }
    }
    expect(await migrated.claim(bobs)).toEqual({ transactionId: onward.transactionId, messageId: onward.acceptance.id, index: 2 });
    expect(await migrated.isTokenRevoked("kept jti")).toBe(true);
    expect(await migrated.redeemNonce("kept nonce", Date.now() + 60_000)).toBe(false);
    expect(Buffer.from(await migrated.secret("kept secret", () => new Uint8Array(32))).equals(secret)).toBe(true);
    expect(await migrated.verify()).toBeUndefined();
    await raw(path, (db) => {
      expect(db.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 4]));
      expect([...db.getKeys({ start: Buffer.from([0x05]), end: Buffer.from([0x07]) })]).toEqual([]);
      expect(db.get(meta("tips"))).toBeUndefined();
      expect(db.get(meta("outputSeq"))!.readBigUInt64BE(0)).toBe(db.get(meta("seq"))!.readBigUInt64BE(0) * 128n);
    });

    // The API goes on refusing a second spend of the change, and of Bob's output (held by the spend onward), and a
    // spend of an output no transaction creates.
    const again = spend(owner, [change], [single(owner, TOTAL_SUPPLY - 10 * MI)], [tail.id], "again");
    const refused = await refusal(migrated.accept(again.acceptance));
    expect(refused.code).toBe("INPUT_SPENT");
    expect(refused.message).toContain(toBob.transactionId);
    const twice = await refusal(migrated.accept(spend(bob, [bobs], [single(bob, 5 * MI)], [tail.id]).acceptance));
    expect(twice.code).toBe("INPUT_SPENT");
    expect(twice.message).toContain(onward.transactionId);
    expect((await refusal(migrated.accept(spend(bob, ["ab".repeat(32) + "0000"], [single(bob, 5 * MI)], [tail.id]).acceptance))).code).toBe("INPUT_NOT_FOUND");
    // The owner's rest, a pending output of the payment to Bob, is spent by a submission (a chained spend), on the
    // migrated store as on the one made at schema 4 (where the payment's claim recorded it).
    const other = new LmdbStore(reference);
    await other.open({ network: NETWORK });
    const chained = spend(owner, [amount(toBob, owner, rest)], [single(alice, rest)], [tail.id], "chained");
    for (const s of [migrated, other]) expect(await s.accept(chained.acceptance)).toEqual({ stored: true });
    expect(await migrated.claim(amount(toBob, owner, rest))).toEqual({ transactionId: chained.transactionId, messageId: chained.acceptance.id, index: 2 });
    expect((await refusal(migrated.accept(spend(owner, [amount(toBob, owner, rest)], [single(owner, rest)], [tail.id], "chained again").acceptance))).code).toBe("INPUT_SPENT");
    expect(await migrated.verify()).toBeUndefined();

    // Milestone 3 confirms the three pending transactions, on the migrated store and on the one made at schema 4: the
    // same, and no claim, pending output or entry by index left on either.
    const referenced: ReferencedMessage[] = [
      { messageId: toBob.acceptance.id, ledgerInclusionState: "included" },
      { messageId: onward.acceptance.id, ledgerInclusionState: "included" },
      { messageId: tail.id, ledgerInclusionState: "noTransaction" },
      { messageId: chained.acceptance.id, ledgerInclusionState: "included" },
    ];
    for (const s of [migrated, other]) expect(await s.accept(await milestoneOf(s, 3, [onward.acceptance.id, chained.acceptance.id], referenced, [toBob, onward, chained]))).toEqual({ stored: true });
    const confirmed = await seen(migrated);
    expect(confirmed).toEqual(await seen(other));
    expect(await migrated.addressBalance(alice.address)).toEqual({ balance: 15 * MI + rest, dustAllowance: 0, dustOutputs: 0 });
    expect(await migrated.addressBalance(bob.address)).toEqual({ balance: MI, dustAllowance: MI, dustOutputs: 0 });
    expect(await migrated.addressBalance(owner.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    expect(await migrated.claim(change)).toBeUndefined();
    for (const id of [...toBob.created, ...onward.created, ...chained.created]) expect(await migrated.pendingOutput(id)).toBeUndefined();
    expect(await migrated.verify()).toBeUndefined();
    expect(await other.verify()).toBeUndefined();
    await other.close();
    await migrated.close();
    for (const p of [path, reference]) {
      const left = await raw(p, (db) => [0x14, 0x15, 0x16].map((prefix) => db.getKeysCount({ start: Buffer.from([prefix]), end: Buffer.from([prefix + 1]) })));
      expect(left).toEqual([0, 0, 0]);
    }
  });
});

describe("stats, bytes and compact on LMDB", () => {
  it("counts what is held; compact shrinks the file to about the bytes in use, and the store goes on", async () => {
    const path = freshPath();
    const { store, rounds } = await build(path, 30, "x".repeat(3000));
    const full = await store.stats();
    expect(full).toMatchObject({ engine: "lmdb", network: NETWORK, messages: 1 + 30 * 4, unspentOutputs: 31, latestMilestoneIndex: 30, pruningIndex: 0 });
    expect(full.bytes).toBeGreaterThan(30 * 2 * 3000);
    expect(full.bytes).toBeLessThanOrEqual(full.fileBytes);
    expect(await store.bytes()).toBe(full.bytes);

    await pruneTo(store, 25, 20);
    const pruned = await store.stats();
    expect(pruned).toMatchObject({ messages: 5 * 4, unspentOutputs: 31, latestMilestoneIndex: 30, pruningIndex: 25 });
    expect(pruned.bytes).toBeLessThan(full.bytes / 2);
    // Freed pages stay in the file.
    expect(pruned.fileBytes).toBeGreaterThanOrEqual(full.fileBytes);

    const { before, after } = await store.compact();
    expect(before).toBe(pruned.fileBytes);
    expect(after).toBeLessThan(before / 2);
    // The formula of bytes() is what a compacting copy writes, give or take a few pages.
    expect(Math.abs(after - pruned.bytes)).toBeLessThanOrEqual(8 * 4096);
    expect((await store.stats()).fileBytes).toBe(after);
    const kept = rounds[29]!;
    expect(Buffer.from((await store.get(kept.note.id))!.bytes).equals(Buffer.from(kept.note.bytes))).toBe(true);
    expect(await store.accept(indexation([kept.milestone.id], "after compaction"))).toEqual({ stored: true });
    expect(await store.verify()).toBeUndefined();
    await store.close();
    const again = new LmdbStore(path);
    await again.open({ network: NETWORK });
    expect(await again.findByIndex(utf8.encode("after compaction"), 10)).toHaveLength(1);
    await again.close();
  });

  it("compact refuses while another process has the store open, and works once it has gone", async () => {
    const path = freshPath();
    const { store } = await build(path, 2);
    const other = await heldOpenElsewhere(path);
    try {
      const error = await refusal(store.compact());
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(error.message).toContain(`in use by another process (pid ${other.pid})`);
      // Nothing changed: the store still serves.
      expect(await store.latestMilestone()).toMatchObject({ index: 2 });
    } finally {
      await other.end();
    }
    const { before, after } = await store.compact();
    expect(after).toBeLessThanOrEqual(before);
    expect(await store.verify()).toBeUndefined();
    await store.close();
  });
});
