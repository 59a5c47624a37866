// Hornet's cone-root rules for a node without gossip: a message's oldest and youngest cone root (the milestones that
// referenced its past cone) decide whether it may be attached to (below max depth) and what a client should do with an
// unreferenced one (promote or reattach). Constants are Hornet's defaults, kept in bytes/limits.ts.
import { toHex } from "../bytes/hex.js";
import { BELOW_MAX_DEPTH, MAX_DELTA_OLDEST_CONE_ROOT, MAX_DELTA_YOUNGEST_CONE_ROOT } from "../bytes/limits.js";
import type { ConeRoots, MessageMetadata, NodeStore } from "./store/contract.js";

/** The roots a message passes on to its children: a referenced message is its own root; otherwise its cone's. */
export function rootsPassedOn(metadata: MessageMetadata): ConeRoots {
  const index = metadata.referencedByMilestoneIndex;
  return index !== undefined ? { oldest: index, youngest: index } : metadata.coneRoots;
}

/**
 * The roots a stored message passes on now. Those it was stored with were fixed at arrival from its parents' roots
 * then; a parent referenced since has moved them on. While the stored ones are young enough for a tip
 * (isLazy says no) they are used as they are; otherwise, for a message not referenced yet, they are worked out again
 * from its parents (one level, a read per parent), so that neither a tip is given up nor a child refused for roots
 * that are out of date.
 */
export async function liveRoots(store: NodeStore, id: string, metadata: MessageMetadata, confirmedIndex: number): Promise<ConeRoots> {
  const roots = rootsPassedOn(metadata);
  if (standing(metadata, roots, confirmedIndex)) return roots;
  const stored = await store.get(id);
  return stored === undefined ? roots : currentConeRoots(store, stored.message.parents, roots);
}

/** liveRoots without a read when none is needed (the usual case, on every parent of every submission): the roots the
 * metadata gives while they stand, undefined when liveRoots must work them out again. */
export function standingRoots(metadata: MessageMetadata, confirmedIndex: number): ConeRoots | undefined {
  const roots = rootsPassedOn(metadata);
  return standing(metadata, roots, confirmedIndex) ? roots : undefined;
}

function standing(metadata: MessageMetadata, roots: ConeRoots, confirmedIndex: number): boolean {
  return metadata.referencedByMilestoneIndex !== undefined || !isLazy(roots.oldest, confirmedIndex);
}

/**
 * True when a tip whose oldest root is `oldest` is too old to hand out (Hornet's MaxDeltaMsgOldestConeRootIndexToCMI,
 * 13): it leaves two milestones of margin before max depth, so a message built on the tip is not refused
 * BELOW_MAX_DEPTH because a milestone came between /tips and the submission.
 */
export function isLazy(oldest: number, confirmedIndex: number): boolean {
  return confirmedIndex - oldest > MAX_DELTA_OLDEST_CONE_ROOT;
}

/** True when a cone whose oldest root is `oldest` fell more than BELOW_MAX_DEPTH milestones behind the confirmed one. */
export function isBelowMaxDepth(oldest: number, confirmedIndex: number): boolean {
  return confirmedIndex - oldest > BELOW_MAX_DEPTH;
}

/** What a client should do with an unreferenced message (Hornet's metadata flags; promotionAdvice gives them). */
export interface PromotionAdvice {
  /** Its cone roots lag: a new message approving it (a promotion) helps a milestone reach it. */
  readonly shouldPromote: boolean;
  /** Its oldest cone root is below max depth: no milestone will reference it, send it again on new tips. */
  readonly shouldReattach: boolean;
}

/**
 * Hornet's advice for an unreferenced solid message (`NODE-API.md` §1.7): reattach once its oldest root is below max
 * depth; promote once its youngest root lags more than 8 or its oldest more than 13 milestones; else neither.
 */
export function promotionAdvice(roots: ConeRoots, confirmedIndex: number): PromotionAdvice {
  if (isBelowMaxDepth(roots.oldest, confirmedIndex)) return { shouldPromote: false, shouldReattach: true };
  const promote = confirmedIndex - roots.youngest > MAX_DELTA_YOUNGEST_CONE_ROOT || confirmedIndex - roots.oldest > MAX_DELTA_OLDEST_CONE_ROOT;
  return { shouldPromote: promote, shouldReattach: false };
}

/**
 * The cone roots of a message with these parents, from what the store holds now: parents referenced since the
 * message was stored count with their milestone (the roots stored with the message were fixed at arrival).
 * Unknown parents (forgotten by a bounded store) are skipped; with none left the stored roots stand.
 */
export async function currentConeRoots(store: NodeStore, parents: readonly Uint8Array[], stored: ConeRoots): Promise<ConeRoots> {
  const ids = parents.map(toHex);
  const metadata = await Promise.all(ids.map((id) => (store.entryPoints.has(id) ? undefined : store.metadata(id))));
  let oldest = Infinity;
  let youngest = -Infinity;
  ids.forEach((id, i) => {
    const entryPoint = store.entryPoints.get(id);
    const m = metadata[i];
    const roots = entryPoint !== undefined ? { oldest: entryPoint, youngest: entryPoint } : m !== undefined ? rootsPassedOn(m) : undefined;
    if (roots === undefined) return;
    oldest = Math.min(oldest, roots.oldest);
    youngest = Math.max(youngest, roots.youngest);
  });
  return oldest === Infinity ? stored : { oldest, youngest };
}
