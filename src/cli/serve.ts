// `chrysalis serve`: a node over HTTP (node API v1 + prove-ownership), with optional genesis ledger and upstream.
import { parseArgs } from "node:util";
import { readFile } from "node:fs/promises";
import { TOTAL_SUPPLY } from "../bytes/limits.js";
import { parseBech32Address } from "../crypto/index.js";
import { outputId } from "../model/ids.js";
import { LmdbStore, MemoryLedger, MemoryStore, PostgresStore, UpstreamStore, isDatabaseUrl, type NodeOptions, type NodeStore } from "../node/index.js";
import type { Command } from "./commands.js";
import { UsageError, write } from "./io.js";
import { loadCoordinatorKeys, loadIdentityRegistry, startNode, type SetupOptions } from "./setup.js";

export const GENESIS_TRANSACTION_ID = "0".repeat(64);

const DEFAULT_DATA_DIR = "./chrysalis-data";
const SWEEP_INTERVAL_MS = 10 * 60_000;

interface StorageChoice {
  store: NodeStore;
  /** For the start-up line: the engine and where its data is (never a password). */
  description: string;
}

/**
 * The store the storage options name: --in-memory, --database (or CHRYSALIS_DATABASE_URL), else --data-dir (default
 * ./chrysalis-data). Naming two is a usage error; so is naming one with --upstream, which stores nothing itself.
 */
function chooseStorage(values: { "data-dir"?: string | undefined; database?: string | undefined; "in-memory"?: boolean | undefined; upstream?: string | undefined }): StorageChoice {
  const named = [values["data-dir"] !== undefined && "--data-dir", values.database !== undefined && "--database", values["in-memory"] === true && "--in-memory"].filter(Boolean);
  if (named.length > 1) throw new UsageError(`${named.join(" and ")} cannot be used together: choose one storage`);
  if (values.upstream !== undefined && named.length > 0) throw new UsageError(`${named[0]} cannot be used with --upstream: the upstream node stores the messages`);
  if (values["in-memory"] === true) return { store: new MemoryStore(), description: "in memory (nothing is kept when the node stops)" };
  const environment = process.env.CHRYSALIS_DATABASE_URL;
  const database = values.database ?? (values["data-dir"] === undefined && environment !== undefined && environment !== "" ? environment : undefined);
  if (database !== undefined) {
    if (!isDatabaseUrl(database)) throw new UsageError("--database takes a postgres:// or postgresql:// URL");
    const store = new PostgresStore(database);
    return { store, description: `PostgreSQL at ${store.target}` };
  }
  const store = new LmdbStore(values["data-dir"] ?? DEFAULT_DATA_DIR);
  return { store, description: `LMDB in ${store.path}` };
}

