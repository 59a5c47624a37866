// Loads the bitsliced Curl-P-81 WASM kernels (assembly/*.ts, embedded as base64: nothing is fetched) and searches nonces.
// SIMD (128 lanes) where the engine validates a v128 module, else the 64-lane portable build; compiled once per process.
import { MAX_U64, NONCE_LENGTH } from "../bytes/limits.js";
import { ProtocolError, assertBytes, assertInteger } from "../bytes/errors.js";
import type {} from "./errors.js";
import { PORTABLE_KERNEL, SIMD_KERNEL } from "./kernel-wasm.generated.js";
import { CURL_HASH_TRITS } from "./curl.js";
import { MAX_TRAILING_ZEROS, POW_DIGEST_LENGTH, toNonce } from "./score.js";

/** The WASM kernel's builds: `simd` (WebAssembly SIMD, 128 nonces per transform) or `portable` (64). */
export type KernelFlavor = "simd" | "portable";

/** The kernel's memory map (assembly/pow-kernel.mjs repeats it): where the host writes and reads. */
export const KERNEL_LAYOUT = { digest: 0, result: 64, nonce: 96, lanesOut: 128, ioTrits: 256 } as const;
/** Nonces per transform. */
export const KERNEL_LANES: Readonly<Record<KernelFlavor, number>> = { simd: 128, portable: 64 };

/** The raw exports; u64 parameters travel as bigint. */
export interface KernelExports {
  readonly memory: WebAssembly.Memory;
  setDigest(): void;
  search(target: number, first: bigint, last: bigint): number;
  laneZeros(base: bigint): void;
  hashTrits(): number;
  /** The one-state path: in the portable build only (assembly/pow-kernel.mjs says why). */
  zerosOne?(): number;
  hashOne?(): void;
}

const MAX_NONCE = MAX_U64;

// The smallest module using v128 (a function returning v128.const 0): validates only where SIMD is supported.
const SIMD_PROBE = Uint8Array.of(
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00,
  0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b,
);

let simd: boolean | undefined;
/** Whether this engine runs WebAssembly SIMD. */
export function simdSupported(): boolean {
  if (simd === undefined) {
    try {
      simd = typeof WebAssembly === "object" && WebAssembly.validate(SIMD_PROBE);
    } catch {
      simd = false;
    }
  }
  return simd;
}

/** `simd` where the engine has WebAssembly SIMD, else `portable`. */
export function defaultFlavor(): KernelFlavor {
  return simdSupported() ? "simd" : "portable";
}

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const modules: Partial<Record<KernelFlavor, WebAssembly.Module>> = {};
// A refusal is kept too: under a CSP each further attempt would file one more violation report.
const refusals: Partial<Record<KernelFlavor, unknown>> = {};
/** The compiled kernel (once per process and flavour); it can be posted to workers. */
export function kernelModule(flavor: KernelFlavor = defaultFlavor()): WebAssembly.Module {
  if (flavor !== "simd" && flavor !== "portable") throw new ProtocolError("INVALID_ARGUMENT", "flavor is simd or portable", { path: "flavor" });
  if (flavor === "simd" && !simdSupported()) throw new ProtocolError("UNSUPPORTED", "this engine has no WebAssembly SIMD", { path: "flavor" });
  let mod = modules[flavor];
  if (mod === undefined) {
    if (flavor in refusals) throw refusals[flavor];
    try {
      const bytes = decodeBase64(flavor === "simd" ? SIMD_KERNEL : PORTABLE_KERNEL);
      mod = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
    } catch (error) {
      refusals[flavor] = error;
      throw error;
    }
    modules[flavor] = mod;
  }
  return mod;
}

/** One instance: its memory (two pages, fixed) is allocated here, once. Not thread-safe; each worker holds its own. */
export class Kernel {
  /** The build this instance runs. */
  readonly flavor: KernelFlavor;
  /** Nonces tried per transform. */
  readonly lanes: number;
  /** The instance's WebAssembly exports (its memory and search function). */
  readonly exports: KernelExports;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;

  constructor(flavor: KernelFlavor = defaultFlavor()) {
    this.flavor = flavor;
    this.lanes = KERNEL_LANES[flavor];
    this.exports = new WebAssembly.Instance(kernelModule(flavor), {}).exports as unknown as KernelExports;
    this.bytes = new Uint8Array(this.exports.memory.buffer);
    this.view = new DataView(this.exports.memory.buffer);
  }

  private setDigest(digest: Uint8Array): void {
    assertBytes(digest, "digest", POW_DIGEST_LENGTH);
    this.bytes.set(digest, KERNEL_LAYOUT.digest);
    this.exports.setDigest();
  }

