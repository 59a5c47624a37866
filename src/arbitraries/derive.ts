// The engine behind chrysalis-core/arbitraries: fast-check arbitraries derived at run time from the declarations of
// objects.ts (as interpreter.ts runs them), each value within a byte budget allotted before anything is drawn (so that
// fast-check shrinks every part on its own), and an unchecked writer for sort keys and malformed encodings. Rules hold
// by construction: counts within bounds and budget, sorted order, uniqueness, sums, same counts, and custom rules
// through the construction rules.ts keeps next to each. A plan puts one fault at one place, for the malformed encodings.
import fc from "fast-check";
import { compareBytes } from "../bytes/bytes.js";
import { MAX_MESSAGE_LENGTH, MAX_U64 } from "../bytes/limits.js";
import * as objects from "../model/objects.js";
import { type ArrayNode, type Field, type Node, type PayloadNode, type StructNode, type UnionNode, fieldSpans, fixedSize, variantTag } from "../model/schema.js";

type Obj = Record<string | symbol, unknown>;

/** On a generated object: the type tag to write instead of the schema's (a fault). */
export const WRONG_TAG = Symbol("wrong type tag");
/** On a payload's object: the length to declare, given the length it has (a fault). */
export const DECLARED_LENGTH = Symbol("declared payload length");

// ---------------------------------------------------------------------------------------------------------------
// Facts about the declarations.

/** An array that takes another's count (`sameCountAs`): the struct field it is, and the path to that other array. */
interface Dependent {
  readonly node: ArrayNode;
  readonly key: string;
  readonly sameCountAs: readonly string[];
}

/** For each array whose count others take, those others: a transaction's inputs → its unlock blocks. */
const dependentsOf = new Map<ArrayNode, Dependent[]>();
/** The arrays that take another's count. */
const dependent = new Set<Node>();

function eachNode(node: Node, seen: Set<Node>): void {
  if (seen.has(node)) return;
  seen.add(node);
  if (node.kind === "struct") for (const f of node.fields) eachNode(f.node, seen);
  else if (node.kind === "union") for (const v of node.variants) eachNode(v, seen);
  else if (node.kind === "array" || node.kind === "payload") eachNode(node.of, seen);
}

/** The node at `path` (field keys) inside a struct. */
export function fieldAt(struct: StructNode, path: readonly string[]): Node {
  let node: Node = struct;
  for (const key of path) {
    const field: Field | undefined = node.kind === "struct" ? node.fields.find((f) => f.key === key) : undefined;
    if (field === undefined) throw new Error(`${struct.name} has no field ${path.join(".")}`);
    node = field.node;
  }
  return node;
}

const everyNode = new Set<Node>();
for (const root of Object.values(objects) as Node[]) eachNode(root, everyNode);
for (const node of everyNode) {
  if (node.kind !== "struct") continue;
  for (const f of node.fields) {
    if (f.node.kind !== "array" || f.node.sameCountAs === undefined) continue;
    const reference = fieldAt(node, f.node.sameCountAs);
    if (reference.kind !== "array") throw new Error(`${node.name}.${f.key}: sameCountAs names no array`);
    dependentsOf.set(reference, [...(dependentsOf.get(reference) ?? []), { node: f.node, key: f.key, sameCountAs: f.node.sameCountAs }]);
    dependent.add(f.node);
  }
}

/** Bytes an array's dependents need per element of it, and for their counts: they are kept free when it is drawn. */
const reservedPerElement = (node: ArrayNode): number => (dependentsOf.get(node) ?? []).reduce((sum, d) => sum + maxCost(d.node.of), 0);
const reservedFixed = (node: ArrayNode): number => (dependentsOf.get(node) ?? []).reduce((sum, d) => sum + d.node.prefix, 0);

const minCosts = new Map<Node, number>();
const maxCosts = new Map<Node, number>();

/**
 * The fewest (`min`) or most bytes a value of `node` takes, counting for an array the room its dependents will take
 * (and nothing for a dependent, whose room was counted there).
 */
function cost(node: Node, most: boolean): number {
  const memo = most ? maxCosts : minCosts;
  const known = memo.get(node);
  if (known !== undefined) return known;
  let c: number;
  switch (node.kind) {
    case "varBytes":
      c = node.prefix + (most ? node.max : node.min);
      break;
    case "array":
      c = dependent.has(node) ? 0 : node.prefix + reservedFixed(node) + (most ? node.max : node.min) * (cost(node.of, most) + reservedPerElement(node));
      break;
    case "struct":
      c = node.fields.reduce((sum, f) => sum + cost(f.node, most), 0);
      break;
    case "union":
      c = (most ? Math.max : Math.min)(...node.variants.map((v) => cost(v, most)));
      break;
    case "payload":
      c = 4 + (most || !node.optional ? cost(node.of, most) : 0);
      break;
    default:
      c = fixedSize(node)!;
  }
  memo.set(node, c);
  return c;
}

/** The fewest bytes a value of `node` takes (an array's dependents' room counted with it). */
export const minCost = (node: Node): number => cost(node, false);
/** The most bytes a value of `node` takes (an array's dependents' room counted with it). */
export const maxCost = (node: Node): number => cost(node, true);

