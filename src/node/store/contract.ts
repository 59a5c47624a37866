// The storage contract of a node: one interface that every engine implements (memory for tests and browsers, LMDB
// embedded by default, PostgreSQL for several instances) and that the pipeline, the coordinator and the REST API use.
//
// The rules every engine keeps (the contract test suite checks each of them against each engine):
// - Accepting a message is ONE atomic write: the message, its metadata, children, index and tip entries, and its
//   ledger mutation (inputs spent, outputs created, address balances) land together or not at all.
// - The ledger's state-dependent checks (each input exists and is unspent, the dust rule) run INSIDE that atomic write
//   (`checkLedgerState` in ledger.ts, or the same rule enforced by the database), never as a read before it: of two
//   transactions spending one output, submitted at the same instant to two processes sharing a store, exactly one wins.
//   What depends only on the consumed outputs' contents (amounts balance, signatures, addresses) may be checked before:
//   an output's contents never change once created.
// - A resolved write is durable: on disk (or committed in the database) before the promise resolves, so a 2xx
//   answered after it survives kill -9 and power loss.
// - Nothing is replayed into memory at start: every read goes to the engine, so a store with millions of messages
//   opens at once and several processes see one another's writes.
import type { Message, Output } from "../../model/types.js";

/** Bumped when the layout of stored records changes; an engine refuses to open a store written by a newer version. */
export const STORE_SCHEMA_VERSION = 3;

/** The all-zero message id: the solid entry point every network starts from (as in Hornet and Bee). */
export const ZERO_MESSAGE_ID = "0".repeat(64);

export type LedgerInclusionState = "noTransaction" | "included" | "conflicting";

/** Oldest and youngest cone root index (Hornet's OCRI/YCRI): the milestones that referenced the message's past cone. */
export interface ConeRoots {
  readonly oldest: number;
  readonly youngest: number;
}

/** What a node knows about a stored message besides its bytes (the REST metadata derives from it). */
export interface MessageMetadata {
  /** Milliseconds since the Unix epoch when this node stored the message. */
  readonly arrivalTime: number;
  /** Every parent was known when it was stored; the pipeline stores only solid messages. */
  readonly solid: boolean;
  /** Cone roots computed from its parents when it was stored. */
  readonly coneRoots: ConeRoots;
  /** Set once a milestone references the message. */
  readonly referencedByMilestoneIndex?: number | undefined;
  /** Set when the message carries the milestone of this index (and so references itself). */
  readonly milestoneIndex?: number | undefined;
  /** Set with referencedByMilestoneIndex. */
  readonly ledgerInclusionState?: LedgerInclusionState | undefined;
  /** Only with ledgerInclusionState "conflicting" (Hornet's codes 1–6, 255). */
  readonly conflictReason?: number | undefined;
}

export interface StoredMessage {
  /** The message id, lowercase hex. */
  readonly id: string;
  /** The canonical bytes, nonce included: exactly what was hashed into the id. */
  readonly bytes: Uint8Array;
  readonly message: Message;
}

/** Who spent an output. */
export interface SpentRecord {
  readonly transactionId: string;
  readonly messageId: string;
  /** The milestone that confirmed the spending transaction; absent until then. */
  readonly milestoneIndex?: number | undefined;
}

/** An output of the UTXO ledger. */
export interface OutputRecord {
  /** 68 hex characters: transaction id ‖ u16 LE index. */
  readonly outputId: string;
  readonly transactionId: string;
  readonly outputIndex: number;
  /** The message whose transaction created it (ZERO_MESSAGE_ID for genesis outputs). */
  readonly messageId: string;
  readonly output: Output;
  /** The milestone that confirmed the creating transaction (0 for genesis); absent until then. */
  readonly milestoneIndexBooked?: number | undefined;
  readonly spent?: SpentRecord | undefined;
}

/** The ledger state of one address, over its unspent outputs. */
export interface AddressBalance {
  /** Sum of every unspent output's amount (both output types). */
  readonly balance: number;
  /** Sum of its unspent dust-allowance outputs (SigLockedDustAllowanceOutput). */
  readonly dustAllowance: number;
  /** How many unspent dust outputs (SigLockedSingleOutput below DUST_THRESHOLD) it holds. */
  readonly dustOutputs: number;
}

