// Assembling a running node for `serve` and `demo`: node + optional ledger + prove-ownership + JWT (revocable, refused
// once its identity is gone) + the edge (limits, log, metrics) + HTTP server, and reading an identity registry file.
import { readFile } from "node:fs/promises";
import { base58Decode } from "../bytes/base58.js";
import { fromHex } from "../bytes/hex.js";
import { ed25519PublicKey } from "../crypto/ed25519.js";
import {
  createEdDsaJwt,
  createHs256Jwt,
  createProveOwnership,
  guardJwt,
  MemoryIdentityRegistry,
  publicKeyFromDidDocument,
  type GuardedJwtService,
  type JwtService,
} from "../auth/index.js";
import {
  createEdge,
  createHandler,
  createNode,
  MemoryStore,
  serve,
  watchNode,
  type ChrysalisNode,
  type Edge,
  type EdgeLimitsInput,
  type LogOptions,
  type NodeOptions,
  type NodeStore,
  type RunningServer,
} from "../node/index.js";
import { UsageError } from "./io.js";

export interface NodeSetup {
  node: ChrysalisNode;
  server: RunningServer;
  edge: Edge;
  /** The JWT service the node checks submissions with (revocation and registration included), when JWTs are on. */
  jwt: GuardedJwtService | undefined;
  registry: MemoryIdentityRegistry;
  /** Reads `identitiesFile` again and replaces the registry with it (SIGHUP); returns how many identities it holds. */
  reloadIdentities(): Promise<number>;
  /** Stops the server (in-flight requests finish within the grace period, the rest are answered 503), the node's
   * workers and the store. */
  close(): Promise<void>;
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
}

/** Where a node's store lives, as serve is told (--data-dir, --database). */
export interface StoreLocation {
  dataDir?: string | undefined;
  database?: string | undefined;
}

/**
 * Opens the store a running node shares (for `chrysalis auth revoke`). Only a store on disk or in a database can be
 * reached from another process; this build's one engine is the in-memory store of one process, so until the storage
 * engines (--data-dir, --database) are part of it, this refuses with what to do instead.
 */
export async function openSharedStore(location: StoreLocation): Promise<NodeStore> {
  if (location.dataDir === undefined && location.database === undefined) {
    throw new UsageError("give the store the node uses: --data-dir <dir> or --database <postgres://…> (or CHRYSALIS_DATABASE_URL)");
  }
  throw new UsageError("this build has no engine for --data-dir or --database yet; revoke through the library instead (the jwt of startNode, or revokeJwt on the node's store)");
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
  const node = createNode({ ...options, store });
  watchNode(edge, node);
  // Every check of a JWT also asks the store whether it was revoked and the registry whether its subject still exists.
  const guarded = jwt === undefined ? undefined : guardJwt(jwt, { revocations: store, resolver: registry });
  const handlerOptions: Parameters<typeof createHandler>[1] = { maxJsonBytes: edge.limits.maxJsonBytes };
  if (jwt !== undefined && guarded !== undefined) {
    handlerOptions.jwt = guarded;
    const lifetime = options.nonceLifetime !== undefined ? { lifetime: options.nonceLifetime } : {};
    handlerOptions.proveOwnership = createProveOwnership({ store, resolver: registry, jwt, ...lifetime });
  }
  if (options.requireJwtForSubmit !== undefined) handlerOptions.requireJwtForSubmit = options.requireJwtForSubmit;
  if (options.cors !== undefined) handlerOptions.cors = options.cors;
  const handler = createHandler(node, handlerOptions);
  const sweeper = setInterval(() => {
    store.sweep(Date.now()).catch((error: unknown) => edge.logger?.warn({ err: (error as Error).message }, "sweeping expired nonces and revocations failed"));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
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
  let server: RunningServer;
  try {
    server = await serve(handler, serveOptions);
  } catch (error) {
    clearInterval(sweeper);
    await node.close();
    throw new UsageError(`cannot listen on ${options.host ?? "127.0.0.1"}:${options.port ?? 0}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const identitiesFile = options.identitiesFile;
  async function reloadIdentities(): Promise<number> {
    if (identitiesFile === undefined) return registry.size;
    // Read whole and checked before it replaces anything: a broken file leaves the running registry as it was.
    const fresh = await loadIdentityRegistry(identitiesFile);
    registry.replaceWith(fresh);
    return registry.size;
  }
  return { node, server, edge, jwt: guarded, registry, reloadIdentities, close: () => server.close() };
}
