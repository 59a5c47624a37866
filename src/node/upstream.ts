// UpstreamStore: a MessageStore that forwards to a real node's REST API, so a gateway built on this library
// submits to a live network: POST /api/v1/messages with the raw bytes, tips and info read from the upstream.
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { TESTNET_HRP } from "../bytes/limits.js";
import { decodeMessage } from "../model/codec.js";
import { NodeError } from "./errors.js";
import type { MessageStore, StoredMessage } from "./storage.js";
import type { NodeInfo } from "./pipeline.js";

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

export class UpstreamStore implements MessageStore {
  readonly baseUrl: string;
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

  async get(id: string): Promise<StoredMessage | undefined> {
    const { status, body } = await this.#request(`/api/v1/messages/${encodeURIComponent(id)}/raw`, { headers: { accept: "application/octet-stream" } });
    if (status === 404) return undefined;
    if (status < 200 || status > 299) throw upstreamError(status, parseJson(body), "/api/v1/messages/:id/raw");
    return { id: id.toLowerCase(), bytes: body, message: decodeMessage(body) };
  }

  async has(id: string): Promise<boolean> {
    const { status, body } = await this.#request(`/api/v1/messages/${encodeURIComponent(id)}`, { headers: { accept: "application/json" } });
    if (status === 404) return false;
    if (status < 200 || status > 299) throw upstreamError(status, parseJson(body), "/api/v1/messages/:id");
    return true;
  }

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
