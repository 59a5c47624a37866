// BLAKE2b-256 (a 32-byte digest parameter, not truncated BLAKE2b-512): message ids, addresses, PoW digests.
// Runs our one-call WebAssembly kernel (written by assembly/blake2b-build.mjs: 12 rounds unrolled, about twice
// blake2b-wasm's speed on long inputs); @noble/hashes where WebAssembly is missing or refused (a CSP without
// 'wasm-unsafe-eval') or the kernel fails its known answer, with a warning event on first use. (A second WebAssembly
// module as a middle step would load exactly where ours loads, so there is none.)
import { blake2b as nobleBlake2b } from "@noble/hashes/blake2.js";
import { ProtocolError } from "../bytes/errors.js";
import { BLAKE2B_KERNEL } from "./blake2b-kernel.generated.js";
import { warnFallback } from "./fallback.js";

interface KernelExports {
  memory: WebAssembly.Memory;
  INPUT: WebAssembly.Global;
  OUTPUT: WebAssembly.Global;
  digest(length: number): void;
}

// Known answer checked when the kernel loads: BLAKE2b-256("abc").
const ABC_DIGEST = "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319";

// Why WebAssembly did not load, for the warning.
let loadError: unknown;

// Compiled asynchronously: browsers refuse synchronous compilation of modules over 4 KiB on the main thread.
async function loadKernel(): Promise<KernelExports | undefined> {
  if (typeof WebAssembly !== "object" || typeof atob !== "function") return undefined;
  try {
    const binary = atob(BLAKE2B_KERNEL);
    const code = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) code[i] = binary.charCodeAt(i);
    const { instance } = await WebAssembly.instantiate(code, {});
    const exports = instance.exports as unknown as KernelExports;
    const mem = new Uint8Array(exports.memory.buffer);
    const input = exports.INPUT.value as number;
    mem.set([0x61, 0x62, 0x63], input);
    exports.digest(3);
    let hex = "";
    for (let i = 0; i < 32; i++) hex += mem[(exports.OUTPUT.value as number) + i]!.toString(16).padStart(2, "0");
    if (hex === ABC_DIGEST) return exports;
    loadError = new Error("the BLAKE2b kernel failed its known-answer check");
    return undefined;
  } catch (error) {
    loadError = error;
    return undefined;
  }
}

const kernel = await loadKernel();
const K_INPUT = kernel ? (kernel.INPUT.value as number) : 0;
const K_OUTPUT = kernel ? (kernel.OUTPUT.value as number) : 0;
let kernelMemory = kernel ? new Uint8Array(kernel.memory.buffer) : new Uint8Array(0);
const PAGE = 65536;

/** Which implementation `blake2b256` runs on this platform. */
export const blake2bBackend: "wasm" | "js" = kernel ? "wasm" : "js";
/** What runs it: our WebAssembly kernel, or @noble/hashes. */
export const blake2bImplementation: "kernel" | "noble" = kernel ? "kernel" : "noble";

/** BLAKE2b with a 32-byte digest. */
export function blake2b256(bytes: Uint8Array): Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected a Uint8Array", { path: "bytes" });
  if (kernel) {
    const end = K_INPUT + bytes.length;
    let mem = kernelMemory;
    if (end > mem.length || mem.buffer !== kernel.memory.buffer) {
      if (end > kernel.memory.buffer.byteLength) kernel.memory.grow(Math.ceil((end - kernel.memory.buffer.byteLength) / PAGE));
      mem = kernelMemory = new Uint8Array(kernel.memory.buffer);
    }
    mem.set(bytes, K_INPUT);
    kernel.digest(bytes.length);
    return mem.slice(K_OUTPUT, K_OUTPUT + 32);
  }
  warnFallback("blake2b", "the WebAssembly BLAKE2b kernel is unavailable here, so BLAKE2b-256 runs in JavaScript (@noble/hashes), several times slower", loadError);
  return nobleBlake2b(bytes, { dkLen: 32 });
}

/** The pure-TypeScript implementation, exposed for tests and for comparing the backends. */
export function blake2b256Js(bytes: Uint8Array): Uint8Array {
  return nobleBlake2b(bytes, { dkLen: 32 });
}
