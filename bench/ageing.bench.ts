// A node that runs for months (issue 18 §6), LMDB and PostgreSQL side by side in one run:
// - bytes per message: a store filled through the node (createNode + its coordinator, a milestone every PER_MILESTONE
//   messages) with N indexation messages, and another with N small transactions (32 wallets each spending its own
//   output over and over); stats().bytes (LMDB: pages in use; PostgreSQL: the schema's relation sizes) above the same
//   engine's empty store, divided by N; LMDB's data.mdb file size beside it;
// - pruning rate: NodeStore.prune(latest − 20, DEFAULT_PRUNE_BATCH) in a loop, as the pruner part calls it, on copies of
//   the indexation store; messages deleted per second, median of the rounds;
// - submit p99 while pruning runs against p99 when it does not: the node serve assembles (startNode), in a process of
//   its own, on a copy of that store; a fixed-rate load generator (each submission: GET /tips, then POST the binary
//   message; the POST is timed) runs throughout; after a warm-up, QUIET_SECONDS without pruning, then one whole pruner
//   pass (createPruner, keep 20, as serve wires it) over the backlog, then QUIET_SECONDS more. Target: p99 while
//   pruning ≤ 1.5× p99 not pruning; median of the rounds' ratios;
// - snapshot create and load at 100,000 unspent outputs: a store made from a synthetic LedgerSnapshot, then
//   readSnapshot + encodeSnapshot + write (fsynced), and read + decodeSnapshot + open({ snapshot }) on a new store;
// - disk and RSS of `serve` after a while at a fixed rate (--milestone-interval 1s --prune-milestones 20), one engine
//   after the other, sampled every 10 s: the figure at the end and whether it levelled off (end against half time).
//
// Sizes (environment; the defaults keep `npm run bench` to a few minutes):
//   CHRYSALIS_BENCH_AGEING_MESSAGES      indexation messages per store (default 50000)
//   CHRYSALIS_BENCH_AGEING_TRANSACTIONS  transactions (default 10000)
//   CHRYSALIS_BENCH_AGEING_OUTPUTS       unspent outputs of the snapshot (default 100000)
//   CHRYSALIS_BENCH_AGEING_RATE          submissions per second of the load generator (default 100)
//   CHRYSALIS_BENCH_AGEING_MINUTES       length of the disk/RSS run (default 1; docs/BENCHMARKS.md's figure: 10)
// CHRYSALIS_BENCH_CLI: the built CLI to run (default dist/cli/main.js, which `npm run bench` builds).
// PostgreSQL: CHRYSALIS_BENCH_DATABASE_URL or CHRYSALIS_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test;
// databases of its own are created and dropped. Skipped, with a line, when no server answers.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open as openFile, readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { adminQuery, databaseUrl, postgresServer } from "./postgres.js";
import { toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { ed25519Address, ed25519PublicKey } from "../src/crypto/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { milestonePublicKey } from "../src/model/milestone.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, Payload } from "../src/model/types.js";
import {
  createCoordinator,
  createNode,
  decodeSnapshot,
  DEFAULT_PRUNE_BATCH,
  encodeSnapshot,
  LmdbStore,
  MIN_PRUNE_KEEP,
  PostgresStore,
  ZERO_MESSAGE_ID,
  type LedgerSnapshot,
  type NodeStore,
  type SnapshotOutput,
} from "../src/node/index.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench-ageing";
const NETWORK_ID = networkId(NETWORK);
// The CLI `npm run bench` builds; CHRYSALIS_BENCH_CLI names another build (a helper's own outDir, say).
const CLI = process.env.CHRYSALIS_BENCH_CLI || fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const utf8 = new TextEncoder();

function setting(name: string, fallback: number): number {
  const text = process.env[`CHRYSALIS_BENCH_AGEING_${name}`];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`CHRYSALIS_BENCH_AGEING_${name} must be a number > 0`);
  return value;
}

const MESSAGES = Math.round(setting("MESSAGES", 50_000));
const TRANSACTIONS = Math.round(setting("TRANSACTIONS", 10_000));
const OUTPUTS = Math.round(setting("OUTPUTS", 100_000));
const RATE = setting("RATE", 100);
const MINUTES = setting("MINUTES", 1);
/** Messages between two milestones while filling (250: a busy node, 25 messages/s at 10 s milestones), fewer in a
 * small run so that there are always 100 milestones, most of them below the pruning target. */
const PER_MILESTONE = Math.max(8, Math.min(250, Math.floor(MESSAGES / 100)));
/** Messages submitted at once while filling; each names parents covering every message of the batch before. */
const FILL_BATCH = 32;
const CHAINS = 32;
const PRUNE_ROUNDS = 3;
const SNAPSHOT_ROUNDS = 3;
const P99_ROUNDS = 3;
/** The first milliseconds of load on a new serve process (its JIT and caches warming up) count in no latency window. */
const WARM_UP_MS = 2000;
/** Seconds of load against the serve process once pruning caught up (and against the run with nothing pruned). */
const QUIET_SECONDS = 8;
const SAMPLE_EVERY_MS = 10_000;
/** Most submissions in flight from the load generator; one more due is counted as skipped, not queued. */
const MAX_IN_FLIGHT = 64;
const COORDINATOR_SEED = Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) & 0xff);

