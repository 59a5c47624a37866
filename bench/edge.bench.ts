// edge: the node over real HTTP on loopback against a trivial node:http server (the ceiling), side by side in one run:
// 32 keep-alive clients, rate limits off (serve --no-rate-limits), each server in its own worker thread and the loader
// in the main thread. Rounds interleave the cases so that a machine busy with other work slows them alike; medians.
// Then the server-side PoW path: what it adds per message beyond the hashing itself (score 100, one worker), and the
// server's CPU per operation on LMDB and PostgreSQL as multiples of a trivial server's request (edge-cpu.ts).
import { Agent } from "node:http";
import { Worker } from "node:worker_threads";
import { generateIdentityKeyPair, signNonce } from "../src/auth/index.js";
import { toHex } from "../src/bytes/hex.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId } from "../src/model/ids.js";
import type { Message } from "../src/model/types.js";
import { createHandler, createNode } from "../src/node/index.js";
import { powDigest, searchNonce, targetZeros } from "../src/pow/index.js";
import { cpuPerOperation, send, type Answer } from "./edge-cpu.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench";
const CLIENTS = 32;
const ROUNDS = 3;
const SECONDS = 3;
const IDENTITIES_PER_CLIENT = 16;
const SECRET = "a benchmark jwt secret of at least thirty-two bytes";

/** Runs `step` on CLIENTS concurrent loops for SECONDS; returns operations per second (a step may be several requests). */
async function load(port: number, step: (agent: Agent, client: number, i: number) => Promise<void>): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; performance.now() < end; i++) {
        await step(agent, client, i);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  agent.destroy();
  return rate;
}

function startServer(data: unknown): Promise<{ port: number; worker: Worker }> {
  const worker = new Worker(new URL("./edge-server.js", import.meta.url), { workerData: data });
  return new Promise((resolve, reject) => {
    worker.once("message", (m: { port: number }) => resolve({ port: m.port, worker }));
    worker.once("error", reject);
  });
}

