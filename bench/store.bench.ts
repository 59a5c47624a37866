// Accepted submissions per second through `chrysalis serve` on each storage engine, side by side in one run over
// loopback: the memory store, the embedded LMDB store and PostgreSQL. 32 concurrent clients on keep-alive connections
// post pre-built messages whose nonces were set client-side (the node's minimum PoW score is 0, so any nonce passes and
// the figure is the node's own cost: parse, rules, id, durable store). Two workloads: indexation messages, and signed
// transactions (each client spends its own chain of outputs, so every one changes the ledger). Each round starts a
// fresh node on fresh storage per engine, engines interleaved so a busy shared machine slows them alike; medians of the
// rounds. Then the restart time of serve on a store of 100,000 messages (spawn to "listening").
// PostgreSQL: CHRYSALIS_BENCH_DATABASE_URL or CHRYSALIS_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test;
// a database of its own is created and dropped. Skipped, with a line, when no server answers.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchDatabase, postgresServer } from "./postgres.js";
import { bech32Address, ed25519Address, ed25519PublicKey } from "../src/crypto/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message } from "../src/model/types.js";
import { LmdbStore, PostgresStore, type NodeStore } from "../src/node/index.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench";
const NETWORK_ID = networkId(NETWORK);
const CLIENTS = 32;
const MESSAGES = 3200;
const CHAIN = MESSAGES / CLIENTS;
const ROUNDS = 5;
const RESTART_MESSAGES = 100_000;
const RESTARTS = 3;
const TOTAL = 2_779_530_283_277_761;
const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const utf8 = new TextEncoder();

interface Wallet {
  seed: Uint8Array;
  address: Uint8Array;
}

function wallet(): Wallet {
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return { seed, address: ed25519Address(ed25519PublicKey(seed)) };
}

interface Workload {
  readonly name: string;
  /** Sent and awaited before the clock starts (the split that funds the clients). */
  readonly setup: Uint8Array[];
  /** One list per client, sent in order. */
  readonly clients: Uint8Array[][];
}

function indexationWorkload(): Workload {
  const clients = Array.from({ length: CLIENTS }, (_, c) =>
    Array.from({ length: CHAIN }, (_, i) =>
      encodeMessage({ networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: { type: 2, index: utf8.encode(`bench ${c}`), data: utf8.encode(`client ${c} message ${i} ${"x".repeat(64)}`) }, nonce: BigInt(1 + c * CHAIN + i) }),
    ),
  );
  return { name: "indexation messages", setup: [], clients };
}

/** A split of the genesis output to one wallet per client, then per client a chain of spends of its own output. */
function transactionWorkload(genesis: Wallet): Workload {
  const owners = Array.from({ length: CLIENTS }, () => wallet());
  const amount = 1_000_000_000;
  const split = buildTransactionPayload({
    inputs: [{ transactionId: "0".repeat(64), transactionOutputIndex: 0, seed: genesis.seed }],
    outputs: [...owners.map((o) => ({ type: 0 as const, address: { type: 0 as const, address: o.address }, amount })), { type: 0, address: { type: 0, address: genesis.address }, amount: TOTAL - CLIENTS * amount }],
  });
  const splitMessage: Message = { networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: split, nonce: 1n };
  const splitBytes = encodeMessage(splitMessage);
  const parent = [Uint8Array.from(Buffer.from(messageId(splitBytes), "hex"))];
  const splitId = transactionId(split);
  const clients = owners.map((owner) => {
    let input = outputId(splitId, split.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(owner.address))));
    return Array.from({ length: CHAIN }, () => {
      const payload = buildTransactionPayload({
        inputs: [{ transactionId: input.slice(0, 64), transactionOutputIndex: Number.parseInt(input.slice(66, 68) + input.slice(64, 66), 16), seed: owner.seed }],
        outputs: [{ type: 0, address: { type: 0, address: owner.address }, amount }],
      });
      input = outputId(transactionId(payload), 0);
      return encodeMessage({ networkId: NETWORK_ID, parents: parent, payload, nonce: 1n });
    });
  });
  return { name: "transactions", setup: [splitBytes], clients };
}

const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });

/** POSTs raw bytes over a keep-alive connection; resolves with the status. */
function post(url: URL, body: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, path: "/api/v1/messages", method: "POST", headers: { "content-type": "application/octet-stream", "content-length": body.length } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface Node {
  url: URL;
  startMs: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

function startServe(args: string[]): Promise<Node> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--no-p2p", "--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-rate-limits", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not start: ${out}`));
    }, 60_000);
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      const startMs = performance.now() - started;
      resolve({
        url: new URL(m[1]!),
        startMs,
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${out}`));
    });
  });
}

interface Engine {
  readonly name: string;
  /** serve's storage arguments on fresh storage, and how to remove it afterwards. */
  fresh(): Promise<{ args: string[]; remove(): Promise<void> }>;
}

interface RunResult {
  rate: number;
  p50: number;
  p99: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function run(engine: Engine, workload: Workload, genesis: Wallet): Promise<RunResult> {
  const storage = await engine.fresh();
  const node = await startServe([...storage.args, "--genesis", bech32Address("atoi", genesis.address)]);
  try {
    for (const body of workload.setup) {
      const status = await post(node.url, body);
      if (status !== 201) throw new Error(`bench setup refused: ${status}`);
    }
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      workload.clients.map(async (messages) => {
        for (const body of messages) {
          const sent = performance.now();
          const status = await post(node.url, body);
          latencies.push(performance.now() - sent);
          if (status !== 201) throw new Error(`${engine.name}: a bench submission answered ${status}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { rate: latencies.length / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
  } finally {
    await node.stop();
    await storage.remove();
  }
}


function directory(): { path: string; remove(): Promise<void> } {
  const path = mkdtempSync(join(tmpdir(), "chrysalis-bench-"));
  return { path, remove: async () => rmSync(path, { recursive: true, force: true }) };
}

/** Fills a store with `count` indexation messages through its contract (1000 in flight at a time). */
async function fill(store: NodeStore, count: number): Promise<void> {
  await store.open({ network: NETWORK });
  for (let done = 0; done < count; ) {
    const batch = [];
    for (let i = 0; i < 1000 && done < count; i++, done++) {
      const message: Message = { networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: { type: 2, index: utf8.encode(`restart ${done % 100}`), data: utf8.encode(`message ${done}`) }, nonce: 1n };
      const bytes = encodeMessage(message);
      batch.push(store.accept({ id: messageId(bytes), bytes, message, arrivalTime: Date.now(), coneRoots: { oldest: 0, youngest: 0 } }));
    }
    await Promise.all(batch);
  }
  await store.close();
}

/** Median spawn-to-listening time of serve on `args`, over RESTARTS starts. */
async function restartMs(args: string[]): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    const node = await startServe(args);
    times.push(node.startMs);
    await node.stop();
  }
  return median(times);
}

