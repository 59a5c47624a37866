// Tip selection as Hornet's URTS (TIPSELECT.md, TIP-3), in memory: the score of a tip from its cone root indexes, the
// two pools and their retention rules, the draws, re-scoring at a milestone, the spammer rule, and the Tangle it reads.
import { describe, expect, it } from "vitest";
import { BELOW_MAX_DEPTH, MAX_DELTA_OLDEST_CONE_ROOT, MAX_DELTA_YOUNGEST_CONE_ROOT } from "../src/bytes/limits.js";
import { NodeError } from "../src/node/errors.js";
import { Tangle } from "../src/node/tangle.js";
import { NON_LAZY_POOL, SEMI_LAZY_POOL, TipSelector, TIPS_PER_SELECTION, tipScore, type TipPoolRules } from "../src/node/tipselect.js";

const ENTRY = "00".repeat(32);
const id = (n: number): string => n.toString(16).padStart(64, "0");

/** A Tangle at confirmed index `cmi` and a selector on it, with a clock the test moves. */
function setup(options: { cmi?: number; synced?: () => boolean; nonLazy?: TipPoolRules; semiLazy?: TipPoolRules; fallback?: () => string[]; random?: () => number } = {}) {
  const tangle = new Tangle(new Map([[ENTRY, 0]]));
  tangle.confirmed = options.cmi ?? 0;
  let now = 1_000_000;
  const tips = new TipSelector(tangle, {
    synced: options.synced ?? (() => true),
    now: () => now,
    ...(options.nonLazy !== undefined ? { nonLazy: options.nonLazy } : {}),
    ...(options.semiLazy !== undefined ? { semiLazy: options.semiLazy } : {}),
    ...(options.fallback !== undefined ? { fallback: options.fallback } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
  });
  /** Stores message n under `parents` with cone roots (oldest, youngest), as the processor does. */
  const store = (n: number, parents: string[], oldest = tangle.confirmed, youngest = oldest): string => {
    tangle.add(id(n), parents, { oldest, youngest });
    tips.add(id(n));
    return id(n);
  };
  return { tangle, tips, store, advance: (ms: number) => (now += ms) };
}

function refusal(work: () => unknown): NodeError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(NodeError);
    return error as NodeError;
  }
  throw new Error("expected a refusal");
}

describe("the score: non-lazy, semi-lazy or lazy by the cone root indexes at the confirmed milestone (Hornet's order)", () => {
  it(`lazy once the youngest root lags more than ${MAX_DELTA_YOUNGEST_CONE_ROOT}, or the oldest more than ${BELOW_MAX_DEPTH}; semi-lazy once the oldest lags more than ${MAX_DELTA_OLDEST_CONE_ROOT}`, () => {
    const cmi = 100;
    expect(tipScore({ oldest: 100, youngest: 100 }, cmi)).toBe("nonLazy");
    expect(tipScore({ oldest: cmi - 13, youngest: cmi - 8 }, cmi)).toBe("nonLazy");
    expect(tipScore({ oldest: cmi - 13, youngest: cmi - 9 }, cmi)).toBe("lazy");
    expect(tipScore({ oldest: cmi - 14, youngest: cmi }, cmi)).toBe("semiLazy");
    expect(tipScore({ oldest: cmi - 15, youngest: cmi }, cmi)).toBe("semiLazy");
    expect(tipScore({ oldest: cmi - 16, youngest: cmi }, cmi)).toBe("lazy");
    // The youngest rule comes first.
    expect(tipScore({ oldest: cmi - 14, youngest: cmi - 9 }, cmi)).toBe("lazy");
  });
});

