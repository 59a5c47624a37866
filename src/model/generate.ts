// The fast engine: compiles a layout once into specialized JavaScript (one sizer, writer and reader per object, fixed
// object shapes, integers assembled inline), with exactly the interpreter's checks, codes, paths and offsets.
import { Fault, compareSlices, scratch, scratchView } from "../bytes/cursor.js";
import { MAX_U64 } from "../bytes/limits.js";
import { Bounds, type Codec, type Layout, checkOrder, maxOfWidth, variantTag } from "./serializer.js";

/** Whether this platform lets us compile code at run time (a strict Content-Security-Policy forbids it). */
export const canGenerate: boolean = (() => {
  try {
    return (new Function("return 1") as () => number)() === 1;
  } catch {
    return false;
  }
})();

function truncated(at: number, n: number, left: number): Fault {
  return new Fault("TRUNCATED", `needs ${n} bytes, ${left} left`, at);
}

function invalid(message: string): Fault {
  return new Fault("INVALID_ARGUMENT", message, undefined);
}

function typeFault(t: unknown, allowed: string, at: number | undefined): Fault {
  const fault = new Fault("INVALID_TYPE", `type ${typeof t === "number" ? t : typeof t} not allowed here (allowed: ${allowed})`, at);
  fault.segments.push("type");
  return fault;
}

const lit = (v: unknown): string => JSON.stringify(v);

/** Byte-assembly expressions for little-endian reads from `b` at `p` and writes of `v` into `b` at `p`. */
function readInt(width: 1 | 2 | 4): string {
  if (width === 1) return "b[p]";
  if (width === 2) return "(b[p] | (b[p + 1] << 8))";
  return "((b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0)";
}

function writeInt(width: 1 | 2 | 4, v: string): string {
  if (width === 1) return `b[p] = ${v};`;
  if (width === 2) return `b[p] = ${v} & 255; b[p + 1] = ${v} >>> 8;`;
  return `b[p] = ${v} & 255; b[p + 1] = (${v} >>> 8) & 255; b[p + 2] = (${v} >>> 16) & 255; b[p + 3] = ${v} >>> 24;`;
}

class Generator {
  readonly parts: string[] = [];
  readonly constants: unknown[] = [];
  readonly ids = new Map<Layout, number>();

  constant(value: unknown): string {
    this.constants.push(value);
    return `C${this.constants.length - 1}`;
  }

  /** Emits rN / sN / wN for a layout (once per layout object) and returns N. */
  node(layout: Layout): number {
    const known = this.ids.get(layout);
    if (known !== undefined) return known;
    const id = this.ids.size;
    this.ids.set(layout, id);
    this.parts.push(this.emit(layout, id));
    return id;
  }

  private emit(layout: Layout, n: number): string {
    switch (layout.kind) {
      case "uint": {
        const { width, min, max } = layout;
        const full = min === 0 && max === maxOfWidth(width);
        const range = `expected ${min} .. ${max}, got `;
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < ${width}) throw T(p, ${width}, r.end - p); const b = r.bytes; const v = ${readInt(width)}; r.pos = p + ${width};
  ${full ? "" : `if (v < ${min} || v > ${max}) throw new F("VALUE_OUT_OF_RANGE", ${lit(range)} + v, p);`} return v; }
function s${n}(v) { if (typeof v !== "number" || !Number.isInteger(v)) throw I("expected an integer");
  if (v < ${min} || v > ${max}) throw new F("VALUE_OUT_OF_RANGE", ${lit(range)} + v, undefined); return ${width}; }
function w${n}(w, v) { const b = w.bytes; const p = w.pos; ${writeInt(width, "v")} w.pos = p + ${width}; }`;
      }
      case "u64":
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < 8) throw T(p, 8, r.end - p); const b = r.bytes; r.pos = p + 8;
  SB[0] = b[p]; SB[1] = b[p + 1]; SB[2] = b[p + 2]; SB[3] = b[p + 3]; SB[4] = b[p + 4]; SB[5] = b[p + 5]; SB[6] = b[p + 6]; SB[7] = b[p + 7];
  return SV.getBigUint64(0, true); }
function s${n}(v) { if (typeof v !== "bigint") throw I("expected a bigint"); if (v < 0n || v > MAX_U64) throw new F("VALUE_OUT_OF_RANGE", "expected a u64", undefined); return 8; }
function w${n}(w, v) { const b = w.bytes; const p = w.pos; SV.setBigUint64(0, v, true);
  b[p] = SB[0]; b[p + 1] = SB[1]; b[p + 2] = SB[2]; b[p + 3] = SB[3]; b[p + 4] = SB[4]; b[p + 5] = SB[5]; b[p + 6] = SB[6]; b[p + 7] = SB[7]; w.pos = p + 8; }`;
      case "amount": {
        const { min, max } = layout;
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < 8) throw T(p, 8, r.end - p); const b = r.bytes;
  const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  const hi = (b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24)) >>> 0;
  r.pos = p + 8; const v = hi < 0x200000 ? hi * 4294967296 + lo : Infinity;
  if (v < ${min} || v > ${max}) throw new F("VALUE_OUT_OF_RANGE", ${lit(`expected ${min} .. ${max}`)}, p); return v; }
