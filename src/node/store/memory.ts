// The memory engine of the storage contract: maps in one process, for tests, browsers and `serve --in-memory`, and the
// reference the other engines are compared with. Every write is synchronous, so a check and its write are one step.
// Bounded: past `maxMessages` the oldest messages are forgotten (the ledger and milestones are kept). Pruning, snapshots
// and verification follow the rules every engine keeps (contract.ts, NodeStore.prune/readSnapshot/verify).
import { ArrivalOrder } from "../../bytes/bounded-map.js";
import { toHex } from "../../bytes/hex.js";
import { TOTAL_SUPPLY } from "../../bytes/limits.js";
import { messageId as hashMessageId, parseOutputId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { ProtocolError } from "../../bytes/errors.js";
import { BELOW_MAX_DEPTH } from "../../bytes/limits.js";
import { addBalance, balanceDeltas, checkClaim, EMPTY_BALANCE, isDustOutput, milestoneDeltas, pendingOutputsOf, type BalanceDelta } from "../ledger.js";
import {
  ZERO_MESSAGE_ID,
  type Acceptance,
  type ClaimRecord,
  type MilestoneApplication,
  type PendingOutput,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type EntryPoint,
  type LedgerSnapshot,
  type MessageMetadata,
  type MilestoneRecord,
  type NodeStore,
  type OutputRecord,
  type PruneStep,
  type StoredMessage,
  type StoreStats,
  type StoreOpenOptions,
  type StoreOpenResult,
  type UtxoChanges,
} from "./contract.js";
import { genesisRecords, indexesOf, storeClosed, storedMessage } from "./common.js";

/** The bounds and solid entry points of a MemoryStore. */
export interface MemoryStoreOptions {
  /** Solid entry points (ids that count as known parents). Default: the all-zero message id. */
  entryPoints?: string[];
  /** Most messages kept; past it the oldest are forgotten. Default 100,000. */
  maxMessages?: number;
  /** Most ids remembered per index and children per message. Default 1000 (the newest). */
  maxPerIndex?: number;
}

interface Entry {
  /** Its bytes, the model decoded from them on first read (storedMessage): a model per message held (its parents' and
   * payload's byte views, its bigints) was most of what 100,000 held messages gave the garbage collector to trace. */
  readonly stored: StoredMessage;
  /** Its parents' ids and its indexes, in hex: the keys of its children and index entries, for when it is forgotten. */
  readonly parentKeys: readonly string[];
  readonly indexKeys: readonly string[];
  metadata: MessageMetadata;
  /** Arrival order: 1 for the first message this store held. */
  readonly seq: number;
  /** Set when the store forgets it (#deleteMessage): the arrival queue passes it over without looking it up. */
  forgotten: boolean;
}

// What `bytes()` counts per record besides the message bytes themselves: the sizes the records would take serialized
// (as the embedded engine writes them), not the JavaScript heap they take here. An estimate, for the metric and stats.
const METADATA_BYTES = 32 + 48; // id key + arrival, flags, cone roots, milestone indexes
const ENTRY_BYTES = 2 * 32 + 8; // one child, index or unreferenced entry: two ids and a sequence number
const OUTPUT_BYTES = 34 + 90; // output id key + creating message, seq, booked index, output, spent record
const MILESTONE_BYTES = 4 + 32 + 8 + 2 * 4; // index, message id, timestamp, UTXO change list headers

type MutableOutput = { -readonly [K in keyof OutputRecord]: OutputRecord[K] };

/**
 * The storage contract in one process's maps, for tests, browsers and `serve --in-memory`: nothing survives the process,
 * and past `maxMessages` the oldest messages are forgotten (the ledger and milestones are kept).
 */
export class MemoryStore implements NodeStore {
  readonly engine = "memory";
  // The same map, read-only outside: open({ snapshot }) replaces its contents with the snapshot's entry points.
  readonly #entryPoints = new Map<string, number>();
  readonly entryPoints: ReadonlyMap<string, number> = this.#entryPoints;
  readonly #messages = new Map<string, Entry>();
  // Whether a queued entry is still held, from the entry alone: a lookup in a map of 100,000 was a cache miss per
  // message stored (the oldest's bucket is long cold), some 1% of a submission's CPU.
  readonly #arrival = new ArrivalOrder<Entry>((e) => !e.forgotten);
  // Ids of messages no milestone references yet, in arrival order (id → seq): pruning takes the old ones.
  readonly #unreferenced = new Map<string, number>();
  // Ids of messages each milestone referenced, and the seq of the milestone's own message: what pruning takes per milestone.
  readonly #referencedBy = new Map<number, Set<string>>();
  readonly #milestoneSeq = new Map<number, number>();
  readonly #children = new Map<string, string[]>();
  readonly #byIndex = new Map<string, string[]>();
  readonly #outputs = new Map<string, MutableOutput>();
  readonly #byAddress = new Map<string, string[]>();
  readonly #balances = new Map<string, AddressBalance>();
  readonly #claims = new Map<string, ClaimRecord>();
  readonly #pending = new Map<string, PendingOutput>();
  readonly #milestones = new Map<number, MilestoneRecord>();
  readonly #utxoChanges = new Map<number, UtxoChanges>();
  readonly #redeemed = new Map<string, number>();
  readonly #revoked = new Map<string, number>();
  readonly #secrets = new Map<string, Uint8Array>();
  readonly #maxMessages: number;
  readonly #maxPerIndex: number;
  #network: string | undefined;
  #ledger = false;
  #latest: MilestoneRecord | undefined;
  #seq = 0;
  #pruningIndex = 0;
  #messageBytes = 0;
  #coordinatorKeys: string[] | undefined;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxMessages = Math.max(1, options.maxMessages ?? 100_000);
    this.#maxPerIndex = Math.max(1, options.maxPerIndex ?? 1000);
    const entryPoints = (options.entryPoints ?? [ZERO_MESSAGE_ID]).map((id) => id.toLowerCase());
    for (const id of entryPoints) this.#entryPoints.set(id, 0);
  }

  /** Messages held now. */
  get size(): number {
    return this.#messages.size;
  }

  async open(options: StoreOpenOptions): Promise<StoreOpenResult> {
    this.#check();
    if (this.#network !== undefined) {
      if (this.#network !== options.network) {
        throw new NodeError("STORE_WRONG_NETWORK", `this store was made for network ${this.#network}, not ${options.network}`);
      }
      return this.#opened(false);
    }
    const snapshot = options.snapshot;
    if (snapshot !== undefined) {
      if (snapshot.network !== options.network) {
        throw new NodeError("STORE_WRONG_NETWORK", `the snapshot was made for network ${snapshot.network}, not ${options.network}`);
      }
      this.#loadSnapshot(options.network, snapshot);
      return this.#opened(true);
    }
    this.#network = options.network;
    if (options.genesis !== undefined) {
      this.#ledger = true;
      for (const record of genesisRecords(options.genesis)) this.#insertOutput(record);
      this.#addBalances(balanceDeltas([], options.genesis.map((g) => g.output)));
    }
    return this.#opened(true);
  }

  #opened(created: boolean): StoreOpenResult {
    return { created, ledger: this.#ledger, ...(this.#coordinatorKeys !== undefined ? { coordinatorPublicKeys: [...this.#coordinatorKeys] } : {}) };
  }

  /** A new store from a snapshot: its ledger, milestone, entry points and coordinator keys. */
  #loadSnapshot(network: string, snapshot: LedgerSnapshot): void {
    // Every output id parsed before anything is written: a snapshot refused here leaves the store uncreated.
    const records: MutableOutput[] = (snapshot.ledger ? snapshot.outputs : []).map((o) => {
      const { transactionId, index } = parseOutputId(o.outputId);
      return {
        outputId: o.outputId.toLowerCase(),
        transactionId,
        outputIndex: index,
        messageId: o.messageId.toLowerCase(),
        output: o.output,
        // An output of a snapshot written while the ledger moved at acceptance may be unbooked: the snapshot's milestone
        // is the first this ledger knows it by.
        milestoneIndexBooked: o.milestoneIndexBooked ?? snapshot.milestone?.index ?? 0,
      };
    });
    this.#network = network;
    this.#ledger = snapshot.ledger;
    for (const record of records) this.#insertOutput(record);
    this.#addBalances(balanceDeltas([], records.map((r) => r.output)));
    if (snapshot.milestone !== undefined) {
      const { index, messageId, timestamp } = snapshot.milestone;
      const record: MilestoneRecord = { index, messageId: messageId.toLowerCase(), timestamp };
      this.#milestones.set(index, record);
      this.#latest = record;
      this.#pruningIndex = index - 1;
    }
    this.#entryPoints.clear();
    for (const { messageId, index } of snapshot.entryPoints) this.#entryPoints.set(messageId.toLowerCase(), index);
    this.#coordinatorKeys = snapshot.coordinatorPublicKeys.map((k) => k.toLowerCase());
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #check(): void {
    if (this.#closed) throw storeClosed();
  }

  async accept(acceptance: Acceptance): Promise<AcceptResult> {
    return this.acceptSync(acceptance);
  }

  /** The synchronous body of accept: the claim check and every write happen with nothing interleaved. */
  acceptSync(acceptance: Acceptance): AcceptResult {
    this.#check();
    const { id } = acceptance;
    if (this.#messages.has(id)) return { stored: false };
    // Check everything that can fail before writing anything.
    const claim = acceptance.claim;
    const claimed =
      claim === undefined
        ? []
        : checkClaim(
            claim,
            claim.consumed.map((o) => this.#outputs.get(o)),
            claim.consumed.map((o) => this.#pending.get(o)),
            claim.consumed.map((o) => this.#claims.get(o)),
            this.#latest?.index ?? 0,
          );
    const milestone = acceptance.milestone;
    if (milestone !== undefined) this.#checkMilestone(milestone);

    const seq = ++this.#seq;
    const parentKeys = acceptance.parentIds ?? acceptance.message.parents.map(toHex);
    const indexKeys = indexesOf(acceptance.message).map(toHex);
    const entry: Entry = { stored: storedMessage(id, acceptance.bytes), parentKeys, indexKeys, metadata: { arrivalTime: acceptance.arrivalTime, solid: true, coneRoots: acceptance.coneRoots }, seq, forgotten: false };
    this.#messages.set(id, entry);
    this.#arrival.push(entry, this.#messages.size);
    this.#unreferenced.set(id, seq);
    this.#messageBytes += acceptance.bytes.length;
    for (const parent of parentKeys) pushBounded(this.#children, parent, id, this.#maxPerIndex);
    for (const index of indexKeys) pushBounded(this.#byIndex, index, id, this.#maxPerIndex);
    if (claim !== undefined) {
      const index = this.#latest?.index ?? 0;
      for (const o of claimed) this.#claims.set(o, { transactionId: claim.transactionId, messageId: id, index });
      for (const p of pendingOutputsOf(claim, id, index)) if (!this.#outputs.has(p.outputId)) this.#pending.set(p.outputId, p);
    }
    if (milestone !== undefined) this.#confirm(milestone);
    if (this.#messages.size > this.#maxMessages) this.#evictOldest();
    return { stored: true };
  }

  async confirmMilestone(application: MilestoneApplication): Promise<void> {
    this.#check();
    this.#checkMilestone(application);
    if (!this.#messages.has(application.messageId)) throw new ProtocolError("INVALID_ARGUMENT", `the message of milestone ${application.index} is not stored`, { path: "messageId" });
    this.#confirm(application);
  }

  /** What confirming `milestone` needs of the store before anything is written: the next index, and every output it
   * spends unspent in the ledger (or created earlier in its own walk). */
  #checkMilestone(milestone: MilestoneApplication): void {
    const next = (this.#latest?.index ?? 0) + 1;
    if (milestone.index !== next) throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${next})`);
    const created = new Set(milestone.created.map((o) => o.outputId));
    for (const { outputId } of milestone.consumed) {
      const record = this.#outputs.get(outputId);
      if (created.has(outputId)) continue;
      if (record === undefined || record.spent !== undefined) {
        throw new NodeError("STORE_CORRUPT", `milestone ${milestone.index} spends output ${outputId}, which the ledger ${record === undefined ? "does not hold" : "has spent"}`);
      }
    }
  }

  #insertOutput(record: MutableOutput): void {
    this.#outputs.set(record.outputId, record);
    const key = toHex(record.output.address.address);
    let ids = this.#byAddress.get(key);
    if (ids === undefined) this.#byAddress.set(key, (ids = []));
    ids.push(record.outputId);
  }

  #addBalances(deltas: Map<string, BalanceDelta>): void {
    for (const [key, d] of deltas) this.#balances.set(key, addBalance(this.#balances.get(key) ?? EMPTY_BALANCE, d));
  }

  /** Applies a milestone that #checkMilestone passed: its references, its ledger mutation, its records. */
  #confirm(milestone: MilestoneApplication): void {
    const referenced = new Set<string>();
    this.#referencedBy.set(milestone.index, referenced);
    for (const r of milestone.referenced) {
      const entry = this.#messages.get(r.messageId);
      if (entry === undefined) continue;
      const isMilestone = r.messageId === milestone.messageId;
      if (isMilestone) this.#milestoneSeq.set(milestone.index, entry.seq);
      // Referenced once only; should a milestone name a message again, it counts with the last one.
      const before = entry.metadata.referencedByMilestoneIndex;
      if (before !== undefined && before !== milestone.index) this.#referencedBy.get(before)?.delete(r.messageId);
      referenced.add(r.messageId);
      this.#unreferenced.delete(r.messageId);
      entry.metadata = {
        ...entry.metadata,
        referencedByMilestoneIndex: milestone.index,
        ledgerInclusionState: r.ledgerInclusionState,
        ...(r.conflictReason !== undefined ? { conflictReason: r.conflictReason } : {}),
        ...(isMilestone ? { milestoneIndex: milestone.index } : {}),
      };
    }
    for (const o of milestone.created) {
      this.#insertOutput({ outputId: o.outputId, transactionId: o.transactionId, outputIndex: o.outputIndex, messageId: o.messageId, output: o.output, milestoneIndexBooked: milestone.index });
      this.#pending.delete(o.outputId);
    }
    for (const id of milestone.discarded) this.#pending.delete(id);
    for (const o of milestone.consumed) {
      this.#outputs.get(o.outputId)!.spent = { transactionId: o.transactionId, messageId: o.messageId, milestoneIndex: milestone.index };
      this.#claims.delete(o.outputId);
    }
    for (const r of milestone.released) if (this.#claims.get(r.outputId)?.transactionId === r.transactionId) this.#claims.delete(r.outputId);
    this.#addBalances(milestoneDeltas(milestone.created, milestone.consumed));
    const record: MilestoneRecord = { index: milestone.index, messageId: milestone.messageId, timestamp: milestone.timestamp };
    this.#milestones.set(milestone.index, record);
    this.#utxoChanges.set(milestone.index, { index: milestone.index, createdOutputs: milestone.created.map((o) => o.outputId), consumedOutputs: milestone.consumed.map((o) => o.outputId) });
    this.#latest = record;
  }

  #evictOldest(): void {
    this.#forget(this.#arrival.takeOldest()!);
  }

  /** Forgets a message with every entry that names it: metadata, children (as parent and as child), index. */
  #deleteMessage(id: string): void {
    const entry = this.#messages.get(id);
    if (entry !== undefined) this.#forget(entry);
  }

  /** #deleteMessage of an entry held now. */
  #forget(entry: Entry): void {
    const id = entry.stored.id;
    entry.forgotten = true;
    this.#messages.delete(id);
    this.#messageBytes -= entry.stored.bytes.length;
    this.#children.delete(id);
    for (const parent of entry.parentKeys) this.#unlist(this.#children, parent, id, entry.seq);
    for (const index of entry.indexKeys) this.#unlist(this.#byIndex, index, id, entry.seq);
    this.#unreferenced.delete(id);
    const by = entry.metadata.referencedByMilestoneIndex;
    if (by !== undefined) this.#referencedBy.get(by)?.delete(id);
  }

  /**
   * Takes a message being forgotten out of a list it was pushed onto (its parents' children, its index). Such a list
   * is in arrival order and bounded (pushBounded drops its oldest), and eviction forgets the oldest message: it is at
   * the front, or, when the front arrived after it, no longer in the list. Only otherwise (pruning) is the list searched.
   */
  #unlist(map: Map<string, string[]>, key: string, id: string, seq: number): void {
    const ids = map.get(key);
    if (ids === undefined) return;
    if (ids[0] !== id) {
      // The front arrived after it: the bound pushed it out of this list already.
      if ((this.#messages.get(ids[0]!)?.seq ?? 0) > seq) return;
      return removeFrom(map, key, id);
    }
    ids.shift();
    if (ids.length === 0) map.delete(key);
  }

  /** Stores a message with no claim, arriving now (a shortcut for tests and tools). */
  async put(entry: StoredMessage): Promise<boolean> {
    return this.acceptSync({ ...entry, arrivalTime: Date.now(), coneRoots: { oldest: 0, youngest: 0 } }).stored;
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    this.#check();
    return this.#messages.get(id.toLowerCase())?.stored;
  }

  async has(id: string): Promise<boolean> {
    this.#check();
    return this.#messages.has(id.toLowerCase());
  }

  async metadata(id: string): Promise<MessageMetadata | undefined> {
    this.#check();
    return this.#messages.get(id.toLowerCase())?.metadata;
  }

  async children(id: string, max: number): Promise<string[]> {
    this.#check();
    return (this.#children.get(id.toLowerCase()) ?? []).slice(0, Math.max(0, max));
  }

  async findByIndex(index: Uint8Array, max = 1000): Promise<string[]> {
    this.#check();
    const ids = this.#byIndex.get(toHex(index)) ?? [];
    return ids.slice(Math.max(0, ids.length - max));
  }

  async unreferenced(max: number): Promise<string[]> {
    this.#check();
    const ids = [...this.#unreferenced.keys()];
    return ids.slice(Math.max(0, ids.length - Math.max(0, max)));
  }

  async claim(outputId: string): Promise<ClaimRecord | undefined> {
    this.#check();
    return this.#claims.get(outputId.toLowerCase());
  }

  async pendingOutput(outputId: string): Promise<PendingOutput | undefined> {
    this.#check();
    return this.#pending.get(outputId.toLowerCase());
  }

  /** Every stored id, oldest first. */
  ids(): string[] {
    return [...this.#messages.keys()];
  }

  async output(outputId: string): Promise<OutputRecord | undefined> {
    this.#check();
    const record = this.#outputs.get(outputId.toLowerCase());
    return record === undefined ? undefined : { ...record };
  }

  async addressOutputs(address: Uint8Array, query: AddressOutputsQuery): Promise<string[]> {
    this.#check();
    const ids = this.#byAddress.get(toHex(address)) ?? [];
    const unspent: string[] = [];
    const spent: string[] = [];
    for (const id of ids) {
      const o = this.#outputs.get(id)!;
      if (query.type !== undefined && o.output.type !== query.type) continue;
      (o.spent === undefined ? unspent : spent).push(id);
    }
    return (query.includeSpent === true ? [...unspent, ...spent] : unspent).slice(0, Math.max(0, query.max));
  }

  async addressBalance(address: Uint8Array): Promise<AddressBalance> {
    this.#check();
    return this.#balances.get(toHex(address)) ?? EMPTY_BALANCE;
  }

  async milestone(index: number): Promise<MilestoneRecord | undefined> {
    this.#check();
    return this.#milestones.get(index);
  }

  async latestMilestone(): Promise<MilestoneRecord | undefined> {
    this.#check();
    return this.#latest;
  }

  async utxoChanges(index: number): Promise<UtxoChanges | undefined> {
    this.#check();
    return this.#utxoChanges.get(index);
  }

  async redeemNonce(nonce: string, expiresAt: number): Promise<boolean> {
    this.#check();
    if (this.#redeemed.has(nonce)) return false;
    this.#redeemed.set(nonce, expiresAt);
    return true;
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    this.#check();
    this.#revoked.set(jti, Math.max(expiresAt, this.#revoked.get(jti) ?? 0));
  }

  async isTokenRevoked(jti: string): Promise<boolean> {
    this.#check();
    return this.#revoked.has(jti);
  }

  async secret(name: string, create: () => Uint8Array): Promise<Uint8Array> {
    this.#check();
    let value = this.#secrets.get(name);
    if (value === undefined) this.#secrets.set(name, (value = create().slice()));
    return value;
  }

  async sweep(now: number): Promise<void> {
    this.#check();
    for (const [key, expiresAt] of this.#redeemed) if (expiresAt < now) this.#redeemed.delete(key);
    for (const [key, expiresAt] of this.#revoked) if (expiresAt < now) this.#revoked.delete(key);
  }

  async pruningIndex(): Promise<number> {
    this.#check();
    return this.#pruningIndex;
  }

  /** One step (synchronous, so atomic here): up to `batch` messages of milestone m = pruningIndex + 1, and m itself
   * once none of its messages is left. */
  async prune(target: number, batch: number): Promise<PruneStep> {
    this.#check();
    const m = this.#pruningIndex + 1;
    const latest = this.#latest?.index ?? 0;
    // (Written as !(m <= target) so that a NaN target stops rather than prunes everything.)
    if (!(m <= target) || m >= latest) return { pruningIndex: this.#pruningIndex, messages: 0, done: true };
    const limit = Number.isFinite(batch) ? Math.max(1, Math.floor(batch)) : 1;
    const msSeq = this.#milestoneSeq.get(m);
    const victims: string[] = [];
    // Messages never referenced that arrived before m's own message: below max depth for good.
    if (msSeq !== undefined) {
      for (const [id, seq] of this.#unreferenced) {
        if (seq >= msSeq || victims.length >= limit) break;
        victims.push(id);
      }
    }
    for (const id of this.#referencedBy.get(m) ?? []) {
      if (victims.length >= limit) break;
      victims.push(id);
    }
    for (const id of victims) {
      this.#deleteMessage(id);
      this.#referencedBy.get(m)?.delete(id);
    }
    // Claims and pending outputs made at m or before: lapsed for good (m is MIN_PRUNE_KEEP below the latest).
    let entries = 0;
    for (const table of [this.#claims, this.#pending] as Map<string, { index: number }>[]) {
      for (const [id, record] of table) {
        if (victims.length + entries >= limit) break;
        if (record.index > m) continue;
        table.delete(id);
        entries++;
      }
    }
    const lapsedLeft = [...this.#claims.values(), ...this.#pending.values()].some((r) => r.index <= m);
    const firstUnreferenced = this.#unreferenced.values().next();
    const left = lapsedLeft || (this.#referencedBy.get(m)?.size ?? 0) > 0 || (msSeq !== undefined && !firstUnreferenced.done && firstUnreferenced.value < msSeq);
    if (!left) this.#finishMilestone(m);
    return { pruningIndex: this.#pruningIndex, messages: victims.length, ...(entries > 0 ? { entries } : {}), done: this.#pruningIndex >= target };
  }

  /** Milestone m's record and UTXO changes go, and the outputs it consumed (spent for good); the pruning index becomes m. */
  #finishMilestone(m: number): void {
    for (const id of this.#utxoChanges.get(m)?.consumedOutputs ?? []) {
      const record = this.#outputs.get(id);
      if (record?.spent === undefined) continue;
      this.#outputs.delete(id);
      removeFrom(this.#byAddress, toHex(record.output.address.address), id);
    }
    this.#milestones.delete(m);
    this.#utxoChanges.delete(m);
    this.#referencedBy.delete(m);
    this.#milestoneSeq.delete(m);
    this.#pruningIndex = m;
  }

  async readSnapshot(): Promise<LedgerSnapshot> {
    this.#check();
    const latest = this.#latest;
    const latestIndex = latest?.index ?? 0;
    const entryPoints = new Map<string, number>();
    // Entry points of the store's own snapshot still within reach, then every message the last BELOW_MAX_DEPTH
    // milestones referenced (their own messages among them).
    for (const [id, index] of this.#entryPoints) if (latestIndex - index < BELOW_MAX_DEPTH) entryPoints.set(id, index);
    if (latest !== undefined) entryPoints.set(latest.messageId, latest.index);
    for (let index = latestIndex; index > latestIndex - BELOW_MAX_DEPTH && index > 0; index--) {
      for (const id of this.#referencedBy.get(index) ?? []) entryPoints.set(id, index);
    }
    const outputs = [...this.#outputs.values()]
      .filter((o) => o.spent === undefined)
      .sort((a, b) => (a.outputId < b.outputId ? -1 : a.outputId > b.outputId ? 1 : 0))
      .map((o) => ({ outputId: o.outputId, messageId: o.messageId, output: o.output, milestoneIndexBooked: o.milestoneIndexBooked ?? 0 }));
    return {
      network: this.#network ?? "",
      ledger: this.#ledger,
      ...(latest !== undefined ? { milestone: { ...latest } } : {}),
      coordinatorPublicKeys: this.#signers(latest),
      entryPoints: [...entryPoints].map(([messageId, index]): EntryPoint => ({ messageId, index })).sort((a, b) => (a.messageId < b.messageId ? -1 : 1)),
      outputs,
    };
  }

  /** The keys that signed the latest milestone: from its message when stored, else the ones the snapshot carried. */
  #signers(latest: MilestoneRecord | undefined): string[] {
    const payload = latest === undefined ? undefined : this.#messages.get(latest.messageId)?.stored.message.payload;
    if (payload?.type === 1) return payload.publicKeys.map((k) => toHex(k)).sort();
    return [...(this.#coordinatorKeys ?? [])];
  }

  async stats(): Promise<StoreStats> {
    this.#check();
    let unspent = 0;
    for (const o of this.#outputs.values()) if (o.spent === undefined) unspent++;
    const bytes = this.#bytes();
    return {
      engine: this.engine,
      network: this.#network ?? "",
      messages: this.#messages.size,
      unspentOutputs: unspent,
      latestMilestoneIndex: this.#latest?.index ?? 0,
      pruningIndex: this.#pruningIndex,
      bytes,
      // Nothing is on disk: the bytes held are all there is.
      fileBytes: bytes,
    };
  }

  async bytes(): Promise<number> {
    this.#check();
    return this.#bytes();
  }

  /** An estimate of the bytes held: every message's bytes plus its metadata, children/index/tip entries, outputs and
   * milestones at the sizes their serialized records take (not the JavaScript heap, which the runtime decides). */
  #bytes(): number {
    return this.#messageBytes + this.#messages.size * (METADATA_BYTES + ENTRY_BYTES) + this.#outputs.size * OUTPUT_BYTES + this.#milestones.size * MILESTONE_BYTES;
  }

  async verify(): Promise<string | undefined> {
    this.#check();
    for (const [id, entry] of this.#messages) {
      const hashed = hashMessageId(entry.stored.bytes);
      if (hashed !== id || entry.stored.id !== id) return `message ${id} hashes to ${hashed}`;
    }
    for (const [parent, kids] of this.#children) {
      for (const kid of kids) {
        const entry = this.#messages.get(kid);
        if (entry === undefined) return `the children entry ${parent} → ${kid} points to no stored message`;
        if (!entry.stored.message.parents.some((p) => toHex(p) === parent)) return `the children entry ${parent} → ${kid}: ${kid} does not name ${parent} as a parent`;
      }
    }
    for (const [index, ids] of this.#byIndex) {
      for (const id of ids) {
        const entry = this.#messages.get(id);
        if (entry === undefined) return `the index entry ${index} → ${id} points to no stored message`;
        if (!indexesOf(entry.stored.message).some((i) => toHex(i) === index)) return `the index entry ${index} → ${id}: the message has no such index`;
      }
    }
    for (const [id, seq] of this.#unreferenced) {
      const entry = this.#messages.get(id);
      if (entry === undefined) return `the unreferenced entry ${id} points to no stored message`;
      if (entry.seq !== seq || entry.metadata.referencedByMilestoneIndex !== undefined) return `the unreferenced entry ${id} does not match its message`;
    }
    for (const [index, ids] of this.#referencedBy) {
      for (const id of ids) if (!this.#messages.has(id)) return `milestone ${index} lists ${id} as referenced, which is not stored`;
    }
    return this.#verifyLedger();
  }

  #verifyLedger(): string | undefined {
    for (const [id, record] of this.#outputs) {
      if (record.milestoneIndexBooked === undefined) return `the output ${id} is booked by no milestone`;
      if (record.spent !== undefined && record.spent.milestoneIndex === undefined) return `the spend of output ${id} is confirmed by no milestone`;
    }
    for (const [id] of this.#claims) {
      const record = this.#outputs.get(id);
      // A claim whose pending output went (discarded, or pruned first) is harmless: a spend of it finds no output. It
      // lapses and is pruned in its turn. A claim on a spent output would refuse nothing wrongly either, but
      // confirmation deletes those, so one left is damage.
      if (record?.spent !== undefined) return `the claim on output ${id} is on a spent output`;
    }
    for (const [id] of this.#pending) if (this.#outputs.has(id)) return `the pending output ${id} is booked already`;
    const listed = new Map<string, Set<string>>();
    for (const [address, ids] of this.#byAddress) {
      for (const id of ids) {
        const record = this.#outputs.get(id);
        if (record === undefined) return `the outputs of address ${address} name ${id}, which is not stored`;
        if (toHex(record.output.address.address) !== address) return `the outputs of address ${address} name ${id}, which belongs to another address`;
      }
      listed.set(address, new Set(ids));
    }
    const sums = new Map<string, AddressBalance>();
    let supply = 0;
    for (const [id, record] of this.#outputs) {
      if (record.spent !== undefined) continue;
      const { output } = record;
      const address = toHex(output.address.address);
      if (listed.get(address)?.has(id) !== true) return `the unspent output ${id} is missing from the outputs of address ${address}`;
      const sum = sums.get(address) ?? EMPTY_BALANCE;
      sums.set(address, {
        balance: sum.balance + output.amount,
        dustAllowance: sum.dustAllowance + (output.type === 1 ? output.amount : 0),
        dustOutputs: sum.dustOutputs + (isDustOutput(output) ? 1 : 0),
      });
      supply += output.amount;
    }
    for (const address of new Set([...sums.keys(), ...this.#balances.keys()])) {
      const want = sums.get(address) ?? EMPTY_BALANCE;
      const have = this.#balances.get(address) ?? EMPTY_BALANCE;
      if (want.balance !== have.balance || want.dustAllowance !== have.dustAllowance || want.dustOutputs !== have.dustOutputs) {
        return `the balance of address ${address} is ${JSON.stringify(have)}, but its unspent outputs give ${JSON.stringify(want)}`;
      }
    }
    if (this.#ledger && supply !== TOTAL_SUPPLY) return `the unspent outputs sum to ${supply}, not the total supply ${TOTAL_SUPPLY}`;
    return undefined;
  }
}

function removeFrom(map: Map<string, string[]>, key: string, id: string): void {
  const ids = map.get(key);
  if (ids === undefined) return;
  const at = ids.indexOf(id);
  if (at >= 0) ids.splice(at, 1);
  if (ids.length === 0) map.delete(key);
}

function pushBounded(map: Map<string, string[]>, key: string, id: string, max: number): void {
  let ids = map.get(key);
  if (ids === undefined) map.set(key, (ids = []));
  ids.push(id);
  if (ids.length > max) ids.shift();
}

