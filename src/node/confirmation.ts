// Confirmation (one job): applying a milestone. Its white-flag walk (whiteflag.ts) decides what it references and
// what its transactions do to the ledger; one store write applies that (the coordinator's milestone stored with it, a
// follower's already stored); then the Tangle, tip selection and the node's events learn it. The coordinator and a
// follower of another coordinator confirm through the same part, so every node's ledger is the same.
import { BoundedMap } from "../bytes/bounded-map.js";
import { equalBytes } from "../bytes/bytes.js";
import { toHex } from "../bytes/hex.js";
import type { MilestonePayload } from "../model/types.js";
import { NodeError } from "./errors.js";
import type { NodeEvents } from "./events.js";
import type { MessageMetadata, MilestoneApplication, MilestoneRecord, NodeStore, StoredMessage } from "./store/contract.js";
import type { Tangle } from "./tangle.js";
import type { TipSelector } from "./tipselect.js";
import { whiteFlag, type WalkedMessage, type WhiteFlagResult } from "./whiteflag.js";
import { transactionId } from "../model/ids.js";

/** Message ids whose transactions' signatures the API verified, remembered so that white-flag does not verify them
 * again (the outputs they spend cannot change): bounded in two generations (a BoundedMap), so that the newest half is
 * always kept and forgetting costs nothing per insert (a Set's oldest, at 100,000, is found past every hole left). */
const MAX_VERIFIED = 100_000;

/** The parts Confirmation reads, writes and tells (createNode wires them). */
export interface ConfirmationOptions {
  /** The cone and ledger are read from it; each milestone is confirmed in it in one write. */
  readonly store: NodeStore;
  /** Spares the walk reads of messages referenced already; learns each milestone's references and index. */
  readonly tangle: Tangle;
  /** Re-scored at each confirmed milestone; undefined on a gateway. */
  readonly tips: TipSelector | undefined;
  /** Where each milestone's referenced messages, outputs, transactions and the milestone itself are announced. */
  readonly events: NodeEvents;
  /** Whether the store keeps a ledger (StoreOpenResult.ledger, known once it opened). */
  readonly ledger: () => boolean;
  /** Tells the other parts that a message is stored (the message processor's `stored`): the coordinator's milestone
   * message is stored by confirmation's own write. */
  readonly stored: (stored: StoredMessage, metadata: MessageMetadata) => void;
}

/** A milestone message with its payload, as the store holds it. */
export type MilestoneMessage = StoredMessage & {
  /** The message, known to carry a milestone payload. */
  readonly message: StoredMessage["message"] & {
    /** The milestone payload: its index, timestamp, inclusion Merkle root and signatures. */
    readonly payload: MilestonePayload;
  };
};

/**
 * White-flag confirmation, one milestone at a time in index order: walks a milestone's cone, applies it to the store in
 * one write, and tells the Tangle, tip selection and the events. Keeps the node's latest seen (LMI) and confirmed (CMI)
 * milestone indexes, and so whether it is synced.
 */
