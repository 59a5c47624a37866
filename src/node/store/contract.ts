// The storage contract of a node: one interface that every engine implements (memory for tests and browsers, LMDB
// embedded by default, PostgreSQL for several instances) and that the node's parts (message processor, confirmation,
// coordinator, pruning, snapshots) and the REST API use.
//
// The rules every engine keeps (the contract test suite checks each of them against each engine):
// - Accepting a message is ONE atomic write: the message, its metadata, children and index entries, its place among
//   the unreferenced messages, and (from the API) its claim on the outputs it spends land together or not at all.
// - The ledger moves at confirmation only (white-flag, PROTOCOL.md §3): confirming a milestone is ONE atomic write of
//   what its walk decided (confirmation.ts): the metadata of every message it references, the outputs its included
//   transactions create and spend, the address balances, its UTXO changes and its record. Only the next index lands
//   (MILESTONE_CONFLICT otherwise), so of instances confirming the same milestone exactly one writes it.
// - A claim is the API's courtesy to a submitter, never the ledger: checked INSIDE the accept write (checkClaim in
//   ledger.ts), so of two transactions spending one output submitted at the same instant to two processes sharing a
//   store, exactly one is accepted; the other is refused INPUT_SPENT. The outputs a claimed transaction would create
//   are kept as pending outputs, so that a submission may spend them before a milestone confirms it (a chained spend,
//   as Hornet takes one). Both go when their transaction is confirmed or found conflicting; both lapse
//   PENDING_CLAIM_MILESTONES milestones after they were made, and pruning deletes the lapsed ones.
// - A resolved write is durable: on disk (or committed in the database) before the promise resolves, so a 2xx
//   answered after it survives kill -9 and power loss.
// - The store keeps what must survive a restart and no more: tips and caches are rebuilt in memory at start by the
//   parts that use them (from `unreferenced`), and every read goes to the engine, so a store with millions of messages
//   opens at once and several processes see one another's writes (PostgreSQL tells them: `watch`).
import { BELOW_MAX_DEPTH } from "../../bytes/limits.js";
import type { Message, Output } from "../../model/types.js";

/** Bumped when the layout of stored records changes; an engine refuses to open a store written by a newer version. */
export const STORE_SCHEMA_VERSION = 4;

/** The all-zero message id: the solid entry point every network starts from (as in Hornet and Bee). */
export const ZERO_MESSAGE_ID = "0".repeat(64);

/**
 * What the referencing milestone's white-flag walk made of a message (Hornet's names): "noTransaction" when it carries no
 * transaction, "included" when its transaction changed the ledger, "conflicting" when the walk refused it
 * (MessageMetadata.conflictReason says why) and the ledger did not move.
 */
export type LedgerInclusionState = "noTransaction" | "included" | "conflicting";

