// The bounded reader and the exact-size writer under the binary codec (positions in a buffer; the generated codec's
// leaves.ts and the interpreter read and write through them), the slab the codec's outputs are carved from, and Fault.
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

  /**
   * The ProtocolError callers see; `base` is the path of the object the entry point was handed, `origin` where its
   * input starts in the bytes the offsets count in.
   */
  toProtocolError(base = "", origin = 0): ProtocolError {
    let path = base;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      path = typeof s === "number" ? `${path}[${s}]` : path === "" ? s : `${path}.${s}`;
    }
    return new ProtocolError(this.code, this.message, { path, offset: this.offset === undefined ? undefined : this.offset - origin });
  }
}

// A fresh ArrayBuffer per call costs more than the whole rest of encoding or decoding a small message, so small
// outputs and decoders' private input copies are carved out of a slab owned by this module (Node's Buffer pool policy,
// anything over half a slab gets its own buffer). Trade-off, as with Node's Buffer: such an array's `.buffer` is
// shared with other results, so respect byteOffset, and copy it before transferring its buffer; one result kept alive
// keeps its whole slab. Slabs are 32 KiB rather than Node's 8: a new ArrayBuffer costs about the same at either size
// (some 2 µs here), and at 8 KiB slab turnover was about a tenth of encoding a 500-byte transaction.
const SLAB_SIZE = 32768;
let slab = new ArrayBuffer(SLAB_SIZE);
/** The whole slab, for copying into it and for reading a private copy in place (Reader.readCopyOf). */
let slabBytes = new Uint8Array(slab);
let slabUsed = 0;

/** Where the next `n` bytes of the slab start (claimed now), in a fresh slab when they do not fit. */
function slabRoom(n: number): number {
  if (slabUsed + n > SLAB_SIZE) {
    slab = new ArrayBuffer(SLAB_SIZE);
    slabBytes = new Uint8Array(slab);
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed = (slabUsed + n + 7) & ~7;
  return at;
}

/** `n` bytes no other caller holds; zero-filled only when they come from a fresh buffer, so write every byte. */
export function allocate(n: number): Uint8Array {
  if (n > SLAB_SIZE >>> 1) return new Uint8Array(n);
  // A view constructed on the ArrayBuffer itself (no `.buffer` getter, no subarray()) is the cheapest handle.
  const at = slabRoom(n);
  return new Uint8Array(slab, at, n);
}

/** An 8-byte scratch area for u64 conversions without allocating a DataView per call. */
export const scratch = new Uint8Array(8);
export const scratchView = new DataView(scratch.buffer);

/**
 * The reader the codec reads through: always over a private copy of the input (readCopyOf), so the field views it
 * hands out (made on `buffer` directly, without subarray()'s overhead) alias nothing the caller holds.
 */
export class Reader {
  /** What is read; positions are indexes into it (the copy may sit inside the larger slab). */
  bytes = new Uint8Array(0);
  /** `bytes.buffer`, whose byte offsets are the positions (`bytes` starts at its offset 0). */
  buffer: ArrayBufferLike = this.bytes.buffer;
  pos = 0;
  /** Reads stop here: the end of the input, or of a length-prefixed payload while it is being read. */
  end = 0;
  /** Where the input starts in `bytes`: offsets in errors are counted from here. */
  origin = 0;

  /**
   * Reads a private copy of `bytes` from now on (one reader serves call after call). A small input is copied into the
   * slab and read there in place, from the copy's start to its end (no view of the copy is made); a large one is
   * copied into a buffer of its own.
   */
  readCopyOf(bytes: Uint8Array): void {
    const n = bytes.length;
    let at = 0;
    if (n > SLAB_SIZE >>> 1) this.bytes = new Uint8Array(bytes);
    else {
      at = slabRoom(n);
      slabBytes.set(bytes, at);
      this.bytes = slabBytes;
    }
    this.buffer = this.bytes.buffer;
    this.pos = this.origin = at;
    this.end = at + n;
  }
}

export class Writer {
  readonly bytes: Uint8Array;
  pos = 0;

  /** Writes into `bytes` from position 0: a fresh `allocate(size)` of the exact size, or a reused scratch area. */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
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
