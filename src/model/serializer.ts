// The layout engine (after hive.go's serializer): a declarative description of an object's wire layout, compiled
// once into a sizer, a writer and a reader, so encoding, decoding and the syntactic checks can never drift apart.
import { Fault, Reader, Writer, allocate, compareSlices, privateCopy } from "../bytes/cursor.js";
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MAX_U16, MAX_U32, MAX_U64, MAX_U8 } from "../bytes/limits.js";

/** What an array rule sees: the elements, and where each one's serialized form sits in the buffer. */
export interface ArrayView {
  /** The buffer being decoded or the output being encoded. */
  readonly bytes: Uint8Array;
  start(index: number): number;
  end(index: number): number;
  /** Rejects element `index` (its `field`, `within` bytes into the element, when given). */
  fail(code: string, message: string, index: number, field?: string, within?: number): never;
}

/** A rule over a whole array, run after its elements were read or written (and sorted order checked). */
export type ArrayRule = (items: readonly never[], view: ArrayView) => void;

export type Layout =
  | { readonly kind: "uint"; readonly width: 1 | 2 | 4; readonly min: number; readonly max: number }
  | { readonly kind: "u64" }
  | { readonly kind: "amount"; readonly min: number; readonly max: number }
  | { readonly kind: "bool" }
  | { readonly kind: "tag"; readonly width: 1 | 4; readonly value: number }
  | { readonly kind: "bytes"; readonly length: number }
  | { readonly kind: "varBytes"; readonly prefix: 2 | 4; readonly min: number; readonly max: number }
  | ArrayLayout
  | StructLayout
  | UnionLayout
  | PayloadLayout;

export interface ArrayLayout {
  readonly kind: "array";
  readonly prefix: 1 | 2;
  readonly min: number;
  readonly max: number;
  readonly of: Layout;
  /** "strict": ascending and unique; "ascending": equal neighbours allowed (another rule decides about them). */
  readonly order?: "strict" | "ascending" | undefined;
  /** The exact count the enclosing object demands (one unlock block per input, one signature per key). */
  readonly countFrom?: ((parent: never) => number) | undefined;
  readonly countRule?: string | undefined;
  readonly rule?: ArrayRule | undefined;
}

export interface Field {
  /** The model's property. */
  readonly key: string;
  /** The name in paths (the node API's JSON field name). */
  readonly json: string;
  readonly layout: Layout;
}

export interface StructLayout {
  readonly kind: "struct";
  readonly name: string;
  readonly fields: readonly Field[];
}

export interface UnionLayout {
  readonly kind: "union";
  readonly width: 1 | 4;
  /** Each variant's first field is its type tag. */
  readonly variants: readonly StructLayout[];
}

/** A u32 length prefix, then an object of one of the allowed types; length 0 means absent. */
export interface PayloadLayout {
  readonly kind: "payload";
  readonly of: UnionLayout;
  readonly optional: boolean;
}

// Builders, so a layout reads like the table in PROTOCOL.md §2.
/** The largest value of a 1-, 2- or 4-byte unsigned integer. */
export const maxOfWidth = (width: 1 | 2 | 4): number => (width === 1 ? MAX_U8 : width === 2 ? MAX_U16 : MAX_U32);
export const uint = (width: 1 | 2 | 4, min = 0, max = maxOfWidth(width)): Layout => ({ kind: "uint", width, min, max });
export const u64: Layout = { kind: "u64" };
export const amount = (min: number, max: number): Layout => ({ kind: "amount", min, max });
export const bool: Layout = { kind: "bool" };
export const tag = (width: 1 | 4, value: number): Layout => ({ kind: "tag", width, value });
export const bytes = (length: number): Layout => ({ kind: "bytes", length });
export const varBytes = (prefix: 2 | 4, min: number, max: number): Layout => ({ kind: "varBytes", prefix, min, max });
export const array = (spec: Omit<ArrayLayout, "kind">): ArrayLayout => ({ kind: "array", ...spec });
export const struct = (name: string, fields: readonly (readonly [key: string, layout: Layout, json?: string])[]): StructLayout => ({
  kind: "struct",
  name,
  fields: fields.map(([key, layout, json]) => ({ key, json: json ?? key, layout })),
});
export const union = (width: 1 | 4, variants: readonly StructLayout[]): UnionLayout => ({ kind: "union", width, variants });
export const payload = (of: UnionLayout, optional: boolean): PayloadLayout => ({ kind: "payload", of, optional });

