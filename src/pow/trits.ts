// Balanced ternary for PoW: b1t6 (bytes ↔ trits, TIP-5) and the tryte alphabet used by the published vectors.
// Conversions allocate their result once; every malformed input raises ProtocolError.
import { ProtocolError, assertBytes, assertString } from "../bytes/errors.js";

/** Trits per byte in b1t6: two trytes of three trits. */
export const TRITS_PER_BYTE = 6;

/** 9 = 0, A..M = 1..13, N..Z = −13..−1. */
export const TRYTE_ALPHABET = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** Writes the 6 trits of byte `b` (read as int8) at `out[at..at+6]`. Shared by the encoder and the PoW input. */
export function byteToTrits(b: number, out: Int8Array, at: number): void {
  const v = ((b << 24) >> 24) + 364;
  writeTryte((v % 27) - 13, out, at);
  writeTryte(Math.floor(v / 27) - 13, out, at + 3);
}

/** A tryte value −13..13 as three balanced trits, least significant first. */
function writeTryte(value: number, out: Int8Array, at: number): void {
  let t = value;
  for (let j = 0; j < 3; j++) {
    const r = ((t % 3) + 3) % 3;
    const trit = r === 2 ? -1 : r;
    out[at + j] = trit;
    t = (t - trit) / 3;
  }
}

/** b1t6: each byte becomes 6 trits (values −1, 0, 1). */
export function b1t6Encode(bytes: Uint8Array): Int8Array {
  assertBytes(bytes, "bytes");
  const out = new Int8Array(bytes.length * TRITS_PER_BYTE);
  for (let i = 0; i < bytes.length; i++) byteToTrits(bytes[i]!, out, i * TRITS_PER_BYTE);
  return out;
}

/** The inverse of b1t6Encode; rejects trit counts not a multiple of 6, values outside −1..1 and trytes outside int8. */
export function b1t6Decode(trits: Int8Array | readonly number[]): Uint8Array {
  assertTritArray(trits);
  if (trits.length % TRITS_PER_BYTE !== 0) {
    throw new ProtocolError("LENGTH_OUT_OF_RANGE", `expected a multiple of ${TRITS_PER_BYTE} trits, got ${trits.length}`, { path: "trits" });
  }
  const out = new Uint8Array(trits.length / TRITS_PER_BYTE);
  for (let i = 0; i < out.length; i++) {
    const at = i * TRITS_PER_BYTE;
    const v = readTryte(trits, at) + 27 * readTryte(trits, at + 3);
    if (v < -128 || v > 127) throw new ProtocolError("VALUE_OUT_OF_RANGE", `trits ${at}..${at + 5} encode ${v}, outside a byte`, { path: `trits[${at}]` });
    out[i] = v & 0xff;
  }
  return out;
}

function readTryte(trits: ArrayLike<number>, at: number): number {
  let value = 0;
  for (let j = 2; j >= 0; j--) {
    const t = trits[at + j];
    if (t !== -1 && t !== 0 && t !== 1) throw new ProtocolError("VALUE_OUT_OF_RANGE", "a trit must be -1, 0 or 1", { path: `trits[${at + j}]` });
    value = value * 3 + t;
  }
  return value;
}

/** Trytes (alphabet 9A..Z) to trits, three per tryte, least significant first. */
export function trytesToTrits(trytes: string): Int8Array {
  assertString(trytes, "trytes");
  const out = new Int8Array(trytes.length * 3);
  for (let i = 0; i < trytes.length; i++) {
    const index = TRYTE_ALPHABET.indexOf(trytes[i]!);
    if (index < 0) throw new ProtocolError("INVALID_ARGUMENT", "not a tryte (9, A..Z)", { path: `trytes[${i}]` });
    writeTryte(index > 13 ? index - 27 : index, out, i * 3);
  }
  return out;
}

function assertTritArray(trits: unknown): asserts trits is Int8Array | readonly number[] {
  if (!(trits instanceof Int8Array) && !Array.isArray(trits)) throw new ProtocolError("INVALID_ARGUMENT", "expected an Int8Array of trits", { path: "trits" });
}

/** Trits (a multiple of 3) to trytes. */
export function tritsToTrytes(trits: Int8Array | readonly number[]): string {
  assertTritArray(trits);
  if (trits.length % 3 !== 0) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `expected a multiple of 3 trits, got ${trits.length}`, { path: "trits" });
  let out = "";
  for (let i = 0; i < trits.length; i += 3) {
    const v = readTryte(trits, i);
    out += TRYTE_ALPHABET[v < 0 ? v + 27 : v];
  }
  return out;
}