/** Oldest and youngest cone root index (Hornet's OCRI/YCRI): the milestones that referenced the message's past cone. */
export interface ConeRoots {
  /** The lowest milestone index among them (OCRI): max depth and laziness are judged by it. */
  readonly oldest: number;
  /** The highest milestone index among them (YCRI): a message whose youngest root lags is promoted. */
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

/** A message as a store holds it: the bytes its id was hashed from, and their model. */
export interface StoredMessage {
  /** The message id, lowercase hex. */
  readonly id: string;
  /** The canonical bytes, nonce included: exactly what was hashed into the id. */
  readonly bytes: Uint8Array;
  /** The bytes decoded. The engines decode them on the first read of this field only (a raw read never pays for it),
   * so a damaged record throws its codec error there. */
  readonly message: Message;
}

/** Who spent an output. */
export interface SpentRecord {
  /** The spending transaction's id, lowercase hex. */
  readonly transactionId: string;
  /** The message that carries the spending transaction. */
  readonly messageId: string;
  /** The milestone that confirmed the spending transaction (the ledger holds confirmed spends only). */
  readonly milestoneIndex?: number | undefined;
}

/** An output of the UTXO ledger. */
export interface OutputRecord {
  /** 68 hex characters: transaction id ‖ u16 LE index. */
  readonly outputId: string;
  /** The creating transaction's id: the first 64 hex characters of `outputId`. */
  readonly transactionId: string;
  /** Its index among the creating transaction's outputs (0–126): the u16 at the end of `outputId`. */
  readonly outputIndex: number;
  /** The message whose transaction created it (ZERO_MESSAGE_ID for genesis outputs). */
  readonly messageId: string;
  /** The address and amount its transaction gave it; never changes once created. */
  readonly output: Output;
  /** The milestone that confirmed the creating transaction (0 for genesis). The ledger holds confirmed outputs only;
   * the field is optional for snapshots written before the ledger moved at confirmation. */
  readonly milestoneIndexBooked?: number | undefined;
  /** Set once a milestone confirmed a transaction spending it; absent while it is unspent. */
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

/** Which outputs of an address NodeStore.addressOutputs lists (GET /addresses/ed25519/:address/outputs). */
export interface AddressOutputsQuery {
  /** Only outputs of this type (0 SigLockedSingle, 1 SigLockedDustAllowance). */
  readonly type?: 0 | 1 | undefined;
  /** Append spent outputs after the unspent ones. */
  readonly includeSpent?: boolean | undefined;
  /** At most this many ids. */
  readonly max: number;
}

/** What a transaction would do to the ledger: the outputs it spends and the ones it creates. */
export interface LedgerMutation {
  /** The transaction's id (BLAKE2b-256 of its payload), lowercase hex: the created outputs' ids start with it. */
  readonly transactionId: string;
  /** The output ids its inputs spend, in input order (errors name `payload.essence.inputs[i]`). */
  readonly consumed: readonly string[];
  /** The outputs it creates, in output order: output i gets the id outputId(transactionId, i). */
  readonly created: readonly Output[];
}

/**
 * A submitted transaction's claim on the outputs it spends (Acceptance.claim): the API's early refusal of a spend it
 * knows cannot win, decided inside the accept write so that instances sharing a store agree (checkClaim in ledger.ts).
 * Never the ledger: messages from peers carry none, and white-flag decides every spend at confirmation.
 */
export interface SpendClaim {
  /** The claiming transaction's id, lowercase hex: a claim held by the same id is no conflict (a reattachment). */
  readonly transactionId: string;
  /** The output ids its inputs spend, in input order. */
  readonly consumed: readonly string[];
  /** The outputs it creates, in output order (output i gets the id outputId(transactionId, i)): kept as pending
   * outputs while it is pending. */
  readonly created: readonly Output[];
}

/** An output a pending claimed transaction would create (SpendClaim.created), spendable by a later submission. */
export interface PendingOutput {
  /** 68 hex characters: transaction id ‖ u16 LE index, the id it will have in the ledger once confirmed. */
  readonly outputId: string;
  /** The pending transaction that would create it. */
  readonly transactionId: string;
  /** The message carrying the transaction. */
  readonly messageId: string;
  /** The address and amount the pending transaction gives it. */
  readonly output: Output;
  /** The confirmed milestone index when it was recorded: it lapses PENDING_CLAIM_MILESTONES milestones later. */
  readonly index: number;
}

/** A claim as a store holds it, per output id. */
export interface ClaimRecord {
  /** The transaction holding the claim: another transaction spending the output is refused INPUT_SPENT. */
  readonly transactionId: string;
  /** The message carrying that transaction (named in the INPUT_SPENT error). */
  readonly messageId: string;
  /** The confirmed milestone index when the claim was made: it lapses PENDING_CLAIM_MILESTONES milestones later. */
  readonly index: number;
}

/** Milestones after which a claim lapses whatever became of its transaction: by then its message is below max depth
 * (BELOW_MAX_DEPTH), so no honest message attaches to it any more. */
export const PENDING_CLAIM_MILESTONES = BELOW_MAX_DEPTH;

/** A confirmed milestone as a store keeps it until pruning takes it. */
export interface MilestoneRecord {
  /** The milestone index: 1 for a network's first milestone, each next one + 1. */
  readonly index: number;
  /** The message that carries the milestone payload. */
  readonly messageId: string;
  /** Unix seconds, from the milestone payload. */
  readonly timestamp: number;
}

/** What a confirmed milestone did to the ledger (GET /milestones/:index/utxo-changes). */
export interface UtxoChanges {
  /** The milestone's index. */
  readonly index: number;
  /** Ids of the outputs its included transactions created, in walk order. */
  readonly createdOutputs: readonly string[];
  /** Ids of the outputs its included transactions spent, in walk order. */
  readonly consumedOutputs: readonly string[];
}

/** A message a milestone references, with the inclusion state the milestone gives it. */
export interface ReferencedMessage {
  /** The referenced message's id, lowercase hex. */
  readonly messageId: string;
  /** What the walk made of its transaction (becomes MessageMetadata.ledgerInclusionState). */
  readonly ledgerInclusionState: LedgerInclusionState;
  /** Only with "conflicting": Hornet's reason code (CONFLICT in whiteflag.ts: 1–6, 255). */
  readonly conflictReason?: number | undefined;
}

/** An output an included transaction creates. */
export interface CreatedOutput {
  /** 68 hex characters: transaction id ‖ u16 LE index. */
  readonly outputId: string;
  /** The creating transaction's id: the first 64 hex characters of `outputId`. */
  readonly transactionId: string;
  /** Its index among the transaction's outputs (0–126). */
  readonly outputIndex: number;
  /** The message carrying the transaction. */
  readonly messageId: string;
  /** The address and amount the transaction gives it. */
  readonly output: Output;
}

/** An output an included transaction spends, with its contents (for the balances and the address lists). */
export interface ConsumedOutput {
  /** The spent output's id (68 hex characters). */
  readonly outputId: string;
  /** The spent output's address and amount, as the ledger held them: the balances move by them. */
  readonly output: Output;
  /** The spending transaction and its message. */
  readonly transactionId: string;
  /** The message carrying the spending transaction. */
  readonly messageId: string;
}

/** A claim a conflicting transaction held (SpendClaim), released when the milestone finds it conflicting. */
export interface ReleasedClaim {
  /** The output the claim was on. */
  readonly outputId: string;
  /** The conflicting transaction that held it: a claim another transaction holds on the output is left alone. */
  readonly transactionId: string;
}

/**
 * What confirming a milestone does, as its white-flag walk decided it (confirmation.ts) against the ledger the previous
 * milestone left: every engine applies it as it is, in one write.
 */
export interface MilestoneApplication extends MilestoneRecord {
  /** Every message of its past cone not referenced before, in walk order, the milestone's own message included (last). */
  readonly referenced: readonly ReferencedMessage[];
  /** Outputs the included transactions create, in walk order (its UTXO changes' created outputs). An output may be
   * created and spent by the same milestone: it is then in both lists. */
  readonly created: readonly CreatedOutput[];
  /** Outputs the included transactions spend, in walk order (its UTXO changes' consumed outputs). */
  readonly consumed: readonly ConsumedOutput[];
  /** Claims of the transactions it found conflicting (a claim of a spent output goes with the output). */
  readonly released: readonly ReleasedClaim[];
  /** The outputs those conflicting transactions would have created: their pending outputs go (those of included
   * transactions go as they are booked). */
  readonly discarded: readonly string[];
}

/** One message to store, with everything that must land with it. */
export interface Acceptance extends StoredMessage {
  /** Milliseconds since the Unix epoch. */
  readonly arrivalTime: number;
  /** Its cone roots, worked out from its parents when it was checked (they become MessageMetadata.coneRoots). */
  readonly coneRoots: ConeRoots;
  /** A transaction submitted through the API on a node whose ledger is on: its claim is checked and written in the
   * write (checkClaim: INPUT_NOT_FOUND, INPUT_SPENT refuse it, and then nothing is written). */
  readonly claim?: SpendClaim | undefined;
  /** The coordinator's own milestone message: stored and confirmed in the same write. The write fails with
   * MILESTONE_CONFLICT unless `index` is the latest milestone's index + 1 (another instance issued it first). */
  readonly milestone?: MilestoneApplication | undefined;
  /** Its parents' ids, lowercase hex, in the message's order, when the caller has made them already (the message
   * processor always has): a store that keeps them as text (the in-memory one) holds these very strings. */
  readonly parentIds?: readonly string[] | undefined;
}

/** What NodeStore.accept did. */
export interface AcceptResult {
  /** False when a message with this id was already stored (nothing was written). */
  readonly stored: boolean;
}

/** An unspent output a new store starts with (genesis). Its transaction id is usually all zeros. */
export interface GenesisOutput {
  /** 68 hex characters: transaction id ‖ u16 LE index. */
  readonly outputId: string;
  /** The address and amount it holds. Together the genesis outputs should hold the total supply: verify reports a
   * ledger that does not sum to it. */
  readonly output: Output;
}

/** A solid entry point: a message this store does not hold (it came before a snapshot) that new messages may still
 * name as a parent, with the milestone index that referenced it. */
export interface EntryPoint {
  /** The id a new message may name as a parent, lowercase hex. */
  readonly messageId: string;
  /** The milestone that referenced it: its cone root for the children (max depth is judged from it). */
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
  /** The output's address and amount. */
  readonly output: Output;
}

/**
 * The state a new store can start from (Hornet's snapshot, in our terms): the ledger of unspent outputs, the latest
 * milestone, and what new messages may reference. Read in one consistent transaction by `readSnapshot`, written to a
 * file by snapshot.ts, and applied by `open({ snapshot })` to a new store only.
 */
export interface LedgerSnapshot {
  /** The network name of the store it was read from: a store for another network refuses it (STORE_WRONG_NETWORK). */
  readonly network: string;
  /** Whether the store keeps a UTXO ledger (a store made without genesis keeps none: `outputs` is then empty). */
  readonly ledger: boolean;
  /** The latest milestone; absent when none was issued yet. */
  readonly milestone?: MilestoneRecord | undefined;
  /** The public keys (hex, ascending) that signed the latest milestone; empty when there is none. */
  readonly coordinatorPublicKeys: readonly string[];
  /** The ids new messages may reference without their past: every message the last BELOW_MAX_DEPTH milestones
   * referenced (the latest milestone's message among them), with the milestone index that referenced each, so that
   * a message naming a recent one is solid on a node started from the snapshot. */
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
  /** The engine's name (NodeStore.engine). */
  readonly engine: string;
  /** The network name the store was made for. */
  readonly network: string;
  /** Messages stored now (solid entry points have none and are not counted). */
  readonly messages: number;
  /** Unspent outputs in the ledger (0 on a store that keeps none). */
  readonly unspentOutputs: number;
  /** 0 when no milestone was issued yet. */
  readonly latestMilestoneIndex: number;
  /** Every milestone at or below it is pruned (NodeStore.pruningIndex; 0: nothing pruned). */
  readonly pruningIndex: number;
  /** Bytes the data takes (LMDB: pages in use; PostgreSQL: the schema's tables and indexes). */
  readonly bytes: number;
  /** Bytes on disk, free pages included (LMDB's file never shrinks; equal to `bytes` on PostgreSQL). */
  readonly fileBytes: number;
}

/** What NodeStore.open creates a store with, or checks an existing one against. */
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
   * points, its coordinator keys kept; the pruning index starts at the milestone's index − 1.
   * Its network must equal `network` (else STORE_WRONG_NETWORK, nothing created).
   */
  readonly snapshot?: LedgerSnapshot | undefined;
}

/** What NodeStore.open found or made. */
export interface StoreOpenResult {
  /** True when this call created the store (and applied genesis). */
  readonly created: boolean;
  /** Whether the store keeps a UTXO ledger (it was created with genesis). */
  readonly ledger: boolean;
  /** The keys that signed the snapshot's milestone, when the store was made from a snapshot (a coordinator continuing
   * on this store must sign with the same keys). */
  readonly coordinatorPublicKeys?: readonly string[] | undefined;
}

/** What another instance sharing the store wrote (NodeStore.watch): a message it stored, a milestone it confirmed. */
export type StoreChange =
  | {
      /** Another instance stored a message: this instance's Tangle, tips and events take it in. */
      readonly type: "message";
      /** The stored message's id, lowercase hex. */
      readonly id: string;
    }
  | {
      /** Another instance confirmed a milestone: this instance's confirmation catches up with it. */
      readonly type: "milestone";
      /** The confirmed milestone's index, the store's latest. */
      readonly index: number;
    };

/** What metadataWithLatest reads: each id's metadata, in the order asked (undefined where none is stored), and the
 * latest milestone. */
export interface MetadataWithLatest {
  /** The metadata of each id asked, in its order; undefined where no message of that id is stored. */
  readonly metadata: (MessageMetadata | undefined)[];
  /** The latest milestone read in the same snapshot; undefined before the first milestone. */
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
 * nothing was half-written), the claim codes of checkClaim (INPUT_NOT_FOUND, INPUT_SPENT) and MILESTONE_CONFLICT.
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
  /**
   * Stores one message with everything that lands with it (Acceptance) in ONE atomic write, and answers `stored: false`
   * with nothing written when its id is stored already. Refused with nothing written: the claim's INPUT_NOT_FOUND or
   * INPUT_SPENT, and MILESTONE_CONFLICT for a coordinator's milestone whose index is not the next.
   */
  accept(acceptance: Acceptance): Promise<AcceptResult>;
  /** The stored message of this id; undefined when none is stored (never stored, pruned, or forgotten by a bounded
   * memory store: solid entry points have none). */
  get(id: string): Promise<StoredMessage | undefined>;
  /** Whether a message of this id is stored; a solid entry point is not (see entryPoints). */
  has(id: string): Promise<boolean>;
  /** What the node knows of a stored message besides its bytes; undefined when none of this id is stored. */
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
  /** Ids of the newest `max` messages no milestone references yet, oldest first: what tip selection and the milestone
   * tracker rebuild themselves from at start. */
  unreferenced(max: number): Promise<string[]>;
  /** The claim a submitted transaction holds on this output (SpendClaim), if any, lapsed or not. */
  claim(outputId: string): Promise<ClaimRecord | undefined>;
  /** The pending output of this id (SpendClaim.created), if any, lapsed or not. */
  pendingOutput(outputId: string): Promise<PendingOutput | undefined>;
  /**
   * Calls `listener` for each message another instance sharing the store stores, and each milestone it confirms,
   * after its write committed (PostgreSQL: LISTEN/NOTIFY), until the returned function is called. Absent where no other
   * process writes (memory, LMDB: one node per directory).
   */
  watch?(listener: (change: StoreChange) => void): () => void;

