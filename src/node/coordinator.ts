// The built-in coordinator (Hornet's coordinator plugin, one job): every interval it issues the next milestone, a real
// milestone payload signed by its key(s). It picks what to reference (every message no other references, merged by
// checkpoints when they are more than a milestone's parents hold), asks confirmation for the white-flag walk whose
// Merkle root the payload carries, signs, and hands the milestone to the node, which mines, stores and confirms it.
import { compareBytes } from "../bytes/bytes.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { BELOW_MAX_DEPTH, MAX_PARENTS } from "../bytes/limits.js";
import { milestonePublicKey, signMilestone } from "../model/milestone.js";
import type { MilestonePayload } from "../model/types.js";
import { NodeError } from "./errors.js";
import type { ChrysalisNode } from "./pipeline.js";
import type { MilestoneRecord } from "./store/contract.js";

export { merkleRoot } from "./whiteflag.js";

/** The coordinator's keys, rhythm and clock. */
export interface CoordinatorOptions {
  /** The Ed25519 seeds (32 bytes each) that sign every milestone; at least one. */
  keys: readonly Uint8Array[];
  /** Milliseconds between milestones. Default 10 000 (Hornet's coordinator default). */
  intervalMs?: number;
  /** The clock, in ms since the epoch (milestone timestamps). Default Date.now. */
  now?: () => number;
  /** Called with the failure of one round; the next round tries again. Default: console.error. */
  onError?: (error: unknown) => void;
  /** Most checkpoints issued before one milestone (each merges up to 7 more messages). Default 16. */
  maxCheckpoints?: number;
}

/** A running coordinator: issues the next milestone of its node every interval. */
export interface Coordinator {
  /** The public keys milestones are signed with, lowercase hex, ascending (as they appear in the payload). */
  readonly publicKeys: readonly string[];
  /** Issues a milestone at once, then one every interval, until stop(). */
  start(): void;
  /** One round now (after any round in flight): the milestone issued, or undefined when another instance sharing the
   * store issued this index first. */
  issue(): Promise<MilestoneRecord | undefined>;
  /** Stops the timer and waits for a round in flight. */
  stop(): Promise<void>;
}

/** Milliseconds between milestones unless CoordinatorOptions.intervalMs says otherwise (Hornet's coordinator default). */
export const DEFAULT_MILESTONE_INTERVAL_MS = 10_000;
const DEFAULT_MAX_CHECKPOINTS = 16;

/**
 * A coordinator for `node`, not started: each round references every message no other references (checkpoints merging
 * them when they are too many), signs the milestone with every key, and has the node mine, store and confirm it. Throws
 * NOT_SUPPORTED without a key.
 */
export function createCoordinator(node: ChrysalisNode, options: CoordinatorOptions): Coordinator {
  if (options.keys.length === 0) throw new NodeError("NOT_SUPPORTED", "a coordinator needs at least one key");
  const signers = options.keys
    .map((seed) => ({ seed, publicKey: milestonePublicKey(seed) }))
    .sort((a, b) => compareBytes(a.publicKey, b.publicKey));
  const intervalMs = Math.max(1, options.intervalMs ?? DEFAULT_MILESTONE_INTERVAL_MS);
  const maxCheckpoints = Math.max(0, options.maxCheckpoints ?? DEFAULT_MAX_CHECKPOINTS);
  const now = options.now ?? Date.now;
  const onError = options.onError ?? ((error: unknown) => console.error("chrysalis coordinator: milestone failed", error));
  const { store } = node;
  const { tangle, confirmation } = node.parts;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let chain: Promise<unknown> = Promise.resolve();
  // Aborted by stop(): a milestone being mined then is dropped unwritten.
  let controller = new AbortController();

  /**
   * The milestone's parents: the previous milestone's message (so that milestones chain, as Hornet's do) and every
   * message no other references yet, oldest first, skipping those below max depth (Hornet's selector ignores them).
   * When they are more than the parents hold, checkpoints (messages without payload, each approving up to 7 of them
   * and the checkpoint before) merge them first, as Hornet's coordinator does between milestones.
   */
  async function parentsFor(previous: MilestoneRecord | undefined, signal: AbortSignal): Promise<string[]> {
    const fixed: string[] = [];
    if (previous !== undefined && (tangle.knows(previous.messageId) || (await store.has(previous.messageId)))) fixed.push(previous.messageId);
    const confirmed = confirmation.confirmedIndex;
    const open = tangle
      .childless()
      .filter((m) => !fixed.includes(m.id) && confirmed - m.roots.oldest <= BELOW_MAX_DEPTH)
      .map((m) => m.id);
    let checkpoint: string | undefined;
    for (let made = 0; open.length > MAX_PARENTS - fixed.length - (checkpoint === undefined ? 0 : 1) && made < maxCheckpoints; made++) {
      const approved = open.splice(0, MAX_PARENTS - (checkpoint === undefined ? 0 : 1));
      if (checkpoint !== undefined) approved.push(checkpoint);
      checkpoint = await node.issueCheckpoint(approved, { signal });
    }
    const ids = [...fixed, ...(checkpoint === undefined ? [] : [checkpoint]), ...open].slice(0, MAX_PARENTS);
    // Nothing to reference at all (a new network): the solid entry points, as a genesis milestone has them.
    if (ids.length === 0) ids.push(...[...store.entryPoints.keys()].slice(0, MAX_PARENTS));
    return [...new Set(ids)].sort();
  }

  async function round(): Promise<MilestoneRecord | undefined> {
    await node.ready();
    const previous = await confirmation.load();
    const index = (previous?.index ?? 0) + 1;
    const signal = controller.signal;
    const parentIds = await parentsFor(previous, signal);
    const walk = await confirmation.compute(parentIds);
    const seconds = Math.max(Math.floor(now() / 1000), previous?.timestamp ?? 0);
    const parents = parentIds.map((id) => fromHex(id, "parents", 32));
    const unsigned: MilestonePayload = {
      type: 1,
      index,
      timestamp: BigInt(seconds),
      parents,
      inclusionMerkleProof: walk.merkleRoot,
      nextPoWScore: 0,
      nextPoWScoreMilestoneIndex: 0,
      publicKeys: signers.map((s) => s.publicKey),
      signatures: [],
    };
    const payload: MilestonePayload = { ...unsigned, signatures: signers.map((s) => signMilestone(unsigned, s.seed)) };
    try {
      return await node.issueMilestone({ message: { networkId: node.networkId, parents, payload, nonce: 0n }, walk }, { signal });
    } catch (error) {
      // Another instance on the same store issued this index first: its milestone stands, ours is dropped unwritten.
      if (error instanceof NodeError && error.code === "MILESTONE_CONFLICT") return undefined;
      throw error;
    }
  }

  function issue(): Promise<MilestoneRecord | undefined> {
    const result = chain.then(round);
    chain = result.catch(() => undefined);
    return result;
  }

  function schedule(delay: number): void {
    if (!running) return;
    timer = setTimeout(() => {
      const started = Date.now();
      issue()
        .catch((error: unknown) => {
          if (running) onError(error);
        })
        .finally(() => schedule(Math.max(0, intervalMs - (Date.now() - started))));
    }, delay);
  }

  return {
    publicKeys: signers.map((s) => toHex(s.publicKey)),
    start(): void {
      if (running) return;
      running = true;
      if (controller.signal.aborted) controller = new AbortController();
      schedule(0);
    },
    issue,
    async stop(): Promise<void> {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      controller.abort();
      await chain;
    },
  };
}
