// A node:http server around a web-standard handler, with the edge applied (edge/): connection caps, header and request
// timeouts, header size, the client's address (X-Forwarded-For only from trusted proxies), a request rate limit before
// any routing, the access log and metrics (GET /metrics). IncomingMessage → Request (its signal aborts when the client
// goes away before the answer), Response → ServerResponse.
//
// Graceful close: stop accepting, close idle connections, answer requests that arrive on open connections with 503
// (Retry-After, Connection: close), let in-flight requests finish within the grace period, then ask the owner to make
// what is left answer now (onGraceExpired: the node fails its PoW jobs with 503), and only then close what remains.
// Every request that reached the handler gets an HTTP answer; no connection is reset while it waits.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import { Readable, type Duplex } from "node:stream";
import { createEdge, type Edge } from "./edge/index.js";
import { shuttingDown } from "./errors.js";
import type { EdgeGate, Handler, RequestContext } from "./http/index.js";
import { Answer, routerAnswers, type Reply } from "./http/router.js";
import { NodeRequest } from "./node-request.js";

/** What the edge tells an upgrade handler about the connection. */
export interface UpgradeContext {
  /** The client's address as the edge sees it (after a trusted proxy). */
  readonly clientAddress: string;
  /** Takes one request token of this client: false when its rate limit refuses. */
  admit(): boolean;
}

/** Where serve() listens, the edge it applies, and what it calls while closing. */
export interface ServeOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port (read it from the result). */
  port?: number;
  /** Limits, log and metrics. Default: createEdge() (the public-node limits, no log, no /metrics). */
  edge?: Edge;
  /** Milliseconds close() lets in-flight requests finish before onGraceExpired. Default: the edge's shutdownGraceMs (10 s). */
  shutdownTimeoutMs?: number;
  /** Called when the grace period ends with requests in flight: make them answer now (e.g. node.shutdown()). */
  onGraceExpired?: () => void;
  /** Run after the server stopped accepting and every connection closed (e.g. node.close() to stop workers, close the store). */
  onClose?: () => Promise<void> | void;
  /** Takes HTTP upgrade requests (the MQTT bridge's WebSocket at /mqtt); without it upgrades are refused. Upgraded
   * connections still open at close() are destroyed after in-flight requests end. Each upgrade takes a request token
   * of its client first; `context.admit()` takes another (the bridge asks one per SUBSCRIBE). */
  onUpgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer, context: UpgradeContext) => void;
}

/** A listening server, as serve() resolves it. */
export interface RunningServer {
  /** The node:http server underneath; close it with close(), which answers what is in flight first. */
  readonly server: Server;
  /** The host it listens on. */
  readonly host: string;
  /** The port it listens on: the one the system chose when port 0 was asked. */
  readonly port: number;
  /** http://host:port, no trailing slash. */
  readonly url: string;
  /** The edge it applies: its limits, access log and metrics. */
  readonly edge: Edge;
  /** Requests being handled now. */
  inFlight(): number;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), answers the rest, then onClose. */
  close(): Promise<void>;
}

// After an early answer (413, 401) the rest of the request body is drained up to this much, then the socket closed.
const MAX_DRAIN = 1 << 20;
// After onGraceExpired, how long the requests still in flight get to write their answers before connections are cut.
const FINAL_ANSWER_MS = 5000;
// A refused connection's answer gets this long to leave before the socket is destroyed.
const REFUSED_LINGER_MS = 1000;

const REASON: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 429: "Too Many Requests", 431: "Request Header Fields Too Large", 503: "Service Unavailable" };

const refusedSockets = new WeakSet<Socket>();
// A write racing a socket the edge closed (a timeout) must not throw: one shared listener, not a closure per request.
const ignoreError = (): void => undefined;
// The status a socket-level refusal (timeout, oversized head) already wrote, for the access record of its request.
const answeredOnSocket = new WeakMap<Socket, number>();

// The client went away before the answer was complete: the Request's signal aborts with this (it cancels a PoW job).
const gone = (): DOMException => new DOMException("the client closed the connection", "AbortError");

