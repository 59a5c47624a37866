// The codec operations of an engine, and the entry-point wrappers around them: decode (copy, read, no trailing bytes),
// encode (size, allocate once, write), validate (write into a scratch), JSON in and out. codec.ts and json.ts run the
// generated operations (codecs.generated.ts, written by `npm run build`); tests swap in the interpreter's to compare.
import { Fault, Reader, Writer, allocate } from "../bytes/cursor.js";
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";
import type { JsonRoot, ReadRoot, WriteRoot } from "./roots.js";
import { beginJson, type Obj } from "./runtime.js";
import type { Message, PartialMessage } from "./types.js";

/** What an engine makes of one node: `size` validates a model and measures it; `fromJson` applies every rule but order
 * and the array rules, which need the bytes (fromJsonWith runs them by validating). */
export type ReadFn = (r: Reader, parent?: Obj) => unknown;
export type SizeFn = (value: unknown, parent?: unknown) => number;
export type WriteFn = (w: Writer, value: unknown, parent?: unknown) => void;
export type FromJsonFn = (value: unknown, parent?: Obj) => unknown;
export type ToJsonFn = (value: unknown) => unknown;

/** An engine's codecs, one table per operation (roots.ts says for which objects). */
export interface CodecTables {
  readers: Record<ReadRoot, ReadFn>;
  sizers: Record<WriteRoot, SizeFn>;
  writers: Record<WriteRoot, WriteFn>;
  jsonReaders: Record<JsonRoot, FromJsonFn>;
  jsonWriters: Record<JsonRoot, ToJsonFn>;
}

// Every decode reads through this one reader (a decode never starts another).
const reader = new Reader();

/** Runs a reader over `bytes` (copied once; fields are views of the copy) and demands it ends there. */
export function decodeWith(read: ReadFn, bytes: unknown, path = ""): unknown {
  if (!(bytes instanceof Uint8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected a Uint8Array", { path });
  const r = reader;
  r.readCopyOf(bytes);
  try {
    const value = read(r, {});
    if (r.pos !== r.end) throw new Fault("TRAILING_BYTES", `${r.end - r.pos} bytes after the end`, r.pos);
    return value;
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path, r.origin);
    throw e;
  }
}

// Validation writes into this buffer instead of a new one: the sorted-order and array rules compare serialized
// slices, so a model is only fully checked once written, but nobody keeps those bytes. Anything larger than a whole
// message (only a payload validated on its own can be) gets a buffer of its own.
const scratchOutput = new Uint8Array(MAX_MESSAGE_LENGTH);

const scratchOf = (size: number): Uint8Array => (size <= scratchOutput.length ? scratchOutput : new Uint8Array(size));

/** Measures and validates a model, then writes it into `output(size)`; `maxSize` bounds the result. */
function writeWith(size: SizeFn, write: WriteFn, value: unknown, path: string, maxSize: number | undefined, output: (size: number) => Uint8Array): Uint8Array {
  try {
    const n = size(value, undefined);
    if (maxSize !== undefined && n > maxSize) throw new Fault("LENGTH_OUT_OF_RANGE", `encodes to ${n} bytes, more than ${maxSize}`, undefined);
    const w = new Writer(output(n));
    try {
      write(w, value, undefined);
    } catch (e) {
      if (e instanceof Fault) throw e;
      // The size pass validated every value, so the writer can only fail on a model whose getters answer differently now.
      throw new ProtocolError("INVALID_ARGUMENT", "the model changed while it was being encoded", { path, cause: e });
    }
    if (w.pos !== n) throw new ProtocolError("INVALID_ARGUMENT", "the model changed while it was being encoded", { path });
    return w.bytes;
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path);
    throw e;
  }
}

/** Validates and measures a model, allocates the output once and writes it; `maxSize` bounds the result. */
export function encodeWith(size: SizeFn, write: WriteFn, value: unknown, path = "", maxSize?: number): Uint8Array {
  return writeWith(size, write, value, path, maxSize, allocate);
}

