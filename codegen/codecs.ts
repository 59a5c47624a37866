// `npm run build:codecs`: writes src/model/codecs.generated.ts from the declarations of src/model/objects.ts: one
// reader, sizer, writer, JSON reader and JSON writer per object, array, union and payload, with fixed object shapes
// and each leaf field a call to leaves.ts with the schema's constants. It has exactly the interpreter's checks,
// codes, paths and offsets (test/engines.test.ts holds it to that); the code is written here, at build time, so
// nothing is compiled at run time (no eval, no new Function: strict Content-Security-Policy pages work).
import { writeFileSync } from "node:fs";
import * as objects from "../src/model/objects.js";
import { JSON_ROOTS, READ_ROOTS, WRITE_ROOTS } from "../src/model/roots.js";
import * as rules from "../src/model/rules.js";
import { type ArrayNode, type Node, type PayloadNode, type StructNode, type UnionNode, fieldSpans, variantTag } from "../src/model/schema.js";

const lit = (v: unknown): string => JSON.stringify(v);

/** How one node is read, sized, written and converted, as expressions over the value `x`, the reader `r` and writer `w`. */
interface Access {
  read(parent: string): string;
  size(x: string, parent: string): string;
  write(x: string, parent: string): string;
  fromJson(x: string, parent: string): string;
  toJson(x: string): string;
}

/** Leaves are calls to leaves.ts and runtime.ts with constant arguments; the rest, calls to the functions emitted for them. */
function leaf(node: Node): Access | undefined {
  switch (node.kind) {
    case "uint": {
      const { width: n, min, max } = node;
      return { read: () => `readU${8 * n}(r, ${min}, ${max})`, size: (x) => `sizeUint(${x}, ${n}, ${min}, ${max})`, write: (x) => `writeU${8 * n}(w, ${x})`, fromJson: (x) => `jsonInteger(${x}, ${min}, ${max})`, toJson: (x) => x };
    }
    case "u64": {
      const decimal = node.json === "decimal";
      return {
        read: () => "readU64(r)",
        size: (x) => `sizeU64(${x})`,
        write: (x) => `writeU64(w, ${x})`,
        fromJson: (x) => (decimal ? `jsonDecimal(${x})` : `jsonU64Number(${x})`),
        toJson: (x) => (decimal ? `(${x} as bigint).toString()` : `u64NumberToJson(${x} as bigint)`),
      };
    }
    case "amount": {
      const { min, max } = node;
      return { read: () => `readAmount(r, ${min}, ${max})`, size: (x) => `sizeAmount(${x}, ${min}, ${max})`, write: (x) => `writeAmount(w, ${x})`, fromJson: (x) => `jsonInteger(${x}, ${min}, ${max})`, toJson: (x) => x };
    }
    case "bool":
      return { read: () => "readBool(r)", size: (x) => `sizeBool(${x})`, write: (x) => `writeBool(w, ${x})`, fromJson: (x) => `jsonBool(${x})`, toJson: (x) => x };
    case "tag": {
      const { width: n, value } = node;
      return { read: () => `readTag${8 * n}(r, ${value})`, size: (x) => `sizeTag(${x}, ${n}, ${value})`, write: () => `writeU${8 * n}(w, ${value})`, fromJson: (x) => `jsonTag(${x}, ${value})`, toJson: () => String(value) };
    }
    case "bytes": {
      const { length } = node;
      return { read: () => `readBytes(r, ${length})`, size: (x) => `sizeBytes(${x}, ${length})`, write: (x) => `writeBytes(w, ${x})`, fromJson: (x) => `jsonHex(${x}, ${length})`, toJson: (x) => `toHex(${x} as Uint8Array)` };
    }
    case "varBytes": {
      const { prefix: n, min, max } = node;
      return {
        read: () => `readVarBytes(r, ${n}, ${min}, ${max})`,
        size: (x) => `sizeVarBytes(${x}, ${n}, ${min}, ${max})`,
        write: (x) => `writeVarBytes(w, ${x}, ${n})`,
        fromJson: (x) => `${node.absentIsEmpty ? "jsonVarHexOrEmpty" : "jsonVarHex"}(${x}, ${min}, ${max})`,
        toJson: (x) => `toHex(${x} as Uint8Array)`,
      };
    }
    default:
      return undefined;
  }
}

/** countAt (runtime.ts) written out for one path: the length of the array at `path` in `parent`, or -1. */
function countOf(path: readonly string[]): string {
  let expression = "parent";
  for (const key of path) expression = `(${expression} as Obj | undefined)?.[${lit(key)}]`;
  return `lengthOf(${expression})`;
}