export class Confirmation {
  readonly #store: NodeStore;
  readonly #tangle: Tangle;
  readonly #tips: TipSelector | undefined;
  readonly #events: NodeEvents;
  readonly #ledger: () => boolean;
  readonly #stored: (stored: StoredMessage, metadata: MessageMetadata) => void;
  readonly #verified = new BoundedMap<string, true>(MAX_VERIFIED);
  #latest: MilestoneRecord | undefined;
  /** The highest milestone index this node has seen signed (Hornet's LMI), confirmed or not. */
  #seen = 0;
  /** What its peers' heartbeats announce (unverified: it sways the health flag only, never tip selection). */
  #heard = 0;
  /** The highest milestone whose events this process emitted (another instance's are announced when it hears of them:
   * a read of the store that moved the confirmed index on announces nothing). */
  #announced = 0;
  #loaded = false;
  /** One confirmation at a time, in index order. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: ConfirmationOptions) {
    this.#store = options.store;
    this.#tangle = options.tangle;
    this.#tips = options.tips;
    this.#events = options.events;
    this.#ledger = options.ledger;
    this.#stored = options.stored;
  }

  /** Reads the latest confirmed milestone from the store (at start, and when another instance may have moved on). */
  async load(): Promise<MilestoneRecord | undefined> {
    const latest = await this.#store.latestMilestone();
    if (latest !== undefined && (this.#latest === undefined || latest.index > this.#latest.index)) {
      this.#latest = latest;
      this.#tangle.confirm(latest.index);
    }
    // What the store held when the node started was announced before it: events start after it.
    if (!this.#loaded) this.#announced = this.confirmedIndex;
    this.#loaded = true;
    return this.#latest;
  }

  /** The latest confirmed milestone (Hornet's CMI and its timestamp). */
  get latest(): MilestoneRecord | undefined {
    return this.#latest;
  }

  /** The latest confirmed milestone's index (Hornet's CMI); 0 before the first. */
  get confirmedIndex(): number {
    return this.#latest?.index ?? 0;
  }

  /** The highest milestone index seen (Hornet's LMI): at least the confirmed one. */
  get latestIndex(): number {
    return Math.max(this.#seen, this.confirmedIndex);
  }

  /** A valid milestone of this index was seen (stored or announced by a peer). */
  saw(index: number): void {
    if (index > this.#seen) this.#seen = index;
  }

  /** Hornet's "almost synced": the confirmed index at most 2 behind the latest seen. */
  get synced(): boolean {
    return this.confirmedIndex >= this.latestIndex - 2;
  }

  /** The highest latest milestone index the node's peers announce in their heartbeats now (0 without peers; Infinity
   * while a node that follows its peers has heard none). The network part leaves out a claim that no verified
   * milestone has borne out for 10 s, so that no peer holds the node's health down by announcing what does not exist. */
  heard(index: number): void {
    this.#heard = index;
  }

  /** Synced, and not behind what its peers announce: what /api/v1/info's isHealthy reports (with the age rule). */
  get caughtUp(): boolean {
    return this.synced && this.confirmedIndex >= this.#heard - 2;
  }

  /** A transaction whose signatures the API checked against the outputs it spends. */
  verified(messageId: string): void {
    this.#verified.set(messageId, true);
  }

  /** The white-flag walk of a milestone with these parents, against the ledger as confirmed now. */
  compute(parents: readonly string[]): Promise<WhiteFlagResult> {
    return whiteFlag(this.#store, parents, {
      ledger: this.#ledger(),
      verified: (id) => this.#verified.get(id) === true,
      referenced: (id) => this.#tangle.get(id)?.referenced !== undefined,
    });
  }

  /**
   * The coordinator's milestone: stores its message and confirms it in one write (MILESTONE_CONFLICT when another
   * instance confirmed this index first: nothing is written), then announces it.
   */
  issue(stored: MilestoneMessage, walk: WhiteFlagResult, arrivalTime: number, roots: MessageMetadata["coneRoots"]): Promise<MilestoneRecord> {
    return this.#serially(async () => {
      const application = applicationOf(stored, walk);
      const { stored: written } = await this.#store.accept({ ...stored, arrivalTime, coneRoots: roots, milestone: application });
      if (!written) throw new NodeError("MILESTONE_CONFLICT", `milestone ${application.index} was issued by another instance`);
      const metadata: MessageMetadata = { arrivalTime, solid: true, coneRoots: roots };
      this.#stored(stored, metadata);
      return this.#confirmed(stored, metadata, walk, application);
    });
  }

  /**
   * A milestone whose message is stored (a follower's): walks its cone, checks the walk's Merkle root against the one
   * the milestone carries (a mismatch means this node's ledger or Tangle differs from the coordinator's: nothing is
   * written), confirms it and announces it. The caller makes sure its index is the next one and its cone is solid.
   */
  confirmStored(stored: MilestoneMessage): Promise<MilestoneRecord> {
    return this.#serially(async () => {
      const walk = await this.compute(stored.message.parents.map(toHex));
      if (!equalBytes(walk.merkleRoot, stored.message.payload.inclusionMerkleProof)) {
        throw new NodeError("STORE_CORRUPT", `milestone ${stored.message.payload.index}: the white-flag walk gives the inclusion Merkle root ${toHex(walk.merkleRoot)}, the milestone carries ${toHex(stored.message.payload.inclusionMerkleProof)}`);
      }
      const application = applicationOf(stored, walk);
      await this.#store.confirmMilestone(application);
      const metadata = (await this.#store.metadata(stored.id)) ?? { arrivalTime: Date.now(), solid: true, coneRoots: { oldest: 0, youngest: 0 } };
      return this.#confirmed(stored, metadata, walk, application);
    });
  }

