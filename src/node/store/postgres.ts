// The PostgreSQL engine of the storage contract, for several node instances sharing one database (node-postgres:
// pooled clients, parameterised queries only). Every table lives in the schema `chrysalis`; versioned migrations run
// at open under an advisory lock, and a database migrated by a newer version refuses to open.
//
// Accepting a message is one statement (shared by the messages that arrive while one is written), or with a claim (an
// API submission's transaction) one database transaction; confirming a milestone is one transaction. The database
// decides what JavaScript cannot decide alone when two instances write at the same instant:
// - a claim is written after the outputs it spends are row-locked (FOR NO KEY UPDATE, in output id order), then the
//   pending outputs it spends or creates (likewise), and then read with their spends and claims, so of two
//   transactions claiming one output, confirmed or pending (a chained spend), the second waits for the first and then
//   finds its claim (checkClaim, INPUT_SPENT). A row the read finds that the locks missed (a pending output a
//   confirmation moved into the ledger while the claim waited for it) runs the transaction again;
// - a milestone index is a primary key, and only the next index may be inserted; the milestone row is the first thing a
//   confirmation writes, so a second confirmation of that index waits there and fails (MILESTONE_CONFLICT) before it
//   touches anything else. It then locks the outputs it spends as a claim does, so that no claim lands on an output
//   it spends (the claim waits and then finds the output spent), and reads them: each must be unspent (STORE_CORRUPT);
//   and the pending outputs it deletes (those it books, and the conflicting transactions'), so that a claim on one
//   waits and then reads the ledger;
// - pruning deletes spent outputs, and that DELETE waits for a claim's lock on them (or the claim waits for the DELETE
//   and then finds no row), so a claim racing a prune step is refused either as spent or as not found; lapsed claims
//   and pending outputs likewise.
// A failed rule rolls the whole transaction back. Locks are taken in one order: outputs (sorted), then pending outputs
// (sorted), then messages, then claims (sorted). A claim: outputs, pending outputs, its message and children, claims and
// the pending outputs it makes; a confirmation: its milestone row, the outputs it spends, the pending outputs it
// deletes, the referenced messages, the new outputs and spends, balances (sorted) and claims; a prune step: messages and
// children (none a claim or confirmation touches: cones of pruned milestones, and messages below max depth for good),
// then pending outputs and claims (and such a step ends there), or outputs and spends when it finishes a milestone. A
// deadlock or serialisation failure the database still reports is retried.
//
// Instances tell each other what they stored (watch): every write NOTIFYs what it stored or confirmed inside its own
// statement or transaction, so the notice is delivered exactly when the write commits, and never for a write rolled
// back; each instance LISTENs on one connection of its own and drops its own notices.
import type { ClientBase, Pool, PoolClient, QueryConfig, QueryResultRow } from "pg";
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex, toHex } from "../../bytes/hex.js";
import { BELOW_MAX_DEPTH, DUST_THRESHOLD, TOTAL_SUPPLY } from "../../bytes/limits.js";
import { decodeMessage } from "../../model/codec.js";
import { messageId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { balanceDeltas, checkClaim, EMPTY_BALANCE, milestoneDeltas, pendingOutputsOf, type BalanceDelta } from "../ledger.js";
import type { Output } from "../../model/types.js";
import { Grouped } from "./grouped.js";
import { indexesOf, reason, storeClosed, storedMessage, storeTooNew } from "./common.js";
import {
  ZERO_MESSAGE_ID,
  type Acceptance,
  type AcceptResult,
  type AddressBalance,
  type AddressOutputsQuery,
  type ClaimRecord,
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
  type PendingOutput,
  type PruneStep,
  type SnapshotOutput,
  type SpendClaim,
  type StoreChange,
  type StoredMessage,
  type StoreOpenOptions,
  type StoreOpenResult,
  type StoreStats,
  type UtxoChanges,
} from "./contract.js";

/** The migrations, in order: version i + 1 is MIGRATIONS[i]. Append only; never edit one that has shipped. (Exported
 * for the tests that build a database of an earlier version.) */
export const MIGRATIONS: readonly { readonly description: string; readonly statements: readonly string[] }[] = [
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
  {
    description: "the ledger moves at confirmation only: claims and pending outputs, no tip set; what acceptance did to the ledger is rolled back",
    statements: [
      // Writers of the previous version wait here until this commits, and then fail on the tip set it drops (each of
      // their message writes touched it), so none writes the ledger at acceptance into a store past this migration.
      // Readers go on meanwhile.
      `LOCK TABLE chrysalis.messages, chrysalis.children, chrysalis.tips, chrysalis.outputs, chrysalis.spent, chrysalis.balances, chrysalis.milestones IN EXCLUSIVE MODE`,
      `CREATE TABLE chrysalis.claims (output_id bytea PRIMARY KEY, transaction_id bytea NOT NULL, message_id bytea NOT NULL, index integer NOT NULL)`,
      // The outputs a claimed transaction would create (its transaction id is the output id's first 32 bytes).
      `CREATE TABLE chrysalis.pending_outputs (
        output_id bytea PRIMARY KEY,
        message_id bytea NOT NULL,
        type smallint NOT NULL,
        address bytea NOT NULL,
        amount bigint NOT NULL,
        index integer NOT NULL
      )`,
      // Pruning milestone m deletes the claims and pending outputs made at m or before: found here, whatever the
      // tables' size.
      `CREATE INDEX claims_by_index ON chrysalis.claims (index)`,
      `CREATE INDEX pending_outputs_by_index ON chrysalis.pending_outputs (index)`,
      // Outputs a snapshot gave a store of the previous version unbooked (its source had not confirmed them yet; a
      // snapshot's outputs have the negative seqs) are the ledger this store began with: booked as a snapshot loaded
      // now books them, at the first milestone the store knows (its snapshot's, unless pruned since).
      `UPDATE chrysalis.outputs SET milestone_booked = (SELECT coalesce(min(index), 0) FROM chrysalis.milestones) WHERE milestone_booked IS NULL AND seq < 0`,
      // The outputs a transaction no milestone referenced yet made at acceptance (unbooked, of a stored message no
      // milestone referenced) leave the ledger below, and become its pending outputs, made now: a chained spend of one
      // is taken after the migration as it was before. Those of a message a milestone referenced are a conflicting
      // transaction's, which no milestone will book: they go.
      `INSERT INTO chrysalis.pending_outputs (output_id, message_id, type, address, amount, index)
       SELECT o.output_id, o.message_id, o.type, o.address, o.amount, (SELECT coalesce(max(index), 0) FROM chrysalis.milestones)
       FROM chrysalis.outputs o JOIN chrysalis.messages m ON m.id = o.message_id
       WHERE o.milestone_booked IS NULL AND m.referenced_by IS NULL`,
      // Each spend no milestone confirmed, of an output that stays or becomes a pending output, becomes that
      // transaction's claim, made now: the API goes on refusing a second spend of the output until the claim settles
      // or lapses.
      `INSERT INTO chrysalis.claims (output_id, transaction_id, message_id, index)
       SELECT s.output_id, s.transaction_id, s.message_id, (SELECT coalesce(max(index), 0) FROM chrysalis.milestones)
       FROM chrysalis.spent s JOIN chrysalis.outputs o ON o.output_id = s.output_id
       WHERE s.milestone_index IS NULL
         AND (o.milestone_booked IS NOT NULL OR EXISTS (SELECT 1 FROM chrysalis.pending_outputs p WHERE p.output_id = s.output_id))`,
      // The balances of every address an unconfirmed transaction touched, recomputed from the outputs that stay unspent
      // once the rollback below is done (booked, and spent by no confirmed transaction).
      `WITH touched AS (
         SELECT address FROM chrysalis.outputs WHERE milestone_booked IS NULL
         UNION
         SELECT o.address FROM chrysalis.spent s JOIN chrysalis.outputs o ON o.output_id = s.output_id WHERE s.milestone_index IS NULL
       ), kept AS (
         SELECT t.address, coalesce(sum(o.amount), 0) AS balance, coalesce(sum(o.amount) FILTER (WHERE o.type = 1), 0) AS dust_allowance,
           count(o.output_id) FILTER (WHERE o.type = 0 AND o.amount < ${DUST_THRESHOLD}) AS dust_outputs
         FROM touched t LEFT JOIN chrysalis.outputs o ON o.address = t.address AND o.milestone_booked IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id AND s.milestone_index IS NOT NULL)
         GROUP BY t.address
       )
       UPDATE chrysalis.balances b SET balance = k.balance, dust_allowance = k.dust_allowance, dust_outputs = k.dust_outputs FROM kept k WHERE b.address = k.address`,
      `DELETE FROM chrysalis.spent WHERE milestone_index IS NULL`,
      `DELETE FROM chrysalis.outputs WHERE milestone_booked IS NULL`,
      `DROP TABLE chrysalis.tips`,
    ],
  },
];

/** The tables whose rows are deleted or updated as the node runs (by pruning, claims, balance updates, sweeps). */
const VACUUMED_TABLES = ["messages", "children", "outputs", "spent", "balances", "claims", "pending_outputs", "milestones", "redeemed_nonces", "revoked_tokens"] as const;

/** The schema version this code writes: the number of migrations it knows. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** pg_advisory_xact_lock key serialising migrations and store creation between instances ("chrysali" in ASCII). */
const MIGRATION_LOCK = 0x6368727973616c69n;

/** pg_try_advisory_xact_lock key held by the one prune step running on the database ("prunelck" in ASCII). */
export const PRUNE_LOCK = 0x7072756e656c636bn;

/** The first schema version with the pruning index, entry points and coordinator keys (migration 2). */
const AGEING_SCHEMA = 2;

/** The first schema version whose ledger moves at confirmation only, with claims (migration 3). */
const CLAIMS_SCHEMA = 3;

/** Outputs per INSERT when a snapshot is loaded: large enough to load 100,000 outputs in a few statements, small
 * enough that one statement's arrays stay a few megabytes. */
const SNAPSHOT_CHUNK = 10_000;

/** Rows one statement of readSnapshot, stats() and verify() reads at most, so that each finishes well within the query
 * timeout on a store of any size; verify() hashes its messages a smaller page at a time. */
const TABLE_PAGE = 10_000;
const VERIFY_PAGE = 1000;

const INCLUSION: readonly LedgerInclusionState[] = ["noTransaction", "included", "conflicting"];

/** The channel every instance of a store NOTIFYs what it wrote on, and LISTENs on (watch). */
const CHANGES_CHANNEL = "chrysalis_changes";

/** An instance's id in its notices: 16 hex characters, then the kind (m: message ids, s: a milestone index). */
const INSTANCE_ID_LENGTH = 16;

/** Messages one statement of a message group writes at most: a group is as large as the writes that waited for the
 * previous one, and 500 of the largest messages are some 32 MB of statement. */
const MESSAGES_PER_STATEMENT = 500;

/** Message ids per notice: 17 + 100 × 64 characters, well under NOTIFY's 8000 bytes. */
const NOTICE_IDS = 100;

// A group of messages ($1–$6, one element each, sorted by id) and their children ($7 children, $8 parents) in one
// statement, with the notice of the ones it stored ($9: this instance's prefix; NOTICE_IDS ids a notice), delivered
// when the statement commits. An id already stored writes nothing and is not returned. Sorted, so that two instances
// storing overlapping groups (a message gossiped to both) insert in the same order and cannot deadlock.
const INSERT_MESSAGES = `
WITH m AS (
  INSERT INTO chrysalis.messages (id, bytes, index_key, arrival_time, cone_oldest, cone_youngest)
  SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::float8[], $5::integer[], $6::integer[]) ORDER BY 1
  ON CONFLICT (id) DO NOTHING RETURNING id, seq
), c AS (
  INSERT INTO chrysalis.children (parent, seq, child) SELECT p.parent, m.seq, m.id FROM unnest($7::bytea[], $8::bytea[]) AS p(child, parent) JOIN m ON m.id = p.child
), n AS (
  SELECT pg_notify('${CHANGES_CHANNEL}', $9 || string_agg(encode(id, 'hex'), '' ORDER BY seq))
  FROM (SELECT id, seq, row_number() OVER (ORDER BY seq) - 1 AS k FROM m) AS r GROUP BY k / ${NOTICE_IDS}
)
SELECT id FROM m WHERE (SELECT count(*) FROM n) >= 0`;

// One message of a transaction, with its children and notice, after the outputs its transaction spends ($9) are
// row-locked, in output id order, and then the pending outputs it spends or creates ($10), in output id order (the
// insert reads their count, so the locks are held before it runs): the claim's read after this statement sees every
// claim, spend and pending output committed before them. Answers the ids it locked of each table, which the read
// checks (see #claim). Nothing but the locks when the id is already stored (m is then empty).
const INSERT_CLAIMING_MESSAGE = `
WITH l AS (
  SELECT output_id FROM chrysalis.outputs WHERE output_id = ANY($9::bytea[]) ORDER BY output_id FOR NO KEY UPDATE
), p AS (
  SELECT output_id FROM chrysalis.pending_outputs WHERE output_id = ANY($10::bytea[]) AND (SELECT count(*) FROM l) >= 0
  ORDER BY output_id FOR NO KEY UPDATE
), m AS (
  INSERT INTO chrysalis.messages (id, bytes, index_key, arrival_time, cone_oldest, cone_youngest)
  SELECT $1::bytea, $2::bytea, $3::bytea, $4::float8, $5::integer, $6::integer FROM (SELECT count(*) FROM p) AS locked
  ON CONFLICT (id) DO NOTHING RETURNING seq
), c AS (
  INSERT INTO chrysalis.children (parent, seq, child) SELECT p, m.seq, $1 FROM m, unnest($7::bytea[]) AS p
)
SELECT seq, pg_notify('${CHANGES_CHANNEL}', $8), (SELECT coalesce(array_agg(output_id), '{}') FROM l) AS outputs,
  (SELECT coalesce(array_agg(output_id), '{}') FROM p) AS pending
FROM m`;

// What checkClaim reads of the spent outputs ($1, in input order), after INSERT_CLAIMING_MESSAGE locked them: each
// output with its spend, its pending output and its claim, and the latest milestone's index.
const READ_CLAIMED = `
SELECT k.ord, o.output_id IS NOT NULL AS found, o.message_id, o.type, o.address, o.amount, o.milestone_booked,
  s.transaction_id AS spent_transaction, s.message_id AS spent_message, s.milestone_index AS spent_milestone,
  p.output_id IS NOT NULL AS pending, p.message_id AS pending_message, p.type AS pending_type, p.address AS pending_address,
  p.amount AS pending_amount, p.index AS pending_index,
  c.transaction_id AS claim_transaction, c.message_id AS claim_message, c.index AS claim_index,
  (SELECT coalesce(max(index), 0) FROM chrysalis.milestones) AS latest
FROM unnest($1::bytea[]) WITH ORDINALITY AS k(id, ord)
LEFT JOIN chrysalis.outputs o ON o.output_id = k.id
LEFT JOIN chrysalis.spent s ON s.output_id = k.id
LEFT JOIN chrysalis.pending_outputs p ON p.output_id = k.id
LEFT JOIN chrysalis.claims c ON c.output_id = k.id`;

// The claims checkClaim granted ($1, sorted): made or taken over (a lapsed claim, or this transaction's own claim from
// an earlier message carrying it) by this transaction at the latest milestone index; and the pending outputs the
// transaction creates ($5–$8, sorted), made at that index by this message (made again, for a reattachment), but
// those the ledger holds already.
const WRITE_CLAIMS = `
WITH c AS (
  INSERT INTO chrysalis.claims (output_id, transaction_id, message_id, index) SELECT o, $2, $3, $4 FROM unnest($1::bytea[]) AS o
  ON CONFLICT (output_id) DO UPDATE SET transaction_id = excluded.transaction_id, message_id = excluded.message_id, index = excluded.index
)
INSERT INTO chrysalis.pending_outputs (output_id, message_id, type, address, amount, index)
SELECT p.id, $3, p.type, p.address, p.amount, $4 FROM unnest($5::bytea[], $6::smallint[], $7::bytea[], $8::bigint[]) AS p(id, type, address, amount)
WHERE NOT EXISTS (SELECT 1 FROM chrysalis.outputs o WHERE o.output_id = p.id)
ON CONFLICT (output_id) DO UPDATE SET message_id = excluded.message_id, index = excluded.index`;

// A confirmation's first statement: its milestone row, only at the next index (a second instance confirming the same
// index waits on the primary key and fails), then the outputs it spends that it does not create ($6), row-locked in
// output id order (a claim on one waits for this transaction, and then finds it spent), with whether each is spent,
// and whether the milestone's message is stored; then the pending outputs it deletes ($7: of the outputs it creates
// and of those it discards), row-locked in output id order (a claim spending one waits, and then reads the ledger).
const CONFIRM_MILESTONE = `
WITH ms AS (
  INSERT INTO chrysalis.milestones (index, message_id, timestamp, created_outputs, consumed_outputs)
  SELECT $1, $2, $3, $4, $5 WHERE $1 = (SELECT coalesce(max(index), 0) + 1 FROM chrysalis.milestones)
  RETURNING index
), l AS (
  SELECT o.output_id, s.output_id IS NOT NULL AS spent FROM chrysalis.outputs o LEFT JOIN chrysalis.spent s ON s.output_id = o.output_id
  WHERE o.output_id = ANY($6::bytea[]) AND EXISTS (SELECT 1 FROM ms) ORDER BY o.output_id FOR NO KEY UPDATE OF o
), p AS (
  SELECT output_id FROM chrysalis.pending_outputs WHERE output_id = ANY($7::bytea[]) AND EXISTS (SELECT 1 FROM ms) AND (SELECT count(*) FROM l) >= 0
  ORDER BY output_id FOR UPDATE
)
SELECT (SELECT index FROM ms) AS index, EXISTS (SELECT 1 FROM chrysalis.messages WHERE id = $2) AS stored,
  (SELECT coalesce(array_agg(output_id), '{}') FROM l) AS found, (SELECT coalesce(array_agg(output_id), '{}') FROM l WHERE spent) AS spent,
  (SELECT count(*) FROM p) AS pending`;

// An output created by milestone i at place p of its walk sorts at BOOKED_SEQ + i × 2^31 + p in its address's list:
// oldest first means in confirmation order, as every engine lists them, and after every output the store held before
// (genesis outputs from 0, a snapshot's below 0, a message's under the previous schema its seq × 128 + index).
// i < 2^31 and p < 2^31, so the largest is 2^63 − 1.
const BOOKED_SEQ = "4611686018427387904";

// A confirmation's second statement, what its walk decided: the referenced messages' metadata ($3–$5, each once), the
// outputs it creates ($6–$10, booked), the spends ($11–$13, confirmed), the balance deltas ($14–$17, sorted by
// address), the claims it settles (of the outputs it spends, and the released ones, $18–$19, when their transaction
// still holds them; row-locked in output id order, as a claim writes them and a prune step deletes them), the pending
// outputs CONFIRM_MILESTONE locked ($21), and its notice.
const APPLY_MILESTONE = `
WITH r AS (
  UPDATE chrysalis.messages AS m SET referenced_by = $1, inclusion = r.state, conflict_reason = r.reason,
    milestone_index = CASE WHEN m.id = $2 THEN $1 ELSE m.milestone_index END
  FROM unnest($3::bytea[], $4::smallint[], $5::smallint[]) AS r(id, state, reason) WHERE m.id = r.id
), o AS (
  INSERT INTO chrysalis.outputs (output_id, seq, message_id, type, address, amount, milestone_booked)
  SELECT id, ${BOOKED_SEQ}::bigint + $1::bigint * 2147483648 + ord - 1, message_id, type, address, amount, $1
  FROM unnest($6::bytea[], $7::bytea[], $8::smallint[], $9::bytea[], $10::bigint[]) WITH ORDINALITY AS c(id, message_id, type, address, amount, ord)
), s AS (
  INSERT INTO chrysalis.spent (output_id, transaction_id, message_id, milestone_index)
  SELECT id, transaction_id, message_id, $1 FROM unnest($11::bytea[], $12::bytea[], $13::bytea[]) AS s(id, transaction_id, message_id)
), b AS (
  INSERT INTO chrysalis.balances AS b (address, balance, dust_allowance, dust_outputs)
  SELECT * FROM unnest($14::bytea[], $15::bigint[], $16::bigint[], $17::integer[])
  ON CONFLICT (address) DO UPDATE SET balance = b.balance + excluded.balance, dust_allowance = b.dust_allowance + excluded.dust_allowance,
    dust_outputs = b.dust_outputs + excluded.dust_outputs
), c AS (
  DELETE FROM chrysalis.claims WHERE output_id IN (
    SELECT output_id FROM chrysalis.claims WHERE output_id = ANY($11::bytea[])
      OR (output_id, transaction_id) IN (SELECT * FROM unnest($18::bytea[], $19::bytea[]))
    ORDER BY output_id FOR UPDATE
  )
), p AS (
  DELETE FROM chrysalis.pending_outputs WHERE output_id = ANY($21::bytea[])
)
SELECT pg_notify('${CHANGES_CHANNEL}', $20)`;

/** The database a PostgresStore connects to, its pool and timeouts, and the entry points a new store starts from. */
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
  /** Rows one statement of readSnapshot, stats() and verify() reads at most. Default 10,000 (1000 messages for
   * verify's hashing); tests set it small to check that the pages add up. */
  pageRows?: number;
  /** watch(): the first wait before connecting again when the listening connection is lost, in ms, doubled at each
   * failed try up to 32 times that. Default 200. */
  watchRetryMillis?: number;
  /** watch(): how often the listening connection is asked a trivial query, in ms; one unanswered within as long
   * counts as a lost connection (a connection a NAT or firewall dropped raises no error). Default 15000. */
  watchHeartbeatMillis?: number;
}