const call = (id: string): Access => ({
  read: (parent) => `read${id}(r, ${parent})`,
  size: (x, parent) => `size${id}(${x}, ${parent})`,
  write: (x, parent) => `write${id}(w, ${x}, ${parent})`,
  fromJson: (x, parent) => `fromJson${id}(${x}, ${parent})`,
  toJson: (x) => `toJson${id}(${x})`,
});

class Emitter {
  readonly parts: string[] = [];
  readonly imports = new Set<string>();
  private readonly ids = new Map<Node, string>();
  private readonly taken = new Set<string>();

  /** How to reach a node: inline for a leaf; otherwise its five functions, emitted once per node object. */
  access(node: Node): Access {
    return leaf(node) ?? call(this.id(node));
  }

  id(node: Node): string {
    // A union of one struct is that struct (as in the interpreter): its own type tag check refuses every other type.
    if (node.kind === "union" && node.variants.length === 1) return this.id(node.variants[0]!);
    const known = this.ids.get(node);
    if (known !== undefined) return known;
    let id = node.kind === "struct" ? node.name : `${node.kind[0]!.toUpperCase()}${node.kind.slice(1)}`;
    for (let i = 2; this.taken.has(id); i++) id = `${id.replace(/\d+$/, "")}${i}`;
    this.taken.add(id);
    this.ids.set(node, id);
    if (node.kind === "array") this.parts.push(this.array(node, id));
    else if (node.kind === "struct") this.parts.push(this.struct(node, id));
    else if (node.kind === "union") this.parts.push(this.union(node, id));
    else if (node.kind === "payload") this.parts.push(this.payload(node, id));
    else throw new Error(`a ${node.kind} is emitted inline`);
    return id;
  }

  private array(node: ArrayNode, n: string): string {
    const e = this.access(node.of);
    const { prefix, min, max, sameCountAs, countRule } = node;
    const bounds = `bounds${n}`;
    const exact = (at: string): string =>
      sameCountAs === undefined
        ? ""
        : `\n  { const ex = ${countOf(sameCountAs)}; if (count !== ex) throw new Fault("COUNT_OUT_OF_RANGE", \`expected exactly \${ex} elements (${countRule ?? "one each"}), got \${count}\`, ${at}); }`;
    const checkCount = (at: string): string => `if (count < ${min} || count > ${max}) throw new Fault("COUNT_OUT_OF_RANGE", \`expected ${min} .. ${max} elements, got \${count}\`, ${at});${exact(at)}`;
    const finish: string[] = [];
    if (node.order !== undefined) finish.push(`checkOrder(${bounds}, items.length, ${node.order === "strict"});`);
    for (const rule of node.rules) {
      if (rule.kind === "sumAtMost") finish.push(`sumAtMostRule(${bounds}, items, ${lit(rule.field)}, ${rule.max}, ${lit(rule.message)});`);
      else if (rule.kind === "distinct") finish.push(`distinctRule(${bounds}, items.length, ${lit(rule.through)}, ${lit(rule.message)});`);
      else {
        const name = rule.check.name;
        // The generated file imports the rule by name, so it must be rules.ts's export of that name.
        if ((rules as Record<string, unknown>)[name] !== rule.check) throw new Error(`array rule ${name || "(anonymous)"} is not exported by src/model/rules.ts under its name`);
        this.imports.add(name);
        finish.push(`${name}(items as never[], ${bounds});`);
      }
    }
    const parent = sameCountAs === undefined ? "_parent" : "parent";
    return `
const ${bounds} = /* @__PURE__ */ new Bounds(${max}, ${lit(Object.fromEntries(fieldSpans(node.of)))});
function read${n}(r: Reader, ${parent}?: Obj): unknown[] {
  const p = r.pos; const count = readU${8 * prefix}(r, 0, ${prefix === 1 ? 255 : 65535});
  ${checkCount("p")}
  const items: unknown[] = []; const s = ${bounds}.starts; let i = 0;
  try { for (; i < count; i++) { s[i] = r.pos; items.push(${e.read(parent)}); } } catch (err) { throw segment(err, i); }
  s[count] = r.pos; ${bounds}.bytes = r.bytes; ${bounds}.decoding = true;
  ${finish.join(" ")}
  return items;
}
function size${n}(v: unknown, ${parent}?: unknown): number {
  if (!Array.isArray(v)) throw invalid("expected an array");
  const count = v.length; ${checkCount("undefined")}
  let total = ${prefix}; let i = 0;
  try { for (; i < count; i++) total += ${e.size("v[i]", "v")}; } catch (err) { throw segment(err, i); }
  return total;
}
function write${n}(w: Writer, v: unknown, _parent?: unknown): void {
  const items = v as unknown[]; const count = items.length; writeU${8 * prefix}(w, count);
  const s = ${bounds}.starts;
  for (let i = 0; i < count; i++) { s[i] = w.pos; ${e.write("items[i]", "items")}; }
  s[count] = w.pos; ${bounds}.bytes = w.bytes; ${bounds}.decoding = false;
  ${finish.join(" ")}
}
function fromJson${n}(v: unknown, ${parent}?: Obj): unknown[] {
  const json = jsonArray(v, ${min}, ${max}); const count = json.length;${exact("undefined")}
  const items = new Array<unknown>(count); let i = 0;
  try { for (; i < count; i++) items[i] = ${e.fromJson("json[i]", parent)}; } catch (err) { throw segment(err, i); }
  return items;
}
function toJson${n}(v: unknown): unknown[] {
  const items = v as unknown[]; const count = items.length; const out = new Array<unknown>(count);
  for (let i = 0; i < count; i++) out[i] = ${e.toJson("items[i]")};
  return out;
}`;
  }

