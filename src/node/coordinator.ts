// The built-in coordinator (Hornet's coordinator plugin, one job): every interval it issues the next milestone, a real
// milestone payload signed by its key(s), referencing the tips, and the node mines, stores and confirms it in one write.
// Confirmation follows white-flag: the unreferenced past cone in post-order, parents first; each transaction included once.
import { compareBytes, concatBytes } from "../bytes/bytes.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { MAX_PARENTS } from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { outputId, transactionId } from "../model/ids.js";
import { milestonePublicKey, signMilestone } from "../model/milestone.js";
import type { MilestonePayload } from "../model/types.js";
import { NodeError } from "./errors.js";
import type { ChrysalisNode, ConfirmedMessage, MilestoneDraft } from "./pipeline.js";
import type { MilestoneRecord } from "./store/contract.js";

export interface CoordinatorOptions {
  /** The Ed25519 seeds (32 bytes each) that sign every milestone; at least one. */
  keys: readonly Uint8Array[];
  /** Milliseconds between milestones. Default 10 000 (Hornet's coordinator default). */
  intervalMs?: number;
  /** The clock, in ms since the epoch (milestone timestamps). Default Date.now. */
  now?: () => number;
  /** Called with the failure of one round; the next round tries again. Default: console.error. */
  onError?: (error: unknown) => void;
}

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

export const DEFAULT_MILESTONE_INTERVAL_MS = 10_000;

/** Conflict reasons of Hornet (NODE-API.md §1.7) the coordinator can give. */
const INPUT_ALREADY_SPENT = 1;
const INPUT_SPENT_IN_THIS_MILESTONE = 2;
const INPUT_NOT_FOUND = 3;

