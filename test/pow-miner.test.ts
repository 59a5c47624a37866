// The parallel miner on real worker threads and the real WASM: solutions, nonce 0, abort, worker death,
// progress cadence, the queue and close. Targets are kept small so the file runs in a few seconds.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { MinerPool } from "../src/pow/miner.js";
import { createMiner, mineNonce, mineNonceSync, powDigest, powScore, referenceTrailingZeros as trailingZeros, targetZeros, type Miner } from "../src/pow/index.js";
import { expectProtocolError, hex, loadVectors } from "./helpers.js";

const vectors = loadVectors();
/** Unreachable in a test's lifetime (3^40 hashes): a job that only stops when told to. */
const ENDLESS = 40;
/** A digest for such jobs. Not all zeros: b1t6 maps zero bytes to zero trits, and Curl-P-81 maps the zero state to
 * itself (81 rounds are 27 turns of 0 → −1 → 1 → 0), so nonce 0 would solve any target. */
const BUSY = new Uint8Array(32).fill(0x5a);

function withNonce(message: Uint8Array, nonce: bigint): Uint8Array {
  const out = message.slice();
  new DataView(out.buffer).setBigUint64(out.length - 8, nonce, true);
  return out;
}

function randomMessage(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  return bytes;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a mined nonce scores at least the minimum", () => {
  let miner: Miner;
  beforeAll(() => {
    miner = createMiner({ workers: 2 });
  });
  afterAll(async () => {
    await miner.close();
  });

  it("for random 300-byte messages at score 100, on a persistent pool of 2 workers", async () => {
    for (let i = 0; i < 4; i++) {
      const message = randomMessage(300);
      const nonce = await miner.mine(message, { minScore: 100 });
      expect(powScore(withNonce(message, nonce))).toBeGreaterThanOrEqual(100);
    }
    expect(miner.stats().workers).toBe(2);
  });

  it("from a start nonce: the solution is at or after it", async () => {
    const message = randomMessage(100);
    const start = (1n << 63n) + 12345n;
    const nonce = await miner.mine(message, { minScore: 50, startNonce: start });
    expect(nonce >= start).toBe(true);
    expect(trailingZeros(powDigest(message), nonce)).toBeGreaterThanOrEqual(targetZeros(100, 50));
  });

  it("mineNonce on its shared pool (concurrent calls queue there), and the portable kernel", async () => {
    const message = randomMessage(200);
    const other = randomMessage(120);
    const [nonce, second] = await Promise.all([mineNonce(message, { minScore: 100, workers: 2 }), mineNonce(other, { minScore: 100, workers: 2 })]);
    expect(powScore(withNonce(message, nonce))).toBeGreaterThanOrEqual(100);
    expect(powScore(withNonce(other, second))).toBeGreaterThanOrEqual(100);
    const portable = new MinerPool({ workers: 1, flavor: "portable" });
    try {
      const n = await portable.mine(message, { minScore: 100 });
      expect(powScore(withNonce(message, n))).toBeGreaterThanOrEqual(100);
    } finally {
      await portable.close();
    }
  });

  it("one worker searches from the start in order: the minerExamples' first nonce", async () => {
    const one = createMiner({ workers: 1 });
    try {
      const v = vectors.minerExamples[0];
      expect(await one.mine(hex(v.messageWithZeroNonceHex), { minScore: v.minScore })).toBe(BigInt(v.firstNonceFromZero));
    } finally {
      await one.close();
    }
  });
});

describe("the end of the nonce space", () => {
  it("a search that runs out of nonces rejects with POW_NOT_FOUND; one that ends on 2^64 − 1 finds it", async () => {
    const miner = createMiner({ workers: 2 });
    try {
      const top = (1n << 64n) - 1n;
      const error = await rejection(miner.mineDigest(BUSY, 20, { startNonce: top - 999n }));
      expect((error as ProtocolError).code).toBe("POW_NOT_FOUND");
      expect(await miner.mineDigest(BUSY, 0, { startNonce: top })).toBe(top);
    } finally {
      await miner.close();
    }
  });
});

