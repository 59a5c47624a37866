// The embedded engine's claims (14) and pending outputs (15) are listed by the milestone index they were made at (16),
// so that pruning deletes the lapsed ones by a range of those entries in index order, never by a scan of every claim,
// and a record made again at another index (a lapsed claim taken over, a reattachment) leaves no entry behind.
// Observed by wrapping lmdb-js's open (the store's environment): which ranges a prune step reads, and with what limit.
import { afterAll, describe, expect, it, vi } from "vitest";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { outputId } from "../src/model/ids.js";
import { LmdbStore, PENDING_CLAIM_MILESTONES, ZERO_MESSAGE_ID, type GenesisOutput, type PruneStep } from "../src/node/index.js";
import { emptyMilestone, indexation, NETWORK, single, spend, tempDir, wallet, type Spend, type Wallet } from "./store-helpers.js";

const watch = vi.hoisted(() => ({ on: false, ranges: [] as { prefix: number; limit: number | undefined }[] }));

vi.mock("lmdb", async (importOriginal) => {
  const lmdb = await importOriginal<typeof import("lmdb")>();
  const open = ((...args: Parameters<typeof lmdb.open>) => {
    const db = lmdb.open(...args) as unknown as Record<"getRange" | "getKeys", (options: { start?: unknown; limit?: number }) => Iterable<unknown>>;
    for (const name of ["getRange", "getKeys"] as const) {
      const read = db[name].bind(db);
      db[name] = (options) => {
        const start = options.start;
        if (watch.on && start instanceof Uint8Array && start[0] !== undefined) watch.ranges.push({ prefix: start[0], limit: options.limit });
        return read(options);
      };
    }
    return db;
  }) as typeof lmdb.open;
  return { ...lmdb, open, default: { ...(lmdb as { default?: object }).default, open } };
});

const dirs = tempDir("lmdb-lapsed");
afterAll(() => dirs.remove());
let made = 0;

/** A ledger store whose genesis splits the supply over `count` outputs of `owner` (each spendable on its own, each of a
 * transaction id of its own). */
async function store(owner: Wallet, count: number): Promise<{ store: LmdbStore; genesis: GenesisOutput[] }> {
  const s = new LmdbStore(`${dirs.path}/store-${++made}`);
  const each = Math.floor(TOTAL_SUPPLY / count);
  const genesis = Array.from({ length: count }, (_, i) => ({ outputId: outputId(i.toString(16).padStart(64, "0"), 0), output: single(owner, i === 0 ? TOTAL_SUPPLY - each * (count - 1) : each) }));
  await s.open({ network: NETWORK, genesis });
  return { store: s, genesis };
}

/** Empty milestones `from` to `to` under `parent`; answers the last one's id. */
async function milestones(s: LmdbStore, from: number, to: number, parent: string): Promise<string> {
  for (let index = from; index <= to; index++) {
    const ms = indexation([parent], `milestone ${index}`);
    expect(await s.accept({ ...ms, milestone: emptyMilestone(ms, index, 1_700_000_000 + index) })).toEqual({ stored: true });
    parent = ms.id;
  }
  return parent;
}

/** The 16 entries of the store at `path` (closed), as [index, kind, output id]. */
async function entries(path: string): Promise<[number, number, string][]> {
  const { open } = await import("lmdb");
  const db = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
  try {
    return [...db.getKeys({ start: Buffer.from([0x16]), end: Buffer.from([0x17]) })].map((k) => [k.readUInt32BE(1), k[5]!, k.subarray(6).toString("hex")]);
  } finally {
    await db.close();
  }
}

