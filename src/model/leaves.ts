// The leaf fields of the generated codec (codecs.generated.ts): one reader, sizer and writer per kind of field,
// called with the schema's constants so that the engine inlines and specializes them. Integers are assembled from
// bytes directly (no DataView call); every read checks the bytes left first. The interpreter has its own.
import { Fault, type Reader, type Writer, scratch, scratchView } from "../bytes/cursor.js";
import { MAX_U64 } from "../bytes/limits.js";

export const truncated = (at: number, n: number, left: number): Fault => new Fault("TRUNCATED", `needs ${n} bytes, ${left} left`, at);
export const invalid = (message: string): Fault => new Fault("INVALID_ARGUMENT", message, undefined);
// The refusals are built out of line: the readers stay small enough for the engine to inline many of them per object.
const rangeFault = (min: number, max: number, v: unknown, at: number | undefined): Fault => new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${String(v)}`, at);
const tagMismatch = (value: number, got: unknown, at: number | undefined): Fault => new Fault("INVALID_TYPE", `expected type ${value}, got ${String(got)}`, at);

/** INVALID_TYPE for a type tag that none of a union's variants carries (at `type`). */
export function typeFault(t: unknown, allowed: string, at: number | undefined): Fault {
  const fault = new Fault("INVALID_TYPE", `type ${typeof t === "number" ? t : typeof t} not allowed here (allowed: ${allowed})`, at);
  fault.segments.push("type");
  return fault;
}

// Integer and tag fields come in one function per width: a width argument would leave a branch in the hot path
// wherever the engine does not inline the call.

export function readU8(r: Reader, min: number, max: number): number {
  const p = r.pos;
  if (r.end - p < 1) throw truncated(p, 1, r.end - p);
  const v = r.bytes[p]!;
  r.pos = p + 1;
  if (v < min || v > max) throw rangeFault(min, max, v, p);
  return v;
}

export function readU16(r: Reader, min: number, max: number): number {
  const p = r.pos;
  if (r.end - p < 2) throw truncated(p, 2, r.end - p);
  const b = r.bytes;
  const v = b[p]! | (b[p + 1]! << 8);
  r.pos = p + 2;
  if (v < min || v > max) throw rangeFault(min, max, v, p);
  return v;
}

export function readU32(r: Reader, min: number, max: number): number {
  const p = r.pos;
  if (r.end - p < 4) throw truncated(p, 4, r.end - p);
  const b = r.bytes;
  const v = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  r.pos = p + 4;
  if (v < min || v > max) throw rangeFault(min, max, v, p);
  return v;
}

export function sizeUint(v: unknown, width: 1 | 2 | 4, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalid("expected an integer");
  if (v < min || v > max) throw rangeFault(min, max, v, undefined);
  return width;
}

export function writeU8(w: Writer, v: unknown): void {
  w.bytes[w.pos++] = v as number;
}

export function writeU16(w: Writer, v: unknown): void {
  const b = w.bytes;
  const p = w.pos;
  const x = v as number;
  b[p] = x & 255;
  b[p + 1] = x >>> 8;
  w.pos = p + 2;
}

export function writeU32(w: Writer, v: unknown): void {
  const b = w.bytes;
  const p = w.pos;
  const x = v as number;
  b[p] = x & 255;
  b[p + 1] = (x >>> 8) & 255;
  b[p + 2] = (x >>> 16) & 255;
  b[p + 3] = x >>> 24;
  w.pos = p + 4;
}

// The two u64 last read, most recent first: every message of a network carries the same networkId (a bigint is
// immutable, so handing the same one out again is safe), and the nonce between two of them must not evict it.
let recentLo = -1;
let recentHi = -1;
let recent = 0n;
let olderLo = -1;
let olderHi = -1;
let older = 0n;

export function readU64(r: Reader): bigint {
  const p = r.pos;
  if (r.end - p < 8) throw truncated(p, 8, r.end - p);
  const b = r.bytes;
  r.pos = p + 8;
  const lo = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  const hi = (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24)) >>> 0;
  if (lo === recentLo && hi === recentHi) return recent;
  const hit = lo === olderLo && hi === olderHi;
  olderLo = recentLo;
  olderHi = recentHi;
  const value = hit ? older : u64Of(lo, hi);
  older = recent;
  recentLo = lo;
  recentHi = hi;
  return (recent = value);
}

function u64Of(lo: number, hi: number): bigint {
  scratchView.setUint32(0, lo, true);
  scratchView.setUint32(4, hi, true);
  return scratchView.getBigUint64(0, true);
}

export function sizeU64(v: unknown): number {
  if (typeof v !== "bigint") throw invalid("expected a bigint");
  if (v < 0n || v > MAX_U64) throw new Fault("VALUE_OUT_OF_RANGE", "expected a u64", undefined);
  return 8;
}

export function writeU64(w: Writer, v: unknown): void {
  const b = w.bytes;
  const p = w.pos;
  scratchView.setBigUint64(0, v as bigint, true);
  b[p] = scratch[0]!;
  b[p + 1] = scratch[1]!;
  b[p + 2] = scratch[2]!;
  b[p + 3] = scratch[3]!;
  b[p + 4] = scratch[4]!;
  b[p + 5] = scratch[5]!;
  b[p + 6] = scratch[6]!;
  b[p + 7] = scratch[7]!;
  w.pos = p + 8;
}

/** A u64 amount as a number; above 2^53 it comes back as Infinity, so the range check refuses it. */
export function readAmount(r: Reader, min: number, max: number): number {
  const p = r.pos;
  if (r.end - p < 8) throw truncated(p, 8, r.end - p);
  const b = r.bytes;
  const lo = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  const hi = (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24)) >>> 0;
  r.pos = p + 8;
  const v = hi < 0x200000 ? hi * 4294967296 + lo : Infinity;
  if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}`, p);
  return v;
}

