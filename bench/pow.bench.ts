// pow: the Curl-P-81 kernels and the miner against iota.js 1.8.6 LocalPowProvider (PowHelper.performPow, what its
// pow() runs) and @iota/pow-wasm.js doPow — one core each, side by side in one tinybench run (issue #3).
import * as iota from "@iota/iota.js";
import powWasm from "@iota/pow-wasm.js";
import { availableParallelism } from "node:os";
import { Kernel, createMiner, messageNonce, powDigest, powInputTrits, powScore, referencePowScore, referenceTrailingZeros, searchNonce, simdSupported, targetZeros, type Miner } from "../src/pow/index.js";
import { messageTrailingZeros } from "../src/pow/hash.js";
import { countTrailingZeros } from "../src/pow/score.js";
import { compareEach, medians, type Row } from "./harness.js";

interface BigIntLike {
  toString(): string;
}
// iota.js ships typings the NodeNext resolver cannot see (bench/iota-js.d.ts declares the parts others use).
const PowHelper = (iota as unknown as { PowHelper: { performPow(digest: Uint8Array, targetZeros: number, startIndex: string): BigIntLike } }).PowHelper;

const SUITE = "pow";
const UNIT = "hashes/s";
/** Hashes per competitor call: each call starts exactly this many nonces before a known first solution. */
const FIXED_WORK = 600;
/** Target for those calls: solutions 1 in 3^7, so gaps of ≥ FIXED_WORK are common. */
const FIXED_TARGET = 7;
/** Nonces per kernel call (unreachable target, so every call does all of them). */
const KERNEL_WORK = 32_768;
/** 3^24 ≈ 2.8·10^11 hashes per solution: never reached in a bench, yet near the real 13 (the kernel's tail work
 * grows with the target, by a few hundred sparse trits from 13 to 60 zeros). */
const UNREACHED = 24;

const digest = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);

/** Starts s with the first solution from s at exactly s + FIXED_WORK − 1, found with our kernel, checked by the reference. */
function fixedWorkStarts(count: number): bigint[] {
  const starts: bigint[] = [];
  let previous = searchNonce(digest, FIXED_TARGET, 0n)!;
  while (starts.length < count) {
    const next = searchNonce(digest, FIXED_TARGET, previous + 1n)!;
    if (next - previous >= BigInt(FIXED_WORK)) {
      if (referenceTrailingZeros(digest, next) < FIXED_TARGET) throw new Error("kernel and reference disagree");
      starts.push(next - BigInt(FIXED_WORK) + 1n);
    }
    previous = next;
  }
  return starts;
}

/** Seconds of CPU this process (every thread) used since `since`. */
function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

/** Hash rate of a miner over `ms` milliseconds of an endless job: per wall-clock second and per CPU second (the
 * machine is shared; CPU time shows what the kernel does when it gets a core). */
async function minerRate(miner: Miner, ms: number): Promise<{ wall: number; cpu: number }> {
  const controller = new AbortController();
  const job = miner.mineDigest(digest, UNREACHED, { signal: controller.signal }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300)); // warm-up: workers spawned and tiered up
  const h0 = miner.stats().hashes;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const hashes = miner.stats().hashes - h0;
  const rate = { wall: (hashes * 1000) / (performance.now() - t0), cpu: hashes / cpuSeconds(c0) };
  controller.abort();
  await job;
  return rate;
}

/** A kernel's hashes per CPU second over `calls` calls of KERNEL_WORK nonces. */
function kernelCpuRate(kernel: Kernel, calls: number): number {
  let start = 1n << 50n;
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) kernel.searchNonce(digest, UNREACHED, (start += BigInt(KERNEL_WORK)), KERNEL_WORK);
  return (calls * KERNEL_WORK) / cpuSeconds(c0);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** Seconds to mine each of `count` random 300-byte messages at score 4000. */
async function timeToScore(workers: number, count: number): Promise<{ median: number; p95: number }> {
  const miner = createMiner({ workers });
  try {
    await miner.mineDigest(digest, 2); // spawn the pool outside the timing
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const message = new Uint8Array(300);
      crypto.getRandomValues(message);
      const t0 = performance.now();
      const nonce = await miner.mine(message, { minScore: 4000 });
      times.push((performance.now() - t0) / 1000);
      if (referenceTrailingZeros(powDigest(message), nonce) < targetZeros(300, 4000)) throw new Error("a mined nonce misses the target");
    }
    times.sort((a, b) => a - b);
    return { median: percentile(times, 0.5), p95: percentile(times, 0.95) };
  } finally {
    await miner.close();
  }
}

/** One message's score and a node's accept/refuse check (issue #19): the one-state path against what each replaced,
 * side by side in one run, on a 108-byte message (a small indexation message) and a 514-byte transaction. */
async function oneMessage(): Promise<Row[]> {
  const rows: Row[] = [];
  // The 128-lane kernel instance powScore used before (every lane hashing the same input).
  const lanes = new Kernel();
  const previousPowScore = (bytes: Uint8Array): number => 3 ** countTrailingZeros(lanes.hash(powInputTrits(powDigest(bytes), messageNonce(bytes)))) / bytes.length;
  for (const length of [108, 514]) {
    const message = new Uint8Array(length);
    crypto.getRandomValues(message);
    if (powScore(message) !== referencePowScore(message) || previousPowScore(message) !== powScore(message)) throw new Error("powScore disagrees with the reference");
    rows.push(
      ...(await compareEach(SUITE, `powScore, one ${length}-byte message`, () => powScore(message), {
        "previous powScore (128-lane kernel, every lane alike)": () => previousPowScore(message),
        "scalar reference (referencePowScore)": () => referencePowScore(message),
      })),
    );
    // The node's check before: searchNonce(digest, target, its own nonce, count 1), one whole batch for one nonce.
    const target = targetZeros(length, 4000);
    const nonce = messageNonce(message);
    rows.push(
      ...(await compareEach(SUITE, `a node's PoW check of one ${length}-byte submission (zeros ≥ target)`, () => messageTrailingZeros(message) >= target, {
        "previous check (searchNonce, count 1)": () => searchNonce(powDigest(message), target, nonce, 1n) !== undefined,
      })),
    );
  }
  return rows.map((r) => ({ ...r, unit: "ops/s" }));
}

