// `npm run build:codecs`: writes src/model/codecs.generated.ts from the declarations of src/model/objects.ts: one
// reader, sizer, writer, JSON reader and JSON writer per object, array, union and payload, with fixed object shapes
// and each leaf field a call to leaves.ts with the schema's constants. It has exactly the interpreter's checks,
// codes, paths and offsets (test/engines.test.ts holds it to that); the code is written here, at build time, so
// nothing is compiled at run time (no eval, no new Function: strict Content-Security-Policy pages work). Also a
// reader of a message's JSON text straight into the model (text.ts's tokens; json-text.ts).
import { writeFileSync } from "node:fs";
import * as objects from "../src/model/objects.js";
import { JSON_ROOTS, READ_ROOTS, TEXT_LEFT_OUT, TEXT_ROOTS, WRITE_ROOTS } from "../src/model/roots.js";
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

/** How a leaf is read from JSON text (text.ts), as an expression; undefined for the nodes that get functions. */
function textLeaf(node: Node): string | undefined {
  switch (node.kind) {
    case "uint":
    case "amount":
      return `textInteger(${node.min}, ${node.max})`;
    case "tag":
      return `textInteger(${node.value}, ${node.value})`;
    case "u64":
      // Only milestones have a u64 written as a number, and the text readers leave them out (roots.ts).
      if (node.json !== "decimal") throw new Error("no text reader for a u64 written as a number");
      return "textDecimal()";
    case "bool":
      throw new Error("no text reader for a bool (only milestones have one, and the text readers leave them out)");
    case "bytes":
      return `textHex(${node.length})`;
    case "varBytes":
      return `textVarHex(${node.min}, ${node.max})`;
    default:
      return undefined;
  }
}

/** Whether JSON may leave a field out or give null: an optional payload, or bytes that are then empty. */
const mayBeAbsent = (node: Node): boolean => (node.kind === "payload" && node.optional) || (node.kind === "varBytes" && node.absentIsEmpty);

/**
 * One node for a key two variants of a union share when read from text: the same node, or integers of one width with
 * the bounds of both (each variant's own are checked once its type is known).
 */
function widened(a: Node, b: Node, where: string): Node {
  if (a === b) return a;
  const bounds = (n: Node): [number, number] | undefined => (n.kind === "tag" ? [n.value, n.value] : n.kind === "uint" || n.kind === "amount" ? [n.min, n.max] : undefined);
  const x = bounds(a);
  const y = bounds(b);
  const kind = (n: Node): string => (n.kind === "tag" ? `uint${n.width}` : n.kind === "uint" ? `uint${n.width}` : n.kind);
  if (x === undefined || y === undefined || kind(a) !== kind(b)) throw new Error(`${where}: a key shared by a union's variants must be the same node to be read from text`);
  return a.kind === "amount" ? { kind: "amount", min: Math.min(x[0], y[0]), max: Math.max(x[1], y[1]) } : { kind: "uint", width: (a as { width: 1 | 2 | 4 }).width, min: Math.min(x[0], y[0]), max: Math.max(x[1], y[1]) };
}

/** countAt (runtime.ts) written out for one path: the length of the array at `path` in `parent`, or -1. */
function countOf(path: readonly string[]): string {
  let expression = "parent";
  for (const key of path) expression = `(${expression} as Obj | undefined)?.[${lit(key)}]`;
  return `lengthOf(${expression})`;
}

const call = (id: string): Access => ({
  read: () => `read${id}(r)`,
  size: (x, parent) => `size${id}(${x}, ${parent})`,
  write: (x, parent) => `write${id}(w, ${x}, ${parent})`,
  fromJson: (x, parent) => `fromJson${id}(${x}, ${parent})`,
  toJson: (x) => `toJson${id}(${x})`,
});

class Emitter {
  readonly parts: string[] = [];
  private readonly texts = new Set<string>();
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

