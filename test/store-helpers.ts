// Fixtures for the storage tests: real messages (canonical bytes and ids), signed transactions with their ledger
// mutation, the engines under test (memory, LMDB in a temporary directory, PostgreSQL in a database of its own), and
// the PostgreSQL test database each test file creates and drops.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { expect, inject } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { toHex } from "../src/bytes/hex.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, Output, TransactionPayload } from "../src/model/types.js";
import { addBalance, balanceDeltas, consumedOutputIds, EMPTY_BALANCE } from "../src/node/ledger.js";
import { LmdbStore, MemoryStore, PostgresStore, ZERO_MESSAGE_ID, type Acceptance, type GenesisOutput, type MilestoneApplication, type NodeStore, type ReferencedMessage, type ReleasedClaim } from "../src/node/index.js";
import { decodeBalance, decodeOutput, encodeBalance, encodeOutput, encodeSpent, METADATA_SIZE } from "../src/node/store/records.js";
import { wallet, type Wallet } from "./node-helpers.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A reachable PostgreSQL server's URL (any database on it), or "" when the PostgreSQL tests are skipped. */
    postgresUrl: string;
  }
}

export const NETWORK = "chrysalis-store-test";
export const NETWORK_ID = networkId(NETWORK);
const utf8 = new TextEncoder();

export { wallet, type Wallet };

