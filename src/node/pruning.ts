// Pruning (Hornet's pruning plugin, one job), beside the coordinator and over the storage contract: after each
// milestone it moves the store's pruning index to latest − keep (and further while the store is above a size target),
// one bounded atomic step at a time, yielding to the event loop between steps so that submissions are never stalled.
// What a step deletes, and that the ledger of unspent outputs is never touched, is the store's rule (NodeStore.prune).
import { ProtocolError } from "../bytes/errors.js";
import { BELOW_MAX_DEPTH } from "../bytes/limits.js";
import type { NodeEventListener } from "./pipeline.js";
import { MIN_PRUNE_KEEP, type NodeStore, type PruneStep } from "./store/contract.js";

/** Hornet's default: a week of milestones at one every 10 s. */
export const DEFAULT_PRUNE_KEEP = 60_480;

/**
 * Messages deleted per step (one atomic write): small enough that a submission committed in the same write batch is
 * not held up (on LMDB, steps of 100 raised submit p99 2.5× while a backlog was pruned, steps of 32 1.35×: npm run
 * bench -- ageing), large enough that pruning outpaces any node (5.7 k messages/s on LMDB).
 */
export const DEFAULT_PRUNE_BATCH = 32;

/** Without milestone events the store is looked at this often (a node following another instance's milestones). */
export const DEFAULT_PRUNE_INTERVAL_MS = 1000;

/** Share of the kept milestones pruned further each time the store is found above its size target (Hornet's 10 %). */
const SIZE_PRUNE_SHARE = 0.1;

/** How much the store's size must have moved since the last pass pruned for size for another such pass to run. */
const SIZE_TOLERANCE = 0.01;

/**
 * The store reclaims freed space (NodeStore.reclaim) each time pruning has moved on by this share of the milestones
 * kept: what was deleted since then is about this share of what is stored, as autovacuum's scale factor reasons.
 */
const RECLAIM_SHARE = 0.1;

/** How deep and how large a pruner keeps the store, and what drives its passes. */
export interface PrunerOptions {
  /** Milestones whose messages are kept: the pruning target is latest − keep. 0 prunes nothing by depth; otherwise at
   * least MIN_PRUNE_KEEP. */
  keep: number;
  /** Bytes (NodeStore.bytes) above which more milestones are pruned, 10 % of the kept ones at a time, never leaving
   * fewer than MIN_PRUNE_KEEP (Hornet's --prune-size). Applies with keep 0 too. */
  sizeTarget?: number | undefined;
  /** Messages per step. Default DEFAULT_PRUNE_BATCH. */
  batch?: number | undefined;
  /** The node's event stream: a pass runs after each milestone event. Without it, a pass runs every `intervalMs`. */
  events?:
    | {
        /** The node's subscribe: the pruner listens for milestone events until it stops. */
        subscribe(listener: NodeEventListener): () => void;
      }
    | undefined;
  /** Milliseconds between passes without events; at least 1000 (default). */
  intervalMs?: number | undefined;
  /** Called after every step (the metrics count pruned messages and show the pruning index from it). */
  onStep?: ((step: PruneStep) => void) | undefined;
  /** Called with the failure of a pass; the next milestone tries again. Default: console.error. */
  onError?: ((error: unknown) => void) | undefined;
}

/** What one whole pass of the pruner did. */
export interface PruneResult {
  /** The store's pruning index after the pass. */
  readonly pruningIndex: number;
  /** Messages this pass deleted. */
  readonly messages: number;
}

/** A pruner over one store, not started. */
export interface Pruner {
  /** Prunes after every milestone (or every interval) until stop(). Does nothing when nothing is to be pruned. */
  start(): void;
  /** One whole pass now (after any pass in flight): steps until the target is reached or stop() is called. */
  runOnce(): Promise<PruneResult>;
  /** Stops listening and waits for the step in flight: the store can be closed when it resolves. */
  stop(): Promise<void>;
}

/** Why `keep` cannot be used, or undefined when it can: the one home of the rule the CLI and createPruner share. */
export function pruneKeepProblem(keep: number): string | undefined {
  if (!Number.isSafeInteger(keep) || keep < 0) return "the milestones to keep are a whole number ≥ 0";
  if (keep > 0 && keep < MIN_PRUNE_KEEP) {
    return `keeping ${keep} milestones is too few: at least ${MIN_PRUNE_KEEP} (${BELOW_MAX_DEPTH} of max depth, as far back as a new message's parents may reach, and ${MIN_PRUNE_KEEP - BELOW_MAX_DEPTH} of margin), or 0 to keep everything`;
  }
  return undefined;
}

/**
 * After each step the pruner rests this many times as long as the step took (at most MAX_PAUSE_MS): pruning takes at
 * most a quarter of the store's time while it catches up on a backlog, so submissions waiting behind its writes are
 * not held up (the bench's submit p99 while pruning; catching up is still far faster than any node takes messages).
 */
const PAUSE_FACTOR = 3;
const MAX_PAUSE_MS = 100;

// Between steps the event loop runs what waits (submissions, reads), as Hornet's pruning yields between batches.
const rest = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.min(MAX_PAUSE_MS, Math.max(0, ms))));

/**
 * A pruner for `store`: moves its pruning index towards latest − keep (and further while above the size target) in
 * bounded atomic steps, resting between them. Throws INVALID_ARGUMENT for a `keep` pruneKeepProblem refuses or a size
 * target that is not a whole number of bytes > 0.
 */