  /**
   * The expression that reads a node from JSON text: a leaf inline, anything else a call of its text function, emitted
   * once (only for what a text root reaches). A root's function takes `sub`, the stand-in for a required field that is
   * missing or null (or an empty array), for messages submitted without the fields a node fills.
   */
  text(node: Node, root = false): string {
    const inline = textLeaf(node);
    if (inline !== undefined) return inline;
    if (node.kind === "payload") return this.text(node.of);
    const id = this.id(node);
    const name = `fromText${root ? "Root" : ""}${id}`;
    if (!this.texts.has(name)) {
      this.texts.add(name);
      if (node.kind === "array") {
        this.parts.push(`
function ${name}(): unknown[] {
  const items: unknown[] = [];
  if (!textArray()) do { if (items.length === ${node.max}) miss(); items.push(${this.text(node.of)}); } while (textMore(0x5d));
  if (items.length < ${node.min}) miss();
  return items;
}`);
      } else if (node.kind === "struct" || node.kind === "union") {
        const variants = node.kind === "struct" ? [node] : node.variants.filter((v) => !leftOut.has(v));
        this.parts.push(this.textObject(variants, name, node.kind === "struct" ? `names${id}` : undefined, root));
      } else throw new Error(`a ${node.kind} is read from text inline`);
    }
    return `${name}()`;
  }

  /**
   * The text function of a struct, or of a union's variants read as one object: the keys of all of them in any order
   * (a key two variants share is read with the bounds of both), then, by `type`, the variant whose keys these must be,
   * its own bounds and rules, and its model object.
   */
  private textObject(variants: readonly StructNode[], name: string, names: string | undefined, root: boolean): string {
    const keys: { json: string; node: Node; absent: boolean }[] = [];
    const indices = variants.map((v) =>
      v.fields.map((f) => {
        let k = keys.findIndex((key) => key.json === f.json);
        if (k < 0) k = keys.push({ json: f.json, node: f.node, absent: mayBeAbsent(f.node) }) - 1;
        else keys[k]!.node = widened(keys[k]!.node, f.node, `${v.name}.${f.json}`);
        if (variants.length > 1 && (k === 0) !== (f.json === "type")) throw new Error(`${v.name}: the variants of a union read from text must have type first`);
        return k;
      }),
    );
    const cases = keys.map((key, k) => {
      const value = this.text(key.node);
      const read = key.absent ? `textNull() ? undefined : ${value}` : root ? `sub !== undefined && textAbsent(${key.node.kind === "array"}) ? sub(${k}) : ${value}` : value;
      return `${k === keys.length - 1 ? "default" : `case ${k}`}: v${k} = ${read}; break;`;
    });
    const finish = variants.map((v, i) => {
      const ks = indices[i]!;
      const mask = (pick: (f: (typeof v.fields)[number]) => boolean): number => v.fields.reduce((m, f, j) => (pick(f) ? m | (1 << ks[j]!) : m), 0);
      const required = mask((f) => !mayBeAbsent(f.node));
      const checks: string[] = [];
      if (variants.length > 1) checks.push(`if ((seen & ${~mask(() => true)}) !== 0) miss();`);
      const fill = root ? `{ if (sub === undefined) miss(); ${v.fields.map((f, j) => (mayBeAbsent(f.node) ? "" : `if ((seen & ${1 << ks[j]!}) === 0) v${ks[j]} = sub(${ks[j]});`)).join(" ")} }` : "miss();";
      checks.push(`if ((seen & ${required}) !== ${required}) ${fill}`);
      v.fields.forEach((f, j) => {
        const k = ks[j]!;
        if (f.node.kind === "varBytes" && f.node.absentIsEmpty) checks.push(`if (v${k} === undefined) v${k} = new Uint8Array(0);`);
        // A key read with the bounds of several variants, checked against this one's.
        const own = f.node.kind === "uint" || f.node.kind === "amount" ? [f.node.min, f.node.max] : undefined;
        const read = keys[k]!.node;
        if (own !== undefined && (read.kind === "uint" || read.kind === "amount") && (read.min !== own[0] || read.max !== own[1])) checks.push(`if ((v${k} as number) < ${own[0]} || (v${k} as number) > ${own[1]}) miss();`);
        const path = f.node.kind === "array" ? f.node.sameCountAs : undefined;
        if (path !== undefined) {
          let other = `v${ks[v.fields.findIndex((g) => g.key === path[0])]}`;
          for (const key of path.slice(1)) other = `(${other} as Obj)[${lit(key)}]`;
          checks.push(`if (lengthOf(v${k}) !== lengthOf(${other})) miss();`);
        }
      });
      const object = `return { ${v.fields.map((f, j) => `${lit(f.key)}: v${ks[j]}`).join(", ")} };`;
      return `${checks.join(" ")} ${object}`;
    });
    const body = variants.length > 1 ? `switch (v0) { ${variants.map((v, i) => `case ${variantTag(v)}: { ${finish[i]} }`).join(" ")} default: return miss(); }` : finish[0]!;
    const table = `textNames${name.slice(8)}`;
    return `
const ${table} = /* @__PURE__ */ textNames(${names ?? lit(keys.map((key) => key.json))});
function ${name}(${root ? "sub?: (field: number) => unknown" : ""}): Obj {
  let seen = 0; ${keys.map((_, k) => `let v${k}: unknown;`).join(" ")}
  for (let k = textFirst(${table}); k >= 0; k = textNext(${table}, seen, k + 1)) {
    seen |= 1 << k;
    switch (k) { ${cases.join(" ")} }
  }
  ${body}
}`;
  }

