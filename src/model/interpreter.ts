// The schema interpreter: runs the declarations of objects.ts directly, as closures, with the Reader/Writer methods.
// It is the oracle the generated codec (codecs.generated.ts) is tested against (same value, or the same error code,
// path and offset, on every input), so it is written for plainness, not speed. Not part of the package's entry points.
import { Fault, type Reader, type Writer } from "../bytes/cursor.js";
import { toHex } from "../bytes/hex.js";
import { MAX_U64 } from "../bytes/limits.js";
import * as generated from "./codecs.generated.js";
import type { CodecTables, FromJsonFn, ReadFn, SizeFn, ToJsonFn, WriteFn } from "./engine.js";
import { JSON_ROOTS, READ_ROOTS, WRITE_ROOTS } from "./roots.js";
import * as objects from "./objects.js";
import {
  Bounds,
  checkOrder,
  countAt,
  distinctRule,
  jsonArray,
  jsonBool,
  jsonDecimal,
  jsonHex,
  jsonInteger,
  jsonObject,
  jsonU64Number,
  jsonVarHex,
  sumAtMostRule,
  tagFault,
  u64NumberToJson,
} from "./runtime.js";
import { type ArrayNode, type Node, type PayloadNode, type StructNode, type UnionNode, fieldSpans, variantTag } from "./schema.js";

/** The five operations on one node. */
interface Codec {
  read: ReadFn;
  size: SizeFn;
  write: WriteFn;
  fromJson: FromJsonFn;
  toJson: ToJsonFn;
}

type Obj = Record<string, unknown>;

// The interpreter's own reads and writes, plain and through DataView (the generated codec has leaves.ts).
const dataView = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Fails with TRUNCATED unless `n` more bytes remain. */
function need(r: Reader, n: number): void {
  if (n > r.end - r.pos) throw new Fault("TRUNCATED", `needs ${n} bytes, ${r.end - r.pos} left`, r.pos);
}

/** An unsigned little-endian integer of `width` bytes (1, 2, 4) or a u64 (8, a bigint). */
function readInt(r: Reader, width: 1 | 2 | 4): number {
  need(r, width);
  const v = width === 1 ? r.bytes[r.pos]! : width === 2 ? dataView(r.bytes).getUint16(r.pos, true) : dataView(r.bytes).getUint32(r.pos, true);
  r.pos += width;
  return v;
}

function readU64(r: Reader): bigint {
  need(r, 8);
  const v = dataView(r.bytes).getBigUint64(r.pos, true);
  r.pos += 8;
  return v;
}

/**
 * A u64 as a number: exact up to 2^53; anything larger comes back as Infinity so a range check rejects it (every u64
 * amount of the protocol is bounded by the total supply, below 2^53).
 */
function readU64Number(r: Reader): number {
  need(r, 8);
  const lo = dataView(r.bytes).getUint32(r.pos, true);
  const hi = dataView(r.bytes).getUint32(r.pos + 4, true);
  r.pos += 8;
  return hi < 0x20_0000 ? hi * 0x1_0000_0000 + lo : Infinity;
}

/** A view of the next `n` bytes (no copy). */
function take(r: Reader, n: number): Uint8Array {
  need(r, n);
  const out = r.bytes.subarray(r.pos, r.pos + n);
  r.pos += n;
  return out;
}

function writeInt(w: Writer, width: 1 | 2 | 4, v: number): void {
  if (width === 1) w.bytes[w.pos] = v;
  else if (width === 2) dataView(w.bytes).setUint16(w.pos, v, true);
  else dataView(w.bytes).setUint32(w.pos, v, true);
  w.pos += width;
}

function writeU64(w: Writer, v: bigint): void {
  dataView(w.bytes).setBigUint64(w.pos, v, true);
  w.pos += 8;
}

/** A u64 from a number already checked to be a non-negative safe integer. */
function writeU64Number(w: Writer, v: number): void {
  const hi = Math.floor(v / 0x1_0000_0000);
  dataView(w.bytes).setUint32(w.pos, v - hi * 0x1_0000_0000, true);
  dataView(w.bytes).setUint32(w.pos + 4, hi, true);
  w.pos += 8;
}

function put(w: Writer, b: Uint8Array): void {
  w.bytes.set(b, w.pos);
  w.pos += b.length;
}

