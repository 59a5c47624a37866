// Submissions per second through the node's web handler: messages mined client-side at a low score (so the figure
// is the node's own cost: parse, rules, PoW check, id, store), sent as raw bytes and as JSON; and over real HTTP.
import { decodeMessage, encodeMessage } from "../src/model/codec.js";
import { networkId } from "../src/model/ids.js";
import { messageToJson } from "../src/model/json.js";
import type { Message } from "../src/model/types.js";
import { createMiner } from "../src/pow/index.js";
import { createHandler, createNode, serve } from "../src/node/index.js";
import type { Row } from "./harness.js";

const NETWORK = "chrysalis-bench";
const MIN_SCORE = 10;
const COUNT = 2000;
const ROUNDS = 3;

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

/** Each round: a fresh node, every pre-mined message submitted once (a repeat would be a cheap no-op). */
async function rate(requests: (() => Request)[], concurrency = 1): Promise<number> {
  const rates: number[] = [];
  // Round 0 warms the JIT up and is not counted (otherwise whichever case runs first looks slower).
  for (let round = 0; round <= ROUNDS; round++) {
    const node = createNode({ network: NETWORK, minPoWScore: MIN_SCORE, pow: false });
    const handler = createHandler(node);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests.length) {
          const response = await handler(requests[next++]!());
          if (response.status !== 201) throw new Error(`bench submission failed: ${response.status} ${await response.text()}`);
        }
      }),
    );
    if (round > 0) rates.push(requests.length / ((performance.now() - started) / 1000));
    await node.close();
  }
  return median(rates);
}

async function httpRate(bodies: Uint8Array[], concurrency: number): Promise<number> {
  const rates: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const node = createNode({ network: NETWORK, minPoWScore: MIN_SCORE, pow: false });
    const server = await serve(createHandler(node), { onClose: () => node.close() });
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

export default async function nodeBench(): Promise<Row[]> {
  const mined = await premine(COUNT);
  const url = "http://node.bench/api/v1/messages";
  const raw = mined.map((bytes) => () => new Request(url, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bytes as Uint8Array<ArrayBuffer> }));
  const jsonTexts = mined.map((bytes) => JSON.stringify(messageToJson(decodeMessage(bytes))));
  const json = jsonTexts.map((text) => () => new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: text }));
  const rawRate = await rate(raw);
  const jsonRate = await rate(json);
  const http = await httpRate(mined, 20);
  const unit = "submissions/s";
  return [
    { suite: "node", case: `handler, raw bytes (client PoW at score ${MIN_SCORE})`, ours: rawRate, unit },
    { suite: "node", case: `handler, JSON (client PoW at score ${MIN_SCORE})`, ours: jsonRate, theirs: rawRate, theirName: "raw bytes", ratio: jsonRate / rawRate, unit },
    { suite: "node", case: "node:http on 127.0.0.1, raw bytes, 20 concurrent", ours: http, unit },
  ];
}

