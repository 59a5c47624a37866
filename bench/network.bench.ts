// A network of two nodes on loopback (issue 34 item 9): `chrysalis serve` processes on LMDB stores, a coordinator and
// a follower peering over libp2p (Hornet's gossip), loaded over HTTP by this process with complete binary messages
// (their parents the coordinator's tips, refreshed every 100 ms; min PoW score 0, so that no PoW is spent anywhere).
// - follower lag: RATE messages/s offered to the coordinator (1 s milestones), both nodes' /api/v1/info sampled every
//   50 ms for SECONDS: the most milestones the follower's confirmed index was behind the coordinator's (target: at
//   most one), and how long after the coordinator each milestone was confirmed on the follower;
// - CPU per relayed message against CPU per API submission, in that same run: each process's CPU time (user + system,
//   every thread, from /proc/<pid>/stat) over 5 s windows, the follower's divided by the messages it received new from
//   the coordinator (its peers route's newMessages), the coordinator's by the submissions it accepted; both confirm the
//   same milestones, and the coordinator also issues them and relays every message;
// - messages relayed per second: 32 clients submit as fast as the coordinator takes them, 3 windows of 5 s; what
//   reaches the follower new, per second;
// - catch-up: a coordinator issues MILESTONES milestones every 20 ms while taking 100 messages/s; then a follower
//   starts on an empty store; the seconds from its start until its confirmed index equals the coordinator's (which
//   goes on issuing every 20 ms), and until it has confirmed the missed ones.
// Both nodes log at warn (no access log), as the follower logs no line per relayed message either.
//   CHRYSALIS_BENCH_NETWORK_RATE        messages/s offered in the lag run (default 1000)
//   CHRYSALIS_BENCH_NETWORK_SECONDS     length of the lag run (default 20)
//   CHRYSALIS_BENCH_NETWORK_MILESTONES  milestones the late follower missed (default 1000)
//   CHRYSALIS_BENCH_CLI                 the built CLI to run (default dist/cli/main.js, which `npm run bench` builds)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { bech32Address, ed25519Address, ed25519PublicKey } from "../src/crypto/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { networkId } from "../src/model/ids.js";
import { milestonePublicKey } from "../src/model/milestone.js";
import { cpuSeconds, send, spawnServer, type Server } from "./edge-cpu.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench-network";
const NETWORK_ID = networkId(NETWORK);
const RATE = Number(process.env.CHRYSALIS_BENCH_NETWORK_RATE ?? 1000);
const SECONDS = Number(process.env.CHRYSALIS_BENCH_NETWORK_SECONDS ?? 20);
const MILESTONES = Number(process.env.CHRYSALIS_BENCH_NETWORK_MILESTONES ?? 1000);
const WINDOW_SECONDS = 5;
const SATURATING_CLIENTS = 32;
const CLI = process.env.CHRYSALIS_BENCH_CLI || fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const utf8 = new TextEncoder();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface BenchNode {
  readonly server: Server;
  /** Its gossip address with /p2p/<peer id>. */
  readonly address: string;
}

const owner = ed25519Address(ed25519PublicKey(new Uint8Array(32).fill(3)));
const COMMON = ["serve", "--host", "127.0.0.1", "--port", "0", "--p2p-bind", "/ip4/127.0.0.1/tcp/0", "--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-rate-limits", "--no-mqtt", "--no-dashboard", "--log-level", "warn", "--genesis", bech32Address("atoi", owner)];

async function startNode(name: string, args: string[]): Promise<BenchNode> {
  const server = await spawnServer(name, [CLI, ...COMMON, ...args]);
  for (let i = 0; i < 200; i++) {
    const m = /gossip on (\/\S+\/p2p\/\w+)/.exec(server.output());
    if (m !== null) return { server, address: m[1]! };
    await sleep(50);
  }
  await server.stop();
  throw new Error(`${name} printed no gossip line`);
}

