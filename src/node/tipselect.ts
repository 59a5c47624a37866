// Tip selection as Hornet's URTS (TIP-3; TIPSELECT.md), in memory: every message the node stores is scored by the
// milestone indexes of its cone (non-lazy, semi-lazy, lazy) and, unless lazy, becomes a tip of its score's pool; a tip
// is handed out, uniformly at random, until enough messages reference it or it has been referenced for long enough.
// The pools are bounded, re-scored at every milestone, and filled again at start from the store's unreferenced messages.
import { ArrivalOrder } from "../bytes/bounded-map.js";
import { BELOW_MAX_DEPTH, MAX_DELTA_OLDEST_CONE_ROOT, MAX_DELTA_YOUNGEST_CONE_ROOT } from "../bytes/limits.js";
import { NodeError } from "./errors.js";
import type { ConeRoots } from "./store/contract.js";
import type { RecentMessage, Tangle } from "./tangle.js";

/** How one pool keeps its tips (Hornet's `tipsel.<pool>` settings). */
export interface TipPoolRules {
  /** Past this many tips, a tip a new tip approves leaves at once (retentionRulesTipsLimit). */
  readonly limit: number;
  /** A tip leaves this long after its first child arrived; 0: never for age (maxReferencedTipAge). */
  readonly maxReferencedTipAgeMs: number;
  /** A tip leaves once it has this many children (maxChildren). */
  readonly maxChildren: number;
  /** The spammer rule's threshold (spammerTipsThreshold; 0 = off for the semi-lazy pool, always for the non-lazy). */
  readonly spammerThreshold: number;
  /** Most tips the pool holds; past it the oldest leaves. Hornet has no such bound: a tip nothing approves stays until
   * it turns lazy, so messages that all attach elsewhere (a spammer's, on old tips) would grow the pool for eight
   * milestones. */
  readonly capacity: number;
}

/** Hornet's defaults for the non-lazy pool, the one /tips and submissions draw from (plugins/urts/params.go). */
export const NON_LAZY_POOL: TipPoolRules = { limit: 100, maxReferencedTipAgeMs: 3000, maxChildren: 30, spammerThreshold: 0, capacity: 1000 };
/** Hornet's defaults for the semi-lazy pool: small, and drawn from by spammers only, so that its tips get confirmed
 * before they turn lazy (plugins/urts/params.go). */
export const SEMI_LAZY_POOL: TipPoolRules = { limit: 20, maxReferencedTipAgeMs: 3000, maxChildren: 2, spammerThreshold: 30, capacity: 200 };

/** Tips one selection gives at most (hard-coded in Hornet), and the draws it makes for them. */
export const TIPS_PER_SELECTION = 4;
const DRAWS = (TIPS_PER_SELECTION - 1) * 10;

/** How often referenced tips are checked for age (Hornet: every second). */
const AGE_SWEEP_MS = 1000;

/** Which pool a message's cone roots put it in at the confirmed index (tipScore): a lazy message is no tip at all. */
export type TipScore = "lazy" | "semiLazy" | "nonLazy";

/** Hornet's calculateScore at confirmed index `cmi`, in its order. */
export function tipScore(roots: ConeRoots, cmi: number): TipScore {
  if (cmi - roots.youngest > MAX_DELTA_YOUNGEST_CONE_ROOT) return "lazy";
  if (cmi - roots.oldest > BELOW_MAX_DEPTH) return "lazy";
  if (cmi - roots.oldest > MAX_DELTA_OLDEST_CONE_ROOT) return "semiLazy";
  return "nonLazy";
}

interface Tip {
  readonly id: string;
  pool: "semiLazy" | "nonLazy";
  children: number;
  /** ms since the epoch when its first child arrived. */
  firstChildAt: number | undefined;
}

/** The pools' rules and what a TipSelector reads from its node. */
export interface TipSelectorOptions {
  /** The non-lazy pool's rules. Default NON_LAZY_POOL. */
  nonLazy?: TipPoolRules;
  /** The semi-lazy pool's rules. Default SEMI_LAZY_POOL. */
  semiLazy?: TipPoolRules;
  /** Whether the node is almost synced (CMI ≥ LMI − 2): only then are tips added, re-scored and handed out. */
  synced: () => boolean;
  /** What to hand out when both pools are empty (`PROTOCOL.md` §6 Decision: the latest milestone's message, or the
   * solid entry points before the first milestone); Hornet answers "no tips available" then. */
  fallback?: () => string[];
  /** Uniform in [0, 1), for the draws. Default Math.random (tests pass a seeded one). */
  random?: () => number;
  /** Milliseconds since the Unix epoch, for the tips' age. Default Date.now. */
  now?: () => number;
}

