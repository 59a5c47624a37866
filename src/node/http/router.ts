// The web-standard router under every HTTP route of the node: `(Request, context) => Promise<Response>`, so the same
// handler runs under node:http (server.ts), Hono, Deno, Bun and workers. It matches a route table, answers 404/405,
// CORS preflights and the error envelope, and reads bodies with a limit. No protocol rule lives here.
import { readAtMost, utf8 } from "../../bytes/bytes.js";
import { ProtocolError } from "../../bytes/errors.js";
import { isLowerHex } from "../../bytes/hex.js";
import { MESSAGE_ID_LENGTH } from "../../bytes/limits.js";
import { malformedJson } from "../../model/json-text.js";
import { AuthError, wwwAuthenticate } from "../../auth/index.js";
import { isAbortError, NodeError, publicMessage, statusOf } from "../errors.js";

/** What the transport knows about a request that a web-standard Request does not carry. */
export interface RequestContext {
  /** The client's address as the server edge sees it (after any trusted proxy). */
  readonly clientAddress?: string | undefined;
  /** The key the edge counts this client under (an IPv6 client's /64); default clientAddress. */
  readonly clientKey?: string | undefined;
  /** Set by the router when a route matches: its name, for the access log and the metrics. */
  route?: string | undefined;
  /** The edge's limits, asked before a matched route runs and before work a route discovers later. */
  readonly gate?: EdgeGate | undefined;
}

/** Each method throws (a 429 NodeError RATE_LIMITED carrying its retry time) to refuse the work. */
export interface EdgeGate {
  /** Before the named route runs for `method`. */
  route(name: string, method: string): void;
  /** Before the node mines a nonce for this request. */
  pow(): void;
}

/** A web-standard handler, fetch's shape, so that one handler runs under serve(), Hono, Deno, Bun or a worker; `context`
 * carries what only the transport knows. createHandler's answers every error in the error envelope, never rejecting. */
export type Handler = (request: Request, context?: RequestContext) => Promise<Response>;

/** One matched request, as a route's method sees it. */
export interface RouteCall {
  readonly request: Request;
  /** The pattern's capture groups, undecoded. */
  readonly params: readonly string[];
  /** The request URL, parsed on first use. */
  readonly url: URL;
  readonly context: RequestContext;
}

/**
 * An answer as the router and its routes build it: status, headers and the body at hand. The router's handler turns it
 * into a web-standard Response; the node's own server (server.ts) writes it as it is, sparing a Response and its body
 * stream on every request.
 */
export class Answer {
  readonly status: number;
  /** This answer's own: the router adds route and CORS headers to it and the server its Content-Length, in place. */
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array | null;

  constructor(status: number, headers: Record<string, string>, body: string | Uint8Array | null) {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }

  toResponse(): Response {
    return new Response(this.body as BodyInit | null, { status: this.status, headers: this.headers });
  }
}

/** What a route's method gives back: an Answer (json, bytesResponse) or any web-standard Response. */
export type Reply = Answer | Response;

export interface Route {
  /** A stable name for logs, metrics and the edge's rate classes ("messages"). */
  readonly name: string;
  readonly pattern: RegExp;
  readonly methods: Readonly<Record<string, (call: RouteCall) => Promise<Reply>>>;
  /** HEAD is answered as GET without a body unless this is true; then HEAD gets 405 (GET has effects, e.g. a nonce). */
  readonly noHead?: boolean;
  /** Headers put on every answer of the route, errors included (e.g. Cache-Control: no-store). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouterOptions {
  /** Allowed browser origin for CORS ("*" or one origin); unset sends no CORS headers. */
  cors?: string | undefined;
  /** Called with errors that are bugs (answered 500 without details). Default: console.error. */
  onInternalError?: ((error: unknown) => void) | undefined;
  /** Called with the node's own trouble answered 5xx (a store or upstream down, a miner failing), whose detailed
   * message the client does not get. Default: console.warn. */
  onServiceError?: ((error: ProtocolError) => void) | undefined;
}

const JSON_CONTENT_TYPE = "application/json; charset=utf-8";
const STATUS_TEXT: Record<number, string> = { 400: "bad request", 401: "unauthorized", 404: "not found", 405: "method not allowed", 408: "request timeout", 413: "payload too large", 415: "unsupported media type", 429: "too many requests", 431: "request header fields too large", 500: "internal error", 502: "bad gateway", 503: "service unavailable" };

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return jsonText(status, JSON.stringify(body), headers);
}

/** A JSON answer whose text the caller already has (written as JSON.stringify would write it). */
export function jsonText(status: number, text: string, headers: Record<string, string> = {}): Answer {
  // A literal, not a spread of a shared object: V8 clones `{ ...A, ...B }` into an object on which every later write (a
  // route's headers, CORS) takes a slow path, about 1 µs each (measured: 2.1-2.7 µs vs 0.08 µs for two writes).
  return new Answer(status, { "content-type": JSON_CONTENT_TYPE, ...headers }, text);
}