/** The PostgreSQL server the tests use, or undefined (then the PostgreSQL tests are skipped; the global setup said so). */
export function postgresUrl(): string | undefined {
  const url = inject("postgresUrl");
  return url === "" ? undefined : url;
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** A new database with a random name on the test server; `drop` removes it (closing whatever still uses it). */
export async function createTestDatabase(serverUrl: string, label: string): Promise<TestDatabase> {
  const name = `chrysalis_${label}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A temporary directory, removed by `remove`. */
export function tempDir(label: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `chrysalis-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------------------------
// Messages

/**
 * Lays an LMDB store's messages out as schemas 1 and 2 wrote them, inside the caller's write: each record (01 id:
 * metadata, then bytes) split into the message's bytes (01 id) and its metadata apart (02 id). Answers the ids.
 */
export function splitMessageRecords(db: import("lmdb").RootDatabase<Buffer, Buffer>): string[] {
  const records = [...db.getRange({ start: Buffer.from([0x01]), end: Buffer.from([0x02]) })].map(({ key, value }) => ({ key: Buffer.from(key), value: Buffer.from(value) }));
  for (const { key, value } of records) {
    db.putSync(Buffer.concat([Buffer.from([0x02]), key.subarray(1)]), value.subarray(0, METADATA_SIZE));
    db.putSync(key, value.subarray(METADATA_SIZE));
  }
  return records.map(({ key }) => key.subarray(1).toString("hex"));
}

/**
 * Lays an LMDB store of schema 4 out as schema 3 wrote it, inside the caller's write: the ledger moved at acceptance
 * for each of `pending` (transactions whose messages are stored and no milestone confirmed, in the order they were
 * accepted): its inputs spent (08 without a milestone index, moved to their address's spent list), its outputs created
 * unbooked, the balances moved; every output at the seq schema 3 gave it (its creating message's seq × 128 + its
 * index; genesis and snapshot outputs keep theirs); no claims or pending outputs (14, 15, 16); the tip set (05 id →
 * seq, 06 seq id, the "tips" count: every stored message and entry point no stored message names as a parent, an
 * entry point at seq 0); no "outputSeq" in the header; schema 3. With splitMessageRecords and a lower schema number,
 * schemas 1 and 2.
 */
export function asSchema3(db: import("lmdb").RootDatabase<Buffer, Buffer>, pending: readonly Spend[] = []): void {
  const prefixed = (prefix: number, ...parts: Uint8Array[]): Buffer => Buffer.concat([Buffer.from([prefix]), ...parts.map((p) => Buffer.from(p))]);
  const meta = (name: string): Buffer => prefixed(0, utf8.encode(name));
  const all = (prefix: number): { key: Buffer; value: Buffer }[] =>
    [...db.getRange({ start: Buffer.from([prefix]), end: Buffer.from([prefix + 1]) })].map(({ key, value }) => ({ key: Buffer.from(key), value: Buffer.from(value) }));
  const seqOf = (id: Uint8Array): Buffer | undefined => db.get(prefixed(0x01, id))?.subarray(0, 8);
  const be64 = (n: number | bigint): Buffer => {
    const out = Buffer.alloc(8);
    out.writeBigUInt64BE(BigInt(n));
    return out;
  };
  const moveBalances = (consumed: Output[], created: Output[]): void => {
    for (const d of balanceDeltas(consumed, created).values()) {
      const key = prefixed(0x0b, d.address);
      const raw = db.get(key);
      const balance = addBalance(raw === undefined ? EMPTY_BALANCE : decodeBalance(raw), d);
      if (balance.balance === 0 && balance.dustAllowance === 0 && balance.dustOutputs === 0) db.removeSync(key);
      else db.putSync(key, Buffer.from(encodeBalance(balance)));
    }
  };
  // Output seqs as schema 3 numbered them, the address lists' keys with them.
  for (const { key, value } of all(0x07)) {
    const record = decodeOutput(value);
    const creator = seqOf(record.messageId);
    if (creator === undefined) continue;
    const seq = Number(creator.readBigUInt64BE(0)) * 128 + (key[33]! | (key[34]! << 8));
    const list = db.get(prefixed(0x08, key.subarray(1))) === undefined ? 0x09 : 0x0a;
    db.removeSync(prefixed(list, record.output.address.address, be64(record.seq), key.subarray(1)));
    db.putSync(prefixed(list, record.output.address.address, be64(seq), key.subarray(1)), Buffer.from([record.output.type]));
    db.putSync(key, Buffer.from(encodeOutput({ ...record, seq })));
  }
  for (const s of pending) {
    const message = Buffer.from(s.acceptance.id, "hex");
    const transaction = Buffer.from(s.transactionId, "hex");
    const consumed: Output[] = [];
    for (const id of s.consumed.map((o) => Buffer.from(o, "hex"))) {
      const record = decodeOutput(db.get(prefixed(0x07, id))!);
      db.putSync(prefixed(0x08, id), Buffer.from(encodeSpent(transaction, message, undefined)));
      db.removeSync(prefixed(0x09, record.output.address.address, be64(record.seq), id));
      db.putSync(prefixed(0x0a, record.output.address.address, be64(record.seq), id), Buffer.from([record.output.type]));
      consumed.push(record.output);
    }
    const messageSeq = Number(seqOf(message)!.readBigUInt64BE(0));
    s.payload.essence.outputs.forEach((output, i) => {
      const id = Buffer.from(s.created[i]!, "hex");
      db.putSync(prefixed(0x07, id), Buffer.from(encodeOutput({ messageId: message, seq: messageSeq * 128 + i, milestoneIndexBooked: undefined, output })));
      db.putSync(prefixed(0x09, output.address.address, be64(messageSeq * 128 + i), id), Buffer.from([output.type]));
    });
    moveBalances(consumed, s.payload.essence.outputs);
  }
  // Schema 3 kept no claims, pending outputs or entries of them by index.
  for (const prefix of [0x14, 0x15, 0x16]) for (const { key } of all(prefix)) db.removeSync(key);
  let tips = 0;
  const candidates = [...all(0x01).map(({ key, value }) => ({ id: key.subarray(1), seq: value.subarray(0, 8) })), ...all(0x13).map(({ key }) => ({ id: key.subarray(1), seq: be64(0) }))];
  for (const { id, seq } of candidates) {
    if (db.get(prefixed(0x05, id)) !== undefined) continue;
    if ([...db.getKeys({ start: prefixed(0x03, id), end: prefixed(0x03, id, Buffer.alloc(41, 0xff)), limit: 1 })].length > 0) continue;
    db.putSync(prefixed(0x05, id), seq);
    db.putSync(prefixed(0x06, seq, id), Buffer.alloc(0));
    tips++;
  }
  db.putSync(meta("tips"), be64(tips));
  db.removeSync(meta("outputSeq"));
  db.putSync(meta("schema"), Buffer.from([0, 0, 0, 3]));
}

/** Parents as the model wants them: 32-byte ids, sorted, unique. */
export function parentsOf(ids: readonly string[]): Uint8Array[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))].sort().map((id) => Uint8Array.from(Buffer.from(id, "hex")));
}

/** A message as the pipeline hands it to the store: canonical bytes, its id, arrival now. */
export function acceptance(message: Message, extra: Partial<Acceptance> = {}): Acceptance {
  const bytes = encodeMessage(message);
  return { id: messageId(bytes), bytes, message, arrivalTime: Date.now(), coneRoots: { oldest: 0, youngest: 0 }, ...extra };
}

/** An indexation message under `parents` with index `index`. */
export function indexation(parents: readonly string[], index: string, data = ""): Acceptance {
  return acceptance({ networkId: NETWORK_ID, parents: parentsOf(parents), payload: { type: 2, index: utf8.encode(index), data: utf8.encode(data) }, nonce: 7n });
}

export interface Spend {
  readonly payload: TransactionPayload;
  readonly transactionId: string;
  /** The acceptance with its claim, as the API submits it. */
  readonly acceptance: Acceptance;
  /** The output ids its inputs spend, in the payload's (canonical) order. */
  readonly consumed: string[];
  /** Output id of each created output, in the payload's (canonical) order. */
  readonly created: string[];
}