function s${n}(v) { if (typeof v !== "number" || !Number.isSafeInteger(v)) throw I("expected a safe integer");
  if (v < ${min} || v > ${max}) throw new F("VALUE_OUT_OF_RANGE", ${lit(`expected ${min} .. ${max}, got `)} + v, undefined); return 8; }
function w${n}(w, v) { const b = w.bytes; const p = w.pos; const hi = Math.floor(v / 4294967296); const lo = v - hi * 4294967296;
  ${writeInt(4, "lo")} b[p + 4] = hi & 255; b[p + 5] = (hi >>> 8) & 255; b[p + 6] = (hi >>> 16) & 255; b[p + 7] = hi >>> 24; w.pos = p + 8; }`;
      }
      case "bool":
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < 1) throw T(p, 1, r.end - p); const v = r.bytes[p]; r.pos = p + 1;
  if (v > 1) throw new F("VALUE_OUT_OF_RANGE", "a boolean is 0 or 1, got " + v, p); return v === 1; }
function s${n}(v) { if (typeof v !== "boolean") throw I("expected a boolean"); return 1; }
function w${n}(w, v) { w.bytes[w.pos++] = v === true ? 1 : 0; }`;
      case "tag": {
        const { width, value } = layout;
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < ${width}) throw T(p, ${width}, r.end - p); const b = r.bytes; const v = ${readInt(width)}; r.pos = p + ${width};
  if (v !== ${value}) throw new F("INVALID_TYPE", ${lit(`expected type ${value}, got `)} + v, p); return ${value}; }
function s${n}(v) { if (v !== ${value}) throw new F("INVALID_TYPE", ${lit(`expected type ${value}, got `)} + (typeof v === "number" ? v : typeof v), undefined); return ${width}; }
function w${n}(w) { const b = w.bytes; const p = w.pos; ${writeInt(width, String(value))} w.pos = p + ${width}; }`;
      }
      case "bytes": {
        const { length } = layout;
        return `
function r${n}(r) { const p = r.pos; if (r.end - p < ${length}) throw T(p, ${length}, r.end - p); r.pos = p + ${length}; return new Uint8Array(r.buffer, r.base + p, ${length}); }
function s${n}(v) { if (!(v instanceof Uint8Array)) throw I("expected a Uint8Array");
  if (v.length !== ${length}) throw new F("LENGTH_OUT_OF_RANGE", "expected ${length} bytes, got " + v.length, undefined); return ${length}; }
function w${n}(w, v) { w.bytes.set(v, w.pos); w.pos += ${length}; }`;
      }
      case "varBytes": {
        const { prefix, min, max } = layout;
        const range = lit(`expected ${min} .. ${max} bytes, got `);
        return `
function r${n}(r) { let p = r.pos; if (r.end - p < ${prefix}) throw T(p, ${prefix}, r.end - p); const b = r.bytes; const len = ${readInt(prefix)};
  if (len < ${min} || len > ${max}) throw new F("LENGTH_OUT_OF_RANGE", ${range} + len, p);
  p += ${prefix}; r.pos = p; if (r.end - p < len) throw T(p, len, r.end - p); r.pos = p + len; return new Uint8Array(r.buffer, r.base + p, len); }
