// The embedded engine of the storage contract: one LMDB environment in a directory (lmdb-js, whose binary ships in a
// registry package), laid out as Hornet lays out its key-value store: a one-byte prefix per kind of record and keys
// ordered so that every lookup is a point read or a range scan. Reads are synchronous on LMDB's memory map; each write
// is one abortable LMDB transaction that lmdb-js batches with the writes in flight, committed with fsync before its
// promise resolves. Several processes on one machine may open the same directory (LMDB's own locking).
//
// Key layout (ids are raw bytes, seq numbers big-endian u64 so key order is arrival order):
//   00 name                          meta: schema version, network, ledger flag, next seq, tip count
//   01 messageId                     canonical message bytes
//   02 messageId                     metadata (records.ts)
//   03 parentId seq childId          children of a message, oldest first (empty value)
//   04 len index seq                 messages by indexation index, oldest first → messageId
//   05 messageId                     tips → seq
//   06 seq messageId                 tips by age, to drop the oldest past maxTips (empty value)
//   07 outputId                      outputs (records.ts)
//   08 outputId                      spent outputs → transactionId, messageId, milestone
//   09 address outputSeq outputId    unspent outputs of an address → output type
//   0a address outputSeq outputId    spent outputs of an address → output type
//   0b address                       balance, dust allowance, dust outputs
//   0c milestoneIndex (u32)          milestones → messageId, timestamp
//   0d milestoneIndex (u32)          UTXO changes of a milestone
//   0e blake2b(nonce)                redeemed prove-ownership nonces → expiry (f64 ms)
//   0f blake2b(jti)                  revoked JWT ids → expiry (f64 ms)
//   10 name                          shared secrets
import { chmodSync, closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RootDatabase } from "lmdb";
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex, toHex } from "../../bytes/hex.js";
import { blake2b256 } from "../../crypto/blake2b.js";
import { decodeMessage } from "../../model/codec.js";
import { NodeError } from "../errors.js";
import { addBalance, balanceDeltas, checkLedgerState, EMPTY_BALANCE, type BalanceDelta, type LedgerOutput } from "../ledger.js";
import { indexesOf, OUTPUTS_PER_SEQ, reason, storeClosed, storeTooNew } from "./common.js";
import {
  STORE_SCHEMA_VERSION,
  ZERO_MESSAGE_ID,
  type Acceptance,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type GenesisOutput,
  type MessageMetadata,
  type MilestoneApplication,
  type MilestoneRecord,
  type NodeStore,
  type OutputRecord,
  type StoredMessage,
  type StoreOpenOptions,
  type StoreOpenResult,
  type UtxoChanges,
} from "./contract.js";
import {
  decodeBalance,
  decodeMetadata,
  decodeOutput,
  decodeOutputIdLists,
  decodeSpent,
  encodeBalance,
  encodeMetadata,
  encodeMilestone,
  encodeOutput,
  encodeOutputIdLists,
  encodeSpent,
  readU64,
  u32,
  u64,
  viewOf,
  type StoredOutput,
} from "./records.js";

const META = 0x00;
const MESSAGE = 0x01;
const METADATA = 0x02;
const CHILD = 0x03;
const INDEX = 0x04;
const TIP = 0x05;
const TIP_AGE = 0x06;
const OUTPUT = 0x07;
const SPENT = 0x08;
const ADDRESS_UNSPENT = 0x09;
const ADDRESS_SPENT = 0x0a;
const BALANCE = 0x0b;
const MILESTONE = 0x0c;
const UTXO_CHANGES = 0x0d;
const NONCE = 0x0e;
const REVOKED = 0x0f;
const SECRET = 0x10;

const text = new TextEncoder();
const metaKey = (name: string): Buffer => key(META, text.encode(name));

// Built on first use, not at import: chrysalis-core/node is imported in browsers too, where Buffer does not exist.
let constants: { EMPTY: Buffer; SCHEMA: Buffer; NETWORK: Buffer; LEDGER: Buffer; SEQ: Buffer; TIP_COUNT: Buffer } | undefined;
function k(): NonNullable<typeof constants> {
  return (constants ??= { EMPTY: Buffer.alloc(0), SCHEMA: metaKey("schema"), NETWORK: metaKey("network"), LEDGER: metaKey("ledger"), SEQ: metaKey("seq"), TIP_COUNT: metaKey("tips") });
}


