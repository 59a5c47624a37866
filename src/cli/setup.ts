// Assembling a running node for `serve` and `demo`: node + optional ledger + prove-ownership + JWT (revocable, refused
// once its identity is gone) + the edge (limits, log, metrics) + HTTP server,
// and reading an identity registry file.
import { readFile } from "node:fs/promises";
import { base58Decode } from "../bytes/base58.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { ed25519PublicKey } from "../crypto/ed25519.js";
import { milestonePublicKey } from "../model/milestone.js";
import {
  createEdDsaJwt,
  createHs256Jwt,
  createProveOwnership,
  MemoryIdentityRegistry,
  publicKeyFromDidDocument,
  type JwtService,
  guardJwt,
  type GuardedJwtService,
} from "../auth/index.js";
import {
  createCoordinator,
  createHandler,
  createPruner,
  type Pruner,
  UpstreamStore,
  createMqttBridge,
  createNode,
  serve,
  type ChrysalisNode,
  type Coordinator,
  type MqttBridge,
  type MqttBridgeOptions,
  type NodeOptions,
  type RunningServer,
  type StoreOpenResult,
  NodeError,
  createEdge,
  isDatabaseUrl,
  LmdbStore,
  PostgresStore,
  MemoryStore,
  watchNode,
  type Edge,
  type EdgeLimitsInput,
  type LogOptions,
} from "../node/index.js";
import { dashboardRoutes, type DashboardOptions } from "../node/dashboard.js";
import { createGossip, p2pIdentityFromSeed, type Gossip, type GossipLimits, type P2pIdentity, type StaticPeer } from "../node/gossip/index.js";
import { NetworkNode } from "../node/network.js";
import { UsageError } from "./io.js";

export interface NodeSetup {
  node: ChrysalisNode;
  /** What opening the store found: a new store (genesis applied) or an existing one, and whether it keeps a ledger. */
  storage: StoreOpenResult;
  server: RunningServer;
  edge: Edge;
  /** The JWT service the node checks submissions with (revocation and registration included), when JWTs are on. */
  jwt: GuardedJwtService | undefined;
  registry: MemoryIdentityRegistry;
  /** Reads `identitiesFile` again and replaces the registry with it (SIGHUP); returns how many identities it holds. */
  reloadIdentities(): Promise<number>;
  /** The built-in coordinator, when milestones are issued here. */
  coordinator: Coordinator | undefined;
  /** The MQTT broker at /mqtt, when events are served. */
  mqtt: MqttBridge | undefined;
  /** The pruning part, when the store is pruned. */
  pruner: Pruner | undefined;
  /** The gossip part and the node's side of it, when the node peers. */
  gossip: Gossip | undefined;
  network: NetworkNode | undefined;
  /** Stops the coordinator, the pruner (its step in flight finishes), the MQTT clients, the server (in-flight requests
   * finish within the grace period, the rest are answered 503), the node's workers and the store. */
  close(): Promise<void>;
}

/** The name under which a coordinator key made by the node is kept in its store (shared by instances on one store). */
export const COORDINATOR_KEY_SECRET = "coordinator-ed25519-seed";

/** The name under which the node's libp2p identity seed is kept when no identity file is given. */
export const P2P_IDENTITY_SECRET = "p2p-identity-ed25519-seed";

/** Hornet's flag default for where gossip listens. */
export const DEFAULT_P2P_BIND = "/ip4/127.0.0.1/tcp/15600";

export interface GossipSetup {
  /** Where gossip listens (default DEFAULT_P2P_BIND; port 0 picks a free one). */
  bind?: readonly string[];
  /** The libp2p identity (--p2p-identity-file); without it a seed is made once and kept in the store. */
  identity?: P2pIdentity;
  /** Static peers, dialled at start and again whenever the connection is lost. */
  peers?: readonly StaticPeer[];
  /** The keys milestones must be signed by (--coordinator-public-key); the node's own coordinator's count too. */
  milestoneKeys?: readonly Uint8Array[];
  /** How many of them sign each milestone (--milestone-public-key-count; default: all given). */
  milestoneKeyCount?: number;
  /** Bearer token that lets clients off loopback use the peers routes (--admin-token-file). */
  adminToken?: string;
  /** The gossip part's timings and bounds (tests compress them). */
  limits?: GossipLimits;
}

