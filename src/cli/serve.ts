// `chrysalis serve`: a node over HTTP (node API v1 + prove-ownership), with optional genesis ledger and upstream.
import { parseArgs } from "node:util";
import { readFile } from "node:fs/promises";
import { parseDuration } from "../auth/index.js";
import { BELOW_MAX_DEPTH, TOTAL_SUPPLY } from "../bytes/limits.js";
import { parseBech32Address } from "../crypto/index.js";
import { outputId } from "../model/ids.js";
import { decodeSnapshot, DEFAULT_PRUNE_KEEP, MIN_PRUNE_KEEP, pruneKeepProblem, LmdbStore, LOG_LEVELS, MemoryLedger, MemoryStore, PostgresStore, RATE_CLASSES, resolveLimits, UpstreamStore, isDatabaseUrl, type EdgeLimitsInput, type LogLevel, type NodeOptions, type NodeStore, type RateClass, type RateLimit } from "../node/index.js";
import type { Command } from "./commands.js";
import { fileError, UsageError, write } from "./io.js";
import { DEFAULT_P2P_BIND, loadCoordinatorKeys, loadIdentityRegistry, startNode, type GossipSetup, type SetupOptions } from "./setup.js";
import { readP2pIdentityFile } from "../node/gossip/index.js";
import { fromHex } from "../bytes/hex.js";

export const GENESIS_TRANSACTION_ID = "0".repeat(64);

const DEFAULT_DATA_DIR = "./chrysalis-data";

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