/** Applies every rule `encodeWith` applies, without allocating or returning the bytes. */
export function validateWith(size: SizeFn, write: WriteFn, value: unknown, path = "", maxSize?: number): void {
  writeWith(size, write, value, path, maxSize, scratchOf);
}

/**
 * Reads node REST JSON found at `path`: every shape and field rule on the way (the error names the JSON path), then the
 * order and array rules by writing the model. Anything but our own refusal (a throwing getter, a Proxy trap) is
 * INVALID_JSON.
 */
export function fromJsonWith(fromJson: FromJsonFn, size: SizeFn, write: WriteFn, json: unknown, path = "", maxSize?: number): unknown {
  const value = readJson(fromJson, json, path);
  if (writtenWithin(write, value, maxSize ?? scratchOutput.length) < 0) validateWith(size, write, value, path, maxSize);
  return value;
}

/**
 * fromJsonWith that also returns the model's canonical bytes: those its own write pass produced, copied once, so JSON
 * becomes bytes without encoding the model a second time.
 */
export function fromJsonWithBytes(fromJson: FromJsonFn, size: SizeFn, write: WriteFn, json: unknown, path = "", maxSize?: number): { value: unknown; bytes: Uint8Array } {
  const value = readJson(fromJson, json, path);
  const bytes = writtenBytes(write, value, maxSize ?? scratchOutput.length);
  return { value, bytes: bytes ?? encodeWith(size, write, value, path, maxSize) };
}

/**
 * The canonical bytes of a model that a JSON reader built and checked field by field, from the write pass alone (the
 * order and array rules), copied once out of the scratch; undefined on any refusal or beyond `maxSize`.
 */
export function writtenBytes(write: WriteFn, value: unknown, maxSize: number): Uint8Array | undefined {
  const n = writtenWithin(write, value, maxSize);
  if (n < 0) return undefined;
  const bytes = allocate(n);
  bytes.set(scratchOutput.subarray(0, n));
  return bytes;
}

function readJson(fromJson: FromJsonFn, json: unknown, path: string): unknown {
  beginJson();
  try {
    return fromJson(json, {});
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path);
    throw new ProtocolError("INVALID_JSON", "the JSON value could not be read", { path, cause: e });
  }
}

/**
 * The write pass alone over a model a JSON reader built, into the scratch: the reader has checked every field a size
 * pass would, so only the order and array rules (which the writer runs) are left. The byte count written, or -1 on any
 * refusal and on a model that does not fit: the caller then validates in full, which gives the error a full validation
 * gives (a size refusal before an order one).
 */
function writtenWithin(write: WriteFn, value: unknown, limit: number): number {
  const w = new Writer(scratchOutput);
  try {
    write(w, value, undefined);
  } catch {
    return -1;
  }
  return w.pos <= limit && w.pos <= scratchOutput.length ? w.pos : -1;
}

/** The node REST JSON of a model (trusted: it came from a decoder or was built by the caller). */
export function toJsonWith(toJson: ToJsonFn, value: unknown): unknown {
  try {
    return toJson(value);
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError("");
    throw e;
  }
}

/** The partial message a whole one read with placeholders stands for (0 networkId and nonce, the zero parent when
 * `noParents`), and its bytes when they are final (network and parents given; the nonce slot is filled later). */
export function partialOf(whole: Message, bytes: Uint8Array, noParents: boolean): { partial: PartialMessage; bytes: Uint8Array | undefined } {
  const partial: PartialMessage = {};
  if (whole.networkId !== 0n) partial.networkId = whole.networkId;
  if (!noParents) partial.parents = whole.parents;
  if (whole.payload !== undefined) partial.payload = whole.payload;
  if (whole.nonce !== 0n) partial.nonce = whole.nonce;
  return { partial, bytes: whole.networkId !== 0n && !noParents ? bytes : undefined };
}