/** The compiled form: `size` validates a model and measures it, `write` emits it, `read` parses and validates. */
export interface Codec {
  size(value: unknown, parent: unknown): number;
  write(w: Writer, value: unknown, parent: unknown): void;
  read(r: Reader, parent: Record<string, unknown>): unknown;
}

type Obj = Record<string, unknown>;

function invalid(message: string): Fault {
  return new Fault("INVALID_ARGUMENT", message, undefined);
}

const interpreted = new WeakMap<object, Codec>();

/** The closure interpreter of a layout (the engine where code generation is unavailable); memoized per layout object. */
export function interpret(layout: Layout): Codec {
  const known = interpreted.get(layout);
  if (known !== undefined) return known;
  const codec = build(layout);
  interpreted.set(layout, codec);
  return codec;
}

function build(layout: Layout): Codec {
  switch (layout.kind) {
    case "uint":
      return uintCodec(layout.width, layout.min, layout.max);
    case "u64":
      return u64Codec;
    case "amount":
      return amountCodec(layout.min, layout.max);
    case "bool":
      return boolCodec;
    case "tag":
      return tagCodec(layout.width, layout.value);
    case "bytes":
      return bytesCodec(layout.length);
    case "varBytes":
      return varBytesCodec(layout.prefix, layout.min, layout.max);
    case "array":
      return arrayCodec(layout);
    case "struct":
      return structCodec(layout);
    case "union":
      return unionCodec(layout);
    case "payload":
      return payloadCodec(layout);
  }
}

function uintCodec(width: 1 | 2 | 4, min: number, max: number): Codec {
  return {
    size(v) {
      if (typeof v !== "number" || !Number.isInteger(v)) throw invalid("expected an integer");
      if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${v}`, undefined);
      return width;
    },
    write(w, v) {
      if (width === 1) w.u8(v as number);
      else if (width === 2) w.u16(v as number);
      else w.u32(v as number);
    },
    read(r) {
      const at = r.pos;
      const v = width === 1 ? r.u8() : width === 2 ? r.u16() : r.u32();
      if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${v}`, at);
      return v;
    },
  };
}

const u64Codec: Codec = {
  size(v) {
    if (typeof v !== "bigint") throw invalid("expected a bigint");
    if (v < 0n || v > MAX_U64) throw new Fault("VALUE_OUT_OF_RANGE", "expected a u64", undefined);
    return 8;
  },
  write(w, v) {
    w.u64(v as bigint);
  },
  read(r) {
    return r.u64();
  },
};

function amountCodec(min: number, max: number): Codec {
  return {
    size(v) {
      if (typeof v !== "number" || !Number.isSafeInteger(v)) throw invalid("expected a safe integer");
      if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${v}`, undefined);
      return 8;
    },
    write(w, v) {
      w.u64Number(v as number);
    },
    read(r) {
      const at = r.pos;
      const v = r.u64Number();
      if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}`, at);
      return v;
    },
  };
}

const boolCodec: Codec = {
  size(v) {
    if (typeof v !== "boolean") throw invalid("expected a boolean");
    return 1;
  },
  write(w, v) {
    w.u8(v === true ? 1 : 0);
  },
  read(r) {
    const at = r.pos;
    const v = r.u8();
    if (v > 1) throw new Fault("VALUE_OUT_OF_RANGE", `a boolean is 0 or 1, got ${v}`, at);
    return v === 1;
  },
};

function tagCodec(width: 1 | 4, value: number): Codec {
  return {
    size(v) {
      if (v !== value) throw new Fault("INVALID_TYPE", `expected type ${value}, got ${typeof v === "number" ? v : typeof v}`, undefined);
      return width;
    },
    write(w) {
      if (width === 1) w.u8(value);
      else w.u32(value);
    },
    read(r) {
      const at = r.pos;
      const v = width === 1 ? r.u8() : r.u32();
      if (v !== value) throw new Fault("INVALID_TYPE", `expected type ${value}, got ${v}`, at);
      return value;
    },
  };
}