export function sizeAmount(v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw invalid("expected a safe integer");
  if (v < min || v > max) throw rangeFault(min, max, v, undefined);
  return 8;
}

export function writeAmount(w: Writer, v: unknown): void {
  const b = w.bytes;
  const p = w.pos;
  const x = v as number;
  const hi = Math.floor(x / 4294967296);
  const lo = x - hi * 4294967296;
  b[p] = lo & 255;
  b[p + 1] = (lo >>> 8) & 255;
  b[p + 2] = (lo >>> 16) & 255;
  b[p + 3] = lo >>> 24;
  b[p + 4] = hi & 255;
  b[p + 5] = (hi >>> 8) & 255;
  b[p + 6] = (hi >>> 16) & 255;
  b[p + 7] = hi >>> 24;
  w.pos = p + 8;
}

export function readBool(r: Reader): boolean {
  const p = r.pos;
  if (r.end - p < 1) throw truncated(p, 1, r.end - p);
  const v = r.bytes[p]!;
  r.pos = p + 1;
  if (v > 1) throw new Fault("VALUE_OUT_OF_RANGE", `a boolean is 0 or 1, got ${v}`, p);
  return v === 1;
}

export function sizeBool(v: unknown): number {
  if (typeof v !== "boolean") throw invalid("expected a boolean");
  return 1;
}

export function writeBool(w: Writer, v: unknown): void {
  w.bytes[w.pos++] = v === true ? 1 : 0;
}

export function readTag8(r: Reader, value: number): number {
  const p = r.pos;
  if (r.end - p < 1) throw truncated(p, 1, r.end - p);
  const v = r.bytes[p]!;
  r.pos = p + 1;
  if (v !== value) throw tagMismatch(value, v, p);
  return value;
}

export function readTag32(r: Reader, value: number): number {
  const p = r.pos;
  const v = readU32(r, 0, 0xffffffff);
  if (v !== value) throw tagMismatch(value, v, p);
  return value;
}

export function sizeTag(v: unknown, width: 1 | 4, value: number): number {
  if (v !== value) throw tagMismatch(value, typeof v === "number" ? v : typeof v, undefined);
  return width;
}

/** `length` bytes as a view of the (private) input: no copy. */
export function readBytes(r: Reader, length: number): Uint8Array {
  const p = r.pos;
  if (r.end - p < length) throw truncated(p, length, r.end - p);
  r.pos = p + length;
  return new Uint8Array(r.buffer, p, length);
}

export function sizeBytes(v: unknown, length: number): number {
  if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
  if (v.length !== length) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${length} bytes, got ${v.length}`, undefined);
  return length;
}

export function writeBytes(w: Writer, v: unknown): void {
  const x = v as Uint8Array;
  w.bytes.set(x, w.pos);
  w.pos += x.length;
}

export function readVarBytes(r: Reader, prefix: 2 | 4, min: number, max: number): Uint8Array {
  let p = r.pos;
  if (r.end - p < prefix) throw truncated(p, prefix, r.end - p);
  const b = r.bytes;
  const len = prefix === 2 ? b[p]! | (b[p + 1]! << 8) : (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  if (len < min || len > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${len}`, p);
  p += prefix;
  r.pos = p;
  if (r.end - p < len) throw truncated(p, len, r.end - p);
  r.pos = p + len;
  return new Uint8Array(r.buffer, p, len);
}

export function sizeVarBytes(v: unknown, prefix: 2 | 4, min: number, max: number): number {
  if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
  if (v.length < min || v.length > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${v.length}`, undefined);
  return prefix + v.length;
}

export function writeVarBytes(w: Writer, v: unknown, prefix: 2 | 4): void {
  const x = v as Uint8Array;
  if (prefix === 2) writeU16(w, x.length);
  else writeU32(w, x.length);
  w.bytes.set(x, w.pos);
  w.pos += x.length;
}