  /** Another instance on the store confirmed milestones up to `index`: each is read back and announced here too. */
  async external(index: number): Promise<void> {
    await this.#serially(async () => {
      for (let next = this.#announced + 1; next <= index; next++) {
        const record = await this.#store.milestone(next);
        if (record === undefined) break;
        const stored = await this.#store.get(record.messageId);
        const metadata = await this.#store.metadata(record.messageId);
        if (stored === undefined || metadata === undefined || stored.message.payload?.type !== 1) {
          // A snapshot's milestone has no message: nothing to announce but the index.
          this.#moved(record, []);
          continue;
        }
        const cone = await referencedCone(this.#store, stored, next);
        await this.#announce(stored as MilestoneMessage, metadata, record, cone);
      }
    });
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#chain.then(work);
    this.#chain = result.catch(() => undefined);
    return result;
  }

  /** After the write: the node's state and its events. */
  async #confirmed(stored: MilestoneMessage, metadata: MessageMetadata, walk: WhiteFlagResult, application: MilestoneApplication): Promise<MilestoneRecord> {
    const record: MilestoneRecord = { index: application.index, messageId: application.messageId, timestamp: application.timestamp };
    await this.#announce(stored, metadata, record, walk.cone);
    return record;
  }

  #moved(record: MilestoneRecord, referenced: readonly string[]): void {
    if (this.#latest === undefined || record.index > this.#latest.index) this.#latest = record;
    if (record.index > this.#announced) this.#announced = record.index;
    this.saw(record.index);
    this.#tangle.reference(referenced, record.index);
    this.#tangle.confirm(record.index);
    this.#tips?.rescore();
  }

  /** The milestone's events, in the order NodeEvent gives; the outputs are read back only when someone listens. */
  async #announce(stored: MilestoneMessage, metadata: MessageMetadata, record: MilestoneRecord, cone: readonly WalkedMessage[]): Promise<void> {
    const index = record.index;
    this.#moved(record, [...cone.map((c) => c.messageId), stored.id]);
    const events = this.#events;
    const confirmed = (m: MessageMetadata, c: Pick<WalkedMessage, "ledgerInclusionState" | "conflictReason">): MessageMetadata => ({
      ...m,
      referencedByMilestoneIndex: index,
      ledgerInclusionState: c.ledgerInclusionState,
      conflictReason: c.conflictReason,
    });
    for (const c of cone) events.emit({ type: "referenced", stored: c.stored, metadata: confirmed(c.metadata, c) });
    events.emit({ type: "referenced", stored, metadata: { ...confirmed(metadata, { ledgerInclusionState: "noTransaction", conflictReason: undefined }), milestoneIndex: index } });
    if (!events.listened) return;
    const changes = await this.#store.utxoChanges(index).catch(() => undefined);
    const ids = changes === undefined ? [] : [...changes.createdOutputs, ...changes.consumedOutputs];
    const outputs = await Promise.all(ids.map((id) => this.#store.output(id).catch(() => undefined)));
    for (const output of outputs) if (output !== undefined) events.emit({ type: "output", output, milestoneIndex: index });
    for (const c of cone) {
      const payload = c.stored.message.payload;
      if (c.ledgerInclusionState === "included" && payload?.type === 0) events.emit({ type: "transaction", transactionId: transactionId(payload), stored: c.stored, milestoneIndex: index });
    }
    events.emit({ type: "milestone", milestone: record, payload: stored.message.payload });
  }
}

/** The store write of a milestone from its walk: the cone in walk order, then the milestone's own message. */
export function applicationOf(stored: MilestoneMessage, walk: WhiteFlagResult): MilestoneApplication {
  const payload = stored.message.payload;
  return {
    index: payload.index,
    messageId: stored.id,
    timestamp: Number(payload.timestamp),
    referenced: [
      ...walk.cone.map(({ messageId, ledgerInclusionState, conflictReason }) => ({ messageId, ledgerInclusionState, conflictReason })),
      { messageId: stored.id, ledgerInclusionState: "noTransaction" as const },
    ],
    created: walk.created,
    consumed: walk.consumed,
    released: walk.released,
    discarded: walk.discarded,
  };
}

/** The messages milestone `index` referenced (another instance confirmed it), read back from their metadata, parents
 * first: what its events announce. */
async function referencedCone(store: NodeStore, milestone: StoredMessage, index: number): Promise<WalkedMessage[]> {
  const out: WalkedMessage[] = [];
  const seen = new Set<string>([milestone.id]);
  let frontier = milestone.message.parents.map(toHex);
  while (frontier.length > 0) {
    const ids = frontier.filter((id) => !seen.has(id) && !store.entryPoints.has(id));
    for (const id of ids) seen.add(id);
    const [metadata, messages] = await Promise.all([Promise.all(ids.map((id) => store.metadata(id))), Promise.all(ids.map((id) => store.get(id)))]);
    const next: string[] = [];
    ids.forEach((id, i) => {
      const m = metadata[i];
      const s = messages[i];
      if (m === undefined || s === undefined || m.referencedByMilestoneIndex !== index) return;
      out.push({ messageId: id, stored: s, metadata: m, ledgerInclusionState: m.ledgerInclusionState ?? "noTransaction", conflictReason: m.conflictReason });
      for (const p of s.message.parents) next.push(toHex(p));
    });
    frontier = next;
  }
  return out.reverse();
}