export function createPruner(store: NodeStore, options: PrunerOptions): Pruner {
  const problem = pruneKeepProblem(options.keep);
  if (problem !== undefined) throw new ProtocolError("INVALID_ARGUMENT", problem, { path: "keep" });
  const sizeTarget = options.sizeTarget;
  if (sizeTarget !== undefined && !(Number.isSafeInteger(sizeTarget) && sizeTarget > 0)) {
    throw new ProtocolError("INVALID_ARGUMENT", "the size target is a whole number of bytes > 0", { path: "sizeTarget" });
  }
  const batch = Math.max(1, Math.floor(options.batch ?? DEFAULT_PRUNE_BATCH));
  const intervalMs = Math.max(DEFAULT_PRUNE_INTERVAL_MS, options.intervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
  const onError = options.onError ?? ((error: unknown) => console.error("chrysalis pruning: a pass failed", error));
  const enabled = options.keep > 0 || sizeTarget !== undefined;
  let running = false;
  let stopping = false;
  let chain: Promise<unknown> = Promise.resolve();
  let pending = false;
  let unsubscribe: (() => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  // The pruning index at the last reclaim (undefined: none yet in this process).
  let reclaimedAt: number | undefined;
  // The store's bytes when it was last pruned further for size (undefined: not over its target then).
  let sizedAt: number | undefined;

  // The index to prune to now, or undefined when nothing is to be pruned.
  async function target(): Promise<{ target: number; current: number } | undefined> {
    const latest = (await store.latestMilestone())?.index ?? 0;
    const floor = latest - MIN_PRUNE_KEEP;
    if (floor <= 0) return undefined;
    let wanted = options.keep > 0 ? latest - options.keep : 0;
    // The common case on a young node (latest below keep) costs one read.
    if (wanted <= 0 && sizeTarget === undefined) return undefined;
    const current = await store.pruningIndex();
    if (sizeTarget !== undefined) {
      const bytes = await store.bytes();
      if (bytes <= sizeTarget) sizedAt = undefined;
      // Pruned further for size while that makes the store smaller, and again once it grows: an engine whose measure
      // stays put when rows are deleted (PostgreSQL keeps the space VACUUM freed, for reuse) is not pruned down to the
      // floor, deleting history the operator asked to keep, for a size that cannot fall.
      else if (sizedAt === undefined || Math.abs(bytes - sizedAt) > sizedAt * SIZE_TOLERANCE) {
        const kept = latest - Math.max(current, wanted);
        wanted = Math.max(wanted, current + Math.max(1, Math.ceil(kept * SIZE_PRUNE_SHARE)));
        sizedAt = bytes;
      }
    }
    wanted = Math.min(wanted, floor);
    return wanted > current ? { target: wanted, current } : undefined;
  }

  async function pass(): Promise<PruneResult> {
    const goal = await target();
    if (goal === undefined) return { pruningIndex: await store.pruningIndex(), messages: 0 };
    let messages = 0;
    let pruningIndex = goal.current;
    while (!stopping) {
      const started = performance.now();
      const step = await store.prune(goal.target, batch);
      const progressed = step.messages > 0 || (step.entries ?? 0) > 0 || step.pruningIndex > pruningIndex;
      messages += step.messages;
      pruningIndex = step.pruningIndex;
      options.onStep?.(step);
      // Every step deletes messages or entries or finishes a milestone; one that did none would only spin: the next pass
      // retries.
      if (step.done || !progressed) break;
      await rest((performance.now() - started) * PAUSE_FACTOR);
    }
    await reclaim(goal.current, pruningIndex);
    return { pruningIndex, messages };
  }

  async function reclaim(before: number, after: number): Promise<void> {
    if (store.reclaim === undefined || stopping || after <= before) return;
    reclaimedAt ??= before;
    const latest = (await store.latestMilestone())?.index ?? after;
    if (after - reclaimedAt < Math.max(1, Math.ceil((latest - after) * RECLAIM_SHARE))) return;
    reclaimedAt = after;
    await store.reclaim();
  }

  // Passes run one after another, never two at once (each reads the pruning index the previous one left).
  function enqueue<T>(work: () => Promise<T>): Promise<T> {
    const result = chain.then(work);
    chain = result.catch(() => undefined);
    return result;
  }

  const runOnce = (): Promise<PruneResult> => enqueue(pass);

  // Milestones arriving during a pass ask for one more pass, not one each: it prunes to the newest target.
  function trigger(): void {
    if (!running || pending) return;
    pending = true;
    enqueue(async () => {
      pending = false;
      if (running) await pass();
    }).catch((error: unknown) => {
      if (running) onError(error);
    });
  }

  return {
    start(): void {
      if (running || !enabled) return;
      running = true;
      stopping = false;
      if (options.events !== undefined) {
        unsubscribe = options.events.subscribe((event) => {
          if (event.type === "milestone") trigger();
        });
      } else {
        timer = setInterval(trigger, intervalMs);
        timer.unref?.();
      }
      // What is due already (a node restarted after a while, or with a smaller keep) is pruned at once.
      trigger();
    },
    runOnce,
    async stop(): Promise<void> {
      running = false;
      stopping = true;
      unsubscribe?.();
      unsubscribe = undefined;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await chain;
      stopping = false;
    },
  };
}
