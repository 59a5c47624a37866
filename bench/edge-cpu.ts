// Server CPU per operation: `chrysalis serve` as a child process on the durable default store (LMDB) and on PostgreSQL,
// and a trivial node:http server beside them, all loaded over loopback by 32 keep-alive clients. The figure is the
// server process's own CPU time (user + system from /proc/<pid>/stat, every thread: PoW workers, libuv, LMDB's writer)
// over each load phase, divided by the operations it answered; the cases are given as multiples of the trivial server's
// CPU per request in the same round. Throughput on a 2-core machine measures the loader as much as the server (a
// login's client signs with Ed25519); CPU per operation measures the server alone. PostgreSQL's own backends are not
// counted: they are another process, as they would be on another machine.
//
// Logins and complete submissions are also measured on `serve --in-memory`, which writes nothing durable: what the
// request, its checks and the pipeline cost without the store, so that the durable write's share of each is the
// difference between that row and LMDB's (the in-memory store is bounded too: past 100,000 messages it forgets the
// oldest, one per message stored, in O(1)).
//
// Each round also measures, in this process, one Ed25519 verification and the two flushes of one LMDB commit: the parts
// of a login and of a durable write that no server code can make cheaper, in the same unit as the budgets; and logins
// and complete submissions against bare node:http servers doing only that work (LOGIN_WORK, SUBMISSION_WORK), with
// nothing of the node around it, and raw reads against one reading the message from LMDB and nothing else (READ_WORK).
//
// Issue #33's budgets (BUDGETS) are ratios of a node's case to what it cannot do without, taken pair by pair in each
// round: the bare server doing that work (with its one LMDB write when the node's store is LMDB), or a hello request for
// a raw read. Each round measures one case at a time, its servers (the bare ones, the nodes, and with raw reads the
// hello server) taking turns of a second, so that a neighbour's load weighs on both sides of a pair alike.
//
// With CHRYSALIS_BASELINE=<dist directory of another build> (bench/build-baseline.sh), that build's serve runs on LMDB
// and on PostgreSQL beside ours in every round, so each case is measured before and after a change in one run.
//
// CHRYSALIS_EDGE_PROFILE=<dir> runs each serve and each bare server under `node --cpu-prof` and writes the profiles
// there;
// CHRYSALIS_EDGE_CPU_TURNS=3 sets how many turns a case's 3 seconds (CHRYSALIS_EDGE_CPU_SECONDS) are split into;
// CHRYSALIS_EDGE_CPU_CASES=login,raw read (a list) and CHRYSALIS_EDGE_CPU_STORES=lmdb,memory,postgres measure only those;
// CHRYSALIS_EDGE_SERVE_ARGS=--no-metrics (a list) passes more arguments to serve.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, constants, existsSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { baselineDir } from "./baseline.js";
import { benchDatabase, postgresServer } from "./postgres.js";
import { generateIdentityKeyPair, signNonce } from "../src/auth/index.js";
import { ed25519PublicKey, signEd25519, verifyEd25519 } from "../src/crypto/ed25519.js";
import { toHex } from "../src/bytes/hex.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId } from "../src/model/ids.js";
import { messageToJson } from "../src/model/json.js";
import type { Message } from "../src/model/types.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench";
const CLIENTS = 32;
const IDENTITIES = 1024;
// The node mines one message at a time and lets one identity have 4 jobs in flight: 4 clients keep its miner busy.
const MINING_CLIENTS = 4;
const ROUNDS = Number(process.env.CHRYSALIS_EDGE_CPU_ROUNDS ?? 3);
const SECONDS = Number(process.env.CHRYSALIS_EDGE_CPU_SECONDS ?? 3);
// A case's servers take turns: each runs SECONDS in all, in TURNS turns (turns()).
const TURNS = Math.max(1, Number(process.env.CHRYSALIS_EDGE_CPU_TURNS ?? 3));
const SECRET = "a benchmark jwt secret of at least thirty-two bytes";
// The CLI compiled beside this file (the same build as the bench, whichever output directory it went to).
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const CLOCK_TICKS = 100; // USER_HZ: /proc reports CPU times in 1/100 s on every Linux architecture
const utf8 = new TextEncoder();
const list = (value: string | undefined): string[] | undefined => (value === undefined || value === "" ? undefined : value.split(",").map((x) => x.trim()));
const CASES = list(process.env.CHRYSALIS_EDGE_CPU_CASES);
const STORES = list(process.env.CHRYSALIS_EDGE_CPU_STORES);
// More serve arguments (experiments: what --log-level silent or --no-metrics would save).
const EXTRA_ARGS = list(process.env.CHRYSALIS_EDGE_SERVE_ARGS) ?? [];
const wanted = (among: readonly string[] | undefined, name: string): boolean => among === undefined || among.includes(name);

export interface Answer {
  status: number;
  body: string;
}

