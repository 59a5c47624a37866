// Submissions per second through the node's web handler: messages mined client-side at a low score (so the figure
// is the node's own cost: parse, rules, PoW check, id, store), sent as raw bytes and as JSON; and over real HTTP.
import { toHex } from "../src/bytes/hex.js";
import { decodeMessage, encodeMessage } from "../src/model/codec.js";
import { networkId } from "../src/model/ids.js";
import { messageToJson } from "../src/model/json.js";
import type { Message } from "../src/model/types.js";
import { createMiner } from "../src/pow/index.js";
import { createEdge, createHandler, createNode, serve } from "../src/node/index.js";
import { createClient } from "../src/client/index.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench";
const MIN_SCORE = 10;
const COUNT = 2000;
const ROUNDS = 5;

async function premine(count: number): Promise<Uint8Array[]> {
  const miner = createMiner({ workers: 1 });
  try {
    const out: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const message: Message = {
        networkId: networkId(NETWORK),
        parents: [new Uint8Array(32)],
        payload: { type: 2, index: new TextEncoder().encode("bench"), data: new TextEncoder().encode(`submission ${i} ${"x".repeat(100)}`) },
        nonce: 0n,
      };
      const bytes = encodeMessage(message);
      // From 1: a JSON nonce of "0" reads as missing and the node would try to mine it.
      const nonce = await miner.mine(bytes, { minScore: MIN_SCORE, startNonce: 1n });
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - 8, nonce, true);
      out.push(bytes);
    }
    return out;
  } finally {
    await miner.close();
  }
}

function median(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** One pass: a fresh node, every pre-mined message submitted once (a repeat would be a cheap no-op); submissions/s. */
async function pass(requests: (() => Request)[]): Promise<number> {
  const node = createNode({ network: NETWORK, minPoWScore: MIN_SCORE, pow: false });
  const handler = createHandler(node);
  const started = performance.now();
  for (const make of requests) {
    const response = await handler(make());
    if (response.status !== 201) throw new Error(`bench submission failed: ${response.status} ${await response.text()}`);
  }
  const rate = requests.length / ((performance.now() - started) / 1000);
  await node.close();
  return rate;
}

/**
 * The cases side by side: each round runs every case once, in turn, so that a machine busy with other work slows
 * them alike; round 0 warms the JIT up and is not counted.
 */
async function interleaved(cases: (() => Request)[][]): Promise<number[]> {
  const rates = cases.map((): number[] => []);
  for (let round = 0; round <= ROUNDS; round++) {
    for (let c = 0; c < cases.length; c++) {
      const r = await pass(cases[c]!);
      if (round > 0) rates[c]!.push(r);
    }
  }
  return rates.map(median);
}

async function httpRate(bodies: Uint8Array[], concurrency: number): Promise<number> {
  const rates: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const node = createNode({ network: NETWORK, minPoWScore: MIN_SCORE, pow: false });
    const server = await serve(createHandler(node), { onClose: () => node.close(), edge: createEdge({ limits: { rates: false } }) });
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < bodies.length) {
          const response = await fetch(`${server.url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bodies[next++]! as Uint8Array<ArrayBuffer> });
          await response.arrayBuffer();
          if (response.status !== 201) throw new Error(`bench submission failed: ${response.status}`);
        }
      }),
    );
    if (round > 0) rates.push(bodies.length / ((performance.now() - started) / 1000));
    await server.close();
  }
  return median(rates);
}

/** The whole loop as a client sees it: read tips (info cached), mine locally, post raw bytes; 20 at a time over HTTP. */
async function clientRate(count: number, concurrency: number): Promise<number> {
  const rates: number[] = [];
  const miner = createMiner({ workers: 1 });
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      const node = createNode({ network: NETWORK, minPoWScore: MIN_SCORE, pow: false });
      const server = await serve(createHandler(node), { onClose: () => node.close(), edge: createEdge({ limits: { rates: false } }) });
      const client = createClient(server.url, { miner });
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            const i = next++;
            await client.submitMessage({ payload: { type: 2, index: "62656e6368", data: toHex(new TextEncoder().encode(`round ${round} message ${i}`)) } }, { localPow: true });
          }
        }),
      );
      if (round > 0) rates.push(count / ((performance.now() - started) / 1000));
      await server.close();
    }
  } finally {
    await miner.close();
  }
  return median(rates);
}

export default async function nodeBench(): Promise<Row[]> {
  const mined = await premine(COUNT);
  const url = "http://node.bench/api/v1/messages";
  const raw = mined.map((bytes) => () => new Request(url, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bytes as Uint8Array<ArrayBuffer> }));
  const jsonTexts = mined.map((bytes) => JSON.stringify(messageToJson(decodeMessage(bytes))));
  const json = jsonTexts.map((text) => () => new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: text }));
  const [rawRate, jsonRate] = (await interleaved([raw, json])) as [number, number];
  const http = await httpRate(mined, 20);
  const withClient = await clientRate(500, 20);
  const unit = "submissions/s";
  return [
    { suite: "node", case: `handler, raw bytes (client PoW at score ${MIN_SCORE})`, ours: rawRate, unit },
    { suite: "node", case: `handler, JSON (client PoW at score ${MIN_SCORE})`, ours: jsonRate, theirs: rawRate, theirName: "raw bytes", ratio: jsonRate / rawRate, unit },
    { suite: "node", case: "node:http on 127.0.0.1, raw bytes, 20 concurrent", ours: http, unit },
    { suite: "node", case: `client with local PoW (score ${MIN_SCORE}) + node:http, 20 concurrent`, ours: withClient, unit },
  ];
}