/** The gossip options of serve, checked: binds, identity file, static peers, milestone keys, admin token. */
async function gossipSetup(
  values: { "p2p-bind"?: string[] | undefined; "p2p-identity-file"?: string | undefined; peer?: string[] | undefined; "coordinator-public-key"?: string[] | undefined; "milestone-public-key-count"?: string | undefined; "admin-token-file"?: string | undefined },
  readSecret: (file: string) => Promise<string>,
): Promise<GossipSetup> {
  const setup: GossipSetup = { bind: values["p2p-bind"] ?? [DEFAULT_P2P_BIND], peers: (values.peer ?? []).map((multiAddress) => ({ multiAddress })) };
  for (const [i, address] of (setup.peers ?? []).entries()) {
    if (!/\/p2p\/[1-9A-HJ-NP-Za-km-z]+$/.test(address.multiAddress)) throw new UsageError(`--peer ${JSON.stringify(values.peer![i])}: a peer is a multiaddr ending in /p2p/<peer id>`);
  }
  const identityFile = values["p2p-identity-file"];
  if (identityFile !== undefined) {
    try {
      setup.identity = await readP2pIdentityFile(identityFile);
    } catch (error) {
      throw fileError("the p2p identity file", identityFile, error);
    }
  }
  const keys = values["coordinator-public-key"] ?? [];
  setup.milestoneKeys = keys.map((hex, i) => {
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new UsageError(`--coordinator-public-key ${JSON.stringify(hex)} (${i + 1}): a public key is 64 hex characters`);
    return fromHex(hex, "--coordinator-public-key", 32);
  });
  if (values["milestone-public-key-count"] !== undefined) {
    const count = Number(values["milestone-public-key-count"]);
    if (!Number.isInteger(count) || count < 1 || count > Math.max(1, keys.length)) throw new UsageError(`--milestone-public-key-count takes 1 .. the number of --coordinator-public-key given (${keys.length})`);
    setup.milestoneKeyCount = count;
  }
  if (values["admin-token-file"] !== undefined) {
    const token = await readSecret(values["admin-token-file"]);
    if (token.length < 16) throw new UsageError("the admin token must be at least 16 characters");
    setup.adminToken = token;
  }
  return setup;
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

Ageing (as Hornet's pruning and snapshots):
  --prune-milestones <n>     keep the messages of the last n milestones; older ones (messages, metadata, children,
                             index entries, milestones, UTXO changes, spent outputs) are pruned in the background,
                             in small batches. Default ${DEFAULT_PRUNE_KEEP} (a week at 10 s); 0 keeps everything;
                             otherwise at least ${MIN_PRUNE_KEEP} (${BELOW_MAX_DEPTH} milestones of max depth + ${MIN_PRUNE_KEEP - BELOW_MAX_DEPTH} of margin).
                             Unspent outputs and balances are never pruned
  --prune-size <size>        also prune while the store's data is larger than this, 10% of the kept milestones at a
                             time (never fewer than ${MIN_PRUNE_KEEP} kept): bytes, or with KB, MB, GB, TB (powers of
                             1000) or KiB, MiB, GiB, TiB, e.g. "500MB", "2GB"
  --snapshot <file>          start a NEW store from a snapshot (chrysalis snapshot create) instead of --genesis: its
                             ledger, milestone and entry points; --network defaults to the snapshot's. The coordinator
                             continues at the next index with the same --coordinator-key-file. An existing store, or
                             a snapshot of another network: exit 1

Milestones, events and Integration Services:
  --milestone-interval <d>   issue a milestone every <d>: seconds, or "500ms", "10s", "1m" (default 10s)
  --coordinator-key-file <f> Ed25519 seed(s) signing the milestones, one per line (hex or Base58); without it a key
                             is made once and kept in the node's store
  --no-coordinator           issue no milestones (a node that follows another's milestones on a shared store)
  --no-mqtt                  do not serve MQTT events at /mqtt
  --no-dashboard             do not serve the dashboard and explorer at /dashboard/
  --api-key-file <file>      require ?api-key=<its content> on the authentication routes (as Integration Services)

A network of nodes (Hornet 1.x's gossip over libp2p: TCP, Noise, Yamux):
  --p2p-bind <multiaddr>     where gossip listens (repeatable; default ${DEFAULT_P2P_BIND}; port 0 picks a free one)
  --no-p2p                   no gossip: nothing listens but HTTP
  --p2p-identity-file <f>    the node's libp2p identity (PKCS#8 PEM, chrysalis p2p identity); without it one is
                             made once and kept in the store
  --peer <multiaddr>         a static peer, .../p2p/<peer id> (repeatable), dialled at start and again whenever the
                             connection is lost
  --coordinator-public-key <hex>  a key milestones may be signed by (repeatable): a follower (--no-coordinator)
                             confirms only milestones signed by these (chrysalis coordinator public-key prints them);
                             without any, a store made from a snapshot trusts the snapshot's signers
  --milestone-public-key-count <n>  how many of them must sign each milestone (default: how many were given)
  --admin-token-file <file>  GET/POST/DELETE /api/v1/peers also for clients off loopback with "Authorization: Bearer
                             <its content>" (loopback clients always; others get 403)

Edge (limits, logs, metrics; defaults fit a public node):
  --nonce-lifetime <d>       how long a prove-ownership nonce can be redeemed (default 30s; 2s .. 1h)
  --trust-proxy <cidr,…>     proxies whose X-Forwarded-For names the client (repeatable); default: none
  --no-rate-limits           lift every rate limit (benchmarks, private networks)
  --rate <class>=<n>/<burst> a token bucket per client: request, nonce, proof, submit, pow (repeatable),
                             e.g. --rate nonce=2/20 (defaults: request 100/200, nonce 2/20, proof 2/20,
                             submit 10/50, pow 1/10)
  --max-connections <n>      open connections in all (default 8192)
  --max-connections-per-address <n>  from one address (default 64; a trusted proxy counts only in all)
  --headers-timeout <d>      to receive a request's headers, at most 10s (default 10s); then 408
  --request-timeout <d>      to receive a whole request with its body, at most 30s (default 30s); then 408
  --keep-alive-timeout <d>   an idle connection stays open, at least 60s (default 65s)
  --max-json-bytes <n>       largest JSON body (default 262144); larger: 413
  --shutdown-grace <d>       on SIGINT/SIGTERM, time for requests in flight to finish (default 10s); the rest
                             (PoW in flight) is answered 503 with Retry-After
  --log-level <level>        fatal, error, warn, info (default), debug, trace or silent
  --log-format <f>           json or pretty (default: pretty on a terminal, else JSON lines)
  --metrics-token-file <f>   GET /metrics only with "Authorization: Bearer <token from the file>"
  --no-metrics               do not serve GET /metrics

With a JWT secret, GET/POST /authentication/prove-ownership/:identityId (also under /api/v0.1 and /api/v1) and POST
/authentication/verify-jwt are served and POST /api/v1/messages requires "Authorization: Bearer <jwt>" (unless
--open-submit); --identities needs a JWT key. MQTT 3.1.1 over WebSocket is at ws://HOST:PORT/mqtt. Signals: SIGINT
and SIGTERM stop gracefully (exit 0); SIGHUP reads --identities again (JWTs of identities no longer listed are refused).
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
        "nonce-lifetime": { type: "string" },
        "trust-proxy": { type: "string", multiple: true },
        "no-rate-limits": { type: "boolean", default: false },
        rate: { type: "string", multiple: true },
        "max-connections": { type: "string" },
        "max-connections-per-address": { type: "string" },
        "headers-timeout": { type: "string" },
        "request-timeout": { type: "string" },
        "keep-alive-timeout": { type: "string" },
        "max-json-bytes": { type: "string" },
        "shutdown-grace": { type: "string" },
        "log-level": { type: "string" },
        "log-format": { type: "string" },
        "metrics-token-file": { type: "string" },
        "no-metrics": { type: "boolean", default: false },
        "milestone-interval": { type: "string" },
        "coordinator-key-file": { type: "string" },
        "no-coordinator": { type: "boolean", default: false },
        "no-mqtt": { type: "boolean", default: false },
        "no-dashboard": { type: "boolean", default: false },
        "p2p-bind": { type: "string", multiple: true },
        "no-p2p": { type: "boolean", default: false },
        "p2p-identity-file": { type: "string" },
        peer: { type: "string", multiple: true },
        "coordinator-public-key": { type: "string", multiple: true },
        "milestone-public-key-count": { type: "string" },
        "admin-token-file": { type: "string" },
        "api-key-file": { type: "string" },
        "data-dir": { type: "string" },
        database: { type: "string" },
        "in-memory": { type: "boolean", default: false },
        "prune-milestones": { type: "string" },
        "prune-size": { type: "string" },
        snapshot: { type: "string" },
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
    // A gateway stores nothing: there is nothing to prune or to start from a snapshot.
    if (values.upstream !== undefined) {
      const own = (["prune-milestones", "prune-size", "snapshot"] as const).filter((flag) => values[flag] !== undefined);
      if (own.length > 0) throw new UsageError(`--${own[0]} cannot be used with --upstream: the upstream node keeps the store`);
    }
    const keep = values["prune-milestones"] === undefined ? DEFAULT_PRUNE_KEEP : whole(values["prune-milestones"], "--prune-milestones");
    const keepProblem = pruneKeepProblem(keep);
    if (keepProblem !== undefined) throw new UsageError(`--prune-milestones: ${keepProblem}`);
    const sizeTarget = values["prune-size"] === undefined ? undefined : parseByteSize(values["prune-size"], "--prune-size");
    if (values.upstream === undefined) options.pruning = { keep, sizeTarget };
    if (values.snapshot !== undefined) {
      if (values.genesis !== undefined) throw new UsageError("--snapshot and --genesis cannot be used together: a new store starts from one of them");
      let bytes: Uint8Array;
      try {
        bytes = await readFile(values.snapshot);
      } catch (error) {
        throw fileError("the snapshot", values.snapshot, error);
      }
      const snapshot = decodeSnapshot(bytes);
      options.snapshot = snapshot;
      network ??= snapshot.network;
    }
    if (values.upstream !== undefined) {
      const store = new UpstreamStore(values.upstream);
      const info = await store.info();
      options.store = store;
      options.checkSolidity = false;
      options.tipSource = (count) => store.tips(count);
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
    async function readSecret(file: string): Promise<string> {
      try {
        return (await readFile(file, "utf8")).trim();
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
      }
    }
    if (values["jwt-ed25519-key-file"] !== undefined) options.jwtEd25519Seed = await readSecret(values["jwt-ed25519-key-file"]);
    else if (values["jwt-secret-file"] !== undefined) options.jwtSecret = await readSecret(values["jwt-secret-file"]);
    else if (process.env.CHRYSALIS_JWT_SECRET !== undefined && process.env.CHRYSALIS_JWT_SECRET !== "") options.jwtSecret = process.env.CHRYSALIS_JWT_SECRET;
    if (values["jwt-lifetime"] !== undefined) options.jwtLifetime = /^\d+$/.test(values["jwt-lifetime"]) ? Number(values["jwt-lifetime"]) : values["jwt-lifetime"];
    if (values.identities !== undefined) {
      if (options.jwtSecret === undefined && options.jwtEd25519Seed === undefined) {
        throw new UsageError("--identities needs a JWT key to issue tokens with: --jwt-secret-file, CHRYSALIS_JWT_SECRET or --jwt-ed25519-key-file");
      }
      options.registry = await loadIdentityRegistry(values.identities);
      options.identitiesFile = values.identities;
    }
    if (values["open-submit"]) options.requireJwtForSubmit = false;
    if (values.cors !== undefined) options.cors = values.cors;
    if (values["nonce-lifetime"] !== undefined) options.nonceLifetime = duration(values["nonce-lifetime"], "--nonce-lifetime");
    options.limits = edgeLimits(values);
    const level = values["log-level"] ?? "info";
    if (!LOG_LEVELS.includes(level as LogLevel)) throw new UsageError(`--log-level takes one of ${LOG_LEVELS.join(", ")}`);
    const format = values["log-format"];
    if (format !== undefined && format !== "json" && format !== "pretty") throw new UsageError("--log-format takes json or pretty");
    options.log = { level: level as LogLevel, ...(format !== undefined ? { pretty: format === "pretty" } : {}) };
    if (!values["no-metrics"]) {
      const tokenFile = values["metrics-token-file"];
      const token = tokenFile === undefined ? undefined : await readSecret(tokenFile);
      if (token !== undefined && token.length < 16) throw new UsageError("the metrics token must be at least 16 characters");
      options.metrics = token === undefined ? true : { token };
    }
    if (values["api-key-file"] !== undefined) options.apiKey = await readSecret(values["api-key-file"]);
    if (values.upstream !== undefined) {
      const store = options.store as UpstreamStore;
      options.forward = (request) => store.forward(request);
    }
    if (!values["no-mqtt"]) options.mqtt = {};
    if (!values["no-dashboard"]) options.dashboard = {};
    const p2pFlags = (["p2p-bind", "p2p-identity-file", "peer", "coordinator-public-key", "milestone-public-key-count", "admin-token-file"] as const).filter((flag) => values[flag] !== undefined);
    if ((values["no-p2p"] || values.upstream !== undefined) && p2pFlags.length > 0) {
      throw new UsageError(`--${p2pFlags[0]} needs gossip (not with ${values["no-p2p"] ? "--no-p2p" : "--upstream"})`);
    }
    if (!values["no-p2p"] && values.upstream === undefined) options.gossip = await gossipSetup(values, readSecret);
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
    const logger = setup.edge.logger;
    // What the operator did (signals) is written out at once, not with the next block of access lines.
    const say = (message: string, fields: Record<string, unknown> = {}): void => {
      if (logger?.isLevelEnabled("info") === true) {
        logger.info(fields, message);
        logger.flush();
      }
    };
    // SIGINT and SIGTERM stop gracefully from here on, before the listening line: a script that signals as soon as it
    // reads that line must not find Node's default (killed, no exit code) still in place.
    const stopped = new Promise<void>((resolve) => {
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) {
          // A second signal while stopping: the operator wants out now.
          logger?.warn({ signal }, "stopping at once");
          process.exit(1);
        }
        stopping = true;
        say("shutting down: letting requests in flight finish", { signal, graceMs: setup.edge.limits.shutdownGraceMs });
        setup.close().then(resolve, (error: unknown) => {
          logger?.error({ err: (error as Error).message }, "shutdown failed");
          process.exitCode = 1;
          resolve();
        });
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    // Scripts wait for this line; it is printed in every log format and level (in JSON as the record's msg, followed by
    // a space so that a pattern like /listening on (http:\/\/[^ ]+)/ reads the address alone).
    const listening = `chrysalis node listening on ${setup.server.url} (network ${info.networkId}, min PoW score ${info.minPoWScore}${setup.jwt ? ", JWT required to submit" : ""})`;
    if (logger?.isLevelEnabled("info") === true) {
      logger.info({ url: setup.server.url, network: info.networkId, minPoWScore: info.minPoWScore }, listening);
      logger.flush();
    } else write(listening);
    const note = (message: string): void => {
      if (logger?.isLevelEnabled("info") === true) say(message);
      else write(message);
    };
    // Which store, and whether it is new (after the listening line, which scripts take as the first).
    if (values.upstream === undefined) {
      note(`storage: ${storage.description} (${setup.storage.created ? "new store" : "existing store"}, ${setup.storage.ledger ? "ledger on" : "no ledger"})`);
      if (setup.gossip !== undefined) {
        // Scripts wait for this line too: at every level and in JSON, as the listening line.
        const address = setup.gossip.listenAddresses()[0] ?? "";
        const line = `gossip on ${address} (protocol ${setup.gossip.protocol}, ${setup.gossip.peers().length} static peers)`;
        if (logger?.isLevelEnabled("info") === true) {
          logger.info({ address, peerId: setup.gossip.peerId }, line);
          logger.flush();
        } else write(line);
      }
      if (values.genesis !== undefined && !setup.storage.created) note("--genesis ignored: it applies only to a new store");
      if (options.snapshot !== undefined) note(`snapshot: the store starts at milestone ${options.snapshot.milestone?.index ?? 0} with ${options.snapshot.outputs.length} unspent outputs (${values.snapshot})`);
      const pruning = options.pruning === undefined || options.pruning === false ? undefined : options.pruning;
      if (pruning !== undefined) {
        const depth = pruning.keep === 0 ? "keeping every milestone" : `keeping the last ${pruning.keep} milestones`;
        note(`pruning: ${depth}${pruning.sizeTarget !== undefined ? `, and pruning more above ${pruning.sizeTarget} bytes` : ""}`);
      }
    }
    if (setup.coordinator !== undefined) note(`coordinator: a milestone every ${(options.coordinator as { intervalMs?: number }).intervalMs ?? 10_000} ms, signed by ${setup.coordinator.publicKeys.join(", ")}`);
    if (setup.mqtt !== undefined) note(`events: MQTT over WebSocket at ${setup.server.url.replace(/^http/, "ws")}/mqtt`);
    if (options.dashboard !== undefined && options.dashboard !== false) note(`dashboard: ${setup.server.url}/dashboard/`);
    const reload = (): void => {
      setup.reloadIdentities().then(
        (count) => say("identities reloaded", { identities: count, file: values.identities }),
        (error: unknown) => {
          logger?.error({ err: (error as Error).message }, "identities not reloaded; the registry is unchanged");
          logger?.flush();
        },
      );
    };
    process.on("SIGHUP", reload);
    await stopped;
    process.off("SIGHUP", reload);
    say("stopped");
    logger?.flush();
  },
};

function duration(value: string, flag: string, max = 86_400): number {
  try {
    return parseDuration(/^\d+$/.test(value) ? Number(value) : value, flag, 0, max);
  } catch {
    throw new UsageError(`${flag} takes seconds or a duration such as "10s" or "2m"`);
  }
}

function whole(value: string, flag: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${flag} takes a whole number`);
  return Number(value);
}

/** The edge's limits from the flags, checked here so that a bad value is a usage error naming its flag. */
function edgeLimits(values: Record<string, string | boolean | string[] | undefined>): EdgeLimitsInput {
  const limits: { -readonly [K in keyof EdgeLimitsInput]: EdgeLimitsInput[K] } = {};
  const text = (name: string): string | undefined => values[name] as string | undefined;
  if (values["no-rate-limits"] === true) limits.rates = false;
  else if (values.rate !== undefined) {
    const rates: Partial<Record<RateClass, RateLimit>> = {};
    for (const spec of values.rate as string[]) {
      const match = /^([a-z]+)=(\d+(?:\.\d+)?)\/(\d+)$/.exec(spec);
      if (match === null || !RATE_CLASSES.includes(match[1] as RateClass)) throw new UsageError(`--rate takes <class>=<per second>/<burst> with a class of ${RATE_CLASSES.join(", ")}, e.g. nonce=2/20`);
      rates[match[1] as RateClass] = { perSecond: Number(match[2]), burst: Number(match[3]) };
    }
    limits.rates = rates;
  }
  if (values["trust-proxy"] !== undefined) limits.trustProxy = (values["trust-proxy"] as string[]).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
  if (text("max-connections") !== undefined) limits.maxConnections = whole(text("max-connections")!, "--max-connections");
  if (text("max-connections-per-address") !== undefined) limits.maxConnectionsPerAddress = whole(text("max-connections-per-address")!, "--max-connections-per-address");
  if (text("headers-timeout") !== undefined) limits.headersTimeoutMs = duration(text("headers-timeout")!, "--headers-timeout") * 1000;
  if (text("request-timeout") !== undefined) limits.requestTimeoutMs = duration(text("request-timeout")!, "--request-timeout") * 1000;
  if (text("keep-alive-timeout") !== undefined) limits.keepAliveTimeoutMs = duration(text("keep-alive-timeout")!, "--keep-alive-timeout") * 1000;
  if (text("max-json-bytes") !== undefined) limits.maxJsonBytes = whole(text("max-json-bytes")!, "--max-json-bytes");
  if (text("shutdown-grace") !== undefined) limits.shutdownGraceMs = duration(text("shutdown-grace")!, "--shutdown-grace", 3600) * 1000;
  try {
    resolveLimits(limits);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/ \(at [^)]*\)$/, ""));
  }
  return limits;
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A size in bytes: a whole number, or a number with a unit of SIZE_UNITS ("500MB", "2GB", "1.5GiB"). */
export function parseByteSize(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const name = m === null ? undefined : m[2]!.toLowerCase();
  const unit = name !== undefined && Object.hasOwn(SIZE_UNITS, name) ? SIZE_UNITS[name] : undefined;
  if (m === null || unit === undefined) throw new UsageError(`${flag} takes bytes, or a number with KB, MB, GB, TB (or KiB, MiB, GiB, TiB), e.g. "500MB"`);
  const bytes = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new UsageError(`${flag} must be at least 1 byte`);
  return bytes;
}

/** A milestone interval: a number of seconds, or a number with ms, s or m; at least 10 ms. */
export function parseInterval(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) throw new UsageError("--milestone-interval takes seconds, or a number with ms, s or m (\"500ms\", \"10s\")");
  const ms = Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "m" ? 60_000 : 1000);
  if (!Number.isFinite(ms) || ms < 10 || ms > 24 * 3600_000) throw new UsageError("--milestone-interval must be between 10ms and 24h");
  return Math.round(ms);
}