function errorBody(status: number, reason: string, message: string): string {
  return JSON.stringify({ error: { code: String(status), message, reason } });
}

/** A complete HTTP/1.1 answer written straight to a socket (connection-level refusals, before or outside any request). */
function rawAnswer(status: number, reason: string, message: string, retryAfter?: number): string {
  const body = errorBody(status, reason, message);
  const retry = retryAfter === undefined ? "" : `retry-after: ${retryAfter}\r\n`;
  return `HTTP/1.1 ${status} ${REASON[status] ?? "Error"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\n${retry}connection: close\r\n\r\n${body}`;
}

function toRequest(req: IncomingMessage, signal: AbortSignal, origin: string): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (method !== "GET" && method !== "HEAD") {
    init.body = Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>;
    init.duplex = "half";
  }
  return new Request(new URL(req.url ?? "/", origin), init);
}

/** An Answer, built by the router with its bytes at hand: head and body leave together, no Response or stream between. */
function writeAnswer(answer: Answer, res: ServerResponse, close: boolean): void {
  const headers = answer.headers;
  if (close) headers.connection = "close";
  const body = answer.body;
  if (body !== null) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
  res.writeHead(answer.status, headers);
  if (body === null) res.end();
  else res.end(body);
}

async function writeResponse(response: Response, res: ServerResponse, close: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (close) headers.connection = "close";
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (res.destroyed) {
      await reader.cancel().catch(() => undefined);
      return;
    }
    if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
  }
  res.end();
}

/** After an answer given before the whole body arrived (413, 429): read a little more so the client can read the
 * answer, then close; never buffer it. */
function drainRest(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  let drained = 0;
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN) req.socket.destroy();
  });
  req.resume();
}

