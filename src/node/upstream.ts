// UpstreamStore: a NodeStore that forwards to a real node's REST API, so a gateway built on this library submits to a
// live network: POST /api/v1/messages with the raw bytes; messages, metadata, tips and info read from the upstream.
// The upstream keeps the ledger and milestones; this gateway's own prove-ownership state stays in its memory.
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { TESTNET_HRP } from "../bytes/limits.js";
import { decodeMessage } from "../model/codec.js";
import { NodeError } from "./errors.js";
import type { NodeInfo } from "./pipeline.js";
import type {
  AcceptResult,
  Acceptance,
  AddressBalance,
  ClaimRecord,
  LedgerSnapshot,
  PendingOutput,
  MessageMetadata,
  MilestoneRecord,
  NodeStore,
  OutputRecord,
  PruneStep,
  StoredMessage,
  StoreOpenOptions,
  StoreOpenResult,
  StoreStats,
  UtxoChanges,
} from "./store/contract.js";
import { MemoryStore } from "./store/memory.js";

/** How an UpstreamStore talks to its upstream node. */
export interface UpstreamOptions {
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Extra headers on every request (an API key, a JWT). */
  headers?: Record<string, string>;
  /** Milliseconds before a request to the upstream is abandoned. Default 30 s. */
  timeoutMs?: number;
}

// Responses from the upstream are read with a limit too: a misbehaving upstream must not exhaust our memory.
const MAX_UPSTREAM_BODY = 1 << 20;

/**
 * A gateway's store: messages go to and come from an upstream node's REST API, which keeps the ledger, milestones and
 * Tangle. What only the upstream keeps (outputs, balances, milestones, claims, pruning, snapshots, statistics) throws
 * NodeError NOT_SUPPORTED here; the upstream's failures are UPSTREAM_FAILED (502, or the upstream's own 4xx). Nonces,
 * revocations and secrets stay in this process's memory, shared with no other gateway.
 */
export class UpstreamStore implements NodeStore {
  readonly engine = "upstream";
  /** None: the upstream decides which parents are solid. */
  readonly entryPoints: ReadonlyMap<string, number> = new Map();
  /** The upstream node's URL without a trailing slash; `/api/v1/…` paths are appended to it. */
  readonly baseUrl: string;
  // Redeemed nonces, revoked tokens and secrets of this gateway process.
  readonly #local = new MemoryStore({ entryPoints: [] });
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;