/** A signed transaction spending `inputs` (owned by `from`) into `outputs`, in a message under `parents`. */
export function spend(from: Wallet, inputs: readonly string[], outputs: readonly Output[], parents: readonly string[] = [ZERO_MESSAGE_ID], index?: string): Spend {
  const payload = buildTransactionPayload({
    inputs: inputs.map((id) => ({ transactionId: id.slice(0, 64), transactionOutputIndex: Number.parseInt(id.slice(66, 68) + id.slice(64, 66), 16), seed: from.seed })),
    outputs: [...outputs],
    ...(index !== undefined ? { indexation: { type: 2, index: utf8.encode(index), data: new Uint8Array(0) } } : {}),
  });
  const txId = transactionId(payload);
  const message: Message = { networkId: NETWORK_ID, parents: parentsOf(parents), payload, nonce: 3n };
  const consumed = consumedOutputIds(payload);
  return {
    payload,
    transactionId: txId,
    acceptance: acceptance(message, { claim: { transactionId: txId, consumed, created: payload.essence.outputs } }),
    consumed,
    created: payload.essence.outputs.map((_, i) => outputId(txId, i)),
  };
}

/** What a milestone's walk decided, for milestoneApplication: the messages it references in walk order (its own
 * message is added last), the transactions it includes, and the claims of conflicting ones. */
export interface Confirming {
  readonly index: number;
  readonly timestamp: number;
  /** The milestone's own message. */
  readonly message: Acceptance;
  readonly referenced: readonly ReferencedMessage[];
  /** The included transactions, in walk order. */
  readonly included?: readonly Spend[];
  readonly released?: readonly ReleasedClaim[];
  /** Outputs of its conflicting transactions (their pending outputs go). */
  readonly discarded?: readonly string[];
}

/**
 * The MilestoneApplication of `confirming`, as the confirmation part builds it: the included transactions' created
 * outputs, and their consumed outputs with the contents the confirmed ledger (read from `store`) or an earlier
 * transaction of the same milestone gives them.
 */
export async function milestoneApplication(store: NodeStore, confirming: Confirming): Promise<MilestoneApplication> {
  const created: MilestoneApplication["created"][number][] = [];
  const consumed: MilestoneApplication["consumed"][number][] = [];
  const made = new Map<string, Output>();
  for (const s of confirming.included ?? []) {
    for (const id of s.consumed) {
      const output = made.get(id) ?? (await store.output(id))?.output;
      if (output === undefined) throw new Error(`the test's milestone spends ${id}, which neither the ledger nor the milestone holds`);
      consumed.push({ outputId: id, output, transactionId: s.transactionId, messageId: s.acceptance.id });
    }
    s.payload.essence.outputs.forEach((output, i) => {
      created.push({ outputId: s.created[i]!, transactionId: s.transactionId, outputIndex: i, messageId: s.acceptance.id, output });
      made.set(s.created[i]!, output);
    });
  }
  return {
    index: confirming.index,
    messageId: confirming.message.id,
    timestamp: confirming.timestamp,
    referenced: [...confirming.referenced, { messageId: confirming.message.id, ledgerInclusionState: "noTransaction" }],
    created,
    consumed,
    released: confirming.released ?? [],
    discarded: confirming.discarded ?? [],
  };
}

/** Stores `confirming.message` and confirms it in one write, as the coordinator does; returns the application. */
export async function issue(store: NodeStore, confirming: Confirming): Promise<MilestoneApplication> {
  const milestone = await milestoneApplication(store, confirming);
  expect(await store.accept({ ...confirming.message, milestone })).toEqual({ stored: true });
  return milestone;
}

/** A milestone that references only its own message: the empty application of `index`. */
export function emptyMilestone(message: Acceptance, index: number, timestamp: number): MilestoneApplication {
  return { index, messageId: message.id, timestamp, referenced: [{ messageId: message.id, ledgerInclusionState: "noTransaction" }], created: [], consumed: [], released: [], discarded: [] };
}

export function single(to: Wallet, amount: number): Output {
  return { type: 0, address: { type: 0, address: to.address }, amount };
}

export function dustAllowance(to: Wallet, amount: number): Output {
  return { type: 1, address: { type: 0, address: to.address }, amount };
}

export const GENESIS_OUTPUT = outputId("0".repeat(64), 0);

export function genesisOf(owner: Wallet, amount: number): GenesisOutput[] {
  return [{ outputId: GENESIS_OUTPUT, output: single(owner, amount) }];
}

export function hexOf(bytes: Uint8Array): string {
  return toHex(bytes);
}