/** The variant of a union that a value is, by its type tag. */
export function variantOf(node: UnionNode, value: unknown): StructNode {
  const type = (value as Obj).type;
  const variant = node.variants.find((v) => variantTag(v) === type);
  if (variant === undefined) throw new Error(`no variant of type ${String(type)}`);
  return variant;
}

/**
 * Variable-length bytes that are to fill what is left of the value's budget once everything else is drawn (the
 * root resolves them, so a message reaches exactly its most bytes whatever else it holds).
 */
const FILL = Symbol("fill");
interface Fill {
  readonly [FILL]: true;
  readonly seed: number;
  readonly min: number;
  readonly max: number;
}
const isFill = (v: unknown): v is Fill => typeof v === "object" && v !== null && FILL in v;

/** The bytes a value takes counting for an array the room its dependents take (as `cost`), a fill as its least. */
function costOf(node: Node, value: unknown): number {
  switch (node.kind) {
    case "varBytes":
      return node.prefix + (isFill(value) ? value.min : (value as Uint8Array).length);
    case "array": {
      if (dependent.has(node)) return 0;
      const items = value as unknown[];
      return items.reduce((sum: number, item) => sum + costOf(node.of, item), node.prefix + reservedFixed(node) + items.length * reservedPerElement(node));
    }
    case "struct":
      return node.fields.reduce((sum, f) => sum + costOf(f.node, (value as Obj)[f.key]), 0);
    case "union":
      return costOf(variantOf(node, value), value);
    case "payload":
      return 4 + (value === undefined ? 0 : costOf(node.of, value));
    default:
      return fixedSize(node)!;
  }
}

const holds = new Map<Node, boolean>();

/** Whether every array under `root` whose count others take has those others under `root` too (a message does; an essence does not). */
function holdsDependents(root: Node): boolean {
  let known = holds.get(root);
  if (known === undefined) {
    const under = new Set<Node>();
    eachNode(root, under);
    known = [...dependentsOf].every(([reference, theirs]) => !under.has(reference) || theirs.every((d) => under.has(d.node)));
    holds.set(root, known);
  }
  return known;
}

/** `value` with its fills resolved: the first takes what `budget` leaves (up to its most), any later one its least. */
function resolveFills(root: Node, value: unknown, budget: number): unknown {
  let room = budget - (holdsDependents(root) ? serializedLength(root, value) : costOf(root, value));
  let found = false;
  const resolve = (v: unknown): unknown => {
    if (isFill(v)) {
      found = true;
      const extra = Math.max(0, Math.min(room, v.max - v.min));
      room -= extra;
      return seeded(v.min + extra, v.seed);
    }
    if (Array.isArray(v)) return v.some((x) => typeof x === "object" && x !== null && !(x instanceof Uint8Array)) ? v.map(resolve) : v;
    if (typeof v !== "object" || v === null || v instanceof Uint8Array) return v;
    const copy: Obj = { ...(v as Obj) };
    for (const key of Object.keys(copy)) copy[key] = resolve(copy[key]);
    return copy;
  };
  const resolved = resolve(value);
  return found ? resolved : value;
}

// ---------------------------------------------------------------------------------------------------------------
// The unchecked writer: what the codec would write, from any value, honouring the fault marks.

class Out {
  bytes = new Uint8Array(MAX_MESSAGE_LENGTH);
  view = new DataView(this.bytes.buffer);
  pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(2 * this.bytes.length, this.pos + n));
    grown.set(this.bytes);
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  uint(width: number, v: number): void {
    this.room(width);
    if (width === 1) this.view.setUint8(this.pos, v);
    else if (width === 2) this.view.setUint16(this.pos, v, true);
    else this.view.setUint32(this.pos, v, true);
    this.pos += width;
  }

  u64(v: number | bigint): void {
    this.room(8);
    this.view.setBigUint64(this.pos, BigInt(v), true);
    this.pos += 8;
  }

  put(b: Uint8Array): void {
    this.room(b.length);
    this.bytes.set(b, this.pos);
    this.pos += b.length;
  }
}

function write(o: Out, node: Node, v: unknown): void {
  switch (node.kind) {
    case "uint":
      return o.uint(node.width, v as number);
    case "u64":
    case "amount":
      return o.u64(v as number | bigint);
    case "bool":
      return o.uint(1, typeof v === "boolean" ? Number(v) : (v as number));
    case "tag":
      return o.uint(node.width, node.value);
    case "bytes":
      return o.put(v as Uint8Array);
    case "varBytes":
      if (isFill(v)) {
        o.uint(node.prefix, v.min);
        return o.put(new Uint8Array(v.min));
      }
      o.uint(node.prefix, (v as Uint8Array).length);
      return o.put(v as Uint8Array);
    case "array":
      o.uint(node.prefix, (v as unknown[]).length);
      for (const item of v as unknown[]) write(o, node.of, item);
      return;
    case "struct": {
      const obj = v as Obj;
      for (const f of node.fields) {
        if (f.node.kind === "tag" && WRONG_TAG in obj) o.uint(f.node.width, obj[WRONG_TAG] as number);
        else write(o, f.node, obj[f.key]);
      }
      return;
    }
    case "union":
      return write(o, variantOf(node, v), v);
    case "payload": {
      const at = o.pos;
      o.uint(4, 0);
      if (v !== undefined) write(o, node.of, v);
      const length = o.pos - at - 4;
      const declared = v === undefined ? undefined : ((v as Obj)[DECLARED_LENGTH] as ((length: number) => number) | undefined);
      o.view.setUint32(at, declared === undefined ? length : declared(length), true);
      return;
    }
  }
}