function bytesCodec(length: number): Codec {
  return {
    size(v) {
      if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
      if (v.length !== length) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${length} bytes, got ${v.length}`, undefined);
      return length;
    },
    write(w, v) {
      w.put(v as Uint8Array);
    },
    read(r) {
      return r.take(length);
    },
  };
}

function varBytesCodec(prefix: 2 | 4, min: number, max: number): Codec {
  return {
    size(v) {
      if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
      if (v.length < min || v.length > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${v.length}`, undefined);
      return prefix + v.length;
    },
    write(w, v) {
      const b = v as Uint8Array;
      if (prefix === 2) w.u16(b.length);
      else w.u32(b.length);
      w.put(b);
    },
    read(r) {
      const at = r.pos;
      const n = prefix === 2 ? r.u16() : r.u32();
      if (n < min || n > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${n}`, at);
      return r.take(n);
    },
  };
}

/** Reusable per compiled array: the element boundaries of the array being processed (arrays never nest in themselves). */
export class Bounds implements ArrayView {
  bytes: Uint8Array = new Uint8Array(0);
  decoding = false;
  readonly starts: Int32Array;

  constructor(max: number) {
    this.starts = new Int32Array(max + 1);
  }

  start(index: number): number {
    return this.starts[index]!;
  }

  end(index: number): number {
    return this.starts[index + 1]!;
  }

  fail(code: string, message: string, index: number, field?: string, within = 0): never {
    const fault = new Fault(code, message, this.decoding ? this.starts[index]! + within : undefined);
    if (field !== undefined) fault.segments.push(field);
    fault.segments.push(index);
    throw fault;
  }
}

/** Sorted order over the serialized slices of the elements (nothing is re-serialized); `strict` also forbids equal neighbours. */
export function checkOrder(bounds: Bounds, count: number, strict: boolean): void {
  const s = bounds.starts;
  const b = bounds.bytes;
  for (let i = 1; i < count; i++) {
    const c = compareSlices(b, s[i - 1]!, s[i]!, s[i]!, s[i + 1]!);
    if (c > 0) bounds.fail("NOT_SORTED", "elements must be in ascending byte order", i);
    if (c === 0 && strict) bounds.fail("DUPLICATE", "element appears twice", i);
  }
}

function arrayCodec(layout: ArrayLayout): Codec {
  const of = interpret(layout.of);
  const { prefix, min, max, order, rule } = layout;
  const countFrom = layout.countFrom as ((parent: unknown) => number) | undefined;
  const bounds = new Bounds(max);

  function checkCount(n: number, parent: unknown, at: number | undefined): void {
    if (n < min || n > max) throw new Fault("COUNT_OUT_OF_RANGE", `expected ${min} .. ${max} elements, got ${n}`, at);
    if (countFrom !== undefined) {
      const expected = countFrom(parent);
      if (n !== expected) throw new Fault("COUNT_OUT_OF_RANGE", `expected exactly ${expected} elements (${layout.countRule ?? "one each"}), got ${n}`, at);
    }
  }

  function checkOrderAndRule(items: unknown[]): void {
    if (order !== undefined) checkOrder(bounds, items.length, order === "strict");
    if (rule !== undefined) rule(items as never[], bounds);
  }

  return {
    size(v, parent) {
      if (!Array.isArray(v)) throw invalid("expected an array");
      checkCount(v.length, parent, undefined);
      let total = prefix;
      let i = 0;
      try {
        for (; i < v.length; i++) total += of.size(v[i], v);
      } catch (e) {
        if (e instanceof Fault) e.segments.push(i);
        throw e;
      }
      return total;
    },
    write(w, v, parent) {
      const items = v as unknown[];
      if (prefix === 1) w.u8(items.length);
      else w.u16(items.length);
      const s = bounds.starts;
      for (let i = 0; i < items.length; i++) {
        s[i] = w.pos;
        of.write(w, items[i], items);
      }
      s[items.length] = w.pos;
      bounds.bytes = w.bytes;
      bounds.decoding = false;
      checkOrderAndRule(items);
      void parent;
    },
    read(r, parent) {
      const at = r.pos;
      const n = prefix === 1 ? r.u8() : r.u16();
      checkCount(n, parent, at);
      const items: unknown[] = [];
      const s = bounds.starts;
      let i = 0;
      try {
        for (; i < n; i++) {
          s[i] = r.pos;
          items.push(of.read(r, parent));
        }
      } catch (e) {
        if (e instanceof Fault) e.segments.push(i);
        throw e;
      }
      s[n] = r.pos;
      bounds.bytes = r.bytes;
      bounds.decoding = true;
      checkOrderAndRule(items);
      return items;
    },
  };
}

function structCodec(layout: StructLayout): Codec {
  const n = layout.fields.length;
  const keys = layout.fields.map((f) => f.key);
  const names = layout.fields.map((f) => f.json);
  const codecs = layout.fields.map((f) => interpret(f.layout));
  return {
    size(v) {
      if (typeof v !== "object" || v === null) throw invalid(`expected ${layout.name} to be an object`);
      const o = v as Obj;
      let total = 0;
      let i = 0;
      try {
        for (; i < n; i++) total += codecs[i]!.size(o[keys[i]!], o);
      } catch (e) {
        if (e instanceof Fault) e.segments.push(names[i]!);
        throw e;
      }
      return total;
    },
    write(w, v) {
      const o = v as Obj;
      let i = 0;
      try {
        for (; i < n; i++) codecs[i]!.write(w, o[keys[i]!], o);
      } catch (e) {
        if (e instanceof Fault) e.segments.push(names[i]!);
        throw e;
      }
    },
    read(r) {
      const o: Obj = {};
      let i = 0;
      try {
        for (; i < n; i++) {
          const value = codecs[i]!.read(r, o);
          if (value !== undefined) o[keys[i]!] = value;
        }
      } catch (e) {
        if (e instanceof Fault) e.segments.push(names[i]!);
        throw e;
      }
      return o;
    },
  };
}

export function variantTag(variant: StructLayout): number {
  const first = variant.fields[0];
  if (first === undefined || first.layout.kind !== "tag") throw new Error(`layout ${variant.name} has no type tag first`);
  return first.layout.value;
}

function unionCodec(layout: UnionLayout): Codec {
  const tags = layout.variants.map(variantTag);
  const byTag: (Codec | undefined)[] = [];
  layout.variants.forEach((variant, i) => {
    byTag[tags[i]!] = interpret(variant);
  });
  const allowed = tags.join(", ");
  const width = layout.width;

  function variantOf(t: unknown, at: number | undefined): Codec {
    const codec = typeof t === "number" ? byTag[t] : undefined;
    if (codec === undefined) {
      const fault = new Fault("INVALID_TYPE", `type ${typeof t === "number" ? t : typeof t} not allowed here (allowed: ${allowed})`, at);
      fault.segments.push("type");
      throw fault;
    }
    return codec;
  }

  return {
    size(v, parent) {
      if (typeof v !== "object" || v === null) throw invalid("expected an object");
      return variantOf((v as Obj).type, undefined).size(v, parent);
    },
    write(w, v, parent) {
      variantOf((v as Obj).type, undefined).write(w, v, parent);
    },
    read(r, parent) {
      const at = r.pos;
      r.need(width);
      const t = width === 1 ? r.bytes[at]! : r.view.getUint32(at, true);
      return variantOf(t, at).read(r, parent);
    },
  };
}

function payloadCodec(layout: PayloadLayout): Codec {
  const of = interpret(layout.of);
  const optional = layout.optional;
  return {
    size(v, parent) {
      if (v === undefined) {
        if (optional) return 4;
        throw invalid("a payload is required here");
      }
      return 4 + of.size(v, parent);
    },
    write(w, v, parent) {
      const at = w.pos;
      w.pos += 4;
      if (v !== undefined) of.write(w, v, parent);
      w.view.setUint32(at, w.pos - at - 4, true);
    },
    read(r, parent) {
      const at = r.pos;
      const length = r.u32();
      if (length === 0) {
        if (optional) return undefined;
        throw new Fault("LENGTH_OUT_OF_RANGE", "a payload is required here", at);
      }
      if (length > r.end - r.pos) throw new Fault("TRUNCATED", `payload length ${length} exceeds the ${r.end - r.pos} bytes left`, at);
      const outer = r.end;
      const end = r.pos + length;
      r.end = end;
      let value: unknown;
      try {
        value = of.read(r, parent);
      } catch (e) {
        // Reading past the declared end means the declared length is too short for what the payload holds.
        if (e instanceof Fault && e.code === "TRUNCATED") throw new Fault("LENGTH_MISMATCH", `payload holds more than its declared ${length} bytes`, at);
        throw e;
      } finally {
        r.end = outer;
      }
      if (r.pos !== end) throw new Fault("LENGTH_MISMATCH", `payload declares ${length} bytes but holds ${r.pos - at - 4}`, at);
      return value;
    },
  };
}

/** Runs a layout's reader over `bytes` (copied once; fields are views of the copy) and demands it ends there. */
export function decodeWith(codec: Codec, bytes: unknown, path = ""): unknown {
  if (!(bytes instanceof Uint8Array)) throw new Fault("INVALID_ARGUMENT", "expected a Uint8Array", undefined).toProtocolError(path);
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