/** An answer carrying raw bytes (application/octet-stream unless the headers say otherwise). */
export function bytesResponse(status: number, bytes: Uint8Array, headers: Record<string, string> = {}): Answer {
  return new Answer(status, { "content-type": "application/octet-stream", ...headers }, bytes);
}

/** The error body of the node API; `reason` and `path` are additions a client can match on. */
export function errorAnswer(status: number, message: string, extra: { reason?: string | undefined; path?: string | undefined } = {}, headers: Record<string, string> = {}): Answer {
  const error: Record<string, string> = { code: String(status), message };
  if (extra.reason !== undefined) error.reason = extra.reason;
  if (extra.path !== undefined) error.path = extra.path;
  return json(status, { error }, headers);
}

/** errorAnswer as a web-standard Response. */
export function errorResponse(status: number, message: string, extra: { reason?: string | undefined; path?: string | undefined } = {}, headers: Record<string, string> = {}): Response {
  return errorAnswer(status, message, extra, headers).toResponse();
}

function setHeader(reply: Reply, name: string, value: string): void {
  if (reply instanceof Answer) reply.headers[name] = value;
  else reply.headers.set(name, value);
}

export function mediaType(request: Request): string {
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
  // A server request that can hand over its bytes directly (server.ts's NodeRequest) spares the web stream.
  const direct = (request as { readBytes?: unknown }).readBytes;
  if (typeof direct === "function") {
    const bytes = await (direct as (limit: number) => Promise<Uint8Array | undefined>).call(request, limit);
    if (bytes === undefined) throw new NodeError("BODY_TOO_LARGE", `the body exceeds the limit of ${limit} bytes`);
    return bytes;
  }
  const bytes = await readAtMost(request.body, limit);
  if (bytes === undefined) throw new NodeError("BODY_TOO_LARGE", `the body exceeds the limit of ${limit} bytes`);
  return bytes;
}

/** Reads a JSON body's text (application/json, UTF-8) up to `limit` bytes; `typeChecked` when the caller already chose JSON. */
export async function readJsonText(request: Request, limit: number, typeChecked = false): Promise<string> {
  if (!typeChecked && mediaType(request) !== "application/json") throw new NodeError("UNSUPPORTED_MEDIA_TYPE", "send the body as application/json");
  const body = await readBody(request, limit);
  try {
    return utf8.decode(body);
  } catch {
    throw new ProtocolError("INVALID_JSON", "the body is not valid UTF-8");
  }
}

/** Reads a JSON body (application/json, UTF-8) up to `limit` bytes; `typeChecked` when the caller already chose JSON. */
export async function readJson(request: Request, limit: number, typeChecked = false): Promise<unknown> {
  const text = await readJsonText(request, limit, typeChecked);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw malformedJson(error);
  }
}

/** A message (or transaction) id from a path: 64 hex characters, upper case accepted. */
export function idParam(raw: string, path = "messageId"): string {
  const id = raw.toLowerCase();
  if (!isLowerHex(id, MESSAGE_ID_LENGTH)) throw new ProtocolError("INVALID_HEX", `${path === "messageId" ? "a message id" : path} is 64 hex characters`, { path });
  return id;
}

export function decodeParam(raw: string, path: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProtocolError("INVALID_ARGUMENT", "malformed percent-encoding", { path });
  }
}

/** Whole seconds a client should wait before retrying, as the error says (NodeError retryAfter), else 1. */
function retryAfterOf(error: unknown): number {
  const seconds = (error as { retryAfter?: unknown }).retryAfter;
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 1 ? Math.ceil(seconds) : 1;
}