describe("adding: every stored message while synced, into its score's pool; its parents in that pool count a child", () => {
  it("a non-lazy message is a tip; its parent in the same pool gets a child and a first-child time, and leaves after maxReferencedTipAge", () => {
    const { tips, store, advance } = setup();
    const a = store(1, [ENTRY]);
    expect(tips.tips()).toEqual([a]);
    const b = store(2, [a]);
    expect(tips.tips().sort()).toEqual([a, b].sort());
    advance(NON_LAZY_POOL.maxReferencedTipAgeMs - 1);
    tips.sweep();
    expect(tips.tips()).toContain(a);
    advance(1);
    tips.sweep();
    expect(tips.tips()).toEqual([b]);
  });

  it("a tip leaves once it has maxChildren children", () => {
    const { tips, store } = setup({ nonLazy: { ...NON_LAZY_POOL, maxChildren: 3 } });
    const a = store(1, [ENTRY]);
    store(2, [a]);
    store(3, [a]);
    expect(tips.tips()).toContain(a);
    store(4, [a]);
    expect(tips.tips()).not.toContain(a);
  });

  it("past the pool's retention limit, a tip a new tip approves leaves at once", () => {
    const { tips, store } = setup({ nonLazy: { ...NON_LAZY_POOL, limit: 3 } });
    const [a, b, c] = [store(1, [ENTRY]), store(2, [ENTRY]), store(3, [ENTRY])];
    // The fourth tip makes the pool hold 4 > 3: the first parent it approves goes; then the pool holds 3, and the
    // second parent gets a child (Hornet checks the rule per parent).
    store(4, [a, b]);
    expect(tips.tips().sort()).toEqual([b, c, id(4)].sort());
  });

  it("the pool is bounded: past its capacity the oldest tip leaves, whatever approves it (Hornet keeps them all)", () => {
    const { tips, store } = setup({ nonLazy: { ...NON_LAZY_POOL, capacity: 5 } });
    const ids = Array.from({ length: 12 }, (_, i) => store(i + 1, [ENTRY]));
    expect(tips.sizes.nonLazy).toBe(5);
    expect(tips.tips()).toEqual(ids.slice(7));
    for (let i = 0; i < 20; i++) for (const t of tips.select()) expect(ids.slice(7)).toContain(t);
  });

  it("eviction takes the oldest tip still in the pool, past those that already left by their children", () => {
    const { tips, store } = setup({ nonLazy: { ...NON_LAZY_POOL, capacity: 4, maxChildren: 1 } });
    for (let n = 1; n <= 4; n++) store(n, [ENTRY]);
    // Tip 5 fills the pool past 4: tip 1 is evicted; tip 2, approved once, leaves by its child.
    store(5, [id(2)]);
    expect(tips.tips()).toEqual([id(3), id(4), id(5)]);
    store(6, [ENTRY]);
    store(7, [ENTRY]);
    // The oldest held is 3: the eviction steps over 1 and 2, which are gone.
    expect(tips.tips()).toEqual([id(4), id(5), id(6), id(7)]);
    store(8, [ENTRY]);
    expect(tips.tips()).toEqual([id(5), id(6), id(7), id(8)]);
  });

  it("a lazy message is no tip and removes none; a semi-lazy one never touches the non-lazy pool (nor the reverse)", () => {
    const { tips, store } = setup({ cmi: 100 });
    const fresh = store(1, [ENTRY], 100);
    store(2, [fresh], 80, 80);
    expect(tips.tips()).toEqual([fresh]);
    expect(tips.sizes).toEqual({ nonLazy: 1, semiLazy: 0 });
    const semi = store(3, [fresh], 86, 100);
    expect(tips.tips("semiLazy")).toEqual([semi]);
    // The semi-lazy child counted no child of the non-lazy tip: it still has no first-child time.
    expect(tips.tips()).toEqual([fresh]);
  });

  it("nothing is added while the node is not synced", () => {
    let synced = false;
    const { tips, store } = setup({ synced: () => synced });
    store(1, [ENTRY]);
    expect(tips.sizes).toEqual({ nonLazy: 0, semiLazy: 0 });
    synced = true;
    store(2, [ENTRY]);
    expect(tips.tips()).toEqual([id(2)]);
  });
});