export interface CoordinatorSetup {
  /** Milliseconds between milestones (default 10 s). */
  intervalMs?: number;
  /** Ed25519 seeds; none given: one made once and kept in the store (so it survives restarts with the store). */
  keys?: Uint8Array[];
}

export interface PruningSetup {
  /** Milestones whose messages are kept (0: none pruned by depth); at least MIN_PRUNE_KEEP otherwise. */
  keep: number;
  /** Bytes of store above which more is pruned (Hornet's --prune-size). */
  sizeTarget?: number | undefined;
}

export interface SetupOptions extends NodeOptions {
  host?: string;
  port?: number;
  /** HS256 secret (≥ 32 bytes) or an EdDSA seed; without either no JWT is issued and prove-ownership is off. */
  jwtSecret?: string | Uint8Array;
  jwtEd25519Seed?: string;
  jwtLifetime?: string | number;
  requireJwtForSubmit?: boolean;
  registry?: MemoryIdentityRegistry;
  /** The file `registry` was read from, read again by reloadIdentities (SIGHUP). */
  identitiesFile?: string;
  /** How long a prove-ownership nonce can be redeemed (seconds or "2m"; default 30 s). */
  nonceLifetime?: string | number;
  /** CORS origin for browser clients ("*" or one origin). */
  cors?: string;
  /** The edge's limits (rates, connections, timeouts, sizes, trusted proxies, shutdown grace). */
  limits?: EdgeLimitsInput;
  /** The log (default: none). */
  log?: LogOptions | false;
  /** GET /metrics (default off); a token restricts it to `Authorization: Bearer <token>`. */
  metrics?: boolean | { token?: string };
  /** Issue milestones here (serve's default); unset or false: none. */
  coordinator?: CoordinatorSetup | false;
  /** Prune the store (serve's default: keep 60480 milestones); unset or false: nothing is pruned. */
  pruning?: PruningSetup | false;
  /** Serve MQTT at /mqtt (serve's default); unset or false: none. */
  mqtt?: MqttBridgeOptions | false;
  /** Serve the dashboard at /dashboard/ (serve's default); unset or false: none (404). */
  dashboard?: DashboardOptions | false;
  /** Peer over libp2p with Hornet's gossip protocol (serve's default); unset or false: no gossip. */
  gossip?: GossipSetup | false;
  /** Required `api-key` query parameter of the authentication routes (IS's API_KEY). */
  apiKey?: string;
  /** A gateway's upstream reads (UpstreamStore.forward). */
  forward?: (request: Request) => Promise<Response>;
}

/** Where a node's store lives, as serve is told (--data-dir, --database; CHRYSALIS_DATABASE_URL when neither). */
export interface StoreLocation {
  dataDir?: string | undefined;
  database?: string | undefined;
}

/**
 * Opens the store a running node uses, for the tools that work beside it (`auth revoke`, `snapshot create`,
 * `db stats|verify|compact`): the LMDB directory or PostgreSQL database named, which must hold a store already, of
 * whatever network; nothing is created or migrated. An LMDB store of an older schema is refused (a node of that
 * version may be running on it) unless `revocationsOnly` (`auth revoke`, whose record every schema has alike). The
 * caller closes it.
 */
