// The servers of the edge benchmark, each run in its own worker thread so that the loader (the main thread) does not
// share a thread with the server it measures: a trivial node:http server (the ceiling) or a node as `chrysalis serve
// --no-rate-limits` builds it (edge, access log to /dev/null, metrics on, JWTs, prove-ownership, a registry).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import { pino } from "pino";
import { MemoryIdentityRegistry } from "../src/auth/index.js";
import { fromHex } from "../src/bytes/hex.js";
import { startNode } from "../src/cli/setup.js";

export interface EdgeServerData {
  kind: "ceiling" | "node";
  /** Identity id → public key hex. */
  identities?: Record<string, string>;
  jwtSecret?: string;
  network?: string;
}

const data = workerData as EdgeServerData;

if (data.kind === "ceiling") {
  const body = JSON.stringify({ data: { ok: true } });
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(body.length) });
    res.end(body);
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