export const serveCommand: Command = {
  summary: "run a node: POST /api/v1/messages, prove-ownership, info, tips, messages",
  usage: `chrysalis serve [options]

Options:
  --host <host>              listen address (default 127.0.0.1)
  --port <port>              port (default 14265; 0 picks a free one)
  --network <name>           network name; its id is derived from it (default chrysalis-devnet)
  --min-pow-score <n>        minimum PoW score (default 2000 on chrysalis-devnet, 4000 elsewhere)
  --workers <n>              PoW worker threads (default: available cores)
  --no-pow                   do not mine for submitters (leaving parents or a nonce to the node answers 400, as
                             Hornet; the coordinator still mines its milestones)
  --jwt-secret-file <file>   HS256 secret (≥ 32 bytes) for the JWTs; also CHRYSALIS_JWT_SECRET
  --jwt-ed25519-key-file <f> Base58 Ed25519 seed to sign EdDSA JWTs instead
  --jwt-lifetime <d>         JWT lifetime: seconds or "15m", "2h", "1d" (default 1h)
  --identities <file>        identity registry: {"<id>": "<public key hex|Base58>" | DID document, …}
  --open-submit              accept messages without a JWT even when JWTs are configured
  --genesis <bech32>         keep a ledger with the total supply at this address (enables semantic checks);
                             applied only when the store is new
  --upstream <url>           forward accepted messages to this node; reads are answered by it (no coordinator here)
  --cors <origin>            allow browser clients from this origin ("*" for any)

Storage (one of):
  --data-dir <dir>           the embedded store (LMDB) in this directory (default ./chrysalis-data)
  --database <url>           PostgreSQL, postgres://user@host:port/db; several instances may share it.
                             Also CHRYSALIS_DATABASE_URL
  --in-memory                keep nothing: everything is gone when the node stops

Milestones, events and Integration Services:
  --milestone-interval <d>   issue a milestone every <d>: seconds, or "500ms", "10s", "1m" (default 10s)
  --coordinator-key-file <f> Ed25519 seed(s) signing the milestones, one per line (hex or Base58); without it a key
                             is made once and kept in the node's store
  --no-coordinator           issue no milestones (a node that follows another's milestones on a shared store)
  --no-mqtt                  do not serve MQTT events at /mqtt
  --api-key-file <file>      require ?api-key=<its content> on the authentication routes (as Integration Services)

With a JWT secret, GET/POST /authentication/prove-ownership/:identityId (also under /api/v0.1) and POST
/authentication/verify-jwt are served and POST /api/v1/messages requires "Authorization: Bearer <jwt>" (unless
--open-submit). MQTT 3.1.1 over WebSocket is at ws://HOST:PORT/mqtt. Stops gracefully on SIGINT/SIGTERM.
A message is answered 201 only once it is durable in the store (on disk, or committed in PostgreSQL).`,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "14265" },
        network: { type: "string" },
        "min-pow-score": { type: "string" },
        workers: { type: "string" },
        "no-pow": { type: "boolean", default: false },
        "jwt-secret-file": { type: "string" },
        "jwt-ed25519-key-file": { type: "string" },
        "jwt-lifetime": { type: "string" },
        identities: { type: "string" },
        "open-submit": { type: "boolean", default: false },
        genesis: { type: "string" },
        upstream: { type: "string" },
        cors: { type: "string" },
        "milestone-interval": { type: "string" },
        "coordinator-key-file": { type: "string" },
        "no-coordinator": { type: "boolean", default: false },
        "no-mqtt": { type: "boolean", default: false },
        "api-key-file": { type: "string" },
        "data-dir": { type: "string" },
        database: { type: "string" },
        "in-memory": { type: "boolean", default: false },
      },
      strict: true,
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port takes 0 .. 65535");
    const options: SetupOptions = { host: values.host!, port };
    let network = values.network;
    let minScore = values["min-pow-score"] === undefined ? undefined : Number(values["min-pow-score"]);
    if (minScore !== undefined && (!Number.isFinite(minScore) || minScore < 0)) throw new UsageError("--min-pow-score takes a number ≥ 0");
    const storage = chooseStorage(values);
    if (values.upstream !== undefined) {
      const store = new UpstreamStore(values.upstream);
      const info = await store.info();
      options.store = store;
      options.checkSolidity = false;
      if (network !== undefined && network !== info.networkId) throw new UsageError(`--network ${network} differs from the upstream's ${info.networkId}`);
      network = info.networkId;
      minScore ??= info.minPoWScore;
      options.bech32Hrp = info.bech32HRP;
    } else options.store = storage.store;
    if (network !== undefined) options.network = network;
    if (minScore !== undefined) options.minPoWScore = minScore;
    if (values["no-pow"]) options.pow = false;
    else if (values.workers !== undefined) {
      const workers = Number(values.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new UsageError("--workers takes a whole number 1 .. 256");
      options.pow = { workers };
    }
    if (values.genesis !== undefined) {
      const { address } = parseBech32Address(values.genesis);
      const ledger = new MemoryLedger();
      ledger.add(outputId(GENESIS_TRANSACTION_ID, 0), { type: 0, address: { type: 0, address }, amount: TOTAL_SUPPLY });
      options.ledger = ledger as NonNullable<NodeOptions["ledger"]>;
    }
    const readSecret = async (file: string): Promise<string> => {
      try {
        return (await readFile(file, "utf8")).trim();
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
      }
    };
    if (values["jwt-ed25519-key-file"] !== undefined) options.jwtEd25519Seed = await readSecret(values["jwt-ed25519-key-file"]);
    else if (values["jwt-secret-file"] !== undefined) options.jwtSecret = await readSecret(values["jwt-secret-file"]);
    else if (process.env.CHRYSALIS_JWT_SECRET !== undefined && process.env.CHRYSALIS_JWT_SECRET !== "") options.jwtSecret = process.env.CHRYSALIS_JWT_SECRET;
    if (values["jwt-lifetime"] !== undefined) options.jwtLifetime = /^\d+$/.test(values["jwt-lifetime"]) ? Number(values["jwt-lifetime"]) : values["jwt-lifetime"];
    if (values.identities !== undefined) options.registry = await loadIdentityRegistry(values.identities);
    if (values["open-submit"]) options.requireJwtForSubmit = false;
    if (values.cors !== undefined) options.cors = values.cors;
    if (values["api-key-file"] !== undefined) options.apiKey = await readSecret(values["api-key-file"]);
    if (values.upstream !== undefined) {
      const store = options.store as UpstreamStore;
      options.forward = (request) => store.forward(request);
    }
    if (!values["no-mqtt"]) options.mqtt = {};
    const coordinatorWanted = !values["no-coordinator"] && values.upstream === undefined;
    if (!coordinatorWanted && (values["milestone-interval"] !== undefined || values["coordinator-key-file"] !== undefined)) {
      throw new UsageError(`--milestone-interval and --coordinator-key-file need a coordinator (not with ${values.upstream !== undefined ? "--upstream" : "--no-coordinator"})`);
    }
    if (coordinatorWanted) {
      options.coordinator = {};
      if (values["milestone-interval"] !== undefined) options.coordinator.intervalMs = parseInterval(values["milestone-interval"]);
      if (values["coordinator-key-file"] !== undefined) options.coordinator.keys = await loadCoordinatorKeys(values["coordinator-key-file"]);
    }

    const setup = await startNode(options);
    const info = setup.node.info;
    if (values.upstream === undefined) {
      const state = setup.storage.created ? "new store" : "existing store";
      write(`storage: ${storage.description} (${state}, ${setup.storage.ledger ? "ledger on" : "no ledger"})`);
      if (values.genesis !== undefined && !setup.storage.created) write("--genesis ignored: it applies only to a new store");
    }
    // Redeemed nonces and revocations past their expiry are dropped now and then; a failed sweep is retried next time.
    const sweeper = setInterval(() => void setup.node.store.sweep(Date.now()).catch(() => undefined), SWEEP_INTERVAL_MS);
    sweeper.unref();
    write(`chrysalis node listening on ${setup.server.url} (network ${info.networkId}, min PoW score ${info.minPoWScore}${setup.jwt ? ", JWT required to submit" : ""})`);
    if (setup.coordinator !== undefined) write(`coordinator: a milestone every ${(options.coordinator as { intervalMs?: number }).intervalMs ?? 10_000} ms, signed by ${setup.coordinator.publicKeys.join(", ")}`);
    if (setup.mqtt !== undefined) write(`events: MQTT over WebSocket at ${setup.server.url.replace(/^http/, "ws")}/mqtt`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        clearInterval(sweeper);
        write("shutting down: letting in-flight requests finish …");
        setup.close().then(resolve, resolve);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    write("stopped");
  },
};

/** A milestone interval: a number of seconds, or a number with ms, s or m; at least 10 ms. */
export function parseInterval(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) throw new UsageError("--milestone-interval takes seconds, or a number with ms, s or m (\"500ms\", \"10s\")");
  const ms = Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "m" ? 60_000 : 1000);
  if (!Number.isFinite(ms) || ms < 10 || ms > 24 * 3600_000) throw new UsageError("--milestone-interval must be between 10ms and 24h");
  return Math.round(ms);
}