// -----------------------------------------------------------------------------------------------------------------
// Small tools

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!;
}

function quantile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/** Throws once `deadline` (performance.now()) has passed: every loop here is bounded in time as well as count. */
function inTime(deadline: number, what: string): void {
  if (performance.now() > deadline) throw new Error(`ageing bench: ${what} did not finish in time`);
}

interface Wallet {
  seed: Uint8Array;
  address: Uint8Array;
}

function wallet(): Wallet {
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return { seed, address: ed25519Address(ed25519PublicKey(seed)) };
}

const idBytes = (id: string): Uint8Array => Uint8Array.from(Buffer.from(id, "hex"));
const sortedParents = (ids: Iterable<string>): Uint8Array[] => [...new Set(ids)].sort().slice(0, 8).map(idBytes);

/** Parents for message `i` of a batch: three of the previous batch, so that the batch names every one of them. */
function parentsFor(previous: readonly string[], i: number): Uint8Array[] {
  const n = previous.length;
  return sortedParents([previous[i % n]!, previous[(i + 1) % n]!, previous[(i + 7) % n]!]);
}

// -----------------------------------------------------------------------------------------------------------------
// Engines: a place a store lives (an LMDB directory or a PostgreSQL database), that can be copied while closed.

interface Place {
  readonly engine: "lmdb" | "postgres";
  /** serve's storage arguments. */
  readonly args: string[];
  store(): NodeStore;
  /** What the place takes on disk: data.mdb's size, or pg_database_size. */
  diskBytes(): Promise<number>;
  /** A copy of the place (its stores closed). */
  copy(): Promise<Place>;
  remove(): Promise<void>;
}

interface Engine {
  readonly name: "lmdb" | "postgres";
  fresh(): Promise<Place>;
}

function lmdbPlace(path: string): Place {
  return {
    engine: "lmdb",
    args: ["--data-dir", path],
    store: () => new LmdbStore({ path }),
    diskBytes: async () => {
      try {
        return statSync(join(path, "data.mdb")).size;
      } catch {
        return 0;
      }
    },
    async copy() {
      const to = mkdtempSync(join(tmpdir(), "chrysalis-ageing-"));
      copyFileSync(join(path, "data.mdb"), join(to, "data.mdb"));
      return lmdbPlace(to);
    },
    remove: async () => rmSync(path, { recursive: true, force: true }),
  };
}

const lmdbEngine: Engine = { name: "lmdb", fresh: async () => lmdbPlace(mkdtempSync(join(tmpdir(), "chrysalis-ageing-"))) };

function postgresPlace(serverUrl: string, name: string): Place {
  const url = databaseUrl(serverUrl, name);
  return {
    engine: "postgres",
    args: ["--database", url],
    store: () => new PostgresStore({ connectionString: url, maxConnections: 8 }),
    diskBytes: async () => Number((await adminQuery<{ size: string }>(serverUrl, "SELECT pg_database_size($1) AS size", [name]))[0]!.size),
    async copy() {
      const copy = `chrysalis_ageing_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
      // CREATE DATABASE … TEMPLATE needs the template without sessions; a closed store's pool may take a moment to go.
      const deadline = performance.now() + 30_000;
      for (;;) {
        try {
          await adminQuery(serverUrl, `CREATE DATABASE ${copy} TEMPLATE ${name}`);
          return postgresPlace(serverUrl, copy);
        } catch (error) {
          if (!/being accessed by other users/.test((error as Error).message) || performance.now() > deadline) throw error;
          await sleep(200);
        }
      }
    },
    remove: async () => void (await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

function postgresEngine(serverUrl: string): Engine {
  return {
    name: "postgres",
    async fresh() {
      const name = `chrysalis_ageing_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
      await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
      return postgresPlace(serverUrl, name);
    },
  };
}


// -----------------------------------------------------------------------------------------------------------------
// Filling a store through the node, with its coordinator

interface Filled {
  /** The milestones issued. */
  milestones: number;
  /** The messages submitted (a few more than asked: the layers that join a batch before each milestone). */
  messages: number;
  seconds: number;
}

/** The next `count` payloads: indexation messages, or one spend per wallet chain (with the split that funds them). */
type Workload = (batch: number) => Payload[];

function indexationWorkload(): Workload {
  let n = 0;
  return (size) => Array.from({ length: size }, () => {
    n++;
    return { type: 2, index: utf8.encode(`ageing ${n % 64}`), data: utf8.encode(`message ${n} ${"x".repeat(48)}`) };
  });
}