function key(prefix: number, ...parts: Uint8Array[]): Buffer {
  let size = 1;
  for (const p of parts) size += p.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = prefix;
  let at = 1;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The first key after every key that starts with `prefix`. */
function after(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  return Buffer.from([0xff, 0xff, 0xff, 0xff]);
}

/** A view on a Buffer lmdb-js returned (each read is its own copy), as a plain Uint8Array. */
function plain(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

const hashedText = (prefix: number, value: string): Buffer => key(prefix, blake2b256(text.encode(value)));

export interface LmdbStoreOptions {
  /** The data directory (created when missing); LMDB keeps data.mdb and lock.mdb in it. */
  path: string;
  /** Solid entry points (ids that count as known parents). Default: the all-zero message id. */
  entryPoints?: string[];
  /** Most tips kept; past it the oldest tip is dropped. Default 1000. */
  maxTips?: number;
}

type Db = RootDatabase<Buffer, Buffer>;

export class LmdbStore implements NodeStore {
  readonly engine = "lmdb";
  readonly entryPoints: ReadonlyMap<string, number>;
  /** The absolute data directory. */
  readonly path: string;
  readonly #maxTips: number;
  #db: Db | undefined;
  #env: Promise<Db> | undefined;
  #closed = false;

  constructor(options: LmdbStoreOptions | string) {
    const o = typeof options === "string" ? { path: options } : options;
    this.path = resolve(o.path);
    this.#maxTips = Math.max(1, o.maxTips ?? 1000);
    this.entryPoints = new Map((o.entryPoints ?? [ZERO_MESSAGE_ID]).map((id) => [id.toLowerCase(), 0]));
  }

  /** Opens the environment (once) and creates the store in it, or checks the one it holds. */
  async open(options: StoreOpenOptions): Promise<StoreOpenResult> {
    if (this.#closed) throw storeClosed();
    const first = this.#env === undefined;
    const db = await (this.#env ??= this.#openEnvironment().catch((error: unknown) => {
      this.#env = undefined;
      throw error;
    }));
    try {
      return await this.#write(() => this.#openIn(db, options));
    } catch (error) {
      // A store that refused to open on its first try lets go of its files, so a failed start can exit.
      if (first) await this.#release();
      throw error instanceof NodeError && error.code !== "STORE_UNAVAILABLE" ? error : openFailure(this.path, error);
    }
  }

  /**
   * Opens a store that must exist already, whatever its network, and creates nothing: for tools working beside a
   * running node on its store (`chrysalis auth revoke`). Other processes may have it open (LMDB's own locking).
   */
  async openExisting(): Promise<StoreOpenResult> {
    if (this.#closed) throw storeClosed();
    if (statSync(join(this.path, "data.mdb"), { throwIfNoEntry: false }) === undefined) {
      throw new NodeError("STORE_UNAVAILABLE", `there is no store in ${this.path}`);
    }
    const db = await (this.#env ??= this.#openEnvironment().catch((error: unknown) => {
      this.#env = undefined;
      throw error;
    }));
    const schema = db.get(k().SCHEMA);
    if (schema === undefined) throw new NodeError("STORE_CORRUPT", `the data directory ${this.path} holds no chrysalis store (no header)`);
    const version = viewOf(schema).getUint32(0);
    if (version > STORE_SCHEMA_VERSION) {
      throw storeTooNew(`the store at ${this.path}`, version, STORE_SCHEMA_VERSION);
    }
    return { created: false, ledger: db.get(k().LEDGER)?.[0] === 1 };
  }

  async #openEnvironment(): Promise<Db> {
    let lmdb: typeof import("lmdb");
    try {
      lmdb = await import("lmdb");
    } catch (error) {
      throw new NodeError("STORE_UNAVAILABLE", `the embedded store needs the "lmdb" package (npm install lmdb): ${(error as Error).message}`, { cause: error });
    }
    this.#prepareDirectory();
    checkDataFile(join(this.path, "data.mdb"));
    try {
      this.#db = lmdb.open<Buffer, Buffer>({
        path: this.path,
        noSubdir: false,
        keyEncoding: "binary",
        encoding: "binary",
        // A commit returns after LMDB's fsync, so a resolved write is durable (overlapping sync would resolve first
        // and flush later). Measured on the shared machine: no slower under 32 concurrent writers.
        overlappingSync: false,
        // Event-turn batching leaves a batch promise nobody awaits, which rejects unhandled when a commit fails (a
        // full disk would crash the process); batching still happens for writes in flight together.
        eventTurnBatching: false,
      });
      // LMDB creates its files with the process's umask (usually 0644): the secrets in data.mdb are the owner's alone.
      for (const file of ["data.mdb", "lock.mdb"]) {
        const path = join(this.path, file);
        const mode = statSync(path, { throwIfNoEntry: false })?.mode;
        if (mode !== undefined && (mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
      }
      return this.#db;
    } catch (error) {
      throw openFailure(this.path, error);
    }
  }

  async #release(): Promise<void> {
    const db = this.#db;
    this.#db = undefined;
    this.#env = undefined;
    if (db !== undefined) await db.close().catch(() => undefined);
  }

  /** Checks the data directory is a directory, creating it when missing. */
  #prepareDirectory(): void {
    try {
      const stat = statSync(this.path, { throwIfNoEntry: false });
      // The store holds secrets (the coordinator's seed, the nonce MAC key): its directory is the owner's alone.
      if (stat === undefined) mkdirSync(this.path, { recursive: true, mode: 0o700 });
      else if (!stat.isDirectory()) throw new NodeError("STORE_UNAVAILABLE", `the data directory ${this.path} is not a directory`);
    } catch (error) {
      if (error instanceof NodeError) throw error;
      throw new NodeError("STORE_UNAVAILABLE", `cannot use the data directory ${this.path}: ${reason(error)}`, { cause: error });
    }
  }

  #openIn(db: Db, options: StoreOpenOptions): StoreOpenResult {
    const schema = db.get(k().SCHEMA);
    if (schema === undefined) {
      // A database that holds anything but no header is not ours (or lost its header): never start a fresh ledger on
      // it. An empty one is new (LMDB's first commit is atomic: a crash before it leaves no keys).
      if (first(db, Buffer.from([0]), Buffer.from([0xff, 0xff])) !== undefined) {
        throw new NodeError("STORE_CORRUPT", `the data directory ${this.path} holds an LMDB database that is not a chrysalis store (no header)`);
      }
      db.putSync(k().SCHEMA, Buffer.from(u32(STORE_SCHEMA_VERSION)));
      db.putSync(k().NETWORK, Buffer.from(text.encode(options.network)));
      db.putSync(k().LEDGER, Buffer.from([options.genesis !== undefined ? 1 : 0]));
      db.putSync(k().SEQ, Buffer.from(u64(1)));
      db.putSync(k().TIP_COUNT, Buffer.from(u64(0)));
      for (const id of this.entryPoints.keys()) this.#addTip(db, fromHex(id), 0);
      if (options.genesis !== undefined) this.#applyGenesis(db, options.genesis);
      return { created: true, ledger: options.genesis !== undefined };
    }
    const version = viewOf(schema).getUint32(0);
    if (version > STORE_SCHEMA_VERSION) {
      throw storeTooNew(`the store at ${this.path}`, version, STORE_SCHEMA_VERSION);
    }
    const network = Buffer.from(db.get(k().NETWORK) ?? k().EMPTY).toString("utf8");
    if (network !== options.network) {
      throw new NodeError("STORE_WRONG_NETWORK", `the store at ${this.path} was made for network ${network}, not ${options.network}`);
    }
    return { created: false, ledger: db.get(k().LEDGER)?.[0] === 1 };
  }

  #applyGenesis(db: Db, genesis: readonly GenesisOutput[]): void {
    const zero = new Uint8Array(32);
    genesis.forEach(({ outputId, output }, i) => {
      const id = fromHex(outputId, "genesis.outputId", 34);
      this.#putOutput(db, id, { messageId: zero, seq: i, milestoneIndexBooked: 0, output });
    });
    this.#addBalances(db, balanceDeltas([], genesis.map((g) => g.output)));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#env?.catch(() => undefined);
    const db = this.#db;
    this.#db = undefined;
    if (db !== undefined) await db.close();
  }

  #read(): Db {
    if (this.#closed) throw storeClosed();
    const db = this.#db;
    if (db === undefined) throw new NodeError("STORE_UNAVAILABLE", "the store is not open yet");
    return db;
  }

  /**
   * Runs `body` in one abortable LMDB write transaction: a throw rolls back every write it made. Resolves once the
   * transaction is committed and synced. A failed commit (disk full, I/O error) writes nothing and is
   * STORE_UNAVAILABLE; the rule errors `body` throws come through as they are.
   */
  async #write<T>(body: () => T): Promise<T> {
    const db = this.#read();
    try {
      return await db.childTransaction(body);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      const commitError = (error as { commitError?: Promise<unknown> }).commitError;
      const cause = commitError === undefined ? error : await commitError.then(() => error, (e: unknown) => e);
      throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} could not write (${reason(cause)}); nothing was written, try again later`, { cause });
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Messages

  async accept(acceptance: Acceptance): Promise<AcceptResult> {
    this.#read();
    const id = fromHex(acceptance.id, "id", 32);
    // Keys and values that do not depend on the store's state are built before the write lock is taken.
    const parents = acceptance.message.parents;
    const indexes = indexesOf(acceptance.message);
    const bytes = Buffer.from(acceptance.bytes.buffer, acceptance.bytes.byteOffset, acceptance.bytes.byteLength);
    const transaction = acceptance.ledger === undefined ? undefined : fromHex(acceptance.ledger.transactionId, "ledger.transactionId", 32);
    const consumed = acceptance.ledger?.consumed.map((o, i) => fromHex(o, `ledger.consumed[${i}]`, 34));
    return this.#write(() => {
      const db = this.#db!;
      const messageKey = key(MESSAGE, id);
      if (db.doesExist(messageKey)) return { stored: false };
      // Everything that can refuse runs before the first write (the transaction would roll back anyway).
      const mutation = acceptance.ledger;
      let spending: { records: (StoredOutput | undefined)[]; deltas: Map<string, BalanceDelta> } | undefined;
      if (mutation !== undefined && consumed !== undefined) {
        const records = consumed.map((o) => {
          const raw = db.get(key(OUTPUT, o));
          return raw === undefined ? undefined : decodeOutput(raw);
        });
        const entries: (LedgerOutput | undefined)[] = records.map((r, i) => (r === undefined ? undefined : { output: r.output, spent: db.doesExist(key(SPENT, consumed[i]!)) }));
        const { deltas } = checkLedgerState(mutation, entries, (hex) => this.#balanceIn(db, fromHex(hex)));
        spending = { records, deltas };
      }
      const milestone = acceptance.milestone;
      if (milestone !== undefined) {
        const next = (this.#latestIn(db)?.index ?? 0) + 1;
        if (milestone.index !== next) throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${next})`);
      }

      const seq = readU64(viewOf(db.get(k().SEQ)!), 0);
      db.putSync(k().SEQ, Buffer.from(u64(seq + 1)));
      const seqBytes = u64(seq);
      db.putSync(messageKey, bytes);
      db.putSync(key(METADATA, id), Buffer.from(encodeMetadata(seq, { arrivalTime: acceptance.arrivalTime, solid: true, coneRoots: acceptance.coneRoots })));
      for (const parent of parents) {
        db.putSync(key(CHILD, parent, seqBytes, id), k().EMPTY);
        this.#removeTip(db, parent);
      }
      if (first(db, key(CHILD, id), after(key(CHILD, id))) === undefined) this.#addTip(db, id, seq);
      for (const index of indexes) db.putSync(key(INDEX, Uint8Array.of(index.length), index, seqBytes), Buffer.from(id));

      if (mutation !== undefined && spending !== undefined && transaction !== undefined && consumed !== undefined) {
        consumed.forEach((outputId, i) => {
          const record = spending.records[i]!;
          db.putSync(key(SPENT, outputId), Buffer.from(encodeSpent(transaction, id, undefined)));
          const address = record.output.address.address;
          db.removeSync(key(ADDRESS_UNSPENT, address, u64(record.seq), outputId));
          db.putSync(key(ADDRESS_SPENT, address, u64(record.seq), outputId), Buffer.from([record.output.type]));
        });
        mutation.created.forEach((output, index) => {
          const outputId = new Uint8Array(34);
          outputId.set(transaction, 0);
          outputId[32] = index & 0xff;
          outputId[33] = index >>> 8;
          this.#putOutput(db, outputId, { messageId: id, seq: seq * OUTPUTS_PER_SEQ + index, milestoneIndexBooked: undefined, output });
        });
        this.#addBalances(db, spending.deltas);
      }
      if (milestone !== undefined) this.#confirm(db, milestone);
      return { stored: true };
    });
  }

  #putOutput(db: Db, outputId: Uint8Array, record: StoredOutput): void {
    db.putSync(key(OUTPUT, outputId), Buffer.from(encodeOutput(record)));
    db.putSync(key(ADDRESS_UNSPENT, record.output.address.address, u64(record.seq), outputId), Buffer.from([record.output.type]));
  }

  #balanceIn(db: Db, address: Uint8Array): AddressBalance {
    const raw = db.get(key(BALANCE, address));
    return raw === undefined ? EMPTY_BALANCE : decodeBalance(raw);
  }

  #addBalances(db: Db, deltas: Map<string, BalanceDelta>): void {
    for (const d of deltas.values()) {
      const k = key(BALANCE, d.address);
      const balance = addBalance(this.#balanceIn(db, d.address), d);
      if (balance.balance === 0 && balance.dustAllowance === 0 && balance.dustOutputs === 0) db.removeSync(k);
      else db.putSync(k, Buffer.from(encodeBalance(balance)));
    }
  }

  #tipCount(db: Db): number {
    return readU64(viewOf(db.get(k().TIP_COUNT)!), 0);
  }

  #addTip(db: Db, id: Uint8Array, seq: number): void {
    const seqBytes = u64(seq);
    db.putSync(key(TIP, id), Buffer.from(seqBytes));
    db.putSync(key(TIP_AGE, seqBytes, id), k().EMPTY);
    let count = this.#tipCount(db) + 1;
    if (count > this.#maxTips) {
      const oldest = first(db, Buffer.from([TIP_AGE]), Buffer.from([TIP_AGE + 1]));
      if (oldest !== undefined) {
        db.removeSync(oldest);
        db.removeSync(key(TIP, oldest.subarray(9)));
        count--;
      }
    }
    db.putSync(k().TIP_COUNT, Buffer.from(u64(count)));
  }

  #removeTip(db: Db, id: Uint8Array): void {
    const tipKey = key(TIP, id);
    const seq = db.get(tipKey);
    if (seq === undefined) return;
    db.removeSync(tipKey);
    db.removeSync(key(TIP_AGE, seq, id));
    db.putSync(k().TIP_COUNT, Buffer.from(u64(this.#tipCount(db) - 1)));
  }

  #confirm(db: Db, milestone: MilestoneApplication): void {
    for (const r of milestone.referenced) {
      const k = key(METADATA, fromHex(r.messageId, "referenced.messageId", 32));
      const raw = db.get(k);
      if (raw === undefined) continue;
      const { seq, metadata } = decodeMetadata(raw);
      const updated: MessageMetadata = {
        ...metadata,
        referencedByMilestoneIndex: milestone.index,
        ledgerInclusionState: r.ledgerInclusionState,
        conflictReason: r.conflictReason,
        milestoneIndex: r.messageId.toLowerCase() === milestone.messageId.toLowerCase() ? milestone.index : metadata.milestoneIndex,
      };
      db.putSync(k, Buffer.from(encodeMetadata(seq, updated)));
    }
    const created = milestone.createdOutputs.map((o) => fromHex(o, "createdOutputs", 34));
    const consumed = milestone.consumedOutputs.map((o) => fromHex(o, "consumedOutputs", 34));
    for (const o of created) {
      const k = key(OUTPUT, o);
      const raw = db.get(k);
      if (raw !== undefined) db.putSync(k, Buffer.from(encodeOutput({ ...decodeOutput(raw), milestoneIndexBooked: milestone.index })));
    }
    for (const o of consumed) {
      const k = key(SPENT, o);
      const raw = db.get(k);
      if (raw !== undefined) db.putSync(k, Buffer.from(encodeSpent(raw.subarray(0, 32), raw.subarray(32, 64), milestone.index)));
    }
    const index = u32(milestone.index);
    db.putSync(key(MILESTONE, index), Buffer.from(encodeMilestone(fromHex(milestone.messageId, "milestone.messageId", 32), milestone.timestamp)));
    db.putSync(key(UTXO_CHANGES, index), Buffer.from(encodeOutputIdLists([created, consumed])));
  }

  #latestIn(db: Db): MilestoneRecord | undefined {
    const entry = last(db, Buffer.from([MILESTONE]), Buffer.from([MILESTONE + 1]));
    return entry === undefined ? undefined : milestoneRecord(entry.key, entry.value);
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    const raw = this.#read().get(key(MESSAGE, fromHex(id, "id", 32)));
    if (raw === undefined) return undefined;
    const bytes = plain(raw);
    return { id: id.toLowerCase(), bytes, message: decodeMessage(bytes) };
  }

  async has(id: string): Promise<boolean> {
    return this.#read().doesExist(key(MESSAGE, fromHex(id, "id", 32)));
  }

  async metadata(id: string): Promise<MessageMetadata | undefined> {
    const raw = this.#read().get(key(METADATA, fromHex(id, "id", 32)));
    return raw === undefined ? undefined : decodeMetadata(raw).metadata;
  }

  async children(id: string, max: number): Promise<string[]> {
    const db = this.#read();
    const start = key(CHILD, fromHex(id, "id", 32));
    const out: string[] = [];
    if (max <= 0) return out;
    for (const k of db.getKeys({ start, end: after(start), limit: max })) out.push(toHex(k.subarray(41)));
    return out;
  }

  async findByIndex(index: Uint8Array, max = 1000): Promise<string[]> {
    const db = this.#read();
    const start = key(INDEX, Uint8Array.of(index.length), index);
    const out: string[] = [];
    if (max <= 0) return out;
    for (const { value } of db.getRange({ start: after(start), end: start, reverse: true, limit: max })) out.push(toHex(value));
    return out.reverse();
  }

  /**
   * Up to `max` tips from a random point of the (bounded) tip set, wrapping around: O(max), not O(tips), and every
   * tip can be picked, as tip selection needs.
   */
  async tips(max: number): Promise<string[]> {
    const db = this.#read();
    if (max <= 0) return [];
    const prefix = Buffer.from([TIP]);
    const end = Buffer.from([TIP + 1]);
    const pivot = key(TIP, globalThis.crypto.getRandomValues(new Uint8Array(32)));
    const out: string[] = [];
    for (const k of db.getKeys({ start: pivot, end, limit: max })) out.push(toHex(k.subarray(1)));
    if (out.length < max) for (const k of db.getKeys({ start: prefix, end: pivot, limit: max - out.length })) out.push(toHex(k.subarray(1)));
    return out;
  }

  /** Every current tip, in key order (for inspection and tests). */
  allTips(): string[] {
    const out: string[] = [];
    for (const k of this.#read().getKeys({ start: Buffer.from([TIP]), end: Buffer.from([TIP + 1]) })) out.push(toHex(k.subarray(1)));
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The UTXO ledger

  async output(outputId: string): Promise<OutputRecord | undefined> {
    const db = this.#read();
    const id = fromHex(outputId, "outputId", 34);
    const raw = db.get(key(OUTPUT, id));
    if (raw === undefined) return undefined;
    const record = decodeOutput(raw);
    const spent = db.get(key(SPENT, id));
    const transactionId = toHex(id.subarray(0, 32));
    return {
      outputId: toHex(id),
      transactionId,
      outputIndex: id[32]! | (id[33]! << 8),
      messageId: toHex(record.messageId),
      output: record.output,
      ...(record.milestoneIndexBooked !== undefined ? { milestoneIndexBooked: record.milestoneIndexBooked } : {}),
      ...(spent !== undefined ? { spent: decodeSpent(spent, toHex) } : {}),
    };
  }

  async addressOutputs(address: Uint8Array, query: AddressOutputsQuery): Promise<string[]> {
    const db = this.#read();
    const out: string[] = [];
    const scan = (prefix: number): void => {
      const start = key(prefix, address);
      for (const { key: k, value } of db.getRange({ start, end: after(start) })) {
        if (out.length >= query.max) return;
        if (query.type !== undefined && value[0] !== query.type) continue;
        out.push(toHex(k.subarray(1 + address.length + 8)));
      }
    };
    if (query.max <= 0) return out;
    scan(ADDRESS_UNSPENT);
    if (query.includeSpent === true) scan(ADDRESS_SPENT);
    return out;
  }

  async addressBalance(address: Uint8Array): Promise<AddressBalance> {
    return this.#balanceIn(this.#read(), address);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Milestones

  async milestone(index: number): Promise<MilestoneRecord | undefined> {
    if (!Number.isInteger(index) || index < 0 || index >= 0xffffffff) return undefined;
    const k = key(MILESTONE, u32(index));
    const raw = this.#read().get(k);
    return raw === undefined ? undefined : milestoneRecord(k, raw);
  }

  async latestMilestone(): Promise<MilestoneRecord | undefined> {
    return this.#latestIn(this.#read());
  }

  async utxoChanges(index: number): Promise<UtxoChanges | undefined> {
    if (!Number.isInteger(index) || index < 0 || index >= 0xffffffff) return undefined;
    const raw = this.#read().get(key(UTXO_CHANGES, u32(index)));
    if (raw === undefined) return undefined;
    const [created, consumed] = decodeOutputIdLists(raw, 2) as [Uint8Array[], Uint8Array[]];
    return { index, createdOutputs: created.map(toHex), consumedOutputs: consumed.map(toHex) };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Prove-ownership and JWT state

  async redeemNonce(nonce: string, expiresAt: number): Promise<boolean> {
    this.#read();
    const k = hashedText(NONCE, nonce);
    return this.#write(() => {
      const db = this.#db!;
      if (db.doesExist(k)) return false;
      db.putSync(k, f64(expiresAt));
      return true;
    });
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    this.#read();
    const k = hashedText(REVOKED, jti);
    await this.#write(() => {
      const db = this.#db!;
      const raw = db.get(k);
      db.putSync(k, f64(Math.max(expiresAt, raw === undefined ? 0 : viewOf(raw).getFloat64(0))));
    });
  }

  async isTokenRevoked(jti: string): Promise<boolean> {
    return this.#read().doesExist(hashedText(REVOKED, jti));
  }

  async secret(name: string, create: () => Uint8Array): Promise<Uint8Array> {
    const k = key(SECRET, text.encode(name));
    const stored = this.#read().get(k);
    if (stored !== undefined) return plain(stored);
    // Created outside the lock; the write keeps whichever value landed first, here or in another process.
    const candidate = create().slice();
    return this.#write(() => {
      const db = this.#db!;
      const existing = db.get(k);
      if (existing !== undefined) return plain(existing);
      db.putSync(k, Buffer.from(candidate));
      return candidate;
    });
  }

  async sweep(now: number): Promise<void> {
    this.#read();
    await this.#write(() => {
      const db = this.#db!;
      for (const prefix of [NONCE, REVOKED]) {
        const expired: Buffer[] = [];
        for (const { key: k, value } of db.getRange({ start: Buffer.from([prefix]), end: Buffer.from([prefix + 1]) })) {
          if (viewOf(value).getFloat64(0) < now) expired.push(Buffer.from(k));
        }
        for (const k of expired) db.removeSync(k);
      }
    });
  }
}