const invalid = (message: string): Fault => new Fault("INVALID_ARGUMENT", message, undefined);
const range = (min: number, max: number, got: unknown): Fault => new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${String(got)}`, undefined);

/** Runs `step`, adding `segment` to the path of a Fault it raises. */
function at<T>(segment: string | number, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof Fault) e.segments.push(segment);
    throw e;
  }
}

const built = new WeakMap<Node, Codec>();

/** The interpreted codec of a node, memoized per node object. */
export function interpret(node: Node): Codec {
  let codec = built.get(node);
  if (codec === undefined) {
    codec = build(node);
    built.set(node, codec);
  }
  return codec;
}

function build(node: Node): Codec {
  // A union of one struct is that struct: its own type tag check refuses every other type.
  if (node.kind === "union" && node.variants.length === 1) return interpret(node.variants[0]!);
  switch (node.kind) {
    case "uint": {
      const { width, min, max } = node;
      return {
        size(v) {
          if (typeof v !== "number" || !Number.isInteger(v)) throw invalid("expected an integer");
          if (v < min || v > max) throw range(min, max, v);
          return width;
        },
        write(w, v) {
          writeInt(w, width, v as number);
        },
        read(r) {
          const p = r.pos;
          const v = readInt(r, width);
          if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${v}`, p);
          return v;
        },
        fromJson: (v) => jsonInteger(v, min, max),
        toJson: (v) => v,
      };
    }
    case "u64":
      return {
        size(v) {
          if (typeof v !== "bigint") throw invalid("expected a bigint");
          if (v < 0n || v > MAX_U64) throw new Fault("VALUE_OUT_OF_RANGE", "expected a u64", undefined);
          return 8;
        },
        write: (w, v) => writeU64(w, v as bigint),
        read: (r) => readU64(r),
        fromJson: node.json === "decimal" ? jsonDecimal : jsonU64Number,
        toJson: node.json === "decimal" ? (v) => (v as bigint).toString() : (v) => u64NumberToJson(v as bigint),
      };
    case "amount": {
      const { min, max } = node;
      return {
        size(v) {
          if (typeof v !== "number" || !Number.isSafeInteger(v)) throw invalid("expected a safe integer");
          if (v < min || v > max) throw range(min, max, v);
          return 8;
        },
        write: (w, v) => writeU64Number(w, v as number),
        read(r) {
          const p = r.pos;
          const v = readU64Number(r);
          if (v < min || v > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}`, p);
          return v;
        },
        fromJson: (v) => jsonInteger(v, min, max),
        toJson: (v) => v,
      };
    }
    case "bool":
      return {
        size(v) {
          if (typeof v !== "boolean") throw invalid("expected a boolean");
          return 1;
        },
        write: (w, v) => writeInt(w, 1, v === true ? 1 : 0),
        read(r) {
          const p = r.pos;
          const v = readInt(r, 1);
          if (v > 1) throw new Fault("VALUE_OUT_OF_RANGE", `a boolean is 0 or 1, got ${v}`, p);
          return v === 1;
        },
        fromJson: jsonBool,
        toJson: (v) => v,
      };
    case "tag": {
      const { width, value } = node;
      return {
        size(v) {
          if (v !== value) throw new Fault("INVALID_TYPE", `expected type ${value}, got ${typeof v === "number" ? v : typeof v}`, undefined);
          return width;
        },
        write: (w) => writeInt(w, width, value),
        read(r) {
          const p = r.pos;
          const v = readInt(r, width);
          if (v !== value) throw new Fault("INVALID_TYPE", `expected type ${value}, got ${v}`, p);
          return value;
        },
        fromJson(v) {
          if (v !== value) throw tagFault(v, String(value));
          return value;
        },
        toJson: () => value,
      };
    }
    case "bytes": {
      const { length } = node;
      return {
        size(v) {
          if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
          if (v.length !== length) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${length} bytes, got ${v.length}`, undefined);
          return length;
        },
        write: (w, v) => put(w, v as Uint8Array),
        read: (r) => take(r, length),
        fromJson: (v) => jsonHex(v, length),
        toJson: (v) => toHex(v as Uint8Array),
      };
    }
    case "varBytes": {
      const { prefix, min, max, absentIsEmpty } = node;
      return {
        size(v) {
          if (!(v instanceof Uint8Array)) throw invalid("expected a Uint8Array");
          if (v.length < min || v.length > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${v.length}`, undefined);
          return prefix + v.length;
        },
        write(w, v) {
          const b = v as Uint8Array;
          writeInt(w, prefix, b.length);
          put(w, b);
        },
        read(r) {
          const p = r.pos;
          const n = readInt(r, prefix);
          if (n < min || n > max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${n}`, p);
          return take(r, n);
        },
        fromJson: (v) => (absentIsEmpty && (v === undefined || v === null) ? new Uint8Array(0) : jsonVarHex(v, min, max)),
        toJson: (v) => toHex(v as Uint8Array),
      };
    }
    case "array":
      return arrayCodec(node);
    case "struct":
      return structCodec(node);
    case "union":
      return unionCodec(node);
    case "payload":
      return payloadCodec(node);
  }
}

