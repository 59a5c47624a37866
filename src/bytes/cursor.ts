// The bounded reader and the exact-size writer under the binary codec: little-endian, u64 as bigint.
// The reader checks every length against what remains before it hands out (or allocates) anything.
import { type ErrorCode, ProtocolError } from "./errors.js";

/**
 * A rejection raised deep inside the codec before the field path is known: each enclosing layout level adds its
 * segment on the way out and the entry point turns it into a ProtocolError. Not exported from the package.
 */
export class Fault extends Error {
  readonly code: ErrorCode;
  readonly offset: number | undefined;
  /** Path segments, innermost first: field names and array positions. */
  readonly segments: (string | number)[] = [];

  constructor(code: ErrorCode, message: string, offset: number | undefined) {
    super(message);
    this.code = code;
    this.offset = offset;
  }

  /** The ProtocolError callers see; `base` is the path of the object the entry point was handed. */
  toProtocolError(base = ""): ProtocolError {
    let path = base;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      path = typeof s === "number" ? `${path}[${s}]` : path === "" ? s : `${path}.${s}`;
    }
    return new ProtocolError(this.code, this.message, { path, offset: this.offset });
  }
}

const TWO_32 = 0x1_0000_0000;

// A fresh ArrayBuffer per call costs more than the whole rest of encoding or decoding a small message, so small
// outputs and decoders' private input copies are carved out of a slab owned by this module (Node's Buffer pool policy,
// anything over half a slab gets its own buffer). Trade-off, as with Node's Buffer: such an array's `.buffer` is
// shared with other results, so respect byteOffset, and copy it before transferring its buffer; one result kept alive
// keeps its whole slab. Slabs are 32 KiB rather than Node's 8: a new ArrayBuffer costs about the same at either size
// (some 2 µs here), and at 8 KiB slab turnover was about a tenth of encoding a 500-byte transaction.
const SLAB_SIZE = 32768;
let slab = new ArrayBuffer(SLAB_SIZE);
let slabUsed = 0;

/** `n` bytes no other caller holds; zero-filled only when they come from a fresh buffer, so write every byte. */
export function allocate(n: number): Uint8Array {
  if (n > SLAB_SIZE >>> 1) return new Uint8Array(n);
  if (slabUsed + n > SLAB_SIZE) {
    slab = new ArrayBuffer(SLAB_SIZE);
    slabUsed = 0;
  }
  // A view constructed on the ArrayBuffer itself (no `.buffer` getter, no subarray()) is the cheapest handle.
  const out = new Uint8Array(slab, slabUsed, n);
  slabUsed = (slabUsed + n + 7) & ~7;
  return out;
}

/** A private copy of `bytes`: nothing the caller holds aliases it. */
export function privateCopy(bytes: Uint8Array): Uint8Array {
  const copy = allocate(bytes.length);
  copy.set(bytes);
  return copy;
}

/** An 8-byte scratch area for u64 conversions without allocating a DataView per call. */
export const scratch = new Uint8Array(8);
export const scratchView = new DataView(scratch.buffer);

export class Reader {
  readonly bytes: Uint8Array;
  /** `bytes.buffer` and `bytes.byteOffset`, for making field views without subarray()'s overhead. */
  readonly buffer: ArrayBufferLike;
  readonly base: number;
  private dataView: DataView | undefined;
  pos = 0;
  /** Reads stop here: the end of the input, or of a length-prefixed payload while it is being read. */
  end: number;

  /** Takes the bytes as they are; the caller decides whether they are a private copy. */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.buffer = bytes.buffer;
    this.base = bytes.byteOffset;
    this.end = bytes.length;
  }

  /** Made on first use: the generated codec assembles integers itself and never needs one. */
  get view(): DataView {
    return (this.dataView ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Fails with TRUNCATED unless `n` more bytes remain. */
  need(n: number): void {
    if (n > this.end - this.pos) throw new Fault("TRUNCATED", `needs ${n} bytes, ${this.end - this.pos} left`, this.pos);
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /**
   * A u64 as a number: exact up to 2^53; anything larger comes back as Infinity so a range check rejects it
   * (every u64 amount of the protocol is bounded by the total supply, below 2^53).
   */
  u64Number(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    return hi < 0x20_0000 ? hi * TWO_32 + lo : Infinity;
  }

  /** A view of the next `n` bytes (no copy). */
  take(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

export class Writer {
  readonly bytes: Uint8Array;
  private dataView: DataView | undefined;
  pos = 0;

  /** Writes into `bytes` from position 0: a fresh `allocate(size)` of the exact size, or a reused scratch area. */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  get view(): DataView {
    return (this.dataView ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  u8(v: number): void {
    this.bytes[this.pos++] = v;
  }

  u16(v: number): void {
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }

  u32(v: number): void {
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  u64(v: bigint): void {
    this.view.setBigUint64(this.pos, v, true);
    this.pos += 8;
  }

  /** A u64 from a number already checked to be a non-negative safe integer. */
  u64Number(v: number): void {
    const hi = Math.floor(v / TWO_32);
    this.view.setUint32(this.pos, v - hi * TWO_32, true);
    this.view.setUint32(this.pos + 4, hi, true);
    this.pos += 8;
  }

  put(b: Uint8Array): void {
    this.bytes.set(b, this.pos);
    this.pos += b.length;
  }
}

/** Unsigned byte-wise order of two slices of one buffer, without copying either: negative when a < b. */
export function compareSlices(bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const aLen = aEnd - aStart;
  const bLen = bEnd - bStart;
  const n = aLen < bLen ? aLen : bLen;
  for (let i = 0; i < n; i++) {
    const d = bytes[aStart + i]! - bytes[bStart + i]!;
    if (d !== 0) return d;
  }
  return aLen - bLen;
}