export interface AddressOutputsQuery {
  /** Only outputs of this type (0 SigLockedSingle, 1 SigLockedDustAllowance). */
  readonly type?: 0 | 1 | undefined;
  /** Append spent outputs after the unspent ones. */
  readonly includeSpent?: boolean | undefined;
  /** At most this many ids. */
  readonly max: number;
}

/** What accepting a transaction does to the ledger. */
export interface LedgerMutation {
  readonly transactionId: string;
  /** The output ids its inputs spend, in input order (errors name `payload.essence.inputs[i]`). */
  readonly consumed: readonly string[];
  /** The outputs it creates, in output order: output i gets the id outputId(transactionId, i). */
  readonly created: readonly Output[];
}

export interface MilestoneRecord {
  readonly index: number;
  /** The message that carries the milestone payload. */
  readonly messageId: string;
  /** Unix seconds, from the milestone payload. */
  readonly timestamp: number;
}

export interface UtxoChanges {
  readonly index: number;
  readonly createdOutputs: readonly string[];
  readonly consumedOutputs: readonly string[];
}

/** A message a milestone references, with the inclusion state the milestone gives it. */
export interface ReferencedMessage {
  readonly messageId: string;
  readonly ledgerInclusionState: LedgerInclusionState;
  readonly conflictReason?: number | undefined;
}

/** What confirming a milestone does, computed by the coordinator from the milestone's past cone. */
export interface MilestoneApplication extends MilestoneRecord {
  /** Every message of its past cone not referenced before, the milestone's own message included (last). */
  readonly referenced: readonly ReferencedMessage[];
  /** Outputs created and consumed by the transactions it includes (its UTXO changes). */
  readonly createdOutputs: readonly string[];
  readonly consumedOutputs: readonly string[];
}

/** One message to store, with everything that must land with it. */
export interface Acceptance extends StoredMessage {
  /** Milliseconds since the Unix epoch. */
  readonly arrivalTime: number;
  readonly coneRoots: ConeRoots;
  /** A transaction on a node whose ledger is on: applied atomically, after checkLedgerState passes in the write. */
  readonly ledger?: LedgerMutation | undefined;
  /** The coordinator's own milestone message: stored and confirmed in the same write. The write fails with
   * MILESTONE_CONFLICT unless `index` is the latest milestone's index + 1 (another instance issued it first). */
  readonly milestone?: MilestoneApplication | undefined;
}

export interface AcceptResult {
  /** False when a message with this id was already stored (nothing was written). */
  readonly stored: boolean;
}

/** An unspent output a new store starts with (genesis). Its transaction id is usually all zeros. */
export interface GenesisOutput {
  readonly outputId: string;
  readonly output: Output;
}

/** A solid entry point: a message this store does not hold (it came before a snapshot) that new messages may still
 * name as a parent, with the milestone index that referenced it. */
export interface EntryPoint {
  readonly messageId: string;
  readonly index: number;
}

/** An unspent output as a snapshot carries it. */
export interface SnapshotOutput {
  /** 68 hex characters. */
  readonly outputId: string;
  /** The message whose transaction created it (ZERO_MESSAGE_ID for genesis outputs). */
  readonly messageId: string;
  /** The milestone that confirmed it; absent when its transaction was accepted but not yet confirmed. */
  readonly milestoneIndexBooked?: number | undefined;
  readonly output: Output;
}

/**
 * The state a new store can start from (Hornet's snapshot, in our terms): the ledger of unspent outputs, the latest
 * milestone, and what new messages may reference. Read in one consistent transaction by `readSnapshot`, written to a
 * file by snapshot.ts, and applied by `open({ snapshot })` to a new store only.
 */
export interface LedgerSnapshot {
  readonly network: string;
  /** Whether the store keeps a UTXO ledger (a store made without genesis keeps none: `outputs` is then empty). */
  readonly ledger: boolean;
  /** The latest milestone; absent when none was issued yet. */
  readonly milestone?: MilestoneRecord | undefined;
  /** The public keys (hex, ascending) that signed the latest milestone; empty when there is none. */
  readonly coordinatorPublicKeys: readonly string[];
  /** The ids new messages may reference: the latest milestone's message and the current tips, with the milestone
   * index that referenced each (the latest milestone's index for a tip not referenced yet). */
  readonly entryPoints: readonly EntryPoint[];
  /** Every unspent output, in output id order. */
  readonly outputs: readonly SnapshotOutput[];
}

