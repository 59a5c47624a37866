// The embedded engine of the storage contract: one LMDB environment in a directory (lmdb-js, whose binary ships in a
// registry package), laid out as Hornet lays out its key-value store: a one-byte prefix per kind of record and keys
// ordered so that every lookup is a point read or a range scan. Reads are synchronous on LMDB's memory map; each write
// is all or nothing inside the LMDB transaction lmdb-js batches the writes in flight into (a nested transaction, or,
// for the hot ones, accept of a message that carries no milestone and redeemNonce, every check before the first write:
// see #writeFlat), committed with fsync before its promise resolves; nonce redemptions that arrive while one commits
// wait and are committed together (Grouped). Several processes on one machine may open the same directory (LMDB's own
// locking).
//
// Key layout, schema version 4 (ids are raw bytes, seq numbers big-endian u64 so key order is arrival order):
//   00 name                          meta: schema version, network, ledger flag, next seq, next output seq
//                                    ("outputSeq"), pruning index ("pruning", u32), coordinator keys of a snapshot
//                                    ("coordinatorKeys", 32 bytes each)
//   01 messageId                     the message's record: its metadata (records.ts, METADATA_SIZE bytes), then its
//                                    canonical bytes. One record, so a message's write dirties one leaf page for
//                                    both (a commit's price is the pages it writes: README, "by page"), and a
//                                    metadata read is one point read. Confirmation rewrites it whole: measured for a
//                                    milestone of 2,000 messages, 1,450 pages written at ~300 bytes and 6,460 at
//                                    ~8 KiB (overflow pages), against 60-360 with the confirmation fields in a record
//                                    of their own, which costs every metadata read a second point read (+35-65%)
//   03 parentId seq childId          children of a message, oldest first (empty value)
//   04 len index seq                 messages by indexation index, oldest first → messageId
//   07 outputId                      outputs of the confirmed ledger (records.ts), written by the milestone that
//                                    books them (genesis and snapshot outputs when the store is made)
//   08 outputId                      spent outputs → transactionId, messageId, milestone (confirmed spends only)
//   09 address outputSeq outputId    unspent outputs of an address → output type (outputSeq: booking order)
//   0a address outputSeq outputId    spent outputs of an address → output type
//   0b address                       balance, dust allowance, dust outputs
//   0c milestoneIndex (u32)          milestones → messageId, timestamp
//   0d milestoneIndex (u32)          UTXO changes of a milestone
//   0e blake2b(nonce)                redeemed prove-ownership nonces → expiry (f64 ms)
//   0f blake2b(jti)                  revoked JWT ids → expiry (f64 ms)
//   10 name                          shared secrets
//   11 seq messageId                 messages no milestone references yet, by arrival (empty value; written at accept,
//                                    removed at confirm): unreferenced(), and pruning finds the ones left behind
//   12 milestoneIndex (u32) msgId    messages a milestone referenced (empty value): pruning finds a milestone's cone,
//                                    a snapshot the entry points of the last milestones
//   13 messageId                     solid entry points → milestone index (u32), persisted when the store is made
//   14 outputId                      claims of submitted transactions → transactionId, messageId, the milestone index
//                                    when claimed (u32): written by accept (checkClaim), deleted when a milestone
//                                    spends the output or releases the claim
//   15 outputId                      pending outputs: what a claimed transaction would create (SpendClaim.created) →
//                                    messageId, the milestone index when recorded, the output (records.ts): written
//                                    by accept, deleted when a milestone books the output or finds its transaction
//                                    conflicting (discarded)
//   16 index (u32) kind outputId     claims (kind 14) and pending outputs (kind 15) by the milestone index they were
//                                    made at (empty value): written and deleted with their record, so that pruning
//                                    deletes the lapsed ones by a range delete in index order
// Schemas 1 and 2 kept the metadata apart, under 02 messageId; schema 1 also had no 11, 12, 13 or "pruning". Schemas 1
// to 3 moved the ledger at acceptance (outputs unbooked, spends without a milestone), kept a tip set (05 messageId →
// seq, 06 seq messageId, a "tips" count) and had no 14, 15 or 16. open() of an older store brings it to schema 4 in
// the same write (bounded chunks: #migrate); openExisting() (tools beside a node, which may be of that older version)
// refuses it.
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RootDatabase, Transaction } from "lmdb";
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex, toHex } from "../../bytes/hex.js";
import { blake2b256 } from "../../crypto/blake2b.js";
import { BELOW_MAX_DEPTH, TOTAL_SUPPLY } from "../../bytes/limits.js";
import { decodeMessage } from "../../model/codec.js";
import type { Message, Output } from "../../model/types.js";
import { NodeError } from "../errors.js";
import { addBalance, balanceDeltas, checkClaim, EMPTY_BALANCE, isDustOutput, milestoneDeltas, pendingOutputsOf, type BalanceDelta } from "../ledger.js";
import { Grouped, eachOnItsOwn } from "./grouped.js";
import { indexesOf, OUTPUTS_PER_SEQ, reason, storeClosed, storedMessage, storeTooNew } from "./common.js";
import {
  STORE_SCHEMA_VERSION,
  ZERO_MESSAGE_ID,
  type Acceptance,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type ClaimRecord,
  type EntryPoint,
  type GenesisOutput,
  type LedgerSnapshot,
  type MessageMetadata,
  type MilestoneApplication,
  type MilestoneRecord,
  type NodeStore,
  type OutputRecord,
  type PendingOutput,
  type PruneStep,
  type SnapshotOutput,
  type StoredMessage,
  type StoreOpenOptions,
  type StoreOpenResult,
  type StoreStats,
  type UtxoChanges,
} from "./contract.js";
import {
  decodeBalance,
  decodeClaim,
  decodeMetadata,
  decodeOutput,
  decodeOutputIdLists,
  decodePendingOutput,
  decodeSpent,
  encodeBalance,
  encodeClaim,
  encodeMetadata,
  encodeMilestone,
  encodeOutput,
  encodeOutputIdLists,
  encodePendingOutput,
  encodeSpent,
  METADATA_SIZE,
  NONE,
  OUTPUT_SIZE,
  PENDING_SIZE,
  SPENT_SIZE,
  getF64,
  getU32,
  getU64,
  setF64,
  setU64,
  u32,
  u64,
  type StoredOutput,
} from "./records.js";

const META = 0x00;
const MESSAGE = 0x01;
/** Schemas 1 and 2 only: metadata records, merged into the message's record by the migration. */
const METADATA = 0x02;
const CHILD = 0x03;
const INDEX = 0x04;
/** Schemas 1 to 3 only: the tip set, by id and by age, dropped by the migration (tips live in memory since). */
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
const UNREFERENCED = 0x11;
const REFERENCED = 0x12;
const ENTRY_POINT = 0x13;
const CLAIM = 0x14;
const PENDING = 0x15;
const MADE_AT = 0x16;

const text = new TextEncoder();
const metaKey = (name: string): Buffer => key(META, text.encode(name));

// Built on first use, not at import: chrysalis-core/node is imported in browsers too, where Buffer does not exist.
let constants: { EMPTY: Buffer; SCHEMA: Buffer; NETWORK: Buffer; LEDGER: Buffer; SEQ: Buffer; OUTPUT_SEQ: Buffer; TIP_COUNT: Buffer; PRUNING: Buffer; COORDINATOR_KEYS: Buffer } | undefined;
function k(): NonNullable<typeof constants> {
  return (constants ??= {
    EMPTY: Buffer.alloc(0),
    SCHEMA: metaKey("schema"),
    NETWORK: metaKey("network"),
    LEDGER: metaKey("ledger"),
    SEQ: metaKey("seq"),
    OUTPUT_SEQ: metaKey("outputSeq"),
    /** Schemas 1 to 3 only: how many tips the tip set held. */
    TIP_COUNT: metaKey("tips"),
    PRUNING: metaKey("pruning"),
    COORDINATOR_KEYS: metaKey("coordinatorKeys"),
  });
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

/** A big-endian u64 (a number below 2^53) in a Buffer of its own (records.ts's encoding), for a value or a key part. */
function be64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  setU64(out, 0, value);
  return out;
}

/** The 16 entry of the claim (kind CLAIM) or pending output (kind PENDING) of `outputId` made at milestone `index`. */
function madeAtKey(index: number, kind: number, outputId: Uint8Array): Buffer {
  return key(MADE_AT, u32(index), Uint8Array.of(kind), outputId);
}

/** The milestone index a claim (14) or pending output (15) record was made at; undefined for a record too short to
 * hold it (damage, which verify reports). */
function madeAt(kind: number, record: Uint8Array): number | undefined {
  const [at, size] = kind === CLAIM ? [64, SPENT_SIZE] : [32, PENDING_SIZE];
  return record.length === size ? getU32(record, at) : undefined;
}

/**
 * Deletes the claim (kind CLAIM) or pending output (kind PENDING) of `outputId`, with its 16 entry, in the caller's
 * write; a claim only when `heldBy` is unset or its transaction. Reads the record for the index its entry is under.
 */
function dropMade(db: Db, kind: number, outputId: Uint8Array, heldBy?: string): void {
  const recordKey = key(kind, outputId);
  const record = db.get(recordKey);
  if (record === undefined) return;
  if (heldBy !== undefined && toHex(record.subarray(0, 32)) !== heldBy.toLowerCase()) return;
  db.removeSync(recordKey);
  const index = madeAt(kind, record);
  if (index !== undefined) db.removeSync(madeAtKey(index, kind, outputId));
}

/**
 * The bytes of the message whose record is under `k`, copied out of lmdb-js's reusable read buffer (getBinaryFast: its
 * `length` is the value's) into Node's Buffer pool, its metadata left behind. db.get copies a value into an ArrayBuffer
 * of its own, which for a message costs 1-2 µs more (micro: 1.6-3.4 µs against 0.7-1.0 µs for 180 bytes), on every
 * message read.
 */
function copiedMessageBytes(db: Db, k: Buffer): Buffer | undefined {
  const fast = db.getBinaryFast(k);
  if (fast === undefined) return undefined;
  const out = Buffer.allocUnsafe(Math.max(0, fast.length - METADATA_SIZE));
  out.set(fast.subarray(METADATA_SIZE, fast.length));
  return out;
}

/** A message's record (01): its metadata, then its canonical bytes. */
function messageRecord(metadata: Uint8Array, bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(METADATA_SIZE + bytes.length);
  out.set(metadata, 0);
  out.set(bytes, METADATA_SIZE);
  return out;
}

/** The canonical bytes in a message's record (01), after its metadata: a view, no copy. */
function recordBytes(record: Uint8Array): Uint8Array {
  return plain(record.subarray(METADATA_SIZE));
}

/** The metadata at the start of a message's record; undefined for none, or for a record too short to hold it (damage,
 * which verify reports). */
function recordMetadata(record: Uint8Array | undefined): { seq: number; metadata: MessageMetadata } | undefined {
  return record === undefined || record.length < METADATA_SIZE ? undefined : decodeMetadata(record);
}