  // The UTXO ledger.
  /** The ledger's record of a confirmed output, spent or not; undefined when the ledger holds none of this id (not
   * confirmed yet, never created, or spent and then pruned). Pending outputs are read with pendingOutput. */
  output(outputId: string): Promise<OutputRecord | undefined>;
  /** Unspent output ids first (oldest first), then spent ones when asked, at most `query.max`. */
  addressOutputs(address: Uint8Array, query: AddressOutputsQuery): Promise<string[]>;
  /** The confirmed ledger state of the address (its 32 Ed25519 address bytes) over its unspent outputs; all zeros for an
   * address that holds none. */
  addressBalance(address: Uint8Array): Promise<AddressBalance>;

  // Milestones.
  /**
   * Confirms a milestone whose message is stored already (a follower's, the message came from a peer): one atomic
   * write of the application (MilestoneApplication), refused with MILESTONE_CONFLICT unless its index is the latest
   * milestone's + 1 (another instance confirmed it first: nothing is written then).
   */
  confirmMilestone(application: MilestoneApplication): Promise<void>;
  /** The record of the milestone of this index; undefined when it is not confirmed yet or was pruned (at or below
   * pruningIndex). */
  milestone(index: number): Promise<MilestoneRecord | undefined>;
  /** The record of the latest confirmed milestone, whose index is the node's confirmed milestone index; undefined
   * before the first. */
  latestMilestone(): Promise<MilestoneRecord | undefined>;
  /** The outputs the milestone of this index created and spent; undefined when it is not confirmed yet or was pruned. */
  utxoChanges(index: number): Promise<UtxoChanges | undefined>;

