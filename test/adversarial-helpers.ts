// Tools for the adversarial suites: HTTP from a chosen loopback source address (attackers on 127.0.0.2 …, the victim on
// 127.0.0.1), raw sockets for slow or oversized requests, and `chrysalis serve` as a child process on an ephemeral port
// that every test stops, also when it fails.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { CLI, startServe as startProcess, type ServeProcess } from "./serve-process.js";

export const bin = CLI;

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Source address of the client socket (loopback only). */
  from?: string;
  agent?: Agent;
  timeoutMs?: number;
}

/** One HTTP request from `from` (default 127.0.0.1); resolves with the answer, rejects on a socket error (ECONNRESET …). */
export function call(url: string, options: CallOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body;
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
    const req = httpRequest(url, { method: options.method ?? "GET", headers, localAddress: options.from ?? "127.0.0.1", agent: options.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", reject);
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error("client timeout")));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function postJson(url: string, value: unknown, options: CallOptions = {}): Promise<Answer> {
  return call(url, { ...options, method: "POST", headers: { "content-type": "application/json", ...options.headers }, body: JSON.stringify(value) });
}

/** A keep-alive agent whose sockets leave from `from`. */
export function agentFrom(from: string, maxSockets = 8): Agent {
  return new Agent({ keepAlive: true, maxSockets, localAddress: from } as ConstructorParameters<typeof Agent>[0]);
}

/** A raw TCP connection from `from`; `received` collects what the server sends, `ended` settles when it closes. */
export function rawConnection(port: number, from = "127.0.0.1"): Promise<{ socket: Socket; received: () => string; ended: Promise<"end" | string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from });
    let data = "";
    const ended = new Promise<"end" | string>((done) => {
      socket.on("end", () => done("end"));
      socket.on("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
      socket.on("close", () => done("end"));
    });
    socket.on("data", (d: Buffer) => (data += d.toString("latin1")));
    socket.once("connect", () => resolve({ socket, received: () => data, ended }));
    socket.once("error", reject);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type Child = ServeProcess;

/** Starts `chrysalis serve` with `args` on 127.0.0.1:0, in memory unless `args` name a storage (at most `ms` to start). */
export function startServe(args: string[], env: Record<string, string> = {}, ms = 20_000): Promise<Child> {
  // serve keeps its store in ./chrysalis-data by default; these nodes live for one test and leave nothing behind.
  const storage = args.some((a) => a === "--data-dir" || a === "--database" || a === "--in-memory") ? [] : ["--in-memory"];
  return startProcess([...storage, ...args], env, ms);
}