function f64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeDoubleBE(value, 0);
  return out;
}

function milestoneRecord(k: Uint8Array, value: Uint8Array): MilestoneRecord {
  const v = viewOf(value);
  return { index: viewOf(k).getUint32(1), messageId: toHex(value.subarray(0, 32)), timestamp: readU64(v, 32) };
}

function first(db: Db, start: Buffer, end: Buffer): Buffer | undefined {
  for (const k of db.getKeys({ start, end, limit: 1 })) return Buffer.from(k);
  return undefined;
}

function last(db: Db, start: Buffer, end: Buffer): { key: Buffer; value: Buffer } | undefined {
  for (const entry of db.getRange({ start: end, end: start, reverse: true, limit: 1 })) return { key: Buffer.from(entry.key), value: entry.value };
  return undefined;
}


// LMDB's meta pages (pages 0 and 1), as lmdb-js's LMDB writes them: a 24-byte page header, then the magic, the format
// version, the map address and size, the free and main databases (48 bytes each, their root page last; the free
// database's first field holds the page size), the last page number and the transaction id.
const META_MAGIC = 0xbeefc0de;
const META_PAGE = { magic: 0x18, pageSize: 0x30, freeRoot: 0x58, mainRoot: 0x88, txnId: 0x98, end: 0xa0 } as const;
const NO_PAGE = 0xffffffffffffffffn;