describe("drawing: up to 4 distinct tips of the non-lazy pool, uniformly at random, sorted", () => {
  it(`${TIPS_PER_SELECTION} of many, sorted and distinct, each tip about equally often`, () => {
    const { tips, store } = setup();
    const all = Array.from({ length: 40 }, (_, i) => store(i + 1, [ENTRY]));
    const counts = new Map<string, number>();
    for (let round = 0; round < 2000; round++) {
      const picked = tips.select();
      expect(picked).toHaveLength(TIPS_PER_SELECTION);
      expect([...picked].sort()).toEqual(picked);
      expect(new Set(picked).size).toBe(picked.length);
      for (const t of picked) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    // 8000 picks over 40 tips: 200 each on average; uniform draws keep every tip within a wide band of that.
    expect(counts.size).toBe(all.length);
    for (const n of counts.values()) expect(n).toBeGreaterThan(120);
    for (const n of counts.values()) expect(n).toBeLessThan(280);
  });

  it("being selected never removes a tip; fewer tips than asked give what there is", () => {
    const { tips, store } = setup();
    const a = store(1, [ENTRY]);
    const b = store(2, [ENTRY]);
    for (let i = 0; i < 10; i++) expect(tips.select()).toEqual([a, b].sort());
    expect(tips.select(1)).toHaveLength(1);
  });

  it("not synced: CANNOT_FILL 503 'not synced'; no tips and no fallback: 503 'no tips available'; with a fallback, the fallback", () => {
    let synced = false;
    const none = setup({ synced: () => synced });
    const notSynced = refusal(() => none.tips.select());
    expect(notSynced).toMatchObject({ code: "CANNOT_FILL", status: 503 });
    expect(notSynced.message).toMatch(/not synced/);
    synced = true;
    expect(refusal(() => none.tips.select()).message).toMatch(/no tips available/);
    const withFallback = setup({ fallback: () => [id(9), id(8)] });
    expect(withFallback.tips.select()).toEqual([id(8), id(9)]);
  });
});

describe("at a milestone every tip is scored again", () => {
  it("lazy tips leave; a tip whose score changed moves to its pool with its children and first-child time", () => {
    const { tangle, tips, store } = setup({ cmi: 10, nonLazy: { ...NON_LAZY_POOL, maxChildren: 3 }, semiLazy: { ...SEMI_LAZY_POOL, maxChildren: 3 } });
    // p5 was referenced by milestone 5; r is not referenced yet.
    tangle.add(id(0x50), [ENTRY], { oldest: 0, youngest: 0 });
    tangle.reference([id(0x50)], 5);
    const r = store(0x11, [ENTRY], 10);
    const young = store(1, [ENTRY], 10);
    const older = store(2, [id(0x50), r], 5, 10);
    store(3, [older], 5, 10);
    expect(tips.tips()).toContain(older);
    // Milestone 11 references r: `older` has roots (5, 11). At milestone 19 it lags 14 on its oldest root and 8 on
    // its youngest: semi-lazy, keeping its child. `young` (on the entry point, roots 0) is lazy and leaves.
    tangle.reference([r], 11);
    tangle.confirm(11);
    tips.rescore();
    tangle.confirm(19);
    tips.rescore();
    expect(tangle.passedOn(older)).toEqual({ oldest: 5, youngest: 11 });
    expect(tips.tips()).not.toContain(young);
    expect(tips.tips("semiLazy")).toContain(older);
    // Its one child is still counted: two more make three, and it leaves.
    store(4, [older], 5, 11);
    expect(tips.tips("semiLazy")).toContain(older);
    store(5, [older], 5, 11);
    expect(tips.tips("semiLazy")).not.toContain(older);
  });

  it("a tip that moved to another pool is the newest there: that pool evicts its older tips first", () => {
    const { tangle, tips, store } = setup({ cmi: 20, semiLazy: { ...SEMI_LAZY_POOL, capacity: 2 } });
    const s1 = store(1, [ENTRY], 6, 20);
    const s2 = store(2, [ENTRY], 6, 20);
    const n = store(3, [ENTRY], 7, 20);
    expect(tips.tips("semiLazy")).toEqual([s1, s2]);
    expect(tips.tips()).toEqual([n]);
    // At 21 the non-lazy tip lags 14 on its oldest root: it moves, and the semi-lazy pool, over 2, evicts s1.
    tangle.confirmed = 21;
    tips.rescore();
    expect(tips.tips()).toEqual([]);
    expect(tips.tips("semiLazy").sort()).toEqual([s2, n].sort());
    const s3 = store(4, [ENTRY], 7, 21);
    expect(tips.tips("semiLazy").sort()).toEqual([n, s3].sort());
  });

  it("a tip the milestone referenced becomes its own root and stays non-lazy", () => {
    const { tangle, tips, store } = setup({ cmi: 10 });
    const a = store(1, [ENTRY], 2, 10);
    tangle.reference([a], 11);
    tangle.confirm(11);
    tips.rescore();
    expect(tips.tips()).toEqual([a]);
    expect(tangle.passedOn(a)).toEqual({ oldest: 11, youngest: 11 });
  });
});

describe("the spammer rule (Hornet's SelectSpammerTips)", () => {
  it("semi-lazy tips while that pool is over its threshold, at least two of them; else non-lazy ones", () => {
    const { tips, store } = setup({ cmi: 100, semiLazy: { ...SEMI_LAZY_POOL, limit: 100, spammerThreshold: 3 } });
    const fresh = store(1, [ENTRY], 100);
    const semi = [2, 3, 4, 5].map((n) => store(n, [ENTRY], 86, 100));
    expect(tips.sizes).toEqual({ nonLazy: 1, semiLazy: 4 });
    for (let i = 0; i < 5; i++) for (const t of tips.selectSpammer()) expect(semi).toContain(t);
    const plain = setup({ cmi: 100 });
    const only = plain.store(1, [ENTRY], 100);
    expect(plain.tips.selectSpammer()).toEqual([only]);
    expect(fresh).toBeDefined();
  });
});

describe("the Tangle in memory: roots from parents, bounded", () => {
  it("an unreferenced message takes its parents' roots; a referenced one passes on its milestone; confirm() works them out again, parents first", () => {
    const tangle = new Tangle(new Map([[ENTRY, 0]]));
    tangle.add(id(1), [ENTRY], { oldest: 0, youngest: 0 });
    tangle.add(id(2), [id(1)], { oldest: 0, youngest: 0 });
    tangle.add(id(3), [id(2), ENTRY], { oldest: 0, youngest: 0 });
    tangle.reference([id(1)], 4);
    tangle.confirm(4);
    expect(tangle.passedOn(id(2))).toEqual({ oldest: 4, youngest: 4 });
    // id(3) names the entry point (index 0) too: its oldest root stays 0.
    expect(tangle.passedOn(id(3))).toEqual({ oldest: 0, youngest: 4 });
    expect(tangle.rootsOf([id(2), id(3)])).toEqual({ oldest: 0, youngest: 4 });
    expect(tangle.rootsOf([id(9)])).toBeUndefined();
    expect(tangle.childless().map((m) => m.id)).toEqual([id(3)]);
  });

  it("past its bound the oldest messages are forgotten", () => {
    const tangle = new Tangle(new Map(), { maxMessages: 3 });
    for (let n = 1; n <= 5; n++) tangle.add(id(n), [], { oldest: 0, youngest: 0 });
    expect(tangle.size).toBe(3);
    expect(tangle.knows(id(2))).toBe(false);
    expect(tangle.knows(id(3))).toBe(true);
  });
});