  private struct(node: StructNode, n: string): string {
    const fields = node.fields.map((f) => ({ key: lit(f.key), json: lit(f.json), a: this.access(f.node) }));
    const names = `names${n}`;
    const steps = (each: (f: (typeof fields)[number]) => string): string => fields.map((f, i) => `f = ${i}; ${each(f)}`).join("\n    ");
    const guard = `catch (err) { throw segment(err, ${names}[f]!); }`;
    return `
const ${names} = ${lit(node.fields.map((f) => f.json))};
function read${n}(r: Reader, _parent?: Obj): Obj {
  const o: Obj = {}; let f = 0;
  try {
    ${steps((f) => `o[${f.key}] = ${f.a.read("o")};`)}
  } ${guard}
  return o;
}
function size${n}(v: unknown, _parent?: unknown): number {
  if (typeof v !== "object" || v === null) throw invalid("expected an object");
  const o = v as Obj; let total = 0; let f = 0;
  try {
    ${steps((f) => `total += ${f.a.size(`o[${f.key}]`, "o")};`)}
  } ${guard}
  return total;
}
function write${n}(w: Writer, v: unknown, _parent?: unknown): void {
  const o = v as Obj; let f = 0;
  try {
    ${steps((f) => `${f.a.write(`o[${f.key}]`, "o")};`)}
  } ${guard}
}
function fromJson${n}(v: unknown, _parent?: Obj): Obj {
  const j = jsonObject(v); const o: Obj = {}; let f = 0;
  try {
    ${steps((f) => `o[${f.key}] = ${f.a.fromJson(`j[${f.json}]`, "o")};`)}
  } ${guard}
  return o;
}
function toJson${n}(v: unknown): unknown {
  const o = v as Obj;
  return { ${fields.map((f) => `${f.json}: ${f.a.toJson(`o[${f.key}]`)}`).join(", ")} };
}`;
  }

  private union(node: UnionNode, n: string): string {
    const variants = node.variants.map((v) => ({ tag: variantTag(v), id: this.id(v) }));
    const allowed = lit(variants.map((v) => v.tag).join(", "));
    const cases = (each: (id: string) => string): string => variants.map((v) => `case ${v.tag}: ${each(v.id)}`).join(" ");
    return `
function read${n}(r: Reader, parent?: Obj): unknown {
  const p = r.pos; if (r.end - p < ${node.width}) throw truncated(p, ${node.width}, r.end - p); const b = r.bytes; const t = ${node.width === 1 ? "b[p]!" : "(b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0"};
  switch (t) { ${cases((id) => `return read${id}(r, parent);`)} default: throw typeFault(t, ${allowed}, p); }
}
function size${n}(v: unknown, parent?: unknown): number {
  if (typeof v !== "object" || v === null) throw invalid("expected an object");
  const t = (v as Obj)["type"];
  switch (t) { ${cases((id) => `return size${id}(v, parent);`)} default: throw typeFault(t, ${allowed}, undefined); }
}
function write${n}(w: Writer, v: unknown, parent?: unknown): void {
  switch ((v as Obj)["type"]) { ${cases((id) => `write${id}(w, v, parent); return;`)} }
}
function fromJson${n}(v: unknown, parent?: Obj): unknown {
  const j = jsonObject(v); const t = j["type"];
  switch (t) { ${cases((id) => `return fromJson${id}(j, parent);`)} default: throw segment(tagFault(t, ${allowed}), "type"); }
}
function toJson${n}(v: unknown): unknown {
  const t = (v as Obj)["type"];
  switch (t) { ${cases((id) => `return toJson${id}(v);`)} default: throw typeFault(t, ${allowed}, undefined); }
}`;
  }