/** The coordinator's key file (one seed) and its public key. */
function coordinatorKey(dir: string): { file: string; publicKey: string } {
  const seed = new Uint8Array(32).fill(9);
  const file = join(dir, "coordinator.key");
  writeFileSync(file, `${toHex(seed)}\n`);
  return { file, publicKey: toHex(milestonePublicKey(seed)) };
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

async function getJson<T>(n: BenchNode, path: string): Promise<T> {
  const answer = await send(agent, n.server.port, "GET", path);
  if (answer.status !== 200) throw new Error(`${n.server.name} ${path}: ${answer.status} ${answer.body.slice(0, 200)}`);
  return (JSON.parse(answer.body) as { data: T }).data;
}

const confirmedOf = async (n: BenchNode): Promise<number> => (await getJson<{ confirmedMilestoneIndex: number }>(n, "/api/v1/info")).confirmedMilestoneIndex;

/** Messages a node received new from its peers so far (the peers route's newMessages, summed). */
async function receivedNew(n: BenchNode): Promise<number> {
  const peers = await getJson<{ gossip?: { metrics: { newMessages: number } } }[]>(n, "/api/v1/peers");
  return peers.reduce((sum, p) => sum + (p.gossip?.metrics.newMessages ?? 0), 0);
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

const cpu = (pid: number): number => {
  const c = cpuSeconds(pid);
  return c.user + c.system;
};

/**
 * Submissions to `n`: complete indexation messages posted as bytes, `clients` at a time, paced at `perSecond` (or as
 * fast as the node answers, when undefined), until stop().
 */
function load(n: BenchNode, clients: number, perSecond: number | undefined): { readonly accepted: number; readonly refused: number; stop(): Promise<void> } {
  let accepted = 0;
  let refused = 0;
  let stopped = false;
  let sequence = 0;
  let tips: { parents: Uint8Array[]; at: number; pending?: Promise<void> } = { parents: [], at: -Infinity };
  const refresh = (): Promise<void> =>
    (tips.pending ??= getJson<{ tipMessageIds: string[] }>(n, "/api/v1/tips").then(
      (t) => void (tips = { parents: [...new Set(t.tipMessageIds)].sort().slice(0, 8).map((id) => fromHex(id)), at: performance.now() }),
      () => void (tips = { ...tips, at: -Infinity }),
    ));
  const started = performance.now();
  const run = Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stopped) {
        const i = sequence++;
        if (perSecond !== undefined) {
          const due = started + (i / perSecond) * 1000;
          const now = performance.now();
          if (now < due) await sleep(due - now);
        }
        if (performance.now() - tips.at > 100) await refresh();
        if (tips.parents.length === 0) continue;
        const bytes = encodeMessage({ networkId: NETWORK_ID, parents: tips.parents, payload: { type: 2, index: utf8.encode("bench network"), data: utf8.encode(String(i)) }, nonce: 1n });
        const answer = await send(agent, n.server.port, "POST", "/api/v1/messages", bytes, { "content-type": "application/octet-stream" }).catch(() => ({ status: 0, body: "" }));
        if (answer.status === 201) accepted++;
        else {
          refused++;
          tips = { ...tips, at: -Infinity };
        }
      }
    }),
  );
  return {
    get accepted() {
      return accepted;
    },
    get refused() {
      return refused;
    },
    async stop() {
      stopped = true;
      await run;
    },
  };
}

const median = (values: readonly number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const range = (values: readonly number[], digits = 0): string => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

interface CpuWindow {
  relay: number;
  api: number;
}

/** The lag run and, in it, the CPU windows; then the saturated relay windows. Both nodes on LMDB. */
async function twoNodes(dir: string): Promise<Row[]> {
  const key = coordinatorKey(dir);
  const a = await startNode("coordinator", ["--data-dir", join(dir, "a"), "--coordinator-key-file", key.file, "--milestone-interval", "1s"]);
  let b: BenchNode | undefined;
  try {
    b = await startNode("follower", ["--data-dir", join(dir, "b"), "--no-coordinator", "--coordinator-public-key", key.publicKey, "--peer", a.address]);
    const follower = b;
    await until("the follower confirms a milestone", 20_000, async () => (await confirmedOf(follower)) >= 1);

    // Warm-up at the rate, then the measured run.
    const paced = load(a, 64, RATE);
    await sleep(3000);
    const samples: { a: number; b: number }[] = [];
    const firstAt = { a: new Map<number, number>(), b: new Map<number, number>() };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [ca, cb] = await Promise.all([confirmedOf(a), confirmedOf(follower)]);
        const now = performance.now();
        samples.push({ a: ca, b: cb });
        if (!firstAt.a.has(ca)) firstAt.a.set(ca, now);
        if (!firstAt.b.has(cb)) firstAt.b.set(cb, now);
        await sleep(50);
      }
    })();
    const windows: CpuWindow[] = [];
    const acceptedBefore = paced.accepted;
    const runStarted = performance.now();
    for (let w = 0; w < Math.max(1, Math.floor(SECONDS / WINDOW_SECONDS)); w++) {
      const [cpuA, cpuB, apiBefore, relayBefore] = [cpu(a.server.pid), cpu(follower.server.pid), paced.accepted, await receivedNew(follower)];
      await sleep(WINDOW_SECONDS * 1000);
      const [cpuA2, cpuB2, apiAfter, relayAfter] = [cpu(a.server.pid), cpu(follower.server.pid), paced.accepted, await receivedNew(follower)];
      windows.push({ relay: ((cpuB2 - cpuB) * 1e6) / Math.max(1, relayAfter - relayBefore), api: ((cpuA2 - cpuA) * 1e6) / Math.max(1, apiAfter - apiBefore) });
    }
    const reached = (paced.accepted - acceptedBefore) / ((performance.now() - runStarted) / 1000);
    sampling = false;
    await sampler;
    await paced.stop();
    const maxLag = Math.max(...samples.map((s) => s.a - s.b));
    const timeLags = [...firstAt.b].filter(([index]) => firstAt.a.has(index) && index > 1).map(([index, at]) => at - firstAt.a.get(index)!);
    const milestones = samples.at(-1)!.a - samples[0]!.a;

    // As fast as the coordinator takes them.
    const relayed: number[] = [];
    const acceptedRates: number[] = [];
    const saturating = load(a, SATURATING_CLIENTS, undefined);
    await sleep(2000);
    for (let w = 0; w < 3; w++) {
      const [before, acceptedAt, at] = [await receivedNew(follower), saturating.accepted, performance.now()];
      await sleep(WINDOW_SECONDS * 1000);
      const seconds = (performance.now() - at) / 1000;
      relayed.push(((await receivedNew(follower)) - before) / seconds);
      acceptedRates.push((saturating.accepted - acceptedAt) / seconds);
    }
    await saturating.stop();

    const relayUs = windows.map((w) => w.relay);
    const apiUs = windows.map((w) => w.api);
    return [
      {
        suite: "network",
        case: `messages relayed/s, coordinator → follower on loopback (${SATURATING_CLIENTS} clients submitting as fast as the coordinator takes them; median of 3 × ${WINDOW_SECONDS} s, range ${range(relayed)}; the coordinator accepted ${median(acceptedRates).toFixed(0)}/s)`,
        ours: median(relayed),
        unit: "msg/s",
      },
      {
        suite: "network",
        case: `follower's most milestones behind the coordinator at ${RATE} msg/s offered (reached ${reached.toFixed(0)}/s; 1 s milestones, ${milestones} of them, ${samples.length} samples in ${SECONDS} s; a milestone reached the follower's confirmed index a median ${median(timeLags).toFixed(0)} ms, at most ${Math.max(...timeLags).toFixed(0)} ms after the coordinator's, as sampled every 50 ms)`,
        ours: maxLag,
        target: 1,
        atMost: true,
        unit: "milestones",
      },
      {
        suite: "network",
        case: `CPU per relayed message (follower) against per API submission (coordinator), same run at ${reached.toFixed(0)} msg/s (median of ${windows.length} × ${WINDOW_SECONDS} s; relay ${range(relayUs)} µs, API ${range(apiUs)} µs)`,
        ours: median(relayUs),
        theirs: median(apiUs),
        theirName: "API submission",
        ratio: median(relayUs) / median(apiUs),
        unit: "µs CPU",
      },
    ];
  } finally {
    await b?.server.stop();
    await a.server.stop();
  }
}