  // Prove-ownership and JWT state shared by every instance on the store.
  /** Records a redeemed nonce until `expiresAt` (ms); true only for the first redemption (atomic insert-if-absent). */
  redeemNonce(nonce: string, expiresAt: number): Promise<boolean>;
  /** Refuses the JWT with this id until `expiresAt` (ms). */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  /** True while a revocation of the JWT with this id (revokeToken) is kept: until a sweep after its expiry drops it,
   * when the token has expired anyway. */
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
   * its metadata, children entries (as parent and as child) and index entries; the messages still
   * unreferenced that arrived before m's own message go with them (below max depth for good, never referenced).
   * When none is left, the same kind of write finishes m: its milestone record, its UTXO changes, and the outputs it
   * consumed (output, spent and address records: a pruned spent output is refused as INPUT_NOT_FOUND) are deleted,
   * and the pruning index becomes m. Before that, steps delete (at most `batch` a step) the claims and pending outputs
   * made at milestone index m or below: lapsed for good, since m is at least MIN_PRUNE_KEEP below the latest. The ledger of unspent outputs and balances is never touched. A crash between
   * steps leaves a consistent store; the next step carries on. Several instances on one store prune once
   * (PostgreSQL: an advisory lock; a step that finds it taken returns done).
   */
  prune(target: number, batch: number): Promise<PruneStep>;
  /**
   * Gives back to the engine the space that pruning (and the churn of claims and balances) freed, where the engine does
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
   * children, index and unreferenced entries point to stored messages; every output is booked by a milestone and
   * every spend confirmed by one; no claim is on a spent output and no pending output is booked; every unspent output
   * is in its address's list and the address balances equal their unspent outputs; on a ledger store, the unspent
   * outputs sum to the total supply.
   * Returns undefined when consistent, else one line naming the first inconsistency.
   */
  verify(): Promise<string | undefined>;
}