export async function openSharedStore(location: StoreLocation, options: { revocationsOnly?: boolean } = {}): Promise<LmdbStore | PostgresStore> {
  if (location.dataDir !== undefined && location.database !== undefined) throw new UsageError("--data-dir and --database cannot be used together: name one store");
  const environment = process.env.CHRYSALIS_DATABASE_URL;
  const database = location.database ?? (location.dataDir === undefined && environment !== undefined && environment !== "" ? environment : undefined);
  if (location.dataDir === undefined && database === undefined) {
    throw new UsageError("give the store the node uses: --data-dir <dir> or --database <postgres://…> (or CHRYSALIS_DATABASE_URL)");
  }
  if (database !== undefined && !isDatabaseUrl(database)) throw new UsageError("--database takes a postgres:// or postgresql:// URL");
  const store = location.dataDir !== undefined ? new LmdbStore(location.dataDir) : new PostgresStore(database!);
  try {
    await (store instanceof LmdbStore ? store.openExisting(options) : store.openExisting());
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

// Redeemed nonces and revocations past their expiry are dropped this often.
const SWEEP_INTERVAL_MS = 60_000;

function parseKey(text: unknown, where: string): Uint8Array {
  if (typeof text !== "string") throw new UsageError(`${where}: expected a public key string`);
  if (/^[0-9a-fA-F]{64}$/.test(text)) return fromHex(text, where, 32);
  const bytes = base58Decode(text);
  if (bytes.length !== 32) throw new UsageError(`${where}: a public key is 32 bytes (hex or Base58)`);
  return bytes;
}

/**
 * Reads an identity registry file: a JSON object mapping identity ids to a public key (hex or Base58), a list of
 * keys, or a DID document; or a list of {"id", "publicKey"} entries.
 */
export async function loadIdentityRegistry(file: string, registry = new MemoryIdentityRegistry()): Promise<MemoryIdentityRegistry> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8")) as unknown;
  } catch (error) {
    throw new UsageError(`cannot read the identity registry ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const add = (id: string, value: unknown): void => {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) registry.add(id, publicKeyFromDidDocument(value));
    else if (Array.isArray(value)) value.forEach((k, i) => registry.add(id, parseKey(k, `${file}: ${id}[${i}]`)));
    else registry.add(id, parseKey(value, `${file}: ${id}`));
  };
  if (Array.isArray(json)) {
    json.forEach((entry, i) => {
      const e = entry as { id?: unknown; publicKey?: unknown } | null;
      if (typeof e !== "object" || e === null || typeof e.id !== "string") throw new UsageError(`${file}: entry ${i} needs "id" and "publicKey"`);
      add(e.id, e.publicKey);
    });
  } else if (typeof json === "object" && json !== null) {
    for (const [id, value] of Object.entries(json)) add(id, value);
  } else throw new UsageError(`${file}: expected a JSON object or list`);
  return registry;
}

/** Starts a node with its HTTP server. */
export async function startNode(options: SetupOptions): Promise<NodeSetup> {
  const edge = createEdge({ limits: options.limits ?? {}, log: options.log ?? false, metrics: options.metrics ?? false });
  const baseStore = options.store ?? new MemoryStore();
  const store = edge.metrics?.instrumentStore(baseStore) ?? baseStore;
  const registry = options.registry ?? new MemoryIdentityRegistry();
  let jwt: JwtService | undefined;
  const lifetime = options.jwtLifetime !== undefined ? { lifetime: options.jwtLifetime } : {};
  if (options.jwtEd25519Seed !== undefined) {
    // The key file holds the Base58 seed (or seed ‖ public key, which createEdDsaJwt checks); the public key follows.
    const seed = base58Decode(options.jwtEd25519Seed, "jwtEd25519Key");
    if (seed.length !== 32 && seed.length !== 64) throw new UsageError("the EdDSA JWT key file must hold a Base58 Ed25519 seed (32 bytes, or 64 with the public key)");
    jwt = createEdDsaJwt({ privateKey: options.jwtEd25519Seed, publicKey: ed25519PublicKey(seed.subarray(0, 32)), ...lifetime });
  } else if (options.jwtSecret !== undefined) {
    jwt = createHs256Jwt({ secret: options.jwtSecret, ...lifetime });
  }
  if (jwt === undefined && options.identitiesFile !== undefined) {
    // Without a key no JWT can be issued, so the registry could only ever answer 404: refuse to start instead.
    throw new UsageError("--identities needs a JWT key (--jwt-secret-file, CHRYSALIS_JWT_SECRET or --jwt-ed25519-key-file)");
  }
  // A store made from a snapshot continues its milestones: checked before the store is created, so that a wrong key file
  // leaves no store behind that the corrected command would then find "existing".
  if (options.snapshot !== undefined && options.coordinator !== undefined && options.coordinator !== false) {
    const problem = coordinatorKeysProblem(options.snapshot.coordinatorPublicKeys, options.coordinator.keys?.map((seed) => toHex(milestonePublicKey(seed))));
    if (problem !== undefined) throw new Error(problem);
  }
  const node = createNode({ ...options, store });
  watchNode(edge, node);
  // The store opens before the port does: a store that cannot open (a damaged data directory, an unreachable database,
  // another network) fails the start with its one-line reason; a node never serves on no store or a fresh one instead.
  let storage: StoreOpenResult;
  try {
    storage = await node.ready();
  } catch (error) {
    await node.close().catch(() => undefined);
    throw error;
  }
  if (options.snapshot !== undefined && !storage.created) {
    await node.close().catch(() => undefined);
    throw new Error("--snapshot starts a new store only (as --genesis does), and this store exists already: give an empty --data-dir or database");
  }
  // Every check of a JWT also asks the store whether it was revoked and the registry whether its subject still exists.
  const guarded = jwt === undefined ? undefined : guardJwt(jwt, { revocations: store, resolver: registry });
  const handlerOptions: Parameters<typeof createHandler>[1] = { maxJsonBytes: edge.limits.maxJsonBytes };
  // The detail of the node's own trouble (the data directory, the database, the driver's words) is for the operator.
  const logger = edge.logger;
  if (logger !== undefined) {
    handlerOptions.onServiceError = (error) => logger.warn({ reason: error.code, detail: error.message, cause: causeOf(error) }, "a request failed on the node's side");
  }
  if (jwt !== undefined && guarded !== undefined) {
    handlerOptions.jwt = guarded;
    const nonceLifetime = options.nonceLifetime !== undefined ? { lifetime: options.nonceLifetime } : {};
    handlerOptions.proveOwnership = createProveOwnership({ store, resolver: registry, jwt, ...nonceLifetime });
  }
  if (options.requireJwtForSubmit !== undefined) handlerOptions.requireJwtForSubmit = options.requireJwtForSubmit;
  if (options.cors !== undefined) handlerOptions.cors = options.cors;
  if (options.apiKey !== undefined) handlerOptions.apiKey = options.apiKey;
  if (options.forward !== undefined) handlerOptions.forward = options.forward;
  if (options.dashboard !== undefined && options.dashboard !== false) {
    try {
      handlerOptions.routes = dashboardRoutes(options.dashboard);
    } catch (error) {
      // Files missing from the install: the operator's to fix (or --no-dashboard), named in one line.
      await node.close().catch(() => undefined);
      throw error;
    }
  }
  // The peers routes answer through the gossip part, which starts below (before the port opens).
  let gossip: Gossip | undefined;
  let network: NetworkNode | undefined;
  const gossipSetup = options.gossip === undefined || options.gossip === false ? undefined : options.gossip;
  if (gossipSetup !== undefined) {
    const running = (): Gossip => {
      if (gossip === undefined) throw new NodeError("NOT_SUPPORTED", "gossip is not running");
      return gossip;
    };
    handlerOptions.peers = {
      admin: { peers: () => gossip?.peers() ?? [], peer: (id) => gossip?.peer(id), addPeer: (address, alias) => running().addPeer(address, alias), removePeer: (id) => running().removePeer(id) },
      adminToken: gossipSetup.adminToken,
    };
  }
  const handler = createHandler(node, handlerOptions);
  const sweeper = setInterval(() => {
    store.sweep(Date.now()).catch((error: unknown) => edge.logger?.warn({ err: (error as Error).message }, "sweeping expired nonces and revocations failed"));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  let coordinator: Coordinator | undefined;
  let pruner: Pruner | undefined;
  let mqtt: MqttBridge | undefined;
  try {
    if (options.coordinator !== undefined && options.coordinator !== false) {
      await node.ready();
      const keys = options.coordinator.keys ?? [await node.store.secret(COORDINATOR_KEY_SECRET, () => globalThis.crypto.getRandomValues(new Uint8Array(32)))];
      const coordinatorOptions: Parameters<typeof createCoordinator>[1] = { keys };
      if (options.coordinator.intervalMs !== undefined) coordinatorOptions.intervalMs = options.coordinator.intervalMs;
      coordinator = createCoordinator(node, coordinatorOptions);
      const problem = coordinatorKeysProblem(storage.coordinatorPublicKeys, coordinator.publicKeys);
      if (problem !== undefined) throw new Error(problem);
    }
    // A gateway stores nothing: nothing to measure or prune here.
    if (!(baseStore instanceof UpstreamStore)) {
      edge.metrics?.watchStore(store);
      if (options.pruning !== undefined && options.pruning !== false) {
        const metrics = edge.metrics;
        pruner = createPruner(store, {
          keep: options.pruning.keep,
          sizeTarget: options.pruning.sizeTarget,
          // After each milestone issued here; a node following another instance's milestones looks every second.
          // A node that issues or follows milestones prunes after each; a node on a store another instance writes
          // looks at it every interval.
          events: coordinator !== undefined || gossipSetup !== undefined ? node : undefined,
          onStep: (step) => {
            metrics?.pruned(step);
            if (step.messages > 0) edge.logger?.debug({ pruningIndex: step.pruningIndex, messages: step.messages }, "pruned");
          },
          onError: (error) => {
            if (edge.logger !== undefined) edge.logger.warn({ err: (error as Error).message }, "pruning failed; the next milestone tries again");
            else console.error(`chrysalis pruning: ${(error as Error).message}`);
          },
        });
      }
    }
    if (options.mqtt !== undefined && options.mqtt !== false) mqtt = await createMqttBridge(node, options.mqtt);
    if (gossipSetup !== undefined) {
      ({ gossip, network } = await startGossip(node, gossipSetup, coordinator, storage, edge));
      edge.metrics?.watchGossip(gossip, network);
    }
  } catch (error) {
    clearInterval(sweeper);
    await gossip?.stop().catch(() => undefined);
    network?.close();
    await mqtt?.close();
    await node.close();
    throw error;
  }
  const serveOptions: Parameters<typeof serve>[1] = {
    edge,
    // What cannot finish within the grace period (PoW in flight) is answered 503 with Retry-After, not cut off.
    onGraceExpired: () => node.shutdown(),
    onClose: async () => {
      clearInterval(sweeper);
      await node.close();
    },
  };
  if (options.host !== undefined) serveOptions.host = options.host;
  if (options.port !== undefined) serveOptions.port = options.port;
  if (mqtt !== undefined) serveOptions.onUpgrade = mqtt.handleUpgrade;
  let server: RunningServer;
  try {
    server = await serve(handler, serveOptions);
  } catch (error) {
    clearInterval(sweeper);
    await mqtt?.close();
    await node.close();
    throw new UsageError(`cannot listen on ${options.host ?? "127.0.0.1"}:${options.port ?? 0}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  coordinator?.start();
  pruner?.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await coordinator?.stop();
      // Before the server's close closes the store: the step in flight finishes, no new one starts.
      await pruner?.stop();
      await gossip?.stop();
      network?.close();
      await mqtt?.close();
      await server.close();
    })());
  const identitiesFile = options.identitiesFile;
  async function reloadIdentities(): Promise<number> {
    if (identitiesFile === undefined) return registry.size;
    // Read whole and checked before it replaces anything: a broken file leaves the running registry as it was.
    const fresh = await loadIdentityRegistry(identitiesFile);
    registry.replaceWith(fresh);
    return registry.size;
  }
  return { node, storage, server, edge, jwt: guarded, registry, reloadIdentities, coordinator, mqtt, pruner, gossip, network, close };
}

