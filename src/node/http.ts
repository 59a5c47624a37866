// Web-standard HTTP handlers, `(Request) => Promise<Response>`, for the node API v1 and prove-ownership routes:
// they run under node:http (see server.ts), Hono, Fastify, Deno, Bun and workers alike.
//
// Routes and JSON shapes (decided here, documented in the README):
//   GET  /authentication/prove-ownership/:identityId  → 200 {"nonce":"<40 hex>","data":{"nonce":…}}
//   POST /authentication/prove-ownership/:identityId  {"signedNonce":"<128 hex>"} → 200 {"jwt":"…","data":{"jwt":…}}
//        (the original service answers the bare {nonce} / {jwt}; node-API clients read `data`, so both are sent)
//   POST /api/v1/messages  application/json (partial allowed) or application/octet-stream (raw bytes)
//        → 201 {"data":{"messageId":…}}, Location: <messageId> (as the reference node)
//   GET  /api/v1/messages/:id → {"data":<message JSON>};  /api/v1/messages/:id/raw → the bytes
//   GET  /api/v1/messages?index=<hex> → {"data":{"index","maxResults","count","messageIds"}}
//   GET  /api/v1/info → {"data":NodeInfo};  GET /api/v1/tips → {"data":{"tipMessageIds":[…]}}
// Errors: {"error":{"code":"<status>","message":…,"reason":"<stable code>","path":"<field>"}}.
import { concatBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, isLowerHex } from "../bytes/hex.js";
import { MAX_INDEX_LENGTH, MAX_MESSAGE_LENGTH, MESSAGE_ID_LENGTH, MIN_INDEX_LENGTH } from "../bytes/limits.js";
import { messageToJson } from "../model/json.js";
import { AuthError, bearerToken, wwwAuthenticate, type JwtClaims, type JwtService } from "../auth/index.js";
import { isAbortError, NodeError, statusOf } from "./errors.js";
import type { ChrysalisNode } from "./pipeline.js";

export type Handler = (request: Request) => Promise<Response>;

/** The two operations of prove-ownership (what createProveOwnership from chrysalis-core/auth returns). */
export interface ProveOwnershipService {
  issueNonce(identityId: string): Promise<string>;
  prove(identityId: string, signedNonce: string): Promise<string>;
}

export interface HandlerOptions {
  /** Enables the /authentication/prove-ownership routes. */
  proveOwnership?: ProveOwnershipService;
  /** Verifies the JWT on protected routes. */
  jwt?: JwtService;
  /** Whether POST /api/v1/messages needs a valid JWT. Default: true when `jwt` is given. */
  requireJwtForSubmit?: boolean;
  /** Largest JSON body accepted, in bytes. Default 256 KiB (a 32 KiB message is about 65 KiB of hex and keys). */
  maxJsonBytes?: number;
  /**
   * Allowed browser origin for CORS ("*" or one origin); unset sends no CORS headers. Preflights (OPTIONS) on known
   * routes then answer 204, and every answer carries Access-Control-Allow-Origin and exposes Location.
   */
  cors?: string;
  /** Called with errors that are bugs (answered 500 without details). Default: console.error. */
  onInternalError?: (error: unknown) => void;
}

export const DEFAULT_MAX_JSON_BYTES = 256 * 1024;

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;
const STATUS_TEXT: Record<number, string> = { 400: "bad request", 401: "unauthorized", 404: "not found", 405: "method not allowed", 413: "payload too large", 415: "unsupported media type", 429: "too many requests", 500: "internal error", 502: "bad gateway", 503: "service unavailable" };

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** The error body of the node API; `reason` and `path` are additions a client can match on. */
export function errorResponse(status: number, message: string, extra: { reason?: string | undefined; path?: string | undefined } = {}, headers: Record<string, string> = {}): Response {
  const error: Record<string, string> = { code: String(status), message };
  if (extra.reason !== undefined) error.reason = extra.reason;
  if (extra.path !== undefined) error.path = extra.path;
  return json(status, { error }, headers);
}