  private array(node: ArrayNode, n: string): string {
    const e = this.access(node.of);
    const { prefix, min, max, sameCountAs, countRule } = node;
    const bounds = `bounds${n}`;
    // The exact count the array at sameCountAs gives: `ex` itself where the caller passes it (the readers).
    const exact = (at: string, given?: string): string =>
      sameCountAs === undefined
        ? ""
        : `\n  { ${given === undefined ? `const ex = ${countOf(sameCountAs)}; ` : ""}if (count !== ex) throw new Fault("COUNT_OUT_OF_RANGE", \`expected exactly \${ex} elements (${countRule ?? "one each"}), got \${count}\`, ${at}); }`;
    const checkCount = (at: string, given?: string): string =>
      `if (count < ${min} || count > ${max}) throw new Fault("COUNT_OUT_OF_RANGE", \`expected ${min} .. ${max} elements, got \${count}\`, ${at});${exact(at, given)}`;
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
    // Where fields sit in an element, for the rules that name one (order failures name none).
    const spans = node.rules.length > 0 ? Object.fromEntries(fieldSpans(node.of)) : {};
    return `
const ${bounds} = /* @__PURE__ */ new Bounds(${max}, ${lit(spans)});
function read${n}(r: Reader${sameCountAs === undefined ? "" : ", ex: number"}): unknown[] {
  const p = r.pos; const count = readU${8 * prefix}(r, 0, ${prefix === 1 ? 255 : 65535});
  ${checkCount("p", "ex")}
  const items = new Array<unknown>(count); const s = ${bounds}.starts; let i = 0;
  try { for (; i < count; i++) { s[i] = r.pos; items[i] = ${e.read("")}; } } catch (err) { throw segment(err, i); }
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
    const fields = node.fields.map((f) => ({ key: lit(f.key), json: lit(f.json), node: f.node, a: this.access(f.node) }));
    const names = `names${n}`;
    const steps = (each: (f: (typeof fields)[number], i: number) => string): string => fields.map((f, i) => `${i === 0 ? "" : `f = ${i}; `}${each(f, i)}`).join("\n    ");
    // A reader builds its object at the end, from locals; an array counted by a field read before it is handed that count.
    const local = new Map(node.fields.map((f, i) => [f.key, `v${i}`]));
    const readField = (field: Node, i: number): string => {
      const path = field.kind === "array" ? field.sameCountAs : undefined;
      if (path === undefined) return this.access(field).read("");
      let other = local.get(path[0]!)!;
      if (Number(other.slice(1)) >= i) throw new Error(`${node.name}: sameCountAs ${path.join(".")} must name a field before the array`);
      for (const key of path.slice(1)) other = `(${other} as Obj)[${lit(key)}]`;
      return `read${this.id(field)}(r, lengthOf(${other}))`;
    };
    const guard = `catch (err) { throw segment(err, ${names}[f]!); }`;
    return `
const ${names} = ${lit(node.fields.map((f) => f.json))};
function read${n}(r: Reader): Obj {
  let f = 0;
  try {
    ${steps((f, i) => `const v${i} = ${readField(f.node, i)};`)}
    return { ${fields.map((f, i) => `${f.key}: v${i}`).join(", ")} };
  } ${guard}
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
function read${n}(r: Reader): unknown {
  const p = r.pos; if (r.end - p < ${node.width}) throw truncated(p, ${node.width}, r.end - p); const b = r.bytes; const t = ${node.width === 1 ? "b[p]!" : "(b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0"};
  switch (t) { ${cases((id) => `return read${id}(r);`)} default: throw typeFault(t, ${allowed}, p); }
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
function read${n}(r: Reader): unknown {
  const p = r.pos; const length = readU32(r, 0, 4294967295);
  if (length === 0) ${optional ? "return undefined;" : `throw new Fault("LENGTH_OUT_OF_RANGE", "a payload is required here", p);`}
  if (length > r.end - r.pos) throw new Fault("TRUNCATED", \`payload length \${length} exceeds the \${r.end - r.pos} bytes left\`, p);
  const outer = r.end; const end = r.pos + length; r.end = end; let value: unknown;
  try { value = read${u}(r); }
  catch (err) { if (err instanceof Fault && err.code === "TRUNCATED") throw new Fault("LENGTH_MISMATCH", \`payload holds more than its declared \${length} bytes\`, p); throw err; }
  // Not restored when the payload fails: the whole read fails with it.
  r.end = outer;
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
/** Union variants the text readers leave to JSON.parse (roots.ts). */
const leftOut = new Set<Node>(TEXT_LEFT_OUT.map((name) => nodes[name]!));
/** One table per operation, each holding the roots that operation is generated for (roots.ts). */
const table = (name: string, type: string, op: string, roots: readonly string[]): string =>
  `export const ${name}: CodecTables["${type}"] = {\n${roots.map((root) => `  ${root}: ${op}${emitter.id(nodes[root]!)},`).join("\n")}\n};`;
const tables = [
  table("readers", "readers", "read", READ_ROOTS),
  table("sizers", "sizers", "size", WRITE_ROOTS),
  table("writers", "writers", "write", WRITE_ROOTS),
  table("jsonReaders", "jsonReaders", "fromJson", JSON_ROOTS),
  table("jsonWriters", "jsonWriters", "toJson", JSON_ROOTS),
  `export const textReaders: Record<TextRoot, (sub?: (field: number) => unknown) => Obj> = {\n${TEXT_ROOTS.map((root) => `  ${root}: ${emitter.text(nodes[root]!, true).slice(0, -2)},`).join("\n")}\n};`,
];
const source = `// Generated by codegen/codecs.ts from src/model/objects.ts (\`npm run build\`); not committed: edit objects.ts instead.
// One reader, sizer, writer, JSON reader and JSON writer per object; test/engines.test.ts checks them against the interpreter.
// The text readers (fromTextX) read a message's JSON text for json-text.ts; test/json-text.test.ts holds them to JSON.parse
// followed by the JSON reader.
import { Fault, type Reader, type Writer } from "../bytes/cursor.js";
import { toHex } from "../bytes/hex.js";
import type { CodecTables } from "./engine.js";
import type { TextRoot } from "./roots.js";
import {
  invalid, readAmount, readBool, readBytes, readTag32, readTag8, readU16, readU32, readU64, readU8, readVarBytes, sizeAmount, sizeBool, sizeBytes,
  sizeTag, sizeU64, sizeUint, sizeVarBytes, truncated, typeFault, writeAmount, writeBool, writeBytes, writeU16, writeU32, writeU64, writeU8,
  writeVarBytes,
} from "./leaves.js";
${emitter.imports.size > 0 ? `import { ${[...emitter.imports].sort().join(", ")} } from "./rules.js";\n` : ""}import {
  Bounds, type Obj, checkOrder, distinctRule, lengthOf, jsonArray, jsonBool, jsonDecimal, jsonHex, jsonInteger, jsonObject, jsonTag,
  jsonU64Number, jsonVarHex, jsonVarHexOrEmpty, segment, sumAtMostRule, tagFault, u64NumberToJson,
} from "./runtime.js";
import { miss, textAbsent, textArray, textDecimal, textFirst, textHex, textInteger, textMore, textNames, textNext, textNull, textVarHex } from "./text.js";
${emitter.parts.join("\n")}

// Mutable on purpose: the interpreter's selectCodecEngine swaps its own operations in for the tests.
${tables.join("\n")}
`;

writeFileSync(new URL("../../src/model/codecs.generated.ts", import.meta.url), source);
console.log(`src/model/codecs.generated.ts: ${source.length} characters`);
