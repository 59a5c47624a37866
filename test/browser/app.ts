// The page under test: the built package (dist, as a user's bundler sees it) bundled by esbuild, with the calls the
// browser suite makes exposed on globalThis.chrysalisTest. Node computes the same things and compares.
import fc from "fast-check";
import { bech32Address, blake2b256, blake2bBackend, decodeMessage, ed25519PublicKey, encodeMessage, encodeTransactionPayload, messageFromJson, messageId, messageToJson, networkId, signEd25519, toHex, fromHex, verifyEd25519, verifyTransactionSignatures, warnings } from "../../dist/index.js";
import { malformedMessageBytes, messageBytes, signedTransaction } from "../../dist/arbitraries/index.js";
import { signNonce } from "../../dist/auth/index.js";
import { createClient } from "../../dist/client/index.js";
import { createMiner, powScore, type MinerOptions } from "../../dist/pow/index.js";

/** Warning events heard since the page loaded (listened to at once: they are told a task after first use). */
const heard: { component: string; code: string; message: string }[] = [];
warnings.addEventListener("warning", (event) => {
  const e = event as Event & { component: string; code: string; message: string };
  heard.push({ component: e.component, code: e.code, message: e.message });
  event.preventDefault();
});

export interface VectorInput {
  messages: string[];
  hashInputs: string[];
  seeds: string[];
  networks: string[];
}

async function rejection(promise: Promise<unknown>): Promise<{ name: string; code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name: string; code?: string; message: string };
    return { name: e.name, code: e.code ?? "", message: e.message };
  }
  throw new Error("expected a rejection");
}

