// The memory engine of the storage contract: maps in one process, for tests, browsers and `serve --in-memory`.
// Every write is synchronous, so the ledger check and the write are one step with nothing to interleave between them.
// Bounded: past `maxMessages` the oldest messages are forgotten (the ledger and milestones are kept).
import { toHex } from "../../bytes/hex.js";
import { outputId as makeOutputId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { addBalance, balanceDeltas, checkLedgerState, EMPTY_BALANCE, ledgerOutput, type BalanceDelta } from "../ledger.js";
import {
  ZERO_MESSAGE_ID,
  type Acceptance,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type MessageMetadata,
  type MilestoneRecord,
  type NodeStore,
  type OutputRecord,
  type StoredMessage,
  type StoreOpenOptions,
  type StoreOpenResult,
  type UtxoChanges,
} from "./contract.js";
import { genesisRecords, indexesOf, storeClosed } from "./common.js";

export interface MemoryStoreOptions {
  /** Solid entry points (ids that count as known parents). Default: the all-zero message id. */
  entryPoints?: string[];
  /** Most tips kept; past it the oldest tip is dropped. Default 1000. */
  maxTips?: number;
  /** Most messages kept; past it the oldest are forgotten. Default 100,000. */
  maxMessages?: number;
  /** Most ids remembered per index and children per message. Default 1000 (the newest). */
  maxPerIndex?: number;
  /** Random source for tip selection, for reproducible tests. Default Math.random. */
  random?: () => number;
}

interface Entry {
  readonly stored: StoredMessage;
  metadata: MessageMetadata;
}

type MutableOutput = { -readonly [K in keyof OutputRecord]: OutputRecord[K] };

export class MemoryStore implements NodeStore {
  readonly engine = "memory";
  readonly entryPoints: ReadonlyMap<string, number>;
  readonly #messages = new Map<string, Entry>();
  // Insertion order = age: the first key is the oldest tip.
  readonly #tips = new Map<string, true>();
  readonly #children = new Map<string, string[]>();
  readonly #byIndex = new Map<string, string[]>();
  readonly #outputs = new Map<string, MutableOutput>();
  readonly #byAddress = new Map<string, string[]>();
  readonly #balances = new Map<string, AddressBalance>();
  readonly #milestones = new Map<number, MilestoneRecord>();
  readonly #utxoChanges = new Map<number, UtxoChanges>();
  readonly #redeemed = new Map<string, number>();
  readonly #revoked = new Map<string, number>();
  readonly #secrets = new Map<string, Uint8Array>();
  readonly #maxTips: number;
  readonly #maxMessages: number;
  readonly #maxPerIndex: number;
  readonly #random: () => number;
  #network: string | undefined;
  #ledger = false;
  #latest: MilestoneRecord | undefined;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxTips = Math.max(1, options.maxTips ?? 1000);
    this.#maxMessages = Math.max(1, options.maxMessages ?? 100_000);
    this.#maxPerIndex = Math.max(1, options.maxPerIndex ?? 1000);
    this.#random = options.random ?? Math.random;
    const entryPoints = (options.entryPoints ?? [ZERO_MESSAGE_ID]).map((id) => id.toLowerCase());
    this.entryPoints = new Map(entryPoints.map((id) => [id, 0]));
    for (const id of entryPoints) this.#tips.set(id, true);
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
      return { created: false, ledger: this.#ledger };
    }
    this.#network = options.network;
    if (options.genesis !== undefined) {
      this.#ledger = true;
      for (const record of genesisRecords(options.genesis)) this.#insertOutput(record);
      this.#addBalances(balanceDeltas([], options.genesis.map((g) => g.output)));
    }
    return { created: true, ledger: this.#ledger };
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

  /** The synchronous body of accept: the ledger check and every write happen with nothing interleaved. */
  acceptSync(acceptance: Acceptance): AcceptResult {
    this.#check();
    const { id } = acceptance;
    if (this.#messages.has(id)) return { stored: false };
    // Check everything that can fail before writing anything.
    let deltas: Map<string, BalanceDelta> | undefined;
    const mutation = acceptance.ledger;
    if (mutation !== undefined) {
      deltas = checkLedgerState(
        mutation,
        mutation.consumed.map((o) => ledgerOutput(this.#outputs.get(o))),
        (key) => this.#balances.get(key) ?? EMPTY_BALANCE,
      ).deltas;
    }
    const milestone = acceptance.milestone;
    if (milestone !== undefined) {
      const next = (this.#latest?.index ?? 0) + 1;
      if (milestone.index !== next) throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${next})`);
    }

    this.#messages.set(id, { stored: { id, bytes: acceptance.bytes, message: acceptance.message }, metadata: { arrivalTime: acceptance.arrivalTime, solid: true, coneRoots: acceptance.coneRoots } });
    for (const parent of acceptance.message.parents) {
      const p = toHex(parent);
      this.#tips.delete(p);
      pushBounded(this.#children, p, id, this.#maxPerIndex);
    }
    if (!this.#children.has(id)) {
      this.#tips.set(id, true);
      if (this.#tips.size > this.#maxTips) this.#tips.delete(this.#tips.keys().next().value!);
    }
    for (const index of indexesOf(acceptance.message)) pushBounded(this.#byIndex, toHex(index), id, this.#maxPerIndex);

    if (mutation !== undefined && deltas !== undefined) {
      for (const consumed of mutation.consumed) this.#outputs.get(consumed)!.spent = { transactionId: mutation.transactionId, messageId: id };
      mutation.created.forEach((output, index) => {
        this.#insertOutput({ outputId: makeOutputId(mutation.transactionId, index), transactionId: mutation.transactionId, outputIndex: index, messageId: id, output });
      });
      this.#addBalances(deltas);
    }
    if (milestone !== undefined) this.#confirm(milestone);
    if (this.#messages.size > this.#maxMessages) this.#evictOldest();
    return { stored: true };
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

  #confirm(milestone: Acceptance["milestone"] & object): void {
    for (const r of milestone.referenced) {
      const entry = this.#messages.get(r.messageId);
      if (entry === undefined) continue;
      const isMilestone = r.messageId === milestone.messageId;
      entry.metadata = {
        ...entry.metadata,
        referencedByMilestoneIndex: milestone.index,
        ledgerInclusionState: r.ledgerInclusionState,
        ...(r.conflictReason !== undefined ? { conflictReason: r.conflictReason } : {}),
        ...(isMilestone ? { milestoneIndex: milestone.index } : {}),
      };
    }
    for (const id of milestone.createdOutputs) {
      const o = this.#outputs.get(id);
      if (o !== undefined) o.milestoneIndexBooked = milestone.index;
    }
    for (const id of milestone.consumedOutputs) {
      const o = this.#outputs.get(id);
      if (o?.spent !== undefined) o.spent = { ...o.spent, milestoneIndex: milestone.index };
    }
    const record: MilestoneRecord = { index: milestone.index, messageId: milestone.messageId, timestamp: milestone.timestamp };
    this.#milestones.set(milestone.index, record);
    this.#utxoChanges.set(milestone.index, { index: milestone.index, createdOutputs: [...milestone.createdOutputs], consumedOutputs: [...milestone.consumedOutputs] });
    this.#latest = record;
  }

  #evictOldest(): void {
    const oldest = this.#messages.keys().next().value!;
    const entry = this.#messages.get(oldest)!;
    this.#messages.delete(oldest);
    this.#tips.delete(oldest);
    this.#children.delete(oldest);
    for (const index of indexesOf(entry.stored.message)) {
      const key = toHex(index);
      const ids = this.#byIndex.get(key);
      if (ids === undefined) continue;
      const at = ids.indexOf(oldest);
      if (at >= 0) ids.splice(at, 1);
      if (ids.length === 0) this.#byIndex.delete(key);
    }
  }

  /** Stores a message with no ledger effect, arriving now (a shortcut for tests and tools). */
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

  /** A uniform random choice of up to `max` tips, so concurrent submissions spread over the tip set. */
  async tips(max: number): Promise<string[]> {
    this.#check();
    const all = [...this.#tips.keys()];
    const n = Math.min(Math.max(0, max), all.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.#random() * (all.length - i));
      const t = all[i]!;
      all[i] = all[j]!;
      all[j] = t;
    }
    return all.slice(0, n);
  }

  /** Every current tip, oldest first (for inspection and tests). */
  allTips(): string[] {
    return [...this.#tips.keys()];
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
}

function pushBounded(map: Map<string, string[]>, key: string, id: string, max: number): void {
  let ids = map.get(key);
  if (ids === undefined) map.set(key, (ids = []));
  ids.push(id);
  if (ids.length > max) ids.shift();
}