describe("mineNonceSync: the first nonce from the start, on the calling thread", () => {
  it("gives the minerExamples' first nonce on either kernel, and refuses unreachable scores", () => {
    const v = vectors.minerExamples[0];
    const message = hex(v.messageWithZeroNonceHex);
    expect(mineNonceSync(message, v.minScore)).toBe(BigInt(v.firstNonceFromZero));
    expect(mineNonceSync(message, v.minScore, 0n, "portable")).toBe(BigInt(v.firstNonceFromZero));
    expect(mineNonceSync(message, v.minScore, BigInt(v.firstNonceFromZero) + 1n)! > BigInt(v.firstNonceFromZero)).toBe(true);
    expectProtocolError(() => mineNonceSync(message, 1e200), "VALUE_OUT_OF_RANGE", { path: "minScore" });
  });
});

describe("nonce 0 as a solution works", () => {
  it("the 8 zero bytes of powScores have 1 trailing zero at nonce 0: found at target 1", async () => {
    const message = hex(vectors.powScores[0].messageHex);
    expect(targetZeros(message.length, 0.375)).toBe(1);
    const one = createMiner({ workers: 1 });
    try {
      expect(await one.mine(message, { minScore: 0.375 })).toBe(0n);
      expect(await one.mine(message, { minScore: 0 })).toBe(0n);
    } finally {
      await one.close();
    }
    const nonce = await mineNonce(message, { minScore: 0.375, workers: 2 });
    expect(powScore(withNonce(message, nonce))).toBeGreaterThanOrEqual(0.375);
  });
});

describe("abort: an aborted signal rejects with an AbortError and stops every worker", () => {
  it("a running job stops; its workers go idle and serve the next job", async () => {
    const miner = createMiner({ workers: 2 });
    try {
      const controller = new AbortController();
      const job = miner.mineDigest(new Uint8Array(32).fill(7), ENDLESS, { signal: controller.signal });
      await sleep(200);
      expect(miner.busy).toBe(true);
      const threads = miner.stats().threadIds;
      controller.abort();
      const error = await rejection(job);
      expect(error).toBeInstanceOf(DOMException);
      expect((error as DOMException).name).toBe("AbortError");
      expect(miner.busy).toBe(false);
      // Stopped means no more hashing: the pool's counter stands still.
      const before = miner.stats().hashes;
      expect(before).toBeGreaterThan(0);
      await sleep(150);
      expect(miner.stats().hashes).toBe(before);
      const nonce = await miner.mineDigest(new Uint8Array(32).fill(7), 3);
      expect(trailingZeros(new Uint8Array(32).fill(7), nonce)).toBeGreaterThanOrEqual(3);
      expect(miner.stats().threadIds).toEqual(threads);
    } finally {
      await miner.close();
    }
  });

  it("a queued job is dropped at once; an already aborted signal never starts", async () => {
    const miner = createMiner({ workers: 1 });
    try {
      const first = new AbortController();
      const running = miner.mineDigest(BUSY, ENDLESS, { signal: first.signal });
      const second = new AbortController();
      const queued = miner.mineDigest(BUSY, ENDLESS, { signal: second.signal });
      await sleep(50);
      expect(miner.queueLength).toBe(1);
      second.abort();
      expect(((await rejection(queued)) as DOMException).name).toBe("AbortError");
      expect(miner.queueLength).toBe(0);
      expect(miner.busy).toBe(true);
      expect(((await rejection(miner.mineDigest(new Uint8Array(32), 3, { signal: AbortSignal.abort() }))) as DOMException).name).toBe("AbortError");
      first.abort();
      expect(((await rejection(running)) as DOMException).name).toBe("AbortError");
    } finally {
      await miner.close();
    }
  });
});

