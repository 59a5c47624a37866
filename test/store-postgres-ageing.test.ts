// The PostgreSQL engine as it ages: pruning by milestone in bounded steps (and by one instance of several), snapshots
// read in one transaction and loaded into a new store, verify() naming a deliberately damaged record (the same with
// pages of two rows), databases written by schema versions 1 and 2 (the ledger moved at acceptance) migrated at open,
// and the races a gate fixes the order of (a claim against a prune step, chained spends against the confirmation that
// books their input). Each describe makes a database of its own and drops it.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { DUST_THRESHOLD, TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { outputId } from "../src/model/ids.js";
import type { Output } from "../src/model/types.js";
import { balanceDeltas } from "../src/node/ledger.js";
import { POSTGRES_SCHEMA_VERSION, PostgresStore, ZERO_MESSAGE_ID, type Acceptance, type LedgerSnapshot, type NodeStore, type PruneStep, type ReferencedMessage, type SnapshotOutput } from "../src/node/index.js";
import { MIGRATIONS, PRUNE_LAPSED, PRUNE_LOCK } from "../src/node/store/postgres.js";
import {
  acceptance,
  createTestDatabase,
  dustAllowance,
  GENESIS_OUTPUT,
  genesisOf,
  indexation,
  issue,
  milestoneApplication,
  NETWORK,
  NETWORK_ID,
  parentsOf,
  postgresUrl,
  refusal,
  single,
  spend,
  wallet,
  type Spend,
  type TestDatabase,
  type Wallet,
} from "./store-helpers.js";

const MI = 1_000_000;
const serverUrl = postgresUrl();
const utf8 = new TextEncoder();
/** The coordinator key the milestone payloads carry (the store reads the keys, it never checks signatures). */
const COORDINATOR_KEY = new Uint8Array(32).fill(7);

/** A milestone message as the coordinator would issue it (signature left zero: the store does not check it). */
function milestoneMessage(index: number, parents: readonly string[]): Acceptance {
  const p = parentsOf(parents);
  return acceptance({
    networkId: NETWORK_ID,
    parents: p,
    payload: {
      type: 1,
      index,
      timestamp: BigInt(1_600_000_000 + index),
      parents: p,
      inclusionMerkleProof: new Uint8Array(32),
      nextPoWScore: 0,
      nextPoWScoreMilestoneIndex: 0,
      publicKeys: [COORDINATOR_KEY],
      signatures: [new Uint8Array(64)],
    },
    nonce: 0n,
  });
}

/**
 * Grows a tangle on a store, one milestone at a time: each round stores three indexation messages (tag `cone i`), the
 * round's transactions, optionally two orphans that no milestone will ever reference, then the milestone confirming
 * the round. Remembers what each milestone references and every message's bytes.
 */
class Tangle {
  readonly cones = new Map<number, string[]>();
  readonly orphans = new Map<number, string[]>();
  readonly bytes = new Map<string, Uint8Array>();
  readonly milestoneIds = new Map<number, string>();
  last: string;
  index: number;

  constructor(
    readonly store: NodeStore,
    start: { last: string; index: number } = { last: ZERO_MESSAGE_ID, index: 0 },
  ) {
    this.last = start.last;
    this.index = start.index;
  }

  async #put(a: Acceptance): Promise<string> {
    expect(await this.store.accept(a)).toEqual({ stored: true });
    this.bytes.set(a.id, a.bytes);
    return a.id;
  }

  /** One round; `spends` get the previous milestone as their parent. */
  async round(options: { spends?: ((parent: string) => Spend)[]; orphans?: boolean } = {}): Promise<number> {
    const i = this.index + 1;
    const a = await this.#put(indexation([this.last], `cone ${i}`, "a"));
    const b = await this.#put(indexation([a], `cone ${i}`, "b"));
    const c = await this.#put(indexation([a, this.last], `cone ${i}`, "c"));
    const spends = (options.spends ?? []).map((make) => make(this.last));
    for (const s of spends) await this.#put(s.acceptance);
    if (options.orphans === true) {
      const o1 = await this.#put(indexation([this.last], `orphan ${i}`, "1"));
      const o2 = await this.#put(indexation([o1], `orphan ${i}`, "2"));
      this.orphans.set(i, [o1, o2]);
    }
    const ms = milestoneMessage(i, [b, c, ...spends.map((s) => s.acceptance.id)]);
    const referenced: ReferencedMessage[] = [
      ...[a, b, c].map((messageId) => ({ messageId, ledgerInclusionState: "noTransaction" as const })),
      ...spends.map((s) => ({ messageId: s.acceptance.id, ledgerInclusionState: "included" as const })),
    ];
    await issue(this.store, { index: i, timestamp: 1_600_000_000 + i, message: ms, referenced, included: spends });
    this.bytes.set(ms.id, ms.bytes);
    this.cones.set(i, [...referenced.map((r) => r.messageId), ms.id]);
    this.milestoneIds.set(i, ms.id);
    this.last = ms.id;
    this.index = i;
    return i;
  }

  /** Every message of milestones 1..upTo and the orphans that arrived before them. */
  prunedBy(upTo: number): string[] {
    const ids: string[] = [];
    for (let i = 1; i <= upTo; i++) ids.push(...(this.cones.get(i) ?? []), ...(this.orphans.get(i) ?? []));
    return ids;
  }
}

/** The output `s` created for `to`. */
function createdFor(s: Spend, to: Wallet): string {
  const i = s.payload.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(to.address)));
  expect(i).toBeGreaterThanOrEqual(0);
  return s.created[i]!;
}

/** Calls prune until done, returning every step. */
async function pruneAll(store: NodeStore, target: number, batch: number): Promise<PruneStep[]> {
  const steps: PruneStep[] = [];
  for (;;) {
    const step = await store.prune(target, batch);
    steps.push(step);
    if (step.done) return steps;
    expect(steps.length).toBeLessThan(10_000);
  }
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const hexIds = (ids: readonly string[]): Buffer[] => ids.map((id) => Buffer.from(id, "hex"));

// What schema versions 1 and 2 ran to store a message (with its tip entries), apply a transaction at acceptance and
// confirm a milestone, as they shipped (postgres.ts before 3b6d308's contract): the rows a store of those versions holds.
const PREVIOUS_INSERT_MESSAGE = `
WITH m AS (
  INSERT INTO chrysalis.messages (id, bytes, index_key, arrival_time, cone_oldest, cone_youngest)
  VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING seq
), c AS (
  INSERT INTO chrysalis.children (parent, seq, child) SELECT p, m.seq, $1 FROM m, unnest($7::bytea[]) AS p
), d AS (
  DELETE FROM chrysalis.tips WHERE message_id = ANY($7::bytea[]) AND EXISTS (SELECT 1 FROM m) RETURNING 1
), t AS (
  INSERT INTO chrysalis.tips (message_id, seq) SELECT $1, m.seq FROM m WHERE NOT EXISTS (SELECT 1 FROM chrysalis.children WHERE parent = $1)
  ON CONFLICT (message_id) DO NOTHING RETURNING 1
), x AS (
  DELETE FROM chrysalis.tips WHERE message_id IN (
    SELECT message_id FROM chrysalis.tips WHERE message_id <> ALL($7::bytea[]) ORDER BY seq, message_id
    LIMIT greatest(0, (SELECT count(*) FROM chrysalis.tips) - (SELECT count(*) FROM d) + (SELECT count(*) FROM t) - $8::integer)
    FOR UPDATE SKIP LOCKED
  ) AND EXISTS (SELECT 1 FROM m)
)
SELECT seq FROM m`;
const PREVIOUS_APPLY_LEDGER = `
WITH s AS (
  INSERT INTO chrysalis.spent (output_id, transaction_id, message_id)
  SELECT o, $2, $3 FROM unnest($1::bytea[]) AS o ON CONFLICT (output_id) DO NOTHING RETURNING output_id
), b AS (
  INSERT INTO chrysalis.balances AS b (address, balance, dust_allowance, dust_outputs)
  SELECT * FROM unnest($4::bytea[], $5::bigint[], $6::bigint[], $7::integer[])
  ON CONFLICT (address) DO UPDATE SET balance = b.balance + excluded.balance, dust_allowance = b.dust_allowance + excluded.dust_allowance,
    dust_outputs = b.dust_outputs + excluded.dust_outputs
  RETURNING address, balance, dust_allowance, dust_outputs
), o AS (
  INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount)
  SELECT * FROM unnest($8::bytea[], $9::bigint[], $10::bytea[], $11::smallint[], $12::bytea[], $13::bigint[]) ON CONFLICT (output_id) DO NOTHING
)
SELECT 's' AS kind, output_id AS key FROM s`;
const PREVIOUS_CONFIRM_MILESTONE = `
WITH ms AS (
  INSERT INTO chrysalis.milestones (index, message_id, timestamp, created_outputs, consumed_outputs)
  SELECT $1, $2, $3, $4, $5 WHERE $1 = (SELECT coalesce(max(index), 0) + 1 FROM chrysalis.milestones)
  RETURNING index
), r AS (
  UPDATE chrysalis.messages AS m SET referenced_by = ms.index, inclusion = r.state, conflict_reason = r.reason,
    milestone_index = CASE WHEN m.id = $2 THEN ms.index ELSE m.milestone_index END
  FROM ms, unnest($6::bytea[], $7::smallint[], $8::smallint[]) AS r(id, state, reason) WHERE m.id = r.id
), ob AS (
  UPDATE chrysalis.outputs SET milestone_booked = ms.index FROM ms WHERE output_id = ANY($4)
), sp AS (
  UPDATE chrysalis.spent SET milestone_index = ms.index FROM ms WHERE output_id = ANY($5)
)
SELECT index FROM ms`;

/**
 * A store as schema version 1 or 2 wrote it, the ledger moving at acceptance: the shipped migrations' SQL up to that
 * version, the store's creation (network, genesis, the entry point and its tip), and then what those versions' writes
 * left (the PREVIOUS_ statements), so that opening it with this version runs the later migrations on real rows.
 */
class PreviousVersion {
  private constructor(readonly client: pg.Client) {}

  static async create(url: string, version: 1 | 2, genesis: readonly { outputId: string; output: Output }[]): Promise<PreviousVersion> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await PreviousVersion.schema(client, version);
    await client.query("INSERT INTO chrysalis.meta (key, value) VALUES ('network', $1), ('ledger', '1')", [NETWORK]);
    if (version >= 2) await client.query("INSERT INTO chrysalis.entry_points (message_id, index) VALUES ($1, 0)", [Buffer.alloc(32)]);
    await client.query("INSERT INTO chrysalis.tips (message_id, seq) VALUES ($1, 0)", [Buffer.alloc(32)]);
    await client.query(
      `INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount, milestone_booked)
       SELECT o, s, $3, t, a, n, 0 FROM unnest($1::bytea[], $2::bigint[], $4::smallint[], $5::bytea[], $6::bigint[]) AS g(o, s, t, a, n)`,
      [hexIds(genesis.map((g) => g.outputId)), genesis.map((_, i) => i), Buffer.alloc(32), genesis.map((g) => g.output.type), genesis.map((g) => Buffer.from(g.output.address.address)), genesis.map((g) => g.output.amount)],
    );
    await client.query("INSERT INTO chrysalis.balances (address, balance, dust_allowance, dust_outputs) SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::integer[])", balanceColumns([], genesis.map((g) => g.output)));
    return new PreviousVersion(client);
  }

  /** The schema as migrations 1 to `version` left it, as #migrate ran them. */
  static async schema(client: pg.Client, version: 1 | 2): Promise<void> {
    await client.query("CREATE SCHEMA chrysalis");
    await client.query("CREATE TABLE chrysalis.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (let v = 0; v < version; v++) {
      for (const statement of MIGRATIONS[v]!.statements) await client.query(statement);
      await client.query("INSERT INTO chrysalis.schema_migrations (version, description) VALUES ($1, $2)", [v + 1, MIGRATIONS[v]!.description]);
    }
  }

  /** A message as those versions accepted it, with its transaction's ledger mutation applied when `spend` is given. */
  async accept(a: Acceptance, spend?: Spend): Promise<void> {
    const index = a.message.payload?.type === 2 ? a.message.payload.index : a.message.payload?.type === 0 ? a.message.payload.essence.payload?.index : undefined;
    const id = Buffer.from(a.id, "hex");
    const { rows } = await this.client.query<{ seq: string }>(PREVIOUS_INSERT_MESSAGE, [id, Buffer.from(a.bytes), index === undefined ? null : Buffer.from(index), a.arrivalTime, 0, 0, a.message.parents.map((p) => Buffer.from(p)), 1000]);
    expect(rows).toHaveLength(1);
    if (spend === undefined) return;
    const consumed = (await this.client.query<{ type: number; address: Buffer; amount: string }>("SELECT type, address, amount FROM chrysalis.outputs WHERE output_id = ANY($1) ORDER BY output_id", [hexIds(spend.consumed)])).rows;
    const outputs = spend.payload.essence.outputs;
    const spent = await this.client.query(PREVIOUS_APPLY_LEDGER, [
      hexIds([...spend.consumed].sort()),
      Buffer.from(spend.transactionId, "hex"),
      id,
      ...balanceColumns(consumed.map((r) => ({ type: r.type === 1 ? 1 : 0, address: { type: 0, address: new Uint8Array(r.address) }, amount: Number(r.amount) })), outputs),
      hexIds(spend.created),
      outputs.map((_, i) => Number(rows[0]!.seq) * 128 + i),
      outputs.map(() => id),
      outputs.map((o) => o.type),
      outputs.map((o) => Buffer.from(o.address.address)),
      outputs.map((o) => o.amount),
    ]);
    expect(spent.rows).toHaveLength(spend.consumed.length);
  }

  /** A milestone as those versions confirmed it: the referenced messages (its own among them), the outputs its
   * included transactions made booked, their spends confirmed. */
  async confirm(index: number, message: Acceptance, referenced: readonly ReferencedMessage[], included: readonly Spend[]): Promise<void> {
    const states = ["noTransaction", "included", "conflicting"];
    const { rows } = await this.client.query(PREVIOUS_CONFIRM_MILESTONE, [
      index,
      Buffer.from(message.id, "hex"),
      1_600_000_000 + index,
      hexIds(included.flatMap((s) => s.created)),
      hexIds(included.flatMap((s) => s.consumed)),
      hexIds(referenced.map((r) => r.messageId)),
      referenced.map((r) => states.indexOf(r.ledgerInclusionState) + 1),
      referenced.map((r) => r.conflictReason ?? null),
    ]);
    expect(rows).toHaveLength(1);
  }

  async end(): Promise<void> {
    await this.client.end();
  }
}