function median(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function indexation(i: number, nonce = 0n): Message {
  return {
    networkId: networkId(NETWORK),
    parents: [new Uint8Array(32)],
    payload: { type: 2, index: new TextEncoder().encode("bench"), data: new TextEncoder().encode(`edge submission ${i} ${"x".repeat(100)}`) },
    nonce,
  };
}

function expect(answer: Answer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.body.slice(0, 200)}`);
}

/** The server-side PoW path at score 100 on one worker: per message, the submission without a nonce minus the same
 * message submitted complete minus the time the kernel takes to reach that nonce on this thread. */
async function powOverhead(count: number): Promise<{ overhead: number[]; total: number[]; hashing: number[] }> {
  const miner = createNode({ network: NETWORK, minPoWScore: 100, pow: { workers: 1 } });
  const checker = createNode({ network: NETWORK, minPoWScore: 100, pow: false });
  const mining = createHandler(miner, { requireJwtForSubmit: false });
  const checking = createHandler(checker, { requireJwtForSubmit: false });
  const url = "http://bench/api/v1/messages";
  const json = (m: Message): string => JSON.stringify({ networkId: m.networkId.toString(), parentMessageIds: m.parents.map(toHex), payload: { type: 2, index: toHex((m.payload as { index: Uint8Array }).index), data: toHex((m.payload as { data: Uint8Array }).data) }, nonce: m.nonce.toString() });
  const overhead: number[] = [];
  const total: number[] = [];
  const hashing: number[] = [];
  try {
    for (let i = -10; i < count; i++) {
      const message = indexation(1_000_000 + i);
      let t = performance.now();
      const mined = await mining(new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: json(message) }));
      const tPow = performance.now() - t;
      if (mined.status !== 201) throw new Error(`PoW submission failed: ${mined.status} ${await mined.text()}`);
      const id = ((await mined.json()) as { data: { messageId: string } }).data.messageId;
      const stored = await miner.getMessage(id);
      const nonce = stored!.message.nonce;
      t = performance.now();
      const complete = await checking(new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: json({ ...message, nonce }) }));
      const tComplete = performance.now() - t;
      if (complete.status !== 201) throw new Error(`complete submission failed: ${complete.status}`);
      const bytes = encodeMessage({ ...message, nonce: 0n });
      t = performance.now();
      const found = searchNonce(powDigest(bytes), targetZeros(bytes.length, 100), 0n, nonce + 1n);
      const tHash = performance.now() - t;
      if (found !== nonce || messageId(encodeMessage({ ...message, nonce })) !== id) throw new Error("the kernel and the node disagree on the nonce");
      if (i < 0) continue; // warm-up
      overhead.push(tPow - tComplete - tHash);
      total.push(tPow);
      hashing.push(tHash);
    }
  } finally {
    await miner.close();
    await checker.close();
  }
  return { overhead, total, hashing };
}

export default async function edge(): Promise<Row[]> {
  // 32 clients × 16 identities, registered on the node; each client logs in with its identities in turn.
  const identities = Array.from({ length: CLIENTS * IDENTITIES_PER_CLIENT }, (_, i) => ({ id: `did:iota:bench${i}`, ...generateIdentityKeyPair() }));
  const ceiling = await startServer({ kind: "ceiling" });
  const stub = await startServer({ kind: "stub" });
  const node = await startServer({ kind: "node", network: NETWORK, jwtSecret: SECRET, identities: Object.fromEntries(identities.map((x) => [x.id, toHex(x.publicKey)])) });
  const setupAgent = new Agent({ keepAlive: true });
  try {
    // A JWT for the submissions (verified, revocation and registration checked, on every one) and a stored message to read.
    const got = await send(setupAgent, node.port, "GET", `/authentication/prove-ownership/${identities[0]!.id}`);
    expect(got, 200, "nonce");
    const proof = await send(setupAgent, node.port, "POST", `/authentication/prove-ownership/${identities[0]!.id}`, JSON.stringify({ signedNonce: signNonce((JSON.parse(got.body) as { nonce: string }).nonce, identities[0]!.secretKey) }), { "content-type": "application/json" });
    expect(proof, 200, "proof");
    const auth = { authorization: `Bearer ${(JSON.parse(proof.body) as { jwt: string }).jwt}`, "content-type": "application/octet-stream" };
    // The message read is stored afresh before each round: the node prunes as it ages, and on a fast machine the
    // submissions of earlier rounds take a message stored at the start below its pruning horizon.
    const freshReadPath = async (round: number): Promise<string> => {
      const stored = encodeMessage(indexation(-1 - round, 1n));
      expect(await send(setupAgent, node.port, "POST", "/api/v1/messages", stored, auth), 201, "message to read");
      return `/api/v1/messages/${messageId(stored)}/raw`;
    };
    // Unique complete messages for every submission of every round (score 0: any nonce, and the check still runs; not 0,
    // which a node reads as "mine it for me").
    // 400,000: four rounds of submissions used up 200,000 at 17:20 on 2026-12-02.
    const messages = Array.from({ length: 400_000 }, (_, i) => encodeMessage(indexation(i, 1n)));
    let nextMessage = 0;

    const cases: Record<string, number[]> = { ceiling: [], reads: [], submissions: [], logins: [], stubLogins: [] };
    // One login as the Integration Services client makes it: GET the nonce, sign it, POST only the signature.
    const login = async (agent: Agent, port: number, client: number, i: number): Promise<void> => {
      const who = identities[client * IDENTITIES_PER_CLIENT + (i % IDENTITIES_PER_CLIENT)]!;
      const path = `/authentication/prove-ownership/${who.id}`;
      const nonce = await send(agent, port, "GET", path);
      expect(nonce, 200, "login nonce");
      const signedNonce = signNonce((JSON.parse(nonce.body) as { nonce: string }).nonce, who.secretKey);
      expect(await send(agent, port, "POST", path, JSON.stringify({ signedNonce }), { "content-type": "application/json" }), 200, "login proof");
    };
    for (let round = 0; round <= ROUNDS; round++) {
      const readPath = await freshReadPath(round);
      const results: Record<string, number> = {
        ceiling: await load(ceiling.port, async (agent) => expect(await send(agent, ceiling.port, "GET", "/api/v1/info"), 200, "ceiling")),
        reads: await load(node.port, async (agent) => expect(await send(agent, node.port, "GET", readPath), 200, "read")),
        submissions: await load(node.port, async (agent) => {
          const body = messages[nextMessage++ % messages.length]!;
          expect(await send(agent, node.port, "POST", "/api/v1/messages", body, auth), 201, "submission");
        }),
        logins: await load(node.port, (agent, client, i) => login(agent, node.port, client, i)),
        // The same loader against a server that does no work: the most logins/s this machine can show at all.
        stubLogins: await load(stub.port, (agent, client, i) => login(agent, stub.port, client, i)),
      };
      // Round 0 warms up both servers and the JIT.
      if (round > 0) for (const [name, rate] of Object.entries(results)) cases[name]!.push(rate);
    }
    if (nextMessage > messages.length) throw new Error("the benchmark ran out of unique messages");
    const ceilingRate = median(cases.ceiling!);
    const pow = await powOverhead(200);
    // Server CPU per operation, serve as a child process on LMDB, in memory and on PostgreSQL (edge-cpu.ts).
    const cpu = await cpuPerOperation();
    const unit = "req/s";
    const theirName = "node:http trivial server";
    const row = (name: string, rate: number, target: number | undefined, rowUnit = unit): Row => ({ suite: "edge", case: name, ours: rate, theirs: ceilingRate, theirName, ratio: rate / ceilingRate, target, unit: rowUnit });
    return [
      { suite: "edge", case: `ceiling: trivial node:http, ${CLIENTS} keep-alive clients`, ours: ceilingRate, unit },
      row("raw reads (GET /api/v1/messages/:id/raw)", median(cases.reads!), 0.6),
      row("complete-message submissions (raw bytes, JWT checked)", median(cases.submissions!), 0.3),
      row("logins: GET nonce + POST proof (signature only, as the IS client)", median(cases.logins!), 0.3, "logins/s"),
      row("logins against a stub answering both requests with no work (the loader's own bound here)", median(cases.stubLogins!), undefined, "logins/s"),
      { suite: "edge", case: "server-side PoW at score 100, 1 worker: added beyond the hashing (median ms)", ours: median(pow.overhead), unit: "ms" },
      { suite: "edge", case: "server-side PoW at score 100, 1 worker: p90 added (ms)", ours: pow.overhead.slice().sort((a, b) => a - b)[Math.floor(pow.overhead.length * 0.9)]!, unit: "ms" },
      { suite: "edge", case: "server-side PoW at score 100, 1 worker: whole submission (median ms)", ours: median(pow.total), unit: "ms" },
      { suite: "edge", case: "server-side PoW at score 100: hashing alone on one thread (median ms)", ours: median(pow.hashing), unit: "ms" },
      ...cpu.rows,
    ];
  } finally {
    setupAgent.destroy();
    node.worker.postMessage("close");
    await ceiling.worker.terminate();
    await stub.worker.terminate();
    await new Promise((resolve) => node.worker.once("exit", resolve));
  }
}