function s${n}(v) { if (!(v instanceof Uint8Array)) throw I("expected a Uint8Array");
  if (v.length < ${min} || v.length > ${max}) throw new F("LENGTH_OUT_OF_RANGE", ${range} + v.length, undefined); return ${prefix} + v.length; }
function w${n}(w, v) { const b = w.bytes; const p = w.pos; const len = v.length; ${writeInt(prefix, "len")} b.set(v, p + ${prefix}); w.pos = p + ${prefix} + len; }`;
      }
      case "array": {
        const e = this.node(layout.of);
        const { prefix, min, max } = layout;
        const bounds = this.constant(new Bounds(max));
        const countFrom = layout.countFrom === undefined ? undefined : this.constant(layout.countFrom);
        const rule = layout.rule === undefined ? undefined : this.constant(layout.rule);
        const countMessage = lit(`expected ${min} .. ${max} elements, got `);
        const exactMessage = lit(` elements (${layout.countRule ?? "one each"}), got `);
        const checkCount = (at: string): string =>
          `if (count < ${min} || count > ${max}) throw new F("COUNT_OUT_OF_RANGE", ${countMessage} + count, ${at});` +
          (countFrom === undefined ? "" : ` { const ex = ${countFrom}(parent); if (count !== ex) throw new F("COUNT_OUT_OF_RANGE", "expected exactly " + ex + ${exactMessage} + count, ${at}); }`);
        const finish =
          (layout.order === undefined ? "" : `checkOrder(${bounds}, items.length, ${layout.order === "strict"});`) + (rule === undefined ? "" : `${rule}(items, ${bounds});`);
        return `
function r${n}(r, parent) { const at = r.pos; if (r.end - at < ${prefix}) throw T(at, ${prefix}, r.end - at); const b = r.bytes; const p = at; const count = ${readInt(prefix)}; r.pos = at + ${prefix};
  ${checkCount("at")}
  const items = []; const s = ${bounds}.starts; let i = 0;
  try { for (; i < count; i++) { s[i] = r.pos; items.push(r${e}(r, parent)); } } catch (err) { if (err instanceof F) err.segments.push(i); throw err; }
  s[count] = r.pos; ${bounds}.bytes = b; ${bounds}.decoding = true; ${finish} return items; }
function s${n}(v, parent) { if (!Array.isArray(v)) throw I("expected an array"); const count = v.length; ${checkCount("undefined")}
  let total = ${prefix}; let i = 0;
  try { for (; i < count; i++) total += s${e}(v[i], v); } catch (err) { if (err instanceof F) err.segments.push(i); throw err; }
  return total; }
function w${n}(w, items) { const b = w.bytes; const p = w.pos; const count = items.length; ${writeInt(prefix, "count")} w.pos = p + ${prefix};
  const s = ${bounds}.starts; for (let i = 0; i < count; i++) { s[i] = w.pos; w${e}(w, items[i], items); }
  s[count] = w.pos; ${bounds}.bytes = b; ${bounds}.decoding = false; ${finish} }`;
      }
      case "struct": {
        const fields = layout.fields.map((f) => ({ key: lit(f.key), id: this.node(f.layout), optional: f.layout.kind === "payload" && f.layout.optional }));
        const names = this.constant(layout.fields.map((f) => f.json));
        const reads = fields
          .map((f, i) => (f.optional ? `f = ${i}; { const v = r${f.id}(r, o); if (v !== undefined) o[${f.key}] = v; }` : `f = ${i}; o[${f.key}] = r${f.id}(r, o);`))
          .join("\n    ");
        const sizes = fields.map((f, i) => `f = ${i}; total += s${f.id}(v[${f.key}], v);`).join(" ");
        const writes = fields.map((f, i) => `f = ${i}; w${f.id}(w, v[${f.key}], v);`).join(" ");
        return `