function arrayCodec(node: ArrayNode): Codec {
  const of = interpret(node.of);
  const { prefix, min, max, order, rules, sameCountAs } = node;
  const bounds = new Bounds(max, Object.fromEntries(fieldSpans(node.of)));

  function checkCount(n: number, parent: unknown, p: number | undefined): void {
    if (n < min || n > max) throw new Fault("COUNT_OUT_OF_RANGE", `expected ${min} .. ${max} elements, got ${n}`, p);
    if (sameCountAs !== undefined) {
      const expected = countAt(parent, sameCountAs);
      if (n !== expected) throw new Fault("COUNT_OUT_OF_RANGE", `expected exactly ${expected} elements (${node.countRule ?? "one each"}), got ${n}`, p);
    }
  }

  function finish(items: unknown[]): void {
    if (order !== undefined) checkOrder(bounds, items.length, order === "strict");
    for (const rule of rules) {
      if (rule.kind === "sumAtMost") sumAtMostRule(bounds, items, rule.field, rule.max, rule.message);
      else if (rule.kind === "distinct") distinctRule(bounds, items.length, rule.through, rule.message);
      else rule.check(items as never[], bounds);
    }
  }

  return {
    size(v, parent) {
      if (!Array.isArray(v)) throw invalid("expected an array");
      checkCount(v.length, parent, undefined);
      let total = prefix;
      for (let i = 0; i < v.length; i++) total += at(i, () => of.size(v[i], v));
      return total;
    },
    write(w, v) {
      const items = v as unknown[];
      writeInt(w, prefix, items.length);
      for (let i = 0; i < items.length; i++) {
        bounds.starts[i] = w.pos;
        of.write(w, items[i], items);
      }
      bounds.starts[items.length] = w.pos;
      bounds.bytes = w.bytes;
      bounds.decoding = false;
      finish(items);
    },
    read(r, parent) {
      const p = r.pos;
      const n = readInt(r, prefix);
      checkCount(n, parent, p);
      const items: unknown[] = [];
      for (let i = 0; i < n; i++) {
        bounds.starts[i] = r.pos;
        items.push(at(i, () => of.read(r, parent)));
      }
      bounds.starts[n] = r.pos;
      bounds.bytes = r.bytes;
      bounds.decoding = true;
      finish(items);
      return items;
    },
    fromJson(v, parent) {
      const json = jsonArray(v, min, max);
      checkCount(json.length, parent, undefined);
      // Array.from, not map: a hole in the array is an element that is not there (map would skip it).
      return Array.from(json, (item, i) => at(i, () => of.fromJson(item, parent)));
    },
    toJson: (v) => Array.from(v as unknown[], (item) => of.toJson(item)),
  };
}

function structCodec(node: StructNode): Codec {
  const fields = node.fields.map((f) => ({ ...f, codec: interpret(f.node) }));
  return {
    size(v) {
      if (typeof v !== "object" || v === null) throw invalid("expected an object");
      let total = 0;
      for (const f of fields) total += at(f.json, () => f.codec.size((v as Obj)[f.key], v));
      return total;
    },
    write(w, v) {
      for (const f of fields) at(f.json, () => f.codec.write(w, (v as Obj)[f.key], v));
    },
    read(r) {
      const o: Obj = {};
      for (const f of fields) o[f.key] = at(f.json, () => f.codec.read(r, o));
      return o;
    },
    fromJson(v) {
      const json = jsonObject(v);
      const o: Obj = {};
      for (const f of fields) o[f.key] = at(f.json, () => f.codec.fromJson(json[f.json], o));
      return o;
    },
    toJson(v) {
      const out: Obj = {};
      for (const f of fields) out[f.json] = f.codec.toJson((v as Obj)[f.key]);
      return out;
    },
  };
}