/** The serialized form of `value` as `node`, written as given: no rule is checked, fault marks are honoured. */
export function serialize(node: Node, value: unknown): Uint8Array {
  // One buffer for every call (write never calls serialize), as big as a message and grown past it when needed.
  out.pos = 0;
  write(out, node, value);
  return out.bytes.slice(0, out.pos);
}

const out = new Out();

/** How many bytes `value` serializes to. */
function serializedLength(node: Node, value: unknown): number {
  out.pos = 0;
  write(out, node, value);
  return out.pos;
}

// ---------------------------------------------------------------------------------------------------------------
// Sorted and distinct by construction.

/** Where each fixed-length bytes field of a value starts in its serialized form, and the keys that lead to it. */
function bytesFields(node: Node, v: unknown, start: number, keys: readonly string[], out: { keys: readonly string[]; start: number }[]): number {
  switch (node.kind) {
    case "bytes":
      out.push({ keys, start });
      return start + node.length;
    case "struct": {
      let at = start;
      for (const f of node.fields) at = bytesFields(f.node, (v as Obj)[f.key], at, [...keys, f.key], out);
      return at;
    }
    case "union":
      return bytesFields(variantOf(node, v), v, start, keys, out);
    default:
      return start + (fixedSize(node) ?? serialize(node, v).length);
  }
}

function replaceAt(v: unknown, keys: readonly string[], replace: (b: Uint8Array) => Uint8Array): unknown {
  if (keys.length === 0) return replace(v as Uint8Array);
  const [key, ...rest] = keys as [string, ...string[]];
  return { ...(v as Obj), [key]: replaceAt((v as Obj)[key], rest, replace) };
}

/** The next byte string in the protocol's order (wrapping past all 0xff). */
function increment(b: Uint8Array): Uint8Array {
  const out = b.slice();
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = (out[i]! + 1) & 0xff;
    if (out[i] !== 0) break;
  }
  return out;
}

/** A copy of `v` whose last bytes field starting before byte `limit` holds the next byte string. */
function bumped(node: Node, v: unknown, limit: number): unknown {
  const fields: { keys: readonly string[]; start: number }[] = [];
  bytesFields(node, v, 0, [], fields);
  const last = fields.filter((f) => f.start < limit).at(-1);
  if (last === undefined) throw new Error("no bytes field to tell two elements apart");
  return replaceAt(v, last.keys, increment);
}

const samePrefix = (a: Uint8Array, b: Uint8Array, n: number): boolean => {
  if (n === Infinity && a.length !== b.length) return false;
  const end = Math.min(n, a.length, b.length);
  for (let i = 0; i < end; i++) if (a[i] !== b[i]) return false;
  return true;
};

/** `items` in ascending serialized order. */
export function sortedBySerializedForm(node: Node, items: readonly unknown[]): unknown[] {
  return items
    .map((v) => ({ v, k: serialize(node, v) }))
    .sort((a, b) => compareBytes(a.k, b.k))
    .map((x) => x.v);
}

/**
 * `items` in ascending serialized order with no two neighbours equal in their first `prefix` bytes (Infinity: in
 * all of them): a repeat is made distinct by taking the next byte string in its last bytes field within the prefix.
 */
export function sortedDistinct(node: Node, items: readonly unknown[], prefix: number): unknown[] {
  let keyed = items.map((v) => ({ v, k: serialize(node, v) }));
  for (let pass = 0; ; pass++) {
    keyed.sort((a, b) => compareBytes(a.k, b.k));
    if (prefix === 0) break;
    let changed = false;
    for (let i = 1; i < keyed.length; i++) {
      if (!samePrefix(keyed[i - 1]!.k, keyed[i]!.k, prefix)) continue;
      const v = bumped(node, keyed[i]!.v, prefix);
      keyed[i] = { v, k: serialize(node, v) };
      changed = true;
    }
    if (!changed) break;
    if (pass > 1000) throw new Error("could not make the elements distinct");
    keyed = [...keyed];
  }
  return keyed.map((x) => x.v);
}

const prefixes = new Map<ArrayNode, number>();

/** How many leading bytes must differ between neighbours of a sorted array: its distinct rules', else all of them when strict. */
function distinctPrefix(node: ArrayNode): number {
  let prefix = prefixes.get(node);
  if (prefix === undefined) {
    const spans = fieldSpans(node.of);
    const throughs = node.rules.flatMap((r) => (r.kind === "distinct" ? [spans.get(r.through)![1]] : []));
    prefix = throughs.length > 0 ? Math.min(...throughs) : node.order === "strict" ? Infinity : 0;
    prefixes.set(node, prefix);
  }
  return prefix;
}

// ---------------------------------------------------------------------------------------------------------------
// Distributions: each bound often, shrinking toward the small end.

/** Generates `value`; shrinks as an integer of lo .. value toward lo (so a maximum drawn on purpose still shrinks). */
class Toward extends fc.Arbitrary<number> {
  private readonly range: fc.Arbitrary<number>;