/** One request on a keep-alive agent, its whole body read as text (the edge suites' load generators). */
export function send(agent: Agent, port: number, method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.length);
    const req = request({ host: "127.0.0.1", port, method, path, agent, headers: h }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function expect(answer: Answer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.body.slice(0, 200)}`);
}

/** User and system CPU seconds in a /proc stat file: a process's (all its threads) or one thread's (task/<tid>/stat). */
function statSeconds(path: string): { user: number; system: number } {
  const stat = readFileSync(path, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

/** CPU seconds of a process so far: all its threads, and its main thread (the JavaScript event loop) alone; the rest is
 * V8's helpers (concurrent GC, compilers), libuv's pool (LMDB's commits and fsyncs) and the PoW workers. */
export function cpuSeconds(pid: number): { user: number; system: number; main: number } {
  const all = statSeconds(`/proc/${pid}/stat`);
  const main = statSeconds(`/proc/${pid}/task/${pid}/stat`);
  return { ...all, main: main.user + main.system };
}

/** µs of one Ed25519 verification on this machine, as the node makes it for a login (verifyEd25519: libsodium where
 * it loads, else node:crypto), measured in this process: the part of a login no server code can make cheaper. */
function verifyMicros(): number {
  const seed = new Uint8Array(32).fill(7);
  const publicKey = ed25519PublicKey(seed);
  const message = utf8.encode("a prove-ownership nonce of the usual length, 64 hex chars.......");
  const signature = signEd25519(seed, message);
  const count = 2000;
  const started = performance.now();
  for (let i = 0; i < count; i++) if (!verifyEd25519(publicKey, message, signature)) throw new Error("the verification failed");
  return ((performance.now() - started) * 1000) / count;
}

// The probe file's size: written whole once per run (not once a round: rewriting 16 MiB before every measurement put
// that much disk traffic beside the phases it measured), so that the timed writes land on allocated blocks as LMDB's
// mostly do.
const PROBE_PAGES = 4096;

/**
 * µs of this process's CPU (user + system, every thread) for the flushes one LMDB commit makes, whatever it holds:
 * a 4 KiB page written and `fdatasync`ed, then the meta page's 4 KiB synchronous (O_DSYNC) write, in a file beside
 * the stores'. On a VM each flush is a trip through the virtual disk; this is the part of a durable write that no
 * server code can make cheaper, only share (grouped.ts). Each further scattered page of a commit adds its own write.
 */
function flushProbe(dir: string): { measure(): number; close(): void } {
  const path = join(dir, "flush-probe");
  const page = Buffer.alloc(4096, 1);
  writeFileSync(path, Buffer.alloc(PROBE_PAGES * page.length));
  const data = openSync(path, "r+");
  const meta = openSync(path, constants.O_WRONLY | constants.O_DSYNC);
  fdatasyncSync(data);
  let next = 0;
  return {
    measure(): number {
      const count = 300;
      const before = process.cpuUsage();
      for (let i = 0; i < count; i++, next++) {
        writeSync(data, page, 0, page.length, page.length * (1 + ((next * 2_654_435_761) % (PROBE_PAGES - 1))));
        fdatasyncSync(data);
        writeSync(meta, page, 0, page.length, 0);
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / count;
    },
    close(): void {
      closeSync(data);
      closeSync(meta);
      rmSync(path, { force: true });
    },
  };
}

interface Phase {
  /** Operations answered. */
  operations: number;
  /** Milliseconds each operation took, as its client saw it. */
  latencies: number[];
  /** Server CPU seconds over the phase (user + system), the system part of it, and the main thread's part. */
  cpu: number;
  system: number;
  main: number;
  seconds: number;
  /** Nonces the node's PoW workers tried over the phase (mining cases). */
  hashes?: number;
}

/** Runs `step` on `clients` concurrent loops for `seconds` against the server `pid`, counting its CPU. */
async function phase(pid: number, seconds: number, step: (agent: Agent, client: number, i: number) => Promise<void>, clients = CLIENTS): Promise<Phase> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  let operations = 0;
  const latencies: number[] = [];
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; performance.now() < end; i++) {
        const at = performance.now();
        await step(agent, client, i);
        latencies.push(performance.now() - at);
        operations++;
      }
    }),
  );
  const took = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(pid);
  agent.destroy();
  const system = cpuAfter.system - cpuBefore.system;
  return { operations, latencies, cpu: cpuAfter.user - cpuBefore.user + system, system, main: cpuAfter.main - cpuBefore.main, seconds: took };
}

/** One load phase of a server, run for the seconds given. */
type Run = (seconds: number) => Promise<Phase>;

/**
 * Runs every one of `runs` for SECONDS in all, in TURNS turns of SECONDS / TURNS, the order reversed every other
 * turn, and gives each run's phases summed. On a shared VM the load of a neighbour shifts within seconds: the two sides
 * of a pair (a bare server and the node measured against it) taking turns a second apart meet it alike, and reversing
 * the order cancels a steady drift, where two 3-second phases run one after the other did not (one pair ranged from
 * 1.1x to 2.2x between rounds).
 */
async function turns(runs: readonly Run[]): Promise<Phase[]> {
  const sums: Phase[] = runs.map(() => ({ operations: 0, latencies: [], cpu: 0, system: 0, main: 0, seconds: 0 }));
  for (let turn = 0; turn < TURNS; turn++) {
    for (let k = 0; k < runs.length; k++) {
      const i = turn % 2 === 0 ? k : runs.length - 1 - k;
      const p = await runs[i]!(SECONDS / TURNS);
      const sum = sums[i]!;
      sum.operations += p.operations;
      for (const ms of p.latencies) sum.latencies.push(ms);
      sum.cpu += p.cpu;
      sum.system += p.system;
      sum.main += p.main;
      sum.seconds += p.seconds;
      if (p.hashes !== undefined) sum.hashes = (sum.hashes ?? 0) + p.hashes;
    }
  }
  return sums;
}

export interface Server {
  readonly name: string;
  readonly port: number;
  readonly pid: number;
  /** What it printed on standard output so far (its access log, and serve's start-up lines). */
  output(): string;
  stop(): Promise<void>;
}

/** Spawns a server whose standard output (its access log) goes to a file, and waits for "listening on http://…:port". */
export async function spawnServer(name: string, args: string[], env: Record<string, string> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "chrysalis-edge-out-"));
  const outFile = join(dir, "out.log");
  const out = openSync(outFile, "w");
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", out, "pipe"], env: { ...process.env, ...env } });
  closeSync(out);
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString();
    if (process.env.CHRYSALIS_EDGE_STDERR !== undefined) process.stderr.write(c);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 60_000;
  for (;;) {
    const text = readFileSync(outFile, "utf8");
    const m = /listening on http:\/\/[^:\s]+:(\d+)/.exec(text);
    if (m !== null) return { name, port: Number(m[1]), pid: child.pid!, output: () => readFileSync(outFile, "utf8"), stop };
    if (child.exitCode !== null || performance.now() > deadline) {
      await stop();
      throw new Error(`${name} did not start: ${stderr} ${text.slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const HELLO = `
const { createServer } = require("node:http");
const body = JSON.stringify({ data: { ok: true } });
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(body.length) });
  res.end(body);
});
server.keepAliveTimeout = 65000;
server.listen(0, "127.0.0.1", () => process.stdout.write("listening on http://127.0.0.1:" + server.address().port + "\\n"));
process.once("SIGTERM", () => process.exit(0));
`;

// With DURABLE_DIR set, a bare server also makes its operation's one durable write, with lmdb-js opened as the node's
// LMDB store opens it (a write resolves once committed and synced; concurrent writes share a commit): a login redeems
// its nonce (a 20-byte key, grouped as the node groups redemptions), a submission stores its bytes under its id. Nothing
// else: no tips, children, index, metadata or ledger. How far the node's LMDB figures sit above these is the node's own.
const DURABLE = `
const durable = process.env.DURABLE_DIR === undefined ? undefined : require(process.env.LMDB_MODULE).open({ path: process.env.DURABLE_DIR, keyEncoding: "binary", encoding: "binary", overlappingSync: false, eventTurnBatching: false });
`;

// A login's work and nothing else, on bare node:http: the nonce of GET is an HMAC of the identity and the second (as
// the node's stateless nonces are), and the POST of the signature is read as JSON, its nonce made again (the previous
// second's too, were the second to turn between the two requests), its SHA-256 verified against the identity's key
// (libsodium where it loads, as the node does), and an HS256 JWT issued. Nothing is stored, limited, logged or
// counted: how far the node's in-memory login sits above this is what its HTTP handling, edge and auth layer add. With
// DURABLE_DIR the same server also redeems each nonce in LMDB: the login's work and its one durable write.
const LOGIN_WORK = `
const { createServer } = require("node:http");
const crypto = require("node:crypto");
${DURABLE}
// Redemptions made while a commit is in flight wait and go together in the next (as the node groups them).
let redeeming = false;
let waiting = [];
const redeemGroup = () => {
  const group = waiting;
  waiting = [];
  redeeming = true;
  let written;
  try {
    written = durable.transaction(() => group.map(({ key }) => (durable.doesExist(key) ? false : (durable.putSync(key, EXPIRY), true))));
  } catch (error) {
    written = Promise.reject(error);
  }
  written
    .then((fresh) => group.forEach((w, i) => w.resolve(fresh[i])), (error) => group.forEach((w) => w.reject(error)))
    .finally(() => {
      redeeming = false;
      if (waiting.length > 0) redeemGroup();
    });
};
const redeem = (key) => new Promise((resolve, reject) => {
  waiting.push({ key, resolve, reject });
  if (!redeeming) redeemGroup();
});
// The value kept with each redeemed nonce: 8 bytes, as the node keeps its expiry.
const EXPIRY = Buffer.alloc(8);
let verify;
try {
  const sodium = require(process.env.SODIUM_MODULE);
  verify = (signature, digest, key) => sodium.crypto_sign_verify_detached(signature, digest, key);
} catch {
  verify = (signature, digest, key) => crypto.verify(null, digest, crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.toString("base64url") }, format: "jwk" }), signature);
}
const keys = new Map(Object.entries(JSON.parse(require("node:fs").readFileSync(process.env.IDENTITIES, "utf8"))).map(([id, hex]) => [id, Buffer.from(hex, "hex")]));
const nonceKey = crypto.createSecretKey(crypto.randomBytes(32));
const jwtKey = crypto.createSecretKey(crypto.randomBytes(32));
const PREFIX = "/authentication/prove-ownership/";
const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");
// An identity may log in several times a second: the lane tells its nonces of one second apart. The next lane of an
// identity is the one after its last redeemed (a login's GET and POST come one after the other, so the POST's nonce
// is found at the first try, as the node's lane hint finds it). Each identity here belongs to one client, which logs
// in one step at a time: no two logins of one identity overlap.
const lanes = new Map();
const laneOf = (id, second) => {
  const last = lanes.get(id);
  return last !== undefined && last.second === second ? last.next : 0;
};
const nonceOf = (id, second, lane) => {
  const head = second.toString(16).padStart(8, "0") + lane.toString(16).padStart(2, "0");
  return head + crypto.createHmac("sha256", nonceKey).update(head + id).digest("hex").slice(0, 30);
};
const answer = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), "cache-control": "no-store" });
  res.end(body);
};
const server = createServer((req, res) => {
  const id = decodeURIComponent(req.url.slice(PREFIX.length));
  const key = req.url.startsWith(PREFIX) ? keys.get(id) : undefined;
  if (key === undefined) {
    req.resume();
    return answer(res, 404, "{}");
  }
  const second = Math.floor(Date.now() / 1000);
  if (req.method === "GET") {
    req.resume();
    return answer(res, 200, JSON.stringify({ nonce: nonceOf(id, second, laneOf(id, second)) }));
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const signature = Buffer.from(JSON.parse(Buffer.concat(chunks).toString()).signedNonce, "hex");
    for (const s of [second, second - 1]) {
      const lane = laneOf(id, s);
      const nonce = nonceOf(id, s, lane);
      if (!verify(signature, crypto.hash("sha256", nonce, "buffer"), key)) continue;
      const issue = () => {
        if (lanes.size >= 100000) lanes.clear();
        lanes.set(id, { second: s, next: lane + 1 });
        const claims = Buffer.from(JSON.stringify({ sub: id, iat: second, exp: second + 3600, jti: crypto.randomBytes(16).toString("base64url") })).toString("base64url");
        const input = header + "." + claims;
        answer(res, 200, JSON.stringify({ jwt: input + "." + crypto.createHmac("sha256", jwtKey).update(input).digest("base64url") }));
      };
      if (durable === undefined) return issue();
      return redeem(Buffer.from(nonce, "hex")).then((fresh) => (fresh ? issue() : answer(res, 401, "{}")), () => answer(res, 503, "{}"));
    }
    answer(res, 401, "{}");
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, "127.0.0.1", () => process.stdout.write("listening on http://127.0.0.1:" + server.address().port + "\\n"));
process.once("SIGTERM", () => process.exit(0));
`;
// A raw read's work and nothing else, on bare node:http: the id in the path checked (64 hex digits) and decoded, the
// bytes read from LMDB (opened as the node opens it: DURABLE_DIR is always set here) out of lmdb-js's reusable read
// buffer and copied, as the node copies them, and answered as application/octet-stream. Nothing limited, logged or
// counted. The raw read's budget is a multiple of a hello request; this is the floor beside it, the part of a read no
// server can leave out, so that how far the node sits above the work itself shows too.
const READ_WORK = `
const { createServer } = require("node:http");
${DURABLE}
durable.putSync(Buffer.from(process.env.READ_ID, "hex"), Buffer.from(process.env.READ_MESSAGE, "hex"));
const PATH = /^\\/api\\/v1\\/messages\\/([0-9a-f]{64})\\/raw$/;
const answer = (res, status, type, body) => {
  res.writeHead(status, { "content-type": type, "content-length": String(body.length) });
  res.end(body);
};
const server = createServer((req, res) => {
  req.resume();
  const id = req.method === "GET" ? PATH.exec(req.url) : null;
  const fast = id === null ? undefined : durable.getBinaryFast(Buffer.from(id[1], "hex"));
  if (fast === undefined) return answer(res, 404, "application/json; charset=utf-8", "{}");
  const bytes = Buffer.allocUnsafe(fast.length);
  // Its \`length\` is the value's; the reused buffer behind it is longer.
  bytes.set(fast.subarray(0, fast.length));
  answer(res, 200, "application/octet-stream", bytes);
});
server.keepAliveTimeout = 65000;
server.listen(0, "127.0.0.1", () => process.stdout.write("listening on http://127.0.0.1:" + server.address().port + "\\n"));
process.once("SIGTERM", () => process.exit(0));
`;

/** The path a package resolves to from this module, or undefined when it is not installed. */
function moduleHere(name: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(name);
  } catch {
    return undefined;
  }
}

/** The names the bare servers' rows go by: without and with DURABLE_DIR. */
const WORK_NAME = "the work alone";
const DURABLE_WORK_NAME = "the work and its LMDB write";
const READ_WORK_NAME = "the work and its LMDB read";
/** The hello server's name as the other side of a pair. */
const HELLO_NAME = "a hello request";
/** Issue #33's budgets: a node's case (its store, the case) against the other side measured in the same round; no
 * `atMost`: reported only. */
const BUDGETS: readonly { store: string; case: string; against: string; atMost?: number }[] = [
  { store: "lmdb", case: "complete submission", against: DURABLE_WORK_NAME, atMost: 1.5 },
  { store: "memory", case: "complete submission", against: WORK_NAME, atMost: 1.5 },
  { store: "postgres", case: "complete submission", against: WORK_NAME },
  { store: "lmdb", case: "login", against: DURABLE_WORK_NAME, atMost: 1.25 },
  { store: "memory", case: "login", against: WORK_NAME, atMost: 1.25 },
  { store: "postgres", case: "login", against: WORK_NAME },
  { store: "lmdb", case: "raw read", against: HELLO_NAME, atMost: 1.5 },
  { store: "postgres", case: "raw read", against: HELLO_NAME },
  { store: "lmdb", case: "raw read", against: READ_WORK_NAME },
];
/** The order of the cases in a round (the keys of a node's steps; a bare server's case is its key). */
const CASE_ORDER = ["raw read", "complete submission", "login", "partial"];

/** What each bare server does, for its rows ("<its name> on bare node:http (<this>)"). */
const BARE_WORK: Record<string, { [store: string]: string }> = {
  "raw read": { [READ_WORK_NAME]: "the id checked, the bytes read from LMDB and copied; nothing limited, logged or counted" },
  login: {
    [WORK_NAME]: "nonce MAC, SHA-256, one verification, an HS256 JWT; nothing stored, limited, logged or counted",
    [DURABLE_WORK_NAME]: "the same, and the nonce redeemed in LMDB, redemptions grouped; nothing else stored, limited, logged or counted",
  },
  "complete submission": {
    [WORK_NAME]: "JWT checked, JSON read, PoW score, id, kept in a Map; nothing durable, limited, logged or counted",
    [DURABLE_WORK_NAME]: "the same, the bytes stored under the id in LMDB; no tips, children, index or metadata, nothing limited, logged or counted",
  },
};

// A complete submission's work and nothing else, on bare node:http with the library's public functions: the HS256 JWT
// checked (signature, algorithm, expiry) on every request, the JSON text read into the message and its bytes
// (messageFromJsonTextWithBytes), its PoW score and id computed, the bytes kept in a Map (cleared at 100,000) and
// `{ data: { messageId } }` answered with 201. No parent, network or solidity check, nothing durable, limited, logged or
// counted: the same comparison as LOGIN_WORK's, for submissions.
const SUBMISSION_WORK = `
const { createServer } = require("node:http");
const crypto = require("node:crypto");
${DURABLE}
const secret = crypto.createSecretKey(Buffer.from(require("node:fs").readFileSync(process.env.JWT_SECRET_FILE, "utf8").trim()));
const answer = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
};
const authorized = (header) => {
  if (typeof header !== "string" || !header.startsWith("Bearer ")) return false;
  const [head, claims, signature] = header.slice(7).split(".");
  if (signature === undefined) return false;
  const expected = crypto.createHmac("sha256", secret).update(head + "." + claims).digest();
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return false;
  if (JSON.parse(Buffer.from(head, "base64url").toString()).alg !== "HS256") return false;
  return JSON.parse(Buffer.from(claims, "base64url").toString()).exp > Date.now() / 1000;
};
const stored = new Map();
Promise.all([import(process.env.CHRYSALIS_LIBRARY), import(process.env.CHRYSALIS_POW)]).then(([{ messageFromJsonTextWithBytes, messageId }, { powScore }]) => {
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/api/v1/messages" || !authorized(req.headers.authorization)) {
      req.resume();
      return answer(res, 401, "{}");
    }
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const { bytes } = messageFromJsonTextWithBytes(Buffer.concat(chunks).toString());
      if (!(powScore(bytes) >= 0)) return answer(res, 400, "{}");
      const id = messageId(bytes);
      const body = JSON.stringify({ data: { messageId: id } });
      if (durable === undefined) {
        if (stored.size >= 100000) stored.clear();
        stored.set(id, bytes);
        return answer(res, 201, body);
      }
      const key = Buffer.from(id, "hex");
      durable
        .transaction(() => {
          if (!durable.doesExist(key)) durable.putSync(key, bytes);
        })
        .then(() => answer(res, 201, body), () => answer(res, 503, "{}"));
    });
  });
  server.keepAliveTimeout = 65000;
  server.listen(0, "127.0.0.1", () => process.stdout.write("listening on http://127.0.0.1:" + server.address().port + "\\n"));
});
process.once("SIGTERM", () => process.exit(0));
`;

interface Storage {
  args: string[];
  remove(): Promise<void>;
}

function lmdbStorage(): Storage {
  const path = mkdtempSync(join(tmpdir(), "chrysalis-edge-lmdb-"));
  return { args: ["--data-dir", path], remove: async () => rmSync(path, { recursive: true, force: true }) };
}

/** The cases measured on `serve --in-memory`: the two whose durable write matters (a read writes nothing, and mining
 * is the PoW worker's time whatever the store). */
const MEMORY_CASES = ["complete submission", "login"];
function memoryStorage(): Storage {
  return { args: ["--in-memory"], remove: async () => undefined };
}

async function postgresStorage(serverUrl: string): Promise<Storage> {
  const db = await benchDatabase(serverUrl, "chrysalis_edge");
  return { args: ["--database", db.url], remove: db.remove };
}

interface Identity {
  id: string;
  secretKey: string;
  publicKey: Uint8Array;
}

/** One login as the Integration Services client makes it: GET the nonce, sign it, POST only the signature. */
async function login(agent: Agent, port: number, who: Identity): Promise<string> {
  const path = `/authentication/prove-ownership/${who.id}`;
  const nonce = await send(agent, port, "GET", path);
  expect(nonce, 200, "login nonce");
  const signedNonce = signNonce((JSON.parse(nonce.body) as { nonce: string }).nonce, who.secretKey);
  const proof = await send(agent, port, "POST", path, JSON.stringify({ signedNonce }), { "content-type": "application/json" });
  expect(proof, 200, "login proof");
  return (JSON.parse(proof.body) as { jwt: string }).jwt;
}

let submissionCounter = 0;

function indexation(tag: string, nonce: bigint, parents: Uint8Array[] = [new Uint8Array(32)]): Message {
  const n = submissionCounter++;
  return {
    networkId: networkId(NETWORK),
    parents,
    payload: { type: 2, index: utf8.encode("bench"), data: utf8.encode(`edge ${tag} ${process.pid} ${n} ${"x".repeat(80)}`) },
    nonce,
  };
}

/** A node under test: serve on one store at score 0 (reads, complete submissions, logins) and one at score 100 (partial
 * submissions the node mines). */
interface NodeUnderTest {
  name: string;
  plain: Server;
  mining: Server;
  jwt: string;
  miningJwt: string;
  readPath: string;
  /** The cases measured on it (default: all). */
  cases?: readonly string[];
  close(): Promise<void>;
}

async function startNodes(name: string, storage: () => Promise<Storage>, files: { secret: string; identities: string }, who: Identity, profileDir: string | undefined, cli = CLI): Promise<NodeUnderTest> {
  const stores = [await storage(), await storage()];
  const servers: Server[] = [];
  try {
    const start = async (score: number, store: Storage): Promise<Server> => {
      const prof = profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `serve-${name}-score${score}-${Date.now()}.cpuprofile`];
      // No gossip (a build before it had no such flag, and none listened; a build with it has the p2p command's file).
      const gossips = cli === CLI || existsSync(join(dirname(cli), "p2p.js"));
      const args = [...prof, cli, "serve", "--host", "127.0.0.1", "--port", "0", ...(gossips ? ["--no-p2p"] : []), "--network", NETWORK, "--min-pow-score", String(score), "--workers", "1"];
      args.push("--no-rate-limits", "--no-dashboard", "--log-format", "json", "--jwt-secret-file", files.secret, "--identities", files.identities, ...store.args, ...EXTRA_ARGS);
      const server = await spawnServer(`serve ${name} score ${score}`, args);
      servers.push(server);
      return server;
    };
    const plain = await start(0, stores[0]!);
    const mining = await start(100, stores[1]!);
    const agent = new Agent({ keepAlive: true });
    const jwt = await login(agent, plain.port, who);
    const miningJwt = await login(agent, mining.port, who);
    const first = encodeMessage(indexation("first", 1n));
    expect(await send(agent, plain.port, "POST", "/api/v1/messages", first, { authorization: `Bearer ${jwt}`, "content-type": "application/octet-stream" }), 201, "first message");
    agent.destroy();
    return {
      name,
      plain,
      mining,
      jwt,
      miningJwt,
      readPath: `/api/v1/messages/${messageId(first)}/raw`,
      async close() {
        await Promise.all(servers.map((s) => s.stop()));
        await Promise.all(stores.map((s) => s.remove()));
      },
    };
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(stores.map((s) => s.remove()));
    throw error;
  }
}