function transactionWorkload(genesis: Wallet): { split: Payload; next: Workload } {
  const owners = Array.from({ length: CHAINS }, () => wallet());
  const amount = 1_000_000_000;
  const split = buildTransactionPayload({
    inputs: [{ transactionId: ZERO_MESSAGE_ID, transactionOutputIndex: 0, seed: genesis.seed }],
    outputs: [...owners.map((o) => ({ type: 0 as const, address: { type: 0 as const, address: o.address }, amount })), { type: 0, address: { type: 0, address: genesis.address }, amount: TOTAL_SUPPLY - CHAINS * amount }],
  });
  const splitId = transactionId(split);
  const inputs = owners.map((owner) => outputId(splitId, split.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(owner.address)))));
  let turn = 0;
  const next: Workload = (size) => Array.from({ length: size }, () => {
    const c = turn++ % CHAINS;
    const input = inputs[c]!;
    const payload = buildTransactionPayload({
      inputs: [{ transactionId: input.slice(0, 64), transactionOutputIndex: Number.parseInt(input.slice(66, 68) + input.slice(64, 66), 16), seed: owners[c]!.seed }],
      outputs: [{ type: 0, address: { type: 0, address: owners[c]!.address }, amount }],
    });
    inputs[c] = outputId(transactionId(payload), 0);
    return payload;
  });
  return { split, next };
}

/**
 * Fills `place` through createNode and its coordinator: `count` messages of `kind` in batches of FILL_BATCH, each batch
 * naming every message of the one before; before each milestone (every PER_MILESTONE messages) a layer or two of
 * messages joins the last batch into one tip, so that the milestone references everything since the one before (as a
 * coordinator on a healthy tangle does); the next batch attaches to that tip and the milestone. So every message is
 * confirmed by the next milestone, and no cone root lags behind max depth.
 */
async function fill(place: Place, kind: "indexation" | "transactions", count: number): Promise<Filled> {
  const genesis = wallet();
  const node = createNode({
    network: NETWORK,
    minPoWScore: 0,
    store: place.store(),
    pow: { workers: 1 },
    ...(kind === "transactions" ? { genesis: [{ outputId: outputId(ZERO_MESSAGE_ID, 0), output: { type: 0 as const, address: { type: 0 as const, address: genesis.address }, amount: TOTAL_SUPPLY } }] } : {}),
  });
  const coordinator = createCoordinator(node, { keys: [COORDINATOR_SEED] });
  const started = performance.now();
  const deadline = started + 30 * 60_000;
  let milestones = 0;
  let messages = 0;
  const submit = async (payloads: Payload[], parents: (i: number) => Uint8Array[]): Promise<string[]> => {
    const results = await Promise.all(payloads.map((payload, i) => node.submitMessage(encodeMessage({ networkId: NETWORK_ID, parents: parents(i), payload, nonce: 1n }))));
    messages += results.length;
    return results.map((r) => r.messageId);
  };
  try {
    await node.ready();
    let previous = [ZERO_MESSAGE_ID];
    let workload: Workload;
    if (kind === "transactions") {
      const tx = transactionWorkload(genesis);
      previous = await submit([tx.split], () => [idBytes(ZERO_MESSAGE_ID)]);
      workload = tx.next;
    } else workload = indexationWorkload();
    let sinceMilestone = 0;
    while (messages < count) {
      inTime(deadline, `filling ${place.engine} with ${count} ${kind}`);
      const size = Math.min(FILL_BATCH, count - messages);
      const batch = previous;
      previous = await submit(workload(size), (i) => parentsFor(batch, i));
      sinceMilestone += size;
      if (sinceMilestone < PER_MILESTONE && messages < count) continue;
      for (let layers = 0; previous.length > 1 && layers < 4; layers++) {
        const groups: string[][] = [];
        for (let i = 0; i < previous.length; i += 8) groups.push(previous.slice(i, i + 8));
        previous = await submit(workload(groups.length), (i) => sortedParents(groups[i]!));
      }
      const milestone = await coordinator.issue();
      if (milestone !== undefined) {
        milestones++;
        previous = [previous[0]!, milestone.messageId];
      }
      sinceMilestone = 0;
    }
  } finally {
    await coordinator.stop();
    await node.close();
  }
  return { milestones, messages, seconds: (performance.now() - started) / 1000 };
}

/** stats() of the place's store, opened and closed around it. */
async function statsOf(place: Place): Promise<Awaited<ReturnType<NodeStore["stats"]>>> {
  const store = place.store();
  await store.open({ network: NETWORK });
  try {
    return await store.stats();
  } finally {
    await store.close();
  }
}

// -----------------------------------------------------------------------------------------------------------------
// `chrysalis serve` and a fixed-rate load generator

interface Serve {
  url: URL;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL if the process has not exited within 20 s; resolves once it has exited. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", () => {
      clearTimeout(kill);
      done();
    });
    child.kill("SIGTERM");
  });
}