/**
 * Refuses a data file LMDB would crash on rather than reject: LMDB trusts its file, and a file that is not one, or was
 * cut short, makes it read outside the file (a bus error or segmentation fault, not an error). Checks that a meta page
 * carries the magic and that the newest one's root pages lie inside the file: copy-on-write puts the newest root
 * among the last pages written, so a file cut short loses it. (The last-page counter is no measure: LMDB counts pages
 * it has not written yet, and a sound file can be shorter.) Damage inside the data pages is not detected.
 */
function checkDataFile(file: string): void {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined || stat.size === 0) return;
  const corrupt = (why: string): NodeError => new NodeError("STORE_CORRUPT", `the data file ${file} cannot be read as a store: ${why}`);
  const head = Buffer.alloc(Math.min(stat.size, 2 * 65536));
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  const metaAt = (offset: number): { pageSize: number; roots: bigint[]; txnId: bigint } | undefined => {
    if (offset + META_PAGE.end > head.length || head.readUInt32LE(offset + META_PAGE.magic) !== META_MAGIC) return undefined;
    return {
      pageSize: head.readUInt32LE(offset + META_PAGE.pageSize),
      roots: [head.readBigUInt64LE(offset + META_PAGE.freeRoot), head.readBigUInt64LE(offset + META_PAGE.mainRoot)].filter((page) => page !== NO_PAGE),
      txnId: head.readBigUInt64LE(offset + META_PAGE.txnId),
    };
  };
  const first = metaAt(0);
  const pageSize = first?.pageSize ?? 4096;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw corrupt(`implausible page size ${pageSize}`);
  const metas = [first, metaAt(pageSize)].filter((m) => m !== undefined);
  if (metas.length === 0) throw corrupt("it is not an LMDB data file (no meta page)");
  const newest = metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
  const pages = BigInt(Math.floor(stat.size / pageSize));
  for (const root of newest.roots) if (root >= pages) throw corrupt(`it is truncated (${stat.size} bytes; its root page ${root} lies beyond them)`);
}

/** What a failure to open the environment means for the operator: a damaged file, or a directory LMDB cannot use. */
function openFailure(path: string, error: unknown): NodeError {
  const text = reason(error);
  if (/MDB_INVALID|MDB_CORRUPTED|MDB_VERSION_MISMATCH|MDB_PAGE_NOTFOUND|MDB_PANIC|not an LMDB file|Invalid argument/i.test(text)) {
    return new NodeError("STORE_CORRUPT", `the data directory ${path} cannot be read as a store (${text})`, { cause: error });
  }
  return new NodeError("STORE_UNAVAILABLE", `cannot open the data directory ${path}: ${text}`, { cause: error });
}