/** A handler over a route table: the first route whose pattern matches the path answers. */
export function createRouter(routes: readonly Route[], options: RouterOptions = {}): Handler {
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error("chrysalis node: internal error", error));
  const onServiceError = options.onServiceError ?? ((error: ProtocolError) => console.warn(`chrysalis node: ${error.code}: ${error.message}`));
  const cors = options.cors;

  function withCors(reply: Reply): Reply {
    if (cors === undefined) return reply;
    setHeader(reply, "access-control-allow-origin", cors);
    setHeader(reply, "access-control-expose-headers", "location, www-authenticate, retry-after");
    if (cors !== "*") {
      if (reply instanceof Answer) reply.headers.vary = reply.headers.vary === undefined ? "origin" : `${reply.headers.vary}, origin`;
      else reply.headers.append("vary", "origin");
    }
    return reply;
  }

  // Each route's literal start (its pattern's text up to the first construct that is not a plain character): a route
  // whose start the path does not share cannot match, and is passed over without running its pattern.
  const table = routes.map((r) => ({ route: r, start: literalStart(r.pattern) }));

  async function route(request: Request, context: RequestContext): Promise<Reply> {
    let matched: Route | undefined;
    try {
      // A server that already split the path off (server.ts's NodeRequest) spares the URL parse on every request.
      const given = (request as { pathname?: unknown }).pathname;
      const pathname = typeof given === "string" ? given : new URL(request.url).pathname;
      const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.replace(/\/+$/, "") : pathname;
      for (const { route: r, start } of table) {
        if (!path.startsWith(start)) continue;
        const match = r.pattern.exec(path);
        if (match === null) continue;
        matched = r;
        context.route = r.name;
        if (request.method === "OPTIONS" && cors !== undefined) {
          return new Answer(
            204,
            {
              "access-control-allow-methods": [...Object.keys(r.methods), "OPTIONS"].join(", "),
              "access-control-allow-headers": "content-type, authorization, authentication",
              "access-control-max-age": "600",
            },
            null,
          );
        }
        const method = request.method === "HEAD" && r.noHead !== true ? "GET" : request.method;
        const run = r.methods[method];
        if (run === undefined) {
          const allow = Object.keys(r.methods).join(", ");
          return withRouteHeaders(r, errorAnswer(405, `${request.method} is not allowed here; use ${allow}`, { reason: "METHOD_NOT_ALLOWED" }, { allow }));
        }
        context.gate?.route(r.name, method);
        return withRouteHeaders(r, await run(new Call(request, match, context)));
      }
      return errorAnswer(404, `no route for ${path.slice(0, 200)}`, { reason: "NOT_FOUND" });
    } catch (error) {
      const answer = failure(error, request);
      return matched === undefined ? answer : withRouteHeaders(matched, answer);
    }
  }

  function withRouteHeaders(r: Route, reply: Reply): Reply {
    if (r.headers !== undefined) for (const [name, value] of Object.entries(r.headers)) setHeader(reply, name, value);
    return reply;
  }

  function failure(error: unknown, request: Request): Answer {
    if (isAbortError(error) || request.signal.aborted) return errorAnswer(499, "the client closed the request", { reason: "ABORTED" });
    const status = statusOf(error);
    if (status === 500) {
      onInternalError(error);
      return errorAnswer(500, "internal error", {});
    }
    const e = error as ProtocolError;
    const headers: Record<string, string> = {};
    if (status === 401) headers["www-authenticate"] = error instanceof AuthError ? wwwAuthenticate(error) : "Bearer";
    if (status === 413) headers.connection = "close";
    if (status === 503 || status === 429) headers["retry-after"] = String(retryAfterOf(error));
    const message = publicMessage(e, status, STATUS_TEXT[status] ?? "error");
    if (status >= 500 && message !== e.message) onServiceError(e);
    return errorAnswer(status, message, { reason: e.code, path: e.path }, headers);
  }

  const answer = cors === undefined ? (request: Request, context: RequestContext = {}): Promise<Reply> => route(request, context) : async (request: Request, context: RequestContext = {}): Promise<Reply> => withCors(await route(request, context));
  const handle = async function handle(request: Request, context: RequestContext = {}): Promise<Response> {
    const reply = await answer(request, context);
    return reply instanceof Answer ? reply.toResponse() : reply;
  };
  ROUTER_ANSWERS.set(handle, answer);
  return handle;
}

/** A RouteCall: a class, so that the lazy URL is a getter on the prototype rather than one defined on every call. */
class Call implements RouteCall {
  readonly request: Request;
  readonly params: readonly string[];
  readonly context: RequestContext;
  #url: URL | undefined;

  constructor(request: Request, match: RegExpExecArray, context: RequestContext) {
    this.request = request;
    this.params = match.slice(1);
    this.context = context;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.request.url));
  }
}

/** The text every path a pattern matches starts with: its source after ^ up to the first construct that is not a plain
 * character (an escaped /, . or - counts as its character); "" when that cannot be told simply. */
export function literalStart(pattern: RegExp): string {
  const source = pattern.source;
  if (!source.startsWith("^") || /[im]/.test(pattern.flags) || topLevelAlternation(source)) return "";
  let start = "";
  for (let i = 1; i < source.length; i++) {
    let c = source[i]!;
    if (c === "\\") {
      c = source[++i] ?? "";
      if (!/^[/.-]$/.test(c)) break;
    } else if (!/^[\w/-]$/.test(c)) {
      // A quantifier binds to the character before it: "a?" and "a{0,2}" need not start with "a".
      if (c === "?" || c === "*" || c === "{") start = start.slice(0, -1);
      break;
    }
    start += c;
  }
  return start;
}

/** Whether the pattern is an alternation at its top level ("^a|b": the ^ binds to the first alternative only). */
function topLevelAlternation(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return true;
  }
  return false;
}

const ROUTER_ANSWERS = new WeakMap<Handler, (request: Request, context?: RequestContext) => Promise<Reply>>();

/**
 * The router behind `handler`, answering without building Responses, when `handler` is one made here: it reads only
 * the Request members a lazy server request provides cheaply (the path; headers, signal and body when a route needs
 * them). Undefined for any other handler.
 */
export function routerAnswers(handler: Handler): ((request: Request, context?: RequestContext) => Promise<Reply>) | undefined {
  return ROUTER_ANSWERS.get(handler);
}