function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * Reads a request body up to `limit` bytes, counting while the stream flows: an oversized body is refused as soon
 * as the limit is passed (or at once from Content-Length), never buffered whole.
 */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
    throw new NodeError("BODY_TOO_LARGE", `the body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new NodeError("BODY_TOO_LARGE", `the body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
}

async function readJson(request: Request, limit: number): Promise<unknown> {
  if (mediaType(request) !== "application/json") throw new NodeError("UNSUPPORTED_MEDIA_TYPE", "send the body as application/json");
  const body = await readBody(request, limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    throw new ProtocolError("INVALID_JSON", "the body is not valid UTF-8");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProtocolError("INVALID_JSON", `malformed JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

function messageIdParam(raw: string): string {
  const id = raw.toLowerCase();
  if (!isLowerHex(id, MESSAGE_ID_LENGTH)) throw new ProtocolError("INVALID_HEX", "a message id is 64 hex characters", { path: "messageId" });
  return id;
}

function decodeParam(raw: string, path: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProtocolError("INVALID_ARGUMENT", "malformed percent-encoding", { path });
  }
}

interface Route {
  pattern: RegExp;
  methods: Record<string, (request: Request, params: string[], url: URL) => Promise<Response>>;
}

/** Builds the handler for a node (and, when configured, the prove-ownership service and JWT check). */
export function createHandler(node: ChrysalisNode, options: HandlerOptions = {}): Handler {
  const maxJson = options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES;
  const requireJwt = options.requireJwtForSubmit ?? options.jwt !== undefined;
  if (requireJwt && options.jwt === undefined) throw new ProtocolError("INVALID_ARGUMENT", "requireJwtForSubmit needs a JwtService", { path: "jwt" });
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error("chrysalis node: internal error", error));

  async function authorize(request: Request): Promise<JwtClaims | undefined> {
    if (!requireJwt) return undefined;
    const token = bearerToken(request.headers);
    return options.jwt!.verify(token);
  }

  async function submit(request: Request): Promise<Response> {
    await authorize(request);
    const type = mediaType(request);
    let result;
    if (type === "application/octet-stream") {
      const bytes = await readBody(request, MAX_MESSAGE_LENGTH);
      result = await node.submitMessage(bytes, { signal: request.signal });
    } else if (type === "application/json") {
      const body = await readJson(request, maxJson);
      result = await node.submitMessage(body, { signal: request.signal });
    } else {
      throw new NodeError("UNSUPPORTED_MEDIA_TYPE", "send the message as application/json or application/octet-stream");
    }
    return json(201, { data: { messageId: result.messageId } }, { location: result.messageId });
  }

  async function stored(id: string) {
    const entry = await node.getMessage(messageIdParam(id));
    if (entry === undefined) throw new NodeError("NOT_FOUND", `message ${id.toLowerCase()} not found`, { path: "messageId" });
    return entry;
  }

  const routes: Route[] = [
    {
      pattern: /^\/api\/v1\/info$/,
      methods: { GET: async () => json(200, { data: node.info }) },
    },
    {
      pattern: /^\/api\/v1\/tips$/,
      methods: { GET: async () => json(200, { data: { tipMessageIds: await node.tips() } }) },
    },
    {
      pattern: /^\/api\/v1\/messages$/,
      methods: {
        POST: submit,
        GET: async (_request, _params, url) => {
          const indexText = url.searchParams.get("index");
          if (indexText === null) throw new ProtocolError("INVALID_ARGUMENT", "query parameter index is required", { path: "index" });
          const index = fromHex(indexText, "index");
          if (index.length < MIN_INDEX_LENGTH || index.length > MAX_INDEX_LENGTH) {
            throw new ProtocolError("LENGTH_OUT_OF_RANGE", `an index is ${MIN_INDEX_LENGTH} .. ${MAX_INDEX_LENGTH} bytes`, { path: "index" });
          }
          const maxResults = 1000;
          const messageIds = await node.store.findByIndex(index, maxResults);
          return json(200, { data: { index: indexText.toLowerCase(), maxResults, count: messageIds.length, messageIds } });
        },
      },
    },
    {
      pattern: /^\/api\/v1\/messages\/([^/]+)$/,
      methods: { GET: async (_request, [id]) => json(200, { data: messageToJson((await stored(id!)).message) }) },
    },
    {
      pattern: /^\/api\/v1\/messages\/([^/]+)\/raw$/,
      methods: {
        GET: async (_request, [id]) => {
          const entry = await stored(id!);
          return new Response(entry.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: { "content-type": "application/octet-stream" } });
        },
      },
    },
  ];
  const service = options.proveOwnership;
  if (service !== undefined) {
    routes.push({
      pattern: /^\/authentication\/prove-ownership\/([^/]+)$/,
      methods: {
        GET: async (_request, [raw]) => {
          const nonce = await service.issueNonce(decodeParam(raw!, "identityId"));
          return json(200, { nonce, data: { nonce } });
        },
        POST: async (request, [raw]) => {
          const identityId = decodeParam(raw!, "identityId");
          const body = await readJson(request, 4096);
          const signedNonce = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { signedNonce?: unknown }).signedNonce : undefined;
          if (typeof signedNonce !== "string") throw new ProtocolError("INVALID_JSON", "the body must be {\"signedNonce\": \"<128 hex characters>\"}", { path: "signedNonce" });
          const jwt = await service.prove(identityId, signedNonce);
          return json(200, { jwt, data: { jwt } });
        },
      },
    });
  }

  const cors = options.cors;
  function withCors(response: Response): Response {
    if (cors === undefined) return response;
    response.headers.set("access-control-allow-origin", cors);
    response.headers.set("access-control-expose-headers", "location, www-authenticate, retry-after");
    if (cors !== "*") response.headers.append("vary", "origin");
    return response;
  }

  return async function handle(request: Request): Promise<Response> {
    return withCors(await route(request));
  };

  async function route(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url);
      const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
      for (const r of routes) {
        const match = r.pattern.exec(path);
        if (match === null) continue;
        if (request.method === "OPTIONS" && cors !== undefined) {
          return new Response(null, {
            status: 204,
            headers: {
              "access-control-allow-methods": [...Object.keys(r.methods), "OPTIONS"].join(", "),
              "access-control-allow-headers": "content-type, authorization, authentication",
              "access-control-max-age": "600",
            },
          });
        }
        const method = request.method === "HEAD" ? "GET" : request.method;
        const run = r.methods[method];
        if (run === undefined) {
          const allow = Object.keys(r.methods).join(", ");
          return errorResponse(405, `${request.method} is not allowed here; use ${allow}`, { reason: "METHOD_NOT_ALLOWED" }, { allow });
        }
        return await run(request, match.slice(1), url);
      }
      return errorResponse(404, `no route for ${path.slice(0, 200)}`, { reason: "NOT_FOUND" });
    } catch (error) {
      if (isAbortError(error) || request.signal.aborted) return errorResponse(499, "the client closed the request", { reason: "ABORTED" });
      const status = statusOf(error);
      if (status === 500) {
        onInternalError(error);
        return errorResponse(500, "internal error", {});
      }
      const e = error as ProtocolError;
      const headers: Record<string, string> = {};
      if (status === 401) headers["www-authenticate"] = error instanceof AuthError ? wwwAuthenticate(error) : "Bearer";
      if (status === 413) headers.connection = "close";
      if (status === 503 || status === 429) headers["retry-after"] = "1";
      return errorResponse(status, e.message || STATUS_TEXT[status] || "error", { reason: e.code, path: e.path }, headers);
    }
  }
}