  private payload(node: PayloadNode, n: string): string {
    const u = this.id(node.of);
    const optional = node.optional;
    return `
function read${n}(r: Reader, parent?: Obj): unknown {
  const p = r.pos; const length = readU32(r, 0, 4294967295);
  if (length === 0) ${optional ? "return undefined;" : `throw new Fault("LENGTH_OUT_OF_RANGE", "a payload is required here", p);`}
  if (length > r.end - r.pos) throw new Fault("TRUNCATED", \`payload length \${length} exceeds the \${r.end - r.pos} bytes left\`, p);
  const outer = r.end; const end = r.pos + length; r.end = end; let value: unknown;
  try { value = read${u}(r, parent); }
  catch (err) { if (err instanceof Fault && err.code === "TRUNCATED") throw new Fault("LENGTH_MISMATCH", \`payload holds more than its declared \${length} bytes\`, p); throw err; }
  finally { r.end = outer; }
  if (r.pos !== end) throw new Fault("LENGTH_MISMATCH", \`payload declares \${length} bytes but holds \${r.pos - p - 4}\`, p);
  return value;
}
function size${n}(v: unknown, parent?: unknown): number {
  if (v === undefined) ${optional ? "return 4;" : `throw invalid("a payload is required here");`}
  return 4 + size${u}(v, parent);
}
function write${n}(w: Writer, v: unknown, parent?: unknown): void {
  const p = w.pos; w.pos = p + 4; if (v !== undefined) write${u}(w, v, parent);
  const end = w.pos; w.pos = p; writeU32(w, end - p - 4); w.pos = end;
}
function fromJson${n}(v: unknown, parent?: Obj): unknown { return ${optional ? "v === undefined || v === null ? undefined : " : ""}fromJson${u}(v, parent); }
function toJson${n}(v: unknown): unknown { return ${optional ? "v === undefined ? null : " : ""}toJson${u}(v); }`;
  }
}

const emitter = new Emitter();
const nodes = objects as unknown as Record<string, Node>;
/** One table per operation, each holding the roots that operation is generated for (roots.ts). */
const table = (name: string, type: string, op: string, roots: readonly string[]): string =>
  `export const ${name}: CodecTables["${type}"] = {\n${roots.map((root) => `  ${root}: ${op}${emitter.id(nodes[root]!)},`).join("\n")}\n};`;
const tables = [
  table("readers", "readers", "read", READ_ROOTS),
  table("sizers", "sizers", "size", WRITE_ROOTS),
  table("writers", "writers", "write", WRITE_ROOTS),
  table("jsonReaders", "jsonReaders", "fromJson", JSON_ROOTS),
  table("jsonWriters", "jsonWriters", "toJson", JSON_ROOTS),
];
const source = `// Generated by codegen/codecs.ts from src/model/objects.ts (\`npm run build\`); not committed: edit objects.ts instead.
// One reader, sizer, writer, JSON reader and JSON writer per object; test/engines.test.ts checks them against the interpreter.
import { Fault, type Reader, type Writer } from "../bytes/cursor.js";
import { toHex } from "../bytes/hex.js";
import type { CodecTables } from "./engine.js";
import {
  invalid, readAmount, readBool, readBytes, readTag32, readTag8, readU16, readU32, readU64, readU8, readVarBytes, sizeAmount, sizeBool, sizeBytes,
  sizeTag, sizeU64, sizeUint, sizeVarBytes, truncated, typeFault, writeAmount, writeBool, writeBytes, writeU16, writeU32, writeU64, writeU8,
  writeVarBytes,
} from "./leaves.js";
${emitter.imports.size > 0 ? `import { ${[...emitter.imports].sort().join(", ")} } from "./rules.js";\n` : ""}import {
  Bounds, type Obj, checkOrder, distinctRule, lengthOf, jsonArray, jsonBool, jsonDecimal, jsonHex, jsonInteger, jsonObject, jsonTag,
  jsonU64Number, jsonVarHex, jsonVarHexOrEmpty, segment, sumAtMostRule, tagFault, u64NumberToJson,
} from "./runtime.js";
${emitter.parts.join("\n")}

// Mutable on purpose: the interpreter's selectCodecEngine swaps its own operations in for the tests.
${tables.join("\n")}
`;

writeFileSync(new URL("../../src/model/codecs.generated.ts", import.meta.url), source);
console.log(`src/model/codecs.generated.ts: ${source.length} characters`);