  constructor(
    private readonly value: number,
    lo: number,
  ) {
    super();
    this.range = fc.integer({ min: lo, max: value });
  }

  generate(): fc.Value<number> {
    return new fc.Value(this.value, undefined);
  }

  canShrinkWithoutContext(value: unknown): value is number {
    return this.range.canShrinkWithoutContext(value);
  }

  shrink(value: number, context: unknown): fc.Stream<fc.Value<number>> {
    return this.range.shrink(value, context);
  }
}

/**
 * How much more often a count or length is drawn small than anywhere (and than at its most): one time in ten each
 * for a short range, one in forty for a long one (many elements, long data), so that every bound is seen within a
 * couple of thousand messages while most messages stay small and quick to test.
 */
const smallWeight = (range: number): number => (range > 64 ? 38 : 8);

/** A count or length lo .. hi: mostly small (up to lo + `small`, lo itself often), sometimes anywhere, as often exactly hi. */
function sizeIn(lo: number, hi: number, small: number): fc.Arbitrary<number> {
  if (hi <= lo) return fc.constant(lo);
  return fc.oneof(
    { arbitrary: fc.integer({ min: lo, max: Math.min(hi, lo + small) }), weight: smallWeight(hi - lo) },
    { arbitrary: fc.integer({ min: lo, max: hi }), weight: 1 },
    { arbitrary: new Toward(hi, lo), weight: 1 },
  );
}

/** An amount lo .. hi: mostly near lo, sometimes anywhere, sometimes exactly hi. */
function amountIn(lo: number, hi: number): fc.Arbitrary<number> {
  if (hi <= lo) return fc.constant(lo);
  return fc.oneof(
    { arbitrary: fc.integer({ min: lo, max: Math.min(hi, lo + 10_000_000) }), weight: 3 },
    { arbitrary: fc.integer({ min: lo, max: hi }), weight: 1 },
    { arbitrary: new Toward(hi, lo), weight: 1 },
  );
}

const exactBytes = (length: number): fc.Arbitrary<Uint8Array> => fc.uint8Array({ minLength: length, maxLength: length });

/** `length` bytes from a 32-bit seed (xorshift; seed 0 gives zeros): long data without drawing, or shrinking, each byte. */
function seeded(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 0;
  if (x === 0) return out;
  for (let i = 0; i < length; i++) {
    if ((i & 3) === 0) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
    }
    out[i] = x >>> (8 * (i & 3));
  }
  return out;
}

/** Variable-length bytes: drawn byte by byte up to this length, longer ones from a seed. */
const DRAWN_BYTES = 256;
const contentOf = (length: number): fc.Arbitrary<Uint8Array> => (length <= DRAWN_BYTES ? exactBytes(length) : fc.nat().map((seed) => seeded(length, seed)));

/**
 * Draws a fill of min .. max bytes (resolved by the root); shrinks as seeded bytes of a length from lo .. `from` (what
 * the bytes were allotted, so every shrink stays within the budget) toward min.
 */