/** balanceDeltas as the four columns the balances statements take. */
function balanceColumns(consumed: readonly Output[], created: readonly Output[]): [Buffer[], number[], number[], number[]] {
  const deltas = [...balanceDeltas(consumed, created).values()].sort((x, y) => Buffer.compare(Buffer.from(x.address), Buffer.from(y.address)));
  return [deltas.map((d) => Buffer.from(d.address)), deltas.map((d) => d.balance), deltas.map((d) => d.dustAllowance), deltas.map((d) => d.dustOutputs)];
}

describe.skipIf(serverUrl === undefined)("PostgreSQL pruning", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  let tangle: Tangle;
  const owner = wallet();
  const w1 = wallet();
  const w2 = wallet();
  const w3 = wallet();
  let tx1: Spend;
  let tx2: Spend;
  let tx3: Spend;
  /** Submitted after milestone 11, never confirmed: w2 spends its output, and a chained spend of that one. */
  let strays: Spend[];

  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "prune");
    store = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    tangle = new Tangle(store);
    await tangle.round();
    // Milestone 2 spends genesis; milestone 3 spends what it gave w1; milestone 25 spends the owner's change.
    await tangle.round({ spends: [(p) => (tx1 = spend(owner, [GENESIS_OUTPUT], [single(w1, 10 * MI), single(owner, TOTAL_SUPPLY - 10 * MI)], [p]))], orphans: true });
    await tangle.round({ spends: [(p) => (tx2 = spend(w1, [createdFor(tx1, w1)], [single(w2, 10 * MI)], [p], "tx2"))] });
    while (tangle.index < 24) {
      await tangle.round({ orphans: tangle.index + 1 === 11 });
      if (tangle.index !== 11) continue;
      const w4 = wallet();
      const first = spend(w2, [tx2.created[0]!], [single(w4, 10 * MI)], [tangle.last], "stray");
      strays = [first, spend(w4, [first.created[0]!], [single(wallet(), 10 * MI)], [first.acceptance.id], "stray")];
      for (const s of strays) expect(await store.accept(s.acceptance)).toEqual({ stored: true });
    }
    await tangle.round({ spends: [(p) => (tx3 = spend(owner, [createdFor(tx1, owner)], [single(w3, 5 * MI), single(owner, TOTAL_SUPPLY - 15 * MI)], [p]))] });
    while (tangle.index < 30) await tangle.round();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("a fresh store: pruning index 0, consistent, and a prune step held off by another instance's lock deletes nothing", async () => {
    expect(await store.pruningIndex()).toBe(0);
    expect(await store.verify()).toBeUndefined();
    const before = await store.stats();
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1)", [PRUNE_LOCK.toString()]);
      expect(await store.prune(10, 5)).toEqual({ pruningIndex: 0, messages: 0, done: true });
      expect(await store.stats()).toEqual(before);
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
  });

  it("prunes one milestone at a time, at most `batch` messages a step, up to the target", async () => {
    const steps = await pruneAll(store, 10, 2);
    expect(steps.at(-1)).toEqual({ pruningIndex: 10, messages: expect.any(Number), done: true });
    for (const s of steps) expect(s.messages).toBeLessThanOrEqual(2);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.pruningIndex - steps[i - 1]!.pruningIndex).toBeGreaterThanOrEqual(0);
    expect(steps.reduce((n, s) => n + s.messages, 0)).toBe(tangle.prunedBy(10).length);
    expect(await store.pruningIndex()).toBe(10);
    // Already there: nothing to do.
    expect(await store.prune(10, 2)).toEqual({ pruningIndex: 10, messages: 0, done: true });
  });

  it("pruned messages, milestones and UTXO changes answer nothing; no unreferenced, child or index entry names them", async () => {
    const pruned = tangle.prunedBy(10);
    expect(pruned).toContain(tangle.orphans.get(2)![0]);
    for (const id of pruned) {
      expect(await store.get(id), id).toBeUndefined();
      expect(await store.has(id)).toBe(false);
      expect(await store.metadata(id)).toBeUndefined();
      expect(await store.children(id, 10)).toEqual([]);
    }
    expect(await store.findByIndex(utf8.encode("cone 5"), 10)).toEqual([]);
    expect(await store.findByIndex(utf8.encode("orphan 2"), 10)).toEqual([]);
    expect(await store.findByIndex(utf8.encode("cone 11"), 10)).toHaveLength(3);
    for (let i = 1; i <= 10; i++) {
      expect(await store.milestone(i)).toBeUndefined();
      expect(await store.utxoChanges(i)).toBeUndefined();
    }
    expect((await store.milestone(11))?.messageId).toBe(tangle.milestoneIds.get(11));
    expect(await store.utxoChanges(25)).toEqual({ index: 25, createdOutputs: tx3.created, consumedOutputs: [createdFor(tx1, owner)] });
    const unreferenced = await store.unreferenced(1000);
    for (const id of pruned) expect(unreferenced).not.toContain(id);
    const [left] = await sql<{ n: string }>(db.url, "SELECT count(*) AS n FROM chrysalis.children WHERE parent = ANY($1) OR child = ANY($1)", [hexIds(pruned)]);
    expect(left!.n).toBe("0");
    // What stays is intact, byte for byte, with its metadata; the orphans of round 11 arrived after milestone 10.
    for (let i = 11; i <= 30; i++) {
      for (const id of tangle.cones.get(i)!) {
        expect(Buffer.from((await store.get(id))!.bytes).equals(Buffer.from(tangle.bytes.get(id)!))).toBe(true);
        expect((await store.metadata(id))?.referencedByMilestoneIndex).toBe(i);
      }
    }
    for (const id of tangle.orphans.get(11)!) expect(await store.has(id)).toBe(true);
    expect(await store.children(tangle.cones.get(11)![0]!, 10)).toHaveLength(2);
  });

  it("the ledger is untouched but for the spent outputs of pruned milestones: balances exact, a pruned spent output refused as not found", async () => {
    expect(await store.output(GENESIS_OUTPUT)).toBeUndefined();
    expect(await store.output(createdFor(tx1, w1))).toBeUndefined();
    // Spent at milestone 25: not pruned yet, so still there and still spent.
    expect((await store.output(createdFor(tx1, owner)))?.spent).toEqual({ transactionId: tx3.transactionId, messageId: tx3.acceptance.id, milestoneIndex: 25 });
    expect(await store.output(tx2.created[0]!)).toMatchObject({ messageId: tx2.acceptance.id, milestoneIndexBooked: 3 });
    expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY - 15 * MI, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.addressBalance(w1.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.addressBalance(w2.address)).toEqual({ balance: 10 * MI, dustAllowance: 0, dustOutputs: 0 });
    expect(await store.addressOutputs(w2.address, { max: 10, includeSpent: true })).toEqual([tx2.created[0]]);
    expect(await store.addressOutputs(owner.address, { max: 10 })).toEqual([createdFor(tx3, owner)]);
    const last = tangle.last;
    expect((await refusal(store.accept(spend(owner, [GENESIS_OUTPUT], [single(owner, TOTAL_SUPPLY)], [last]).acceptance))).code).toBe("INPUT_NOT_FOUND");
    expect((await refusal(store.accept(spend(w1, [createdFor(tx1, w1)], [single(w1, 10 * MI)], [last]).acceptance))).code).toBe("INPUT_NOT_FOUND");
    expect((await refusal(store.accept(spend(owner, [createdFor(tx1, owner)], [single(owner, TOTAL_SUPPLY - 10 * MI)], [last]).acceptance))).code).toBe("INPUT_SPENT");
    expect(await store.verify()).toBeUndefined();
  });

  it("the claims and pending outputs made at a pruned milestone go before it is finished, at most `batch` a step (counted as entries)", async () => {
    const made = [...strays.flatMap((s) => s.consumed.map((id) => ["claim", id] as const)), ...strays.map((s) => ["pending", s.created[0]!] as const)];
    for (const [kind, id] of made) expect(kind === "claim" ? await store.claim(id) : await store.pendingOutput(id), `${kind} ${id}`).toMatchObject({ index: 11 });
    const steps = await pruneAll(store, 11, 1);
    expect(steps.at(-1)).toMatchObject({ pruningIndex: 11, done: true });
    for (const s of steps) expect(s.messages + (s.entries ?? 0)).toBeLessThanOrEqual(1);
    expect(steps.reduce((n, s) => n + (s.entries ?? 0), 0)).toBe(made.length);
    // A step that deleted entries finished no milestone: the last of them left the pruning index at 10.
    expect(steps.filter((s) => s.entries !== undefined).map((s) => s.pruningIndex)).toEqual(made.map(() => 10));
    for (const [kind, id] of made) expect(kind === "claim" ? await store.claim(id) : await store.pendingOutput(id), `${kind} ${id}`).toBeUndefined();
    // The stray messages arrived after milestone 11's message: they go with milestone 12.
    for (const s of strays) expect(await store.has(s.acceptance.id)).toBe(true);
    expect(await store.verify()).toBeUndefined();
  });

  it("the statement deleting lapsed claims and pending outputs finds them by their index on `index`, on tables of 20,000 rows each", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      // Rows made at later milestones than the one pruned, as a busy node's tables hold them; rolled back after.
      await client.query(
        `INSERT INTO chrysalis.claims (output_id, transaction_id, message_id, index)
         SELECT decode(lpad(to_hex(g), 68, '0'), 'hex'), decode('00', 'hex'), decode('00', 'hex'), 100 + g % 50 FROM generate_series(1, 20000) AS g`,
      );
      await client.query(
        `INSERT INTO chrysalis.pending_outputs (output_id, message_id, type, address, amount, index)
         SELECT decode(lpad(to_hex(g), 68, '0'), 'hex'), decode('00', 'hex'), 0, decode('00', 'hex'), 1, 100 + g % 50 FROM generate_series(1, 20000) AS g`,
      );
      await client.query("ANALYZE chrysalis.claims, chrysalis.pending_outputs");
      await client.query(`PREPARE lapsed (integer, integer) AS ${PRUNE_LAPSED}`);
      const [{ "QUERY PLAN": plan }] = (await client.query<{ "QUERY PLAN": unknown }>("EXPLAIN (FORMAT JSON) EXECUTE lapsed (12, 100)")).rows as [{ "QUERY PLAN": unknown }];
      const scans: { type: string; relation?: string; index?: string }[] = [];
      const walk = (node: Record<string, unknown>): void => {
        if (typeof node["Relation Name"] === "string" || typeof node["Index Name"] === "string") {
          scans.push({ type: String(node["Node Type"]), relation: node["Relation Name"] as string, index: node["Index Name"] as string });
        }
        for (const child of (node["Plans"] as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk((plan as [{ Plan: Record<string, unknown> }])[0].Plan);
      const ofTables = scans.filter((n) => n.relation === "claims" || n.relation === "pending_outputs" || n.index?.startsWith("claims") || n.index?.startsWith("pending_outputs"));
      expect(ofTables.filter((n) => n.type === "Seq Scan")).toEqual([]);
      expect(ofTables.map((n) => n.index)).toEqual(expect.arrayContaining(["claims_by_index", "pending_outputs_by_index"]));
    } finally {
      await client.query("ROLLBACK");
      await client.end();
    }
  });

  it("a target past the latest milestone stops below it: the latest milestone always stays", async () => {
    const steps = await pruneAll(store, 1000, 50);
    expect(steps.at(-1)).toMatchObject({ pruningIndex: 29, done: true });
    expect(await store.milestone(29)).toBeUndefined();
    expect((await store.latestMilestone())?.index).toBe(30);
    for (const id of tangle.orphans.get(11)!) expect(await store.has(id)).toBe(false);
    const stats = await store.stats();
    expect(stats).toMatchObject({ engine: "postgres", network: NETWORK, messages: 4, unspentOutputs: 3, latestMilestoneIndex: 30, pruningIndex: 29 });
    // Counted and checked in pages of two rows: the same answers.
    const paged = new PostgresStore({ connectionString: db.url, maxConnections: 2, pageRows: 2 });
    try {
      await paged.open({ network: NETWORK });
      expect(await paged.stats()).toEqual(stats);
      expect(await paged.verify()).toBeUndefined();
      expect(await paged.readSnapshot()).toEqual(await store.readSnapshot());
    } finally {
      await paged.close();
    }
    expect(stats.bytes).toBeGreaterThan(0);
    expect(stats.fileBytes).toBe(stats.bytes);
    expect(await store.bytes()).toBe(stats.bytes);
    expect(await store.verify()).toBeUndefined();
    // New messages attach at the boundary.
    expect(await store.accept(indexation([tangle.last], "after pruning"))).toEqual({ stored: true });
  });

  describe("snapshots", () => {
    let snapshot: LedgerSnapshot;
    const fresh: TestDatabase[] = [];
    afterAll(async () => {
      for (const d of fresh) await d.drop();
    });

    it("readSnapshot: the network, ledger, latest milestone, its keys, the entry points and the unspent outputs in id order", async () => {
      snapshot = await store.readSnapshot();
      const latest = (await store.latestMilestone())!;
      expect(snapshot).toMatchObject({ network: NETWORK, ledger: true, milestone: latest, coordinatorPublicKeys: [toHex(COORDINATOR_KEY)] });
      const ids = [createdFor(tx3, owner), createdFor(tx3, w3), tx2.created[0]!].sort();
      expect(snapshot.outputs.map((o) => o.outputId)).toEqual(ids);
      expect(snapshot.outputs.find((o) => o.outputId === tx2.created[0])).toEqual({ outputId: tx2.created[0], messageId: tx2.acceptance.id, milestoneIndexBooked: 3, output: single(w2, 10 * MI) });
      // Every message the last 15 milestones referenced that is still stored: milestone 30's cone, the rest is pruned;
      // neither the zero id (milestone 0, out of reach) nor the message no milestone referenced yet.
      expect(snapshot.entryPoints).toEqual(tangle.cones.get(30)!.map((messageId) => ({ messageId, index: 30 })).sort((x, y) => (x.messageId < y.messageId ? -1 : 1)));
      expect(snapshot.entryPoints.map((e) => e.messageId)).not.toContain(indexation([tangle.last], "after pruning").id);
    });

    it("a new store from it: the same ledger, the milestone continues at the next index, a snapshot output spent once", async () => {
      const target = await createTestDatabase(serverUrl!, "snapload");
      fresh.push(target);
      const loaded = new PostgresStore({ connectionString: target.url, maxConnections: 4 });
      try {
        expect(await loaded.open({ network: NETWORK, snapshot })).toEqual({ created: true, ledger: true, coordinatorPublicKeys: [toHex(COORDINATOR_KEY)] });
        expect(loaded.entryPoints).toEqual(new Map(snapshot.entryPoints.map((e) => [e.messageId, e.index])));
        expect(await loaded.unreferenced(100)).toEqual([]);
        expect(await loaded.latestMilestone()).toEqual(snapshot.milestone);
        expect(await loaded.get(snapshot.milestone!.messageId)).toBeUndefined();
        expect(await loaded.pruningIndex()).toBe(29);
        for (const w of [owner, w1, w2, w3]) expect(await loaded.addressBalance(w.address)).toEqual(await store.addressBalance(w.address));
        expect(await loaded.output(tx2.created[0]!)).toEqual({ ...(await store.output(tx2.created[0]!)) });
        expect(await loaded.verify()).toBeUndefined();
        const again = await loaded.readSnapshot();
        expect(again.outputs).toEqual(snapshot.outputs);
        expect(again.coordinatorPublicKeys).toEqual(snapshot.coordinatorPublicKeys);

        // w2 spends its snapshot output on the new store; a second spend of it is refused.
        const continued = new Tangle(loaded, { last: snapshot.milestone!.messageId, index: 30 });
        let respend: Spend | undefined;
        await continued.round({ spends: [(p) => (respend = spend(w2, [tx2.created[0]!], [single(w1, 10 * MI)], [p]))] });
        expect((await loaded.output(tx2.created[0]!))?.spent?.milestoneIndex).toBe(31);
        expect((await refusal(loaded.accept(spend(w2, [tx2.created[0]!], [single(w3, 10 * MI)], [continued.last]).acceptance))).code).toBe("INPUT_SPENT");
        expect(await loaded.addressBalance(w1.address)).toEqual({ balance: 10 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(respend).toBeDefined();
        // The snapshot's milestone (no message stored for it) prunes like any other once a later one exists.
        expect(await loaded.prune(30, 10)).toEqual({ pruningIndex: 30, messages: 0, done: true });
        expect(await loaded.milestone(30)).toBeUndefined();
        expect(await loaded.verify()).toBeUndefined();
      } finally {
        await loaded.close();
      }
      // Reopened: the coordinator keys and entry points persist; a snapshot given to an existing store is ignored.
      const reopened = new PostgresStore(target.url);
      try {
        expect(await reopened.open({ network: NETWORK, snapshot })).toEqual({ created: false, ledger: true, coordinatorPublicKeys: [toHex(COORDINATOR_KEY)] });
        expect(reopened.entryPoints).toEqual(new Map(snapshot.entryPoints.map((e) => [e.messageId, e.index])));
        expect((await reopened.latestMilestone())?.index).toBe(31);
      } finally {
        await reopened.close();
      }
    });

    it("a snapshot of another network: STORE_WRONG_NETWORK, and nothing is created", async () => {
      const target = await createTestDatabase(serverUrl!, "snapwrong");
      fresh.push(target);
      const other = new PostgresStore(target.url);
      try {
        expect((await refusal(other.open({ network: "another-network", snapshot }))).code).toBe("STORE_WRONG_NETWORK");
      } finally {
        await other.close();
      }
      expect(await sql(target.url, "SELECT 1 FROM information_schema.schemata WHERE schema_name = 'chrysalis'")).toEqual([]);
    });

    it("100,000 snapshot outputs load in seconds and read back in order", async () => {
      const target = await createTestDatabase(serverUrl!, "snapbig");
      fresh.push(target);
      const holders = Array.from({ length: 1000 }, () => wallet());
      const count = 100_000;
      const outputs = Array.from({ length: count }, (_, i) => ({
        outputId: outputId(i.toString(16).padStart(64, "0"), 0),
        messageId: ZERO_MESSAGE_ID,
        milestoneIndexBooked: 0,
        output: single(holders[i % holders.length]!, i === count - 1 ? TOTAL_SUPPLY - (count - 1) * MI : MI),
      }));
      const big: LedgerSnapshot = { network: NETWORK, ledger: true, coordinatorPublicKeys: [], entryPoints: [{ messageId: ZERO_MESSAGE_ID, index: 0 }], outputs };
      const loaded = new PostgresStore(target.url);
      try {
        let started = performance.now();
        expect(await loaded.open({ network: NETWORK, snapshot: big })).toEqual({ created: true, ledger: true });
        const loadMs = performance.now() - started;
        started = performance.now();
        const read = await loaded.readSnapshot();
        const readMs = performance.now() - started;
        console.log(`100,000 outputs: loaded in ${loadMs.toFixed(0)} ms, read back in ${readMs.toFixed(0)} ms`);
        expect(loadMs).toBeLessThan(20_000);
        // Compared as one line per output: a deep equality over 100,000 objects takes the test runner seconds.
        const line = (o: SnapshotOutput): string => `${o.outputId} ${o.messageId} ${o.milestoneIndexBooked} ${o.output.type} ${toHex(o.output.address.address)} ${o.output.amount}`;
        expect(read.outputs.length).toBe(count);
        expect(read.outputs.map(line).join("\n") === outputs.map(line).join("\n")).toBe(true);
        expect(read.milestone).toBeUndefined();
        expect(await loaded.pruningIndex()).toBe(0);
        expect(await loaded.addressBalance(holders[1]!.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await loaded.addressOutputs(holders[1]!.address, { max: 2 })).toEqual([outputs[1]!.outputId, outputs[1001]!.outputId]);
        expect((await loaded.stats()).unspentOutputs).toBe(count);
        expect(await loaded.verify()).toBeUndefined();
      } finally {
        await loaded.close();
      }
    });
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL verify: a deliberately damaged record is named, in pages of any size", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  /** The same database checked two rows a statement: each walk spans many pages. */
  let paged: PostgresStore;
  let tangle: Tangle;
  const owner = wallet();
  const w1 = wallet();
  let tx: Spend;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "verify");
    store = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    tangle = new Tangle(store);
    await tangle.round();
    await tangle.round({ spends: [(p) => (tx = spend(owner, [GENESIS_OUTPUT], [single(w1, 10 * MI), single(owner, TOTAL_SUPPLY - 10 * MI)], [p]))] });
    await tangle.round();
    paged = new PostgresStore({ connectionString: db.url, maxConnections: 2, pageRows: 2 });
    await paged.open({ network: NETWORK });
  });
  afterAll(async () => {
    await store?.close();
    await paged?.close();
    await db?.drop();
  });

  /** verify()'s line, the same whatever the page size. */
  async function verified(): Promise<string | undefined> {
    const line = await store.verify();
    expect(await paged.verify()).toBe(line);
    return line;
  }

  it("consistent as written", async () => {
    expect(await verified()).toBeUndefined();
  });

  it("a message whose bytes changed: named by its id", async () => {
    const id = tangle.cones.get(2)![1]!;
    const flip = "UPDATE chrysalis.messages SET bytes = set_byte(bytes, 20, get_byte(bytes, 20) # 1) WHERE id = $1";
    await sql(db.url, flip, [Buffer.from(id, "hex")]);
    expect(await verified()).toMatch(new RegExp(`^message ${id}: its bytes hash to [0-9a-f]{64}$`));
    await sql(db.url, flip, [Buffer.from(id, "hex")]);
    expect(await verified()).toBeUndefined();
  });

  it("a balance that differs from its outputs: named by its address", async () => {
    const change = "UPDATE chrysalis.balances SET balance = balance + $2 WHERE address = $1";
    await sql(db.url, change, [Buffer.from(w1.address), 1]);
    const line = await verified();
    expect(line).toContain(`balance of address ${toHex(w1.address)}: stored ${10 * MI + 1}`);
    expect(line).not.toContain("\n");
    await sql(db.url, change, [Buffer.from(w1.address), -1]);
    expect(await verified()).toBeUndefined();
  });

  it("an output and its balance changed together: the total supply no longer adds up", async () => {
    const id = Buffer.from(createdFor(tx, w1), "hex");
    await sql(db.url, "UPDATE chrysalis.outputs SET amount = amount + 1 WHERE output_id = $1", [id]);
    await sql(db.url, "UPDATE chrysalis.balances SET balance = balance + 1 WHERE address = $1", [Buffer.from(w1.address)]);
    expect(await verified()).toBe(`ledger: the unspent outputs sum to ${TOTAL_SUPPLY + 1}, not the total supply ${TOTAL_SUPPLY}`);
    await sql(db.url, "UPDATE chrysalis.outputs SET amount = amount - 1 WHERE output_id = $1", [id]);
    await sql(db.url, "UPDATE chrysalis.balances SET balance = balance - 1 WHERE address = $1", [Buffer.from(w1.address)]);
    expect(await verified()).toBeUndefined();
  });

  it("a message whose metadata is not whole: named", async () => {
    const id = tangle.cones.get(1)![0]!;
    await sql(db.url, "UPDATE chrysalis.messages SET inclusion = NULL WHERE id = $1", [Buffer.from(id, "hex")]);
    expect(await verified()).toBe(`message ${id}: inconsistent metadata (referenced by 1, milestone none, inclusion none, conflict reason none)`);
    await sql(db.url, "UPDATE chrysalis.messages SET inclusion = 1 WHERE id = $1", [Buffer.from(id, "hex")]);
    expect(await verified()).toBeUndefined();
  });

  it("a children entry at another seq than its child's, or whose child does not name its parent: named", async () => {
    const [a, b] = tangle.cones.get(2)!;
    const seq = (await sql<{ seq: string }>(db.url, "SELECT seq FROM chrysalis.messages WHERE id = $1", [Buffer.from(b!, "hex")]))[0]!.seq;
    const entry = [Buffer.from(a!, "hex"), Buffer.from(b!, "hex")];
    await sql(db.url, "UPDATE chrysalis.children SET seq = seq + 1000 WHERE parent = $1 AND child = $2", entry);
    expect(await verified()).toBe(`children entry of ${a}: its child ${b} has seq ${seq}, the entry ${BigInt(seq) + 1000n}`);
    await sql(db.url, "UPDATE chrysalis.children SET seq = seq - 1000 WHERE parent = $1 AND child = $2", entry);
    const stranger = "ab".repeat(32);
    await sql(db.url, "INSERT INTO chrysalis.children (parent, seq, child) VALUES ($1, $2, $3)", [Buffer.from(stranger, "hex"), seq, entry[1]]);
    expect(await verified()).toBe(`children entry of ${stranger}: its child ${b} does not name it as a parent`);
    await sql(db.url, "DELETE FROM chrysalis.children WHERE parent = $1", [Buffer.from(stranger, "hex")]);
    expect(await verified()).toBeUndefined();
  });

  it("an output no milestone booked, a spend no milestone confirmed, an unspent output without its address's balance: named", async () => {
    const made = Buffer.from(createdFor(tx, w1), "hex");
    await sql(db.url, "UPDATE chrysalis.outputs SET milestone_booked = NULL WHERE output_id = $1", [made]);
    expect(await verified()).toBe(`output ${toHex(made)}: booked by no milestone`);
    await sql(db.url, "UPDATE chrysalis.outputs SET milestone_booked = 2 WHERE output_id = $1", [made]);
    const genesis = Buffer.from(GENESIS_OUTPUT, "hex");
    await sql(db.url, "UPDATE chrysalis.spent SET milestone_index = NULL WHERE output_id = $1", [genesis]);
    expect(await verified()).toBe(`spent record of output ${GENESIS_OUTPUT}: confirmed by no milestone`);
    await sql(db.url, "UPDATE chrysalis.spent SET milestone_index = 2 WHERE output_id = $1", [genesis]);
    const [row] = await sql<Record<string, unknown>>(db.url, "DELETE FROM chrysalis.balances WHERE address = $1 RETURNING *", [Buffer.from(w1.address)]);
    expect(await verified()).toBe(`balance of address ${toHex(w1.address)}: none stored, yet it holds the unspent output ${toHex(made)}`);
    await sql(db.url, "INSERT INTO chrysalis.balances (address, balance, dust_allowance, dust_outputs) VALUES ($1, $2, $3, $4)", [row!.address, row!.balance, row!.dust_allowance, row!.dust_outputs]);
    expect(await verified()).toBeUndefined();
  });

  it("a claim on a spent output: named; on a pending output, or on one whose pending output went (harmless, pruned when it lapses): consistent", async () => {
    const claimOn = (output: string): Promise<unknown> =>
      sql(db.url, "INSERT INTO chrysalis.claims (output_id, transaction_id, message_id, index) VALUES ($1, $2, $2, 3)", [Buffer.from(output, "hex"), Buffer.alloc(32)]);
    const unclaim = (output: string): Promise<unknown> => sql(db.url, "DELETE FROM chrysalis.claims WHERE output_id = $1", [Buffer.from(output, "hex")]);
    const pending = "cd".repeat(32) + "0000";
    await claimOn(GENESIS_OUTPUT);
    expect(await verified()).toBe(`claim on output ${GENESIS_OUTPUT}: the output is spent`);
    await unclaim(GENESIS_OUTPUT);
    await claimOn(pending);
    expect(await verified()).toBeUndefined();
    await unclaim(pending);
    await sql(db.url, "INSERT INTO chrysalis.pending_outputs (output_id, message_id, type, address, amount, index) VALUES ($1, $2, 0, $3, $4, 3)", [Buffer.from(pending, "hex"), Buffer.alloc(32), Buffer.from(w1.address), MI]);
    await claimOn(pending);
    expect(await verified()).toBeUndefined();
    await unclaim(pending);
    await sql(db.url, "DELETE FROM chrysalis.pending_outputs WHERE output_id = $1", [Buffer.from(pending, "hex")]);
    expect(await verified()).toBeUndefined();
  });

  it("a pending output the ledger holds already: named", async () => {
    const booked = createdFor(tx, w1);
    await sql(db.url, "INSERT INTO chrysalis.pending_outputs (output_id, message_id, type, address, amount, index) VALUES ($1, $2, 0, $3, $4, 3)", [Buffer.from(booked, "hex"), Buffer.alloc(32), Buffer.from(w1.address), 10 * MI]);
    expect(await verified()).toBe(`pending output ${booked}: booked already`);
    await sql(db.url, "DELETE FROM chrysalis.pending_outputs WHERE output_id = $1", [Buffer.from(booked, "hex")]);
    expect(await verified()).toBeUndefined();
  });

  it("a message deleted behind the store's back: its children entry names it", async () => {
    // b of round 3 is a's child; deleting b's row leaves the entry (a → b) dangling.
    const [a, b] = tangle.cones.get(3)!;
    await sql(db.url, "DELETE FROM chrysalis.messages WHERE id = $1", [Buffer.from(b!, "hex")]);
    expect(await verified()).toBe(`children entry of ${a}: its child ${b} is not a stored message`);
    // And counted the same in pages of two.
    expect(await paged.stats()).toEqual(await store.stats());
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: a store pruned as it goes reaches a plateau", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "plateau");
    store = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("rounds of a transaction ring, pruned 20 milestones behind: every table holds as many rows after 60 rounds as after 40, and no claim or pending output is left", async () => {
    // Four wallets pass 1 Mi round a ring, one hop a round (the genesis holder starts it); each round's transaction
    // is claimed at acceptance and confirmed by the round's milestone.
    const ring = [wallet(), wallet(), wallet(), wallet()];
    await store.open({ network: NETWORK, genesis: genesisOf(ring[0]!, TOTAL_SUPPLY) });
    const tangle = new Tangle(store);
    let holder = 0;
    let output = GENESIS_OUTPUT;
    const counts = async (): Promise<Record<string, number>> => {
      const tables = ["messages", "children", "outputs", "spent", "balances", "claims", "pending_outputs", "milestones"];
      const rows = await sql<Record<string, number>>(db.url, `SELECT ${tables.map((t) => `(SELECT count(*)::int FROM chrysalis.${t}) AS ${t}`).join(", ")}`);
      return rows[0]!;
    };
    const seen: Record<number, Record<string, number>> = {};
    while (tangle.index < 60) {
      const from = ring[holder]!;
      const to = ring[(holder + 1) % ring.length]!;
      let paid: Spend | undefined;
      await tangle.round({ spends: [(p) => (paid = spend(from, [output], [single(to, TOTAL_SUPPLY)], [p]))] });
      output = paid!.created[0]!;
      holder = (holder + 1) % ring.length;
      await pruneAll(store, tangle.index - 20, 100);
      if (tangle.index === 40 || tangle.index === 60) seen[tangle.index] = await counts();
    }
    expect(seen[60]).toEqual(seen[40]);
    expect(seen[60]).toMatchObject({ milestones: 20, claims: 0, pending_outputs: 0, outputs: 1 + 20, spent: 20, balances: ring.length });
    expect(await store.pruningIndex()).toBe(40);
    expect(await store.verify()).toBeUndefined();
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: two instances pruning one database", () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  let tangle: Tangle;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "prunepair");
    a = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    b = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    await a.open({ network: NETWORK, genesis: genesisOf(wallet(), TOTAL_SUPPLY) });
    await b.open({ network: NETWORK });
    tangle = new Tangle(a);
    while (tangle.index < 30) await tangle.round({ orphans: tangle.index % 4 === 0 });
    // The test's own witness: every change of the pruning index, in commit order (each finished milestone is one).
    await sql(
      db.url,
      `CREATE TABLE public.pruning_log (n serial PRIMARY KEY, value text NOT NULL);
       CREATE FUNCTION public.log_pruning() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO public.pruning_log (value) VALUES (NEW.value); RETURN NEW; END $$;
       CREATE TRIGGER log_pruning AFTER UPDATE ON chrysalis.meta FOR EACH ROW WHEN (NEW.key = 'pruning_index') EXECUTE FUNCTION public.log_pruning();`,
    );
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it("both prune at once while both accept messages: every milestone pruned once, the store consistent", async () => {
    const target = 25;
    /** A pruner's loop: a step that finds the lock taken says done; this one tries again shortly, as the pruner would. */
    const prune = async (store: NodeStore): Promise<PruneStep[]> => {
      const steps: PruneStep[] = [];
      while ((await store.pruningIndex()) < target) {
        const step = await store.prune(target, 1);
        steps.push(step);
        if (step.done && step.pruningIndex < target) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return steps;
    };
    const submit = async (store: NodeStore, name: string): Promise<void> => {
      for (let i = 0; i < 15; i++) expect(await store.accept(indexation([tangle.last], `${name} ${i}`))).toEqual({ stored: true });
    };
    const [stepsA, stepsB] = await Promise.all([prune(a), prune(b), submit(a, "submitted at a"), submit(b, "submitted at b")]);
    const all = [...stepsA!, ...stepsB!];
    expect(all.reduce((n, s) => n + s.messages, 0)).toBe(tangle.prunedBy(target).length);
    for (const steps of [stepsA!, stepsB!]) for (let i = 1; i < steps.length; i++) expect(steps[i]!.pruningIndex).toBeGreaterThanOrEqual(steps[i - 1]!.pruningIndex);
    // Each milestone finished exactly once, in order, whichever instance finished it.
    const log = await sql<{ value: string }>(db.url, "SELECT value FROM public.pruning_log ORDER BY n");
    expect(log.map((r) => Number(r.value))).toEqual(Array.from({ length: target }, (_, i) => i + 1));
    expect(stepsA!.some((s) => s.messages > 0) || stepsB!.some((s) => s.messages > 0)).toBe(true);
    expect(await a.pruningIndex()).toBe(target);
    expect(await b.pruningIndex()).toBe(target);
    for (const id of tangle.prunedBy(target)) expect(await b.has(id)).toBe(false);
    for (const id of tangle.cones.get(26)!) expect(await b.has(id)).toBe(true);
    expect(await a.verify()).toBeUndefined();
  });
});

/** Rounds of three indexation messages and a milestone referencing them, written as a previous version wrote them. */
async function previousRounds(previous: PreviousVersion, count: number): Promise<string[][]> {
  const cones: string[][] = [];
  let last = ZERO_MESSAGE_ID;
  for (let i = 1; i <= count; i++) {
    const a = indexation([last], `cone ${i}`, "a");
    const b = indexation([a.id], `cone ${i}`, "b");
    const ms = milestoneMessage(i, [b.id, last]);
    for (const m of [a, b, ms]) await previous.accept(m);
    await previous.confirm(i, ms, [a, b, ms].map((m) => ({ messageId: m.id, ledgerInclusionState: "noTransaction" as const })), []);
    cones.push([a.id, b.id, ms.id]);
    last = ms.id;
  }
  return cones;
}

describe.skipIf(serverUrl === undefined)("PostgreSQL: a database of schema version 1", () => {
  let db: TestDatabase;
  const owner = wallet();
  let cones: string[][];
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "migrate");
    const previous = await PreviousVersion.create(db.url, 1, genesisOf(owner, TOTAL_SUPPLY));
    try {
      cones = await previousRounds(previous, 4);
    } finally {
      await previous.end();
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("openExisting (for tools beside running nodes) migrates nothing: it reads, verifies and snapshots, and refuses to prune", async () => {
    const tool = new PostgresStore({ connectionString: db.url, pageRows: 2 });
    try {
      expect(await tool.openExisting()).toEqual({ created: false, ledger: true });
      expect(await tool.pruningIndex()).toBe(0);
      expect(await tool.verify()).toBeUndefined();
      expect(await tool.stats()).toMatchObject({ messages: 12, unspentOutputs: 1, latestMilestoneIndex: 4 });
      const snapshot = await tool.readSnapshot();
      expect(snapshot.milestone?.index).toBe(4);
      expect(snapshot.outputs).toEqual([{ outputId: GENESIS_OUTPUT, messageId: ZERO_MESSAGE_ID, milestoneIndexBooked: 0, output: single(owner, TOTAL_SUPPLY) }]);
      expect((await refusal(tool.prune(2, 10))).code).toBe("NOT_SUPPORTED");
      expect(await tool.has(cones[3]![2]!)).toBe(true);
    } finally {
      await tool.close();
    }
    expect(await sql(db.url, "SELECT max(version) AS v FROM chrysalis.schema_migrations")).toEqual([{ v: 1 }]);
  });

  it("open migrates it to this version: the new indexes and tables, its entry points persisted, no tip set, and it prunes and verifies", async () => {
    const store = new PostgresStore(db.url);
    try {
      expect(await store.open({ network: NETWORK })).toEqual({ created: false, ledger: true });
      expect(await sql(db.url, "SELECT max(version) AS v FROM chrysalis.schema_migrations")).toEqual([{ v: POSTGRES_SCHEMA_VERSION }]);
      const indexes = (await sql<{ indexname: string }>(db.url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'chrysalis'")).map((r) => r.indexname);
      expect(indexes).toEqual(expect.arrayContaining(["messages_by_milestone", "messages_unreferenced", "entry_points_pkey", "claims_pkey"]));
      expect(indexes.filter((i) => i.startsWith("tips"))).toEqual([]);
      expect(await sql(db.url, "SELECT encode(message_id, 'hex') AS id, index FROM chrysalis.entry_points")).toEqual([{ id: ZERO_MESSAGE_ID, index: 0 }]);
      expect(store.entryPoints).toEqual(new Map([[ZERO_MESSAGE_ID, 0]]));
      expect(await store.pruningIndex()).toBe(0);
      expect(await store.verify()).toBeUndefined();
      const steps = await pruneAll(store, 2, 100);
      expect(steps.at(-1)).toMatchObject({ pruningIndex: 2, done: true });
      expect(await store.has(cones[1]![0]!)).toBe(false);
      expect(await store.has(cones[2]![0]!)).toBe(true);
      expect(await store.verify()).toBeUndefined();
      expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY, dustAllowance: 0, dustOutputs: 0 });
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: a database of schema version 2, whose ledger moved at acceptance, migrated to claims", () => {
  // Milestone 1 confirms tx1 (the owner pays w1, keeps the rest). Then, accepted and never confirmed: tx2 (w1 pays w2),
  // tx3 (w2 spends what tx2 made: an output no milestone booked), tx4 (the owner pays w3 a dust allowance and a dust
  // output), and a note. What the previous version did to the ledger for tx2–tx4 is rolled back by the migration: their
  // outputs become pending outputs, their spends claims.
  let db: TestDatabase;
  const owner = wallet();
  const [w1, w2, w3] = [wallet(), wallet(), wallet()];
  let tx1: Spend;
  let tx2: Spend;
  let tx3: Spend;
  let tx4: Spend;
  let ms1: Acceptance;
  let note: Acceptance;
  /** Every message with its bytes, metadata and children, as the previous version left them. */
  let before: Map<string, unknown>;
  const seen = async (store: NodeStore, id: string): Promise<unknown> => {
    const stored = await store.get(id);
    return { bytes: stored === undefined ? undefined : toHex(stored.bytes), metadata: await store.metadata(id), children: await store.children(id, 100) };
  };
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "migrate2");
    const previous = await PreviousVersion.create(db.url, 2, genesisOf(owner, TOTAL_SUPPLY));
    try {
      tx1 = spend(owner, [GENESIS_OUTPUT], [single(w1, 10 * MI), single(owner, TOTAL_SUPPLY - 10 * MI)], [ZERO_MESSAGE_ID], "migrate");
      await previous.accept(tx1.acceptance, tx1);
      ms1 = milestoneMessage(1, [tx1.acceptance.id]);
      await previous.accept(ms1);
      await previous.confirm(1, ms1, [{ messageId: tx1.acceptance.id, ledgerInclusionState: "included" }, { messageId: ms1.id, ledgerInclusionState: "noTransaction" }], [tx1]);
      tx2 = spend(w1, [createdFor(tx1, w1)], [single(w2, 10 * MI)], [ms1.id], "migrate");
      await previous.accept(tx2.acceptance, tx2);
      tx3 = spend(w2, [tx2.created[0]!], [single(w3, 10 * MI)], [tx2.acceptance.id]);
      await previous.accept(tx3.acceptance, tx3);
      tx4 = spend(owner, [createdFor(tx1, owner)], [dustAllowance(w3, MI), single(w3, DUST_THRESHOLD / 10), single(owner, TOTAL_SUPPLY - 11 * MI - DUST_THRESHOLD / 10)], [ms1.id]);
      await previous.accept(tx4.acceptance, tx4);
      note = indexation([tx3.acceptance.id, tx4.acceptance.id], "migrate", "a note");
      await previous.accept(note);
    } finally {
      await previous.end();
    }
    // The previous version's ledger, as its API showed it: every accepted transaction applied.
    const old = await sql<{ address: string; balance: string }>(db.url, "SELECT encode(address, 'hex') AS address, balance::text FROM chrysalis.balances");
    expect(new Map(old.map((r) => [r.address, r.balance])).get(toHex(w3.address))).toBe(String(11 * MI + DUST_THRESHOLD / 10));
    expect(await sql(db.url, "SELECT count(*)::int AS n FROM chrysalis.spent WHERE milestone_index IS NULL")).toEqual([{ n: 3 }]);
    const tool = new PostgresStore(db.url);
    try {
      await tool.openExisting();
      before = new Map();
      for (const id of [tx1, tx2, tx3, tx4].map((t) => t.acceptance.id).concat(ms1.id, note.id, ZERO_MESSAGE_ID)) before.set(id, await seen(tool, id));
      // Checked by its own version's rules: consistent.
      expect(await tool.verify()).toBeUndefined();
    } finally {
      await tool.close();
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("opened with this version: migrated once; the messages untouched; the unconfirmed spends claims, their outputs pending outputs, the balances those of the confirmed ledger; verify clean", async () => {
    const [store, other] = [new PostgresStore(db.url), new PostgresStore(db.url)];
    try {
      // Two instances starting at once: one migrates, the other waits for it and finds the store migrated.
      expect(await Promise.all([store.open({ network: NETWORK }), other.open({ network: NETWORK })])).toEqual([{ created: false, ledger: true }, { created: false, ledger: true }]);
      expect(await sql(db.url, "SELECT version FROM chrysalis.schema_migrations ORDER BY version")).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
      expect(await sql(db.url, "SELECT to_regclass('chrysalis.tips') AS tips")).toEqual([{ tips: null }]);
      expect(await store.verify()).toBeUndefined();
      for (const [id, was] of before) expect(await seen(store, id), id).toEqual(was);
      expect(await store.unreferenced(100)).toEqual([tx2, tx3, tx4].map((t) => t.acceptance.id).concat(note.id));
      expect(await store.stats()).toMatchObject({ messages: 6, unspentOutputs: 2, latestMilestoneIndex: 1, pruningIndex: 0 });

      // The confirmed ledger: tx1 only.
      expect(await store.output(GENESIS_OUTPUT)).toMatchObject({ milestoneIndexBooked: 0, spent: { transactionId: tx1.transactionId, messageId: tx1.acceptance.id, milestoneIndex: 1 } });
      for (const id of tx1.created) expect((await store.output(id))?.spent).toBeUndefined();
      for (const id of [...tx2.created, ...tx3.created, ...tx4.created]) expect(await store.output(id)).toBeUndefined();
      expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY - 10 * MI, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressBalance(w1.address)).toEqual({ balance: 10 * MI, dustAllowance: 0, dustOutputs: 0 });
      for (const w of [w2, w3]) expect(await store.addressBalance(w.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressOutputs(w1.address, { max: 10, includeSpent: true })).toEqual([createdFor(tx1, w1)]);
      expect(await store.addressOutputs(w3.address, { max: 10, includeSpent: true })).toEqual([]);
      // The outputs the unconfirmed transactions made are their pending outputs, made at the latest index; each
      // rolled-back spend is its transaction's claim, of an output that stays or of a pending one (tx3's, chained).
      for (const [tx, to] of [[tx2, w2], [tx3, w3]] as const) {
        expect(await store.pendingOutput(tx.created[0]!)).toEqual({ outputId: tx.created[0]!, transactionId: tx.transactionId, messageId: tx.acceptance.id, output: single(to, 10 * MI), index: 1 });
      }
      for (const [i, output] of tx4.payload.essence.outputs.entries()) expect(await store.pendingOutput(tx4.created[i]!)).toMatchObject({ messageId: tx4.acceptance.id, output, index: 1 });
      expect(await sql(db.url, "SELECT count(*)::int AS n FROM chrysalis.pending_outputs")).toEqual([{ n: 5 }]);
      expect(await store.claim(createdFor(tx1, w1))).toEqual({ transactionId: tx2.transactionId, messageId: tx2.acceptance.id, index: 1 });
      expect(await store.claim(createdFor(tx1, owner))).toEqual({ transactionId: tx4.transactionId, messageId: tx4.acceptance.id, index: 1 });
      expect(await store.claim(tx2.created[0]!)).toEqual({ transactionId: tx3.transactionId, messageId: tx3.acceptance.id, index: 1 });
      expect(await sql(db.url, "SELECT count(*)::int AS n FROM chrysalis.claims")).toEqual([{ n: 3 }]);
    } finally {
      await store.close();
      await other.close();
    }
  });

  it("it goes on: a second spend of a claimed output is refused, a chained spend of a pending output is taken, a milestone confirms the pending transactions in walk order, and the previous version can no longer write", async () => {
    const store = new PostgresStore(db.url);
    try {
      await store.open({ network: NETWORK });
      expect((await refusal(store.accept(spend(w1, [createdFor(tx1, w1)], [single(wallet(), 10 * MI)], [note.id]).acceptance))).code).toBe("INPUT_SPENT");
      // tx2's output is pending and tx3 holds it; tx3's output is pending and nobody's: w3 may spend it already.
      expect((await refusal(store.accept(spend(w2, [tx2.created[0]!], [single(wallet(), 10 * MI)], [note.id]).acceptance))).code).toBe("INPUT_SPENT");
      const tx5 = spend(w3, [tx3.created[0]!], [single(w3, 10 * MI)], [note.id], "after the migration");
      expect(await store.accept(tx5.acceptance)).toEqual({ stored: true });
      expect(await store.claim(tx3.created[0]!)).toEqual({ transactionId: tx5.transactionId, messageId: tx5.acceptance.id, index: 1 });
      expect(await store.verify()).toBeUndefined();
      const ms2 = milestoneMessage(2, [tx5.acceptance.id]);
      await issue(store, {
        index: 2,
        timestamp: 1_600_000_002,
        message: ms2,
        referenced: [
          { messageId: tx2.acceptance.id, ledgerInclusionState: "included" },
          { messageId: tx3.acceptance.id, ledgerInclusionState: "included" },
          { messageId: tx4.acceptance.id, ledgerInclusionState: "included" },
          { messageId: note.id, ledgerInclusionState: "noTransaction" },
          { messageId: tx5.acceptance.id, ledgerInclusionState: "included" },
        ],
        included: [tx2, tx3, tx4, tx5],
      });
      expect(await store.addressBalance(w1.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressBalance(w2.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressBalance(w3.address)).toEqual({ balance: 11 * MI + DUST_THRESHOLD / 10, dustAllowance: MI, dustOutputs: 1 });
      expect(await store.output(tx2.created[0]!)).toMatchObject({ milestoneIndexBooked: 2, spent: { transactionId: tx3.transactionId, milestoneIndex: 2 } });
      expect(await store.output(tx3.created[0]!)).toMatchObject({ milestoneIndexBooked: 2, spent: { transactionId: tx5.transactionId, milestoneIndex: 2 } });
      expect(await sql(db.url, "SELECT (SELECT count(*)::int FROM chrysalis.claims) AS claims, (SELECT count(*)::int FROM chrysalis.pending_outputs) AS pending")).toEqual([{ claims: 0, pending: 0 }]);
      expect(await store.unreferenced(100)).toEqual([]);
      expect(await store.verify()).toBeUndefined();
    } finally {
      await store.close();
    }
    // An instance of the previous version still running: its next write fails (its tip set is gone) and writes nothing.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const late = indexation([ZERO_MESSAGE_ID], "from a node of the previous version");
      const error = await client.query(PREVIOUS_INSERT_MESSAGE, [Buffer.from(late.id, "hex"), Buffer.from(late.bytes), null, 1, 0, 0, [Buffer.alloc(32)], 1000]).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: "42P01" });
      expect((await client.query("SELECT 1 FROM chrysalis.messages WHERE id = $1", [Buffer.from(late.id, "hex")])).rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("a write of the previous version under way when the migration starts: the migration waits for its commit, then rolls it back like the others (its output a pending output)", async () => {
    const made = await createTestDatabase(serverUrl!, "migrate2race");
    const holder = wallet();
    const previous = await PreviousVersion.create(made.url, 2, genesisOf(holder, TOTAL_SUPPLY));
    try {
      const late = spend(holder, [GENESIS_OUTPUT], [single(wallet(), TOTAL_SUPPLY)], [ZERO_MESSAGE_ID]);
      await previous.client.query("BEGIN");
      await previous.accept(late.acceptance, late);
      const store = new PostgresStore(made.url);
      try {
        const opening = store.open({ network: NETWORK });
        // The migration waits on the tables the uncommitted write holds, before it reads any of them.
        expect(await waitFor(made.url, WAITING_ON_TABLE, opening)).toBe(true);
        await previous.client.query("COMMIT");
        expect(await opening).toEqual({ created: false, ledger: true });
        expect(await store.has(late.acceptance.id)).toBe(true);
        expect(await store.output(late.created[0]!)).toBeUndefined();
        expect(await store.pendingOutput(late.created[0]!)).toMatchObject({ messageId: late.acceptance.id, index: 0 });
        expect((await store.output(GENESIS_OUTPUT))?.spent).toBeUndefined();
        expect(await store.claim(GENESIS_OUTPUT)).toEqual({ transactionId: late.transactionId, messageId: late.acceptance.id, index: 0 });
        expect(await store.addressBalance(holder.address)).toEqual({ balance: TOTAL_SUPPLY, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.verify()).toBeUndefined();
      } finally {
        await store.close();
      }
    } finally {
      await previous.end();
      await made.drop();
    }
  });

  it("a transaction a milestone of the previous version found conflicting: its outputs, which no milestone will book, become no pending outputs", async () => {
    const made = await createTestDatabase(serverUrl!, "migrate2conflict");
    const holder = wallet();
    const previous = await PreviousVersion.create(made.url, 2, genesisOf(holder, TOTAL_SUPPLY));
    let lost: Spend;
    let kept: Spend;
    try {
      lost = spend(holder, [GENESIS_OUTPUT], [single(wallet(), TOTAL_SUPPLY)], [ZERO_MESSAGE_ID], "conflicting");
      await previous.accept(lost.acceptance, lost);
      const ms1 = milestoneMessage(1, [lost.acceptance.id]);
      await previous.accept(ms1);
      await previous.confirm(1, ms1, [{ messageId: lost.acceptance.id, ledgerInclusionState: "conflicting", conflictReason: 1 }, { messageId: ms1.id, ledgerInclusionState: "noTransaction" }], []);
      // And one accepted after it, no milestone referenced yet: its outputs do become pending outputs.
      kept = spend(holder, [lost.created[0]!], [single(holder, TOTAL_SUPPLY)], [ms1.id], "unreferenced");
      await previous.accept(kept.acceptance, kept);
    } finally {
      await previous.end();
    }
    const store = new PostgresStore(made.url);
    try {
      await store.open({ network: NETWORK });
      expect(await store.output(lost.created[0]!)).toBeUndefined();
      expect(await store.pendingOutput(lost.created[0]!)).toBeUndefined();
      expect((await refusal(store.accept(spend(wallet(), [lost.created[0]!], [single(holder, TOTAL_SUPPLY)], [kept.acceptance.id]).acceptance))).code).toBe("INPUT_NOT_FOUND");
      expect(await store.pendingOutput(kept.created[0]!)).toMatchObject({ messageId: kept.acceptance.id, index: 1 });
      // kept spent an output no milestone will book: its spend is no claim.
      expect(await store.claim(lost.created[0]!)).toBeUndefined();
      expect(await store.addressBalance(holder.address)).toEqual({ balance: TOTAL_SUPPLY, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.verify()).toBeUndefined();
    } finally {
      await store.close();
      await made.drop();
    }
  });

  it("a store the previous version made from a snapshot, with an output its source had not confirmed: the output is kept, booked at the snapshot's milestone", async () => {
    const made = await createTestDatabase(serverUrl!, "migrate2snap");
    try {
      const client = new pg.Client({ connectionString: made.url });
      await client.connect();
      const holder = wallet();
      const [booked, pending] = [outputId("ab".repeat(32), 0), outputId("cd".repeat(32), 1)];
      try {
        await PreviousVersion.schema(client, 2);
        // As the previous version's #applySnapshot wrote a snapshot of milestone 7: outputs below seq 0, the pending one
        // unbooked, their balances, the milestone without its message, the entry point as a tip.
        await client.query("INSERT INTO chrysalis.meta (key, value) VALUES ('network', $1), ('ledger', '1')", [NETWORK]);
        await client.query("UPDATE chrysalis.meta SET value = CASE key WHEN 'pruning_index' THEN '6' ELSE '' END WHERE key IN ('pruning_index', 'coordinator_keys')");
        const entry = Buffer.from("ef".repeat(32), "hex");
        await client.query("INSERT INTO chrysalis.entry_points (message_id, index) VALUES ($1, 7)", [entry]);
        await client.query("INSERT INTO chrysalis.tips (message_id, seq) VALUES ($1, 0)", [entry]);
        await client.query(
          `INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount, milestone_booked) VALUES ($1, -2, $3, 0, $4, $5, 7), ($2, -1, $3, 0, $4, $6, NULL)`,
          [Buffer.from(booked, "hex"), Buffer.from(pending, "hex"), Buffer.alloc(32), Buffer.from(holder.address), TOTAL_SUPPLY - MI, MI],
        );
        await client.query("INSERT INTO chrysalis.balances (address, balance, dust_allowance, dust_outputs) VALUES ($1, $2, 0, 0)", [Buffer.from(holder.address), TOTAL_SUPPLY]);
        await client.query("INSERT INTO chrysalis.milestones (index, message_id, timestamp, created_outputs, consumed_outputs) VALUES (7, $1, 7, '{}', '{}')", [entry]);
      } finally {
        await client.end();
      }
      const store = new PostgresStore(made.url);
      try {
        await store.open({ network: NETWORK });
        expect((await store.output(pending))?.milestoneIndexBooked).toBe(7);
        expect(await store.addressBalance(holder.address)).toEqual({ balance: TOTAL_SUPPLY, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressOutputs(holder.address, { max: 10 })).toEqual([booked, pending]);
        expect(await store.verify()).toBeUndefined();
      } finally {
        await store.close();
      }
    } finally {
      await made.drop();
    }
  });
});

/** Polls `query` on its own connection until it answers a row with ok = true, or `settled` ends first; true if seen. */
async function waitFor(url: string, query: string, settled: Promise<unknown>, timeoutMs = 10_000): Promise<boolean> {
  let done = false;
  void settled.then(
    () => (done = true),
    () => (done = true),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const start = Date.now(); Date.now() - start < timeoutMs && !done; ) {
      if ((await client.query<{ ok: boolean }>(query)).rows[0]?.ok === true) return true;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return false;
  } finally {
    await client.end();
  }
}

/** A backend of this database waiting on an advisory lock (a gate below), on a row or transaction lock, or on a table. */
const WAITING_ON_GATE = `SELECT count(*) > 0 AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`;
const WAITING_ON_ROW = `SELECT count(*) > 0 AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`;
const BOTH_WAITING_ON_ROWS = `SELECT count(*) >= 2 AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`;
const WAITING_ON_TABLE = `SELECT count(*) > 0 AS ok FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'relation'`;

/** What a promise settles to, without throwing: the value, or the error. */
async function settle<T>(work: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await work };
  } catch (error) {
    return { error };
  }
}

/** The advisory lock a gate waits on ("gate"). */
const GATE = 0x67617465;

/**
 * Gates, which fix the interleaving of two writes: public.gate(), a trigger function that waits on the advisory lock
 * GATE while the test holds it, created on the database at `url`; and the connection of its own the test holds the
 * lock on.
 */
async function gates(url: string): Promise<pg.Client> {
  await sql(
    url,
    `CREATE FUNCTION public.gate() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_advisory_xact_lock_shared(${GATE}); RETURN NEW; END $$`,
  );
  const gate = new pg.Client({ connectionString: url });
  await gate.connect();
  return gate;
}

describe.skipIf(serverUrl === undefined)("PostgreSQL: a claim racing a prune step that deletes its input", () => {
  // Milestone 2 spends the genesis output (tx1), milestone 3 spends tx1's output to w1 (tx2); each is pruned while a
  // second transaction's claim on the same output is under way. The interleaving is fixed by gates.
  let db: TestDatabase;
  let store: PostgresStore;
  let tangle: Tangle;
  let gate: pg.Client;
  const owner = wallet();
  const w1 = wallet();
  const w2 = wallet();
  let tx1: Spend;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "prunerace");
    store = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    await store.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    tangle = new Tangle(store);
    await tangle.round();
    await tangle.round({ spends: [(p) => (tx1 = spend(owner, [GENESIS_OUTPUT], [single(w1, 10 * MI), single(owner, TOTAL_SUPPLY - 10 * MI)], [p]))] });
    await tangle.round({ spends: [(p) => spend(w1, [createdFor(tx1, w1)], [single(w2, 10 * MI)], [p], "tx2")] });
    while (tangle.index < 5) await tangle.round();
    expect((await pruneAll(store, 1, 1000)).at(-1)).toMatchObject({ pruningIndex: 1, done: true });
    gate = await gates(db.url);
  });
  afterAll(async () => {
    await gate?.end();
    await store?.close();
    await db?.drop();
  });

  it("the prune step commits first: the claim waits for it, then finds its input gone (INPUT_NOT_FOUND), and the supply stays whole", async () => {
    // The prune step stops at its last statement (the pruning index), its deletes of the output and its spent row done.
    await sql(db.url, "CREATE TRIGGER gate AFTER UPDATE ON chrysalis.meta FOR EACH ROW WHEN (NEW.key = 'pruning_index') EXECUTE FUNCTION public.gate()");
    await gate.query("SELECT pg_advisory_lock($1)", [GATE]);
    let released = false;
    try {
      const pruning = store.prune(2, 1000);
      expect(await waitFor(db.url, WAITING_ON_GATE, pruning)).toBe(true);
      const again = spend(owner, [GENESIS_OUTPUT], [single(owner, TOTAL_SUPPLY)], [tangle.last], "again");
      const accepting = settle(store.accept(again.acceptance));
      // The claim waits on the prune step's locks (the deleted output row), whatever it read before.
      expect(await waitFor(db.url, WAITING_ON_ROW, accepting)).toBe(true);
      await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      released = true;
      expect(await pruning).toEqual({ pruningIndex: 2, messages: expect.any(Number), done: true });
      const outcome = await accepting;
      expect(outcome.value).toBeUndefined();
      expect(outcome.error).toMatchObject({ code: "INPUT_NOT_FOUND", path: "payload.essence.inputs[0]" });
      expect(await store.has(again.acceptance.id)).toBe(false);
      expect(await store.output(GENESIS_OUTPUT)).toBeUndefined();
      expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY - 10 * MI, dustAllowance: 0, dustOutputs: 0 });
      const [unspent] = await sql<{ total: string }>(
        db.url,
        "SELECT sum(o.amount)::text AS total FROM chrysalis.outputs o WHERE NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)",
      );
      expect(unspent!.total).toBe(String(TOTAL_SUPPLY));
      expect(await store.verify()).toBeUndefined();
    } finally {
      if (!released) await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      await sql(db.url, "DROP TRIGGER gate ON chrysalis.meta");
    }
  });

  it("the claim locks its input first: the prune step waits for it, the claim is refused as spent, then the prune step deletes the output", async () => {
    // The claim stops at its message's insert, which runs once the claimed outputs are locked.
    await sql(db.url, "CREATE TRIGGER gate BEFORE INSERT ON chrysalis.messages FOR EACH ROW EXECUTE FUNCTION public.gate()");
    await gate.query("SELECT pg_advisory_lock($1)", [GATE]);
    let released = false;
    const input = createdFor(tx1, w1);
    try {
      const again = spend(w1, [input], [single(w1, 10 * MI)], [tangle.last], "again");
      const accepting = settle(store.accept(again.acceptance));
      expect(await waitFor(db.url, WAITING_ON_GATE, accepting)).toBe(true);
      const pruning = settle(store.prune(3, 1000));
      // The prune step waits on the spend's lock of the output it came to delete.
      expect(await waitFor(db.url, WAITING_ON_ROW, pruning)).toBe(true);
      await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      released = true;
      const outcome = await accepting;
      expect(outcome.value).toBeUndefined();
      expect(outcome.error).toMatchObject({ code: "INPUT_SPENT", path: "payload.essence.inputs[0]" });
      expect((await pruning).value).toEqual({ pruningIndex: 3, messages: expect.any(Number), done: true });
      expect(await store.has(again.acceptance.id)).toBe(false);
      expect(await store.output(input)).toBeUndefined();
      expect(await store.addressBalance(w1.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.addressBalance(w2.address)).toEqual({ balance: 10 * MI, dustAllowance: 0, dustOutputs: 0 });
      expect(await store.verify()).toBeUndefined();
    } finally {
      if (!released) await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      await sql(db.url, "DROP TRIGGER gate ON chrysalis.messages");
    }
    // And afterwards, without any race: the pruned output is not found.
    expect((await refusal(store.accept(spend(w1, [input], [single(w1, 10 * MI)], [tangle.last], "later").acceptance))).code).toBe("INPUT_NOT_FOUND");
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: chained spends racing the confirmation that books their input", () => {
  const owner = wallet();
  const w1 = wallet();
  // Two instances on a database of their own, and the connection holding the gate.
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  let gate: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "chainrace");
    a = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    b = new PostgresStore({ connectionString: db.url, maxConnections: 4 });
    await a.open({ network: NETWORK, genesis: genesisOf(owner, TOTAL_SUPPLY) });
    await b.open({ network: NETWORK });
    gate = await gates(db.url);
  });
  afterAll(async () => {
    await gate?.end();
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it("two chained spends of a pending output, one at each instance, wait for the confirmation that books it: each then claims the ledger's output, and exactly one is accepted", async () => {
    const tx1 = spend(owner, [GENESIS_OUTPUT], [single(w1, TOTAL_SUPPLY)], [ZERO_MESSAGE_ID], "pending");
    expect(await a.accept(tx1.acceptance)).toEqual({ stored: true });
    const input = tx1.created[0]!;
    // The confirmation stops at its first new output, after it locked the pending output it books.
    await sql(db.url, "CREATE TRIGGER gate BEFORE INSERT ON chrysalis.outputs FOR EACH ROW EXECUTE FUNCTION public.gate()");
    await gate.query("SELECT pg_advisory_lock($1)", [GATE]);
    let released = false;
    try {
      const confirming = settle(issue(a, { index: 1, timestamp: 1_600_000_001, message: milestoneMessage(1, [tx1.acceptance.id]), referenced: [{ messageId: tx1.acceptance.id, ledgerInclusionState: "included" }], included: [tx1] }));
      expect(await waitFor(db.url, WAITING_ON_GATE, confirming)).toBe(true);
      const [x, y] = ["x", "y"].map((tag) => spend(w1, [input], [single(wallet(), TOTAL_SUPPLY)], [tx1.acceptance.id], tag)) as [Spend, Spend];
      const spending = Promise.all([settle(a.accept(x.acceptance)), settle(b.accept(y.acceptance))]);
      // Both wait on the confirmation's lock of the pending output, which their own lock statements came to take.
      expect(await waitFor(db.url, BOTH_WAITING_ON_ROWS, spending)).toBe(true);
      await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      released = true;
      expect((await confirming).error).toBeUndefined();
      const outcomes = await spending;
      const winners = outcomes.flatMap((o, i) => (o.value?.stored === true ? [[x, y][i]!] : []));
      expect(winners).toHaveLength(1);
      expect(outcomes.find((o) => o.error !== undefined)?.error).toMatchObject({ code: "INPUT_SPENT", path: "payload.essence.inputs[0]" });
      expect(await a.pendingOutput(input)).toBeUndefined();
      expect(await b.output(input)).toMatchObject({ milestoneIndexBooked: 1 });
      expect(await b.claim(input)).toEqual({ transactionId: winners[0]!.transactionId, messageId: winners[0]!.acceptance.id, index: 1 });
      expect(await a.verify()).toBeUndefined();
    } finally {
      if (!released) await gate.query("SELECT pg_advisory_unlock($1)", [GATE]);
      await sql(db.url, "DROP TRIGGER gate ON chrysalis.outputs");
    }
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: migrations on a large store run with no time limit", () => {
  // A version 1 store with many messages, so that migration 2's CREATE INDEX takes far longer than the timeouts below
  // (measured, not assumed: 200,000 rows built it in 51 ms on a faster machine of this type, under the 60 ms the first
  // test needs). Each test opens a copy of it (CREATE DATABASE … TEMPLATE).
  const ROWS = 600_000;
  const TIMEOUT_MS = 20;
  let template: TestDatabase;
  const copies: TestDatabase[] = [];
  let buildMs = 0;

  async function copy(label: string): Promise<TestDatabase> {
    const name = `${template.name}_${label}`;
    await sql(serverUrl!, `CREATE DATABASE ${name} TEMPLATE ${template.name}`);
    const url = new URL(template.url);
    url.pathname = `/${name}`;
    const made = { url: url.toString(), name, drop: () => sql(serverUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined) };
    copies.push(made);
    return made;
  }

  beforeAll(async () => {
    template = await createTestDatabase(serverUrl!, "bigv1");
    await (await PreviousVersion.create(template.url, 1, genesisOf(wallet(), TOTAL_SUPPLY))).end();
    // Rows of the messages table only (the migrations read nothing else of them); their bytes are not messages, so
    // nothing here verifies them.
    await sql(
      template.url,
      `INSERT INTO chrysalis.messages (id, bytes, arrival_time, cone_oldest, cone_youngest, referenced_by, milestone_index, inclusion)
       SELECT sha256(int4send(i)), '\\x00'::bytea, i, 1, 1, 1 + i / 100, NULL, 1 FROM generate_series(1, ${ROWS}) AS i;
       ANALYZE chrysalis.messages`,
    );
    // How long migration 2's first index takes here, in a transaction rolled back.
    const client = new pg.Client({ connectionString: template.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      const started = performance.now();
      await client.query("CREATE INDEX messages_by_milestone ON chrysalis.messages (referenced_by, seq)");
      buildMs = performance.now() - started;
      await client.query("ROLLBACK");
    } finally {
      await client.end();
    }
  });
  afterAll(async () => {
    for (const d of copies) await d.drop();
    await template?.drop();
  });

  const migrated = async (url: string): Promise<void> => {
    expect(await sql(url, "SELECT max(version) AS v FROM chrysalis.schema_migrations")).toEqual([{ v: POSTGRES_SCHEMA_VERSION }]);
    const indexes = (await sql<{ indexname: string }>(url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'chrysalis'")).map((r) => r.indexname);
    expect(indexes).toEqual(expect.arrayContaining(["messages_by_milestone", "messages_unreferenced", "entry_points_pkey", "claims_pkey"]));
  };

  it("a store whose queries time out after a few ms (client side) still migrates: the migration's connection has no query timeout", async () => {
    expect(buildMs).toBeGreaterThan(3 * TIMEOUT_MS);
    const target = await copy("client");
    const store = new PostgresStore({ connectionString: target.url, queryTimeoutMillis: TIMEOUT_MS });
    try {
      expect(await store.open({ network: NETWORK })).toEqual({ created: false, ledger: true });
      await migrated(target.url);
      expect(store.entryPoints).toEqual(new Map([[ZERO_MESSAGE_ID, 0]]));
      expect(await store.pruningIndex()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("a database whose statement_timeout and lock_timeout are a few ms still migrates: the migration lifts both for its transaction", async () => {
    const target = await copy("server");
    await sql(serverUrl!, `ALTER DATABASE ${target.name} SET statement_timeout = '${TIMEOUT_MS}ms'`);
    await sql(serverUrl!, `ALTER DATABASE ${target.name} SET lock_timeout = '${TIMEOUT_MS}ms'`);
    const store = new PostgresStore(target.url);
    try {
      expect(await store.open({ network: NETWORK })).toEqual({ created: false, ledger: true });
      await migrated(target.url);
    } finally {
      await store.close();
    }
  });
});
