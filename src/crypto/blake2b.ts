// BLAKE2b-256 (a 32-byte digest parameter, not truncated BLAKE2b-512): message ids, addresses, PoW digests.
// Runs our one-call WebAssembly kernel (written by assembly/blake2b-build.mjs: 12 rounds unrolled, about twice
// blake2b-wasm's speed on long inputs); blake2b-wasm's compiled module if that fails to load; @noble/hashes where
// WebAssembly is missing or refused (a CSP without 'wasm-unsafe-eval'), with a warning event on first use.
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
    return hex === ABC_DIGEST ? exports : undefined;
  } catch (error) {
    loadError = error;
    return undefined;
  }
}

interface Blake2bExports {
  memory: WebAssembly.Memory;
  blake2b_init(state: number, outlen: number): void;
  blake2b_update(state: number, start: number, end: number): void;
  blake2b_final(state: number): void;
}

// blake2b-wasm's memory layout: the parameter block at 0..63, then a 216-byte state whose digest sits at +128.
const PARAMS = 0;
const STATE = 64;
const DIGEST = STATE + 128;
const INPUT = STATE + 216;
const PAGE = 65536;

async function loadWasm(): Promise<Blake2bExports | undefined> {
  if (typeof WebAssembly !== "object") return undefined;
  try {
    const mod = (await import("blake2b-wasm/blake2b.js")) as { default: (imports?: object) => Promise<Blake2bExports> };
    const exports = await mod.default();
    const mem = new Uint8Array(exports.memory.buffer);
    mem.fill(0, PARAMS, STATE);
    mem[PARAMS] = 32; // digest length
    mem[PARAMS + 2] = 1; // fanout
    mem[PARAMS + 3] = 1; // depth
    return exports;
  } catch {
    return undefined;
  }
}

const kernel = await loadKernel();
const K_INPUT = kernel ? (kernel.INPUT.value as number) : 0;
const K_OUTPUT = kernel ? (kernel.OUTPUT.value as number) : 0;
let kernelMemory = kernel ? new Uint8Array(kernel.memory.buffer) : new Uint8Array(0);

const wasm = kernel ? undefined : await loadWasm();
let memory = wasm ? new Uint8Array(wasm.memory.buffer) : new Uint8Array(0);

/** Which implementation `blake2b256` runs on this platform. */
export const blake2bBackend: "wasm" | "js" = kernel || wasm ? "wasm" : "js";
/** The WebAssembly module behind the "wasm" backend: our kernel, or blake2b-wasm's as the fallback. */
export const blake2bImplementation: "kernel" | "blake2b-wasm" | "noble" = kernel ? "kernel" : wasm ? "blake2b-wasm" : "noble";

function ensureCapacity(w: Blake2bExports, end: number): Uint8Array {
  if (end > memory.length) {
    w.memory.grow(Math.ceil((end - memory.length) / PAGE));
    memory = new Uint8Array(w.memory.buffer);
  } else if (memory.buffer !== w.memory.buffer) {
    memory = new Uint8Array(w.memory.buffer);
  }
  return memory;
}

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
  if (!wasm) {
    warnFallback("blake2b", "WebAssembly is unavailable here, so BLAKE2b-256 runs in JavaScript (@noble/hashes), several times slower", loadError);
    return nobleBlake2b(bytes, { dkLen: 32 });
  }
  const mem = ensureCapacity(wasm, INPUT + bytes.length);
  wasm.blake2b_init(STATE, 32);
  mem.set(bytes, INPUT);
  wasm.blake2b_update(STATE, INPUT, INPUT + bytes.length);
  wasm.blake2b_final(STATE);
  return mem.slice(DIGEST, DIGEST + 32);
}

/** The pure-TypeScript implementation, exposed for tests and for comparing the backends. */
export function blake2b256Js(bytes: Uint8Array): Uint8Array {
  return nobleBlake2b(bytes, { dkLen: 32 });
}