  /** The first nonce n, start ≤ n < start + count, whose hash ends in ≥ targetZeros zero trits; undefined if none. */
  searchNonce(digest: Uint8Array, targetZeros: number, start: bigint | number, count: bigint | number): bigint | undefined {
    assertInteger(targetZeros, "targetZeros", 0, MAX_TRAILING_ZEROS);
    const first = toNonce(start, "start");
    const n = typeof count === "number" ? BigInt(assertCount(count)) : count;
    if (typeof n !== "bigint" || n < 0n) throw new ProtocolError("VALUE_OUT_OF_RANGE", "count must be ≥ 0", { path: "count" });
    this.setDigest(digest);
    if (n === 0n) return undefined;
    const last = first + n - 1n > MAX_NONCE ? MAX_NONCE : first + n - 1n;
    return this.exports.search(targetZeros, first, last) === 1 ? this.view.getBigUint64(KERNEL_LAYOUT.result, true) : undefined;
  }

  /** Trailing zeros of nonces base .. base + lanes − 1, one per lane (base is rounded down to a multiple of lanes). */
  laneZeros(digest: Uint8Array, base: bigint | number): Uint8Array {
    const b = toNonce(base, "base") & ~BigInt(this.lanes - 1);
    this.setDigest(digest);
    this.exports.laneZeros(b);
    return this.bytes.slice(KERNEL_LAYOUT.lanesOut, KERNEL_LAYOUT.lanesOut + this.lanes);
  }

  /** Curl-P-81 of up to 243 trits in every lane; throws if the lanes disagree (they never should). */
  hash(trits: Int8Array): Int8Array {
    const io = this.setTrits(trits);
    if (this.exports.hashTrits() !== 1) throw new Error("kernel lanes disagree");
    return io.slice();
  }

  /** Curl-P-81 of up to 243 trits on the one-state path (the state's 729 trits side by side in 64-bit words), the
   * path trailingZeros/powScore take: about a tenth of `hash`, whose lanes all hash the same input. Portable build only. */
  hashOne(trits: Int8Array): Int8Array {
    const hashOne = this.oneState(this.exports.hashOne);
    const io = this.setTrits(trits);
    hashOne();
    return io.slice();
  }

  private oneState<F>(fn: F | undefined): F {
    if (fn === undefined) throw new ProtocolError("UNSUPPORTED", "the one-state path is in the portable kernel only", { path: "flavor" });
    return fn;
  }

  private setTrits(trits: Int8Array): Int8Array {
    if (!(trits instanceof Int8Array) || trits.length > CURL_HASH_TRITS) throw new ProtocolError("INVALID_ARGUMENT", "expected at most 243 trits", { path: "trits" });
    for (let i = 0; i < trits.length; i++) {
      const t = trits[i]!;
      if (t !== -1 && t !== 0 && t !== 1) throw new ProtocolError("VALUE_OUT_OF_RANGE", "a trit must be -1, 0 or 1", { path: `trits[${i}]` });
    }
    const io = new Int8Array(this.exports.memory.buffer, KERNEL_LAYOUT.ioTrits, CURL_HASH_TRITS);
    io.fill(0);
    io.set(trits);
    return io;
  }

  /** Trailing zero trits of the hash of one nonce, on the one-state path (portable build only). */
  trailingZeros(digest: Uint8Array, nonce: bigint | number): number {
    const zerosOne = this.oneState(this.exports.zerosOne);
    assertBytes(digest, "digest", POW_DIGEST_LENGTH);
    this.view.setBigUint64(KERNEL_LAYOUT.nonce, toNonce(nonce, "nonce"), true);
    this.bytes.set(digest, KERNEL_LAYOUT.digest);
    return zerosOne();
  }

  /** trailingZeros for the nonce in the 8 bytes of `source` from `at` (a message's own, little-endian): no bigint
   * on the way. The caller has checked `digest` (32 bytes) and that the 8 bytes are there. */
  trailingZerosAt(digest: Uint8Array, source: Uint8Array, at: number): number {
    const bytes = this.bytes;
    bytes.set(digest, KERNEL_LAYOUT.digest);
    for (let i = 0; i < NONCE_LENGTH; i++) bytes[KERNEL_LAYOUT.nonce + i] = source[at + i]!;
    return this.oneState(this.exports.zerosOne)();
  }
}

function assertCount(count: number): number {
  assertInteger(count, "count", 0, Number.MAX_SAFE_INTEGER);
  return count;
}

const shared: Partial<Record<KernelFlavor, Kernel>> = {};
/** A kernel instance per flavour for calls on this thread. */
export function sharedKernel(flavor: KernelFlavor = defaultFlavor()): Kernel {
  return (shared[flavor] ??= new Kernel(flavor));
}

/** The first nonce ≥ start (among `count`) meeting `targetZeros`, on this thread: deterministic, for tests and small targets. */
export function searchNonce(digest: Uint8Array, targetZeros: number, start: bigint | number = 0n, count: bigint | number = MAX_NONCE + 1n, flavor?: KernelFlavor): bigint | undefined {
  return sharedKernel(flavor).searchNonce(digest, targetZeros, start, count);
}