describe("a worker that dies rejects the job (never a hang) and is replaced", () => {
  it("terminating a worker mid-job rejects with POW_WORKER_FAILED; the pool is whole again", async () => {
    const miner = new MinerPool({ workers: 2 });
    try {
      const job = miner.mineDigest(new Uint8Array(32).fill(1), ENDLESS);
      await sleep(150);
      const victim = miner.stats().threadIds[0]!;
      await miner.workerHandles[0]!.terminate();
      const error = await rejection(job);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe("POW_WORKER_FAILED");
      const after = miner.stats();
      expect(after.workers).toBe(2);
      expect(after.threadIds).not.toContain(victim);
      const nonce = await miner.mineDigest(new Uint8Array(32).fill(1), 4);
      expect(trailingZeros(new Uint8Array(32).fill(1), nonce)).toBeGreaterThanOrEqual(4);
    } finally {
      await miner.close();
    }
  });
});

describe("workers that cannot start reject the job instead of being replaced forever", () => {
  it("a kernel without exports kills every worker at start: POW_WORKER_FAILED, now and for later jobs", async () => {
    const empty = new WebAssembly.Module(Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00));
    const miner = new MinerPool({ workers: 2 }, empty);
    try {
      const error = await rejection(miner.mineDigest(BUSY, 3));
      expect((error as ProtocolError).code).toBe("POW_WORKER_FAILED");
      expect(((await rejection(miner.mineDigest(BUSY, 3))) as ProtocolError).code).toBe("POW_WORKER_FAILED");
    } finally {
      await miner.close();
    }
    expect(miner.stats().workers).toBe(0);
  });
});

describe("onProgress({ hashes, elapsedMs }) at least once a second", () => {
  it("reports growing hash counts at intervals under a second", async () => {
    const miner = createMiner({ workers: 2 });
    const seen: { hashes: number; elapsedMs: number; at: number }[] = [];
    const controller = new AbortController();
    const started = performance.now();
    try {
      const job = miner.mineDigest(new Uint8Array(32).fill(3), ENDLESS, {
        signal: controller.signal,
        onProgress: (p) => seen.push({ ...p, at: performance.now() }),
      });
      await sleep(1300);
      controller.abort();
      await rejection(job);
    } finally {
      await miner.close();
    }
    expect(seen.length).toBeGreaterThanOrEqual(2);
    let last = started;
    let hashes = 0;
    for (const p of seen) {
      expect(p.at - last).toBeLessThan(1000);
      expect(p.hashes).toBeGreaterThanOrEqual(hashes);
      expect(p.elapsedMs).toBeGreaterThan(0);
      last = p.at;
      hashes = p.hashes;
    }
    expect(hashes).toBeGreaterThan(0);
  });
});

describe("the queue: jobs wait their turn, maxQueue bounds them", () => {
  it("rejects with POW_QUEUE_FULL beyond maxQueue and runs queued jobs in order", async () => {
    const miner = createMiner({ workers: 1, maxQueue: 1 });
    try {
      const controller = new AbortController();
      const running = miner.mineDigest(BUSY, ENDLESS, { signal: controller.signal });
      await sleep(20);
      const queued = miner.mineDigest(new Uint8Array(32).fill(2), 2);
      const error = await rejection(miner.mineDigest(new Uint8Array(32), 2));
      expect((error as ProtocolError).code).toBe("POW_QUEUE_FULL");
      controller.abort();
      await rejection(running);
      expect(trailingZeros(new Uint8Array(32).fill(2), await queued)).toBeGreaterThanOrEqual(2);
    } finally {
      await miner.close();
    }
  });
});

