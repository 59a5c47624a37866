// The servers of the edge benchmark, each run in its own worker thread so that the loader (the main thread) does not
// share a thread with the server it measures: a trivial node:http server (the ceiling), a stub that answers the two
// login requests with fixed bodies and no work (the most logins this machine's loader can drive), or a node as
// `chrysalis serve --no-rate-limits` builds it (edge, access log to /dev/null, metrics on, JWTs, prove-ownership, a
// registry).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import { pino } from "pino";
import { MemoryIdentityRegistry } from "../src/auth/index.js";
import { fromHex } from "../src/bytes/hex.js";
import { startNode } from "../src/cli/setup.js";

export interface EdgeServerData {
  kind: "ceiling" | "stub" | "node";
  /** Identity id → public key hex. */
  identities?: Record<string, string>;
  jwtSecret?: string;
  network?: string;
}

const data = workerData as EdgeServerData;

if (data.kind === "ceiling" || data.kind === "stub") {
  const body = JSON.stringify({ data: { ok: true } });
  // The stub's answers have the shapes of the real ones: a nonce of 40 hex characters, a JWT.
  const nonce = JSON.stringify({ nonce: "0123456789abcdef0123456789abcdef01234567" });
  const jwt = JSON.stringify({ jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl" });
  const server = createServer((req, res) => {
    req.resume();
    const answer = data.kind === "ceiling" ? body : req.method === "GET" ? nonce : jwt;
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(answer.length) });
    res.end(answer);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => parentPort!.postMessage({ port: (server.address() as AddressInfo).port }));
} else {
  const registry = new MemoryIdentityRegistry();
  for (const [id, key] of Object.entries(data.identities ?? {})) registry.add(id, fromHex(key));
  const setup = await startNode({
    host: "127.0.0.1",
    port: 0,
    network: data.network ?? "chrysalis-bench",
    minPoWScore: 0,
    pow: { workers: 1 },
    jwtSecret: data.jwtSecret!,
    registry,
    limits: { rates: false },
    // What an operator runs: the access log on (here into /dev/null, asynchronously as pino writes files) and metrics.
    log: { level: "info", pretty: false, destination: pino.destination({ dest: "/dev/null", sync: false, minLength: 4096 }) },
    metrics: true,
  });
  parentPort!.postMessage({ port: setup.server.port });
  parentPort!.on("message", (message: unknown) => {
    if (message === "close") void setup.close().then(() => process.exit(0));
  });
}