function r${n}(r) { const o = {}; let f = 0;
  try {
    ${reads}
  } catch (err) { if (err instanceof F) err.segments.push(${names}[f]); throw err; }
  return o; }
function s${n}(v) { if (typeof v !== "object" || v === null) throw I(${lit(`expected ${layout.name} to be an object`)}); let total = 0; let f = 0;
  try { ${sizes} } catch (err) { if (err instanceof F) err.segments.push(${names}[f]); throw err; }
  return total; }
function w${n}(w, v) { let f = 0;
  try { ${writes} } catch (err) { if (err instanceof F) err.segments.push(${names}[f]); throw err; } }`;
      }
      case "union": {
        const variants = layout.variants.map((v) => ({ tag: variantTag(v), id: this.node(v) }));
        const allowed = lit(variants.map((v) => v.tag).join(", "));
        const cases = (call: (id: number) => string): string => variants.map((v) => `case ${v.tag}: ${call(v.id)}`).join(" ");
        const width = layout.width;
        return `
function r${n}(r, parent) { const p = r.pos; if (r.end - p < ${width}) throw T(p, ${width}, r.end - p); const b = r.bytes; const t = ${readInt(width)};
  switch (t) { ${cases((id) => `return r${id}(r, parent);`)} default: throw TY(t, ${allowed}, p); } }
function s${n}(v, parent) { if (typeof v !== "object" || v === null) throw I("expected an object");
  switch (v.type) { ${cases((id) => `return s${id}(v, parent);`)} default: throw TY(v.type, ${allowed}, undefined); } }
function w${n}(w, v, parent) { switch (v.type) { ${cases((id) => `w${id}(w, v, parent); return;`)} } }`;
      }
      case "payload": {
        const u = this.node(layout.of);
        return `
function r${n}(r, parent) { const at = r.pos; if (r.end - at < 4) throw T(at, 4, r.end - at); const b = r.bytes; const p = at; const length = ${readInt(4)}; r.pos = at + 4;
  if (length === 0) { ${layout.optional ? "return undefined;" : `throw new F("LENGTH_OUT_OF_RANGE", "a payload is required here", at);`} }
  if (length > r.end - r.pos) throw new F("TRUNCATED", "payload length " + length + " exceeds the " + (r.end - r.pos) + " bytes left", at);
  const outer = r.end; const end = r.pos + length; r.end = end; let value;
  try { value = r${u}(r, parent); }
  catch (err) { if (err instanceof F && err.code === "TRUNCATED") throw new F("LENGTH_MISMATCH", "payload holds more than its declared " + length + " bytes", at); throw err; }
  finally { r.end = outer; }
  if (r.pos !== end) throw new F("LENGTH_MISMATCH", "payload declares " + length + " bytes but holds " + (r.pos - at - 4), at);
  return value; }
function s${n}(v, parent) { if (v === undefined) { ${layout.optional ? "return 4;" : `throw I("a payload is required here");`} } return 4 + s${u}(v, parent); }
function w${n}(w, v, parent) { const at = w.pos; w.pos = at + 4; if (v !== undefined) w${u}(w, v, parent); const b = w.bytes; const p = at; const len = w.pos - at - 4; ${writeInt(4, "len")} }`;
      }
    }
  }
}

const generated = new WeakMap<object, Codec>();

/** Compiles a layout into specialized functions; the same layout object always yields the same codec. */
export function generate(layout: Layout): Codec {
  const known = generated.get(layout);
  if (known !== undefined) return known;
  const g = new Generator();
  const root = g.node(layout);
  const constants = g.constants.map((_, i) => `const C${i} = K[${i}];`).join("\n");
  const source = `"use strict";\n${constants}\n${g.parts.join("\n")}\nreturn { size: s${root}, write: w${root}, read: r${root} };`;
  const factory = new Function("K", "F", "T", "I", "TY", "MAX_U64", "checkOrder", "compareSlices", "SB", "SV", source) as (...args: unknown[]) => Codec;
  const codec = factory(g.constants, Fault, truncated, invalid, typeFault, MAX_U64, checkOrder, compareSlices, scratch, scratchView);
  generated.set(layout, codec);
  return codec;
}
