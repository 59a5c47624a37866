// A node:http server around a web-standard handler: IncomingMessage → Request (its signal aborts when the client
// goes away before the answer), Response → ServerResponse, and a graceful close (in-flight requests finish).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable, type Duplex } from "node:stream";
import type { Handler } from "./http/index.js";

export interface ServeOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port (read it from the result). */
  port?: number;
  /** Milliseconds close() waits for in-flight requests before cutting their connections. Default 10 s. */
  shutdownTimeoutMs?: number;
  /** Run after the server stopped accepting and in-flight requests ended (e.g. node.close() to stop the workers). */
  onClose?: () => Promise<void> | void;
  /** Takes HTTP upgrade requests (the MQTT bridge's WebSocket at /mqtt); without it upgrades are refused. Upgraded
   * connections still open at close() are destroyed after in-flight requests end. */
  onUpgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

// Clients that mine locally (iota.js LocalPowProvider) keep a connection idle between reading the tips and posting:
// Node's 5 s default would close it under them. Hornet sets no idle timeout at all.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface RunningServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** http://host:port, no trailing slash. */
  readonly url: string;
  /** Requests being handled now. */
  inFlight(): number;
  /** Stops accepting, lets in-flight requests finish (up to the timeout), closes idle connections, then onClose. */
  close(): Promise<void>;
}

// After an early answer (413, 401) the rest of the request body is drained up to this much, then the socket closed.
const MAX_DRAIN = 1 << 20;

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

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve));
  }
  res.end();
}

/** Serves `handler` over node:http. */
export async function serve(handler: Handler, options: ServeOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const server = createServer((req, res) => {
    inFlight++;
    const controller = new AbortController();
    // The client went away before the answer was complete: abort the Request's signal (this cancels a PoW job).
    res.on("close", () => {
      if (!res.writableFinished) controller.abort(new DOMException("the client closed the connection", "AbortError"));
    });
    const origin = `http://${req.headers.host ?? `${host}`}`;
    let request: Request;
    try {
      request = toRequest(req, controller.signal, origin);
    } catch {
      res.writeHead(400, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ error: { code: "400", message: "malformed request" } }));
      inFlight--;
      return;
    }
    handler(request, { clientAddress: req.socket.remoteAddress })
      .then((response) => (res.destroyed ? undefined : writeResponse(response, res)))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ error: { code: "500", message: "internal error" } }));
        else res.destroy();
      })
      .finally(() => {
        if (!req.complete && !req.destroyed) {
          // The answer came before the whole body (e.g. 413): drain a little so the client can read it, then close.
          let drained = 0;
          req.on("data", (chunk: Buffer) => {
            drained += chunk.length;
            if (drained > MAX_DRAIN) req.socket.destroy();
          });
          req.resume();
        }
        inFlight--;
        if (inFlight === 0) idle?.();
      });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Past the keep-alive timeout, so a kept-alive request's headers are never cut short first.
  server.headersTimeout = Math.max(server.headersTimeout, KEEP_ALIVE_TIMEOUT_MS + 1000);
  const upgraded = new Set<Duplex>();
  const onUpgrade = options.onUpgrade;
  if (onUpgrade !== undefined) {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      upgraded.add(socket);
      socket.once("close", () => upgraded.delete(socket));
      onUpgrade(req, socket, head);
    });
  }
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    server,
    host,
    port,
    url: `http://${urlHost}:${port}`,
    inFlight: () => inFlight,
    close(): Promise<void> {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (inFlight > 0) {
          const timeout = options.shutdownTimeoutMs ?? 10_000;
          await new Promise<void>((resolve) => {
            idle = resolve;
            const timer = setTimeout(resolve, timeout);
            timer.unref();
          });
        }
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        await stopped;
        await options.onClose?.();
      })();
      return closing;
    },
  };
}