export function createCoordinator(node: ChrysalisNode, options: CoordinatorOptions): Coordinator {
  if (options.keys.length === 0) throw new NodeError("NOT_SUPPORTED", "a coordinator needs at least one key");
  const signers = options.keys
    .map((seed) => ({ seed, publicKey: milestonePublicKey(seed) }))
    .sort((a, b) => compareBytes(a.publicKey, b.publicKey));
  const intervalMs = Math.max(1, options.intervalMs ?? DEFAULT_MILESTONE_INTERVAL_MS);
  const now = options.now ?? Date.now;
  const onError = options.onError ?? ((error: unknown) => console.error("chrysalis coordinator: milestone failed", error));
  const store = node.store;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let chain: Promise<unknown> = Promise.resolve();
  // Aborted by stop(): a milestone being mined then is dropped unwritten.
  let controller = new AbortController();

  // The unreferenced past cone of `parents`, parents before children (white-flag order), each message once.
  async function pastCone(parents: readonly string[]): Promise<{ stored: ConfirmedMessage["stored"]; metadata: ConfirmedMessage["metadata"] }[]> {
    const cone: { stored: ConfirmedMessage["stored"]; metadata: ConfirmedMessage["metadata"] }[] = [];
    const seen = new Set<string>();
    const stack: { id: string; expanded: boolean; entry?: (typeof cone)[number] }[] = [...parents].reverse().map((id) => ({ id, expanded: false }));
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.expanded) {
        stack.pop();
        cone.push(top.entry!);
        continue;
      }
      if (seen.has(top.id) || store.entryPoints.has(top.id)) {
        stack.pop();
        continue;
      }
      seen.add(top.id);
      const metadata = await store.metadata(top.id);
      const stored = metadata === undefined || metadata.referencedByMilestoneIndex !== undefined ? undefined : await store.get(top.id);
      // Referenced already, or forgotten by a bounded store: the walk stops there.
      if (metadata === undefined || stored === undefined) {
        stack.pop();
        continue;
      }
      top.expanded = true;
      top.entry = { stored, metadata };
      const next = stored.message.parents.map(toHex);
      for (let i = next.length - 1; i >= 0; i--) if (!seen.has(next[i]!)) stack.push({ id: next[i]!, expanded: false });
    }
    return cone;
  }

  async function draft(index: number, previous: MilestoneRecord | undefined): Promise<MilestoneDraft> {
    const { ledger } = await node.ready();
    const tips = await node.tips(MAX_PARENTS);
    // The previous milestone is a parent whenever it is still known, so that milestones chain as Hornet's do.
    const ids = new Set(tips);
    if (previous !== undefined && !ids.has(previous.messageId) && (await store.has(previous.messageId))) {
      if (ids.size >= MAX_PARENTS) ids.delete([...ids].pop()!);
      ids.add(previous.messageId);
    }
    const parentIds = [...ids].sort();
    const walked = await pastCone(parentIds);
    const cone: ConfirmedMessage[] = [];
    const includedIds: Uint8Array[] = [];
    const created: string[] = [];
    const consumed: string[] = [];
    const included = new Set<string>();
    for (const { stored, metadata } of walked) {
      const payload = stored.message.payload;
      if (payload?.type !== 0) {
        cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "noTransaction" });
        continue;
      }
      const txId = transactionId(payload);
      let conflictReason: number | undefined;
      if (included.has(txId)) conflictReason = INPUT_SPENT_IN_THIS_MILESTONE;
      else if (ledger) {
        // The ledger took the transaction at acceptance; a reattached copy finds it booked by an earlier milestone.
        const first = await store.output(outputId(txId, 0));
        if (first === undefined) conflictReason = INPUT_NOT_FOUND;
        else if (first.milestoneIndexBooked !== undefined) conflictReason = INPUT_ALREADY_SPENT;
      }
      if (conflictReason !== undefined) {
        cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "conflicting", conflictReason });
        continue;
      }
      included.add(txId);
      includedIds.push(fromHex(stored.id, "messageId", 32));
      payload.essence.inputs.forEach((input) => consumed.push(outputId(input.transactionId, input.transactionOutputIndex)));
      payload.essence.outputs.forEach((_, i) => created.push(outputId(txId, i)));
      cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "included" });
    }
    const seconds = Math.max(Math.floor(now() / 1000), previous?.timestamp ?? 0);
    const unsigned: MilestonePayload = {
      type: 1,
      index,
      timestamp: BigInt(seconds),
      parents: parentIds.map((id) => fromHex(id, "parents", 32)),
      inclusionMerkleProof: merkleRoot(includedIds),
      nextPoWScore: 0,
      nextPoWScoreMilestoneIndex: 0,
      publicKeys: signers.map((s) => s.publicKey),
      signatures: [],
    };
    const payload: MilestonePayload = { ...unsigned, signatures: signers.map((s) => signMilestone(unsigned, s.seed)) };
    return {
      message: { networkId: node.networkId, parents: unsigned.parents, payload, nonce: 0n },
      timestamp: seconds,
      cone,
      createdOutputs: created,
      consumedOutputs: consumed,
    };
  }

  async function round(): Promise<MilestoneRecord | undefined> {
    const previous = await store.latestMilestone();
    const index = (previous?.index ?? 0) + 1;
    try {
      return await node.issueMilestone(await draft(index, previous), { signal: controller.signal });
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

/**
 * The white-flag inclusion Merkle root (TIP-4) over the ids of the messages whose transactions a milestone includes:
 * BLAKE2b-256 with 0x00 before a leaf and 0x01 before two children, split at the largest power of two below the count;
 * an empty list hashes to BLAKE2b-256 of nothing.
 */
export function merkleRoot(ids: readonly Uint8Array[]): Uint8Array {
  if (ids.length === 0) return blake2b256(new Uint8Array(0));
  if (ids.length === 1) return blake2b256(concatBytes([LEAF, ids[0]!]));
  let split = 1;
  while (split * 2 < ids.length) split *= 2;
  return blake2b256(concatBytes([NODE, merkleRoot(ids.slice(0, split)), merkleRoot(ids.slice(split))]));
}

const LEAF = Uint8Array.of(0x00);
const NODE = Uint8Array.of(0x01);
