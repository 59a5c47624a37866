// The codec of every object of objects.ts, and the entry-point wrappers around one: decode (copy, read, no trailing
// bytes), encode (size, allocate once, write), validate (write into a scratch), JSON in and out. The codecs are the
// generated ones (codecs.generated.ts, written by `npm run build`); tests swap in the interpreter to compare them.
import { Fault, Reader, Writer, allocate, privateCopy } from "../bytes/cursor.js";
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";
import { codecs as generated } from "./codecs.generated.js";
import type * as objects from "./objects.js";
import { beginJson, type Obj } from "./runtime.js";

/** What an engine makes of one node. `size` validates a model and measures it; `fromJson` applies every rule but order and the array rules, which need the bytes. */
export interface Codec {
  size(value: unknown, parent: unknown): number;
  write(w: Writer, value: unknown, parent: unknown): void;
  read(r: Reader, parent: Obj): unknown;
  fromJson(value: unknown, parent: Obj): unknown;
  toJson(value: unknown): unknown;
}

/** One codec per object declared in objects.ts. */
export type Codecs = { readonly [K in keyof typeof objects]: Codec };

/** The codecs in use: the generated ones, unless a test installed the interpreter's (see interpreter.ts). */
export const engine: { codecs: Codecs } = { codecs: generated };

/** Runs a reader over `bytes` (copied once; fields are views of the copy) and demands it ends there. */
export function decodeWith(codec: Codec, bytes: unknown, path = ""): unknown {
  if (!(bytes instanceof Uint8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected a Uint8Array", { path });
  const r = new Reader(privateCopy(bytes));
  try {
    const value = codec.read(r, {});
    if (r.pos !== r.end) throw new Fault("TRAILING_BYTES", `${r.end - r.pos} bytes after the end`, r.pos);
    return value;
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path);
    throw e;
  }
}

// Validation writes into this buffer instead of a new one: the sorted-order and array rules compare serialized
// slices, so a model is only fully checked once written, but nobody keeps those bytes. Anything larger than a whole
// message (only a payload validated on its own can be) gets a buffer of its own.
const scratchOutput = new Uint8Array(MAX_MESSAGE_LENGTH);

const scratchOf = (size: number): Uint8Array => (size <= scratchOutput.length ? scratchOutput : new Uint8Array(size));

/** Measures and validates a model, then writes it into `output(size)`; `maxSize` bounds the result. */
function writeWith(codec: Codec, value: unknown, path: string, maxSize: number | undefined, output: (size: number) => Uint8Array): Uint8Array {
  try {
    const size = codec.size(value, undefined);
    if (maxSize !== undefined && size > maxSize) throw new Fault("LENGTH_OUT_OF_RANGE", `encodes to ${size} bytes, more than ${maxSize}`, undefined);
    const w = new Writer(output(size));
    try {
      codec.write(w, value, undefined);
    } catch (e) {
      if (e instanceof Fault) throw e;
      // The size pass validated every value, so the writer can only fail on a model whose getters answer differently now.
      throw new ProtocolError("INVALID_ARGUMENT", "the model changed while it was being encoded", { path, cause: e });
    }
    if (w.pos !== size) throw new ProtocolError("INVALID_ARGUMENT", "the model changed while it was being encoded", { path });
    return w.bytes;
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path);
    throw e;
  }
}

/** Validates and measures a model, allocates the output once and writes it; `maxSize` bounds the result. */
export function encodeWith(codec: Codec, value: unknown, path = "", maxSize?: number): Uint8Array {
  return writeWith(codec, value, path, maxSize, allocate);
}

/** Applies every rule `encodeWith` applies, without allocating or returning the bytes. */
export function validateWith(codec: Codec, value: unknown, path = "", maxSize?: number): void {
  writeWith(codec, value, path, maxSize, scratchOf);
}

/**
 * Reads node REST JSON found at `path`: every shape and field rule on the way (the error names the JSON path), then the
 * order and array rules by validating the model. Anything but our own refusal (a throwing getter, a Proxy trap) is
 * INVALID_JSON.
 */
export function fromJsonWith(codec: Codec, json: unknown, path = "", maxSize?: number): unknown {
  beginJson();
  let value: unknown;
  try {
    value = codec.fromJson(json, {});
  } catch (e) {
    if (e instanceof Fault) throw e.toProtocolError(path);
    throw new ProtocolError("INVALID_JSON", "the JSON value could not be read", { path, cause: e });
  }
  validateWith(codec, value, path, maxSize);
  return value;
}

/** The node REST JSON of a model (trusted: it came from a decoder or was built by the caller). */
export function toJsonWith(codec: Codec, value: unknown): unknown {
  return codec.toJson(value);
}