class Filling extends fc.Arbitrary<Uint8Array> {
  private readonly lengths: fc.Arbitrary<number>;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly from: number,
  ) {
    super();
    this.lengths = fc.integer({ min, max: from });
  }

  generate(mrng: fc.Random): fc.Value<Uint8Array> {
    const fill: Fill = { [FILL]: true, seed: mrng.nextInt(0, 0x7fff_ffff), min: this.min, max: this.max };
    return new fc.Value(fill as unknown as Uint8Array, { seed: fill.seed, length: undefined });
  }

  canShrinkWithoutContext(_value: unknown): _value is Uint8Array {
    return false;
  }

  shrink(value: Uint8Array, context: unknown): fc.Stream<fc.Value<Uint8Array>> {
    const { seed, length } = context as { seed: number; length: unknown };
    const from = isFill(value) ? this.from : value.length;
    return this.lengths.shrink(from, isFill(value) ? undefined : length).map((l) => new fc.Value(seeded(l.value, seed), { seed, length: l.context }));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The derivation.

/** Where options narrow what the schema allows. */
export interface Caps {
  /** The most elements of an array, bytes of variable-length bytes, or tokens of an amount. */
  readonly max: ReadonlyMap<Node, number>;
  /** The union variants allowed, by type tag. */
  readonly variants: ReadonlyMap<Node, ReadonlySet<number>>;
  /** Optional payloads that are always left out, or always there. */
  readonly absent: ReadonlySet<PayloadNode>;
  readonly present: ReadonlySet<PayloadNode>;
}

/** The fewest bytes a value of `node` takes under `caps` (a payload they require, of the kinds they allow). */
export function fewestBytes(node: Node, caps: Caps): number {
  switch (node.kind) {
    case "struct":
      return node.fields.reduce((sum, f) => sum + fewestBytes(f.node, caps), 0);
    case "union": {
      const allowed = caps.variants.get(node);
      return Math.min(...node.variants.filter((v) => allowed === undefined || allowed.has(variantTag(v))).map((v) => fewestBytes(v, caps)));
    }
    case "payload":
      return caps.absent.has(node) || (node.optional && !caps.present.has(node)) ? 4 : 4 + fewestBytes(node.of, caps);
    default:
      return minCost(node);
  }
}

/** No option narrows anything. */
export const NO_CAPS: Caps = { max: new Map(), variants: new Map(), absent: new Set(), present: new Set() };

/** One fault, put by a plan at its site. */
export type Fault =
  /** No fault: the site is only made to exist (an optional payload on the way to it is there). */
  | { readonly kind: "present" }
  /** An array of exactly this many elements. */
  | { readonly kind: "count"; readonly exact: number }
  /** An array that takes another's count (sameCountAs) holds one more or one fewer. */
  | { readonly kind: "countOffset" }
  /** Variable-length bytes of exactly this length. */
  | { readonly kind: "length"; readonly exact: number }
  /** A valid array, then changed. */
  | { readonly kind: "transform"; apply(items: readonly unknown[], choice: number): unknown[] }
  /** A number (or boolean) drawn from here instead. */
  | { readonly kind: "value"; readonly value: fc.Arbitrary<unknown> }
  /** A union's or struct's type tag written as one drawn from here. */
  | { readonly kind: "tag"; readonly tag: fc.Arbitrary<number> }
  /** A payload whose declared length is this function of its length. */
  | { readonly kind: "declaredLength"; readonly declared: fc.Arbitrary<(length: number) => number> };

/**
 * One fault at one place. Paths name what lies on the way from the root: `/field` for a struct's field, `/<Name>` for
 * a union's variant, `/[]` for an array's element (one of them gets what lies below).
 */
export interface Plan {
  readonly site: string;
  readonly fault: Fault;
  /** Arrays (by path) that must hold at least this many elements for the fault to apply. */
  readonly atLeast: ReadonlyMap<string, number>;
}

/** On an array whose count others take: their elements, drawn with it, until the struct that holds them takes them. */
const PARTNERS = Symbol("elements of the arrays that take this one's count");

interface Extra {
  /** Inside an array with a sum rule: the most each element's field of that name may hold. */
  readonly fieldCap?: { readonly key: string; readonly max: number } | undefined;
  /** For an amount: the most it may hold. */
  readonly valueMax?: number | undefined;
  /** The way (field keys) to an array whose dependents are to be drawn with it; empty at that array. */
  readonly partners?: readonly string[] | undefined;
}

const keyOf = (extra: Extra): string => `${extra.fieldCap?.key ?? ""}:${extra.fieldCap?.max ?? ""}:${extra.valueMax ?? ""}:${extra.partners?.join("/") ?? "-"}`;

/** A copy of `o` with the array at `path` copied plain, and what that array carried for its dependents. */
function takePartners(o: Obj, path: readonly string[]): { value: Obj; partners: ReadonlyMap<ArrayNode, unknown[]> } {
  const [key, ...rest] = path as [string, ...string[]];
  const inner = o[key];
  if (rest.length === 0) {
    const items = inner as unknown[] & { [PARTNERS]?: ReadonlyMap<ArrayNode, unknown[]> };
    return { value: { ...o, [key]: items.slice() }, partners: items[PARTNERS] ?? new Map() };
  }
  const taken = takePartners(inner as Obj, rest);
  return { value: { ...o, [key]: taken.value }, partners: taken.partners };
}

/**
 * The arbitraries of the schema's nodes under some caps, and with a plan's fault where one is given. Every part of a
 * value is drawn by an arbitrary of its own, within bytes allotted before anything is drawn, so fast-check shrinks
 * each part on its own; only an array's count and its elements (and bytes' length and content) are drawn one after
 * the other.
 */
export class Deriver {
  private readonly memo = new Map<Node, Map<string, fc.Arbitrary<unknown>>>();
  private watched: readonly string[] = [];

  constructor(
    private readonly caps: Caps = NO_CAPS,
    private readonly plan?: Plan,
  ) {}

  /** Values of `node` that take at most `budget` bytes (counting for an array the room its dependents take). */
  root(node: Node, budget: number): fc.Arbitrary<unknown> {
    if (this.plan !== undefined) {
      const paths = [this.plan.site, ...this.plan.atLeast.keys()];
      // An array that takes another's count is drawn with that other: where the plan lies in one, it watches both.
      this.watched = [...paths, ...paths.flatMap((p) => referencesOn(node, p))];
    }
    return this.of(node, budget, "").map((v) => resolveFills(node, v, budget));
  }

  /** The same at `path`, where the node lies: only what the plan watches keeps its path (and its own arbitrary). */
  private of(node: Node, budget: number, path: string | undefined, extra: Extra = {}): fc.Arbitrary<unknown> {
    const at = this.watches(path) ? path : undefined;
    // Off the plan and with room for the most the node takes, one arbitrary serves every place.
    const room = at === undefined && budget >= maxCost(node) ? Infinity : budget;
    const key = `${room}|${at ?? ""}|${keyOf(extra)}`;
    let byKey = this.memo.get(node);
    if (byKey === undefined) this.memo.set(node, (byKey = new Map()));
    let arbitrary = byKey.get(key);
    if (arbitrary === undefined) byKey.set(key, (arbitrary = this.build(node, room, at, extra)));
    return arbitrary;
  }

  private watches(path: string | undefined): path is string {
    return path !== undefined && this.watched.some((p) => p === path || p.startsWith(`${path}/`));
  }

  private faultAt(path: string | undefined): Fault | undefined {
    return path !== undefined && this.plan?.site === path ? this.plan.fault : undefined;
  }

  /** The step the plan's site takes below `path`, if it lies below. */
  private stepBelow(path: string | undefined): string | undefined {
    if (path === undefined || this.plan === undefined || !this.plan.site.startsWith(`${path}/`)) return undefined;
    return this.plan.site.slice(path.length + 1).split("/")[0];
  }

  /** The fewest bytes of `node` at `path` as the plan has it there (a count or length it fixes, an element it needs). */
  private fewestAt(node: Node, path: string | undefined): number {
    if (!this.watches(path)) return minCost(node);
    const fault = this.faultAt(path);
    switch (node.kind) {
      case "varBytes":
        return fault?.kind === "length" ? node.prefix + fault.exact : minCost(node);
      case "array": {
        if (dependent.has(node)) return 0;
        const count = Math.max(fault?.kind === "count" ? fault.exact : node.min, this.plan?.atLeast.get(path) ?? 0);
        const element = minCost(node.of) + reservedPerElement(node);
        const below = this.fewestAt(node.of, `${path}/[]`) + reservedPerElement(node);
        return node.prefix + reservedFixed(node) + (count > 0 ? below + (count - 1) * element : 0);
      }
      case "struct":
        return node.fields.reduce((sum, f) => sum + this.fewestAt(f.node, `${path}/${f.key}`), 0);
      case "union":
        return Math.min(...this.variantsAt(node, Infinity, path).map((v) => this.fewestAt(v, `${path}/<${v.name}>`)));
      case "payload":
        return 4 + this.fewestAt(node.of, path);
      default:
        return minCost(node);
    }
  }

  /** The most bytes `node` at `path` may take: its schema's most, or more where the plan's fault asks it. */
  private mostAt(node: Node, path: string | undefined): number {
    return Math.max(maxCost(node), this.fewestAt(node, path));
  }

  /** The variants of a union the caps allow, the plan leads through and `budget` has room for. */
  private variantsAt(node: UnionNode, budget: number, path: string | undefined): StructNode[] {
    const allowed = this.caps.variants.get(node);
    const step = this.stepBelow(path);
    return node.variants.filter((v) => {
      if ((allowed !== undefined && !allowed.has(variantTag(v))) || (step !== undefined && step !== `<${v.name}>`)) return false;
      return budget === Infinity || this.fewestAt(v, path === undefined ? undefined : `${path}/<${v.name}>`) <= budget;
    });
  }

  private build(node: Node, budget: number, path: string | undefined, extra: Extra): fc.Arbitrary<unknown> {
    const fault = this.faultAt(path);
    const value = fault?.kind === "value" ? fault.value : undefined;
    switch (node.kind) {
      case "uint":
        return value ?? fc.integer({ min: node.min, max: node.max });
      case "u64":
        return fc.bigInt({ min: 0n, max: MAX_U64 });
      case "amount":
        return value ?? amountIn(node.min, Math.min(node.max, this.caps.max.get(node) ?? Infinity, extra.valueMax ?? Infinity));
      case "bool":
        return value ?? fc.boolean();
      case "tag":
        return fc.constant(node.value);
      case "bytes":
        return exactBytes(node.length);
      case "varBytes": {
        if (fault?.kind === "length") return contentOf(fault.exact);
        const most = Math.min(node.max, this.caps.max.get(node) ?? Infinity);
        const hi = Math.min(most, budget - node.prefix);
        if (hi < node.min) throw new Error(`no room for ${node.min} bytes`);
        if (hi === node.min) return contentOf(hi);
        // As sizeIn, but the most is a fill: as many bytes as the value has room for once the rest is drawn.
        return fc.oneof(
          { arbitrary: fc.integer({ min: node.min, max: Math.min(hi, node.min + 32) }).chain(contentOf), weight: smallWeight(hi - node.min) },
          { arbitrary: fc.integer({ min: node.min, max: hi }).chain(contentOf), weight: 1 },
          { arbitrary: most > hi ? new Filling(node.min, most, hi) : new Toward(hi, node.min).chain(contentOf), weight: 1 },
        );
      }
      case "array":
        return this.array(node, budget, path, extra, fault);
      case "struct":
        return this.tagged(this.struct(node, budget, path, extra), fault);
      case "union": {
        const variants = this.variantsAt(node, budget, path);
        if (variants.length === 0) throw new Error(`no variant fits in ${budget} bytes`);
        const arbitraries = variants.map((v) => this.of(v, budget, path === undefined ? undefined : `${path}/<${v.name}>`, extra));
        // Shrinking also tries the first variant the schema declares.
        return this.tagged(arbitraries.length === 1 ? arbitraries[0]! : fc.oneof({ withCrossShrink: true }, ...arbitraries), fault);
      }
      case "payload":
        return this.payload(node, budget, path, extra, fault);
    }
  }

  private tagged(arbitrary: fc.Arbitrary<unknown>, fault: Fault | undefined): fc.Arbitrary<unknown> {
    if (fault?.kind !== "tag") return arbitrary;
    return fc.tuple(arbitrary, fault.tag).map(([v, tag]) => ({ ...(v as Obj), [WRONG_TAG]: tag }));
  }

  private payload(node: PayloadNode, budget: number, path: string | undefined, extra: Extra, fault: Fault | undefined): fc.Arbitrary<unknown> {
    const required = !node.optional || path !== undefined || this.caps.present.has(node);
    const possible = !this.caps.absent.has(node) && budget - 4 >= this.fewestAt(node.of, path);
    if (required && !possible) throw new Error("no room for a payload that must be there");
    if (!possible) return fc.constant(undefined);
    let present = this.of(node.of, budget - 4, path, extra);
    if (fault?.kind === "declaredLength") present = fc.tuple(present, fault.declared).map(([v, declared]) => ({ ...(v as Obj), [DECLARED_LENGTH]: declared }));
    if (required) return present;
    // As often absent as each kind of payload it may hold.
    const kinds = this.caps.variants.get(node.of)?.size ?? node.of.variants.length;
    return fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: present, weight: kinds });
  }

  /**
   * Fields in wire order, each drawn on its own. When the struct has room for the most every field takes, each gets
   * that; otherwise bytes are allotted before anything is drawn, each field in turn taking its most while keeping the
   * fewest the ones after it need, and every field of variable size has the first claim in one allotment: so a field
   * early in the wire (a milestone's keys) and one late (its receipt) each reach their most. A field that takes
   * another's count is drawn with that other array.
   */
  private struct(node: StructNode, budget: number, path: string | undefined, extra: Extra): fc.Arbitrary<Obj> {
    const fields = node.fields;
    const pathOf = (f: Field): string | undefined => (path === undefined ? undefined : `${path}/${f.key}`);
    const own = fields.filter((f) => !dependent.has(f.node));
    const dependents = fields.filter((f) => dependent.has(f.node)).map((f) => ({ key: f.key, sameCountAs: (f.node as ArrayNode).sameCountAs! }));
    const extraOf = (f: Field): Extra => {
      const partners = dependents.filter((d) => d.sameCountAs[0] === f.key).map((d) => d.sameCountAs.slice(1));
      const below = extra.partners !== undefined && extra.partners[0] === f.key ? [extra.partners.slice(1)] : [];
      const way = [...partners, ...below][0];
      return { ...(extra.fieldCap?.key === f.key ? { valueMax: extra.fieldCap.max } : {}), ...(way !== undefined ? { partners: way } : {}) };
    };
    const allot = (order: readonly Field[]): Map<Field, number> => {
      const allotted = new Map<Field, number>();
      let left = budget;
      order.forEach((f, i) => {
        const later = order.slice(i + 1).reduce((sum, g) => sum + this.fewestAt(g.node, pathOf(g)), 0);
        const bytes = Math.min(this.mostAt(f.node, pathOf(f)), left - later);
        allotted.set(f, bytes);
        left -= bytes;
      });
      return allotted;
    };
    const most = own.reduce((sum, f) => sum + this.mostAt(f.node, pathOf(f)), 0);
    // Each field of variable size in turn has the first claim, the others following in wire order; the same
    // allotment reached from several fields is drawn as much more often.
    // (Fields with no room for their most at all, those holding a fill, take what the others leave.)
    const variable = own.filter((f) => this.fewestAt(f.node, pathOf(f)) !== this.mostAt(f.node, pathOf(f)) && this.mostAt(f.node, pathOf(f)) <= budget);
    const allotments: { allotted: Map<Field, number>; weight: number }[] = [];
    for (const first of most <= budget || variable.length === 0 ? own.slice(0, 1) : variable) {
      const allotted = allot([first, ...own.filter((f) => f !== first)]);
      const same = allotments.find((a) => sameAllotment(a.allotted, allotted));
      if (same !== undefined) same.weight++;
      else allotments.push({ allotted, weight: 1 });
    }
    const objectOf = (values: readonly unknown[]): Obj => {
      let o: Obj = {};
      own.forEach((f, i) => {
        if (values[i] !== undefined) o[f.key] = values[i];
      });
      for (const d of dependents) {
        const taken = takePartners(o, d.sameCountAs);
        o = taken.value;
        o[d.key] = taken.partners.get(fieldAt(node, [d.key]) as ArrayNode) ?? [];
      }
      // Wire order, as a decoder builds it.
      return Object.fromEntries(fields.filter((f) => f.key in o).map((f) => [f.key, o[f.key]]));
    };
    const arbitraries = allotments.map(({ allotted, weight }) => ({ arbitrary: fc.tuple(...own.map((f) => this.of(f.node, allotted.get(f)!, pathOf(f), extraOf(f)))).map(objectOf), weight }));
    return arbitraries.length === 1 ? arbitraries[0]!.arbitrary : fc.oneof(...arbitraries);
  }

  private array(node: ArrayNode, budget: number, path: string | undefined, extra: Extra, fault: Fault | undefined): fc.Arbitrary<unknown[]> {
    if (dependent.has(node)) throw new Error("an array that takes another's count is drawn with that array");
    const room = Math.floor((budget - node.prefix - reservedFixed(node)) / (maxCost(node.of) + reservedPerElement(node)));
    if (fault?.kind === "count") {
      if (fault.exact > room) throw new Error(`no room for ${fault.exact} elements`);
      return this.elements(node, fault.exact, path, fault, extra);
    }
    const lo = Math.max(node.min, (path === undefined ? undefined : this.plan?.atLeast.get(path)) ?? 0);
    const hi = Math.min(node.max, this.caps.max.get(node) ?? Infinity, room);
    if (hi < lo) throw new Error(`no room for ${lo} elements`);
    return sizeIn(lo, hi, 3).chain((count) => this.elements(node, count, path, fault, extra));
  }

  /**
   * `count` elements meeting the array's rules: each of them drawn off the plan, one of them (when the plan lies
   * below) replaced by one drawn on it; then arranged (a custom rule's construction), sorted and made distinct as the
   * array's order and distinct rules ask; then the plan's change, if the fault is this array's. With them, where the
   * struct above asks, the elements of the arrays that take this one's count.
   */
  private elements(node: ArrayNode, count: number, path: string | undefined, fault: Fault | undefined, extra: Extra): fc.Arbitrary<unknown[]> {
    const sum = node.rules.find((r) => r.kind === "sumAtMost");
    // Each element's share of the sum, so that any count of them stays within it.
    const fieldCap = sum?.kind === "sumAtMost" && count > 0 ? { key: sum.field, max: Math.floor(sum.max / count) } : undefined;
    const custom = node.rules.find((r) => r.kind === "custom");
    let items: fc.Arbitrary<unknown[]>;
    if (custom?.kind === "custom") {
      const construction = custom.construction;
      if (construction === undefined || node.of.kind !== "union") throw new Error("a custom rule without a construction: the arbitraries cannot meet it");
      const variant = node.of.variants.find((v) => variantTag(v) === construction.variant)!;
      const distinct = fc.array(this.of(variant, Infinity, undefined), { minLength: count, maxLength: count }).map((vs) => sortedDistinct(variant, vs, Infinity));
      // Choices of 0 .. 255: about half the elements a new signature, the others a reference (see signersFrom).
      const choices = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: count, maxLength: count });
      items = fc.tuple(distinct, choices).map(([d, c]) => construction.arrange(d, c));
    } else {
      items = fc.array(this.of(node.of, Infinity, undefined, { fieldCap }), { minLength: count, maxLength: count });
    }
    const elementPath = path === undefined ? undefined : `${path}/[]`;
    const special = this.watches(elementPath) && count > 0 ? this.of(node.of, Infinity, elementPath, { fieldCap }) : fc.constant(undefined);
    const choice = fault?.kind === "transform" ? fc.nat() : fc.constant(0);
    const partners = extra.partners?.length === 0 ? this.partners(node, count, path) : fc.constant(undefined);
    const prefix = distinctPrefix(node);
    return fc.tuple(items, special, fc.nat(), choice, partners).map(([drawn, one, at, c, theirs]) => {
      let out = drawn.slice();
      if (one !== undefined) out[at % out.length] = one;
      if (node.order !== undefined) out = sortedDistinct(node.of, out, prefix);
      if (fault?.kind === "transform") out = fault.apply(out, c);
      if (theirs !== undefined) Object.defineProperty(out, PARTNERS, { value: theirs, enumerable: false });
      return out;
    });
  }

  /** The elements of the arrays that take the count of the array at `path`, `count` each (or as the plan has it there). */
  private partners(node: ArrayNode, count: number, path: string | undefined): fc.Arbitrary<ReadonlyMap<ArrayNode, unknown[]>> {
    const theirs = (dependentsOf.get(node) ?? []).map((d) => {
      // The struct that holds both is where the path to this array starts.
      const holder = path === undefined ? undefined : path.slice(0, path.length - d.sameCountAs.join("/").length - 1);
      const at = holder === undefined ? undefined : `${holder}/${d.key}`;
      const fault = this.faultAt(at);
      let n = count;
      if (fault?.kind === "count") n = fault.exact;
      else if (fault?.kind === "countOffset") n = count < d.node.max ? count + 1 : count - 1;
      return this.elements(d.node, n, this.watches(at) ? at : undefined, fault, {}).map((items) => [d.node, items] as const);
    });
    return fc.tuple(...theirs).map((pairs) => new Map(pairs));
  }
}

/** The paths of the arrays whose count is taken by an array on the way from `root` to `path`. */
function referencesOn(root: Node, path: string): string[] {
  const found: string[] = [];
  let node: Node | undefined = root;
  let at = "";
  for (const step of path.split("/").slice(1)) {
    while (node?.kind === "payload") node = node.of;
    if (node === undefined) break;
    if (node.kind === "struct") {
      const field: Field | undefined = node.fields.find((f) => f.key === step);
      if (field?.node.kind === "array" && field.node.sameCountAs !== undefined) found.push(`${at}/${field.node.sameCountAs.join("/")}`);
      node = field?.node;
    } else if (node.kind === "union") node = node.variants.find((v) => `<${v.name}>` === step);
    else if (node.kind === "array") node = node.of;
    else break;
    at = `${at}/${step}`;
  }
  return found;
}

/** Whether two allotments give every field the same bytes. */
const sameAllotment = (a: ReadonlyMap<Field, number>, b: ReadonlyMap<Field, number>): boolean => [...a].every(([f, n]) => b.get(f) === n);