const hexBytes = (hex: string, path: string, length: number): Buffer => Buffer.from(fromHex(hex, path, length));
const num = (value: unknown): number => Number(value);

/**
 * The engine for several node instances on one PostgreSQL database (`--database postgres://…`): the database settles
 * what two instances writing at once would race on, and each hears what the others store (LISTEN/NOTIFY). Choose it
 * to run more than one instance on one ledger; a single node is served by LmdbStore with less to operate.
 */
export class PostgresStore implements NodeStore {
  readonly engine = "postgres";
  readonly entryPoints: ReadonlyMap<string, number>;
  /** host:port/database, for messages (never the password). */
  readonly target: string;
  readonly #options: PostgresStoreOptions;
  /** This instance's id in the notices its writes send, so that its own listener drops them (watch). */
  readonly #instance: string;
  readonly #watch: Watch;
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
    this.#instance = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(INSTANCE_ID_LENGTH / 2))).toString("hex");
    this.#watch = new Watch(this.#options, this.#instance);
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
        if (version < AGEING_SCHEMA) await this.#persistEntryPoints(client, [...this.#entryPoints].map(([messageId, index]) => ({ messageId, index })));
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

  async #persistEntryPoints(client: ClientBase, entryPoints: readonly EntryPoint[]): Promise<void> {
    await client.query(
      `INSERT INTO chrysalis.entry_points (message_id, index) SELECT * FROM unnest($1::bytea[], $2::integer[]) ON CONFLICT (message_id) DO NOTHING`,
      [entryPoints.map((e, i) => hexBytes(e.messageId, `entryPoints[${i}].messageId`, 32)), entryPoints.map((e) => e.index)],
    );
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
          // An output of a snapshot written while the ledger moved at acceptance may be unbooked: the snapshot's
          // milestone is the first this ledger knows it by.
          chunk.map((o) => o.milestoneIndexBooked ?? snapshot.milestone?.index ?? 0),
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
    await this.#watch.close();
    await this.#connecting?.catch(() => undefined);
    const groups = [this.#messageWrites, this.#messageReads, this.#metadataReads, this.#redemptions, this.#revocationChecks];
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
        broken = !(error instanceof ProtocolError || error instanceof LockMissed) && !isSqlState(error);
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
    if (error instanceof LockMissed) return new NodeError("STORE_UNAVAILABLE", `the outputs this transaction spends kept moving (${RETRIES} tries); try again later`, { cause: error });
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
    const { claim, milestone } = acceptance;
    if (claim === undefined && milestone === undefined) return { stored: await this.#messageWrites.run({ id, acceptance }) };
    const consumed = claim === undefined ? [] : claim.consumed.map((o, i) => hexBytes(o, `claim.consumed[${i}]`, 34));
    // Its index is the latest milestone's, read with the claim.
    const created = pendingColumns(claim === undefined ? [] : pendingOutputsOf(claim, acceptance.id, 0));
    return this.#transaction(async (client) => {
      if (claim === undefined) {
        const { rows } = await client.query<{ id: Buffer }>({ name: "chrysalis_insert_messages", text: INSERT_MESSAGES, values: this.#messageColumns([{ id, acceptance }]) });
        if (rows.length === 0) return { stored: false };
      } else {
        const index = indexesOf(acceptance.message)[0];
        const { rows } = await client.query<{ seq: string; outputs: Buffer[]; pending: Buffer[] }>({
          name: "chrysalis_insert_claiming_message",
          text: INSERT_CLAIMING_MESSAGE,
          values: [
            id,
            bytesOf(acceptance.bytes),
            index === undefined ? null : Buffer.from(index),
            acceptance.arrivalTime,
            acceptance.coneRoots.oldest,
            acceptance.coneRoots.youngest,
            acceptance.message.parents.map((p) => Buffer.from(p)),
            `${this.#instance}m${toHex(id)}`,
            [...consumed].sort(Buffer.compare),
            [...consumed, ...created.ids].sort(Buffer.compare),
          ],
        });
        if (rows.length === 0) return { stored: false };
        const hex = (ids: readonly Buffer[]): Set<string> => new Set(ids.map((o) => o.toString("hex")));
        await this.#claim(client, claim, consumed, created, id, { outputs: hex(rows[0]!.outputs), pending: hex(rows[0]!.pending) });
      }
      if (milestone !== undefined) await this.#confirm(client, milestone, false);
      return { stored: true };
    });
  }

  /**
   * Messages without a claim or a milestone, written in groups (see Grouped): those that arrive while one group is
   * written go together as the next statement (INSERT_MESSAGES), one commit and one notice for the group, since every
   * notifying commit takes a lock PostgreSQL holds across the whole cluster until it is durable (measured, a NOTIFY per
   * message cut the writes to a third). A lone message goes at once. The first caller of an id listed twice in a group
   * stores it; a deadlock or serialisation failure retries the group whole.
   */
  readonly #messageWrites = new Grouped<MessageWrite, boolean>(async (writes) => {
    const first = new Map<string, MessageWrite>();
    for (const w of writes) {
      const key = w.id.toString("hex");
      if (!first.has(key)) first.set(key, w);
    }
    const group = [...first.values()].sort((x, y) => Buffer.compare(x.id, y.id));
    const stored = new Set<string>();
    for (let at = 0; at < group.length; at += MESSAGES_PER_STATEMENT) {
      const statement = { name: "chrysalis_insert_messages", text: INSERT_MESSAGES, values: this.#messageColumns(group.slice(at, at + MESSAGES_PER_STATEMENT)) };
      for (let attempt = 1; ; attempt++) {
        try {
          for (const r of await this.#query<{ id: Buffer }>(statement, true)) stored.add(r.id.toString("hex"));
          break;
        } catch (error) {
          if (!(attempt < RETRIES && retryable((error as { cause?: unknown }).cause))) throw error;
        }
      }
    }
    return writes.map((w) => ({ status: "fulfilled", value: stored.delete(w.id.toString("hex")) }) as const);
  });

  /** INSERT_MESSAGES' parameters for `group` (sorted by id, each id once). */
  #messageColumns(group: readonly MessageWrite[]): unknown[] {
    const children: Buffer[] = [];
    const parents: Buffer[] = [];
    for (const { id, acceptance } of group) {
      for (const p of acceptance.message.parents) {
        children.push(id);
        parents.push(Buffer.from(p));
      }
    }
    return [
      group.map((w) => w.id),
      group.map((w) => bytesOf(w.acceptance.bytes)),
      group.map((w) => {
        const index = indexesOf(w.acceptance.message)[0];
        return index === undefined ? null : Buffer.from(index);
      }),
      group.map((w) => w.acceptance.arrivalTime),
      group.map((w) => w.acceptance.coneRoots.oldest),
      group.map((w) => w.acceptance.coneRoots.youngest),
      children,
      parents,
      `${this.#instance}m`,
    ];
  }

