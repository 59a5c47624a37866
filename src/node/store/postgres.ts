// The PostgreSQL engine of the storage contract, for several node instances sharing one database (node-postgres:
// pooled clients, parameterised queries only). Every table lives in the schema `chrysalis`; versioned migrations run
// at open under an advisory lock, and a database migrated by a newer version refuses to open.
//
// Accepting a message is one database transaction. The database decides what JavaScript cannot decide alone when two
// instances write at the same instant:
// - a spent output is a row keyed by the output id, inserted in the same transaction as the message: of two
//   transactions spending one output, the second insert waits for the first and then finds the key taken;
// - address balances are updated in place (INSERT … ON CONFLICT DO UPDATE), which row-locks them, so the dust rule
//   (checkLedgerState, run on the balances the update returned) sees every committed spend before it;
// - a milestone index is a primary key, and only the next index may be inserted.
// - the outputs a transaction consumes are row-locked (FOR KEY SHARE) and read inside its transaction: pruning deletes
//   spent outputs, and that DELETE waits for the lock (or the read waits for the DELETE and then finds no row), so a
//   spend racing a prune step either lands before the output is gone (and is refused as spent) or finds it gone.
// A failed rule rolls the whole transaction back. Locks are taken in one order (message and tips, consumed outputs
// sorted, spent ids sorted, created outputs, addresses sorted); a deadlock or serialisation failure the database still
// reports is retried.
import type { ClientBase, Pool, PoolClient, QueryConfig, QueryResultRow } from "pg";
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex, toHex } from "../../bytes/hex.js";
import { DUST_THRESHOLD, TOTAL_SUPPLY } from "../../bytes/limits.js";
import { decodeMessage } from "../../model/codec.js";
import { messageId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { balanceDeltas, checkLedgerState, EMPTY_BALANCE, type BalanceDelta, type LedgerOutput } from "../ledger.js";
import type { Output } from "../../model/types.js";
import { Grouped } from "./grouped.js";
import { indexesOf, OUTPUTS_PER_SEQ, reason, storeClosed, storedMessage, storeTooNew } from "./common.js";
import {
  ZERO_MESSAGE_ID,
  type Acceptance,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type EntryPoint,
  type GenesisOutput,
  type LedgerSnapshot,
  type LedgerInclusionState,
  type MessageMetadata,
  type MetadataWithLatest,
  type MilestoneApplication,
  type MilestoneRecord,
  type NodeStore,
  type OutputRecord,
  type PruneStep,
  type SnapshotOutput,
  type StoredMessage,
  type StoreOpenOptions,
  type StoreOpenResult,
  type StoreStats,
  type UtxoChanges,
} from "./contract.js";

/** The migrations, in order: version i + 1 is MIGRATIONS[i]. Append only; never edit one that has shipped. */
const MIGRATIONS: readonly { readonly description: string; readonly statements: readonly string[] }[] = [
  {
    description: "messages, children, tips, UTXO ledger, milestones, nonces, revocations, secrets",
    statements: [
      `CREATE TABLE chrysalis.meta (key text PRIMARY KEY, value text NOT NULL)`,
      `CREATE TABLE chrysalis.messages (
        id bytea PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        bytes bytea NOT NULL,
        index_key bytea,
        arrival_time double precision NOT NULL,
        cone_oldest integer NOT NULL,
        cone_youngest integer NOT NULL,
        referenced_by integer,
        milestone_index integer,
        inclusion smallint,
        conflict_reason smallint
      )`,
      `CREATE INDEX messages_by_index ON chrysalis.messages (index_key, seq) WHERE index_key IS NOT NULL`,
      `CREATE TABLE chrysalis.children (parent bytea NOT NULL, seq bigint NOT NULL, child bytea NOT NULL, PRIMARY KEY (parent, seq, child))`,
      `CREATE TABLE chrysalis.tips (message_id bytea PRIMARY KEY, seq bigint NOT NULL)`,
      `CREATE INDEX tips_by_age ON chrysalis.tips (seq)`,
      `CREATE TABLE chrysalis.outputs (
        output_id bytea PRIMARY KEY,
        seq bigint NOT NULL,
        message_id bytea NOT NULL,
        type smallint NOT NULL,
        address bytea NOT NULL,
        amount bigint NOT NULL,
        milestone_booked integer
      )`,
      `CREATE INDEX outputs_by_address ON chrysalis.outputs (address, seq)`,
      `CREATE TABLE chrysalis.spent (output_id bytea PRIMARY KEY, transaction_id bytea NOT NULL, message_id bytea NOT NULL, milestone_index integer)`,
      `CREATE TABLE chrysalis.balances (address bytea PRIMARY KEY, balance bigint NOT NULL, dust_allowance bigint NOT NULL, dust_outputs integer NOT NULL)`,
      `CREATE TABLE chrysalis.milestones (
        index integer PRIMARY KEY,
        message_id bytea NOT NULL,
        timestamp bigint NOT NULL,
        created_outputs bytea[] NOT NULL,
        consumed_outputs bytea[] NOT NULL
      )`,
      `CREATE TABLE chrysalis.redeemed_nonces (nonce text PRIMARY KEY, expires_at double precision NOT NULL)`,
      `CREATE TABLE chrysalis.revoked_tokens (jti text PRIMARY KEY, expires_at double precision NOT NULL)`,
      `CREATE TABLE chrysalis.secrets (name text PRIMARY KEY, value bytea NOT NULL)`,
    ],
  },
  {
    description: "pruning and snapshots: messages by confirming milestone, unreferenced messages by arrival, solid entry points",
    statements: [
      // Pruning milestone m finds its cone here, oldest first (the milestone's own message, the newest, goes last).
      `CREATE INDEX messages_by_milestone ON chrysalis.messages (referenced_by, seq)`,
      // Messages never referenced leave the unreferenced set at confirmation, so this index stays small; pruning
      // takes the old ones (arrived before milestone m's message) with m.
      `CREATE INDEX messages_unreferenced ON chrysalis.messages (seq) WHERE referenced_by IS NULL`,
      `CREATE TABLE chrysalis.entry_points (message_id bytea PRIMARY KEY, index integer NOT NULL)`,
      // The rows exist from here on, so a prune step and a snapshot load only update them. A store's existence is
      // told by its 'network' row, which these do not set.
      `INSERT INTO chrysalis.meta (key, value) VALUES ('pruning_index', '0'), ('coordinator_keys', '') ON CONFLICT (key) DO NOTHING`,
    ],
  },
];

/** The tables whose rows are deleted or updated as the node runs (by pruning, tip churn, balance updates, sweeps). */
const VACUUMED_TABLES = ["messages", "children", "tips", "outputs", "spent", "balances", "milestones", "redeemed_nonces", "revoked_tokens"] as const;

/** The schema version this code writes: the number of migrations it knows. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** pg_advisory_xact_lock key serialising migrations and store creation between instances ("chrysali" in ASCII). */
const MIGRATION_LOCK = 0x6368727973616c69n;

/** pg_try_advisory_xact_lock key held by the one prune step running on the database ("prunelck" in ASCII). */
export const PRUNE_LOCK = 0x7072756e656c636bn;

/** The first schema version with the pruning index, entry points and coordinator keys (migration 2). */
const AGEING_SCHEMA = 2;

/** Outputs per INSERT when a snapshot is loaded: large enough to load 100,000 outputs in a few statements, small
 * enough that one statement's arrays stay a few megabytes. */
const SNAPSHOT_CHUNK = 10_000;

/** Messages hashed per round trip by verify(). */
const VERIFY_PAGE = 1000;

const INCLUSION: readonly LedgerInclusionState[] = ["noTransaction", "included", "conflicting"];

// The message, its children and its tip entry in one statement; nothing but the message insert runs when the id is
// already stored (m is then empty). The oldest tips past the bound are dropped in the same statement: as many as the
// set holds past it once the parents went and the message came (every part of the statement sees the tips as they
// were before it), never a parent, skipping rows another writer holds: concurrent writers all reach for the same
// oldest tips, and waiting there made deadlocks.
const INSERT_MESSAGE = `
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

// The ledger mutation: spent rows (the database's answer to a double spend), created outputs and the balance deltas,
// returning which spends landed and every touched address's balance after the update.
const APPLY_LEDGER = `
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
SELECT 's' AS kind, output_id AS key, 0::bigint AS balance, 0::bigint AS dust_allowance, 0 AS dust_outputs FROM s
UNION ALL SELECT 'b', address, balance, dust_allowance, dust_outputs FROM b`;

const CONFIRM_MILESTONE = `
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

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database (any form node-postgres reads). */
  connectionString: string;
  /** Most connections this instance holds. Default 10. */
  maxConnections?: number;
  /** How long a request waits for a connection before STORE_UNAVAILABLE, in ms. Default 5000. */
  connectionTimeoutMillis?: number;
  /** How long one query may take before STORE_UNAVAILABLE, in ms. Default 30000. */
  queryTimeoutMillis?: number;
  /** Solid entry points (ids that count as known parents). Default: the all-zero message id. */
  entryPoints?: string[];
  /** Most tips kept; past it the oldest tips are dropped. Default 1000. */
  maxTips?: number;
}

const hexBytes = (hex: string, path: string, length: number): Buffer => Buffer.from(fromHex(hex, path, length));
const num = (value: unknown): number => Number(value);