function answerJson(res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/** What every request of one server shares. */
interface ServerState {
  readonly edge: Edge;
  readonly run: (request: Request, context: RequestContext) => Promise<Reply>;
  draining: boolean;
  inFlight: number;
  /** Called when the last request in flight ends, while close() waits for them. */
  idle: (() => void) | undefined;
}

// The exchange a response belongs to, for the close listener every response shares.
const EXCHANGE = Symbol("exchange");
type TrackedResponse = ServerResponse & { [EXCHANGE]?: Exchange };
function onResponseClose(this: TrackedResponse): void {
  this[EXCHANGE]?.finish();
}

/**
 * One request from its arrival to its access record: the RequestContext the router and the routes see, and what the
 * response's close listener needs. One object per request, its methods on the class: a context object, a dozen
 * closures and a once() wrapper per request were a measurable part of a trivial request's CPU (allocation and GC).
 */
class Exchange implements RequestContext {
  route: string | undefined = undefined;
  /** The NodeRequest whose signal aborts when the client goes away before the answer is complete. */
  light: NodeRequest | undefined = undefined;
  #done = false;

  constructor(
    readonly state: ServerState,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: string,
    readonly path: string,
    readonly clientAddress: string,
    readonly clientKey: string,
    readonly gate: EdgeGate,
    readonly started: number,
  ) {}

  /** The response closed (answered, or the client went away): abort an unfinished request and record the answer. */
  finish(): void {
    if (this.#done) return;
    this.#done = true;
    const { res, state } = this;
    if (this.light !== undefined && !res.writableFinished) this.light.abort(gone());
    const status = res.headersSent ? res.statusCode : (answeredOnSocket.get(this.req.socket) ?? 499);
    // To the microsecond: a double written out at full precision (0.12345678901234) cost the access line about 0.35 µs,
    // a third of its cost, for digits below the clock's own resolution.
    const ms = Math.round((performance.now() - this.started) * 1000) / 1000;
    state.edge.record({ method: this.method, route: this.route ?? "-", path: this.path, status, ms, client: this.clientAddress });
    state.inFlight--;
    if (state.inFlight === 0) state.idle?.();
  }

  /** Runs the handler and writes its answer. */
  async respond(request: Request): Promise<void> {
    const { req, res, state } = this;
    let reply: Reply;
    try {
      reply = await state.run(request, this);
    } catch {
      return this.#failed();
    }
    if (res.destroyed) return drainRest(req);
    if (!(reply instanceof Answer)) return void writeResponse(reply, res, state.draining).then(() => drainRest(req), () => this.#failed());
    try {
      writeAnswer(reply, res, state.draining);
    } catch {
      return this.#failed();
    }
    drainRest(req);
  }

  #failed(): void {
    // The router answers every error itself; a rejection here is a bug in a handler given to serve().
    const { req, res } = this;
    if (res.headersSent) res.destroy();
    else answerJson(res, 500, errorBody(500, "INTERNAL", "internal error"), {});
    drainRest(req);
  }
}

/** Serves `handler` over node:http with the edge's limits. */
export async function serve(handler: Handler, options: ServeOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const edge = options.edge ?? createEdge();
  const limits = edge.limits;
  // The node's own router reads requests lazily (NodeRequest) and answers without building Responses; any other handler
  // gets a full undici Request and answers with a Response.
  const router = routerAnswers(handler);
  const lightRequests = router !== undefined;
  const state: ServerState = { edge, run: router ?? handler, draining: false, inFlight: 0, idle: undefined };

  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks header and request deadlines on this interval (default 30 s, too coarse for a 10 s deadline).
      connectionsCheckingInterval: 1000,
    },
    (req, res: TrackedResponse) => {
      const socket = req.socket;
      if (refusedSockets.has(socket)) {
        res.destroy();
        return;
      }
      state.inFlight++;
      const started = performance.now();
      // X-Forwarded-For is read only from a trusted proxy: reading req.headers builds node's whole header object.
      const client = edge.clientAddress(socket.remoteAddress, () => req.headers["x-forwarded-for"]);
      const key = edge.clientKey(client);
      const method = req.method ?? "GET";
      const rawUrl = req.url ?? "/";
      const query = rawUrl.indexOf("?");
      const path = (query >= 0 ? rawUrl.slice(0, query) : rawUrl).slice(0, 200);
      const exchange = new Exchange(state, req, res, method, path, client, key, edge.gate(key), started);
      res[EXCHANGE] = exchange;
      res.on("error", ignoreError);
      res.on("close", onResponseClose);

      if (state.draining) {
        const refusal = shuttingDown();
        answerJson(res, refusal.status, errorBody(refusal.status, refusal.code, refusal.message), { "retry-after": String(refusal.retryAfter), connection: "close" });
        return;
      }
      const refused = edge.admitRequest(key);
      if (refused !== undefined) {
        answerJson(res, 429, errorBody(429, refused.code, refused.message), { "retry-after": String(refused.retryAfter ?? 1) });
        drainRest(req);
        return;
      }
      if (edge.metrics !== undefined && path === "/metrics" && (method === "GET" || method === "HEAD")) {
        exchange.route = "metrics";
        if (!edge.metricsAllowed(req.headers.authorization ?? null)) {
          answerJson(res, 401, errorBody(401, "UNAUTHORIZED", "the metrics need their own bearer token"), { "www-authenticate": 'Bearer realm="metrics"' });
          return;
        }
        edge.metrics.render().then(
          ({ body, contentType }) => {
            res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
            res.end(body);
          },
          () => answerJson(res, 500, errorBody(500, "INTERNAL", "internal error"), {}),
        );
        return;
      }

      let request: Request;
      try {
        const origin = (): string => `http://${req.headers.host ?? host}`;
        if (lightRequests) {
          request = exchange.light = new NodeRequest(req, origin);
        } else {
          const controller = new AbortController();
          res.on("close", () => {
            if (!res.writableFinished) controller.abort(gone());
          });
          request = toRequest(req, controller.signal, origin());
        }
      } catch {
        answerJson(res, 400, errorBody(400, "MALFORMED_REQUEST", "malformed request"), {});
        return;
      }
      void exchange.respond(request);
    },
  );

  // Connection caps, before node:http reads anything from the socket.
  server.prependListener("connection", (socket: Socket) => {
    const admission = edge.admitConnection(socket.remoteAddress);
    if (admission.admitted) {
      socket.once("close", () => admission.release());
      return;
    }
    refusedSockets.add(socket);
    const message = admission.reason === "total" ? "the node has too many open connections" : admission.reason === "per-address" ? "too many open connections from your address" : "too many open connections from your network";
    socket.end(rawAnswer(503, "TOO_MANY_CONNECTIONS", message, 1));
    setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
  });

  // Malformed HTTP, an oversized head (431) and requests too slow to arrive (408) are answered here, never reaching the
  // handler. Node's own handler would answer these too, but with no body and no record in the access log.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === "ECONNRESET" || !socket.writable || refusedSockets.has(socket)) {
      socket.destroy();
      return;
    }
    const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    const reason = status === 431 ? "HEADERS_TOO_LARGE" : status === 408 ? "REQUEST_TIMEOUT" : "MALFORMED_REQUEST";
    const message = status === 431 ? `the request head exceeds ${limits.maxHeaderBytes} bytes` : status === 408 ? "the request did not arrive in time" : "malformed HTTP request";
    const inProgress = (socket as unknown as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inProgress?.headersSent === true) {
      socket.destroy();
      return;
    }
    answeredOnSocket.set(socket, status);
    // A request already handed to the handler records itself (with this status); one that never got that far is recorded here.
    if (inProgress === undefined || inProgress === null) {
      const client = edge.clientAddress(socket.remoteAddress, undefined);
      edge.record({ method: "-", route: "-", path: "-", status, ms: 0, client });
    }
    socket.end(rawAnswer(status, reason, message));
    setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
  });

  const upgraded = new Set<Duplex>();
  const onUpgrade = options.onUpgrade;
  if (onUpgrade !== undefined) {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // node:http hands an upgraded socket over with no error listener of its own: a client that resets it must cost
      // its own connection, never the process.
      socket.on("error", () => socket.destroy());
      upgraded.add(socket);
      socket.once("close", () => upgraded.delete(socket));
      const refuse = (status: number, reason: string, message: string, retryAfter: number): void => {
        socket.end(rawAnswer(status, reason, message, retryAfter));
        setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      };
      if (state.draining) {
        const refusal = shuttingDown();
        return refuse(refusal.status, refusal.code, refusal.message, refusal.retryAfter!);
      }
      const client = edge.clientAddress((socket as Socket).remoteAddress, req.headers["x-forwarded-for"]);
      const key = edge.clientKey(client);
      const refused = edge.admitRequest(key);
      if (refused !== undefined) return refuse(429, refused.code, refused.message, refused.retryAfter ?? 1);
      onUpgrade(req, socket, head, { clientAddress: client, admit: () => edge.admitRequest(key) === undefined });
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  function settled(ms: number): Promise<void> {
    if (state.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      state.idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  let closing: Promise<void> | undefined;
  return {
    server,
    host,
    port,
    url: `http://${urlHost}:${port}`,
    edge,
    inFlight: () => state.inFlight,
    close(): Promise<void> {
      closing ??= (async () => {
        state.draining = true;
        // net.Server's close, not http.Server's: the latter also destroys idle keep-alive connections at once (a request
        // already on its way over one would be reset) and stops enforcing the header and request deadlines. Open
        // connections stay until the end; what arrives on them meanwhile is answered 503 with Connection: close.
        const stopped = new Promise<void>((resolve) => Reflect.apply(NetServer.prototype.close, server, [() => resolve()]));
        await settled(options.shutdownTimeoutMs ?? limits.shutdownGraceMs);
        if (state.inFlight > 0) {
          options.onGraceExpired?.();
          await settled(FINAL_ANSWER_MS);
        }
        state.idle = undefined;
        server.closeIdleConnections();
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        server.close(); // http.Server's own: stops its deadline checks (the listener is closed already)
        await stopped;
        await options.onClose?.();
      })();
      return closing;
    },
  };
}