/** One bounded step of pruning (see NodeStore.prune). */
export interface PruneStep {
  /** The pruning index after the step: every milestone at or below it, and its cone, is gone. */
  readonly pruningIndex: number;
  /** Messages deleted by this step. */
  readonly messages: number;
  /**
   * Entries a step deleted without deleting their message (an engine that has such): a stale pruning-index entry
   * whose message belongs to another milestone, or part of the children list of a message named as parent very
   * often, taken over several steps. A step that deleted only these made progress all the same. Absent when none.
   */
  readonly entries?: number;
  /** True when the pruning index reached the target (or another instance holds the pruning lock): stop calling. */
  readonly done: boolean;
}

/** What `chrysalis db stats` prints. */
export interface StoreStats {
  readonly engine: string;
  readonly network: string;
  readonly messages: number;
  readonly unspentOutputs: number;
  /** 0 when no milestone was issued yet. */
  readonly latestMilestoneIndex: number;
  readonly pruningIndex: number;
  /** Bytes the data takes (LMDB: pages in use; PostgreSQL: the schema's tables and indexes). */
  readonly bytes: number;
  /** Bytes on disk, free pages included (LMDB's file never shrinks; equal to `bytes` on PostgreSQL). */
  readonly fileBytes: number;
}

export interface StoreOpenOptions {
  /** The network name. A store made for another network refuses to open (STORE_WRONG_NETWORK). */
  readonly network: string;
  /**
   * Applied only when the store is new, and then the ledger is on for good: transactions are checked against it and
   * applied. A store made without genesis keeps no ledger (transactions are checked syntactically only).
   */
  readonly genesis?: readonly GenesisOutput[] | undefined;
  /**
   * Applied only when the store is new, instead of genesis: its outputs become the ledger (on when `snapshot.ledger`),
   * its milestone the latest milestone record (no message stored for it), its entry points the store's solid entry
   * points and first tips, its coordinator keys kept; the pruning index starts at the milestone's index − 1.
   * Its network must equal `network` (else STORE_WRONG_NETWORK, nothing created).
   */
  readonly snapshot?: LedgerSnapshot | undefined;
}

export interface StoreOpenResult {
  /** True when this call created the store (and applied genesis). */
  readonly created: boolean;
  /** Whether the store keeps a UTXO ledger (it was created with genesis). */
  readonly ledger: boolean;
  /** The keys that signed the snapshot's milestone, when the store was made from a snapshot (a coordinator continuing
   * on this store must sign with the same keys). */
  readonly coordinatorPublicKeys?: readonly string[] | undefined;
}

/** What metadataWithLatest reads: each id's metadata, in the order asked (undefined where none is stored), and the
 * latest milestone. */
export interface MetadataWithLatest {
  readonly metadata: (MessageMetadata | undefined)[];
  readonly latest: MilestoneRecord | undefined;
}

/**
 * The smallest number of milestones pruning may keep: a message may reference a parent confirmed up to
 * BELOW_MAX_DEPTH (15) milestones ago, and 5 more leave room for a milestone issued while a submission is checked.
 */
export const MIN_PRUNE_KEEP = 20;

/**
 * The storage of a node. Every method may be asynchronous. Ids are lowercase hex; engines lowercase what they are given.
 * Errors: engines throw NodeError STORE_UNAVAILABLE (503, the engine is unreachable or out of space: retry later;
 * nothing was half-written) and the ledger codes of checkLedgerState (INPUT_NOT_FOUND, INPUT_SPENT, DUST_RULE).
 */
export interface NodeStore {
  /** "memory", "lmdb", "postgres", "upstream", … (for logs and /info). */
  readonly engine: string;
  /** Solid entry points: ids that count as known parents though no message is stored for them, with their milestone
   * index. Default: the zero message id at 0. */
  readonly entryPoints: ReadonlyMap<string, number>;

  /** Creates the store or checks an existing one (network, schema version); applies genesis only when new. */
  open(options: StoreOpenOptions): Promise<StoreOpenResult>;
  /** Flushes and releases the engine once every call made before it has settled (none is left waiting: a write lands
   * whole, a read answers); calls made from then on fail with STORE_UNAVAILABLE. */
  close(): Promise<void>;

