// BLAKE2b-256 (a 32-byte digest parameter, not truncated BLAKE2b-512): message ids, addresses, PoW digests.
// Drives blake2b-wasm's compiled module directly (one fixed state, no per-call objects); @noble/hashes where WebAssembly is missing.
import { blake2b as nobleBlake2b } from "@noble/hashes/blake2.js";
import { ProtocolError } from "../bytes/errors.js";

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

const wasm = await loadWasm();
let memory = wasm ? new Uint8Array(wasm.memory.buffer) : new Uint8Array(0);

/** Which implementation `blake2b256` runs on this platform. */
export const blake2bBackend: "wasm" | "js" = wasm ? "wasm" : "js";

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
  if (!wasm) return nobleBlake2b(bytes, { dkLen: 32 });
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
