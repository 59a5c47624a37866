// Fixtures for the node, client and end-to-end tests: wallets, a node with its HTTP server on 127.0.0.1 (ephemeral
// port), and small message bodies. Every server started here is closed by the test that starts it.
import { toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { ed25519Address, ed25519PublicKey } from "../src/crypto/index.js";
import { outputId } from "../src/model/ids.js";
import { createHs256Jwt, createProveOwnership, generateIdentityKeyPair, MemoryIdentityRegistry, MemoryNonceStore, type LocalJwtService } from "../src/auth/index.js";
import { createEdge, createHandler, createNode, MemoryLedger, serve, type ChrysalisNode, type EdgeLimitsInput, type HandlerOptions, type NodeOptions, type RunningServer } from "../src/node/index.js";

export const GENESIS_TX = "0".repeat(64);

export interface Wallet {
  seed: Uint8Array;
  publicKey: Uint8Array;
  address: Uint8Array;
}

export function wallet(): Wallet {
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const publicKey = ed25519PublicKey(seed);
  return { seed, publicKey, address: ed25519Address(publicKey) };
}

/** A ledger holding the total supply at `owner`'s address in output GENESIS_TX:0. */
export function genesisLedger(owner: Wallet, amount = TOTAL_SUPPLY): MemoryLedger {
  const ledger = new MemoryLedger();
  ledger.add(outputId(GENESIS_TX, 0), { type: 0, address: { type: 0, address: owner.address }, amount });
  return ledger;
}

export function indexationJson(text: string, data = ""): { payload: { type: 2; index: string; data: string } } {
  return { payload: { type: 2, index: toHex(new TextEncoder().encode(text)), data: toHex(new TextEncoder().encode(data)) } };
}

export interface Running {
  node: ChrysalisNode;
  server: RunningServer;
  url: string;
  jwt: LocalJwtService | undefined;
  registry: MemoryIdentityRegistry;
  identity: { id: string; secretKey: string; publicKey: Uint8Array };
  clock: { now: number };
  close(): Promise<void>;
}

export interface StartOptions extends NodeOptions {
  auth?: boolean;
  /** Nonce lifetime in seconds. */
  nonceLifetime?: number;
  /** The edge's limits (default: the public-node defaults). */
  limits?: EdgeLimitsInput;
  handler?: Omit<HandlerOptions, "jwt" | "proveOwnership">;
  jwtLifetime?: number;
}

/** A node served on 127.0.0.1:0; with `auth`, prove-ownership and JWT (HS256, injectable clock) and one identity. */
export async function startNode(options: StartOptions = {}): Promise<Running> {
  const node = createNode({ network: "chrysalis-test", minPoWScore: 1, ...options });
  const edge = createEdge({ limits: options.limits ?? {} });
  const registry = new MemoryIdentityRegistry();
  const keys = generateIdentityKeyPair();
  const identity = { id: "did:iota:test-identity", ...keys };
  registry.add(identity.id, keys.publicKey);
  const clock = { now: Date.now() };
  let jwt: LocalJwtService | undefined;
  const handlerOptions: HandlerOptions = { maxJsonBytes: edge.limits.maxJsonBytes, ...options.handler };
  if (options.auth === true) {
    jwt = createHs256Jwt({ secret: "a test secret of at least thirty-two bytes", lifetime: options.jwtLifetime ?? 60, now: () => clock.now });
    handlerOptions.jwt = jwt;
    const lifetime = options.nonceLifetime !== undefined ? { lifetime: options.nonceLifetime } : {};
    handlerOptions.proveOwnership = createProveOwnership({ store: new MemoryNonceStore({ now: () => clock.now }), resolver: registry, jwt, now: () => clock.now, ...lifetime });
  }
  const server = await serve(createHandler(node, handlerOptions), { host: "127.0.0.1", port: 0, edge, onGraceExpired: () => node.shutdown(), onClose: () => node.close() });
  return { node, server, url: server.url, jwt, registry, identity, clock, close: () => server.close() };
}

/** A raw fetch returning status, headers and the parsed JSON body (or undefined). */
export async function call(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; json: any; bytes: Uint8Array }> {
  const response = await fetch(url, init);
  const bytes = new Uint8Array(await response.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, bytes };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any; bytes: Uint8Array }> {
  return call(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** Polls `check` every 10 ms until it holds or `ms` pass. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