export default async function storeBench(): Promise<Row[]> {
  const serverUrl = await postgresServer("store");
  const engines: Engine[] = [
    { name: "memory", fresh: async () => ({ args: ["--in-memory"], remove: async () => undefined }) },
    {
      name: "lmdb",
      fresh: async () => {
        const dir = directory();
        return { args: ["--data-dir", dir.path], remove: dir.remove };
      },
    },
  ];
  if (serverUrl !== undefined) {
    engines.push({
      name: "postgres",
      fresh: async () => {
        const db = await benchDatabase(serverUrl, "chrysalis_bench");
        return { args: ["--database", db.url], remove: db.remove };
      },
    });
  }
  const genesis = wallet();
  const workloads = [indexationWorkload(), transactionWorkload(genesis)];
  const rows: Row[] = [];
  const unit = "accepted/s";
  for (const workload of workloads) {
    const results = new Map(engines.map((e) => [e.name, [] as RunResult[]]));
    // Round 0 warms up the machine's caches and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const engine of engines) {
        const result = await run(engine, workload, genesis);
        if (round > 0) results.get(engine.name)!.push(result);
        process.stdout.write(`  ${workload.name}, ${engine.name}, round ${round}: ${result.rate.toFixed(0)} ${unit}, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms\n`);
      }
    }
    const medianOf = (name: string, key: keyof RunResult): number => median(results.get(name)!.map((r) => r[key]));
    const memory = medianOf("memory", "rate");
    const memoryRounds = results.get("memory")!;
    for (const engine of engines) {
      const rate = medianOf(engine.name, "rate");
      const target = engine.name === "lmdb" ? 0.5 : engine.name === "postgres" ? 0.25 : undefined;
      // The ratio is the median of each round's ratio: the engines of one round ran back to back, so a round compares
      // them under the same load from the machine's other users, which varies far more between rounds.
      const ratio = median(results.get(engine.name)!.map((r, i) => r.rate / memoryRounds[i]!.rate));
      rows.push({
        suite: "store",
        case: `serve ${engine.name}, ${workload.name}, ${CLIENTS} clients${engine.name === "memory" ? "" : " (ratio: median of per-round ratios)"}`,
        ours: rate,
        ...(engine.name === "memory" ? {} : { theirs: memory, theirName: "memory", ratio, target }),
        unit,
      });
      rows.push({ suite: "store", case: `serve ${engine.name}, ${workload.name}: latency p50 (p99 ${medianOf(engine.name, "p99").toFixed(1)} ms)`, ours: medianOf(engine.name, "p50"), unit: "ms" });
    }
  }

  // Restart: serve on a store of 100,000 messages against serve on an empty one.
  const lmdbEmpty = directory();
  const lmdbFull = directory();
  try {
    await fill(new LmdbStore(lmdbEmpty.path), 0);
    const filled = performance.now();
    await fill(new LmdbStore(lmdbFull.path), RESTART_MESSAGES);
    process.stdout.write(`  lmdb: ${RESTART_MESSAGES} messages stored in ${((performance.now() - filled) / 1000).toFixed(1)} s\n`);
    const empty = await restartMs(["--data-dir", lmdbEmpty.path]);
    const full = await restartMs(["--data-dir", lmdbFull.path]);
    rows.push({ suite: "store", case: `serve restart to listening, lmdb, ${RESTART_MESSAGES} messages (target < 2000 ms; empty store ${empty.toFixed(0)} ms)`, ours: full, unit: "ms" });
  } finally {
    await lmdbEmpty.remove();
    await lmdbFull.remove();
  }
  if (serverUrl !== undefined) {
    const emptyDb = await benchDatabase(serverUrl, "chrysalis_bench");
    const fullDb = await benchDatabase(serverUrl, "chrysalis_bench");
    try {
      await fill(new PostgresStore({ connectionString: emptyDb.url }), 0);
      const filled = performance.now();
      await fill(new PostgresStore({ connectionString: fullDb.url, maxConnections: 16 }), RESTART_MESSAGES);
      process.stdout.write(`  postgres: ${RESTART_MESSAGES} messages stored in ${((performance.now() - filled) / 1000).toFixed(1)} s\n`);
      const empty = await restartMs(["--database", emptyDb.url]);
      const full = await restartMs(["--database", fullDb.url]);
      rows.push({ suite: "store", case: `serve restart to listening, postgres, ${RESTART_MESSAGES} messages (target < 2000 ms; empty database ${empty.toFixed(0)} ms)`, ours: full, unit: "ms" });
    } finally {
      await emptyDb.remove();
      await fullDb.remove();
    }
  }
  agent.destroy();
  return rows;
}