  /**
   * The claim of a message just inserted, in its transaction: the outputs and pending outputs it spends are locked
   * already (INSERT_CLAIMING_MESSAGE), so this read sees every spend, claim and pending output committed before, and no
   * other claim or confirmation of them can land until this transaction ends. checkClaim decides; a refusal rolls the
   * whole accept back. A row this read finds that the lock statement did not lock appeared after that statement's
   * snapshot (a confirmation moved a pending output, whose lock it waited for, into the ledger; or booked or made one
   * the statement found nowhere): unlocked, a second claim could take it at the same instant, so the transaction is
   * run again (LockMissed), and its locks then cover it.
   */
  async #claim(client: PoolClient, claim: SpendClaim, consumed: readonly Buffer[], created: PendingColumns, messageId: Buffer, locked: Locked): Promise<void> {
    const { rows } = await client.query<ClaimedRow>({ name: "chrysalis_read_claimed", text: READ_CLAIMED, values: [consumed] });
    const outputs: (OutputRecord | undefined)[] = consumed.map(() => undefined);
    const pending: (PendingOutput | undefined)[] = consumed.map(() => undefined);
    const claims: (ClaimRecord | undefined)[] = consumed.map(() => undefined);
    let latest = 0;
    for (const r of rows) {
      const at = num(r.ord) - 1;
      const id = consumed[at]!;
      latest = r.latest;
      if (r.found) {
        if (!locked.outputs.has(id.toString("hex"))) throw new LockMissed();
        outputs[at] = outputRecordOf(id, r);
      } else if (r.pending) {
        if (!locked.pending.has(id.toString("hex"))) throw new LockMissed();
        pending[at] = pendingOutputOf(id, { message_id: r.pending_message!, type: r.pending_type!, address: r.pending_address!, amount: r.pending_amount!, index: r.pending_index! });
      }
      if (r.claim_transaction !== null) claims[at] = { transactionId: toHex(r.claim_transaction), messageId: toHex(r.claim_message!), index: r.claim_index! };
    }
    const claimed = checkClaim(claim, outputs, pending, claims, latest);
    // None to claim: every input is spent by this transaction already, so a milestone booked its outputs too.
    if (claimed.length === 0) return;
    const ids = [...new Set(claimed.map((o) => o.toLowerCase()))].sort().map((o) => Buffer.from(o, "hex"));
    await client.query({
      name: "chrysalis_write_claims",
      text: WRITE_CLAIMS,
      values: [ids, hexBytes(claim.transactionId, "claim.transactionId", 32), messageId, latest, created.ids, created.types, created.addresses, created.amounts],
    });
  }

  confirmMilestone(application: MilestoneApplication): Promise<void> {
    try {
      this.#poolOrThrow();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#transaction((client) => this.#confirm(client, application, true));
  }

  /**
   * Applies a milestone in the caller's transaction (CONFIRM_MILESTONE, then APPLY_MILESTONE): refused, and then
   * rolled back whole, with MILESTONE_CONFLICT unless it is the next index, STORE_CORRUPT when it spends an output the
   * ledger does not hold unspent (one it creates itself aside), and INVALID_ARGUMENT when `stored` is asked and its
   * message is not stored (the same order as the memory engine's).
   */
  async #confirm(client: PoolClient, milestone: MilestoneApplication, stored: boolean): Promise<void> {
    const messageId = hexBytes(milestone.messageId, "milestone.messageId", 32);
    const createdIds = milestone.created.map((o, i) => hexBytes(o.outputId, `milestone.created[${i}].outputId`, 34));
    const consumedIds = milestone.consumed.map((o, i) => hexBytes(o.outputId, `milestone.consumed[${i}].outputId`, 34));
    const created = new Set(createdIds.map((o) => o.toString("hex")));
    const ledgerSpends = consumedIds.filter((o) => !created.has(o.toString("hex")));
    // The pending outputs it books and those of the transactions it found conflicting go.
    const dropped = [...new Set([...createdIds.map((o) => o.toString("hex")), ...milestone.discarded.map((o, i) => hexBytes(o, `milestone.discarded[${i}]`, 34).toString("hex"))])]
      .sort()
      .map((o) => Buffer.from(o, "hex"));
    const { rows } = await client.query<{ index: number | null; stored: boolean; found: Buffer[]; spent: Buffer[] }>({
      name: "chrysalis_confirm_milestone",
      text: CONFIRM_MILESTONE,
      values: [milestone.index, messageId, milestone.timestamp, createdIds, consumedIds, [...ledgerSpends].sort(Buffer.compare), dropped],
    });
    const r = rows[0]!;
    if (r.index === null) {
      const latest = await client.query<{ index: number | null }>("SELECT max(index) AS index FROM chrysalis.milestones");
      throw new NodeError("MILESTONE_CONFLICT", `milestone ${milestone.index} is not the next one (${(latest.rows[0]?.index ?? 0) + 1})`);
    }
    const found = new Set(r.found.map((o) => o.toString("hex")));
    const spent = new Set(r.spent.map((o) => o.toString("hex")));
    for (const o of ledgerSpends) {
      const hex = o.toString("hex");
      if (!found.has(hex) || spent.has(hex)) {
        throw new NodeError("STORE_CORRUPT", `milestone ${milestone.index} spends output ${hex}, which the ledger ${found.has(hex) ? "has spent" : "does not hold"}`);
      }
    }
    if (stored && !r.stored) throw new ProtocolError("INVALID_ARGUMENT", `the message of milestone ${milestone.index} is not stored`, { path: "messageId" });

    // Each referenced message once, with the state of its last mention.
    const referenced = new Map<string, (typeof milestone.referenced)[number]>();
    for (const ref of milestone.referenced) {
      const key = ref.messageId.toLowerCase();
      referenced.delete(key);
      referenced.set(key, ref);
    }
    const refs = [...referenced.values()];
    // Outputs the milestone creates and spends itself leave out (milestoneDeltas): summed link by link, a chain of spends
    // of a large output passes 2^53.
    const deltas = [...milestoneDeltas(milestone.created, milestone.consumed).values()].sort((a, b) =>
      Buffer.compare(Buffer.from(a.address), Buffer.from(b.address)),
    );
    await client.query({
      name: "chrysalis_apply_milestone",
      text: APPLY_MILESTONE,
      values: [
        milestone.index,
        messageId,
        refs.map((ref, i) => hexBytes(ref.messageId, `milestone.referenced[${i}].messageId`, 32)),
        refs.map((ref) => INCLUSION.indexOf(ref.ledgerInclusionState) + 1),
        refs.map((ref) => ref.conflictReason ?? null),
        createdIds,
        milestone.created.map((o, i) => hexBytes(o.messageId, `milestone.created[${i}].messageId`, 32)),
        milestone.created.map((o) => o.output.type),
        milestone.created.map((o) => Buffer.from(o.output.address.address)),
        milestone.created.map((o) => o.output.amount),
        consumedIds,
        milestone.consumed.map((o, i) => hexBytes(o.transactionId, `milestone.consumed[${i}].transactionId`, 32)),
        milestone.consumed.map((o, i) => hexBytes(o.messageId, `milestone.consumed[${i}].messageId`, 32)),
        ...balanceColumns(deltas),
        milestone.released.map((o, i) => hexBytes(o.outputId, `milestone.released[${i}].outputId`, 34)),
        milestone.released.map((o, i) => hexBytes(o.transactionId, `milestone.released[${i}].transactionId`, 32)),
        `${this.#instance}s${milestone.index}`,
        dropped,
      ],
    });
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
    // Each caller its own part of the list, and one record of the latest milestone for all (read only, MilestoneRecord):
    // a record each cost the node some 0.3 µs a caller (its message id's hex), about 5% of a 200-caller group's CPU.
    const record = latest === undefined ? undefined : milestoneOf(latest);
    let at = 0;
    return lists.map((list) => ({ status: "fulfilled", value: { metadata: metadata.slice(at, (at += list.length)), latest: record } }) as const);
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

  async unreferenced(max: number): Promise<string[]> {
    if (!(max > 0)) return [];
    const rows = await this.#query<{ id: Buffer }>({
      name: "chrysalis_unreferenced",
      text: "SELECT id FROM (SELECT id, seq FROM chrysalis.messages WHERE referenced_by IS NULL ORDER BY seq DESC LIMIT $1) AS newest ORDER BY seq",
      values: [Math.min(0x7fffffff, Math.floor(max))],
    });
    return rows.map((r) => toHex(r.id));
  }

  async claim(outputId: string): Promise<ClaimRecord | undefined> {
    const rows = await this.#query<{ transaction_id: Buffer; message_id: Buffer; index: number }>({
      name: "chrysalis_claim",
      text: "SELECT transaction_id, message_id, index FROM chrysalis.claims WHERE output_id = $1",
      values: [hexBytes(outputId, "outputId", 34)],
    });
    const r = rows[0];
    return r === undefined ? undefined : { transactionId: toHex(r.transaction_id), messageId: toHex(r.message_id), index: r.index };
  }

  async pendingOutput(outputId: string): Promise<PendingOutput | undefined> {
    const id = hexBytes(outputId, "outputId", 34);
    const rows = await this.#query<PendingOutputRow>({
      name: "chrysalis_pending_output",
      text: "SELECT message_id, type, address, amount, index FROM chrysalis.pending_outputs WHERE output_id = $1",
      values: [id],
    });
    return rows[0] === undefined ? undefined : pendingOutputOf(id, rows[0]);
  }

  /** What other instances on this database store and confirm, from the notices their writes send (see Watch). */
  watch(listener: (change: StoreChange) => void): () => void {
    if (this.#closed) throw storeClosed();
    return this.#watch.add(listener);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The UTXO ledger

  async output(outputId: string): Promise<OutputRecord | undefined> {
    const id = hexBytes(outputId, "outputId", 34);
    const rows = await this.#query<OutputRecordRow>({
      name: "chrysalis_output",
      text: `SELECT o.message_id, o.type, o.address, o.amount, o.milestone_booked,
               s.transaction_id AS spent_transaction, s.message_id AS spent_message, s.milestone_index AS spent_milestone
             FROM chrysalis.outputs o LEFT JOIN chrysalis.spent s ON s.output_id = o.output_id WHERE o.output_id = $1`,
      values: [id],
    });
    return rows[0] === undefined ? undefined : outputRecordOf(id, rows[0]);
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
      const left = (await client.query<{ entries: number; remaining: boolean }>({ name: "chrysalis_prune_lapsed", text: PRUNE_LAPSED, values: [m, limit - ids.length] })).rows[0]!;
      // A step that deleted claims or pending outputs ends there: the milestone is finished by a step of its own, so
      // that no step locks outputs (finishing) after pending outputs and claims, the other way round from a claim.
      const step = { pruningIndex: pruned, messages: ids.length, ...(left.entries > 0 ? { entries: left.entries } : {}), done: false };
      if (left.entries > 0 || left.remaining) return step;
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
      // The store's own entry points still within reach, then every message the last BELOW_MAX_DEPTH milestones
      // referenced (their own messages among them), as the memory engine lists them.
      const entryPoints = new Map<string, number>();
      for (const [id, index] of this.#entryPoints) if (latestIndex - index < BELOW_MAX_DEPTH) entryPoints.set(id, index);
      if (milestone !== undefined) {
        entryPoints.set(milestone.messageId, milestone.index);
        // The keys that signed the latest milestone; a store made from a snapshot has not stored that message.
        const stored = (await client.query<{ bytes: Buffer }>("SELECT bytes FROM chrysalis.messages WHERE id = $1", [latestRow!.message_id])).rows[0];
        if (stored !== undefined) {
          const payload = decodeMessage(new Uint8Array(stored.bytes.buffer, stored.bytes.byteOffset, stored.bytes.byteLength)).payload;
          if (payload?.type === 1) keys = payload.publicKeys.map((k) => toHex(k)).sort();
        }
        const recent = await client.query<{ id: Buffer; referenced_by: number }>(
          "SELECT id, referenced_by FROM chrysalis.messages WHERE referenced_by > $1 ORDER BY referenced_by, seq",
          [latestIndex - BELOW_MAX_DEPTH],
        );
        for (const r of recent.rows) entryPoints.set(toHex(r.id), r.referenced_by);
      }
      const outputs: SnapshotOutput[] = [];
      const page = this.#pageRows(TABLE_PAGE);
      // Pages in output id order (the primary key), all inside this one snapshot of the database.
      for (let after: Buffer = Buffer.alloc(0); ; ) {
        const rows = (
          await client.query<OutputRow & { output_id: Buffer; message_id: Buffer; milestone_booked: number | null }>(
            `SELECT o.output_id, o.message_id, o.milestone_booked, o.type, o.address, o.amount FROM chrysalis.outputs o
             WHERE o.output_id > $1 AND NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)
             ORDER BY o.output_id LIMIT $2`,
            [after, page],
          )
        ).rows;
        for (const r of rows) {
          outputs.push({ outputId: toHex(r.output_id), messageId: toHex(r.message_id), ...(r.milestone_booked !== null ? { milestoneIndexBooked: r.milestone_booked } : {}), output: outputOf(r) });
        }
        if (rows.length < page) break;
        after = rows[rows.length - 1]!.output_id;
      }
      return {
        network: meta.get("network") ?? "",
        ledger: meta.get("ledger") === "1",
        ...(milestone !== undefined ? { milestone } : {}),
        coordinatorPublicKeys: keys,
        entryPoints: [...entryPoints].map(([messageId, index]): EntryPoint => ({ messageId, index })).sort((x, y) => (x.messageId < y.messageId ? -1 : 1)),
        outputs,
      };
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  /** Rows a page of readSnapshot, stats() or verify() holds: `fallback`, unless the store was made with pageRows. */
  #pageRows(fallback: number): number {
    const rows = this.#options.pageRows;
    return rows !== undefined && Number.isInteger(rows) && rows > 0 ? rows : fallback;
  }

  /** The counts in pages (see TABLE_PAGE), all from one snapshot of the database. */
  async stats(): Promise<StoreStats> {
    this.#poolOrThrow();
    return this.#transaction(async (client) => {
      const head = (
        await client.query<{ network: string | null; latest: number; pruning: string | null; bytes: string }>(
          `SELECT (SELECT value FROM chrysalis.meta WHERE key = 'network') AS network, (SELECT coalesce(max(index), 0) FROM chrysalis.milestones) AS latest,
             (SELECT value FROM chrysalis.meta WHERE key = 'pruning_index') AS pruning, (${SCHEMA_BYTES}) AS bytes`,
        )
      ).rows[0]!;
      const page = this.#pageRows(TABLE_PAGE);
      let messages = 0;
      for (let after = "-1"; ; ) {
        const r = (
          await client.query<{ n: number; last: string | null }>(
            "SELECT count(*)::integer AS n, max(seq) AS last FROM (SELECT seq FROM chrysalis.messages WHERE seq > $1 ORDER BY seq LIMIT $2) AS p",
            [after, page],
          )
        ).rows[0]!;
        messages += r.n;
        if (r.n < page || r.last === null) break;
        after = r.last;
      }
      let unspent = 0;
      for (let after: Buffer = Buffer.alloc(0); ; ) {
        const r = (
          await client.query<{ n: number; unspent: number; last: Buffer | null }>(
            `WITH p AS MATERIALIZED (SELECT output_id FROM chrysalis.outputs WHERE output_id > $1 ORDER BY output_id LIMIT $2)
             SELECT count(*)::integer AS n, (count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = p.output_id)))::integer AS unspent,
               (SELECT output_id FROM p ORDER BY output_id DESC LIMIT 1) AS last
             FROM p`,
            [after, page],
          )
        ).rows[0]!;
        unspent += r.unspent;
        if (r.n < page || r.last === null) break;
        after = r.last;
      }
      const bytes = num(head.bytes);
      return {
        engine: this.engine,
        network: head.network ?? "",
        messages,
        unspentOutputs: unspent,
        latestMilestoneIndex: head.latest,
        pruningIndex: num(head.pruning ?? 0),
        bytes,
        fileBytes: bytes,
      };
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
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
   * The checks, in order, each answering its first finding, each a walk over one table in pages of its primary key (no
   * statement reads a whole table, so each finishes within the query timeout on a store of any size), all inside the
   * caller's one snapshot. Index entries, address lists and the unreferenced messages are indexes of the messages and
   * outputs tables here, kept by the database itself; what is checked is what a row can get wrong. A store of an older
   * schema (openExisting) is checked by its own rules: before migration 3 its ledger moved at acceptance.
   */
  async #verify(client: PoolClient): Promise<string | undefined> {
    const meta = new Map((await client.query<{ key: string; value: string }>("SELECT key, value FROM chrysalis.meta")).rows.map((r) => [r.key, r.value]));
    const pruned = num(meta.get("pruning_index") ?? 0);
    const claims = this.#schemaVersion >= CLAIMS_SCHEMA;
    const page = this.#pageRows(TABLE_PAGE);
    return (
      (await this.#verifyMessages(client, pruned)) ??
      (await this.#verifyChildren(client, page)) ??
      (await this.#verifyMilestones(client, pruned, page)) ??
      (await this.#verifySpent(client, claims, page)) ??
      (await this.#verifyLedger(client, claims, meta.get("ledger") === "1", page))
    );
  }

  /** Every message hashes to its id and decodes, its index key is its indexation payload's, and its metadata is whole:
   * referenced with an inclusion state (and by a milestone above the pruning index), a milestone's own index its
   * referencing one, a conflict reason only when conflicting. */
  async #verifyMessages(client: PoolClient, pruned: number): Promise<string | undefined> {
    const page = this.#pageRows(VERIFY_PAGE);
    for (let after = "-1"; ; ) {
      const rows = (
        await client.query<{ id: Buffer; seq: string; bytes: Buffer; index_key: Buffer | null; referenced_by: number | null; milestone_index: number | null; inclusion: number | null; conflict_reason: number | null }>(
          `SELECT id, seq, bytes, index_key, referenced_by, milestone_index, inclusion, conflict_reason FROM chrysalis.messages
           WHERE seq > $1 ORDER BY seq LIMIT $2`,
          [after, page],
        )
      ).rows;
      for (const r of rows) {
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
        if (r.referenced_by !== null && r.referenced_by <= pruned) {
          return `message ${id}: referenced by milestone ${r.referenced_by}, at or below the pruning index ${pruned}, yet still stored`;
        }
        const whole =
          (r.referenced_by === null) === (r.inclusion === null) &&
          (r.inclusion === null || (r.inclusion >= 1 && r.inclusion <= INCLUSION.length)) &&
          (r.milestone_index === null || r.milestone_index === r.referenced_by) &&
          (r.conflict_reason === null || r.inclusion === 3);
        if (!whole) {
          return `message ${id}: inconsistent metadata (referenced by ${r.referenced_by ?? "none"}, milestone ${r.milestone_index ?? "none"}, inclusion ${r.inclusion ?? "none"}, conflict reason ${r.conflict_reason ?? "none"})`;
        }
      }
      if (rows.length < page) return undefined;
      after = rows[rows.length - 1]!.seq;
    }
  }

  /** Every children entry names a stored message, at that message's seq, that names the entry's parent as a parent
   * (among the parents at the head of its bytes: network id u64, count u8, 32 bytes each). A page answers its entries
   * that fail and its last one only. */
  async #verifyChildren(client: PoolClient, page: number): Promise<string | undefined> {
    for (let after: [Buffer, string, Buffer] = [Buffer.alloc(0), "-1", Buffer.alloc(0)]; ; ) {
      const rows = (
        await client.query<{ parent: Buffer; seq: string; child: Buffer; own: string | null; names: boolean | null; last: boolean; entries: number }>(
          `WITH c AS MATERIALIZED (
             SELECT parent, seq, child, row_number() OVER (ORDER BY parent, seq, child) AS k FROM chrysalis.children
             WHERE (parent, seq, child) > ($1, $2, $3) ORDER BY parent, seq, child LIMIT $4
           ), v AS (
             SELECT c.parent, c.seq, c.child, c.k, m.seq AS own,
               EXISTS (SELECT 1 FROM generate_series(0, get_byte(m.bytes, 8) - 1) AS p WHERE substring(m.bytes FROM 10 + 32 * p FOR 32) = c.parent) AS names
             FROM c LEFT JOIN chrysalis.messages m ON m.id = c.child
           )
           SELECT parent, seq, child, own, names, k = (SELECT count(*) FROM c) AS last, (SELECT count(*) FROM c)::integer AS entries FROM v
           WHERE own IS NULL OR own <> seq OR NOT names OR k = (SELECT count(*) FROM c) ORDER BY k`,
          [...after, page],
        )
      ).rows;
      for (const r of rows) {
        const entry = `children entry of ${toHex(r.parent)}: its child ${toHex(r.child)}`;
        if (r.own === null) return `${entry} is not a stored message`;
        if (r.own !== r.seq) return `${entry} has seq ${r.own}, the entry ${r.seq}`;
        if (r.names !== true) return `${entry} does not name it as a parent`;
      }
      const last = rows.at(-1);
      if (last === undefined || last.entries < page) return undefined;
      after = [last.parent, last.seq, last.child];
    }
  }

  /** No milestone at or below the pruning index is left, and each one's message is stored but at pruning index + 1 (a
   * snapshot's milestone, or one being pruned). */
  async #verifyMilestones(client: PoolClient, pruned: number, page: number): Promise<string | undefined> {
    for (let after = -1; ; ) {
      const rows = (
        await client.query<{ index: number; message_id: Buffer; stored: boolean }>(
          `SELECT ms.index, ms.message_id, EXISTS (SELECT 1 FROM chrysalis.messages m WHERE m.id = ms.message_id) AS stored
           FROM (SELECT index, message_id FROM chrysalis.milestones WHERE index > $1 ORDER BY index LIMIT $2) AS ms ORDER BY ms.index`,
          [after, page],
        )
      ).rows;
      for (const r of rows) {
        if (r.index <= pruned) return `milestone ${r.index}: at or below the pruning index ${pruned}, yet still stored`;
        if (r.index > pruned + 1 && !r.stored) return `milestone ${r.index}: its message ${toHex(r.message_id)} is not stored`;
      }
      if (rows.length < page) return undefined;
      after = rows[rows.length - 1]!.index;
    }
  }

  /** Every spend is of a stored output and, on a store whose ledger moves at confirmation, confirmed by a milestone. */
  async #verifySpent(client: PoolClient, confirmed: boolean, page: number): Promise<string | undefined> {
    for (let after: Buffer = Buffer.alloc(0); ; ) {
      const rows = (
        await client.query<{ output_id: Buffer; milestone_index: number | null; stored: boolean }>(
          `SELECT s.output_id, s.milestone_index, EXISTS (SELECT 1 FROM chrysalis.outputs o WHERE o.output_id = s.output_id) AS stored
           FROM (SELECT output_id, milestone_index FROM chrysalis.spent WHERE output_id > $1 ORDER BY output_id LIMIT $2) AS s ORDER BY s.output_id`,
          [after, page],
        )
      ).rows;
      for (const r of rows) {
        if (!r.stored) return `spent record of output ${toHex(r.output_id)}: no such output`;
        if (confirmed && r.milestone_index === null) return `spent record of output ${toHex(r.output_id)}: confirmed by no milestone`;
      }
      if (rows.length < page) return undefined;
      after = rows[rows.length - 1]!.output_id;
    }
  }

  /**
   * The ledger: every output booked by a milestone (on a store whose ledger moves at confirmation), each unspent one's
   * address with a balance; no claim on a spent output, and no pending output booked; every
   * balance equal to its address's unspent outputs (an address whose outputs are all spent keeps a row of zeros); on a
   * ledger store the unspent outputs sum to the total supply.
   */
  async #verifyLedger(client: PoolClient, claims: boolean, ledger: boolean, page: number): Promise<string | undefined> {
    let supply = 0n;
    for (let after: Buffer = Buffer.alloc(0); ; ) {
      const rows = (
        await client.query<{ output_id: Buffer; address: Buffer; amount: string; milestone_booked: number | null; spent: boolean; balanced: boolean }>(
          `SELECT o.output_id, o.address, o.amount, o.milestone_booked,
             EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id) AS spent,
             EXISTS (SELECT 1 FROM chrysalis.balances b WHERE b.address = o.address) AS balanced
           FROM (SELECT output_id, address, amount, milestone_booked FROM chrysalis.outputs WHERE output_id > $1 ORDER BY output_id LIMIT $2) AS o
           ORDER BY o.output_id`,
          [after, page],
        )
      ).rows;
      for (const r of rows) {
        if (claims && r.milestone_booked === null) return `output ${toHex(r.output_id)}: booked by no milestone`;
        if (r.spent) continue;
        if (!r.balanced) return `balance of address ${toHex(r.address)}: none stored, yet it holds the unspent output ${toHex(r.output_id)}`;
        supply += BigInt(r.amount);
      }
      if (rows.length < page) break;
      after = rows[rows.length - 1]!.output_id;
    }
    if (claims) {
      for (let after: Buffer = Buffer.alloc(0); ; ) {
        const rows = (
          await client.query<{ output_id: Buffer; held: boolean }>(
            `SELECT c.output_id,
               NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = c.output_id) AS held
             FROM (SELECT output_id FROM chrysalis.claims WHERE output_id > $1 ORDER BY output_id LIMIT $2) AS c ORDER BY c.output_id`,
            [after, page],
          )
        ).rows;
        const stray = rows.find((r) => !r.held);
        if (stray !== undefined) return `claim on output ${toHex(stray.output_id)}: the output is spent`;
        if (rows.length < page) break;
        after = rows[rows.length - 1]!.output_id;
      }
      for (let after: Buffer = Buffer.alloc(0); ; ) {
        const rows = (
          await client.query<{ output_id: Buffer; booked: boolean }>(
            `SELECT p.output_id, EXISTS (SELECT 1 FROM chrysalis.outputs o WHERE o.output_id = p.output_id) AS booked
             FROM (SELECT output_id FROM chrysalis.pending_outputs WHERE output_id > $1 ORDER BY output_id LIMIT $2) AS p ORDER BY p.output_id`,
            [after, page],
          )
        ).rows;
        const booked = rows.find((r) => r.booked);
        if (booked !== undefined) return `pending output ${toHex(booked.output_id)}: booked already`;
        if (rows.length < page) break;
        after = rows[rows.length - 1]!.output_id;
      }
    }
    // A page of balances (by address) against the unspent outputs of those addresses (by the address index).
    for (let after: Buffer = Buffer.alloc(0); ; ) {
      const rows = (
        await client.query<{ address: Buffer; balance: string; dust_allowance: string; dust_outputs: number; sum: string; allowance: string; dust: string }>(
          `WITH a AS MATERIALIZED (SELECT address, balance, dust_allowance, dust_outputs FROM chrysalis.balances WHERE address > $1 ORDER BY address LIMIT $2),
           u AS (
             SELECT o.address, sum(o.amount) AS sum, coalesce(sum(o.amount) FILTER (WHERE o.type = 1), 0) AS allowance,
               count(*) FILTER (WHERE o.type = 0 AND o.amount < $3) AS dust
             FROM chrysalis.outputs o WHERE o.address IN (SELECT address FROM a)
               AND NOT EXISTS (SELECT 1 FROM chrysalis.spent s WHERE s.output_id = o.output_id)
             GROUP BY o.address
           )
           SELECT a.address, a.balance, a.dust_allowance, a.dust_outputs, coalesce(u.sum, 0) AS sum, coalesce(u.allowance, 0) AS allowance, coalesce(u.dust, 0) AS dust
           FROM a LEFT JOIN u ON u.address = a.address ORDER BY a.address`,
          [after, page, DUST_THRESHOLD],
        )
      ).rows;
      for (const r of rows) {
        if (r.balance !== r.sum || r.dust_allowance !== r.allowance || String(r.dust_outputs) !== r.dust) {
          return (
            `balance of address ${toHex(r.address)}: stored ${r.balance} (dust allowance ${r.dust_allowance}, dust outputs ${r.dust_outputs}), ` +
            `its unspent outputs give ${r.sum} (dust allowance ${r.allowance}, dust outputs ${r.dust})`
          );
        }
      }
      if (rows.length < page) break;
      after = rows[rows.length - 1]!.address;
    }
    if (ledger && supply !== BigInt(TOTAL_SUPPLY)) return `ledger: the unspent outputs sum to ${supply}, not the total supply ${TOTAL_SUPPLY}`;
    return undefined;
  }
}