describe("close stops every worker and refuses new work", () => {
  it("rejects running and queued jobs with POW_MINER_CLOSED and leaves no worker", async () => {
    const miner = createMiner({ workers: 2 });
    const running = rejection(miner.mineDigest(BUSY, ENDLESS));
    const queued = rejection(miner.mineDigest(BUSY, ENDLESS));
    await sleep(100);
    expect(miner.stats().workers).toBe(2);
    await miner.close();
    expect(((await running) as ProtocolError).code).toBe("POW_MINER_CLOSED");
    expect(((await queued) as ProtocolError).code).toBe("POW_MINER_CLOSED");
    expect(miner.stats()).toMatchObject({ workers: 0, busy: false, queued: 0, threadIds: [] });
    expect(((await rejection(miner.mine(new Uint8Array(60), { minScore: 1 }))) as ProtocolError).code).toBe("POW_MINER_CLOSED");
    await miner.close();
  });
});

describe("bad input is a ProtocolError, never a crash", () => {
  let miner: Miner;
  beforeAll(() => {
    miner = createMiner({ workers: 1 });
  });
  afterAll(async () => {
    await miner.close();
  });

  it("rejects bad messages, scores, starts and options", async () => {
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => miner.mine(new Uint8Array(7), { minScore: 1 }), "LENGTH_OUT_OF_RANGE", "messageBytes"],
      [() => miner.mine("00" as unknown as Uint8Array, { minScore: 1 }), "INVALID_ARGUMENT", "messageBytes"],
      [() => miner.mine(new Uint8Array(60), { minScore: -1 }), "INVALID_ARGUMENT", "minScore"],
      [() => miner.mine(new Uint8Array(60), { minScore: 1e200 }), "VALUE_OUT_OF_RANGE", "minScore"],
      [() => miner.mine(new Uint8Array(60), { minScore: 1, startNonce: -1n }), "VALUE_OUT_OF_RANGE", "startNonce"],
      [() => miner.mine(new Uint8Array(60), undefined as never), "INVALID_ARGUMENT", "options"],
      [() => miner.mineDigest(new Uint8Array(31), 3), "INVALID_ARGUMENT", "digest"],
      [() => miner.mineDigest(new Uint8Array(32), 244), "VALUE_OUT_OF_RANGE", "targetZeros"],
    ];
    for (const [run, code, path] of cases) {
      const error = await rejection(run());
      expect(error, `${code} at ${path}`).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(code);
      expect((error as ProtocolError).path).toBe(path);
    }
    expectProtocolError(() => createMiner({ workers: 0 }), "VALUE_OUT_OF_RANGE", { path: "workers" });
    expectProtocolError(() => createMiner({ flavor: "avx" as never }), "INVALID_ARGUMENT", { path: "flavor" });
    expectProtocolError(() => createMiner(null as never), "INVALID_ARGUMENT", { path: "options" });
    expectProtocolError(() => createMiner({ workers: 1.5 }), "INVALID_ARGUMENT", { path: "workers" });
    expect(miner.stats().busy).toBe(false);
  });

  it("fuzz: any message and options resolve, reject with ProtocolError, or (when valid) stop at the abort", async () => {
    const value = fc.oneof(fc.anything(), fc.uint8Array({ maxLength: 64 }), fc.double(), fc.bigInt({ min: -(1n << 66n), max: 1n << 66n }), fc.integer({ min: -5, max: 5000 }));
    await fc.assert(
      fc.asyncProperty(value, value, value, async (bytes, minScore, startNonce) => {
        const signal = AbortSignal.timeout(30);
        try {
          const nonce = await miner.mine(bytes as Uint8Array, { minScore: minScore as number, startNonce: startNonce as bigint, signal });
          expect(typeof nonce).toBe("bigint");
        } catch (error) {
          if (!(error instanceof DOMException && error.name === "AbortError")) expect(error).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 60 },
    );
    // A solved job resolves at once; its workers report done a moment later (≤ one chunk).
    for (let i = 0; i < 100 && miner.busy; i++) await sleep(10);
    expect(miner.stats().busy).toBe(false);
  });
});