const api = {
  /** What the page knows about itself. */
  environment() {
    return { crossOriginIsolated: globalThis.crossOriginIsolated, sharedArrayBuffer: typeof SharedArrayBuffer === "function", blake2bBackend, cores: navigator.hardwareConcurrency };
  },

  warnings() {
    return heard;
  },

  /** Codec, ids, hashing, Ed25519 and Bech32 on the given inputs, as hex and JSON for Node to compare. */
  vectors(input: VectorInput) {
    return {
      messages: input.messages.map((hex) => {
        const message = decodeMessage(fromHex(hex));
        const json = messageToJson(message);
        return { json, reencoded: toHex(encodeMessage(messageFromJson(json))), id: messageId(fromHex(hex)) };
      }),
      hashes: input.hashInputs.map((hex) => toHex(blake2b256(fromHex(hex)))),
      signatures: input.seeds.map((seedHex) => {
        const seed = fromHex(seedHex);
        const publicKey = ed25519PublicKey(seed);
        const message = new TextEncoder().encode("chrysalis in a browser");
        const signature = signEd25519(seed, message);
        const tampered = signature.slice();
        tampered[0]! ^= 1;
        return { publicKey: toHex(publicKey), signature: toHex(signature), valid: verifyEd25519(publicKey, message, signature), tamperedValid: verifyEd25519(publicKey, message, tampered), bech32: bech32Address("iota", publicKey) };
      }),
      networkIds: input.networks.map((name) => networkId(name).toString()),
    };
  },

  /** What chrysalis-core/arbitraries draws from `seed`, as hex, with what the page makes of it (Node draws the same). */
  arbitraries(seed: number, runs: number) {
    const codeOf = (bytes: Uint8Array): string => {
      try {
        decodeMessage(bytes);
        return "accepted";
      } catch (error) {
        return (error as { code?: string }).code ?? String(error);
      }
    };
    return {
      messages: fc.sample(messageBytes(), { numRuns: runs, seed }).map((bytes) => ({ hex: toHex(bytes), code: codeOf(bytes) })),
      malformed: fc.sample(malformedMessageBytes(), { numRuns: runs, seed }).map(({ bytes, rule }) => ({ hex: toHex(bytes), rule: rule.name, expected: rule.code, code: codeOf(bytes) })),
      signed: fc.sample(signedTransaction({ maxInputs: 8 }), { numRuns: 5, seed }).map((t) => ({ hex: toHex(encodeTransactionPayload(t.payload)), valid: verifyTransactionSignatures(t.payload, (input) => t.addressOf(input)).valid })),
    };
  },

  /** Mines `messageHex` at `minScore`; the nonce, its score here, and which kernel ran. */
  async mine(messageHex: string, minScore: number, options: MinerOptions = {}) {
    const miner = createMiner(options);
    try {
      const message = fromHex(messageHex);
      const started = performance.now();
      const nonce = await miner.mine(message, { minScore });
      const ms = performance.now() - started;
      new DataView(message.buffer, message.byteOffset).setBigUint64(message.length - 8, nonce, true);
      return { nonce: nonce.toString(), score: powScore(message), ms, kernel: miner.stats().kernel };
    } finally {
      await miner.close();
    }
  },

  /** Mining that fails: the rejection's name, code and message. */
  async mineFailure(messageHex: string, minScore: number, options: MinerOptions = {}) {
    const miner = createMiner(options);
    try {
      return await rejection(miner.mine(fromHex(messageHex), { minScore }));
    } finally {
      await miner.close();
    }
  },

  /** Hashes per second over `ms` of an unreachable target, counted after a warm-up of `warmMs`. */
  async hashRate(workers: number, ms: number, warmMs: number) {
    const miner = createMiner({ workers });
    const controller = new AbortController();
    const digest = new Uint8Array(32).fill(0x5a);
    let mark: { hashes: number; at: number } | undefined;
    let last: { hashes: number; at: number } | undefined;
    const job = miner.mineDigest(digest, 40, {
      signal: controller.signal,
      onProgress: ({ hashes, elapsedMs }) => {
        if (mark === undefined && elapsedMs >= warmMs) mark = { hashes, at: elapsedMs };
        last = { hashes, at: elapsedMs };
      },
    });
    await new Promise((resolve) => setTimeout(resolve, warmMs + ms));
    controller.abort();
    await job.catch(() => undefined);
    await miner.close();
    if (mark === undefined || last === undefined || last.at <= mark.at) throw new Error("no progress was reported");
    return { rate: ((last.hashes - mark.hashes) * 1000) / (last.at - mark.at), kernel: miner.stats().kernel };
  },

  /** Aborts a running job after `afterMs`: how long the rejection took, and whether anything still hashes. */
  async abort(workers: number, afterMs: number) {
    const miner = createMiner({ workers });
    try {
      const controller = new AbortController();
      const job = miner.mineDigest(new Uint8Array(32).fill(7), 40, { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, afterMs));
      const busyBefore = miner.stats().busy;
      const hashesBefore = miner.stats().hashes;
      const started = performance.now();
      controller.abort();
      const error = await rejection(job);
      const ms = performance.now() - started;
      const stopped = miner.stats();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const later = miner.stats();
      // The pool serves the next job with the same workers.
      const next = await miner.mineDigest(new Uint8Array(32).fill(7), 3);
      return { error, ms, busyBefore, hashesBefore, busyAfter: stopped.busy, hashesAtStop: stopped.hashes, hashesLater: later.hashes, workers: later.workers, next: next.toString() };
    } finally {
      await miner.close();
    }
  },

  /** The client against a node: prove ownership, submit (node-side PoW and local PoW), read back JSON and bytes. */
  async client(nodeUrl: string, identityId: string, secretKey: string) {
    const client = createClient(nodeUrl, { powWorkers: 2 });
    const jwt = await client.proveOwnership(identityId, secretKey);
    const index = toHex(new TextEncoder().encode("from a browser"));
    const remote = await client.submitMessage({ payload: { type: 2, index, data: "" } });
    const local = await client.submitMessage({ payload: { type: 2, index, data: "6c6f63616c" } }, { localPow: true });
    const json = await client.getMessageJson(local);
    const raw = await client.getMessageRaw(local);
    const badKey = await rejection(client.proveOwnership(identityId, "0OIl-not-base58"));
    return { jwt, remote, local, json, rawId: messageId(raw), rawScore: powScore(raw), badKey, nonceSigned: signNonce("0123456789abcdef0123456789abcdef01234567", secretKey) };
  },
};

export type ChrysalisTestApi = typeof api;
(globalThis as unknown as { chrysalisTest: ChrysalisTestApi }).chrysalisTest = api;