export default async function run(): Promise<Row[]> {
  const rows: Row[] = await oneMessage();
  // The miner rows below take minutes of both cores; POW_ONE_MESSAGE_ONLY=1 runs the one-message rows alone.
  if (process.env["POW_ONE_MESSAGE_ONLY"] === "1") return rows;
  const simd = simdSupported() ? new Kernel("simd") : undefined;
  const portable = new Kernel("portable");
  const starts = fixedWorkStarts(64);
  let nextStart = 0;
  const take = (): bigint => starts[nextStart++ % starts.length]!;
  let kernelStart = 1n << 40n;

  // Every competitor call must do exactly FIXED_WORK hashes; check once before timing.
  const first = take();
  const expected = (first + BigInt(FIXED_WORK) - 1n).toString();
  if (PowHelper.performPow(digest, FIXED_TARGET, first.toString()).toString() !== expected) throw new Error("iota.js found another nonce");
  if ((await powWasm.doPow(digest, FIXED_TARGET, first.toString())) !== expected) throw new Error("pow-wasm.js found another nonce");

  const fns: Record<string, () => unknown> = {
    portable: () => {
      if (portable.searchNonce(digest, UNREACHED, (kernelStart += BigInt(KERNEL_WORK)), KERNEL_WORK) !== undefined) throw new Error("unexpected solution");
    },
    iotajs: () => PowHelper.performPow(digest, FIXED_TARGET, take().toString()),
    powwasm: () => powWasm.doPow(digest, FIXED_TARGET, take().toString()),
  };
  if (simd !== undefined) {
    fns.simd = () => {
      if (simd.searchNonce(digest, UNREACHED, (kernelStart += BigInt(KERNEL_WORK)), KERNEL_WORK) !== undefined) throw new Error("unexpected solution");
    };
  }
  const ops = await medians(fns, 1500);
  const rate = {
    simd: (ops.simd ?? 0) * KERNEL_WORK,
    portable: ops.portable! * KERNEL_WORK,
    iotajs: ops.iotajs! * FIXED_WORK,
    powwasm: ops.powwasm! * FIXED_WORK,
  };
  const kernelName = simd !== undefined ? "SIMD kernel" : "portable kernel (no SIMD here)";
  const ours = simd !== undefined ? rate.simd : rate.portable;
  rows.push({ suite: SUITE, case: `hash rate, 1 core: ${kernelName} vs iota.js LocalPowProvider`, ours, theirs: rate.iotajs, theirName: "iota.js PowHelper.performPow", ratio: ours / rate.iotajs, target: 400, unit: UNIT });
  rows.push({ suite: SUITE, case: `hash rate, 1 core: ${kernelName} vs @iota/pow-wasm.js`, ours, theirs: rate.powwasm, theirName: "@iota/pow-wasm.js doPow", ratio: ours / rate.powwasm, unit: UNIT });
  rows.push({ suite: SUITE, case: `hash rate, 1 core: ${kernelName} (absolute)`, ours, target: 4_500_000, unit: UNIT });
  rows.push({ suite: SUITE, case: "hash rate, 1 core: portable kernel (no SIMD, 64 lanes)", ours: rate.portable, target: 1_500_000, unit: UNIT });
  if (simd !== undefined) rows.push({ suite: SUITE, case: "hash rate per CPU second (process.cpuUsage): SIMD kernel", ours: kernelCpuRate(simd, 100), unit: UNIT });
  rows.push({ suite: SUITE, case: "hash rate per CPU second (process.cpuUsage): portable kernel", ours: kernelCpuRate(portable, 50), unit: UNIT });

  // Through the worker pool: per core with one worker, then the scaling.
  const cores = availableParallelism();
  for (let workers = 1; workers <= cores; workers++) {
    const miner = createMiner({ workers });
    try {
      const r = await minerRate(miner, 2000);
      const label = `${workers} worker${workers > 1 ? "s" : ""} (of ${cores} available)`;
      rows.push({ suite: SUITE, case: `miner hash rate, ${label}`, ours: r.wall, target: workers === 1 ? 4_500_000 : undefined, unit: UNIT });
      rows.push({ suite: SUITE, case: `miner hash rate per CPU second, ${label}`, ours: r.cpu, unit: UNIT });
    } finally {
      await miner.close();
    }
  }

  // Time to score 4000 (13 trailing zeros, 1.6 M hashes on average) for 20 random 300-byte messages.
  for (const workers of [...new Set([1, cores])]) {
    const { median, p95 } = await timeToScore(workers, 20);
    rows.push({
      suite: SUITE,
      case: `score 4000, 20 random 300 B messages, ${workers} worker${workers > 1 ? "s" : ""}: median ${median.toFixed(3)} s, p95 ${p95.toFixed(3)} s`,
      ours: 1 / median,
      target: workers === 1 ? 2 : undefined,
      unit: "msg/s (1 / median)",
    });
  }
  return rows;
}