  // Messages.
  accept(acceptance: Acceptance): Promise<AcceptResult>;
  get(id: string): Promise<StoredMessage | undefined>;
  has(id: string): Promise<boolean>;
  metadata(id: string): Promise<MessageMetadata | undefined>;
  /**
   * metadata() of each of `ids` and latestMilestone(), read together: what a submission's checks (is it stored, its
   * parents' cones, max depth) and tip selection ask. Optional, for a store across a network: PostgreSQL answers in one
   * statement (one round trip, one snapshot) what were a query each, and the calls made while one is read go together
   * in the next. Without it the node makes the separate calls
   * (metadataWithLatest in store/common.ts).
   */
  metadataWithLatest?(ids: readonly string[]): Promise<MetadataWithLatest>;
  /** Ids of stored messages naming `id` as a parent (at most `max`, oldest first). */
  children(id: string, max: number): Promise<string[]>;
  /** Ids of stored messages whose indexation payload (top level or in a transaction essence) has this index,
   * at most `max`, the newest `max` of them, oldest first. */
  findByIndex(index: Uint8Array, max: number): Promise<string[]>;
  /** Up to `max` distinct current tips, chosen at random among all of them. */
  tips(max: number): Promise<string[]>;

  // The UTXO ledger.
  output(outputId: string): Promise<OutputRecord | undefined>;
  /** Unspent output ids first (oldest first), then spent ones when asked, at most `query.max`. */
  addressOutputs(address: Uint8Array, query: AddressOutputsQuery): Promise<string[]>;
  addressBalance(address: Uint8Array): Promise<AddressBalance>;

  // Milestones.
  milestone(index: number): Promise<MilestoneRecord | undefined>;
  latestMilestone(): Promise<MilestoneRecord | undefined>;
  utxoChanges(index: number): Promise<UtxoChanges | undefined>;

  // Prove-ownership and JWT state shared by every instance on the store.
  /** Records a redeemed nonce until `expiresAt` (ms); true only for the first redemption (atomic insert-if-absent). */
  redeemNonce(nonce: string, expiresAt: number): Promise<boolean>;
  /** Refuses the JWT with this id until `expiresAt` (ms). */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;
  /** A named secret shared by every instance: the stored one, or `create()`'s value stored atomically if none. */
  secret(name: string, create: () => Uint8Array): Promise<Uint8Array>;
  /** Drops redeemed nonces and revocations that expired before `now` (ms). */
  sweep(now: number): Promise<void>;

  // Ageing: pruning, snapshots, statistics and verification.
  /** Every milestone at or below this index has been pruned (0: nothing pruned). */
  pruningIndex(): Promise<number>;
  /**
   * One bounded step of pruning towards `target` (never above latest milestone − MIN_PRUNE_KEEP; the caller decides
   * the target): ONE atomic write that deletes at most `batch` messages of milestone m = pruningIndex + 1, each with
   * its metadata, children entries (as parent and as child), index entries and tip entry; the messages still
   * unreferenced that arrived before m's own message go with them (below max depth for good, never referenced).
   * When none is left, the same kind of write finishes m: its milestone record, its UTXO changes, and the outputs it
   * consumed (output, spent and address records: a pruned spent output is refused as INPUT_NOT_FOUND) are deleted,
   * and the pruning index becomes m. The ledger of unspent outputs and balances is never touched. A crash between
   * steps leaves a consistent store; the next step carries on. Several instances on one store prune once
   * (PostgreSQL: an advisory lock; a step that finds it taken returns done).
   */
  prune(target: number, batch: number): Promise<PruneStep>;
  /**
   * Gives back to the engine the space that pruning (and the churn of tips and balances) freed, where the engine does
   * not reuse it by itself: PostgreSQL's VACUUM of the store's tables, so that a node does not depend on autovacuum
   * to stay bounded. Absent where nothing is needed: LMDB reuses freed pages, the memory engine frees at once.
   */
  reclaim?(): Promise<void>;
  /** The store's state for a snapshot, read in one consistent transaction while writers go on. */
  readSnapshot(): Promise<LedgerSnapshot>;
  /** Counts and sizes, for `chrysalis db stats`. */
  stats(): Promise<StoreStats>;
  /** Bytes the data takes (StoreStats.bytes), cheap enough for a metric scraped every few seconds. */
  bytes(): Promise<number>;
  /**
   * Checks the whole store in one read transaction: every message hashes to its id and has metadata; metadata,
   * children, index and tip entries point to stored messages; every unspent output is in its address's list and
   * the address balances equal their unspent outputs; on a ledger store, the unspent outputs sum to the total supply.
   * Returns undefined when consistent, else one line naming the first inconsistency.
   */
  verify(): Promise<string | undefined>;
}