/**
 * The listening side of watch(): one connection of its own per instance (a LISTEN lasts as long as its session, so not
 * a pooled one), opened with the first listener and closed after the last, and opened again when lost, after 1, 2, 4 …
 * up to 32 times watchRetryMillis; a heartbeat query (watchHeartbeatMillis) tells a connection dropped in silence from
 * a quiet one. Notices are sent by the writes themselves (INSERT_MESSAGES, INSERT_CLAIMING_MESSAGE, APPLY_MILESTONE)
 * and delivered when they commit; this instance's own are dropped. What others write while the connection is down is
 * not reported: once it listens (at first, and again after each reconnect) it reports the latest milestone, read after
 * LISTEN took effect, as a change, so that a listener reads the store again from there (nothing written before that
 * read is missing from the store, nothing after it from the notices). A listener added while the connection is up is
 * called from the next change on.
 */
class Watch {
  readonly #options: PostgresStoreOptions;
  readonly #instance: string;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  #client: import("pg").Client | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #failures = 0;
  /** Bumped whenever listening starts or stops, so that a connection attempt of an earlier round knows it is stale. */
  #round = 0;
  #listening = false;

  constructor(options: PostgresStoreOptions, instance: string) {
    this.#options = options;
    this.#instance = instance;
  }

  add(listener: (change: StoreChange) => void): () => void {
    const own = (change: StoreChange): void => listener(change);
    this.#listeners.add(own);
    if (!this.#listening) {
      this.#listening = true;
      void this.#connect(++this.#round);
    }
    return () => {
      if (this.#listeners.delete(own) && this.#listeners.size === 0) void this.close();
    };
  }

  /** Stops listening: no listener is called from now on. */
  async close(): Promise<void> {
    this.#listeners.clear();
    if (!this.#listening) return;
    this.#listening = false;
    this.#round++;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(round: number): Promise<void> {
    this.#timer = undefined;
    let client: import("pg").Client | undefined;
    let latest: number;
    try {
      const pg = (await import("pg")).default;
      if (round !== this.#round) return;
      client = new pg.Client({
        connectionString: this.#options.connectionString,
        connectionTimeoutMillis: this.#options.connectionTimeoutMillis ?? 5000,
        keepAlive: true,
        application_name: "chrysalis-watch",
      });
      const self = client;
      client.on("error", () => this.#lost(self, round));
      client.on("end", () => this.#lost(self, round));
      client.on("notification", (notice) => this.#notified(notice.channel, notice.payload));
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      // A database without a store yet has no milestones table: nothing was confirmed.
      latest = await client.query<{ index: number }>("SELECT coalesce(max(index), 0) AS index FROM chrysalis.milestones").then(
        (result) => result.rows[0]?.index ?? 0,
        (error: unknown) => (sqlState(error) === "42P01" || sqlState(error) === "3F000" ? 0 : Promise.reject(error)),
      );
    } catch {
      await client?.end().catch(() => undefined);
      if (round === this.#round) this.#retry(round);
      return;
    }
    if (round !== this.#round) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#failures = 0;
    // A connection that answers no query is lost even if its socket says nothing; ending it with the query still
    // waiting destroys the socket (node-postgres), rather than waiting for a goodbye that never comes.
    const beat = this.#options.watchHeartbeatMillis ?? 15_000;
    const listening = client;
    this.#heartbeat = setInterval(() => {
      listening.query({ text: "SELECT 1", query_timeout: beat } as import("pg").QueryConfig).catch(() => this.#lost(listening, round));
    }, beat);
    this.#heartbeat.unref?.();
    this.#emit({ type: "milestone", index: latest });
  }

  /** The listening connection failed or ended: connect again (unless listening stopped meanwhile). */
  #lost(client: import("pg").Client, round: number): void {
    if (client !== this.#client || round !== this.#round) return;
    this.#client = undefined;
    clearInterval(this.#heartbeat);
    void client.end().catch(() => undefined);
    this.#retry(round);
  }

  #retry(round: number): void {
    const delay = (this.#options.watchRetryMillis ?? 200) * 2 ** Math.min(this.#failures++, 5);
    this.#timer = setTimeout(() => void this.#connect(round), delay);
    // A node that forgets to close its store still exits.
    this.#timer.unref?.();
  }

  /** One notice: `instance` `m` ids (64 hex characters each) or `instance` `s` index; others' and well formed only. */
  #notified(channel: string, payload: string | undefined): void {
    if (channel !== CHANGES_CHANNEL || payload === undefined || payload.length <= INSTANCE_ID_LENGTH || payload.startsWith(this.#instance)) return;
    const kind = payload[INSTANCE_ID_LENGTH];
    const data = payload.slice(INSTANCE_ID_LENGTH + 1);
    if (kind === "m" && data.length % 64 === 0 && /^[0-9a-f]+$/.test(data)) {
      for (let at = 0; at < data.length; at += 64) this.#emit({ type: "message", id: data.slice(at, at + 64) });
    } else if (kind === "s" && /^[0-9]{1,10}$/.test(data)) {
      this.#emit({ type: "milestone", index: Number(data) });
    }
  }

  /** Each listener in turn; one that throws neither stops the others nor the connection. */
  #emit(change: StoreChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch {
        // The listener's own failure, for it to handle.
      }
    }
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

// The deleted messages' children entries as parents (a range of the primary key) and as children (exact keys).
const PRUNE_ENTRIES = `
WITH p AS (
  DELETE FROM chrysalis.children WHERE parent = ANY($1::bytea[])
)
DELETE FROM chrysalis.children AS c USING unnest($2::bytea[], $3::bigint[], $4::bytea[]) AS k(parent, seq, child)
WHERE c.parent = k.parent AND c.seq = k.seq AND c.child = k.child`;

// The claims and pending outputs made at milestone $1 or before (lapsed for good: $1 is at least MIN_PRUNE_KEEP below
// the latest), at most $2 in all, found by their index on `index`: the pending outputs first, then the claims, each
// row-locked in output id order before it goes, as claims and confirmations lock them, and its index checked again
// once locked (a reattachment that made it again meanwhile keeps it). Then whether milestone $1 still has messages to
// prune (this transaction's deletes included). (Exported for the test that reads its plan.)
export const PRUNE_LAPSED = `
WITH p AS (
  SELECT output_id FROM chrysalis.pending_outputs
  WHERE index <= $1 AND output_id IN (SELECT output_id FROM chrysalis.pending_outputs WHERE index <= $1 LIMIT $2)
  ORDER BY output_id FOR UPDATE
), dp AS (
  DELETE FROM chrysalis.pending_outputs WHERE output_id IN (SELECT output_id FROM p) RETURNING 1
), c AS (
  SELECT output_id FROM chrysalis.claims
  WHERE index <= $1 AND output_id IN (SELECT output_id FROM chrysalis.claims WHERE index <= $1 LIMIT $2::integer - (SELECT count(*) FROM dp))
  ORDER BY output_id FOR UPDATE
), dc AS (
  DELETE FROM chrysalis.claims WHERE output_id IN (SELECT output_id FROM c) RETURNING 1
)
SELECT ((SELECT count(*) FROM dp) + (SELECT count(*) FROM dc))::integer AS entries,
  EXISTS (SELECT 1 FROM chrysalis.messages WHERE referenced_by = $1)
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
  type: number;
  address: Buffer;
  amount: string;
}

/** An output's row with its spend, as output() and a claim's read have it. */
interface OutputRecordRow extends OutputRow {
  message_id: Buffer;
  milestone_booked: number | null;
  spent_transaction: Buffer | null;
  spent_message: Buffer | null;
  spent_milestone: number | null;
}

/** A message to store with no claim or milestone, as #messageWrites holds it. */
interface MessageWrite {
  readonly id: Buffer;
  readonly acceptance: Acceptance;
}

/** A pending output's row, as pendingOutput() and a claim's read have it. */
interface PendingOutputRow extends OutputRow {
  message_id: Buffer;
  index: number;
}

/** The pending outputs a claim's transaction creates, as WRITE_CLAIMS takes them (sorted by output id). */
interface PendingColumns {
  readonly ids: Buffer[];
  readonly types: number[];
  readonly addresses: Buffer[];
  readonly amounts: number[];
}

/** The output ids (hex) INSERT_CLAIMING_MESSAGE locked, of the ledger's outputs and of the pending outputs. */
interface Locked {
  readonly outputs: ReadonlySet<string>;
  readonly pending: ReadonlySet<string>;
}

interface ClaimedRow extends OutputRecordRow {
  ord: string;
  found: boolean;
  pending: boolean;
  pending_message: Buffer | null;
  pending_type: number | null;
  pending_address: Buffer | null;
  pending_amount: string | null;
  pending_index: number | null;
  claim_transaction: Buffer | null;
  claim_message: Buffer | null;
  claim_index: number | null;
  latest: number;
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
 * The parent ids of a message from its canonical bytes (network id u64 ‖ parents count u8 ‖ 32 bytes each, `PROTOCOL.md`),
 * without decoding the rest: pruning needs only them to find the message's own child entries. Bounded by the bytes,
 * so damaged bytes give fewer parents rather than an exception.
 */
function parentIdsOf(bytes: Buffer): Buffer[] {
  const count = bytes.length > 8 ? bytes[8]! : 0;
  const parents: Buffer[] = [];
  for (let i = 0; i < count && 9 + 32 * (i + 1) <= bytes.length; i++) parents.push(bytes.subarray(9 + 32 * i, 9 + 32 * (i + 1)));
  return parents;
}

/** A message's bytes as node-postgres sends them, without a copy. */
function bytesOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function outputRecordOf(id: Buffer, r: OutputRecordRow): OutputRecord {
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

function pendingOutputOf(id: Buffer, r: PendingOutputRow): PendingOutput {
  return { outputId: toHex(id), transactionId: toHex(id.subarray(0, 32)), messageId: toHex(r.message_id), output: outputOf(r), index: r.index };
}

/** WRITE_CLAIMS' columns of `outputs` (pendingOutputsOf: their ids and contents), sorted by output id. */
function pendingColumns(outputs: readonly PendingOutput[]): PendingColumns {
  const rows = outputs.map((p) => ({ id: Buffer.from(p.outputId, "hex"), output: p.output })).sort((x, y) => Buffer.compare(x.id, y.id));
  return {
    ids: rows.map((r) => r.id),
    types: rows.map((r) => r.output.type),
    addresses: rows.map((r) => Buffer.from(r.output.address.address)),
    amounts: rows.map((r) => r.output.amount),
  };
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

/** A claim's read found a row its locks do not cover (see #claim): the transaction is rolled back and run again. */
class LockMissed extends Error {
  constructor() {
    super("a claimed output moved while its lock was awaited");
  }
}

/** A deadlock or serialisation failure (the database aborted the transaction whole) or a claim's LockMissed: running
 * it again is safe. */
function retryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40001" || code === "40P01" || error instanceof LockMissed;
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