/** A follower started after the coordinator issued MILESTONES milestones: the seconds until it is level. */
async function catchUp(dir: string): Promise<Row[]> {
  const key = coordinatorKey(dir);
  const a = await startNode("coordinator (catch-up)", ["--data-dir", join(dir, "c"), "--coordinator-key-file", key.file, "--milestone-interval", "20ms"]);
  let f: BenchNode | undefined;
  try {
    const light = load(a, 4, 100);
    const issuing = performance.now();
    await until(`${MILESTONES} milestones`, MILESTONES * 200, async () => (await confirmedOf(a)) >= MILESTONES);
    const issueSeconds = (performance.now() - issuing) / 1000;
    await light.stop();
    const missed = await confirmedOf(a);
    const started = performance.now();
    f = await startNode("late follower", ["--data-dir", join(dir, "f"), "--no-coordinator", "--coordinator-public-key", key.publicKey, "--peer", a.address]);
    const follower = f;
    const listening = (performance.now() - started) / 1000;
    let missedAt: number | undefined;
    let level: { at: number; index: number } | undefined;
    const end = performance.now() + 300_000;
    while (level === undefined && performance.now() < end) {
      const [ca, cf] = await Promise.all([confirmedOf(a), confirmedOf(follower)]);
      if (missedAt === undefined && cf >= missed) missedAt = performance.now();
      if (cf >= ca) level = { at: performance.now(), index: cf };
      else await sleep(20);
    }
    const seconds = (t: number | undefined): string => (t === undefined ? "never" : `${((t - started) / 1000).toFixed(1)} s`);
    return [
      {
        suite: "network",
        case: `catch-up of a follower started after ${missed} milestones (20 ms apart, issued in ${issueSeconds.toFixed(0)} s at 100 msg/s; LMDB): from its start (listening after ${listening.toFixed(1)} s) until its confirmed index equals the coordinator's, which goes on every 20 ms (level at ${level?.index ?? "—"}; the ${missed} missed confirmed after ${seconds(missedAt)})`,
        ours: level === undefined ? Number.NaN : (level.at - started) / 1000,
        unit: "s",
      },
    ];
  } finally {
    await f?.server.stop();
    await a.server.stop();
  }
}

export default async function networkBench(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "chrysalis-bench-network-"));
  try {
    return [...(await twoNodes(dir)), ...(await catchUp(dir))];
  } finally {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