/**
 * Starts peering: the node's side of gossip (NetworkNode) trusting the given milestone keys, the node's own
 * coordinator's, or those of the snapshot the store was made from; the libp2p identity from the setup, else a seed kept
 * in the store; then the gossip part, listening and dialling its static peers.
 */
async function startGossip(node: ChrysalisNode, setup: GossipSetup, coordinator: Coordinator | undefined, storage: StoreOpenResult, edge: Edge): Promise<{ gossip: Gossip; network: NetworkNode }> {
  const keys = new Map<string, Uint8Array>();
  const add = (key: Uint8Array): void => void keys.set(toHex(key), key);
  for (const key of setup.milestoneKeys ?? []) add(key);
  for (const key of coordinator?.publicKeys ?? []) add(fromHex(key, "coordinator public key", 32));
  if (keys.size === 0) for (const key of storage.coordinatorPublicKeys ?? []) add(fromHex(key, "snapshot coordinator key", 32));
  const logger = edge.logger;
  const network = new NetworkNode(node, {
    milestoneKeys: [...keys.values()],
    milestoneKeyCount: setup.milestoneKeyCount,
    followsPeers: coordinator === undefined && (setup.peers ?? []).length > 0,
    onError: (error) => {
      if (logger !== undefined) logger.error({ err: (error as Error).message }, "confirming a milestone from the network failed; this node stops confirming");
      else console.error(`chrysalis network: ${(error as Error).message}`);
    },
  });
  const identity = setup.identity ?? p2pIdentityFromSeed(await node.store.secret(P2P_IDENTITY_SECRET, () => globalThis.crypto.getRandomValues(new Uint8Array(32))));
  const gossip = createGossip({
    ...setup.limits,
    node: network,
    identity,
    listen: setup.bind ?? [DEFAULT_P2P_BIND],
    peers: setup.peers ?? [],
    onEvent: (event) => {
      if (logger === undefined) return;
      if (event.type === "dropped") logger.warn({ peer: event.peerId, reason: event.reason, detail: event.error }, "a peer was dropped");
      else if (event.type === "error") logger.warn({ err: (event.error as Error).message }, "gossip failed");
      else logger.debug({ ...event }, `peer ${event.type}`);
    },
  });
  network.attach(gossip);
  try {
    await gossip.start();
  } catch (error) {
    network.close();
    throw new UsageError(`gossip cannot listen on ${(setup.bind ?? [DEFAULT_P2P_BIND]).join(", ")}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (give another --p2p-bind, or --no-p2p)`);
  }
  return { gossip, network };
}