  constructor(baseUrl: string, options: UpstreamOptions = {}) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new ProtocolError("INVALID_ARGUMENT", "the upstream URL is not a valid URL", { path: "baseUrl" });
    }
    this.baseUrl = url.href.replace(/\/+$/, "");
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#headers = options.headers ?? {};
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  async #request(path: string, init: RequestInit = {}): Promise<{ status: number; body: Uint8Array; contentType: string }> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.baseUrl}${path}`, {
        ...init,
        headers: { ...this.#headers, ...(init.headers as Record<string, string> | undefined) },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      throw new NodeError("UPSTREAM_FAILED", `the upstream node did not answer ${path}: ${(error as Error).message}`, { cause: error });
    }
    const length = Number(response.headers.get("content-length") ?? "0");
    if (length > MAX_UPSTREAM_BODY) {
      await response.body?.cancel();
      throw new NodeError("UPSTREAM_FAILED", `the upstream's answer to ${path} is too large`);
    }
    const body = new Uint8Array(await response.arrayBuffer());
    if (body.length > MAX_UPSTREAM_BODY) throw new NodeError("UPSTREAM_FAILED", `the upstream's answer to ${path} is too large`);
    return { status: response.status, body, contentType: response.headers.get("content-type") ?? "" };
  }

  async #json(path: string): Promise<unknown> {
    const { status, body } = await this.#request(path, { headers: { accept: "application/json" } });
    const parsed = parseJson(body);
    if (status < 200 || status > 299) throw upstreamError(status, parsed, path);
    return parsed;
  }

  /** Checks that the upstream serves `options.network`. The gateway keeps no ledger of its own. */
  async open(options: StoreOpenOptions): Promise<StoreOpenResult> {
    const info = await this.info();
    if (info.networkId !== options.network) throw new NodeError("STORE_WRONG_NETWORK", `the upstream serves network ${info.networkId}, not ${options.network}`);
    await this.#local.open({ network: options.network });
    return { created: false, ledger: false };
  }

  async close(): Promise<void> {
    await this.#local.close();
  }

  /** Submits the message's bytes upstream (put): the claim and milestone are the upstream's to decide, and `stored`
   * is always true, since the upstream does not say whether it held the message already. */
  async accept(acceptance: Acceptance): Promise<AcceptResult> {
    return { stored: await this.put(acceptance) };
  }

  /** POSTs the message's canonical bytes to the upstream's /api/v1/messages; throws UPSTREAM_FAILED when it refuses
   * them (with its 4xx status) or answers another message id. */
  async put(entry: StoredMessage): Promise<boolean> {
    const { status, body } = await this.#request("/api/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/octet-stream", accept: "application/json" },
      body: entry.bytes as Uint8Array<ArrayBuffer>,
    });
    const parsed = parseJson(body);
    if (status < 200 || status > 299) throw upstreamError(status, parsed, "/api/v1/messages");
    const id = dataField(parsed, "messageId");
    if (typeof id === "string" && id.toLowerCase() !== entry.id) {
      throw new NodeError("UPSTREAM_FAILED", `the upstream stored the message under id ${id}, not ${entry.id}`);
    }
    return true;
  }

  /** The message's bytes from the upstream's GET /messages/:id/raw, decoded here; undefined on its 404. */
  async get(id: string): Promise<StoredMessage | undefined> {
    const { status, body } = await this.#request(`/api/v1/messages/${encodeURIComponent(id)}/raw`, { headers: { accept: "application/octet-stream" } });
    if (status === 404) return undefined;
    if (status < 200 || status > 299) throw upstreamError(status, parseJson(body), "/api/v1/messages/:id/raw");
    return { id: id.toLowerCase(), bytes: body, message: decodeMessage(body) };
  }

  /** Whether the upstream knows the message (GET /messages/:id answers other than 404). */
  async has(id: string): Promise<boolean> {
    const { status, body } = await this.#request(`/api/v1/messages/${encodeURIComponent(id)}`, { headers: { accept: "application/json" } });
    if (status === 404) return false;
    if (status < 200 || status > 299) throw upstreamError(status, parseJson(body), "/api/v1/messages/:id");
    return true;
  }

  /** At most `max` of the upstream's tips (GET /tips), lowercase hex: a gateway selects none of its own. */
  async tips(max: number): Promise<string[]> {
    const ids = dataField(await this.#json("/api/v1/tips"), "tipMessageIds");
    if (!Array.isArray(ids) || !ids.every((t) => typeof t === "string" && /^[0-9a-fA-F]{64}$/.test(t))) {
      throw new NodeError("UPSTREAM_FAILED", "the upstream's /api/v1/tips has no list of 64-hex tipMessageIds");
    }
    return (ids as string[]).slice(0, max).map((t) => t.toLowerCase());
  }

  async findByIndex(index: Uint8Array, max = 1000): Promise<string[]> {
    const ids = dataField(await this.#json(`/api/v1/messages?index=${toHex(index)}`), "messageIds");
    if (!Array.isArray(ids)) throw new NodeError("UPSTREAM_FAILED", "the upstream's index lookup has no messageIds list");
    return ids.filter((t): t is string => typeof t === "string").slice(0, max);
  }

  /** The upstream's metadata of the message (GET /messages/:id/metadata); undefined on its 404. Arrival time and cone
   * roots are not in Hornet's JSON: they read as 0. */
  async metadata(id: string): Promise<MessageMetadata | undefined> {
    const { status, body } = await this.#request(`/api/v1/messages/${encodeURIComponent(id)}/metadata`, { headers: { accept: "application/json" } });
    if (status === 404) return undefined;
    const data = dataField(parseJson(body), undefined) as Record<string, unknown> | undefined;
    if (status < 200 || status > 299 || typeof data !== "object" || data === null) throw upstreamError(status, parseJson(body), "/api/v1/messages/:id/metadata");
    const referenced = typeof data.referencedByMilestoneIndex === "number" ? data.referencedByMilestoneIndex : undefined;
    const state = data.ledgerInclusionState;
    return {
      arrivalTime: 0,
      solid: data.isSolid === true,
      coneRoots: { oldest: 0, youngest: 0 },
      referencedByMilestoneIndex: referenced,
      milestoneIndex: typeof data.milestoneIndex === "number" ? data.milestoneIndex : undefined,
      ledgerInclusionState: state === "noTransaction" || state === "included" || state === "conflicting" ? state : undefined,
      conflictReason: typeof data.conflictReason === "number" ? data.conflictReason : undefined,
    };
  }

  async children(id: string, max: number): Promise<string[]> {
    const ids = dataField(await this.#json(`/api/v1/messages/${encodeURIComponent(id)}/children`), "childrenMessageIds");
    return Array.isArray(ids) ? ids.filter((t): t is string => typeof t === "string").slice(0, max) : [];
  }

  // The ledger and milestones live upstream; a gateway's REST reads of them are forwarded by the HTTP layer, and its
  // upstream selects tips and confirms: a gateway keeps no Tangle, claims or confirmations of its own.
  /** Throws NOT_SUPPORTED: the upstream keeps the Tangle. */
  unreferenced(): Promise<string[]> {
    return notSupported("Tangle");
  }

  /** Throws NOT_SUPPORTED: the upstream decides spends. */
  claim(): Promise<ClaimRecord | undefined> {
    return notSupported("claims");
  }

  /** Throws NOT_SUPPORTED: the upstream decides spends. */
  pendingOutput(): Promise<PendingOutput | undefined> {
    return notSupported("pending outputs");
  }

  /** Throws NOT_SUPPORTED: the upstream confirms milestones. */
  confirmMilestone(): Promise<void> {
    return notSupported("milestones");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the ledger (the HTTP layer forwards GET /outputs/:id to it). */
  output(): Promise<OutputRecord | undefined> {
    return notSupported("outputs");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the ledger. */
  addressOutputs(): Promise<string[]> {
    return notSupported("address outputs");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the ledger. */
  addressBalance(): Promise<AddressBalance> {
    return notSupported("balances");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the milestones. */
  milestone(): Promise<MilestoneRecord | undefined> {
    return notSupported("milestones");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the milestones. */
  latestMilestone(): Promise<MilestoneRecord | undefined> {
    return notSupported("milestones");
  }

  /** Throws NOT_SUPPORTED: the upstream keeps the milestones. */
  utxoChanges(): Promise<UtxoChanges | undefined> {
    return notSupported("milestones");
  }

  // Ageing: the upstream prunes, snapshots and verifies its own store; a gateway has none of its own to age.
  /** Throws NOT_SUPPORTED: the upstream prunes its own store. */
  pruningIndex(): Promise<number> {
    return notSupported("milestones");
  }

  /** Throws NOT_SUPPORTED: the upstream prunes its own store. */
  prune(): Promise<PruneStep> {
    return notSupported("messages to prune");
  }

  /** Throws NOT_SUPPORTED: the upstream's own snapshot is the one to take. */
  readSnapshot(): Promise<LedgerSnapshot> {
    return notSupported("ledger to snapshot");
  }

  /** Throws NOT_SUPPORTED: a gateway has no store to count. */
  stats(): Promise<StoreStats> {
    return notSupported("store to count");
  }

  /** Throws NOT_SUPPORTED: a gateway has no store to measure. */
  bytes(): Promise<number> {
    return notSupported("store to measure");
  }

  /** Throws NOT_SUPPORTED: the upstream verifies its own store. */
  verify(): Promise<string | undefined> {
    return notSupported("store to verify");
  }

  redeemNonce(nonce: string, expiresAt: number): Promise<boolean> {
    return this.#local.redeemNonce(nonce, expiresAt);
  }

  revokeToken(jti: string, expiresAt: number): Promise<void> {
    return this.#local.revokeToken(jti, expiresAt);
  }

  isTokenRevoked(jti: string): Promise<boolean> {
    return this.#local.isTokenRevoked(jti);
  }

  secret(name: string, create: () => Uint8Array): Promise<Uint8Array> {
    return this.#local.secret(name, create);
  }

  sweep(now: number): Promise<void> {
    return this.#local.sweep(now);
  }

  /** Relays a read to the upstream as it is (path and query): its status, content type and body (size-limited). */
  async forward(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const accept = request.headers.get("accept");
    const { status, body, contentType } = await this.#request(`${url.pathname}${url.search}`, { method: "GET", headers: accept === null ? {} : { accept } });
    const headers: Record<string, string> = contentType === "" ? {} : { "content-type": contentType };
    return new Response(status === 204 || status === 304 || body.length === 0 ? null : (body as Uint8Array<ArrayBuffer>), { status, headers });
  }

  /** The upstream's /api/v1/info `data` (network name in `networkId`, `bech32HRP`, `minPoWScore`). */
  async info(): Promise<NodeInfo> {
    const data = dataField(await this.#json("/api/v1/info"), undefined) as Partial<NodeInfo> | undefined;
    if (typeof data !== "object" || data === null || typeof data.networkId !== "string" || typeof data.minPoWScore !== "number") {
      throw new NodeError("UPSTREAM_FAILED", "the upstream's /api/v1/info lacks networkId or minPoWScore");
    }
    return {
      name: typeof data.name === "string" ? data.name : "upstream",
      version: typeof data.version === "string" ? data.version : "",
      isHealthy: data.isHealthy !== false,
      networkId: data.networkId,
      bech32HRP: typeof data.bech32HRP === "string" ? data.bech32HRP : TESTNET_HRP,
      minPoWScore: data.minPoWScore,
      features: Array.isArray(data.features) ? data.features.filter((f): f is string => typeof f === "string") : [],
    };
  }
}

async function notSupported(what: string): Promise<never> {
  throw new NodeError("NOT_SUPPORTED", `a gateway keeps no ${what}: ask the upstream node`);
}

function parseJson(body: Uint8Array): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(body)) as unknown;
  } catch {
    return undefined;
  }
}

function dataField(json: unknown, key: string | undefined): unknown {
  if (typeof json !== "object" || json === null) return undefined;
  const data = (json as { data?: unknown }).data;
  if (key === undefined) return data;
  if (typeof data !== "object" || data === null) return undefined;
  return Object.prototype.hasOwnProperty.call(data, key) ? (data as Record<string, unknown>)[key] : undefined;
}

/**
 * A 4xx from the upstream keeps its status (the message was refused there, the submitter should know why), except
 * 401/403/407: those concern this gateway's own credentials, not the submitter's, so they are a 502 like any 5xx.
 */
function upstreamError(status: number, json: unknown, path: string): NodeError {
  let message = `the upstream answered ${status} to ${path}`;
  if (typeof json === "object" && json !== null) {
    const error = (json as { error?: { message?: unknown } }).error;
    if (typeof error?.message === "string") message = `upstream: ${error.message.slice(0, 300)}`;
  }
  const credentials = status === 401 || status === 403 || status === 407;
  if (credentials) message = `the upstream refused this gateway's credentials (${status}): ${message}`;
  return new NodeError("UPSTREAM_FAILED", message, { status: status >= 400 && status < 500 && !credentials ? status : 502 });
}