export class PostgresStore implements NodeStore {
  readonly engine = "postgres";
  readonly entryPoints: ReadonlyMap<string, number>;
  /** host:port/database, for messages (never the password). */
  readonly target: string;
  readonly #options: PostgresStoreOptions;
  readonly #maxTips: number;
  // The same map as `entryPoints`: the constructor's until open replaces it with the ones the store persisted.
  readonly #entryPoints: Map<string, number>;
  /** The schema version of the database this instance opened (openExisting migrates nothing, so it may be older). */
  #schemaVersion = 0;
  #pool: Pool | undefined;
  /** node-postgres, loaded with the pool: migrations run on a client of their own (see #migrationTransaction). */
  #pg: typeof import("pg").default | undefined;
  #connecting: Promise<Pool> | undefined;
  #closed = false;
  /** What close() does, once: a second call waits for the same. */
  #closing: Promise<void> | undefined;
  /** Statements and transactions under way, which close() lets finish (#track). */
  readonly #working = new Set<Promise<unknown>>();

  constructor(options: PostgresStoreOptions | string) {
    this.#options = typeof options === "string" ? { connectionString: options } : options;
    this.#maxTips = Math.max(1, this.#options.maxTips ?? 1000);
    this.#entryPoints = new Map((this.#options.entryPoints ?? [ZERO_MESSAGE_ID]).map((id) => [id.toLowerCase(), 0]));
    this.entryPoints = this.#entryPoints;
    this.target = describeTarget(this.#options.connectionString);
  }

  /** Connects (once), runs the missing migrations, and creates the store or checks the one the database holds. */
  async open(options: StoreOpenOptions): Promise<StoreOpenResult> {
    if (this.#closed) throw storeClosed();
    // Refused before connecting, so nothing is created for a snapshot of another network.
    if (options.snapshot !== undefined && options.snapshot.network !== options.network) {
      throw new NodeError("STORE_WRONG_NETWORK", `the snapshot was made for network ${options.snapshot.network}, not ${options.network}`);
    }
    const first = this.#connecting === undefined;
    this.#pool = await (this.#connecting ??= this.#createPool().catch((error: unknown) => {
      this.#connecting = undefined;
      throw error;
    }));
    try {
      return await this.#migrate(options);
    } catch (error) {
      // A store that refused to open on its first try closes its connections, so a failed start can exit.
      if (first) {
        const pool = this.#pool;
        this.#pool = undefined;
        this.#connecting = undefined;
        await pool?.end().catch(() => undefined);
      }
      if (error instanceof NodeError && error.code !== "STORE_UNAVAILABLE") throw error;
      throw new NodeError("STORE_UNAVAILABLE", `cannot open the database at ${this.target}: ${reason(error instanceof NodeError ? error.cause ?? error : error)}`, { cause: error });
    }
  }

  /**
   * Connects to a database that must hold a store already, whatever its network, and creates or migrates nothing: for
   * tools working beside running nodes on their store (`chrysalis auth revoke`).
   */
  async openExisting(): Promise<StoreOpenResult> {
    if (this.#closed) throw storeClosed();
    this.#pool = await (this.#connecting ??= this.#createPool());
    let rows: { key: string; value: string }[];
    let version: number;
    try {
      const migrated = await this.#pool.query<{ version: number | null }>("SELECT max(version) AS version FROM chrysalis.schema_migrations");
      version = migrated.rows[0]?.version ?? 0;
      rows = (await this.#pool.query<{ key: string; value: string }>("SELECT key, value FROM chrysalis.meta")).rows;
    } catch (error) {
      if (sqlState(error) === "42P01" || sqlState(error) === "3F000") throw new NodeError("STORE_UNAVAILABLE", `the database at ${this.target} holds no chrysalis store`, { cause: error });
      const failure = this.#failure(error);
      throw failure instanceof NodeError ? failure : new NodeError("STORE_UNAVAILABLE", `cannot open the database at ${this.target}: ${reason(error)}`, { cause: error });
    }
    if (version > MIGRATIONS.length) {
      throw storeTooNew(`the database at ${this.target}`, version, MIGRATIONS.length);
    }
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    if (!meta.has("network")) throw new NodeError("STORE_UNAVAILABLE", `the database at ${this.target} holds no chrysalis store`);
    this.#schemaVersion = version;
    // A store not migrated yet has no persisted entry points: the constructor's stand, as they did for that version.
    if (version >= AGEING_SCHEMA) {
      try {
        await this.#loadEntryPoints(this.#pool);
      } catch (error) {
        throw this.#failure(error);
      }
    }
    return opened(false, meta);
  }

  async #createPool(): Promise<Pool> {
    let pg: typeof import("pg").default;
    try {
      pg = (await import("pg")).default;
    } catch (error) {
      throw new NodeError("STORE_UNAVAILABLE", `the PostgreSQL store needs the "pg" package (npm install pg): ${(error as Error).message}`, { cause: error });
    }
    const pool = new pg.Pool({
      connectionString: this.#options.connectionString,
      max: this.#options.maxConnections ?? 10,
      connectionTimeoutMillis: this.#options.connectionTimeoutMillis ?? 5000,
      query_timeout: this.#options.queryTimeoutMillis ?? 30_000,
      keepAlive: true,
      application_name: "chrysalis",
    });
    // An idle connection the server drops is reported here; the pool discards it and the next request connects anew.
    pool.on("error", () => undefined);
    this.#pg = pg;
    return pool;
  }

  /**
   * Runs the migrations (and the store's creation) in one transaction on a connection of their own, opened for it and
   * closed after, with no time limit: neither the pool's client-side query timeout (node-postgres gives every query on
   * a pooled connection the pool's query_timeout; a query's own 0 does not turn it off) nor a statement_timeout or
   * lock_timeout the server, role or database sets. A migration's CREATE INDEX over a store months old (tens of
   * millions of messages) takes minutes: cut off, its connection destroyed, the node would exit and every restart
   * would start it again. So a large store's first start after an upgrade takes the index build's time (the writes of
   * instances still running the previous version wait for it too: CREATE INDEX holds off writers of its table), and a
   * second instance starting meanwhile waits on the advisory lock. One transaction, correctness first: a failure
   * leaves the database as it was.
   */
  async #migrationTransaction<T>(body: (client: ClientBase) => Promise<T>): Promise<T> {
    const pg = this.#pg;
    if (pg === undefined) throw new NodeError("STORE_UNAVAILABLE", "the store is not open yet");
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) throw storeClosed();
      // No query_timeout: the pool's is not inherited, and node-postgres's default is none.
      const client = new pg.Client({
        connectionString: this.#options.connectionString,
        connectionTimeoutMillis: this.#options.connectionTimeoutMillis ?? 5000,
        keepAlive: true,
        application_name: "chrysalis",
      });
      // A connection lost mid-migration is reported by the query that fails; this keeps it from being unhandled.
      client.on("error", () => undefined);
      try {
        await client.connect();
      } catch (error) {
        await client.end().catch(() => undefined);
        throw this.#failure(error);
      }
      try {
        await client.query("BEGIN");
        await client.query("SET LOCAL statement_timeout = 0");
        await client.query("SET LOCAL lock_timeout = 0");
        const result = await body(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        if (retryable(error) && attempt < RETRIES) continue;
        throw this.#failure(error);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** Applies the missing migrations and creates the store when new, one instance at a time. */
  async #migrate(options: StoreOpenOptions): Promise<StoreOpenResult> {
    return this.#migrationTransaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK.toString()]);
      await client.query("CREATE SCHEMA IF NOT EXISTS chrysalis");
      await client.query(`CREATE TABLE IF NOT EXISTS chrysalis.schema_migrations (
        version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM chrysalis.schema_migrations");
      const version = rows[0]?.version ?? 0;
      if (version > MIGRATIONS.length) {
        throw storeTooNew(`the database at ${this.target}`, version, MIGRATIONS.length);
      }
      // With no time limit (see #migrationTransaction): migration 2 builds indexes over every stored message.
      for (let v = version; v < MIGRATIONS.length; v++) {
        const migration = MIGRATIONS[v]!;
        for (const statement of migration.statements) await client.query(statement);
        await client.query("INSERT INTO chrysalis.schema_migrations (version, description) VALUES ($1, $2)", [v + 1, migration.description]);
      }
      const meta = new Map((await client.query<{ key: string; value: string }>("SELECT key, value FROM chrysalis.meta")).rows.map((r) => [r.key, r.value]));
      this.#schemaVersion = MIGRATIONS.length;
      const network = meta.get("network");
      if (network !== undefined) {
        if (network !== options.network) throw new NodeError("STORE_WRONG_NETWORK", `the database at ${this.target} was made for network ${network}, not ${options.network}`);
        // A store made before entry points were persisted was opened with this instance's (the constructor's) ones.
        // They are persisted as entry points only, not made tips again: they were tips when the store was made, and a
        // store years past its genesis must not offer the zero message id as a tip to attach new messages to.
        if (version < AGEING_SCHEMA) await this.#persistEntryPoints(client, [...this.#entryPoints].map(([messageId, index]) => ({ messageId, index })), { tips: false });
        await this.#loadEntryPoints(client);
        return opened(false, meta);
      }
      const snapshot = options.snapshot;
      if (snapshot !== undefined) return this.#applySnapshot(client, snapshot);
      const ledger = options.genesis !== undefined;
      await client.query("INSERT INTO chrysalis.meta (key, value) VALUES ('network', $1), ('ledger', $2)", [options.network, ledger ? "1" : "0"]);
      await this.#persistEntryPoints(client, [...this.#entryPoints].map(([messageId, index]) => ({ messageId, index })));
      if (options.genesis !== undefined) await this.#applyGenesis(client, options.genesis);
      await this.#loadEntryPoints(client);
      return { created: true, ledger };
    });
  }

  /**
   * Persists solid entry points; for a new store (created or loaded from a snapshot) each is a tip from the start (new
   * messages attach to them), for a store being migrated (`tips: false`) not.
   */
  async #persistEntryPoints(client: ClientBase, entryPoints: readonly EntryPoint[], options: { tips: boolean } = { tips: true }): Promise<void> {
    const ids = entryPoints.map((e, i) => hexBytes(e.messageId, `entryPoints[${i}].messageId`, 32));
    await client.query(
      `INSERT INTO chrysalis.entry_points (message_id, index) SELECT * FROM unnest($1::bytea[], $2::integer[]) ON CONFLICT (message_id) DO NOTHING`,
      [ids, entryPoints.map((e) => e.index)],
    );
    if (options.tips) await client.query("INSERT INTO chrysalis.tips (message_id, seq) SELECT unnest($1::bytea[]), 0 ON CONFLICT (message_id) DO NOTHING", [ids]);
  }

  async #loadEntryPoints(client: Pool | ClientBase): Promise<void> {
    const { rows } = await client.query<{ message_id: Buffer; index: number }>("SELECT message_id, index FROM chrysalis.entry_points ORDER BY message_id");
    this.#entryPoints.clear();
    for (const r of rows) this.#entryPoints.set(toHex(r.message_id), r.index);
  }

  /**
   * Makes the new store the snapshot describes, in the creation transaction: its outputs (in chunks), the balances
   * derived from them, its milestone record (no message, no UTXO changes), entry points, coordinator keys and the
   * pruning index below its milestone.
   */
  async #applySnapshot(client: ClientBase, snapshot: LedgerSnapshot): Promise<StoreOpenResult> {
    await client.query("INSERT INTO chrysalis.meta (key, value) VALUES ('network', $1), ('ledger', $2)", [snapshot.network, snapshot.ledger ? "1" : "0"]);
    const keys = snapshot.coordinatorPublicKeys.map((k, i) => toHex(fromHex(k, `snapshot.coordinatorPublicKeys[${i}]`, 32)));
    const pruningIndex = snapshot.milestone === undefined ? 0 : Math.max(0, snapshot.milestone.index - 1);
    await client.query("UPDATE chrysalis.meta SET value = CASE key WHEN 'pruning_index' THEN $1 ELSE $2 END WHERE key IN ('pruning_index', 'coordinator_keys')", [
      String(pruningIndex),
      keys.join(","),
    ]);
    await this.#persistEntryPoints(client, snapshot.entryPoints);
    const outputs = snapshot.outputs;
    for (let start = 0; start < outputs.length; start += SNAPSHOT_CHUNK) {
      const chunk = outputs.slice(start, start + SNAPSHOT_CHUNK);
      await client.query(
        `INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount, milestone_booked)
         SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bytea[], $4::smallint[], $5::bytea[], $6::bigint[], $7::integer[])`,
        [
          chunk.map((o, i) => hexBytes(o.outputId, `snapshot.outputs[${start + i}].outputId`, 34)),
          // Below every message's outputs (which start at 128), in snapshot order: the snapshot's outputs are the
          // oldest of each address's list.
          chunk.map((_, i) => start + i - outputs.length),
          chunk.map((o, i) => hexBytes(o.messageId, `snapshot.outputs[${start + i}].messageId`, 32)),
          chunk.map((o) => o.output.type),
          chunk.map((o) => Buffer.from(o.output.address.address)),
          chunk.map((o) => o.output.amount),
          chunk.map((o) => o.milestoneIndexBooked ?? null),
        ],
      );
    }
    // One aggregate over what was just inserted, by the same rules as balanceDeltas (dust: a single output below the
    // threshold).
    await client.query(
      `INSERT INTO chrysalis.balances (address, balance, dust_allowance, dust_outputs)
       SELECT address, sum(amount), coalesce(sum(amount) FILTER (WHERE type = 1), 0), count(*) FILTER (WHERE type = 0 AND amount < $1)
       FROM chrysalis.outputs GROUP BY address`,
      [DUST_THRESHOLD],
    );
    if (snapshot.milestone !== undefined) {
      const m = snapshot.milestone;
      await client.query("INSERT INTO chrysalis.milestones (index, message_id, timestamp, created_outputs, consumed_outputs) VALUES ($1, $2, $3, '{}', '{}')", [
        m.index,
        hexBytes(m.messageId, "snapshot.milestone.messageId", 32),
        m.timestamp,
      ]);
    }
    await this.#loadEntryPoints(client);
    return { created: true, ledger: snapshot.ledger, ...(keys.length > 0 ? { coordinatorPublicKeys: keys } : {}) };
  }

  async #applyGenesis(client: ClientBase, genesis: readonly GenesisOutput[]): Promise<void> {
    const ids = genesis.map((g, i) => hexBytes(g.outputId, `genesis[${i}].outputId`, 34));
    const outputs = genesis.map((g) => g.output);
    await client.query(
      `INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount, milestone_booked)
       SELECT o, s, $3, t, a, n, 0 FROM unnest($1::bytea[], $2::bigint[], $4::smallint[], $5::bytea[], $6::bigint[]) AS g(o, s, t, a, n)`,
      [ids, genesis.map((_, i) => i), Buffer.alloc(32), outputs.map((o) => o.type), outputs.map((o) => Buffer.from(o.address.address)), outputs.map((o) => o.amount)],
    );
    const deltas = [...balanceDeltas([], outputs).values()];
    await client.query(
      `INSERT INTO chrysalis.balances (address, balance, dust_allowance, dust_outputs) SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::integer[])`,
      balanceColumns(deltas),
    );
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#close());
  }

  async #close(): Promise<void> {
    // Calls from now on are refused (#poolOrThrow). What was called before finishes first: the statements and
    // transactions under way, the calls waiting for their group, and the later statements of an operation under way.
    // Only then does the pool end: node-postgres never serves a query still waiting for a connection when its pool
    // ends, and fails it only when its connection timeout runs out (5 s by default). A statement begun after the end is
    // refused (#livePool).
    this.#closed = true;
    await this.#connecting?.catch(() => undefined);
    const groups = [this.#messageReads, this.#metadataReads, this.#redemptions, this.#revocationChecks];
    while (this.#working.size > 0 || groups.some((group) => group.busy)) {
      await Promise.allSettled([...this.#working, ...groups.map((group) => group.idle())]);
    }
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool !== undefined) await pool.end();
  }

  /** The pool, for a call made now: refused once close() was called. */
  #poolOrThrow(): Pool {
    if (this.#closed) throw storeClosed();
    return this.#livePool();
  }

  /** The pool, for a statement of a call made earlier (its group's, or its next step): refused once the pool ended. */
  #livePool(): Pool {
    const pool = this.#pool;
    if (pool === undefined) throw this.#closed ? storeClosed() : new NodeError("STORE_UNAVAILABLE", "the store is not open yet");
    return pool;
  }

  /** `work`, kept among the work under way until it settles. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#working.add(work);
    const settled = (): void => void this.#working.delete(work);
    work.then(settled, settled);
    return work;
  }

  /** A call of several statements (they go as `continuing`): refused once close() was called, else tracked whole, so
   * that a close() called between two of its statements waits for the rest. */
  #steps<T>(steps: () => Promise<T>): Promise<T> {
    try {
      this.#poolOrThrow();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#track(steps());
  }

  /** One statement; `continuing`: a statement of a call made earlier (a group's, or a step of #steps), which a close()
   * called meanwhile lets run. */
  async #query<R extends QueryResultRow>(config: QueryConfig, continuing = false): Promise<R[]> {
    const pool = continuing ? this.#livePool() : this.#poolOrThrow();
    try {
      return (await this.#track(pool.query<R>(config))).rows;
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /**
   * Runs `body` in one database transaction on one pooled connection, committing when it returns. A rule error rolls
   * back and comes through as it is; a deadlock or serialisation failure is retried; a lost connection is
   * STORE_UNAVAILABLE (the transaction did not commit, or its outcome is unknown and a retry finds the message stored).
   */
  #transaction<T>(body: (client: PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
    return this.#track(this.#attempts(body, begin));
  }

  /** #transaction's attempts; its callers check the store is open before they begin (#poolOrThrow). */
  async #attempts<T>(body: (client: PoolClient) => Promise<T>, begin: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const pool = this.#livePool();
      let client: PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw this.#failure(error);
      }
      let broken = false;
      try {
        await client.query(begin);
        const result = await body(client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        broken = !(error instanceof ProtocolError) && !isSqlState(error);
        if (!broken) await client.query("ROLLBACK").catch(() => (broken = true));
        if (retryable(error) && attempt < RETRIES) continue;
        throw this.#failure(error);
      } finally {
        // A connection whose state is unknown is destroyed rather than handed to the next request.
        client.release(broken);
      }
    }
  }

  /** The contract's error for what node-postgres threw. */
  #failure(error: unknown): Error {
    if (error instanceof ProtocolError) return error;
    const code = sqlState(error);
    if (code === "23505" && /milestones_pkey/.test(String((error as { constraint?: unknown }).constraint))) {
      return new NodeError("MILESTONE_CONFLICT", "another instance confirmed this milestone index first", { cause: error });
    }
    if (code !== undefined ? /^(08|53|57|58|40)/.test(code) || code === "55000" || code === "55006" || code === "25006" : lostConnection(error)) {
      return new NodeError("STORE_UNAVAILABLE", `the database at ${this.target} is unavailable (${reason(error)}); try again later`, { cause: error });
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Messages

  async accept(acceptance: Acceptance): Promise<AcceptResult> {
    this.#poolOrThrow();
    const id = hexBytes(acceptance.id, "id", 32);
    const index = indexesOf(acceptance.message)[0];
    const messageValues = [
      id,
      Buffer.from(acceptance.bytes.buffer, acceptance.bytes.byteOffset, acceptance.bytes.byteLength),
      index === undefined ? null : Buffer.from(index),
      acceptance.arrivalTime,
      acceptance.coneRoots.oldest,
      acceptance.coneRoots.youngest,
      acceptance.message.parents.map((p) => Buffer.from(p)),
      this.#maxTips,
    ];
    const insertMessage = { name: "chrysalis_insert_message", text: INSERT_MESSAGE, values: messageValues };
    const mutation = acceptance.ledger;
    const milestone = acceptance.milestone;
    if (mutation === undefined && milestone === undefined) {
      // One statement is one atomic write: no transaction round trips needed. A deadlock aborts it whole; retried.
      return this.#steps(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            const rows = await this.#query<{ seq: string }>(insertMessage, true);
            return { stored: rows.length > 0 };
          } catch (error) {
            if (!(attempt < RETRIES && retryable((error as { cause?: unknown }).cause))) throw error;
          }
        }
      });
    }

    const consumed = mutation === undefined ? [] : mutation.consumed.map((o, i) => hexBytes(o, `ledger.consumed[${i}]`, 34));
    // Sorted, so that every transaction locks consumed outputs, spent ids and addresses in the same order.
    const spentIds = [...consumed].sort(Buffer.compare);

    return this.#transaction(async (client) => {
      const inserted = await client.query<{ seq: string }>(insertMessage);
      const seqText = inserted.rows[0]?.seq;
      if (seqText === undefined) return { stored: false };
      const seq = num(seqText);
      if (mutation !== undefined) {
        // The consumed outputs are read here, each row locked until this transaction ends: pruning deletes spent
        // outputs (and their spent rows), and its DELETE conflicts with this lock. Either the prune step committed
        // first and the output is not found, or this transaction holds the output and the prune waits for it (and
        // finds the spent row it came for, as before). Read outside the transaction, a pruned output could pass as
        // unspent once its spent row was gone: a double spend.
        const locked = await client.query<OutputRow>({
          name: "chrysalis_lock_consumed_outputs",
          text: "SELECT output_id, type, address, amount FROM chrysalis.outputs WHERE output_id = ANY($1::bytea[]) ORDER BY output_id FOR KEY SHARE",
          values: [spentIds],
        });
        const found = new Map(locked.rows.map((r) => [toHex(r.output_id), outputOf(r)]));
        const outputs = mutation.consumed.map((o) => found.get(o.toLowerCase()));
        // A missing input: INPUT_NOT_FOUND, naming it (the rest are not judged spent or not before all are found).
        if (outputs.some((o) => o === undefined)) checkLedgerState(mutation, outputs.map((output) => (output === undefined ? undefined : { output, spent: false })), () => EMPTY_BALANCE);
        const records = outputs as Output[];
        const transactionId = hexBytes(mutation.transactionId, "ledger.transactionId", 32);
        const deltas = balanceDeltas(records, mutation.created);
        const sortedDeltas = [...deltas.values()].sort((a, b) => Buffer.compare(Buffer.from(a.address), Buffer.from(b.address)));
        const created = mutation.created;
        const createdIds = created.map((_, i) => Buffer.concat([transactionId, Buffer.from([i & 0xff, i >>> 8])]));
        const { rows } = await client.query<{ kind: string; key: Buffer; balance: string; dust_allowance: string; dust_outputs: number }>({
          name: "chrysalis_apply_ledger",
          text: APPLY_LEDGER,
          values: [
            spentIds,
            transactionId,
            id,
            ...balanceColumns(sortedDeltas),
            createdIds,
            created.map((_, i) => seq * OUTPUTS_PER_SEQ + i),
            created.map(() => id),
            created.map((o) => o.type),
            created.map((o) => Buffer.from(o.address.address)),
            created.map((o) => o.amount),
          ],
        });
        const landed = new Set<string>();
        const after = new Map<string, AddressBalance>();
        for (const r of rows) {
          if (r.kind === "s") landed.add(toHex(r.key));
          else after.set(toHex(r.key), { balance: num(r.balance), dustAllowance: num(r.dust_allowance), dustOutputs: r.dust_outputs });
        }
        const entries: (LedgerOutput | undefined)[] = records.map((output, i) => ({ output, spent: !landed.has(mutation.consumed[i]!.toLowerCase()) }));
        // The rule runs on the state the row locks gave this transaction: the balance before = after − this delta.
        checkLedgerState(mutation, entries, (hex) => before(after.get(hex), deltas.get(hex)));
      }
      if (milestone !== undefined) await this.#confirm(client, milestone);
      return { stored: true };
    });
  }

  async #confirm(client: PoolClient, milestone: MilestoneApplication): Promise<void> {
    const { rows } = await client.query({
      name: "chrysalis_confirm_milestone",
      text: CONFIRM_MILESTONE,
      values: [
        milestone.index,
        hexBytes(milestone.messageId, "milestone.messageId", 32),
        milestone.timestamp,
        milestone.createdOutputs.map((o, i) => hexBytes(o, `milestone.createdOutputs[${i}]`, 34)),
        milestone.consumedOutputs.map((o, i) => hexBytes(o, `milestone.consumedOutputs[${i}]`, 34)),
        milestone.referenced.map((r, i) => hexBytes(r.messageId, `milestone.referenced[${i}]`, 32)),
        milestone.referenced.map((r) => INCLUSION.indexOf(r.ledgerInclusionState) + 1),
        milestone.referenced.map((r) => r.conflictReason ?? null),
      ],
    });
    if (rows.length === 0) {
      const latest = await client.query<{ index: number | null }>("SELECT max(index) AS index FROM chrysalis.milestones");
      throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${(latest.rows[0]?.index ?? 0) + 1})`);
    }
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    this.#poolOrThrow();
    const raw = await this.#messageReads.run(hexBytes(id, "id", 32));
    if (raw === undefined) return undefined;
    return storedMessage(id.toLowerCase(), new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
  }

  /** Message reads that arrive while one is being read go as one statement (see Grouped). A message asked for twice in
   * one group is given to each caller as its own bytes. The list is padded (planned): in the edge bench a raw read cost
   * the node 42–50 µs padded against 56–61 µs unpadded, at 18–21 k reads a second against 13–14 k (PostgreSQL's own
   * work shares the machine); psql shows custom plans for this lookup either way, so the cause is not settled. */
  readonly #messageReads = new Grouped<Buffer, Buffer | undefined>(async (ids) => {
    const rows = await this.#query<{ id: Buffer; bytes: Buffer }>(
      { name: "chrysalis_get_messages", text: "SELECT id, bytes FROM chrysalis.messages WHERE id = ANY($1::bytea[])", values: [planned(ids)] },
      true,
    );
    const found = new Map(rows.map((r) => [r.id.toString("hex"), r.bytes]));
    const given = new Set<string>();
    return ids.map((id) => {
      const key = id.toString("hex");
      const bytes = found.get(key);
      const copy = bytes !== undefined && given.has(key);
      given.add(key);
      return { status: "fulfilled", value: copy ? Buffer.from(bytes) : bytes } as const;
    });
  });

  async has(id: string): Promise<boolean> {
    return (await this.#query({ name: "chrysalis_has", text: "SELECT 1 FROM chrysalis.messages WHERE id = $1", values: [hexBytes(id, "id", 32)] })).length > 0;
  }

  async metadata(id: string): Promise<MessageMetadata | undefined> {
    const rows = await this.#query<MetadataRow>({ name: "chrysalis_metadata", text: `SELECT ${METADATA_COLUMNS} FROM chrysalis.messages WHERE id = $1`, values: [hexBytes(id, "id", 32)] });
    return rows[0] === undefined ? undefined : metadataOf(rows[0]);
  }

  async metadataWithLatest(ids: readonly string[]): Promise<MetadataWithLatest> {
    this.#poolOrThrow();
    return this.#metadataReads.run(ids.map((id, i) => hexBytes(id, `ids[${i}]`, 32)));
  }

  // One statement for a group of metadataWithLatest calls (see Grouped: every submission asks one, so under load they
  // go several to a statement): the rows of the ids that are stored (numbered by their place in the group's list,
  // from 1), and the latest milestone as row 0 (its index in milestone_index), all from one snapshot. The list goes
  // padded with NULLs (which match no row) to PLANNED_ARRAY_LENGTH: PostgreSQL costs an array parameter's generic plan
  // at that many elements, so a shorter list made every custom plan look cheaper and the statement was planned again
  // at each execution (pg_prepared_statements: custom plans only), which cost the database more than the four queries
  // it replaces.
  readonly #metadataReads = new Grouped<readonly Buffer[], MetadataWithLatest>(async (lists) => {
    const ids = lists.flat();
    const rows = await this.#query<MetadataRow & { ord: string; message_id: Buffer | null; timestamp: string | null }>(
      {
        name: "chrysalis_metadata_with_latest",
        text: `SELECT w.ord, ${METADATA_COLUMNS}, NULL::bytea AS message_id, NULL::bigint AS timestamp
        FROM unnest($1::bytea[]) WITH ORDINALITY AS w(id, ord) JOIN chrysalis.messages m ON m.id = w.id
        UNION ALL
        (SELECT 0, NULL, NULL, NULL, NULL, index, NULL, NULL, message_id, timestamp FROM chrysalis.milestones ORDER BY index DESC LIMIT 1)`,
        values: [planned(ids)],
      },
      true,
    );
    const metadata: (MessageMetadata | undefined)[] = ids.map(() => undefined);
    let latest: MilestoneRow | undefined;
    for (const r of rows) {
      const ord = num(r.ord);
      if (ord === 0) latest = { index: r.milestone_index!, message_id: r.message_id!, timestamp: r.timestamp! };
      else metadata[ord - 1] = metadataOf(r);
    }
    // Each caller its own part of the list, and a record of the latest milestone of its own.
    let at = 0;
    return lists.map((list) => ({ status: "fulfilled", value: { metadata: metadata.slice(at, (at += list.length)), latest: latest === undefined ? undefined : milestoneOf(latest) } }) as const);
  });

  async children(id: string, max: number): Promise<string[]> {
    if (max <= 0) return [];
    const rows = await this.#query<{ child: Buffer }>({
      name: "chrysalis_children",
      text: "SELECT child FROM chrysalis.children WHERE parent = $1 ORDER BY seq, child LIMIT $2",
      values: [hexBytes(id, "id", 32), max],
    });
    return rows.map((r) => toHex(r.child));
  }

  async findByIndex(index: Uint8Array, max = 1000): Promise<string[]> {
    if (max <= 0) return [];
    const rows = await this.#query<{ id: Buffer }>({
      name: "chrysalis_find_by_index",
      text: "SELECT id FROM (SELECT id, seq FROM chrysalis.messages WHERE index_key = $1 ORDER BY seq DESC LIMIT $2) AS newest ORDER BY seq",
      values: [Buffer.from(index), max],
    });
    return rows.map((r) => toHex(r.id));
  }

  async tips(max: number): Promise<string[]> {
    if (max <= 0) return [];
    const rows = await this.#query<{ message_id: Buffer }>({ name: "chrysalis_tips", text: "SELECT message_id FROM chrysalis.tips ORDER BY random() LIMIT $1", values: [max] });
    return rows.map((r) => toHex(r.message_id));
  }

  /** Every current tip (for inspection and tests). */
  async allTips(): Promise<string[]> {
    return (await this.#query<{ message_id: Buffer }>({ text: "SELECT message_id FROM chrysalis.tips ORDER BY seq, message_id" })).map((r) => toHex(r.message_id));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The UTXO ledger

  async output(outputId: string): Promise<OutputRecord | undefined> {
    const id = hexBytes(outputId, "outputId", 34);
    const rows = await this.#query<OutputRow & { message_id: Buffer; milestone_booked: number | null; spent_transaction: Buffer | null; spent_message: Buffer | null; spent_milestone: number | null }>({
      name: "chrysalis_output",
      text: `SELECT o.output_id, o.type, o.address, o.amount, o.message_id, o.milestone_booked,
               s.transaction_id AS spent_transaction, s.message_id AS spent_message, s.milestone_index AS spent_milestone
             FROM chrysalis.outputs o LEFT JOIN chrysalis.spent s ON s.output_id = o.output_id WHERE o.output_id = $1`,
      values: [id],
    });
    const r = rows[0];
    if (r === undefined) return undefined;
    return {
      outputId: toHex(id),
      transactionId: toHex(id.subarray(0, 32)),
      outputIndex: id[32]! | (id[33]! << 8),
      messageId: toHex(r.message_id),
      output: outputOf(r),
      ...(r.milestone_booked !== null ? { milestoneIndexBooked: r.milestone_booked } : {}),
      ...(r.spent_transaction !== null && r.spent_message !== null
        ? { spent: { transactionId: toHex(r.spent_transaction), messageId: toHex(r.spent_message), ...(r.spent_milestone !== null ? { milestoneIndex: r.spent_milestone } : {}) } }
        : {}),
    };
  }

  async addressOutputs(address: Uint8Array, query: AddressOutputsQuery): Promise<string[]> {
    if (query.max <= 0) return [];
    const rows = await this.#query<{ output_id: Buffer }>({
      name: "chrysalis_address_outputs",
      text: `SELECT o.output_id FROM chrysalis.outputs o LEFT JOIN chrysalis.spent s ON s.output_id = o.output_id
             WHERE o.address = $1 AND ($2::smallint IS NULL OR o.type = $2) AND ($3 OR s.output_id IS NULL)
             ORDER BY s.output_id IS NOT NULL, o.seq LIMIT $4`,
      values: [Buffer.from(address), query.type ?? null, query.includeSpent === true, query.max],
    });
    return rows.map((r) => toHex(r.output_id));
  }

  async addressBalance(address: Uint8Array): Promise<AddressBalance> {
    const rows = await this.#query<{ balance: string; dust_allowance: string; dust_outputs: number }>({
      name: "chrysalis_balance",
      text: "SELECT balance, dust_allowance, dust_outputs FROM chrysalis.balances WHERE address = $1",
      values: [Buffer.from(address)],
    });
    const r = rows[0];
    return r === undefined ? EMPTY_BALANCE : { balance: num(r.balance), dustAllowance: num(r.dust_allowance), dustOutputs: r.dust_outputs };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Milestones

  async milestone(index: number): Promise<MilestoneRecord | undefined> {
    if (!Number.isInteger(index) || index < 0 || index > 0x7fffffff) return undefined;
    const rows = await this.#query<MilestoneRow>({ name: "chrysalis_milestone", text: "SELECT index, message_id, timestamp FROM chrysalis.milestones WHERE index = $1", values: [index] });
    return rows[0] === undefined ? undefined : milestoneOf(rows[0]);
  }

  async latestMilestone(): Promise<MilestoneRecord | undefined> {
    const rows = await this.#query<MilestoneRow>({ name: "chrysalis_latest_milestone", text: "SELECT index, message_id, timestamp FROM chrysalis.milestones ORDER BY index DESC LIMIT 1" });
    return rows[0] === undefined ? undefined : milestoneOf(rows[0]);
  }

  async utxoChanges(index: number): Promise<UtxoChanges | undefined> {
    if (!Number.isInteger(index) || index < 0 || index > 0x7fffffff) return undefined;
    const rows = await this.#query<{ created_outputs: Buffer[]; consumed_outputs: Buffer[] }>({
      name: "chrysalis_utxo_changes",
      text: "SELECT created_outputs, consumed_outputs FROM chrysalis.milestones WHERE index = $1",
      values: [index],
    });
    const r = rows[0];
    return r === undefined ? undefined : { index, createdOutputs: r.created_outputs.map(toHex), consumedOutputs: r.consumed_outputs.map(toHex) };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Prove-ownership and JWT state

  async redeemNonce(nonce: string, expiresAt: number): Promise<boolean> {
    this.#poolOrThrow();
    return this.#redemptions.run({ nonce: storableText(nonce, "nonce"), expiresAt });
  }

  /**
   * Nonce redemptions that arrive while others are being written go together, as one statement (see Grouped): each
   * nonce once and in sorted order, since a multi-row insert waits on the rows another instance's insert has not
   * committed yet, and two instances inserting overlapping nonces in opposite orders would deadlock (40P01; seen with
   * unsorted groups). The first caller of a nonce listed twice in one group redeems it.
   */
  readonly #redemptions = new Grouped<{ readonly nonce: string; readonly expiresAt: number }, boolean>(async (items) => {
    const expiry = new Map<string, number>();
    for (const i of items) if (!expiry.has(i.nonce)) expiry.set(i.nonce, i.expiresAt);
    const nonces = [...expiry.keys()].sort();
    const rows = await this.#query<{ nonce: string }>(
      {
        name: "chrysalis_redeem_nonces",
        text: `INSERT INTO chrysalis.redeemed_nonces (nonce, expires_at) SELECT * FROM unnest($1::text[], $2::float8[])
             ON CONFLICT (nonce) DO NOTHING RETURNING nonce`,
        values: [nonces, nonces.map((n) => expiry.get(n)!)],
      },
      true,
    );
    const inserted = new Set(rows.map((r) => r.nonce));
    return items.map((i) => ({ status: "fulfilled", value: inserted.delete(i.nonce) }) as const);
  });

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    await this.#query({
      name: "chrysalis_revoke_token",
      text: `INSERT INTO chrysalis.revoked_tokens AS r (jti, expires_at) VALUES ($1, $2)
             ON CONFLICT (jti) DO UPDATE SET expires_at = greatest(r.expires_at, excluded.expires_at)`,
      values: [jti, expiresAt],
    });
  }

  async isTokenRevoked(jti: string): Promise<boolean> {
    this.#poolOrThrow();
    return this.#revocationChecks.run(storableText(jti, "jti"));
  }

  /** Every authenticated request asks this: the checks that arrive while one is being read go as one statement (its
   * list padded as the message reads' is). */
  readonly #revocationChecks = new Grouped<string, boolean>(async (jtis) => {
    const rows = await this.#query<{ jti: string }>(
      { name: "chrysalis_are_revoked", text: "SELECT jti FROM chrysalis.revoked_tokens WHERE jti = ANY($1::text[])", values: [planned(jtis)] },
      true,
    );
    const revoked = new Set(rows.map((r) => r.jti));
    return jtis.map((jti) => ({ status: "fulfilled", value: revoked.has(jti) }) as const);
  });

  secret(name: string, create: () => Uint8Array): Promise<Uint8Array> {
    const read = async (): Promise<Uint8Array | undefined> => {
      const rows = await this.#query<{ value: Buffer }>({ name: "chrysalis_secret", text: "SELECT value FROM chrysalis.secrets WHERE name = $1", values: [name] }, true);
      const value = rows[0]?.value;
      return value === undefined ? undefined : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    };
    return this.#steps(async () => {
      const stored = await read();
      if (stored !== undefined) return stored;
      // Whichever instance inserts first wins; every instance then reads that one (a new statement sees the commit).
      await this.#query({ text: "INSERT INTO chrysalis.secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", values: [name, Buffer.from(create())] }, true);
      const value = await read();
      if (value === undefined) throw new NodeError("STORE_UNAVAILABLE", `the secret ${name} could not be stored`);
      return value;
    });
  }

  sweep(now: number): Promise<void> {
    return this.#steps(async () => {
      await this.#query({ text: "DELETE FROM chrysalis.redeemed_nonces WHERE expires_at < $1", values: [now] }, true);
      await this.#query({ text: "DELETE FROM chrysalis.revoked_tokens WHERE expires_at < $1", values: [now] }, true);
    });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Ageing: pruning, snapshots, statistics and verification

  /**
   * Pruning needs what migration 2 added (its indexes, the pruning index row), and openExisting may have found an
   * older database it must not migrate. The reads below work on either: a missing row reads as its default, and the
   * entry points are this instance's map (the persisted ones once migrated).
   */
  #requirePruning(): void {
    this.#poolOrThrow();
    if (this.#schemaVersion < AGEING_SCHEMA) {
      throw new NodeError("NOT_SUPPORTED", `the database at ${this.target} holds schema version ${this.#schemaVersion}: open it once with this version (chrysalis serve) to migrate it before pruning`);
    }
  }

  async pruningIndex(): Promise<number> {
    const rows = await this.#query<{ value: string }>({ name: "chrysalis_pruning_index", text: "SELECT value FROM chrysalis.meta WHERE key = 'pruning_index'" });
    return num(rows[0]?.value ?? 0);
  }

  async prune(target: number, batch: number): Promise<PruneStep> {
    this.#requirePruning();
    // A batch that is not a finite number deletes one message a step (LIMIT takes no NaN or Infinity).
    const limit = Number.isFinite(batch) ? Math.min(0x7fffffff, Math.max(1, Math.floor(batch))) : 1;
    return this.#transaction(async (client) => {
      // Taken for this transaction only: another instance's step that finds it taken stops (its pruner tries again
      // later), so every milestone is pruned by one instance and no step waits on another.
      const lock = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [PRUNE_LOCK.toString()]);
      // Read after the lock: the previous holder's commit is visible to this statement (READ COMMITTED).
      const state = await client.query<{ pruning: string | null; latest: number | null }>(
        "SELECT (SELECT value FROM chrysalis.meta WHERE key = 'pruning_index') AS pruning, (SELECT max(index) FROM chrysalis.milestones) AS latest",
      );
      const pruned = num(state.rows[0]?.pruning ?? 0);
      if (lock.rows[0]?.locked !== true) return { pruningIndex: pruned, messages: 0, done: true };
      const m = pruned + 1;
      // The latest milestone always stays (the next index and the coordinator's chain follow from it), so a target
      // at or past it stops there.
      // (Written as !(m <= target) so that a NaN target stops rather than prunes everything; a fractional target
      // prunes up to its integer part.)
      if (!(m <= target) || m >= (state.rows[0]?.latest ?? 0)) return { pruningIndex: pruned, messages: 0, done: true };

      const deleted = await client.query<{ id: Buffer; seq: string; head: Buffer }>({ name: "chrysalis_prune_messages", text: PRUNE_MESSAGES, values: [m, limit] });
      const ids = deleted.rows.map((r) => r.id);
      if (ids.length > 0) {
        const own = new Set(ids.map((id) => id.toString("hex")));
        // A deleted message's own child entries, by their exact keys; those under a parent deleted here go with the
        // parent's range.
        const keys = deleted.rows.flatMap((r) => parentIdsOf(r.head).filter((p) => !own.has(p.toString("hex"))).map((parent) => ({ parent, seq: r.seq, child: r.id })));
        await client.query({
          name: "chrysalis_prune_entries",
          text: PRUNE_ENTRIES,
          values: [ids, keys.map((k) => k.parent), keys.map((k) => k.seq), keys.map((k) => k.child)],
        });
      }
      if (ids.length === limit) return { pruningIndex: pruned, messages: ids.length, done: false };
      const remaining = await client.query<{ remaining: boolean }>({ name: "chrysalis_prune_remaining", text: PRUNE_REMAINING, values: [m] });
      if (remaining.rows[0]?.remaining === true) return { pruningIndex: pruned, messages: ids.length, done: false };
      await client.query({ name: "chrysalis_prune_outputs", text: PRUNE_OUTPUTS, values: [m] });
      await client.query({ name: "chrysalis_prune_milestone", text: PRUNE_MILESTONE, values: [m] });
      return { pruningIndex: m, messages: ids.length, done: m >= target };
    });
  }

  async readSnapshot(): Promise<LedgerSnapshot> {
    this.#poolOrThrow();
    return this.#transaction(async (client) => {
      const meta = new Map((await client.query<{ key: string; value: string }>("SELECT key, value FROM chrysalis.meta")).rows.map((r) => [r.key, r.value]));
      const latestRow = (await client.query<MilestoneRow>("SELECT index, message_id, timestamp FROM chrysalis.milestones ORDER BY index DESC LIMIT 1")).rows[0];
      const milestone = latestRow === undefined ? undefined : milestoneOf(latestRow);
      const latestIndex = milestone?.index ?? 0;
      let keys = coordinatorKeys(meta);
      const entryPoints = new Map<string, number>();
      if (milestone !== undefined) {
        entryPoints.set(milestone.messageId, milestone.index);
        // The keys that signed the latest milestone; a store made from a snapshot has not stored that message.
        const stored = (await client.query<{ bytes: Buffer }>("SELECT bytes FROM chrysalis.messages WHERE id = $1", [latestRow!.message_id])).rows[0];
        if (stored !== undefined) {
          const payload = decodeMessage(new Uint8Array(stored.bytes.buffer, stored.bytes.byteOffset, stored.bytes.byteLength)).payload;
          if (payload?.type === 1) keys = payload.publicKeys.map((k) => toHex(k)).sort();
        }
      }
      const tips = await client.query<{ message_id: Buffer; stored: boolean; referenced_by: number | null }>(
        `SELECT t.message_id, m.id IS NOT NULL AS stored, m.referenced_by
         FROM chrysalis.tips t LEFT JOIN chrysalis.messages m ON m.id = t.message_id ORDER BY t.seq, t.message_id`,
      );
      for (const r of tips.rows) {
        const id = toHex(r.message_id);
        if (!entryPoints.has(id)) entryPoints.set(id, r.stored ? (r.referenced_by ?? latestIndex) : (this.#entryPoints.get(id) ?? latestIndex));
      }
      const outputs: SnapshotOutput[] = [];
      // Pages in output id order (the primary key), all inside this one snapshot of the database.
      for (let after: Buffer = Buffer.alloc(0); ; ) {
        const page = await client.query<OutputRow & { message_id: Buffer; milestone_booked: number | null }>(
          `SELECT o.output_id, o.message_id, o.milestone_booked, o.type, o.address, o.amount FROM chrysalis.outputs o
           WHERE o.output_id > $1 AND NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)
           ORDER BY o.output_id LIMIT $2`,
          [after, SNAPSHOT_CHUNK],
        );
        for (const r of page.rows) {
          outputs.push({ outputId: toHex(r.output_id), messageId: toHex(r.message_id), ...(r.milestone_booked !== null ? { milestoneIndexBooked: r.milestone_booked } : {}), output: outputOf(r) });
        }
        if (page.rows.length < SNAPSHOT_CHUNK) break;
        after = page.rows[page.rows.length - 1]!.output_id;
      }
      return {
        network: meta.get("network") ?? "",
        ledger: meta.get("ledger") === "1",
        ...(milestone !== undefined ? { milestone } : {}),
        coordinatorPublicKeys: keys,
        entryPoints: [...entryPoints].map(([messageId, index]) => ({ messageId, index })),
        outputs,
      };
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  async stats(): Promise<StoreStats> {
    // One statement: every count from the same snapshot.
    const rows = await this.#query<{ network: string | null; messages: string; unspent: string; latest: number; pruning: string | null; bytes: string }>({
      text: `SELECT (SELECT value FROM chrysalis.meta WHERE key = 'network') AS network,
               (SELECT count(*) FROM chrysalis.messages) AS messages,
               (SELECT count(*) FROM chrysalis.outputs o WHERE NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)) AS unspent,
               (SELECT coalesce(max(index), 0) FROM chrysalis.milestones) AS latest,
               (SELECT value FROM chrysalis.meta WHERE key = 'pruning_index') AS pruning,
               (${SCHEMA_BYTES}) AS bytes`,
    });
    const r = rows[0]!;
    const bytes = num(r.bytes);
    return {
      engine: this.engine,
      network: r.network ?? "",
      messages: num(r.messages),
      unspentOutputs: num(r.unspent),
      latestMilestoneIndex: r.latest,
      pruningIndex: num(r.pruning ?? 0),
      bytes,
      fileBytes: bytes,
    };
  }

  /**
   * VACUUM (not FULL: no lock that stops writers) of every table of the store, skipping one another instance is
   * vacuuming already. Outside a transaction, as VACUUM must be.
   */
  async reclaim(): Promise<void> {
    this.#poolOrThrow();
    await this.#query({ text: `VACUUM (SKIP_LOCKED) ${VACUUMED_TABLES.map((t) => `chrysalis.${t}`).join(", ")}` });
  }

  async bytes(): Promise<number> {
    this.#poolOrThrow();
    const rows = await this.#query<{ bytes: string }>({ name: "chrysalis_bytes", text: `SELECT (${SCHEMA_BYTES}) AS bytes` });
    return num(rows[0]?.bytes ?? 0);
  }

  async verify(): Promise<string | undefined> {
    this.#poolOrThrow();
    return this.#transaction((client) => this.#verify(client), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  /**
   * The checks, in order, each answering its first finding. Index entries and address lists are indexes of the
   * messages and outputs tables here, kept by the database itself; what is checked is what a row can get wrong.
   */
  async #verify(client: PoolClient): Promise<string | undefined> {
    const meta = new Map((await client.query<{ key: string; value: string }>("SELECT key, value FROM chrysalis.meta")).rows.map((r) => [r.key, r.value]));
    const pruned = num(meta.get("pruning_index") ?? 0);

    // Every message hashes to its id, and its index key is its indexation payload's.
    for (let after = -1; ; ) {
      const page = await client.query<{ id: Buffer; seq: string; bytes: Buffer; index_key: Buffer | null }>(
        "SELECT id, seq, bytes, index_key FROM chrysalis.messages WHERE seq > $1 ORDER BY seq LIMIT $2",
        [after, VERIFY_PAGE],
      );
      for (const r of page.rows) {
        const id = toHex(r.id);
        const bytes = new Uint8Array(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
        const hash = messageId(bytes);
        if (hash !== id) return `message ${id}: its bytes hash to ${hash}`;
        let index: Uint8Array | undefined;
        try {
          index = indexesOf(decodeMessage(bytes))[0];
        } catch (error) {
          return `message ${id}: its bytes do not decode (${reason(error)})`;
        }
        const stored = r.index_key === null ? undefined : toHex(r.index_key);
        if ((index === undefined ? undefined : toHex(index)) !== stored) return `message ${id}: its index entry does not match its indexation payload`;
      }
      if (page.rows.length < VERIFY_PAGE) break;
      after = num(page.rows[page.rows.length - 1]!.seq);
    }

    const metadata = (
      await client.query<{ id: Buffer; referenced_by: number | null; milestone_index: number | null; inclusion: number | null; conflict_reason: number | null }>(
        `SELECT id, referenced_by, milestone_index, inclusion, conflict_reason FROM chrysalis.messages
         WHERE (referenced_by IS NULL) <> (inclusion IS NULL) OR inclusion NOT BETWEEN 1 AND 3 OR referenced_by <= $1
           OR (milestone_index IS NOT NULL AND milestone_index IS DISTINCT FROM referenced_by)
           OR (conflict_reason IS NOT NULL AND inclusion IS DISTINCT FROM 3)
         ORDER BY seq LIMIT 1`,
        [pruned],
      )
    ).rows[0];
    if (metadata !== undefined) {
      const id = toHex(metadata.id);
      if (metadata.referenced_by !== null && metadata.referenced_by <= pruned) {
        return `message ${id}: referenced by milestone ${metadata.referenced_by}, at or below the pruning index ${pruned}, yet still stored`;
      }
      return `message ${id}: inconsistent metadata (referenced by ${metadata.referenced_by ?? "none"}, milestone ${metadata.milestone_index ?? "none"}, inclusion ${metadata.inclusion ?? "none"}, conflict reason ${metadata.conflict_reason ?? "none"})`;
    }

    const child = (
      await client.query<{ parent: Buffer; child: Buffer }>(
        `SELECT c.parent, c.child FROM chrysalis.children c LEFT JOIN chrysalis.messages m ON m.id = c.child
         WHERE m.id IS NULL OR m.seq <> c.seq ORDER BY c.parent, c.seq LIMIT 1`,
      )
    ).rows[0];
    if (child !== undefined) return `children entry of ${toHex(child.parent)}: its child ${toHex(child.child)} is not a stored message`;

    const entryPoints = [...this.#entryPoints.keys()].map((id) => Buffer.from(id, "hex"));
    const tip = (
      await client.query<{ message_id: Buffer }>(
        `SELECT t.message_id FROM chrysalis.tips t
         WHERE NOT EXISTS (SELECT 1 FROM chrysalis.messages m WHERE m.id = t.message_id) AND NOT (t.message_id = ANY($1::bytea[]))
         ORDER BY t.seq LIMIT 1`,
        [entryPoints],
      )
    ).rows[0];
    if (tip !== undefined) return `tip ${toHex(tip.message_id)}: neither a stored message nor an entry point`;
    // At its message's seq, or at 0 for an entry point (its own message stored later or not): the age the oldest tips
    // are dropped by.
    const aged = (
      await client.query<{ message_id: Buffer; seq: string; own: string | null }>(
        `SELECT t.message_id, t.seq, m.seq AS own FROM chrysalis.tips t LEFT JOIN chrysalis.messages m ON m.id = t.message_id
         WHERE t.seq IS DISTINCT FROM m.seq AND NOT (t.seq = 0 AND t.message_id = ANY($1::bytea[]))
         ORDER BY t.seq, t.message_id LIMIT 1`,
        [entryPoints],
      )
    ).rows[0];
    if (aged !== undefined) {
      const name = toHex(aged.message_id);
      return `tip ${name}: at seq ${aged.seq}, but ${aged.own === null ? "it is an entry point (seq 0)" : `message ${name} has seq ${aged.own}`}`;
    }

    // A milestone's message may be missing only at pruning index + 1: a snapshot's milestone, or one being pruned.
    const milestone = (
      await client.query<{ index: number; message_id: Buffer }>(
        `SELECT ms.index, ms.message_id FROM chrysalis.milestones ms
         WHERE ms.index <= $1 OR (ms.index > $1 + 1 AND NOT EXISTS (SELECT 1 FROM chrysalis.messages m WHERE m.id = ms.message_id))
         ORDER BY ms.index LIMIT 1`,
        [pruned],
      )
    ).rows[0];
    if (milestone !== undefined) {
      return milestone.index <= pruned
        ? `milestone ${milestone.index}: at or below the pruning index ${pruned}, yet still stored`
        : `milestone ${milestone.index}: its message ${toHex(milestone.message_id)} is not stored`;
    }

    const spent = (
      await client.query<{ output_id: Buffer }>(
        "SELECT s.output_id FROM chrysalis.spent s WHERE NOT EXISTS (SELECT 1 FROM chrysalis.outputs o WHERE o.output_id = s.output_id) ORDER BY s.output_id LIMIT 1",
      )
    ).rows[0];
    if (spent !== undefined) return `spent record of output ${toHex(spent.output_id)}: no such output`;

    // Balances against their unspent outputs; an address whose outputs are all spent keeps a row of zeros.
    const balance = (
      await client.query<{ address: Buffer; balance: string; dust_allowance: string; dust_outputs: string; sum: string; allowance: string; dust: string }>(
        `WITH u AS (
           SELECT o.address, sum(o.amount) AS sum, coalesce(sum(o.amount) FILTER (WHERE o.type = 1), 0) AS allowance,
             count(*) FILTER (WHERE o.type = 0 AND o.amount < $1) AS dust
           FROM chrysalis.outputs o WHERE NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)
           GROUP BY o.address
         )
         SELECT coalesce(b.address, u.address) AS address,
           coalesce(b.balance, 0) AS balance, coalesce(b.dust_allowance, 0) AS dust_allowance, coalesce(b.dust_outputs, 0) AS dust_outputs,
           coalesce(u.sum, 0) AS sum, coalesce(u.allowance, 0) AS allowance, coalesce(u.dust, 0) AS dust
         FROM u FULL JOIN chrysalis.balances b ON b.address = u.address
         WHERE coalesce(b.balance, 0) <> coalesce(u.sum, 0) OR coalesce(b.dust_allowance, 0) <> coalesce(u.allowance, 0)
           OR coalesce(b.dust_outputs, 0) <> coalesce(u.dust, 0)
         ORDER BY 1 LIMIT 1`,
        [DUST_THRESHOLD],
      )
    ).rows[0];
    if (balance !== undefined) {
      return (
        `balance of address ${toHex(balance.address)}: stored ${balance.balance} (dust allowance ${balance.dust_allowance}, dust outputs ${balance.dust_outputs}), ` +
        `its unspent outputs give ${balance.sum} (dust allowance ${balance.allowance}, dust outputs ${balance.dust})`
      );
    }

    if (meta.get("ledger") === "1") {
      const total = (
        await client.query<{ total: string }>(
          "SELECT coalesce(sum(o.amount), 0)::text AS total FROM chrysalis.outputs o WHERE NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)",
        )
      ).rows[0]!.total;
      if (total !== String(TOTAL_SUPPLY)) return `ledger: the unspent outputs sum to ${total}, not the total supply ${TOTAL_SUPPLY}`;
    }
    return undefined;
  }
}

// Up to $2 messages of milestone $1's cone, oldest first, with the unreferenced messages that arrived before the
// milestone's own message (only while that message is stored: it is the newest of the cone, so it goes last, after
// every older unreferenced message). The condition is repeated on the DELETE so that a row a concurrent
// confirmation changed is re-checked rather than deleted. `head` holds the parents (network id, count, 8 × 32 bytes).
const PRUNE_MESSAGES = `
WITH own AS (
  SELECT m.seq FROM chrysalis.milestones ms JOIN chrysalis.messages m ON m.id = ms.message_id WHERE ms.index = $1
), victims AS (
  SELECT id FROM (
    (SELECT id, seq FROM chrysalis.messages WHERE referenced_by IS NULL AND seq < (SELECT seq FROM own) ORDER BY seq LIMIT $2)
    UNION ALL
    (SELECT id, seq FROM chrysalis.messages WHERE referenced_by = $1 ORDER BY seq LIMIT $2)
  ) AS v ORDER BY seq LIMIT $2
)
DELETE FROM chrysalis.messages AS m USING victims v
WHERE m.id = v.id AND (m.referenced_by = $1 OR (m.referenced_by IS NULL AND m.seq < (SELECT seq FROM own)))
RETURNING m.id, m.seq, substring(m.bytes FROM 1 FOR 265) AS head`;

// The deleted messages' children entries as parents (a range of the primary key), as children (exact keys), and
// their tip entries.
const PRUNE_ENTRIES = `
WITH p AS (
  DELETE FROM chrysalis.children WHERE parent = ANY($1::bytea[])
), c AS (
  DELETE FROM chrysalis.children AS c USING unnest($2::bytea[], $3::bigint[], $4::bytea[]) AS k(parent, seq, child)
  WHERE c.parent = k.parent AND c.seq = k.seq AND c.child = k.child
)
DELETE FROM chrysalis.tips WHERE message_id = ANY($1::bytea[])`;

// Whether milestone $1 still has messages to prune (this transaction's deletes included).
const PRUNE_REMAINING = `
SELECT EXISTS (SELECT 1 FROM chrysalis.messages WHERE referenced_by = $1)
  OR EXISTS (
    SELECT 1 FROM chrysalis.messages WHERE referenced_by IS NULL AND seq < (
      SELECT m.seq FROM chrysalis.milestones ms JOIN chrysalis.messages m ON m.id = ms.message_id WHERE ms.index = $1
    )
  ) AS remaining`;

// Finishing milestone $1, first statement: the outputs it consumed (only those with a spent record: an unspent output
// is never deleted), row-locked in output id order before they are deleted. This comes before the spent rows go, in
// the order accept takes its locks (consumed outputs, then spent ids): a spend of one of these outputs that locked it
// first (FOR KEY SHARE) makes this wait until it commits or rolls back, and one that comes after waits for this
// transaction and then finds the output gone (INPUT_NOT_FOUND).
const PRUNE_OUTPUTS = `
WITH victims AS (
  SELECT o.output_id FROM chrysalis.outputs o
  WHERE o.output_id IN (SELECT unnest(consumed_outputs) FROM chrysalis.milestones WHERE index = $1)
    AND EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)
  ORDER BY o.output_id FOR UPDATE OF o
)
DELETE FROM chrysalis.outputs WHERE output_id IN (SELECT output_id FROM victims)`;

// Second statement: the milestone's record and UTXO changes, the spent records of the outputs it consumed, and the
// pruning index.
const PRUNE_MILESTONE = `
WITH ms AS (
  DELETE FROM chrysalis.milestones WHERE index = $1 RETURNING consumed_outputs
), s AS (
  DELETE FROM chrysalis.spent WHERE output_id IN (SELECT unnest(consumed_outputs) FROM ms)
)
UPDATE chrysalis.meta SET value = $1::integer::text WHERE key = 'pruning_index'`;

// Tables with their indexes and TOAST, from the catalog and file sizes: cheap enough for a scraped metric.
const SCHEMA_BYTES = `
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'chrysalis' AND c.relkind = 'r'`;

interface OutputRow {
  output_id: Buffer;
  type: number;
  address: Buffer;
  amount: string;
}

interface MetadataRow {
  arrival_time: number;
  cone_oldest: number;
  cone_youngest: number;
  referenced_by: number | null;
  milestone_index: number | null;
  inclusion: number | null;
  conflict_reason: number | null;
}

interface MilestoneRow {
  index: number;
  message_id: Buffer;
  timestamp: string;
}

/** What open answers for a store that exists: its ledger flag and the coordinator keys it was made with, if any. */
function opened(created: boolean, meta: ReadonlyMap<string, string>): StoreOpenResult {
  const keys = coordinatorKeys(meta);
  return { created, ledger: meta.get("ledger") === "1", ...(keys.length > 0 ? { coordinatorPublicKeys: keys } : {}) };
}

/** The persisted coordinator keys: hex, comma-separated ("" when the store was not made from a snapshot). */
function coordinatorKeys(meta: ReadonlyMap<string, string>): string[] {
  const text = meta.get("coordinator_keys") ?? "";
  return text === "" ? [] : text.split(",");
}

/**
 * The parent ids of a message from its canonical bytes (network id u64 ‖ parents count u8 ‖ 32 bytes each, PROTOCOL.md),
 * without decoding the rest: pruning needs only them to find the message's own child entries. Bounded by the bytes,
 * so damaged bytes give fewer parents rather than an exception.
 */
function parentIdsOf(bytes: Buffer): Buffer[] {
  const count = bytes.length > 8 ? bytes[8]! : 0;
  const parents: Buffer[] = [];
  for (let i = 0; i < count && 9 + 32 * (i + 1) <= bytes.length; i++) parents.push(bytes.subarray(9 + 32 * i, 9 + 32 * (i + 1)));
  return parents;
}

function outputOf(r: OutputRow): Output {
  return { type: r.type === 1 ? 1 : 0, address: { type: 0, address: new Uint8Array(r.address) }, amount: num(r.amount) };
}

/** Text PostgreSQL can store: a NUL character it refuses, which in a grouped statement would fail the whole group. */
function storableText(value: string, path: string): string {
  if (value.includes("\u0000")) throw new ProtocolError("INVALID_ARGUMENT", `${path} holds a NUL character, which PostgreSQL text cannot`, { path });
  return value;
}

/** The length PostgreSQL's planner assumes for an array parameter it has not seen (a generic plan's estimate). */
const PLANNED_ARRAY_LENGTH = 10;

/** A list for an array parameter that a read matches rows against, padded with NULLs (which match no row) to
 * PLANNED_ARRAY_LENGTH: PostgreSQL then settles on one plan for metadataWithLatest's statement (measured there), and
 * the grouped reads measured cheaper so (see #messageReads). */
function planned<T>(values: readonly T[]): (T | null)[] {
  const list: (T | null)[] = [...values];
  while (list.length < PLANNED_ARRAY_LENGTH) list.push(null);
  return list;
}

const METADATA_COLUMNS = "arrival_time, cone_oldest, cone_youngest, referenced_by, milestone_index, inclusion, conflict_reason";

function metadataOf(r: MetadataRow): MessageMetadata {
  return {
    arrivalTime: num(r.arrival_time),
    solid: true,
    coneRoots: { oldest: r.cone_oldest, youngest: r.cone_youngest },
    ...(r.referenced_by !== null ? { referencedByMilestoneIndex: r.referenced_by } : {}),
    ...(r.milestone_index !== null ? { milestoneIndex: r.milestone_index } : {}),
    ...(r.inclusion !== null ? { ledgerInclusionState: INCLUSION[r.inclusion - 1]! } : {}),
    ...(r.conflict_reason !== null ? { conflictReason: r.conflict_reason } : {}),
  };
}

function milestoneOf(r: MilestoneRow): MilestoneRecord {
  return { index: r.index, messageId: toHex(r.message_id), timestamp: num(r.timestamp) };
}

function balanceColumns(deltas: readonly BalanceDelta[]): [Buffer[], number[], number[], number[]] {
  return [deltas.map((d) => Buffer.from(d.address)), deltas.map((d) => d.balance), deltas.map((d) => d.dustAllowance), deltas.map((d) => d.dustOutputs)];
}

function before(after: AddressBalance | undefined, delta: BalanceDelta | undefined): AddressBalance {
  if (after === undefined || delta === undefined) return after ?? EMPTY_BALANCE;
  return { balance: after.balance - delta.balance, dustAllowance: after.dustAllowance - delta.dustAllowance, dustOutputs: after.dustOutputs - delta.dustOutputs };
}

/** A deadlock or serialisation failure: the database aborted the transaction whole, so running it again is safe. */
function retryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40001" || code === "40P01";
}

const RETRIES = 5;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A failure of the connection rather than of the statement: a socket error, a timeout, a connection pg gave up on. */
function lostConnection(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === "string" && /^E[A-Z]+$/.test(e.code)) return true;
  return typeof e?.message === "string" && /connection|timeout|terminated|not queryable/i.test(e.message);
}

/** An error the server answered with (so the connection is still good), not a lost connection or a timeout. */
function isSqlState(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && !/^(08|57)/.test(code);
}


/** host:port/database of a connection string, for messages (never the password). */
export function describeTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const host = url.hostname || url.searchParams.get("host") || "localhost";
    return `${host}:${url.port || "5432"}${url.pathname && url.pathname !== "/" ? url.pathname : ""}`;
  } catch {
    return "the configured database";
  }
}