// ---------------------------------------------------------------------------------------------------------------
// Engines

export interface EngineOptions {
  entryPoints?: string[];
}

/** An engine under test: `make` gives a new, unopened store on fresh storage (or on `shared` storage to reopen it). */
export interface Engine {
  readonly name: "memory" | "lmdb" | "postgres";
  /** Whether a store closed and made again on the same storage keeps what was written (not the memory engine). */
  readonly persistent: boolean;
  /** Fresh storage for one test. */
  storage(): Promise<Storage>;
}

export interface Storage {
  /** A new store instance on this storage. */
  store(options?: EngineOptions): NodeStore;
  /** Marks the storage as written by a newer schema version than this code knows. */
  bumpSchema(): Promise<void>;
  /** Removes the storage (after its stores are closed). */
  remove(): Promise<void>;
}

export const memoryEngine: Engine = {
  name: "memory",
  persistent: false,
  async storage() {
    let store: MemoryStore | undefined;
    return {
      // The memory engine's storage is the instance itself.
      store: (options = {}) => (store ??= new MemoryStore(options)),
      async bumpSchema() {
        throw new Error("the memory engine has no schema on storage");
      },
      async remove() {},
    };
  },
};

export const lmdbEngine: Engine = {
  name: "lmdb",
  persistent: true,
  async storage() {
    const dir = tempDir("lmdb");
    return {
      store: (options = {}) => new LmdbStore({ path: dir.path, ...options }),
      async bumpSchema() {
        const { open } = await import("lmdb");
        const db = open<Buffer, Buffer>({ path: dir.path, keyEncoding: "binary", encoding: "binary" });
        const version = Buffer.alloc(4);
        version.writeUInt32BE(99);
        await db.put(Buffer.concat([Buffer.from([0]), Buffer.from("schema")]), version);
        await db.close();
      },
      async remove() {
        dir.remove();
      },
    };
  },
};

/** PostgreSQL engine: each storage is a database of its own on the test server. */
export function postgresEngine(serverUrl: string): Engine {
  return {
    name: "postgres",
    persistent: true,
    async storage() {
      const db = await createTestDatabase(serverUrl, "contract");
      return {
        store: (options = {}) => new PostgresStore({ connectionString: db.url, maxConnections: 8, ...options }),
        async bumpSchema() {
          const client = new pg.Client({ connectionString: db.url });
          await client.connect();
          try {
            await client.query("INSERT INTO chrysalis.schema_migrations (version, description) VALUES (99, 'from the future')");
          } finally {
            await client.end();
          }
        },
        remove: () => db.drop(),
      };
    },
  };
}

/** The ProtocolError `work` is refused with (failing the test when it succeeds or fails otherwise). */
export async function refusal(work: Promise<unknown>): Promise<ProtocolError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a refusal").toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

// ---------------------------------------------------------------------------------------------------------------
// Milestones

/** A message carrying a milestone payload (index, timestamp, `keys` as its public keys; the signatures are filler: the
 * store checks none), under `parents`. */
export function milestoneMessage(parents: readonly string[], index: number, timestamp: number, keys: readonly Uint8Array[]): Acceptance {
  const sortedKeys = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return acceptance({
    networkId: NETWORK_ID,
    parents: parentsOf(parents),
    payload: {
      type: 1,
      index,
      timestamp: BigInt(timestamp),
      parents: parentsOf(parents),
      inclusionMerkleProof: new Uint8Array(32),
      nextPoWScore: 0,
      nextPoWScoreMilestoneIndex: 0,
      publicKeys: sortedKeys,
      signatures: sortedKeys.map(() => new Uint8Array(64).fill(index & 0xff)),
    },
    nonce: 11n,
  });
}

/** A deterministic pseudo-random sequence (the test is the same every run). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

/**
 * Messages of a DAG whose parents are mostly recent messages (tips and messages that are no tips any more), some on the
 * entry point, and some listed before one of their parents, so that a parent arrives after its child.
 */
export function dag(count: number, seed: number): Acceptance[] {
  const next = random(seed);
  const made: Acceptance[] = [];
  for (let i = 0; i < count; i++) {
    const parents = new Set<string>();
    const wanted = 1 + Math.floor(next() * 4);
    for (let p = 0; p < wanted; p++) {
      const back = 1 + Math.floor(next() * 12);
      parents.add(made.length >= back ? made[made.length - back]!.id : ZERO_MESSAGE_ID);
    }
    made.push(indexation([...parents], `dag ${seed} ${i % 5}`, `message ${i}`));
  }
  // Swap some neighbours: a child before its parent, as a store without the solidity check may get them.
  for (let i = 1; i < made.length; i += 7) [made[i - 1], made[i]] = [made[i]!, made[i - 1]!];
  return made;
}
