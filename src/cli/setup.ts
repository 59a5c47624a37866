// Assembling a running node for `serve` and `demo`: node + optional ledger + prove-ownership + JWT + HTTP server,
// and reading an identity registry file.
import { readFile } from "node:fs/promises";
import { base58Decode } from "../bytes/base58.js";
import { fromHex } from "../bytes/hex.js";
import { ed25519PublicKey } from "../crypto/ed25519.js";
import {
  createEdDsaJwt,
  createHs256Jwt,
  createProveOwnership,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  publicKeyFromDidDocument,
  type JwtService,
} from "../auth/index.js";
import { createHandler, createNode, serve, type ChrysalisNode, type NodeOptions, type RunningServer, type StoreOpenResult } from "../node/index.js";
import { UsageError } from "./io.js";

export interface NodeSetup {
  node: ChrysalisNode;
  /** What opening the store found: a new store (genesis applied) or an existing one, and whether it keeps a ledger. */
  storage: StoreOpenResult;
  server: RunningServer;
  jwt: JwtService | undefined;
  registry: MemoryIdentityRegistry;
  /** Stops the server (in-flight requests finish) and the node's workers. */
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
  /** CORS origin for browser clients ("*" or one origin). */
  cors?: string;
}

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
  const node = createNode(options);
  // The store opens before the port does: a store that cannot open (a damaged data directory, an unreachable database,
  // another network) fails the start with its one-line reason; a node never serves on no store or a fresh one instead.
  let storage: StoreOpenResult;
  try {
    storage = await node.ready();
  } catch (error) {
    await node.close().catch(() => undefined);
    throw error;
  }
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
  const handlerOptions: Parameters<typeof createHandler>[1] = {};
  if (jwt !== undefined) {
    handlerOptions.jwt = jwt;
    handlerOptions.proveOwnership = createProveOwnership({ store: new MemoryNonceStore(), resolver: registry, jwt });
  }
  if (options.requireJwtForSubmit !== undefined) handlerOptions.requireJwtForSubmit = options.requireJwtForSubmit;
  if (options.cors !== undefined) handlerOptions.cors = options.cors;
  const handler = createHandler(node, handlerOptions);
  const serveOptions: Parameters<typeof serve>[1] = { onClose: () => node.close() };
  if (options.host !== undefined) serveOptions.host = options.host;
  if (options.port !== undefined) serveOptions.port = options.port;
  let server: RunningServer;
  try {
    server = await serve(handler, serveOptions);
  } catch (error) {
    await node.close();
    throw new UsageError(`cannot listen on ${options.host ?? "127.0.0.1"}:${options.port ?? 0}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { node, storage, server, jwt, registry, close: () => server.close() };
}