/** A view on a Buffer lmdb-js returned (each read is its own copy), as a plain Uint8Array. */
function plain(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

// A nonce or token id is hashed from its UTF-8 bytes, written into this scratch space when they fit (at most three
// bytes per UTF-16 unit): TextEncoder.encode makes a new ArrayBuffer per call, on every login and every submission.
const textScratch = new Uint8Array(768);
function hashedText(prefix: number, value: string): Buffer {
  if (value.length * 3 > textScratch.length) return key(prefix, blake2b256(text.encode(value)));
  const { written } = text.encodeInto(value, textScratch);
  return key(prefix, blake2b256(textScratch.subarray(0, written)));
}

/** Where an LmdbStore keeps its files, and the entry points a new store starts from. */
export interface LmdbStoreOptions {
  /** The data directory (created when missing); LMDB keeps data.mdb and lock.mdb in it. */
  path: string;
  /** Solid entry points (ids that count as known parents), persisted when a store is made without a snapshot (or
   * migrated from schema 1); a store that exists uses the ones it persisted. Default: the all-zero message id. */
  entryPoints?: string[];
}

type Db = RootDatabase<Buffer, Buffer>;

/**
 * The embedded engine, the node's default: LMDB in one directory (`--data-dir`), with synchronous reads from its memory
 * map. Choose it for a node on one machine; several processes there may share the directory, but not hear each other.
 */
export class LmdbStore implements NodeStore {
  readonly engine = "lmdb";
  /** The constructor's entry points until the store opens, then the ones the store persisted when it was made. */
  readonly entryPoints: ReadonlyMap<string, number>;
  /** The absolute data directory. */
  readonly path: string;
  // The same map as `entryPoints`, refilled in place at open so that whoever holds the public one sees the store's.
  readonly #entryPoints: Map<string, number>;
  #db: Db | undefined;
  #env: Promise<Db> | undefined;
  #closed = false;
  /** What close() does, once: a second call waits for the same. */
  #closing: Promise<void> | undefined;
  /** Set while compact() swaps the data file: reads and writes are refused rather than sent to a file being replaced. */
  #compacting = false;
  /** Writes in flight, so compact() can wait for them before it copies. */
  readonly #writes = new Set<Promise<unknown>>();
  /** Nonce redemptions wait for the one in flight and are committed together (see Grouped). */
  readonly #redemptions = new Grouped<() => Promise<boolean>, boolean>(eachOnItsOwn);
  /** The older schema version of a store openExisting opened for revocations only (it migrates nothing). */
  #olderSchema: number | undefined;
  /** The latest milestone record found last, with its key and the next index's (see latestMilestone). */
  #latest: { readonly record: MilestoneRecord; readonly key: Buffer; readonly nextKey: Buffer } | undefined;

  constructor(options: LmdbStoreOptions | string) {
    const o = typeof options === "string" ? { path: options } : options;
    this.path = resolve(o.path);
    this.#entryPoints = new Map((o.entryPoints ?? [ZERO_MESSAGE_ID]).map((id) => [id.toLowerCase(), 0]));
    this.entryPoints = this.#entryPoints;
  }

  /** Opens the environment (once) and creates the store in it, or checks the one it holds. */
  async open(options: StoreOpenOptions): Promise<StoreOpenResult> {
    if (this.#closed) throw storeClosed();
    // Checked before the directory is touched: a snapshot of another network creates nothing.
    if (options.snapshot !== undefined && options.snapshot.network !== options.network) {
      throw new NodeError("STORE_WRONG_NETWORK", `the snapshot is of network ${options.snapshot.network}, not ${options.network}`);
    }
    const first = this.#env === undefined;
    const db = await (this.#env ??= this.#openEnvironment().catch((error: unknown) => {
      this.#env = undefined;
      throw error;
    }));
    try {
      const result = await this.#write(() => this.#openIn(db, options), true);
      // Migrated if it was older: every operation is open to this instance now.
      this.#olderSchema = undefined;
      return result;
    } catch (error) {
      // A store that refused to open on its first try lets go of its files, so a failed start can exit.
      if (first) await this.#release();
      throw error instanceof NodeError && error.code !== "STORE_UNAVAILABLE" ? error : openFailure(this.path, error);
    }
  }

  /**
   * Opens a store that must exist already, whatever its network, and creates or migrates nothing: for tools working
   * beside a running node on its store (`chrysalis db stats|verify|compact`, `snapshot create`, `auth revoke`). Other
   * processes may have it open (LMDB's own locking). A store of an older schema is refused (STORE_UNAVAILABLE): a node
   * of that older version may be running on it, and would write on in its own layout (metadata apart from the message;
   * for schema 1, without the 11 and 12 entries pruning goes by). Only `revocationsOnly` opens one, for `auth revoke`,
   * whose record every schema has alike: then every operation but revokeToken and isTokenRevoked is refused the same
   * way.
   */
  async openExisting(options: { revocationsOnly?: boolean } = {}): Promise<StoreOpenResult> {
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
    const version = getU32(schema, 0);
    if (version > STORE_SCHEMA_VERSION) {
      throw storeTooNew(`the store at ${this.path}`, version, STORE_SCHEMA_VERSION);
    }
    if (version < STORE_SCHEMA_VERSION) {
      if (options.revocationsOnly !== true) throw olderSchema(this.path, version);
      this.#olderSchema = version;
    }
    this.#loadEntryPoints(db);
    return this.#existing(db);
  }

  /** What open() answers for a store that exists. */
  #existing(db: Db): StoreOpenResult {
    const keys = db.get(k().COORDINATOR_KEYS);
    return { created: false, ledger: db.get(k().LEDGER)?.[0] === 1, ...(keys !== undefined ? { coordinatorPublicKeys: splitKeys(keys) } : {}) };
  }

  /** Replaces the entry points with the ones the store persisted (a schema-1 store persisted none: kept as given). */
  #loadEntryPoints(db: Db): void {
    const persisted = new Map<string, number>();
    for (const { key: entryKey, value } of db.getRange({ start: Buffer.from([ENTRY_POINT]), end: Buffer.from([ENTRY_POINT + 1]) })) {
      persisted.set(toHex(entryKey.subarray(1)), getU32(value, 0));
    }
    if (persisted.size === 0) return;
    this.#entryPoints.clear();
    for (const [id, index] of persisted) this.#entryPoints.set(id, index);
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
        // full disk would crash the process); batching still happens for writes in flight together. Nor is there a
        // commitDelay: with lmdb-js 3.5.6 and these options, serve with a 1 ms delay logged "stopped" at SIGTERM and did
        // not exit, and a 2 ms delay (with event-turn batching) gathered more writes a commit for no less CPU a write.
        eventTurnBatching: false,
      });
      // LMDB creates its files with the process's umask (usually 0644): the secrets in data.mdb are the owner's alone.
      for (const file of ["data.mdb", "lock.mdb"]) {
        const path = join(this.path, file);
        const mode = statSync(path, { throwIfNoEntry: false })?.mode;
        if (mode !== undefined && (mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
      }
      // A read outside any write takes a slot in LMDB's reader table, which lmdb-js keeps (reset, not released) while
      // the environment is open: that is how compact() in another process sees that this one has the store open.
      this.#db.get(k().SCHEMA);
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
      const snapshot = options.snapshot;
      const ledger = snapshot !== undefined ? snapshot.ledger : options.genesis !== undefined;
      db.putSync(k().SCHEMA, Buffer.from(u32(STORE_SCHEMA_VERSION)));
      db.putSync(k().NETWORK, Buffer.from(text.encode(options.network)));
      db.putSync(k().LEDGER, Buffer.from([ledger ? 1 : 0]));
      let entryPoints: EntryPoint[] = [...this.#entryPoints].map(([messageId, index]) => ({ messageId, index }));
      let outputs = 0;
      let pruning = 0;
      if (snapshot !== undefined) {
        outputs = this.#applySnapshot(db, snapshot);
        pruning = snapshot.milestone === undefined ? 0 : Math.max(0, snapshot.milestone.index - 1);
        // A snapshot names what new messages may reference; one that names nothing (readSnapshot always names the
        // latest milestone's message, or the entry points the store began with) leaves the constructor's entry points,
        // so the new store can still take a first message.
        if (snapshot.entryPoints.length > 0) entryPoints = [...snapshot.entryPoints];
      } else if (options.genesis !== undefined) {
        this.#applyGenesis(db, options.genesis);
        outputs = options.genesis.length;
      }
      db.putSync(k().SEQ, Buffer.from(u64(1)));
      // The initial outputs took the output seqs below their count: the ones milestones book sort after them in an
      // address's lists, oldest first.
      db.putSync(k().OUTPUT_SEQ, Buffer.from(u64(outputs)));
      db.putSync(k().PRUNING, Buffer.from(u32(pruning)));
      for (const { messageId, index } of entryPoints) db.putSync(key(ENTRY_POINT, fromHex(messageId, "entryPoints.messageId", 32)), Buffer.from(u32(index)));
      this.#loadEntryPoints(db);
      return { created: true, ledger, ...(snapshot !== undefined ? { coordinatorPublicKeys: snapshot.coordinatorPublicKeys.map((key) => key.toLowerCase()) } : {}) };
    }
    const version = getU32(schema, 0);
    if (version > STORE_SCHEMA_VERSION) {
      throw storeTooNew(`the store at ${this.path}`, version, STORE_SCHEMA_VERSION);
    }
    const network = Buffer.from(db.get(k().NETWORK) ?? k().EMPTY).toString("utf8");
    if (network !== options.network) {
      throw new NodeError("STORE_WRONG_NETWORK", `the store at ${this.path} was made for network ${network}, not ${options.network}`);
    }
    if (version < STORE_SCHEMA_VERSION) {
      // A process of the older version still open on the directory would go on reading and writing the old layout.
      const pids = otherProcesses(db);
      if (pids.length > 0) {
        throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} is at schema version ${version} and in use by another process (pid ${pids.join(", ")}); stop it before starting this version, which migrates the store`);
      }
      this.#migrate(db, version);
    }
    this.#loadEntryPoints(db);
    return this.#existing(db);
  }

  /**
   * Brings a store of schema 1, 2 or 3 to schema 4 inside the caller's write: the metadata joins the messages' records
   * (schemas 1 and 2: #mergeMetadata), then the ledger moves back to what confirmed milestones made it
   * (#ledgerAtConfirmation). Every range is read in chunks of MIGRATION_CHUNK records, each read whole by its own range
   * scan before any of it is written (a cursor is not left open across writes), so memory stays bounded whatever the
   * store holds, all in the one transaction. A record it cannot read is refused (STORE_CORRUPT): the transaction rolls
   * back and nothing is written. A crash before the commit leaves the old schema, migrated again next time.
   */
  #migrate(db: Db, version: number): void {
    if (version < 1 || version > 3) throw new NodeError("STORE_CORRUPT", `the store at ${this.path} has an unknown schema version ${version}`);
    if (version < 3) this.#mergeMetadata(db, version);
    this.#ledgerAtConfirmation(db);
    db.putSync(k().SCHEMA, Buffer.from(u32(STORE_SCHEMA_VERSION)));
  }

  /**
   * Schemas 1 and 2 → 3, in one scan of the metadata records (02): each joins its message's record (01: metadata, then
   * bytes) and goes. A schema-1 store also gets the entry every message is listed by (11: not referenced yet, 12:
   * referenced by its milestone), the entry points it was opened with as its persisted ones, and a pruning index of 0
   * (nothing pruned yet). A metadata record whose message is missing (damage verify named) has nothing to join and goes.
   * A metadata record of the wrong size, or a message with no metadata (which would be read as metadata and bytes it is
   * not), is refused.
   */
  #mergeMetadata(db: Db, version: number): void {
    const messages = db.getKeysCount({ start: Buffer.from([MESSAGE]), end: Buffer.from([MESSAGE + 1]) });
    let merged = 0;
    inChunks(db, METADATA, (chunk) => {
      for (const { key: metadataKey, value } of chunk) {
        if (value.length !== METADATA_SIZE) throw this.#unmigratable(`the metadata of ${toHex(metadataKey.subarray(1))} is ${value.length} bytes, not ${METADATA_SIZE}`);
      }
      for (const { key: metadataKey, value: metadata } of chunk) {
        const id = metadataKey.subarray(1);
        db.removeSync(metadataKey);
        const bytes = db.get(key(MESSAGE, id));
        if (bytes === undefined) continue;
        db.putSync(key(MESSAGE, id), messageRecord(metadata, bytes));
        merged++;
        if (version === 1) {
          const { seq, metadata: m } = decodeMetadata(metadata);
          const ref = m.referencedByMilestoneIndex;
          db.putSync(ref === undefined ? key(UNREFERENCED, u64(seq), id) : key(REFERENCED, u32(ref), id), k().EMPTY);
        }
      }
    });
    if (merged !== messages) {
      throw this.#unmigratable(`${messages - merged} of its ${messages} messages have no metadata (\`chrysalis db verify\` of the previous version names them)`);
    }
    if (version === 1) {
      if (first(db, Buffer.from([ENTRY_POINT]), Buffer.from([ENTRY_POINT + 1])) === undefined) {
        for (const [id, index] of this.#entryPoints) db.putSync(key(ENTRY_POINT, fromHex(id, "entryPoints", 32)), Buffer.from(u32(index)));
      }
      if (db.get(k().PRUNING) === undefined) db.putSync(k().PRUNING, Buffer.from(u32(0)));
    }
  }

  /**
   * Schema 3 → 4: undoes what schemas 1 to 3 did at acceptance and no milestone confirmed, so that the ledger is what
   * confirmed milestones made it (white-flag decides the rest when a milestone references those messages):
   * - the tip set goes (05, 06 and the "tips" count): tip selection keeps it in memory now;
   * - an output no milestone booked leaves the ledger, with its address entry and its spent record; an unspent one
   *   leaves its address's balance. It becomes a pending output (15, at the latest milestone index), so that a
   *   submission may still spend it as it could before (a chained spend); its spender, if any, holds a claim on it;
   * - a spend no milestone confirmed goes: its output returns to its address's unspent list and balance, and the
   *   spending transaction holds a claim on it (14, at the latest milestone index), so the API goes on refusing a
   *   second spend of it until a milestone settles it or the claim lapses;
   * - each claim and pending output is listed under that index (16), as accept lists them. Schemas 1 to 3 could not
   *   tell a submission from a peer's message, so every unconfirmed transaction is taken as submitted: a peer's spend
   *   holds its claim too (the API refuses a second spend of that output until it lapses);
   * - the next output seq starts above every output's (a message's seq × OUTPUTS_PER_SEQ + its index, below the next
   *   seq's).
   * Nothing else changes: messages, metadata, children, index, milestones, UTXO changes and confirmed outputs stay.
   */
  #ledgerAtConfirmation(db: Db): void {
    for (const prefix of [TIP, TIP_AGE]) inChunks(db, prefix, (chunk) => chunk.forEach((entry) => db.removeSync(entry.key)));
    db.removeSync(k().TIP_COUNT);
    const latest = this.#latestIn(db)?.index ?? 0;
    const claimOf = (id: Uint8Array, spent: Uint8Array): void => {
      db.putSync(key(CLAIM, id), Buffer.from(encodeClaim(spent.subarray(0, 32), spent.subarray(32, 64), latest)));
      db.putSync(madeAtKey(latest, CLAIM, id), k().EMPTY);
    };
    inChunks(db, OUTPUT, (chunk) => {
      const records = chunk.map(({ key: outputKey, value }) => {
        if (value.length !== OUTPUT_SIZE) throw this.#unmigratable(`the output ${toHex(outputKey.subarray(1))} is ${value.length} bytes, not ${OUTPUT_SIZE}`);
        return decodeOutput(value);
      });
      const unspent: Output[] = [];
      chunk.forEach(({ key: outputKey }, i) => {
        const record = records[i]!;
        if (record.milestoneIndexBooked !== undefined) return;
        const id = outputKey.subarray(1);
        const spentKey = key(SPENT, id);
        const spent = db.get(spentKey);
        if (spent !== undefined && spent.length !== SPENT_SIZE) throw this.#unmigratable(`the spent record of ${toHex(id)} is ${spent.length} bytes, not ${SPENT_SIZE}`);
        if (spent === undefined) unspent.push(record.output);
        db.removeSync(key(spent !== undefined ? ADDRESS_SPENT : ADDRESS_UNSPENT, record.output.address.address, u64(record.seq), id));
        db.removeSync(spentKey);
        db.removeSync(outputKey);
        db.putSync(key(PENDING, id), Buffer.from(encodePendingOutput(record.messageId, latest, record.output)));
        db.putSync(madeAtKey(latest, PENDING, id), k().EMPTY);
        if (spent !== undefined) claimOf(id, spent);
      });
      this.#addBalances(db, balanceDeltas(unspent, []));
    });
    inChunks(db, SPENT, (chunk) => {
      for (const { key: spentKey, value } of chunk) {
        if (value.length !== SPENT_SIZE) throw this.#unmigratable(`the spent record of ${toHex(spentKey.subarray(1))} is ${value.length} bytes, not ${SPENT_SIZE}`);
      }
      const returned: Output[] = [];
      for (const { key: spentKey, value } of chunk) {
        if (getU32(value, 64) !== NONE) continue;
        const id = spentKey.subarray(1);
        const raw = db.get(key(OUTPUT, id));
        // A spend of no stored output is damage the old verify named: left for verify to name again.
        if (raw === undefined) continue;
        const record = decodeOutput(raw);
        const address = record.output.address.address;
        db.removeSync(key(ADDRESS_SPENT, address, u64(record.seq), id));
        db.putSync(key(ADDRESS_UNSPENT, address, u64(record.seq), id), Buffer.from([record.output.type]));
        db.removeSync(spentKey);
        claimOf(id, value);
        returned.push(record.output);
      }
      this.#addBalances(db, balanceDeltas([], returned));
    });
    db.putSync(k().OUTPUT_SEQ, be64(getU64(db.get(k().SEQ)!, 0) * OUTPUTS_PER_SEQ));
  }

  #unmigratable(why: string): NodeError {
    return new NodeError("STORE_CORRUPT", `the store at ${this.path} cannot be migrated: ${why}`);
  }

  #applyGenesis(db: Db, genesis: readonly GenesisOutput[]): void {
    const zero = new Uint8Array(32);
    genesis.forEach(({ outputId, output }, i) => {
      const id = fromHex(outputId, "genesis.outputId", 34);
      this.#putOutput(db, id, { messageId: zero, seq: i, milestoneIndexBooked: 0, output });
    });
    this.#addBalances(db, balanceDeltas([], genesis.map((g) => g.output)));
  }

  /** Writes a snapshot's ledger, milestone and coordinator keys into a new store; returns how many outputs it had. */
  #applySnapshot(db: Db, snapshot: LedgerSnapshot): number {
    // A store without a ledger keeps no outputs, whatever the snapshot carries.
    const outputs = snapshot.ledger ? snapshot.outputs : [];
    outputs.forEach((o: SnapshotOutput, i) => {
      const id = fromHex(o.outputId, `snapshot.outputs[${i}].outputId`, 34);
      const messageId = fromHex(o.messageId, `snapshot.outputs[${i}].messageId`, 32);
      // An output of a snapshot written while the ledger moved at acceptance may be unbooked: the snapshot's milestone
      // is the first this ledger knows it by.
      const booked = o.milestoneIndexBooked ?? snapshot.milestone?.index ?? 0;
      this.#putOutput(db, id, { messageId, seq: i, milestoneIndexBooked: booked, output: o.output });
    });
    this.#addBalances(db, balanceDeltas([], outputs.map((o) => o.output)));
    const milestone = snapshot.milestone;
    if (milestone !== undefined) {
      db.putSync(key(MILESTONE, u32(milestone.index)), Buffer.from(encodeMilestone(fromHex(milestone.messageId, "snapshot.milestone.messageId", 32), milestone.timestamp)));
    }
    const keys = snapshot.coordinatorPublicKeys.map((hex, i) => fromHex(hex, `snapshot.coordinatorPublicKeys[${i}]`, 32));
    db.putSync(k().COORDINATOR_KEYS, Buffer.concat(keys));
    return outputs.length;
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#close());
  }

  async #close(): Promise<void> {
    this.#closed = true;
    await this.#env?.catch(() => undefined);
    // Calls from now on are refused (#read); the writes already made finish first, a redemption still waiting for its
    // group included (#settle tracks each from its call), rather than fail for a close that came after them.
    await Promise.allSettled([...this.#writes]);
    const db = this.#db;
    this.#db = undefined;
    if (db !== undefined) await db.close();
  }

  /** The open environment, for an operation of this store; `anySchema`: one a store of an older schema allows. */
  #read(anySchema = false): Db {
    if (this.#closed) throw storeClosed();
    if (this.#compacting) throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} is being compacted; try again later`);
    const db = this.#db;
    if (db === undefined) throw new NodeError("STORE_UNAVAILABLE", "the store is not open yet");
    if (this.#olderSchema !== undefined && !anySchema) throw olderSchema(this.path, this.#olderSchema);
    return db;
  }

  /**
   * Runs `body` in one abortable LMDB write transaction: a throw rolls back every write it made. Resolves once the
   * transaction is committed and synced. A failed commit (disk full, I/O error) writes nothing and is
   * STORE_UNAVAILABLE; the rule errors `body` throws come through as they are.
   */
  #write<T>(body: () => T, anySchema = false): Promise<T> {
    const db = this.#read(anySchema);
    return this.#settle(db.childTransaction(body));
  }

  /**
   * #write for a body that reads and checks everything before its first write and then only writes (gathered in a
   * Writes, or a single put): it runs in the batch's own LMDB transaction instead of a nested one, which costs less
   * (a nested transaction copies every page it touches and merges them back). It stays all or nothing: a throw before
   * the first write has written nothing, and a write that fails inside LMDB marks the whole transaction failed (LMDB
   * sets MDB_TXN_ERROR), so the batch's commit fails and none of it lands; the body can throw nowhere else.
   */
  #writeFlat<T>(body: () => T, groups?: Grouped<() => Promise<T>, T>): Promise<T> {
    const db = this.#read();
    return this.#settle(groups === undefined ? db.transaction(body) : groups.run(() => db.transaction(body)));
  }

  /** Awaits a write (tracked for compact()); a failure other than a rule's is STORE_UNAVAILABLE (see #write). */
  async #settle<T>(pending: Promise<T>): Promise<T> {
    this.#writes.add(pending);
    try {
      return await pending;
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      const commitError = (error as { commitError?: Promise<unknown> }).commitError;
      const cause = commitError === undefined ? error : await commitError.then(() => error, (e: unknown) => e);
      throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} could not write (${reason(cause)}); nothing was written, try again later`, { cause });
    } finally {
      this.#writes.delete(pending);
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
    const claim = acceptance.claim;
    const claimedBy = claim === undefined ? undefined : fromHex(claim.transactionId, "claim.transactionId", 32);
    const claimKeys = claim?.consumed.map((o, i) => key(CLAIM, fromHex(o, `claim.consumed[${i}]`, 34)));
    // The outputs the claimed transaction would create, kept as pending outputs (at an index known inside the write).
    const created = claim === undefined ? [] : pendingOutputsOf(claim, acceptance.id, 0).map((p) => ({ id: fromHex(p.outputId, "claim.created", 34), output: p.output }));
    const milestone = acceptance.milestone;
    const body = (w: Sink): AcceptResult => {
      const db = this.#db!;
      const messageKey = key(MESSAGE, id);
      if (db.doesExist(messageKey)) return { stored: false };
      // Every read and check first, the writes gathered meanwhile and made at the end (see #writeFlat). The latest
      // milestone is read only for a claim (the index it is made at) or a milestone (the next index).
      const latest = claim === undefined && milestone === undefined ? 0 : (this.#latestIn(db)?.index ?? 0);
      let claimed: ReadonlySet<string> = new Set();
      let held: (ClaimRecord | undefined)[] = [];
      if (claim !== undefined && claimKeys !== undefined) {
        const outputs = claimKeys.map((claimKey) => this.#outputIn(db, claimKey.subarray(1)));
        // A pending output is read only where the confirmed ledger holds none (a chained spend).
        const pending = claimKeys.map((claimKey, i) => (outputs[i] === undefined ? pendingIn(db, claimKey.subarray(1)) : undefined));
        held = claimKeys.map((claimKey) => {
          const raw = db.get(claimKey);
          return raw === undefined ? undefined : decodeClaim(raw, toHex);
        });
        claimed = new Set(checkClaim(claim, outputs, pending, held, latest));
      }
      // Each output not in the confirmed ledger already, with the index of the record it replaces (a reattachment).
      const pendingNow = created.filter(({ id: outputId }) => !db.doesExist(key(OUTPUT, outputId))).map((p) => {
        const before = db.get(key(PENDING, p.id));
        return { ...p, before: before === undefined ? undefined : madeAt(PENDING, before) };
      });
      if (milestone !== undefined) this.#checkMilestone(db, milestone, latest);

      const seq = getU64(db.get(k().SEQ)!, 0);
      w.put(k().SEQ, be64(seq + 1));
      const seqBytes = be64(seq);
      w.put(messageKey, messageRecord(encodeMetadata(seq, { arrivalTime: acceptance.arrivalTime, solid: true, coneRoots: acceptance.coneRoots }), bytes));
      for (const parent of parents) w.put(key(CHILD, parent, seqBytes, id), k().EMPTY);
      for (const index of indexes) w.put(key(INDEX, Uint8Array.of(index.length), index, seqBytes), Buffer.from(id));
      // Not referenced yet (a milestone in this same write moves it to 12 at once).
      w.put(key(UNREFERENCED, seqBytes, id), k().EMPTY);
      if (claim !== undefined && claimedBy !== undefined && claimKeys !== undefined) {
        const record = Buffer.from(encodeClaim(claimedBy, id, latest));
        claim.consumed.forEach((o, i) => {
          if (!claimed.has(o)) return;
          const claimKey = claimKeys[i]!;
          const outputId = claimKey.subarray(1);
          // A lapsed claim taken over (or this transaction's own, made at another index) leaves its old entry.
          const before = held[i]?.index;
          if (before !== undefined && before !== latest) w.remove(madeAtKey(before, CLAIM, outputId));
          w.put(claimKey, record);
          w.put(madeAtKey(latest, CLAIM, outputId), k().EMPTY);
        });
        for (const p of pendingNow) {
          if (p.before !== undefined && p.before !== latest) w.remove(madeAtKey(p.before, PENDING, p.id));
          w.put(key(PENDING, p.id), Buffer.from(encodePendingOutput(id, latest, p.output)));
          w.put(madeAtKey(latest, PENDING, p.id), k().EMPTY);
        }
      }
      return { stored: true };
    };
    // A coordinator's milestone is stored and confirmed in a nested transaction: its confirmation reads what it writes
    // (the message's record, outputs it creates and spends), and it comes once a milestone interval.
    if (milestone !== undefined) {
      return this.#write(() => {
        const result = body(direct(this.#db!));
        if (result.stored) this.#confirm(this.#db!, milestone);
        return result;
      });
    }
    return this.#writeFlat(() => {
      const w = new Writes();
      const result = body(w);
      w.apply(this.#db!);
      return result;
    });
  }

  async confirmMilestone(application: MilestoneApplication): Promise<void> {
    this.#read();
    const id = fromHex(application.messageId, "messageId", 32);
    await this.#write(() => {
      const db = this.#db!;
      this.#checkMilestone(db, application, this.#latestIn(db)?.index ?? 0);
      if (!db.doesExist(key(MESSAGE, id))) throw new ProtocolError("INVALID_ARGUMENT", `the message of milestone ${application.index} is not stored`, { path: "messageId" });
      this.#confirm(db, application);
    });
  }

  /** What confirming `milestone` needs of the store before anything is written: the next index after `latest`, and
   * every output it spends unspent in the ledger (or created earlier in its own walk). */
  #checkMilestone(db: Db, milestone: MilestoneApplication, latest: number): void {
    if (milestone.index !== latest + 1) throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${latest + 1})`);
    const created = new Set(milestone.created.map((o) => o.outputId.toLowerCase()));
    for (const { outputId } of milestone.consumed) {
      if (created.has(outputId.toLowerCase())) continue;
      const id = fromHex(outputId, "consumed.outputId", 34);
      const stored = db.doesExist(key(OUTPUT, id));
      if (!stored || db.doesExist(key(SPENT, id))) {
        throw new NodeError("STORE_CORRUPT", `milestone ${milestone.index} spends output ${outputId}, which the ledger ${stored ? "has spent" : "does not hold"}`);
      }
    }
  }

  /**
   * Applies a milestone that #checkMilestone passed, in the caller's nested transaction (it reads what it writes): the
   * metadata of every message it references (moved from 11 to 12), the outputs it creates (booked at its index, at
   * the next output seqs, in walk order) and spends (spent records, address lists; created and spent by it alike), the
   * balances, the claims it settles (of every output it spends, and the released ones still held by their
   * transaction), the pending outputs it settles (of every output it books, and the discarded ones), its record and
   * UTXO changes. Claims and pending outputs go with their 16 entries.
   */
  #confirm(db: Db, milestone: MilestoneApplication): void {
    const index = u32(milestone.index);
    for (const r of milestone.referenced) {
      const id = fromHex(r.messageId, "referenced.messageId", 32);
      const recordKey = key(MESSAGE, id);
      const raw = db.get(recordKey);
      const found = recordMetadata(raw);
      if (raw === undefined || found === undefined) continue;
      const { seq, metadata } = found;
      // Moved from the unreferenced list to the milestone's (or from an earlier milestone's, were it given again).
      const before = metadata.referencedByMilestoneIndex;
      db.removeSync(before === undefined ? key(UNREFERENCED, u64(seq), id) : key(REFERENCED, u32(before), id));
      db.putSync(key(REFERENCED, index, id), k().EMPTY);
      const updated: MessageMetadata = {
        ...metadata,
        referencedByMilestoneIndex: milestone.index,
        ledgerInclusionState: r.ledgerInclusionState,
        conflictReason: r.conflictReason,
        milestoneIndex: r.messageId.toLowerCase() === milestone.messageId.toLowerCase() ? milestone.index : metadata.milestoneIndex,
      };
      db.putSync(recordKey, messageRecord(encodeMetadata(seq, updated), recordBytes(raw)));
    }
    const created = milestone.created.map((o) => fromHex(o.outputId, "created.outputId", 34));
    const consumed = milestone.consumed.map((o) => fromHex(o.outputId, "consumed.outputId", 34));
    let outputSeq = getU64(db.get(k().OUTPUT_SEQ)!, 0);
    milestone.created.forEach((o, i) => {
      this.#putOutput(db, created[i]!, { messageId: fromHex(o.messageId, "created.messageId", 32), seq: outputSeq++, milestoneIndexBooked: milestone.index, output: o.output });
      dropMade(db, PENDING, created[i]!);
    });
    db.putSync(k().OUTPUT_SEQ, be64(outputSeq));
    for (const id of milestone.discarded) dropMade(db, PENDING, fromHex(id, "discarded", 34));
    milestone.consumed.forEach((o, i) => {
      const id = consumed[i]!;
      // Stored: #checkMilestone found it in the ledger, or it was created above.
      const record = decodeOutput(db.get(key(OUTPUT, id))!);
      const address = record.output.address.address;
      db.putSync(key(SPENT, id), Buffer.from(encodeSpent(fromHex(o.transactionId, "consumed.transactionId", 32), fromHex(o.messageId, "consumed.messageId", 32), milestone.index)));
      db.removeSync(key(ADDRESS_UNSPENT, address, u64(record.seq), id));
      db.putSync(key(ADDRESS_SPENT, address, u64(record.seq), id), Buffer.from([record.output.type]));
      dropMade(db, CLAIM, id);
    });
    for (const r of milestone.released) dropMade(db, CLAIM, fromHex(r.outputId, "released.outputId", 34), r.transactionId);
    this.#addBalances(db, milestoneDeltas(milestone.created, milestone.consumed));
    db.putSync(key(MILESTONE, index), Buffer.from(encodeMilestone(fromHex(milestone.messageId, "milestone.messageId", 32), milestone.timestamp)));
    db.putSync(key(UTXO_CHANGES, index), Buffer.from(encodeOutputIdLists([created, consumed])));
  }

  /** An output as the ledger holds it (output()), read in `db`'s current view. */
  #outputIn(db: Db, id: Uint8Array): OutputRecord | undefined {
    const raw = db.get(key(OUTPUT, id));
    if (raw === undefined) return undefined;
    const record = decodeOutput(raw);
    const spent = db.get(key(SPENT, id));
    return {
      outputId: toHex(id),
      transactionId: toHex(id.subarray(0, 32)),
      outputIndex: id[32]! | (id[33]! << 8),
      messageId: toHex(record.messageId),
      output: record.output,
      ...(record.milestoneIndexBooked !== undefined ? { milestoneIndexBooked: record.milestoneIndexBooked } : {}),
      ...(spent !== undefined ? { spent: decodeSpent(spent, toHex) } : {}),
    };
  }

  #putOutput(db: Db, outputId: Uint8Array, record: StoredOutput): void {
    db.putSync(key(OUTPUT, outputId), Buffer.from(encodeOutput(record)));
    db.putSync(key(ADDRESS_UNSPENT, record.output.address.address, u64(record.seq), outputId), Buffer.from([record.output.type]));
  }

  #balanceIn(db: Db, address: Uint8Array): AddressBalance {
    return balanceOf(db.get(key(BALANCE, address)));
  }

  #addBalances(db: Db, deltas: Map<string, BalanceDelta>): void {
    for (const d of deltas.values()) {
      const k = key(BALANCE, d.address);
      const balance = addBalance(balanceOf(db.get(k)), d);
      if (balance.balance === 0 && balance.dustAllowance === 0 && balance.dustOutputs === 0) db.removeSync(k);
      else db.putSync(k, Buffer.from(encodeBalance(balance)));
    }
  }

  /** The latest milestone in `db`'s current view (inside a write: the write's own): the one latestMilestone found last
   * while it is still the latest (two point reads, see there), else by a reverse range scan. */
  #latestIn(db: Db): MilestoneRecord | undefined {
    const known = this.#latest;
    if (known !== undefined && !db.doesExist(known.nextKey) && db.doesExist(known.key)) return known.record;
    const entry = last(db, Buffer.from([MILESTONE]), Buffer.from([MILESTONE + 1]));
    return entry === undefined ? undefined : milestoneRecord(entry.key, entry.value);
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    const raw = copiedMessageBytes(this.#read(), key(MESSAGE, fromHex(id, "id", 32)));
    if (raw === undefined) return undefined;
    return storedMessage(id.toLowerCase(), plain(raw));
  }

  async has(id: string): Promise<boolean> {
    return this.#read().doesExist(key(MESSAGE, fromHex(id, "id", 32)));
  }

  async metadata(id: string): Promise<MessageMetadata | undefined> {
    // Decoded in place from lmdb-js's reusable read buffer: only the metadata at the record's start is read.
    return recordMetadata(this.#read().getBinaryFast(key(MESSAGE, fromHex(id, "id", 32))))?.metadata;
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

  async unreferenced(max: number): Promise<string[]> {
    const db = this.#read();
    const out: string[] = [];
    if (!(max > 0)) return out;
    const limit = Number.isFinite(max) ? Math.ceil(max) : undefined;
    const range = { start: Buffer.from([UNREFERENCED + 1]), end: Buffer.from([UNREFERENCED]), reverse: true, ...(limit !== undefined ? { limit } : {}) };
    for (const k of db.getKeys(range)) out.push(toHex(k.subarray(9)));
    return out.reverse();
  }

  async claim(outputId: string): Promise<ClaimRecord | undefined> {
    const raw = this.#read().get(key(CLAIM, fromHex(outputId, "outputId", 34)));
    return raw === undefined ? undefined : decodeClaim(raw, toHex);
  }

  async pendingOutput(outputId: string): Promise<PendingOutput | undefined> {
    return pendingIn(this.#read(), fromHex(outputId, "outputId", 34));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The UTXO ledger

  async output(outputId: string): Promise<OutputRecord | undefined> {
    return this.#outputIn(this.#read(), fromHex(outputId, "outputId", 34));
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

  /**
   * Asked on every submission (max depth), so the record found last is kept and checked with two point reads instead
   * of a reverse range scan. Valid across processes sharing the store: milestone records form one contiguous run of
   * indexes (accept writes index latest + 1 only, MILESTONE_CONFLICT otherwise; a snapshot writes one into a new store;
   * pruning deletes the lowest one only, never the latest), and a record never changes once written. So while L is
   * stored and L + 1 is not, L is the latest. L + 1 is read first: were the two reads to see different states, L still
   * stored later means it was stored then, and pruning had not passed it. The record kept is one read here, outside
   * any write: a write's view may hold a milestone its batch never commits (and another process may then write that
   * index with another record), so writes check the record kept (#latestIn) but never keep one.
   */
  async latestMilestone(): Promise<MilestoneRecord | undefined> {
    const db = this.#read();
    const known = this.#latest;
    const record = this.#latestIn(db);
    if (record !== known?.record) {
      this.#latest = record === undefined ? undefined : { record: Object.freeze(record), key: key(MILESTONE, u32(record.index)), nextKey: key(MILESTONE, u32(record.index + 1)) };
    }
    return record;
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
    // One read, then one put (see #writeFlat), committed with the redemptions that arrive meanwhile (Grouped).
    return this.#writeFlat(() => {
      const db = this.#db!;
      if (db.doesExist(k)) return false;
      db.putSync(k, f64(expiresAt));
      return true;
    }, this.#redemptions);
  }

  // Revocations are the same record in every schema: the two are allowed on a store openExisting opened for them.
  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    this.#read(true);
    const k = hashedText(REVOKED, jti);
    await this.#write(() => {
      const db = this.#db!;
      const raw = db.get(k);
      db.putSync(k, f64(Math.max(expiresAt, raw === undefined ? 0 : getF64(raw, 0))));
    }, true);
  }

  async isTokenRevoked(jti: string): Promise<boolean> {
    return this.#read(true).doesExist(hashedText(REVOKED, jti));
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
          if (getF64(value, 0) < now) expired.push(Buffer.from(k));
        }
        for (const k of expired) db.removeSync(k);
      }
    });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Ageing: pruning, snapshots, statistics, verification, compaction

  async pruningIndex(): Promise<number> {
    return pruningIn(this.#read());
  }

  async prune(target: number, batch: number): Promise<PruneStep> {
    this.#read();
    const limit = Math.max(1, Math.floor(batch));
    return this.#write(() => {
      const db = this.#db!;
      const pruned = pruningIn(db);
      const latest = this.#latestIn(db)?.index ?? 0;
      const m = pruned + 1;
      // The latest milestone is never pruned: it is what max depth, claims and the coordinator's next milestone stand on.
      // (Written as !(m <= target) so that a NaN target stops rather than prunes everything.)
      if (!(m <= target) || m >= latest) return { pruningIndex: pruned, messages: 0, done: true };
      const record = db.get(key(MILESTONE, u32(m)));
      const milestoneId = record === undefined ? undefined : Buffer.from(record.subarray(0, 32));
      const victims = this.#pruneCandidates(db, m, milestoneId, limit);
      // Besides at most `limit` messages, a step deletes at most PRUNE_STEP_ENTRIES child entries (a message may be
      // named as parent by very many): no more victims once the bound is reached, and a victim whose children go past
      // it keeps its message until a later step has deleted the rest of them.
      let messages = 0;
      let entries = 0;
      let budget = PRUNE_STEP_ENTRIES;
      for (const victim of victims) {
        if (budget <= 0) break;
        const outcome = this.#pruneVictim(db, m, victim, budget);
        budget -= outcome.work;
        if (outcome.deleted) messages++;
        entries += outcome.entries;
      }
      // Then, in what is left of the batch, the claims and pending outputs made at m or before, oldest first: lapsed
      // for good (m is MIN_PRUNE_KEEP below the latest). A range of the 16 entries, not a scan of every claim.
      const lapsedEnd = key(MADE_AT, u32(m + 1));
      if (limit > messages) entries += pruneLapsed(db, lapsedEnd, limit - messages);
      // Finished in the same write when this step took the last of m's messages: one write less per milestone.
      let pruningIndex = pruned;
      if (this.#pruneCandidates(db, m, milestoneId, 1).length === 0 && first(db, Buffer.from([MADE_AT]), lapsedEnd) === undefined) {
        this.#finishMilestone(db, m);
        pruningIndex = m;
      }
      return { pruningIndex, messages, ...(entries > 0 ? { entries } : {}), done: pruningIndex >= target };
    });
  }

  /**
   * Up to `limit` messages milestone m's pruning deletes, each with the 11 or 12 entry it was found by (deleted with
   * it, so a step always makes progress even over a damaged record): first the messages never referenced that arrived
   * before m's own message, then the ones m referenced, m's own message last, since its seq is the bound of the first.
   */
  #pruneCandidates(db: Db, m: number, milestoneId: Buffer | undefined, limit: number): PruneVictim[] {
    const out: PruneVictim[] = [];
    const ownRecord = milestoneId === undefined ? undefined : recordMetadata(db.getBinaryFast(key(MESSAGE, milestoneId)));
    if (ownRecord !== undefined) {
      const bound = key(UNREFERENCED, u64(ownRecord.seq));
      for (const entry of db.getKeys({ start: Buffer.from([UNREFERENCED]), end: bound, limit })) {
        out.push({ id: Buffer.from(entry.subarray(9)), entry: Buffer.from(entry) });
      }
    }
    if (out.length >= limit) return out;
    const start = key(REFERENCED, u32(m));
    let own: PruneVictim | undefined;
    for (const entry of db.getKeys({ start, end: after(start), limit: limit - out.length + 1 })) {
      const victim = { id: Buffer.from(entry.subarray(5)), entry: Buffer.from(entry) };
      if (milestoneId !== undefined && victim.id.equals(milestoneId)) own = victim;
      else if (out.length < limit) out.push(victim);
    }
    if (out.length === 0 && own !== undefined) out.push(own);
    return out;
  }

  /**
   * Prunes one victim of milestone m's pruning, deleting at most `budget` of its child entries (as a parent). The 11
   * or 12 entry it was found by is trusted only as far as the metadata agrees: a 12 entry of m whose message another
   * milestone referenced, or an 11 entry whose message a milestone referenced (or that names another seq), is stale,
   * and only that entry goes, never the message. A message whose children go past the budget keeps its message, its
   * entry and the children left for a later step (each state between steps is consistent). Answers whether the
   * message went, the entries deleted without it, and the work done (keys deleted, roughly) against the budget.
   */
  #pruneVictim(db: Db, m: number, { id, entry }: PruneVictim, budget: number): { deleted: boolean; entries: number; work: number } {
    const record = db.get(key(MESSAGE, id));
    const decoded = recordMetadata(record);
    const ref = decoded?.metadata.referencedByMilestoneIndex;
    const current =
      decoded !== undefined &&
      (entry[0] === REFERENCED ? entry.readUInt32BE(1) === m && ref === m : ref === undefined && getU64(entry, 1) === decoded.seq);
    if (!current) {
      // Stale (or its message is not stored, which verify reports): the entry alone goes, so pruning moves on.
      db.removeSync(entry);
      return { deleted: false, entries: 1, work: 1 };
    }
    const asParent = key(CHILD, id);
    const childEntries: Buffer[] = [];
    for (const child of db.getKeys({ start: asParent, end: after(asParent), limit: budget + 1 })) childEntries.push(Buffer.from(child));
    if (childEntries.length > budget) {
      // More children than this step may delete: a chunk of them now, the rest and the message in later steps.
      for (const child of childEntries.slice(0, budget)) db.removeSync(child);
      return { deleted: false, entries: budget, work: budget };
    }
    for (const child of childEntries) db.removeSync(child);
    const { seq } = decoded;
    let message: Message | undefined;
    try {
      message = record === undefined ? undefined : decodeMessage(recordBytes(record));
    } catch {
      // Damaged bytes: the entries found through the message (children as a child, index) cannot be named; verify
      // reports such a message, and pruning must still move on.
    }
    db.removeSync(key(MESSAGE, id));
    const seqBytes = u64(seq);
    const parents = message?.parents ?? [];
    for (const parent of parents) db.removeSync(key(CHILD, parent, seqBytes, id));
    const indexes = message === undefined ? [] : indexesOf(message);
    for (const index of indexes) db.removeSync(key(INDEX, Uint8Array.of(index.length), index, seqBytes));
    db.removeSync(entry);
    return { deleted: true, entries: 0, work: 1 + childEntries.length };
  }

  /** The last write of milestone m's pruning: its record, its UTXO changes, the outputs it consumed; then index = m. */
  #finishMilestone(db: Db, m: number): void {
    const index = u32(m);
    const changes = db.get(key(UTXO_CHANGES, index));
    if (changes !== undefined) {
      const [, consumed] = decodeOutputIdLists(changes, 2) as [Uint8Array[], Uint8Array[]];
      for (const outputId of consumed) {
        const spentKey = key(SPENT, outputId);
        // Only a spent output goes: an unspent one is the ledger, never pruned (a consumed output is spent, but a
        // record that says otherwise is left alone rather than trusted).
        if (db.get(spentKey) === undefined) continue;
        const raw = db.get(key(OUTPUT, outputId));
        if (raw !== undefined) {
          const record = decodeOutput(raw);
          db.removeSync(key(ADDRESS_SPENT, record.output.address.address, u64(record.seq), outputId));
          db.removeSync(key(OUTPUT, outputId));
        }
        db.removeSync(spentKey);
      }
      db.removeSync(key(UTXO_CHANGES, index));
    }
    db.removeSync(key(MILESTONE, index));
    db.putSync(k().PRUNING, Buffer.from(index));
  }

  async readSnapshot(): Promise<LedgerSnapshot> {
    const db = this.#read();
    // One read transaction: every record below comes from the same committed state, whatever writers do meanwhile.
    return withReadTransaction(db, (t) => {
      const network = Buffer.from(db.get(k().NETWORK, t) ?? k().EMPTY).toString("utf8");
      const ledger = db.get(k().LEDGER, t)?.[0] === 1;
      const latestEntry = last(db, Buffer.from([MILESTONE]), Buffer.from([MILESTONE + 1]), t);
      const milestone = latestEntry === undefined ? undefined : milestoneRecord(latestEntry.key, latestEntry.value);
      const latestIndex = milestone?.index ?? 0;

      let coordinatorPublicKeys: string[] = [];
      if (milestone !== undefined) {
        const raw = db.get(key(MESSAGE, fromHex(milestone.messageId)), t);
        const payload = raw === undefined ? undefined : decodeMessage(recordBytes(raw)).payload;
        if (payload?.type === 1) coordinatorPublicKeys = payload.publicKeys.map((p) => toHex(p)).sort();
        else coordinatorPublicKeys = splitKeys(db.get(k().COORDINATOR_KEYS, t) ?? k().EMPTY);
      }

      // The store's own entry points still within reach, then every message the last BELOW_MAX_DEPTH milestones
      // referenced (their own messages among them), each with the index that referenced it.
      const entryPoints = new Map<string, number>();
      for (const { key: entryKey, value } of db.getRange({ start: Buffer.from([ENTRY_POINT]), end: Buffer.from([ENTRY_POINT + 1]), ...t })) {
        const index = getU32(value, 0);
        if (latestIndex - index < BELOW_MAX_DEPTH) entryPoints.set(toHex(entryKey.subarray(1)), index);
      }
      if (milestone !== undefined) entryPoints.set(milestone.messageId, milestone.index);
      const reach = key(REFERENCED, u32(Math.max(1, latestIndex - BELOW_MAX_DEPTH + 1)));
      for (const entry of db.getKeys({ start: reach, end: Buffer.from([REFERENCED + 1]), ...t })) entryPoints.set(toHex(entry.subarray(5)), entry.readUInt32BE(1));

      const outputs: SnapshotOutput[] = [];
      for (const { key: outputKey, value } of db.getRange({ start: Buffer.from([OUTPUT]), end: Buffer.from([OUTPUT + 1]), ...t })) {
        const id = outputKey.subarray(1);
        if (db.get(key(SPENT, id), t) !== undefined) continue;
        const record = decodeOutput(value);
        outputs.push({
          outputId: toHex(id),
          messageId: toHex(record.messageId),
          milestoneIndexBooked: record.milestoneIndexBooked ?? 0,
          output: record.output,
        });
      }
      return {
        network,
        ledger,
        ...(milestone !== undefined ? { milestone } : {}),
        coordinatorPublicKeys,
        // In id order, as every engine gives them, so snapshots of equal states are equal.
        entryPoints: [...entryPoints].map(([messageId, index]) => ({ messageId, index })).sort((a, b) => (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0)),
        outputs,
      };
    });
  }

  async stats(): Promise<StoreStats> {
    const db = this.#read();
    const counts = withReadTransaction(db, (t) => ({
      network: Buffer.from(db.get(k().NETWORK, t) ?? k().EMPTY).toString("utf8"),
      messages: db.getKeysCount({ start: Buffer.from([MESSAGE]), end: Buffer.from([MESSAGE + 1]), ...t }),
      // Every unspent output has exactly one entry in its address's unspent list.
      unspentOutputs: db.getKeysCount({ start: Buffer.from([ADDRESS_UNSPENT]), end: Buffer.from([ADDRESS_UNSPENT + 1]), ...t }),
      latestMilestoneIndex: last(db, Buffer.from([MILESTONE]), Buffer.from([MILESTONE + 1]), t)?.key.readUInt32BE(1) ?? 0,
      pruningIndex: pruningIn(db, t),
    }));
    return { engine: this.engine, ...counts, bytes: usedBytes(db), fileBytes: statSync(join(this.path, "data.mdb")).size };
  }

  async bytes(): Promise<number> {
    return usedBytes(this.#read());
  }

  async verify(): Promise<string | undefined> {
    const db = this.#read();
    return withReadTransaction(db, (t) => verifyIn(db, t));
  }

  /**
   * Rewrites data.mdb without its free pages (LMDB reuses freed pages but never gives them back to the file system):
   * a compacting copy (MDB_CP_COMPACT) into a directory beside it, synced, then renamed over data.mdb while the
   * environment is closed, and the environment opened again on the new file. Refused while another process has the
   * store open (a process keeps writing to the file it mapped, so its writes after the swap would be lost); reads and
   * writes of this store are refused while it runs.
   */
  async compact(): Promise<{
    /** data.mdb's size in bytes before, free pages included (StoreStats.fileBytes). */
    before: number;
    /** Its size after: the data alone, what StoreStats.bytes counted before. */
    after: number;
  }> {
    const db = this.#read();
    const refuseIfShared = (): void => {
      const pids = otherProcesses(db);
      if (pids.length > 0) {
        throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} is in use by another process (pid ${pids.join(", ")}); stop it before compacting`);
      }
    };
    refuseIfShared();
    const file = join(this.path, "data.mdb");
    const work = join(this.path, `compact-${process.pid}`);
    const before = statSync(file).size;
    this.#compacting = true;
    let closed = false;
    try {
      await Promise.allSettled([...this.#writes]);
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { mode: 0o700 });
      // lmdb-js copies into `<dir>/data.mdb` for an environment kept in a directory, as ours is.
      await db.backup(work, true);
      const copy = join(work, "data.mdb");
      fsyncPath(copy);
      // Again just before the swap: a process that opened the store during the copy would lose what it writes next.
      refuseIfShared();
      this.#db = undefined;
      this.#env = undefined;
      closed = true;
      await db.close();
      renameSync(copy, file);
      fsyncPath(this.path);
    } catch (error) {
      if (error instanceof NodeError) throw error;
      throw new NodeError("STORE_UNAVAILABLE", `the store at ${this.path} could not be compacted (${reason(error)}); it is unchanged`, { cause: error });
    } finally {
      rmSync(work, { recursive: true, force: true });
      this.#compacting = false;
      if (closed) await (this.#env = this.#openEnvironment());
    }
    return { before, after: statSync(file).size };
  }
}

/**
 * The child entries (a victim's, as a parent) one prune step deletes at most, besides its messages: a message named as
 * parent by very many children has them deleted over several steps, not in one write of unbounded size.
 */
const PRUNE_STEP_ENTRIES = 4096;

/**
 * Deletes up to `limit` of the 16 entries below `end` (claims and pending outputs made before that index), in index
 * order, each with the record it names while that record says the same index (else the entry is stale: it alone goes).
 * Answers how many entries went.
 */
function pruneLapsed(db: Db, end: Buffer, limit: number): number {
  const entries: Buffer[] = [];
  for (const entry of db.getKeys({ start: Buffer.from([MADE_AT]), end, limit })) entries.push(Buffer.from(entry));
  for (const entry of entries) {
    const kind = entry[5];
    if (entry.length === 40 && (kind === CLAIM || kind === PENDING)) {
      const recordKey = key(kind, entry.subarray(6));
      const record = db.get(recordKey);
      if (record !== undefined && madeAt(kind, record) === entry.readUInt32BE(1)) db.removeSync(recordKey);
    }
    db.removeSync(entry);
  }
  return entries.length;
}

/** The records of a range the migration (#migrate) reads before writing any of them (bounds its memory). */
const MIGRATION_CHUNK = 4096;

/**
 * Gives `body` the records under `prefix` in chunks of MIGRATION_CHUNK, each copied out whole before `body` writes:
 * `body` may delete or rewrite the records it was given (the next chunk starts after the last key read), and write
 * elsewhere.
 */
function inChunks(db: Db, prefix: number, body: (chunk: { key: Buffer; value: Buffer }[]) => void): void {
  const end = Buffer.from([prefix + 1]);
  let start = Buffer.from([prefix]);
  for (;;) {
    const chunk: { key: Buffer; value: Buffer }[] = [];
    for (const entry of db.getRange({ start, end, limit: MIGRATION_CHUNK })) chunk.push({ key: Buffer.from(entry.key), value: Buffer.from(entry.value) });
    if (chunk.length > 0) body(chunk);
    if (chunk.length < MIGRATION_CHUNK) return;
    // The least key after the last one read.
    start = Buffer.concat([chunk[chunk.length - 1]!.key, Buffer.from([0])]);
  }
}

/** A message pruning deletes, with the 11 or 12 key it was found by. */
interface PruneVictim {
  readonly id: Buffer;
  readonly entry: Buffer;
}

type ReadOptions = { transaction: Transaction };

/** Runs `body` in one LMDB read transaction (a consistent state while writers go on) and releases it. */
function withReadTransaction<T>(db: Db, body: (options: ReadOptions) => T): T {
  const transaction = db.useReadTransaction();
  try {
    return body({ transaction });
  } finally {
    transaction.done();
  }
}

function pruningIn(db: Db, options?: ReadOptions): number {
  const raw = db.get(k().PRUNING, options);
  return raw === undefined ? 0 : getU32(raw, 0);
}

/** Hex public keys from their concatenation (32 bytes each). */
function splitKeys(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let at = 0; at + 32 <= bytes.length; at += 32) out.push(toHex(bytes.subarray(at, at + 32)));
  return out;
}

/** What lmdb-js's getStats() returns (typed `{}` by the package): mdb_stat of the main database, mdb_env_info, and
 * mdb_stat of the free-page database. */
interface EnvStats {
  readonly pageSize: number;
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
  readonly free?: { readonly treeBranchPageCount: number; readonly treeLeafPageCount: number; readonly overflowPages: number };
}

/**
 * The bytes the data takes: (pages of the main B-tree + pages of the free-page B-tree + the 2 meta pages) × page size.
 * That is what a compacting copy would write, i.e. the file size `db compact` would reach; freed pages waiting for
 * reuse are not counted. Read from the B-trees' headers (mdb_stat, O(1)), so cheap enough for a scraped metric.
 * (LMDB's last page number is no measure: it counts freed pages too.)
 */
function usedBytes(db: Db): number {
  const stats = db.getStats() as EnvStats;
  const pages = (s: EnvStats["free"]): number => (s === undefined ? 0 : s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages);
  return (pages(stats) + pages(stats.free) + 2) * stats.pageSize;
}

/** Pids other than this one in LMDB's reader table, after dropping the slots of processes that died. */
function otherProcesses(db: Db): number[] {
  db.readerCheck();
  const pids = new Set<number>();
  // readerList() prints a header line, then one "pid thread txnid" line per slot (or "(no active readers)").
  for (const line of db.readerList().split("\n")) {
    const pid = Number.parseInt(line.trim().split(/\s+/)[0] ?? "", 10);
    if (Number.isInteger(pid) && pid !== process.pid) pids.add(pid);
  }
  return [...pids];
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The checks of NodeStore.verify over one read transaction, in key order, stopping at the first inconsistency: the
 * header; every message's record (its metadata, a seq below the next one, then bytes that hash to its id and decode)
 * and its index entries; no record of an older schema's layout left (metadata apart, the tip set); children and index
 * entries (at their message's seq) and 11/12 entries against the messages; every 11/12 entry against its message's
 * metadata, and every message listed by exactly one; no message or milestone at or below the pruning index, and every
 * milestone's message stored but at pruning index + 1 (a snapshot's); every output booked and every spend confirmed by
 * a milestone that exists, each output below the next output seq; outputs, spends and address lists against one
 * another; no claim on a spent output, each pending output not booked, both made at a milestone
 * that exists and listed under it by exactly one 16 entry (each entry naming a record made at its index); balances
 * against the unspent outputs; on a ledger store, the total supply. LMDB keeps no checksums of its own, so this is
 * where a damaged data page shows.
 */
function verifyIn(db: Db, t: ReadOptions): string | undefined {
  const range = (prefix: number): { start: Buffer; end: Buffer; transaction: Transaction } => ({ start: Buffer.from([prefix]), end: Buffer.from([prefix + 1]), ...t });
  // Most of verify's time goes into point reads; these read a record in place (see peek) instead of copying it out.
  const has = (k: Buffer): boolean => peek(db, k, t) !== undefined;
  const stored = (id: Uint8Array): boolean => has(key(MESSAGE, id));
  const metadataOf = (id: Uint8Array): { seq: number; metadata: MessageMetadata } | undefined => recordMetadata(peek(db, key(MESSAGE, id), t));

  for (const name of ["schema", "network", "ledger", "seq", "outputSeq", "pruning"]) {
    if (db.get(metaKey(name), t) === undefined) return `header: the "${name}" record is missing`;
  }

  // Seqs are given from the header's next one: a message at or above it would share its seq's entries with the next.
  const nextSeq = getU64(db.get(k().SEQ, t)!, 0);
  const pruned = pruningIn(db, t);
  // One pass over the messages (the largest range of all; its records are read once).
  for (const { key: k, value } of db.getRange(range(MESSAGE))) {
    const id = toHex(k.subarray(1));
    if (k.length !== 33) return `message key ${toHex(k)}: ${k.length - 1} bytes of id, expected 32`;
    if (value.length < METADATA_SIZE) return `message ${id}: its record is ${value.length} bytes, too short to hold its metadata (${METADATA_SIZE})`;
    const { seq, metadata } = decodeMetadata(value);
    if (seq >= nextSeq) return `message ${id}: at seq ${seq}, not below the header's next seq ${nextSeq}`;
    const bytes = recordBytes(value);
    const hash = toHex(blake2b256(bytes));
    if (hash !== id) return `message ${id}: its bytes hash to ${hash}`;
    let message: Message;
    try {
      message = decodeMessage(bytes);
    } catch (error) {
      return `message ${id}: its bytes do not decode (${reason(error)})`;
    }
    // Its index entries. (Not its child entries: pruning a parent deletes those under it in bounded steps, the parent
    // still stored until the last.)
    const seqBytes = value.subarray(0, 8);
    for (const index of indexesOf(message)) {
      if (!has(key(INDEX, Uint8Array.of(index.length), index, seqBytes))) return `message ${id}: no index entry under its index ${toHex(index)}`;
    }
    // Listed by its one 11 or 12 entry (checked against the metadata below), and gone if its milestone was pruned.
    const ref = metadata.referencedByMilestoneIndex;
    if (ref !== undefined && ref <= pruned) return `message ${id}: referenced by milestone ${ref}, at or below the pruning index ${pruned}, yet still stored`;
    const entry = ref === undefined ? key(UNREFERENCED, seqBytes, k.subarray(1)) : key(REFERENCED, u32(ref), k.subarray(1));
    if (!has(entry)) return `message ${id}: no ${ref === undefined ? "unreferenced entry" : `entry of milestone ${ref}`} lists it`;
  }
  // Schema 2 kept metadata apart; the migration merged every such record into its message's.
  const apart = first(db, Buffer.from([METADATA]), Buffer.from([METADATA + 1]), t);
  if (apart !== undefined) return `metadata of ${toHex(apart.subarray(1))}: a record apart from its message (an older schema's layout)`;
  // Schemas 1 to 3 kept a tip set; the migration dropped it.
  const tip = first(db, Buffer.from([TIP]), Buffer.from([TIP_AGE + 1]), t);
  if (tip !== undefined) return `tip entry ${toHex(tip)}: a record of the tip set an older schema kept`;
  if (db.get(k().TIP_COUNT, t) !== undefined) return `header: the "tips" record of an older schema is left`;
  for (const k of db.getKeys(range(CHILD))) {
    if (k.length !== 73) return `child entry ${toHex(k)}: ${k.length} bytes, expected 73`;
    const child = metadataOf(k.subarray(41));
    if (child === undefined) return `child entry ${toHex(k.subarray(1, 33))} → ${toHex(k.subarray(41))}: no message ${toHex(k.subarray(41))} is stored`;
    if (child.seq !== getU64(k, 33)) return `child entry ${toHex(k.subarray(1, 33))} → ${toHex(k.subarray(41))}: at seq ${getU64(k, 33)}, but message ${toHex(k.subarray(41))} has seq ${child.seq}`;
  }
  for (const { key: k, value } of db.getRange(range(INDEX))) {
    const length = k[1] ?? 0;
    const index = toHex(k.subarray(2, 2 + length));
    if (k.length !== 2 + length + 8) return `index entry ${toHex(k)}: ${k.length} bytes, expected ${2 + length + 8}`;
    const found = value.length === 32 ? metadataOf(value) : undefined;
    if (found === undefined) return `index entry ${index} → ${toHex(value)}: no message ${toHex(value)} is stored`;
    if (found.seq !== getU64(k, 2 + length)) return `index entry ${index} → ${toHex(value)}: at seq ${getU64(k, 2 + length)}, but message ${toHex(value)} has seq ${found.seq}`;
  }
  // The 11 and 12 entries are what pruning goes by: each must say what its message's metadata says (11: not referenced
  // yet, at its seq; 12: referenced by that milestone), and every message has its one entry. A stale one would make
  // pruning take a message of another milestone.
  for (const k of db.getKeys(range(UNREFERENCED))) {
    const id = toHex(k.subarray(9));
    if (k.length !== 41) return `unreferenced entry ${toHex(k)}: ${k.length} bytes, expected 41`;
    const found = metadataOf(k.subarray(9));
    if (found === undefined) return `unreferenced entry ${id}: no message ${id} is stored`;
    const ref = found.metadata.referencedByMilestoneIndex;
    if (ref !== undefined) return `unreferenced entry ${id}: message ${id} is referenced by milestone ${ref}`;
    const seq = getU64(k, 1);
    if (seq !== found.seq) return `unreferenced entry ${id}: at seq ${seq}, but message ${id} has seq ${found.seq}`;
  }
  for (const k of db.getKeys(range(REFERENCED))) {
    const index = k.readUInt32BE(1);
    const id = toHex(k.subarray(5));
    if (k.length !== 37) return `referenced entry ${toHex(k)}: ${k.length} bytes, expected 37`;
    const found = metadataOf(k.subarray(5));
    if (found === undefined) return `entry of milestone ${index} → ${id}: no message ${id} is stored`;
    const ref = found.metadata.referencedByMilestoneIndex;
    if (ref !== index) return `entry of milestone ${index} → ${id}: message ${id} is ${ref === undefined ? "not referenced by any milestone" : `referenced by milestone ${ref}`}`;
  }
  // A milestone's message may be missing only at pruning index + 1: a snapshot's milestone (or one being pruned).
  for (const { key: k, value } of db.getRange(range(MILESTONE))) {
    const index = k.readUInt32BE(1);
    if (index <= pruned) return `milestone ${index}: at or below the pruning index ${pruned}, yet still stored`;
    if (index > pruned + 1 && !stored(value.subarray(0, 32))) return `milestone ${index}: its message ${toHex(value.subarray(0, 32))} is not stored`;
  }

  // The ledger holds what confirmed milestones made it: every output booked, every spend confirmed, by a milestone no
  // later than the latest; each claim (the API's hint) on an unspent output or a pending one.
  const latest = last(db, Buffer.from([MILESTONE]), Buffer.from([MILESTONE + 1]), t)?.key.readUInt32BE(1) ?? 0;
  const nextOutputSeq = getU64(db.get(k().OUTPUT_SEQ, t)!, 0);
  // Outputs: each unspent one in its address's list, summed per address; each spend names a stored output.
  const balances = new Map<string, { balance: number; dustAllowance: number; dustOutputs: number }>();
  let supply = 0;
  for (const { key: k, value } of db.getRange(range(OUTPUT))) {
    const id = k.subarray(1);
    if (k.length !== 35) return `output key ${toHex(k)}: ${k.length - 1} bytes of id, expected 34`;
    if (value.length !== OUTPUT_SIZE) return `output ${toHex(id)}: ${value.length} bytes, expected ${OUTPUT_SIZE}`;
    const record = decodeOutput(value);
    const booked = record.milestoneIndexBooked;
    if (booked === undefined) return `output ${toHex(id)}: booked by no milestone`;
    if (booked > latest) return `output ${toHex(id)}: booked by milestone ${booked}, after the latest ${latest}`;
    if (record.seq >= nextOutputSeq) return `output ${toHex(id)}: at output seq ${record.seq}, not below the header's next output seq ${nextOutputSeq}`;
    const address = record.output.address.address;
    const spent = has(key(SPENT, id));
    const listed = (prefix: number): boolean => has(key(prefix, address, u64(record.seq), id));
    if (!spent) {
      if (!listed(ADDRESS_UNSPENT)) return `output ${toHex(id)}: unspent, but not in the unspent outputs of address ${toHex(address)}`;
      const b = balances.get(toHex(address)) ?? { balance: 0, dustAllowance: 0, dustOutputs: 0 };
      b.balance += record.output.amount;
      if (record.output.type === 1) b.dustAllowance += record.output.amount;
      else if (isDustOutput(record.output)) b.dustOutputs += 1;
      balances.set(toHex(address), b);
      supply += record.output.amount;
    } else if (!listed(ADDRESS_SPENT)) return `output ${toHex(id)}: spent, but not in the spent outputs of address ${toHex(address)}`;
  }
  for (const { key: k, value } of db.getRange(range(SPENT))) {
    const id = toHex(k.subarray(1));
    if (value.length !== SPENT_SIZE) return `spent record ${id}: ${value.length} bytes, expected ${SPENT_SIZE}`;
    if (!has(key(OUTPUT, k.subarray(1)))) return `spent record ${id}: no such output is stored`;
    const confirmed = getU32(value, 64);
    if (confirmed === NONE) return `spent record ${id}: confirmed by no milestone`;
    if (confirmed > latest) return `spent record ${id}: confirmed by milestone ${confirmed}, after the latest ${latest}`;
  }
  // No claim on a spent output (a claim whose pending output went, discarded or pruned first, is harmless: a spend of
  // it finds no output; it lapses and is pruned in its turn); each pending output not booked; each listed under its
  // index.
  for (const { key: k, value } of db.getRange(range(CLAIM))) {
    const id = toHex(k.subarray(1));
    if (k.length !== 35 || value.length !== SPENT_SIZE) return `claim ${toHex(k)}: ${k.length - 1} bytes of output id and ${value.length} of record, expected 34 and ${SPENT_SIZE}`;
    if (has(key(SPENT, k.subarray(1)))) return `claim on output ${id}: the output is spent`;
    const index = getU32(value, 64);
    if (index > latest) return `claim on output ${id}: made at milestone ${index}, after the latest ${latest}`;
    if (!has(madeAtKey(index, CLAIM, k.subarray(1)))) return `claim on output ${id}: made at milestone ${index}, but no entry of that index lists it`;
  }
  for (const { key: k, value } of db.getRange(range(PENDING))) {
    const id = toHex(k.subarray(1));
    if (k.length !== 35 || value.length !== PENDING_SIZE) return `pending output ${toHex(k)}: ${k.length - 1} bytes of output id and ${value.length} of record, expected 34 and ${PENDING_SIZE}`;
    if (has(key(OUTPUT, k.subarray(1)))) return `pending output ${id}: the ledger books it already`;
    const index = getU32(value, 32);
    if (index > latest) return `pending output ${id}: made at milestone ${index}, after the latest ${latest}`;
    if (!has(madeAtKey(index, PENDING, k.subarray(1)))) return `pending output ${id}: made at milestone ${index}, but no entry of that index lists it`;
  }
  for (const k of db.getKeys(range(MADE_AT))) {
    const kind = k[5];
    if (k.length !== 40 || (kind !== CLAIM && kind !== PENDING)) return `entry ${toHex(k)} of the claims and pending outputs by index: ${k.length} bytes of kind ${kind === undefined ? "none" : kind.toString(16).padStart(2, "0")}, expected 40 of kind 14 or 15`;
    const index = k.readUInt32BE(1);
    const what = `${kind === CLAIM ? "claim on output" : "pending output"} ${toHex(k.subarray(6))}`;
    const record = peek(db, key(kind, k.subarray(6)), t);
    if (record === undefined) return `entry of milestone ${index} → ${what}: none is stored`;
    const made = madeAt(kind, record);
    if (made !== index) return `entry of milestone ${index} → ${what}: made at milestone ${made ?? "unknown"}`;
  }
  for (const prefix of [ADDRESS_UNSPENT, ADDRESS_SPENT]) {
    const kind = prefix === ADDRESS_UNSPENT ? "unspent" : "spent";
    for (const k of db.getKeys(range(prefix))) {
      const address = toHex(k.subarray(1, 33));
      const id = k.subarray(41);
      const raw = db.get(key(OUTPUT, id), t);
      if (raw === undefined) return `address ${address}: its ${kind} outputs list ${toHex(id)}, which is not stored`;
      if (has(key(SPENT, id)) !== (prefix === ADDRESS_SPENT)) return `address ${address}: its ${kind} outputs list ${toHex(id)}, which is ${kind === "spent" ? "unspent" : "spent"}`;
      const record = decodeOutput(raw);
      if (toHex(record.output.address.address) !== address) return `address ${address}: its ${kind} outputs list ${toHex(id)}, which belongs to another address`;
      // At another seq, the entry would list the output twice, or out of its order.
      if (getU64(k, 33) !== record.seq) return `address ${address}: its ${kind} outputs list ${toHex(id)} at output seq ${getU64(k, 33)}, but the output has seq ${record.seq}`;
    }
  }
  for (const { key: k, value } of db.getRange(range(BALANCE))) {
    const address = toHex(k.subarray(1));
    const have = decodeBalance(value);
    const expected = balances.get(address) ?? EMPTY_BALANCE;
    balances.delete(address);
    if (have.balance !== expected.balance || have.dustAllowance !== expected.dustAllowance || have.dustOutputs !== expected.dustOutputs) {
      return `balance of address ${address}: stored ${describeBalance(have)}, its unspent outputs give ${describeBalance(expected)}`;
    }
  }
  for (const [address, expected] of balances) {
    if (expected.balance !== 0 || expected.dustAllowance !== 0 || expected.dustOutputs !== 0) {
      return `balance of address ${address}: none stored, its unspent outputs give ${describeBalance(expected)}`;
    }
  }
  if (db.get(k().LEDGER, t)?.[0] === 1 && supply !== TOTAL_SUPPLY) return `ledger: the unspent outputs sum to ${supply}, not the total supply ${TOTAL_SUPPLY}`;
  return undefined;
}

/**
 * The record under `k` in the read transaction `t`, in place: lmdb-js's reusable read buffer (getBinaryFast, which
 * takes the transaction though its typings do not say so), valid until the next read. For a check of presence, or a
 * record decoded before the next read: db.get copies every value it reads into a Buffer of its own.
 */
function peek(db: Db, k: Buffer, t: ReadOptions): Buffer | undefined {
  return (db.getBinaryFast as (id: Buffer, options: ReadOptions) => Buffer | undefined).call(db, k, t);
}

/** The pending output of `outputId` in `db`'s current view (inside a write: the write's own). */
function pendingIn(db: Db, outputId: Uint8Array): PendingOutput | undefined {
  const raw = db.get(key(PENDING, outputId));
  return raw === undefined ? undefined : decodePendingOutput(outputId, raw, toHex);
}

/** A stored balance record, or none stored: the empty balance. */
function balanceOf(raw: Uint8Array | undefined): AddressBalance {
  return raw === undefined ? EMPTY_BALANCE : decodeBalance(raw);
}

function describeBalance(b: AddressBalance): string {
  return `${b.balance} (dust allowance ${b.dustAllowance}, ${b.dustOutputs} dust outputs)`;
}

/** A big-endian f64 in a Buffer of its own (records.ts's encoding, which getF64 reads back). */
function f64(value: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  setF64(out, 0, value);
  return out;
}

function milestoneRecord(k: Uint8Array, value: Uint8Array): MilestoneRecord {
  return { index: getU32(k, 1), messageId: toHex(value.subarray(0, 32)), timestamp: getU64(value, 32) };
}

/** Where an accept's records go: straight into the transaction (direct), or gathered to be made at the end (Writes). */
interface Sink {
  put(key: Buffer, value: Buffer): void;
  remove(key: Buffer): void;
}

function direct(db: Db): Sink {
  return { put: (k, v) => void db.putSync(k, v), remove: (k) => void db.removeSync(k) };
}

/**
 * The writes of one accept, gathered in order while it reads and checks and made by `apply` at the end, so that nothing
 * but LMDB's own puts runs after its first write (see #writeFlat).
 */
class Writes implements Sink {
  readonly #keys: Buffer[] = [];
  /** undefined: a removal. */
  readonly #values: (Buffer | undefined)[] = [];

  put(key: Buffer, value: Buffer): void {
    this.#keys.push(key);
    this.#values.push(value);
  }

  remove(key: Buffer): void {
    this.#keys.push(key);
    this.#values.push(undefined);
  }

  apply(db: Db): void {
    const keys = this.#keys;
    const values = this.#values;
    for (let i = 0; i < keys.length; i++) {
      const value = values[i];
      if (value === undefined) db.removeSync(keys[i]!);
      else db.putSync(keys[i]!, value);
    }
  }
}

function first(db: Db, start: Buffer, end: Buffer, options?: ReadOptions): Buffer | undefined {
  for (const k of db.getKeys({ start, end, limit: 1, ...options })) return Buffer.from(k);
  return undefined;
}

function last(db: Db, start: Buffer, end: Buffer, options?: ReadOptions): { key: Buffer; value: Buffer } | undefined {
  for (const entry of db.getRange({ start: end, end: start, reverse: true, limit: 1, ...options })) return { key: Buffer.from(entry.key), value: entry.value };
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

/** The refusal of a store of an older schema to a tool beside a node (openExisting), which migrates nothing. */
function olderSchema(path: string, version: number): NodeError {
  return new NodeError("STORE_UNAVAILABLE", `the store at ${path} is at schema version ${version}: start chrysalis serve on it once to migrate it`);
}

/** What a failure to open the environment means for the operator: a damaged file, or a directory LMDB cannot use. */
function openFailure(path: string, error: unknown): NodeError {
  const text = reason(error);
  if (/MDB_INVALID|MDB_CORRUPTED|MDB_VERSION_MISMATCH|MDB_PAGE_NOTFOUND|MDB_PANIC|not an LMDB file|Invalid argument/i.test(text)) {
    return new NodeError("STORE_CORRUPT", `the data directory ${path} cannot be read as a store (${text})`, { cause: error });
  }
  return new NodeError("STORE_UNAVAILABLE", `cannot open the data directory ${path}: ${text}`, { cause: error });
}