describe("pruning on LMDB deletes the lapsed claims and pending outputs by their entries in index order", () => {
  it("160 claims and pending outputs made at milestones 0 and 3 go with milestones 1 and 4, at most a batch a step, by ranges of 16 alone; the 80 made at 24 stay", async () => {
    const owner = wallet();
    const { store: s, genesis } = await store(owner, 240);
    const claimAll = async (inputs: GenesisOutput[], parent: string): Promise<Spend[]> => {
      const spends = inputs.map((input) => spend(owner, [input.outputId], [single(wallet(), input.output.amount)], [parent]));
      for (const x of spends) expect(await s.accept(x.acceptance)).toEqual({ stored: true });
      return spends;
    };
    const atZero = await claimAll(genesis.slice(0, 80), ZERO_MESSAGE_ID);
    let parent = await milestones(s, 1, 3, atZero[0]!.acceptance.id);
    const atThree = await claimAll(genesis.slice(80, 160), parent);
    parent = await milestones(s, 4, 24, parent);
    const atTwentyFour = await claimAll(genesis.slice(160), parent);
    await milestones(s, 25, 30, parent);
    expect(await s.claim(atThree[0]!.consumed[0]!)).toMatchObject({ index: 3 });
    expect(await s.pendingOutput(atTwentyFour[0]!.created[0]!)).toMatchObject({ index: 24 });

    const batch = 16;
    const steps: PruneStep[] = [];
    watch.on = true;
    try {
      for (let i = 0; i < 200; i++) {
        const step = await s.prune(8, batch);
        steps.push(step);
        if (step.done) break;
      }
    } finally {
      watch.on = false;
    }
    expect(steps.at(-1)).toMatchObject({ pruningIndex: 8, done: true });
    for (const step of steps) expect(step.messages + (step.entries ?? 0)).toBeLessThanOrEqual(batch);
    // Every claim and pending output made at 0 and 3, and nothing else (their messages went as unreferenced ones).
    expect(steps.reduce((n, step) => n + (step.entries ?? 0), 0)).toBe(2 * 160);
    expect(steps.reduce((n, step) => n + step.messages, 0)).toBe(160 + 8);
    // No range of the claims or pending outputs was read; each range of their entries within the step's budget.
    expect(watch.ranges.filter((r) => r.prefix === 0x14 || r.prefix === 0x15)).toEqual([]);
    const byIndex = watch.ranges.filter((r) => r.prefix === 0x16);
    expect(byIndex.length).toBeGreaterThan(0);
    for (const r of byIndex) expect(r.limit).toBeLessThanOrEqual(batch);

    for (const x of [...atZero, ...atThree]) {
      expect(await s.claim(x.consumed[0]!)).toBeUndefined();
      expect(await s.pendingOutput(x.created[0]!)).toBeUndefined();
    }
    for (const x of atTwentyFour) {
      expect(await s.claim(x.consumed[0]!)).toMatchObject({ transactionId: x.transactionId, index: 24 });
      expect(await s.pendingOutput(x.created[0]!)).toMatchObject({ transactionId: x.transactionId, index: 24 });
    }
    expect(await s.verify()).toBeUndefined();
    await s.close();
    const left = await entries(s.path);
    expect(left).toHaveLength(2 * 80);
    expect(left.every(([index]) => index === 24)).toBe(true);
  });
});

describe("a claim or pending output made again at another index moves its entry", () => {
  it(`a lapsed claim taken over ${PENDING_CLAIM_MILESTONES} milestones later, and a reattachment of that transaction a milestone after: one entry each, at the index of its record`, async () => {
    const owner = wallet();
    const { store: s, genesis } = await store(owner, 1);
    const input = genesis[0]!.outputId;
    const first = spend(owner, [input], [single(owner, TOTAL_SUPPLY)]);
    await s.accept(first.acceptance);
    let parent = await milestones(s, 1, PENDING_CLAIM_MILESTONES, first.acceptance.id);
    const taker = wallet();
    const second = spend(owner, [input], [single(taker, TOTAL_SUPPLY)], [parent]);
    expect(await s.accept(second.acceptance)).toEqual({ stored: true });
    parent = await milestones(s, PENDING_CLAIM_MILESTONES + 1, PENDING_CLAIM_MILESTONES + 1, parent);
    // The same transaction in another message (a reattachment): its claim and pending output are made again at 16.
    const again = spend(owner, [input], [single(taker, TOTAL_SUPPLY)], [parent]);
    expect(again.transactionId).toBe(second.transactionId);
    expect(await s.accept(again.acceptance)).toEqual({ stored: true });
    const at = PENDING_CLAIM_MILESTONES + 1;
    expect(await s.claim(input)).toEqual({ transactionId: second.transactionId, messageId: again.acceptance.id, index: at });
    expect(await s.pendingOutput(second.created[0]!)).toMatchObject({ messageId: again.acceptance.id, index: at });
    expect(await s.verify()).toBeUndefined();
    await s.close();
    // In key order: the first transaction's pending output (lapsed, left for pruning), then the claim and pending output
    // made again, each under 16 alone.
    expect(await entries(s.path)).toEqual([
      [0, 0x15, first.created[0]!],
      [at, 0x14, input],
      [at, 0x15, second.created[0]!],
    ]);
  });
});