function unionCodec(node: UnionNode): Codec {
  const byTag = new Map(node.variants.map((variant) => [variantTag(variant), interpret(variant)]));
  const allowed = [...byTag.keys()].join(", ");

  function variantOf(t: unknown, p: number | undefined): Codec {
    const codec = typeof t === "number" ? byTag.get(t) : undefined;
    if (codec === undefined) {
      const fault = new Fault("INVALID_TYPE", `type ${typeof t === "number" ? t : typeof t} not allowed here (allowed: ${allowed})`, p);
      fault.segments.push("type");
      throw fault;
    }
    return codec;
  }

  return {
    size(v, parent) {
      if (typeof v !== "object" || v === null) throw invalid("expected an object");
      return variantOf((v as Obj)["type"], undefined).size(v, parent);
    },
    write: (w, v, parent) => variantOf((v as Obj)["type"], undefined).write(w, v, parent),
    read(r, parent) {
      const p = r.pos;
      need(r, node.width);
      const t = node.width === 1 ? r.bytes[p]! : dataView(r.bytes).getUint32(p, true);
      return variantOf(t, p).read(r, parent);
    },
    fromJson(v, parent) {
      const json = jsonObject(v);
      const t = json["type"];
      const codec = typeof t === "number" ? byTag.get(t) : undefined;
      if (codec === undefined) {
        const fault = tagFault(t, allowed);
        fault.segments.push("type");
        throw fault;
      }
      return codec.fromJson(json, parent);
    },
    toJson: (v) => variantOf((v as Obj)["type"], undefined).toJson(v),
  };
}

function payloadCodec(node: PayloadNode): Codec {
  const of = interpret(node.of);
  const optional = node.optional;
  return {
    size(v, parent) {
      if (v === undefined) {
        if (optional) return 4;
        throw invalid("a payload is required here");
      }
      return 4 + of.size(v, parent);
    },
    write(w, v, parent) {
      const p = w.pos;
      w.pos += 4;
      if (v !== undefined) of.write(w, v, parent);
      dataView(w.bytes).setUint32(p, w.pos - p - 4, true);
    },
    read(r, parent) {
      const p = r.pos;
      const length = readInt(r, 4);
      if (length === 0) {
        if (optional) return undefined;
        throw new Fault("LENGTH_OUT_OF_RANGE", "a payload is required here", p);
      }
      if (length > r.end - r.pos) throw new Fault("TRUNCATED", `payload length ${length} exceeds the ${r.end - r.pos} bytes left`, p);
      const outer = r.end;
      const end = r.pos + length;
      r.end = end;
      let value: unknown;
      try {
        value = of.read(r, parent);
      } catch (e) {
        // Reading past the declared end means the declared length is too short for what the payload holds.
        if (e instanceof Fault && e.code === "TRUNCATED") throw new Fault("LENGTH_MISMATCH", `payload holds more than its declared ${length} bytes`, p);
        throw e;
      } finally {
        r.end = outer;
      }
      if (r.pos !== end) throw new Fault("LENGTH_MISMATCH", `payload declares ${length} bytes but holds ${r.pos - p - 4}`, p);
      return value;
    },
    fromJson: (v, parent) => (optional && (v === undefined || v === null) ? undefined : of.fromJson(v, parent)),
    toJson: (v) => (v === undefined ? null : of.toJson(v)),
  };
}

const nodes = objects as unknown as Record<string, Node>;
const tableOf = <R extends string, F>(roots: readonly R[], op: (codec: Codec) => F): Record<R, F> =>
  Object.fromEntries(roots.map((root) => [root, op(interpret(nodes[root]!))])) as Record<R, F>;

/** The interpreter's operations, in the generated code's tables (codecs.generated.ts). */
export const interpretedTables: CodecTables = {
  readers: tableOf(READ_ROOTS, (c) => c.read),
  sizers: tableOf(WRITE_ROOTS, (c) => c.size),
  writers: tableOf(WRITE_ROOTS, (c) => c.write),
  jsonReaders: tableOf(JSON_ROOTS, (c) => c.fromJson),
  jsonWriters: tableOf(JSON_ROOTS, (c) => c.toJson),
};

/** The generated operations, as built (the tables codec.ts and json.ts call are swapped in place). */
export const generatedTables: CodecTables = {
  readers: { ...generated.readers },
  sizers: { ...generated.sizers },
  writers: { ...generated.writers },
  jsonReaders: { ...generated.jsonReaders },
  jsonWriters: { ...generated.jsonWriters },
};

export type CodecEngine = "generated" | "interpreted";

/** Installs one engine's operations behind every entry point of codec.ts and json.ts (tests run each case on both). */
export function selectCodecEngine(choice: CodecEngine = "generated"): CodecEngine {
  const from = choice === "interpreted" ? interpretedTables : generatedTables;
  Object.assign(generated.readers, from.readers);
  Object.assign(generated.sizers, from.sizers);
  Object.assign(generated.writers, from.writers);
  Object.assign(generated.jsonReaders, from.jsonReaders);
  Object.assign(generated.jsonWriters, from.jsonWriters);
  return choice;
}