/** The JSON body of a new complete message on these parents (score 0: any nonce passes and the check still runs; not 0,
 * which a node reads as "mine it for me"). Made as it is sent: a fixed supply would run out on a faster machine. */
function completeJson(parents: Uint8Array[]): string {
  return JSON.stringify(messageToJson(indexation("complete", 1n, parents)));
}

/** The node's current tips, as a client picks parents: asked before each phase (a fixed parent would fall below max
 * depth as milestones pass during a long run). */
async function currentTips(port: number): Promise<Uint8Array[]> {
  const agent = new Agent({ keepAlive: false });
  try {
    const answer = await send(agent, port, "GET", "/api/v1/tips");
    expect(answer, 200, "tips");
    return (JSON.parse(answer.body) as { data: { tipMessageIds: string[] } }).data.tipMessageIds.map((id) => Buffer.from(id, "hex"));
  } finally {
    agent.destroy();
  }
}

/** The JSON body of a new partial message: the payload alone, the node fills network, parents and nonce. */
function partialJson(): string {
  const p = indexation("partial", 0n).payload as { index: Uint8Array; data: Uint8Array };
  return JSON.stringify({ payload: { type: 2, index: toHex(p.index), data: toHex(p.data) } });
}

function median(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export interface CpuCase {
  store: string;
  case: string;
  /** Per round: µs of server CPU per operation, and the same over the hello server's µs per request in that round. */
  micros: number[];
  /** Per round: µs of the main thread's CPU per operation (the rest ran on V8's, libuv's and the PoW workers' threads). */
  mainMicros: number[];
  multiples: number[];
  rates: number[];
  /** Per round: the median and 99th percentile of the operations' latencies (ms). */
  p50: number[];
  p99: number[];
  /** Per round, for mining: nonces the node's PoW workers tried per second (from its /metrics). */
  hashRates: number[];
}

function percentile(values: number[], p: number): number {
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

/** The node's chrysalis_pow_hashes_total, read from its /metrics. */
async function powHashes(port: number): Promise<number> {
  const agent = new Agent({ keepAlive: false });
  try {
    const answer = await send(agent, port, "GET", "/metrics");
    expect(answer, 200, "metrics");
    const m = /^chrysalis_pow_hashes_total (\S+)$/m.exec(answer.body);
    if (m === null) throw new Error("the node's metrics have no chrysalis_pow_hashes_total");
    return Number(m[1]);
  } finally {
    agent.destroy();
  }
}

/** Measures every case; returns the rows and the raw per-round figures. */
export async function cpuPerOperation(): Promise<{ rows: Row[]; cases: CpuCase[]; hello: number[] }> {
  const profileDir = process.env.CHRYSALIS_EDGE_PROFILE;
  const identities: Identity[] = Array.from({ length: IDENTITIES }, (_, i) => ({ id: `did:iota:bench${i}`, ...generateIdentityKeyPair() }));
  const dir = mkdtempSync(join(tmpdir(), "chrysalis-edge-cpu-"));
  const files = { secret: join(dir, "jwt-secret"), identities: join(dir, "identities.json") };
  writeFileSync(files.secret, SECRET, { mode: 0o600 });
  writeFileSync(files.identities, JSON.stringify(Object.fromEntries(identities.map((x) => [x.id, toHex(x.publicKey)]))));
  const serverUrl = await postgresServer("edge");
  const hello = await spawnServer("hello", ["-e", HELLO]);
  const probe = flushProbe(dir);
  // The bare servers are profiled beside serve, to compare a node's profile with the work's.
  const work = (which: string, script: string): string[] => [...(profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `work-${which}-${Date.now()}.cpuprofile`]), "-e", script];
  const library = (entry: string): string => fileURLToPath(new URL(`../src/${entry}`, import.meta.url));
  // The scripts find lmdb (and sodium-native, an optional dependency) where this module does, wherever the bench was
  // started from.
  const lmdbModule = moduleHere("lmdb");
  const sodiumModule = moduleHere("sodium-native");
  /** The bare servers: each case's work alone, and with its one durable write. */
  const bares: { store: string; case: string; server: Server }[] = [];
  const nodes: NodeUnderTest[] = [];
  try {
    for (const durable of [false, true]) {
      const store = durable ? DURABLE_WORK_NAME : WORK_NAME;
      const env = (which: string): Record<string, string> => ({
        ...(durable ? { DURABLE_DIR: join(dir, `durable-${which}`), LMDB_MODULE: lmdbModule! } : {}),
        ...(which === "login" && sodiumModule !== undefined ? { SODIUM_MODULE: sodiumModule } : {}),
      });
      const name = (which: string): string => (durable ? `${which}-durable` : which);
      if (wanted(CASES, "login")) bares.push({ store, case: "login", server: await spawnServer(`${store}, login`, work(name("login"), LOGIN_WORK), { IDENTITIES: files.identities, ...env("login") }) });
      if (wanted(CASES, "complete submission")) {
        const server = await spawnServer(`${store}, submission`, work(name("submission"), SUBMISSION_WORK), { JWT_SECRET_FILE: files.secret, CHRYSALIS_LIBRARY: library("index.js"), CHRYSALIS_POW: library("pow/index.js"), ...env("submission") });
        bares.push({ store, case: "complete submission", server });
      }
    }
    // The raw read's bare server reads one message of the same size as the node's, from its own LMDB.
    const readMessage = encodeMessage(indexation("first", 1n));
    const bareReadPath = `/api/v1/messages/${messageId(readMessage)}/raw`;
    if (wanted(CASES, "raw read")) {
      const env = { DURABLE_DIR: join(dir, "durable-read"), LMDB_MODULE: lmdbModule!, READ_ID: messageId(readMessage), READ_MESSAGE: toHex(readMessage) };
      bares.push({ store: READ_WORK_NAME, case: "raw read", server: await spawnServer(`${READ_WORK_NAME}, raw read`, work("read", READ_WORK), env) });
    }
    if (wanted(STORES, "lmdb")) nodes.push(await startNodes("lmdb", async () => lmdbStorage(), files, identities[0]!, profileDir));
    // The build before a change, on the same store engines, measured in the same rounds.
    if (baselineDir !== undefined && baselineDir !== "" && wanted(STORES, "lmdb")) nodes.push(await startNodes("lmdb, before", async () => lmdbStorage(), files, identities[0]!, profileDir, join(baselineDir, "cli/main.js")));
    if (wanted(STORES, "memory")) nodes.push({ ...(await startNodes("memory", async () => memoryStorage(), files, identities[0]!, profileDir)), cases: MEMORY_CASES });
    if (serverUrl !== undefined && wanted(STORES, "postgres")) nodes.push(await startNodes("postgres", () => postgresStorage(serverUrl), files, identities[0]!, profileDir));
    if (baselineDir !== undefined && baselineDir !== "" && serverUrl !== undefined && wanted(STORES, "postgres")) {
      nodes.push(await startNodes("postgres, before", () => postgresStorage(serverUrl), files, identities[0]!, profileDir, join(baselineDir, "cli/main.js")));
    }
    const cases = new Map<string, CpuCase>();
    // Per counted round: the hello server's µs per request, and the two measurements made in this process beside it.
    const helloMicros: number[] = [];
    const verifies: number[] = [];
    const flushes: number[] = [];
    /** The median of a measurement's per-round multiples of that round's hello request. */
    const medianMultiple = (micros: readonly number[]): number => median(micros.map((us, i) => us / helloMicros[i]!));
    // Each client logs in with its own 32 identities in turn: 1,024 in all.
    const loginPhase =
      (server: Server): Run =>
      (seconds) =>
        phase(server.pid, seconds, (agent, client, i) => login(agent, server.port, identities[client * (IDENTITIES / CLIENTS) + (i % (IDENTITIES / CLIENTS))]!).then(() => undefined));
    const record = (store: string, name: string, p: Phase, helloUs: number, round: number): void => {
      const key = `${store} ${name}`;
      const entry = cases.get(key) ?? { store, case: name, micros: [], mainMicros: [], multiples: [], rates: [], p50: [], p99: [], hashRates: [] };
      cases.set(key, entry);
      const us = (p.cpu / p.operations) * 1e6;
      const p50 = percentile(p.latencies, 0.5);
      const p99 = percentile(p.latencies, 0.99);
      const hashRate = p.hashes === undefined ? "" : `, ${(p.hashes / p.seconds / 1e6).toFixed(2)} M hashes/s`;
      process.stdout.write(`  ${store}, ${name}, round ${round}: ${us.toFixed(0)} µs CPU/op (${((p.system / p.operations) * 1e6).toFixed(0)} µs system, ${((p.main / p.operations) * 1e6).toFixed(0)} µs main thread; ${(us / helloUs).toFixed(2)}× hello), ${(p.operations / p.seconds).toFixed(0)} ops/s, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms${hashRate}\n`);
      if (round === 0) return;
      entry.micros.push(us);
      entry.mainMicros.push((p.main / p.operations) * 1e6);
      entry.multiples.push(us / helloUs);
      entry.rates.push(p.operations / p.seconds);
      entry.p50.push(p50);
      entry.p99.push(p99);
      if (p.hashes !== undefined) entry.hashRates.push(p.hashes / p.seconds);
    };
    /** A node's cases: [key, the name its rows go by, one load phase]. */
    const stepsOf = (node: NodeUnderTest): [string, string, Run][] => {
      const auth = { authorization: `Bearer ${node.jwt}`, "content-type": "application/json" };
      const miningAuth = { authorization: `Bearer ${node.miningJwt}`, "content-type": "application/json" };
      return [
        ["raw read", "raw read", (seconds) => phase(node.plain.pid, seconds, async (agent) => expect(await send(agent, node.plain.port, "GET", node.readPath), 200, "read"))],
        [
          "complete submission",
          "complete submission",
          async (seconds) => {
            const parents = await currentTips(node.plain.port);
            return phase(node.plain.pid, seconds, async (agent) => expect(await send(agent, node.plain.port, "POST", "/api/v1/messages", completeJson(parents), auth), 201, "submission"));
          },
        ],
        ["login", "login", loginPhase(node.plain)],
        [
          "partial",
          "partial submission mined at score 100",
          async (seconds) => {
            const before = await powHashes(node.mining.port);
            const p = await phase(node.mining.pid, seconds, async (agent) => expect(await send(agent, node.mining.port, "POST", "/api/v1/messages", partialJson(), miningAuth), 201, "partial submission"), MINING_CLIENTS);
            return { ...p, hashes: (await powHashes(node.mining.port)) - before };
          },
        ],
      ];
    };
    const nodeSteps = new Map(nodes.map((node) => [node, stepsOf(node)]));
    const helloRun: Run = (seconds) => phase(hello.pid, seconds, async (agent) => expect(await send(agent, hello.port, "GET", "/api/v1/info"), 200, "hello"));
    // A token of the first node's (every node and the bare servers hold the same HS256 secret).
    const token = nodes[0]?.jwt;
    const bareRun = (name: string, server: Server): Run | undefined => {
      if (name === "login") return loginPhase(server);
      if (name === "raw read") return (seconds) => phase(server.pid, seconds, async (agent) => expect(await send(agent, server.port, "GET", bareReadPath), 200, "read from a bare server"));
      if (token === undefined) return undefined;
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      return (seconds) => phase(server.pid, seconds, async (agent) => expect(await send(agent, server.port, "POST", "/api/v1/messages", completeJson([new Uint8Array(32)]), headers), 201, "submission to a bare server"));
    };
    // Round 0 warms up every server and the JIT and is not counted. A round measures one case at a time (CASE_ORDER),
    // its servers taking turns (turns()): the bare servers and the nodes, and with the first case (raw reads) the hello
    // server, whose request every case is a multiple of.
    for (let round = 0; round <= ROUNDS; round++) {
      let helloUs = 0;
      for (const key of CASE_ORDER) {
        const withHello = key === CASE_ORDER[0];
        const runs: { run: Run; record?: (p: Phase) => void }[] = [];
        if (withHello) runs.push({ run: helloRun });
        if (wanted(CASES, key)) {
          for (const { store, case: name, server } of bares) {
            const run = name === key ? bareRun(name, server) : undefined;
            if (run !== undefined) runs.push({ run, record: (p) => record(store, name, p, helloUs, round) });
          }
          for (const node of nodes) {
            const step = wanted(node.cases, key) ? nodeSteps.get(node)!.find(([k]) => k === key) : undefined;
            if (step !== undefined) runs.push({ run: step[2], record: (p) => record(node.name, step[1], p, helloUs, round) });
          }
        }
        if (runs.length === 0) continue;
        const phases = await turns(runs.map((r) => r.run));
        if (withHello) {
          const h = phases[0]!;
          helloUs = (h.cpu / h.operations) * 1e6;
          process.stdout.write(`  hello, round ${round}: ${helloUs.toFixed(1)} µs CPU/request (${((h.system / h.operations) * 1e6).toFixed(1)} µs system), ${(h.operations / h.seconds).toFixed(0)} req/s\n`);
          const verifyUs = verifyMicros();
          process.stdout.write(`  Ed25519 verification here, round ${round}: ${verifyUs.toFixed(1)} µs (${(verifyUs / helloUs).toFixed(2)}× hello)\n`);
          const flushUs = probe.measure();
          process.stdout.write(`  one LMDB commit's flushes here, round ${round}: ${flushUs.toFixed(1)} µs CPU (${(flushUs / helloUs).toFixed(2)}× hello)\n`);
          if (round > 0) {
            helloMicros.push(helloUs);
            verifies.push(verifyUs);
            flushes.push(flushUs);
          }
        }
        runs.forEach((r, i) => r.record?.(phases[i]!));
      }
    }
    const rows: Row[] = [{ suite: "edge", case: `server CPU per request: trivial node:http server, ${CLIENTS} keep-alive clients (µs)`, ours: median(helloMicros), unit: "µs" }];
    // What a login cannot do without on this machine, in the same unit as its budget: one verification (two requests,
    // an HMAC, a JWT and a durable write come on top).
    rows.push({ suite: "edge", case: "one Ed25519 verification (verifyEd25519), this machine (µs; ratio: median multiple of a hello request)", ours: median(verifies), theirs: median(helloMicros), theirName: "hello request", ratio: medianMultiple(verifies), unit: "µs" });
    // And what a durable write cannot do without: one commit's two flushes (a commit shared by a group pays them once).
    rows.push({ suite: "edge", case: "one LMDB commit's flushes (a 4 KiB page written and fdatasync'd, then a 4 KiB O_DSYNC write), this machine (µs of CPU; ratio: median multiple of a hello request)", ours: median(flushes), theirs: median(helloMicros), theirName: "hello request", ratio: medianMultiple(flushes), unit: "µs" });
    for (const c of cases.values()) {
      const bare = BARE_WORK[c.case]?.[c.store];
      const where = bare === undefined ? `serve on ${c.store}` : `${c.store} on bare node:http (${bare})`;
      rows.push({
        suite: "edge",
        case: `${c.case}, ${where}: throughput (ops/s), ${CLIENTS} keep-alive clients; latency p50 ${median(c.p50).toFixed(1)} ms, p99 ${median(c.p99).toFixed(1)} ms`,
        ours: median(c.rates),
        unit: "ops/s",
      });
      if (c.hashRates.length > 0) rows.push({ suite: "edge", case: `server PoW while mining at score 100, serve on ${c.store}: nonces tried per second (1 worker)`, ours: median(c.hashRates), unit: "hashes/s" });
      rows.push({
        suite: "edge",
        case: `server CPU per ${c.case}, ${where} (µs; ratio: median of per-round multiples of a hello request; ${median(c.rates).toFixed(0)} ops/s; main thread ${median(c.mainMicros).toFixed(0)} µs)`,
        ours: median(c.micros),
        theirs: median(helloMicros),
        theirName: "hello request",
        ratio: median(c.multiples),
        unit: "µs",
      });
    }
    // The budgets, and each case of the build before against ours: medians of the per-round pairs.
    const pairRow = (c: CpuCase, theirs: number[], against: string, atMost?: number): Row => {
      const pairs = c.micros.map((us, i) => us / theirs[i]!);
      return {
        suite: "edge",
        case: `server CPU per ${c.case}, serve on ${c.store}, against ${against} (µs; ratio: median of the per-round pairs, ${pairs.map((r) => r.toFixed(2)).join(", ")})`,
        ours: median(c.micros),
        theirs: median(theirs),
        theirName: against,
        ratio: median(pairs),
        target: atMost,
        atMost: atMost === undefined ? undefined : true,
        unit: "µs",
      };
    };
    for (const b of BUDGETS) {
      const c = cases.get(`${b.store} ${b.case}`);
      const theirs = b.against === HELLO_NAME ? helloMicros : cases.get(`${b.against} ${b.case}`)?.micros;
      if (c !== undefined && theirs !== undefined) rows.push(pairRow(c, theirs, b.against === HELLO_NAME ? HELLO_NAME : `${b.against} (bare node:http)`, b.atMost));
    }
    for (const before of cases.values()) {
      const after = before.store.endsWith(", before") ? cases.get(`${before.store.slice(0, -", before".length)} ${before.case}`) : undefined;
      if (after !== undefined) rows.push(pairRow(after, before.micros, "the build before"));
    }
    return { rows, cases: [...cases.values()], hello: helloMicros };
  } finally {
    probe.close();
    await hello.stop();
    for (const bare of bares) await bare.server.stop();
    await Promise.all(nodes.map((n) => n.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}