function startServe(args: string[]): Promise<Serve> {
  const child = spawn(process.execPath, [CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--no-p2p", "--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-rate-limits", "--no-mqtt", "--log-level", "warn", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not start: ${out}`));
    }, 60_000);
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.stdout.on("data", (c: Buffer) => {
      const before = out;
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m === null || /listening on (http:\/\/\S+)/.test(before)) return;
      clearTimeout(timer);
      resolve({
        url: new URL(m[1]!),
        child,
        output: () => out,
        stop: () => stopChild(child),
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${out}`));
    });
  });
}

/**
 * The node `chrysalis serve` assembles (startNode from the built CLI's setup.js: the same store, edge, coordinator at
 * 1 s, no rate limits, no PoW for submitters, minimum score 0) in a child process of its own, with its pruner
 * (createPruner, keep MIN_PRUNE_KEEP, the default batch, over the node's instrumented store, as serve wires it) started
 * only when told: a "prune" line on its stdin runs one whole pass and answers "pruned {json}". So the same process
 * answers submissions before, while and after it prunes, warmed up before the first measured one.
 */
async function startPrunableNode(storage: string): Promise<Serve & { prune(): Promise<{ pruningIndex: number; messages: number; ms: number }> }> {
  const dist = new URL("..", pathToFileURL(CLI));
  const script = `
    const { startNode } = await import(${JSON.stringify(new URL("cli/setup.js", dist).href)});
    const { LmdbStore, PostgresStore, createPruner } = await import(${JSON.stringify(new URL("node/index.js", dist).href)});
    const storage = ${JSON.stringify(storage)};
    const store = /^postgres(ql)?:/.test(storage) ? new PostgresStore(storage) : new LmdbStore(storage);
    const setup = await startNode({ host: "127.0.0.1", port: 0, network: ${JSON.stringify(NETWORK)}, minPoWScore: 0, pow: false, store,
      coordinator: { intervalMs: 1000, keys: [Uint8Array.from(Buffer.from(${JSON.stringify(toHex(COORDINATOR_SEED))}, "hex"))] },
      limits: { rates: false }, pruning: false });
    const pruner = createPruner(setup.node.store, { keep: ${MIN_PRUNE_KEEP} });
    process.stdout.write("listening on " + setup.server.url + "\\n");
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (line) => {
      if (line.trim() !== "prune") return;
      const started = performance.now();
      pruner.runOnce().then((r) => process.stdout.write("pruned " + JSON.stringify({ ...r, ms: performance.now() - started }) + "\\n"),
        (e) => process.stdout.write("prune failed " + e.message + "\\n"));
    });
    process.once("SIGTERM", () => { process.stdin.destroy(); pruner.stop().then(() => setup.close()).then(() => process.exit(0), () => process.exit(1)); });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
    for (const w of [...waiters]) {
      const m = w.pattern.exec(out);
      if (m !== null) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const wait = (pattern: RegExp, ms: number, what: string): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const m = pattern.exec(out);
      if (m !== null) return resolve(m);
      const timer = setTimeout(() => reject(new Error(`ageing bench: the node did not ${what} within ${ms} ms: ${out.slice(-500)}`)), ms);
      waiters.push({ pattern, resolve: (found) => (clearTimeout(timer), resolve(found)) });
      child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`ageing bench: the node exited (${code}): ${out.slice(-500)}`))));
    });
  const stop = (): Promise<void> => stopChild(child);
  try {
    const listening = await wait(/listening on (http:\/\/\S+)/, 60_000, "listen");
    return {
      url: new URL(listening[1]!),
      child,
      output: () => out,
      stop,
      async prune() {
        out = out.replace(/pruned \{/g, "seen {");
        child.stdin.write("prune\n");
        const m = await wait(/pruned (\{.*\})\n|prune failed (.*)\n/, 15 * 60_000, "prune");
        if (m[1] === undefined) throw new Error(`ageing bench: pruning failed: ${m[2]}`);
        return JSON.parse(m[1]) as { pruningIndex: number; messages: number; ms: number };
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT * 2 });

function httpCall(url: URL, path: string, body?: Uint8Array): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body === undefined ? {} : { "content-type": "application/octet-stream", "content-length": body.length };
    const req = request({ agent, host: url.hostname, port: url.port, path, method: body === undefined ? "GET" : "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${path}: no answer in 30 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

async function info(url: URL): Promise<{ latestMilestoneIndex: number; pruningIndex: number }> {
  const r = await httpCall(url, "/api/v1/info");
  if (r.status !== 200) throw new Error(`/info answered ${r.status}`);
  return (JSON.parse(r.text) as { data: { latestMilestoneIndex: number; pruningIndex: number } }).data;
}

interface Sample {
  /** ms since the load started, when the POST was sent. */
  at: number;
  /** ms the POST took. */
  ms: number;
}

interface LoadResult {
  samples: Sample[];
  skipped: number;
  failed: number;
  firstFailure?: string | undefined;
}

/**
 * Submits `rate` messages a second until `stop()` says so or `maxMs` passes: each one asks GET /api/v1/tips for its
 * parents (as iota.js does) and POSTs the binary message (nonce 1: the node never mines, and its minimum score is 0). A submission due
 * while MAX_IN_FLIGHT are in flight is skipped (counted), so a slow node cannot make the generator queue without bound.
 */
async function fixedRate(url: URL, rate: number, label: string, stop: (elapsedMs: number) => boolean, maxMs: number): Promise<LoadResult> {
  const result: LoadResult = { samples: [], skipped: 0, failed: 0 };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let due = 0;
  let seq = 0;
  const one = async (n: number): Promise<void> => {
    const tips = await httpCall(url, "/api/v1/tips");
    if (tips.status !== 200) throw new Error(`/tips answered ${tips.status}`);
    const ids = (JSON.parse(tips.text) as { data: { tipMessageIds: string[] } }).data.tipMessageIds;
    const message: Message = { networkId: NETWORK_ID, parents: sortedParents(ids), payload: { type: 2, index: utf8.encode(`load ${label}`), data: utf8.encode(`${label} ${n} ${Math.random()}`) }, nonce: 1n };
    const sent = performance.now();
    const r = await httpCall(url, "/api/v1/messages", encodeMessage(message));
    if (r.status !== 201) throw new Error(`POST answered ${r.status}: ${r.text.slice(0, 200)}`);
    result.samples.push({ at: sent - started, ms: performance.now() - sent });
  };
  for (;;) {
    const elapsed = performance.now() - started;
    if (elapsed >= maxMs || stop(elapsed)) break;
    const owed = Math.floor((elapsed * rate) / 1000);
    for (; due < owed; due++) {
      if (pending.size >= MAX_IN_FLIGHT) {
        result.skipped++;
        continue;
      }
      const p: Promise<void> = one(seq++)
        .catch((error: unknown) => {
          result.failed++;
          result.firstFailure ??= (error as Error).message;
        })
        .finally(() => pending.delete(p));
      pending.add(p);
    }
    await sleep(2);
  }
  await Promise.all(pending);
  return result;
}

function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m === null ? Number.NaN : Number(m[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

// -----------------------------------------------------------------------------------------------------------------
// Snapshots

/** A snapshot of `count` unspent outputs over count/10 addresses, summing to the total supply, in output id order. */
function syntheticSnapshot(count: number): LedgerSnapshot {
  const addresses = Array.from({ length: Math.max(1, Math.floor(count / 10)) }, () => globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const each = Math.floor(TOTAL_SUPPLY / count);
  const outputs: SnapshotOutput[] = [];
  for (let i = 0; i < count; i++) {
    const tx = toHex(globalThis.crypto.getRandomValues(new Uint8Array(32)));
    const amount = i === 0 ? TOTAL_SUPPLY - each * (count - 1) : each;
    outputs.push({ outputId: outputId(tx, i % 3), messageId: toHex(globalThis.crypto.getRandomValues(new Uint8Array(32))), milestoneIndexBooked: 1 + (i % 900), output: { type: 0, address: { type: 0, address: addresses[i % addresses.length]! }, amount } });
  }
  outputs.sort((a, b) => (a.outputId < b.outputId ? -1 : a.outputId > b.outputId ? 1 : 0));
  const milestoneId = toHex(globalThis.crypto.getRandomValues(new Uint8Array(32)));
  return {
    network: NETWORK,
    ledger: true,
    milestone: { index: 1000, messageId: milestoneId, timestamp: Math.floor(Date.now() / 1000) },
    coordinatorPublicKeys: [toHex(milestonePublicKey(COORDINATOR_SEED))],
    entryPoints: [{ messageId: milestoneId, index: 1000 }],
    outputs,
  };
}

async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await openFile(file, "w");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

// -----------------------------------------------------------------------------------------------------------------

export default async function ageingBench(): Promise<Row[]> {
  const serverUrl = await postgresServer("ageing");
  const engines: Engine[] = [lmdbEngine, ...(serverUrl !== undefined ? [postgresEngine(serverUrl)] : [])];
  const rows: Row[] = [];
  const work = mkdtempSync(join(tmpdir(), "chrysalis-ageing-files-"));
  const keyFile = join(work, "coordinator.key");
  writeFileSync(keyFile, `${toHex(COORDINATOR_SEED)}\n`);
  const places: Place[] = [];
  const track = (p: Place): Place => {
    places.push(p);
    return p;
  };
  say(`sizes: ${MESSAGES} indexation messages, ${TRANSACTIONS} transactions, ${OUTPUTS} snapshot outputs, load ${RATE}/s, ${MINUTES} min run`);
  try {
    // 1. Bytes per message, on stores filled through the node; the indexation stores are kept for 2 and 3.
    const indexed = new Map<string, Place>();
    const perMessage = new Map<string, number>();
    for (const kind of ["indexation", "transactions"] as const) {
      const count = kind === "indexation" ? MESSAGES : TRANSACTIONS;
      for (const engine of engines) {
        const empty = track(await engine.fresh());
        const emptyStore = empty.store();
        await emptyStore.open({ network: NETWORK });
        await emptyStore.close();
        const before = await statsOf(empty);
        const place = track(await engine.fresh());
        const filled = await fill(place, kind, count);
        const after = await statsOf(place);
        const disk = await place.diskBytes();
        const bytes = (after.bytes - before.bytes) / filled.messages;
        say(`${engine.name}, ${kind}: ${filled.messages} messages and ${filled.milestones} milestones in ${filled.seconds.toFixed(1)} s; stats ${after.messages} messages, ${mb(after.bytes)} in use (${mb(before.bytes)} empty), file ${mb(after.fileBytes)}, disk ${mb(disk)}`);
        const other = perMessage.get(`lmdb ${kind}`);
        perMessage.set(`${engine.name} ${kind}`, bytes);
        const file = engine.name === "lmdb" ? `; data.mdb ${(after.fileBytes / filled.messages).toFixed(0)} B/message` : `; database on disk ${mb(disk)}`;
        rows.push({
          suite: "ageing",
          case: `bytes per message, ${engine.name}, ${count} ${kind === "indexation" ? "indexation messages" : "small transactions"}, a milestone every ${PER_MILESTONE} (stats().bytes above an empty store${file})`,
          ours: bytes,
          ...(engine.name === "postgres" && other !== undefined ? { theirs: other, theirName: "lmdb", ratio: bytes / other } : {}),
          unit: "B/message",
        });
        await empty.remove();
        if (kind === "indexation") indexed.set(engine.name, place);
        else await place.remove();
      }
    }

    // 2. Pruning rate: the prune loop on copies of the indexation store, engines interleaved round by round.
    const rates = new Map<string, { rate: number; messages: number; bytesBefore: number; bytesAfter: number }[]>(engines.map((e) => [e.name, []]));
    for (let round = 0; round < PRUNE_ROUNDS; round++) {
      for (const engine of engines) {
        const copy = track(await indexed.get(engine.name)!.copy());
        const store = copy.store();
        await store.open({ network: NETWORK });
        try {
          const latest = (await store.latestMilestone())!.index;
          const target = latest - MIN_PRUNE_KEEP;
          const bytesBefore = await store.bytes();
          const started = performance.now();
          const deadline = started + 15 * 60_000;
          let messages = 0;
          for (let steps = 0; ; steps++) {
            inTime(deadline, `pruning ${engine.name}`);
            if (steps > MESSAGES + latest * 4 + 100) throw new Error(`ageing bench: pruning ${engine.name} took more steps than it has messages`);
            const step = await store.prune(target, DEFAULT_PRUNE_BATCH);
            messages += step.messages;
            if (step.done) break;
          }
          const seconds = (performance.now() - started) / 1000;
          if (messages === 0) throw new Error(`ageing bench: nothing to prune on ${engine.name} (latest milestone ${latest})`);
          const pruningIndex = await store.pruningIndex();
          if (pruningIndex < target) throw new Error(`ageing bench: ${engine.name} pruned to ${pruningIndex}, not ${target}`);
          const bytesAfter = await store.bytes();
          rates.get(engine.name)!.push({ rate: messages / seconds, messages, bytesBefore, bytesAfter });
          say(`${engine.name}, prune round ${round}: ${messages} messages to index ${pruningIndex} in ${seconds.toFixed(2)} s = ${(messages / seconds).toFixed(0)}/s; ${mb(bytesBefore)} → ${mb(bytesAfter)} in use`);
        } finally {
          await store.close();
          await copy.remove();
        }
      }
    }
    const lmdbRate = rates.has("lmdb") ? median(rates.get("lmdb")!.map((r) => r.rate)) : undefined;
    for (const engine of engines) {
      const results = rates.get(engine.name)!;
      const rate = median(results.map((r) => r.rate));
      const last = results.at(-1)!;
      rows.push({
        suite: "ageing",
        case: `pruning rate, ${engine.name}: prune(latest − ${MIN_PRUNE_KEEP}, ${DEFAULT_PRUNE_BATCH}) loop over ${last.messages} messages, median of ${PRUNE_ROUNDS} (in use ${mb(last.bytesBefore)} → ${mb(last.bytesAfter)})`,
        ours: rate,
        ...(engine.name === "postgres" && lmdbRate !== undefined ? { theirs: lmdbRate, theirName: "lmdb", ratio: rate / lmdbRate } : {}),
        unit: "messages/s",
      });
    }

    // 3. Submit p99 while pruning runs against p99 when it does not: the same node process, the same load generator,
    // pruning switched on in the middle (see startPrunableNode); rounds on fresh copies, engines interleaved.
    const latency = new Map<string, { during: number; quiet: number; ratio: number; count: number; p50During: number; p50Quiet: number; seconds: number; messages: number }[]>(engines.map((e) => [e.name, []]));
    const loadProblems: string[] = [];
    for (let round = 0; round < P99_ROUNDS; round++) {
      for (const engine of engines) {
        const copy = track(await indexed.get(engine.name)!.copy());
        try {
          const node = await startPrunableNode(copy.args[1]!);
          try {
            type Phase = "warm-up" | "before" | "pruning" | "after";
            const phaseOf: { at: number; phase: Phase }[] = [];
            const loadStarted = performance.now();
            const enter = (next: Phase): void => {
              phaseOf.push({ at: performance.now() - loadStarted, phase: next });
            };
            let pruned: { pruningIndex: number; messages: number; ms: number } | undefined;
            const driver = (async () => {
              await sleep(WARM_UP_MS);
              enter("before");
              await sleep(QUIET_SECONDS * 1000);
              enter("pruning");
              pruned = await node.prune();
              enter("after");
              await sleep(QUIET_SECONDS * 1000);
            })();
            let driverDone = false;
            void driver.finally(() => (driverDone = true)).catch(() => undefined);
            const load = await fixedRate(node.url, RATE, "p99", () => driverDone, 15 * 60_000);
            await driver;
            const phaseAt = (at: number): Phase => {
              let current: Phase = "warm-up";
              for (const p of phaseOf) if (p.at <= at) current = p.phase;
              return current;
            };
            // A submission counts in the phase it was sent in, and only when it was answered in that phase too.
            const inPhase = (wanted: Phase): number[] => load.samples.filter((x) => phaseAt(x.at) === wanted && phaseAt(x.at + x.ms) === wanted).map((x) => x.ms);
            const during = inPhase("pruning");
            const quiet = [...inPhase("before"), ...inPhase("after")];
            const result = { during: quantile(during, 0.99), quiet: quantile(quiet, 0.99), ratio: quantile(during, 0.99) / quantile(quiet, 0.99), count: during.length, p50During: quantile(during, 0.5), p50Quiet: quantile(quiet, 0.5), seconds: pruned!.ms / 1000, messages: pruned!.messages };
            if (during.length >= 20) latency.get(engine.name)!.push(result);
            if (load.failed > 0 || load.skipped > 0) loadProblems.push(`${engine.name} round ${round}: ${load.failed} failed, ${load.skipped} skipped (${load.firstFailure ?? "in flight limit"})`);
            say(`${engine.name}, round ${round}: pruned ${pruned!.messages} messages to index ${pruned!.pruningIndex} in ${result.seconds.toFixed(1)} s under load; p99 ${result.during.toFixed(1)} ms pruning (${during.length} submissions), ${result.quiet.toFixed(1)} ms not (${quiet.length})${load.failed + load.skipped > 0 ? `; ${load.failed} failed, ${load.skipped} skipped (${load.firstFailure ?? ""})` : ""}`);
          } finally {
            await node.stop();
          }
        } finally {
          await copy.remove();
        }
      }
    }
    for (const engine of engines) {
      const results = latency.get(engine.name)!;
      if (results.length === 0) {
        rows.push({ suite: "ageing", case: `submit p99 while pruning, ${engine.name}: pruning took too little time for 20 submissions in every round; raise CHRYSALIS_BENCH_AGEING_MESSAGES or _RATE`, ours: Number.NaN, unit: "ms" });
        continue;
      }
      const ratio = median(results.map((r) => r.ratio));
      rows.push({
        suite: "ageing",
        case: `submit p99 at ${RATE}/s while pruning ${median(results.map((r) => r.messages)).toFixed(0)} messages (${median(results.map((r) => r.seconds)).toFixed(1)} s, ${Math.min(...results.map((r) => r.count))}+ submissions), ${engine.name}, against the same node before and after; ratio: median of ${results.length} rounds' (p50 ${median(results.map((r) => r.p50During)).toFixed(1)} / ${median(results.map((r) => r.p50Quiet)).toFixed(1)} ms)`,
        ours: median(results.map((r) => r.during)),
        theirs: median(results.map((r) => r.quiet)),
        theirName: "not pruning",
        ratio,
        target: 1.5,
        atMost: true,
        unit: "ms",
      });
    }
    if (loadProblems.length > 0) say(`load generator: ${loadProblems.join("; ")}`);
    for (const place of indexed.values()) await place.remove();

    // 4. Snapshot create and load at OUTPUTS unspent outputs.
    const synthetic = syntheticSnapshot(OUTPUTS);
    const snapshotTimes = new Map<string, { create: number; load: number; size: number }>();
    for (const engine of engines) {
      const source = track(await engine.fresh());
      const made = performance.now();
      const store = source.store();
      await store.open({ network: NETWORK, snapshot: synthetic });
      say(`${engine.name}: a store of ${OUTPUTS} unspent outputs made from a LedgerSnapshot in ${((performance.now() - made) / 1000).toFixed(1)} s`);
      const file = join(work, `${engine.name}.snapshot`);
      const creates: number[] = [];
      let size = 0;
      try {
        for (let round = 0; round < SNAPSHOT_ROUNDS; round++) {
          const started = performance.now();
          const bytes = encodeSnapshot(await store.readSnapshot());
          await writeDurably(file, bytes);
          creates.push(performance.now() - started);
          size = bytes.length;
        }
      } finally {
        await store.close();
      }
      const loads: number[] = [];
      for (let round = 0; round < SNAPSHOT_ROUNDS; round++) {
        const target = track(await engine.fresh());
        const fresh = target.store();
        const started = performance.now();
        const snapshot = decodeSnapshot(await readFile(file));
        const opened = await fresh.open({ network: NETWORK, snapshot });
        loads.push(performance.now() - started);
        try {
          const stats = await fresh.stats();
          if (!opened.created || stats.unspentOutputs !== OUTPUTS || stats.latestMilestoneIndex !== 1000) throw new Error(`ageing bench: ${engine.name} loaded ${stats.unspentOutputs} outputs at milestone ${stats.latestMilestoneIndex}`);
        } finally {
          await fresh.close();
          await target.remove();
        }
      }
      await source.remove();
      const result = { create: median(creates), load: median(loads), size };
      snapshotTimes.set(engine.name, result);
      say(`${engine.name}: snapshot of ${OUTPUTS} outputs (${mb(size)}): create ${creates.map((t) => t.toFixed(0)).join(", ")} ms; load ${loads.map((t) => t.toFixed(0)).join(", ")} ms`);
    }
    const lmdbSnap = snapshotTimes.get("lmdb");
    for (const engine of engines) {
      const t = snapshotTimes.get(engine.name)!;
      const vs = engine.name === "postgres" && lmdbSnap !== undefined;
      rows.push({ suite: "ageing", case: `snapshot create, ${engine.name}, ${OUTPUTS} unspent outputs (readSnapshot + encode + fsynced write, ${mb(t.size)}; median of ${SNAPSHOT_ROUNDS})`, ours: t.create, ...(vs ? { theirs: lmdbSnap.create, theirName: "lmdb", ratio: t.create / lmdbSnap.create } : {}), unit: "ms" });
      rows.push({ suite: "ageing", case: `snapshot load, ${engine.name}, ${OUTPUTS} unspent outputs (read + decode + open({ snapshot }) on a new store; median of ${SNAPSHOT_ROUNDS})`, ours: t.load, ...(vs ? { theirs: lmdbSnap.load, theirName: "lmdb", ratio: t.load / lmdbSnap.load } : {}), unit: "ms" });
    }

    // 5. Disk and RSS of serve at a fixed rate for MINUTES, one engine after the other (at once, on a small shared
    // machine, the generator falls behind the rate), sampled every 10 s.
    const runMs = MINUTES * 60_000;
    const series: { engine: string; samples: { at: number; disk: number; rss: number; latest: number; pruning: number }[]; load: LoadResult }[] = [];
    for (const engine of engines) {
      series.push(
        await (async () => {
          const place = track(await engine.fresh());
          const node = await startServe([...place.args, "--coordinator-key-file", keyFile, "--milestone-interval", "1s", "--prune-milestones", String(MIN_PRUNE_KEEP)]);
          const samples: { at: number; disk: number; rss: number; latest: number; pruning: number }[] = [];
          let load: LoadResult | undefined;
          try {
            const started = performance.now();
            let running = true;
            const sampler = (async () => {
              for (let i = 1; running && i <= Math.ceil(runMs / SAMPLE_EVERY_MS) + 1; i++) {
                while (running && performance.now() - started < i * SAMPLE_EVERY_MS) await sleep(100);
                if (!running) break;
                const now = await info(node.url).catch(() => ({ latestMilestoneIndex: -1, pruningIndex: -1 }));
                const sample = { at: (performance.now() - started) / 1000, disk: await place.diskBytes(), rss: rssBytes(node.child.pid!), latest: now.latestMilestoneIndex, pruning: now.pruningIndex };
                samples.push(sample);
                say(`${engine.name} at ${sample.at.toFixed(0)} s: disk ${mb(sample.disk)}, RSS ${mb(sample.rss)}, milestone ${sample.latest}, pruning index ${sample.pruning}`);
              }
            })();
            load = await fixedRate(node.url, RATE, `run ${engine.name}`, (ms) => ms >= runMs, runMs + 1000);
            running = false;
            await sampler;
            // The last sample is taken at the end of the run.
            const now = await info(node.url);
            samples.push({ at: (performance.now() - started) / 1000, disk: await place.diskBytes(), rss: rssBytes(node.child.pid!), latest: now.latestMilestoneIndex, pruning: now.pruningIndex });
          } finally {
            await node.stop();
            await place.remove();
          }
          return { engine: engine.name, samples, load: load! };
        })(),
      );
    }
    for (const { engine, samples, load } of series) {
      const end = samples.at(-1)!;
      const half = samples.reduce((best, s) => (Math.abs(s.at - end.at / 2) < Math.abs(best.at - end.at / 2) ? s : best), samples[0]!);
      const accepted = load.samples.length;
      const note = `${accepted} accepted in ${(end.at / 60).toFixed(1)} min${load.failed > 0 ? `, ${load.failed} failed (${load.firstFailure})` : ""}${load.skipped > 0 ? `, ${load.skipped} skipped (${MAX_IN_FLIGHT} in flight)` : ""}; pruning index ${end.pruning} of ${end.latest}`;
      rows.push({ suite: "ageing", case: `disk after ${MINUTES} min at ${RATE}/s, ${engine}, prune 20 at 1 s milestones (at half time ${mb(half.disk)}: end/half ${(end.disk / half.disk).toFixed(2)}×; ${note})`, ours: end.disk / 1e6, unit: "MB" });
      rows.push({ suite: "ageing", case: `serve RSS after ${MINUTES} min at ${RATE}/s, ${engine} (at half time ${mb(half.rss)}: end/half ${(end.rss / half.rss).toFixed(2)}×; p99 submit ${quantile(load.samples.map((s) => s.ms), 0.99).toFixed(1)} ms)`, ours: end.rss / 1e6, unit: "MB" });
    }
  } finally {
    for (const place of places) await place.remove().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
    agent.destroy();
  }
  return rows;
}