/**
 * Why a coordinator signing with `publicKeys` (hex; undefined: a key the store would make) cannot continue the milestones
 * of a store made from a snapshot signed by `expected`, or undefined when it can (or the store came from no snapshot).
 */
function coordinatorKeysProblem(expected: readonly string[] | undefined, publicKeys: readonly string[] | undefined): string | undefined {
  if (expected === undefined || expected.length === 0) return undefined;
  const wanted = expected.map((k) => k.toLowerCase()).sort();
  if (publicKeys !== undefined && publicKeys.map((k) => k.toLowerCase()).sort().join() === wanted.join()) return undefined;
  return `this store continues the milestones of a snapshot signed by ${wanted.join(", ")}: pass the same --coordinator-key-file as the node the snapshot came from`;
}

/**
 * Reads coordinator keys: one Ed25519 seed per line, 64 hex characters or Base58 (of the 32-byte seed, or of seed ‖
 * public key); blank lines and lines starting with # are skipped.
 */
export async function loadCoordinatorKeys(file: string): Promise<Uint8Array[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the coordinator key file ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  const keys: Uint8Array[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${file}: line ${i + 1}`;
    let seed: Uint8Array;
    if (/^[0-9a-fA-F]{64}$/.test(line)) seed = fromHex(line, where, 32);
    else {
      let bytes: Uint8Array;
      try {
        bytes = base58Decode(line, where);
      } catch {
        throw new UsageError(`${where}: a coordinator key is an Ed25519 seed in hex (64 characters) or Base58`);
      }
      if (bytes.length === 64 && toHex(ed25519PublicKey(bytes.subarray(0, 32))) !== toHex(bytes.subarray(32))) {
        throw new UsageError(`${where}: the public half does not match the seed`);
      }
      if (bytes.length !== 32 && bytes.length !== 64) throw new UsageError(`${where}: a coordinator key is a 32-byte Ed25519 seed`);
      seed = bytes.slice(0, 32);
    }
    keys.push(seed);
  });
  if (keys.length === 0) throw new UsageError(`${file}: no coordinator key in it`);
  return keys;
}

/** The text of an error's cause, when it has one (a driver's or the file system's words), for the log. */
function causeOf(error: Error): string | undefined {
  const cause = error.cause;
  return cause === undefined ? undefined : cause instanceof Error ? cause.message : String(cause);
}