/** How many tips each pool holds. */
export interface TipPoolSizes {
  /** Tips in the non-lazy pool. */
  readonly nonLazy: number;
  /** Tips in the semi-lazy pool. */
  readonly semiLazy: number;
}

/**
 * Hornet's URTS over the node's Tangle: keeps the non-lazy and semi-lazy pools as messages are stored and milestones
 * confirmed, and draws tips from them. Every method is synchronous; nothing is read from the store.
 */
export class TipSelector {
  readonly #tangle: Tangle;
  readonly #rules: Record<Tip["pool"], TipPoolRules>;
  readonly #pools: Record<Tip["pool"], TipPool> = { nonLazy: new TipPool(), semiLazy: new TipPool() };
  readonly #synced: () => boolean;
  readonly #fallback: () => string[];
  readonly #random: () => number;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(tangle: Tangle, options: TipSelectorOptions) {
    this.#tangle = tangle;
    this.#rules = { nonLazy: options.nonLazy ?? NON_LAZY_POOL, semiLazy: options.semiLazy ?? SEMI_LAZY_POOL };
    this.#synced = options.synced;
    this.#fallback = options.fallback ?? (() => []);
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** Starts the age sweep (every second). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sweep(), AGE_SWEEP_MS);
    this.#timer.unref();
  }

  /** Stops the age sweep (the node's close calls it): the pools are kept, but referenced tips no longer leave for age. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** How many tips each pool holds now. */
  get sizes(): TipPoolSizes {
    return { nonLazy: this.#pools.nonLazy.size, semiLazy: this.#pools.semiLazy.size };
  }

  /** Every tip of a pool (for the dashboard and tests). */
  tips(pool: Tip["pool"] = "nonLazy"): string[] {
    return [...this.#pools[pool].keys()];
  }

  #score(id: string): TipScore {
    return this.#scoreOf(this.#tangle.get(id));
  }

  #scoreOf(m: RecentMessage | undefined): TipScore {
    // A message no longer remembered scores lazy, as one no longer in Hornet's store.
    if (m === undefined) return "lazy";
    return tipScore(m.referenced !== undefined ? { oldest: m.referenced, youngest: m.referenced } : m.roots, this.#tangle.confirmed);
  }

  /** A message was stored (and remembered by the Tangle): Hornet's AddTip on MessageSolid. `m`: the Tangle's record
   * of it, when the caller has it (read once for its score and its parents: a lookup in a map of up to 50,000). */
  add(id: string, m: RecentMessage | undefined = this.#tangle.get(id)): void {
    if (!this.#synced()) return;
    if (this.#pools.nonLazy.has(id) || this.#pools.semiLazy.has(id)) return;
    const score = this.#scoreOf(m);
    // A lazy message never removes tips.
    if (score === "lazy") return;
    const pool = this.#pools[score];
    const rules = this.#rules[score];
    pool.set(id, { id, pool: score, children: 0, firstChildAt: undefined });
    if (pool.size > rules.capacity) pool.deleteOldest();
    // Parents are sorted and distinct (the codec's rule): an id met twice in a row would be a duplicate.
    let previous: string | undefined;
    for (const parent of m!.parents) {
      if (parent === previous) continue;
      previous = parent;
      const tip = pool.get(parent);
      if (tip === undefined) continue;
      if (pool.size > rules.limit) {
        pool.delete(parent);
        continue;
      }
      tip.children++;
      if (tip.children >= rules.maxChildren) pool.delete(parent);
      else if (rules.maxReferencedTipAgeMs !== 0 && tip.firstChildAt === undefined) tip.firstChildAt = this.#now();
    }
  }

  /** Every tip whose first child came maxReferencedTipAge ago or earlier leaves (run every second by start()). */
  sweep(): void {
    const now = this.#now();
    for (const pool of Object.values(this.#pools)) {
      for (const tip of pool.values()) {
        const age = this.#rules[tip.pool].maxReferencedTipAgeMs;
        if (age !== 0 && tip.firstChildAt !== undefined && now - tip.firstChildAt >= age) pool.delete(tip.id);
      }
    }
  }

  /** A milestone was confirmed (the Tangle moved on first): every tip is scored again; lazy ones leave, the others go
   * to the pool of their score with their children and first-child time. */
  rescore(): void {
    if (!this.#synced()) return;
    for (const from of Object.values(this.#pools)) {
      for (const tip of [...from.values()]) {
        const score = this.#score(tip.id);
        if (score === tip.pool) continue;
        from.delete(tip.id);
        if (score === "lazy") continue;
        // A new record for the new pool: the old one stays behind in the old pool's arrival order, no longer held.
        const moved: Tip = { ...tip, pool: score };
        const to = this.#pools[score];
        to.set(moved.id, moved);
        if (to.size > this.#rules[score].capacity) to.deleteOldest();
      }
    }
  }

  /**
   * Up to `count` (at most TIPS_PER_SELECTION) distinct tips of the non-lazy pool, uniformly at random, sorted: what
   * GET /api/v1/tips answers and a submission's parents are filled with. Refused with CANNOT_FILL (503) while the
   * node is not synced, or when there is no tip and no fallback.
   */
  select(count = TIPS_PER_SELECTION): string[] {
    if (!this.#synced()) throw new NodeError("CANNOT_FILL", "tip selection failed: the node is not synced", { status: 503, path: "parentMessageIds" });
    return this.#draw(this.#pools.nonLazy, Math.min(count, TIPS_PER_SELECTION), 1);
  }

  /** Hornet's SelectSpammerTips: semi-lazy tips while that pool is over its threshold (so the coordinator can confirm
   * them before they turn lazy), else non-lazy ones once that pool has reached its own. */
  selectSpammer(count = TIPS_PER_SELECTION): string[] {
    if (!this.#synced()) throw new NodeError("CANNOT_FILL", "tip selection failed: the node is not synced", { status: 503, path: "parentMessageIds" });
    const semi = this.#rules.semiLazy.spammerThreshold;
    if (semi !== 0 && this.#pools.semiLazy.size > semi) return this.#draw(this.#pools.semiLazy, count, 2);
    const non = this.#rules.nonLazy.spammerThreshold;
    if (non !== 0 && this.#pools.nonLazy.size < non) throw new NodeError("CANNOT_FILL", "tip selection failed: not enough tips for a spammer", { status: 503, path: "parentMessageIds" });
    return this.#draw(this.#pools.nonLazy, count, 1);
  }

  #draw(pool: TipPool, count: number, atLeast: number): string[] {
    const picked = new Set<string>();
    for (let draw = 0; draw < DRAWS && picked.size < count && pool.size > 0; draw++) picked.add(pool.at(Math.floor(this.#random() * pool.size)));
    if (picked.size === 0) for (const id of this.#fallback().slice(0, count)) picked.add(id);
    if (picked.size < atLeast) throw new NodeError("CANNOT_FILL", "tip selection failed: no tips available", { status: 503, path: "parentMessageIds" });
    return [...picked].sort();
  }
}

/** One pool's tips: by id, in the order they came (the first the oldest), and by position for uniform draws in O(1). */
class TipPool {
  readonly #tips = new Map<string, Tip>();
  readonly #ids: string[] = [];
  readonly #at = new Map<string, number>();
  // The oldest without Map.keys().next(), which steps over every hole deletions left at the front of V8's table: a
  // full pool evicts on every message stored. A record is held while the map holds that very record under its id.
  readonly #order = new ArrivalOrder<Tip>((tip) => this.#tips.get(tip.id) === tip);

  get size(): number {
    return this.#tips.size;
  }

  has(id: string): boolean {
    return this.#tips.has(id);
  }

  get(id: string): Tip | undefined {
    return this.#tips.get(id);
  }

  set(id: string, tip: Tip): void {
    const held = this.#tips.get(id);
    if (held === tip) return;
    if (held === undefined) {
      this.#at.set(id, this.#ids.length);
      this.#ids.push(id);
    }
    this.#tips.set(id, tip);
    this.#order.push(tip, this.#tips.size);
  }

  delete(id: string): void {
    const at = this.#at.get(id);
    if (at === undefined) return;
    this.#tips.delete(id);
    this.#at.delete(id);
    const last = this.#ids.pop()!;
    if (last !== id) {
      this.#ids[at] = last;
      this.#at.set(last, at);
    }
  }

  /** The oldest tip leaves (the pool is over its capacity). */
  deleteOldest(): void {
    const oldest = this.#order.takeOldest();
    if (oldest !== undefined) this.delete(oldest.id);
  }

  /** The tip at this position of the draw order (0 ≤ index < size). */
  at(index: number): string {
    return this.#ids[index]!;
  }

  keys(): IterableIterator<string> {
    return this.#tips.keys();
  }

  values(): IterableIterator<Tip> {
    return this.#tips.values();
  }
}
