// The schema language of the wire objects. Each builder's value describes a field once: its binary layout, its JSON
// form and its rules; each builder's type carries the model and JSON types, so objects.ts declares every object once and
// `Model<typeof x>` / `Json<typeof x>` are inferred from it (zod's z.infer, serde derive, iota.go's serix).
//
// Two engines run these descriptions: the build step (codegen/) writes specialized TypeScript from them into
// codecs.generated.ts, and interpreter.ts runs them directly as the test oracle the generated code is checked against.
import type { CoreErrorCode } from "../bytes/errors.js";
import { MAX_U16, MAX_U32, MAX_U8 } from "../bytes/limits.js";

export type Width = 1 | 2 | 4;

/** An unsigned little-endian integer of 1, 2 or 4 bytes, min .. max; a JSON number. */
export interface UintNode {
  readonly kind: "uint";
  readonly width: Width;
  readonly min: number;
  readonly max: number;
}

/** A u64 as a bigint. JSON: a decimal string ("decimal"), or a number up to 2^53 − 1 and a decimal string beyond ("number"). */
export interface U64Node<J extends "decimal" | "number" = "decimal" | "number"> {
  readonly kind: "u64";
  readonly json: J;
}

/** A u64 amount held as a number (every amount is at most the total supply, below 2^53), min .. max; a JSON number. */
export interface AmountNode {
  readonly kind: "amount";
  readonly min: number;
  readonly max: number;
}

/** One byte, 0 or 1. */
export interface BoolNode {
  readonly kind: "bool";
}

/** A type tag of 1 or 4 bytes that must equal `value`; the same number in the model and in JSON. */
export interface TagNode<V extends number = number> {
  readonly kind: "tag";
  readonly width: 1 | 4;
  readonly value: V;
}

/** Exactly `length` bytes; lowercase hex in JSON. */
export interface BytesNode {
  readonly kind: "bytes";
  readonly length: number;
}

/** A u16 or u32 byte count, then that many bytes (min .. max); hex in JSON, where `absentIsEmpty` lets it be left out. */
export interface VarBytesNode {
  readonly kind: "varBytes";
  readonly prefix: 2 | 4;
  readonly min: number;
  readonly max: number;
  readonly absentIsEmpty: boolean;
}

/** A u8 or u16 count, then the elements; a JSON array. */
export interface ArrayNode<E extends Node = Node> {
  readonly kind: "array";
  readonly of: E;
  readonly prefix: 1 | 2;
  readonly min: number;
  readonly max: number;
  /** "strict": ascending and unique serialized forms; "ascending": equal neighbours allowed (a rule decides about them). */
  readonly order: "strict" | "ascending" | undefined;
  /** The exact count is that of the array at this path in the enclosing object (one unlock block per input). */
  readonly sameCountAs: readonly string[] | undefined;
  readonly countRule: string | undefined;
  /** Rules over the elements together, run after they were read or written and their order checked. */
  readonly rules: readonly ArrayRule[];
}

/** The fields in wire order; a field is a node, or `json(name, node)` when its JSON name differs from the model's. */
export type Shape = { readonly [key: string]: Node | Named };

export interface StructNode<S extends Shape = Shape> {
  readonly kind: "struct";
  readonly name: string;
  readonly shape: S;
  /** The shape as a list, in wire order. */
  readonly fields: readonly Field[];
}

/** One of several structs told apart by their leading type tag (1 or 4 bytes); JSON dispatches on `type`. */
export interface UnionNode<V extends readonly StructNode[] = readonly StructNode[]> {
  readonly kind: "union";
  readonly width: 1 | 4;
  readonly variants: V;
}

/** A u32 byte length, then one object of the union; length 0 (JSON null or missing) is "absent" where `optional`. */
export interface PayloadNode<U extends UnionNode = UnionNode, O extends boolean = boolean> {
  readonly kind: "payload";
  readonly of: U;
  readonly optional: O;
}

export type Node = UintNode | U64Node | AmountNode | BoolNode | TagNode | BytesNode | VarBytesNode | ArrayNode | StructNode | UnionNode | PayloadNode;

/** A field whose JSON name differs from its model name. */
export interface Named<N extends Node = Node, J extends string = string> {
  readonly kind: "named";
  readonly json: J;
  readonly node: N;
}

export interface Field {
  /** The model's property. */
  readonly key: string;
  /** The JSON property, also used in error paths (the node API's name). */
  readonly json: string;
  readonly node: Node;
}

// ---------------------------------------------------------------------------------------------------------------
// Rules over the elements of an array.

/** What a custom array rule sees: the elements' serialized forms in the buffer being decoded or encoded. */
export interface ArrayView {
  readonly bytes: Uint8Array;
  start(index: number): number;
  end(index: number): number;
  /** Rejects element `index`, at its `field` when given (the byte offset follows from the schema). */
  fail(code: "DUPLICATE" | "INVALID_REFERENCE" | "VALUE_OUT_OF_RANGE", message: string, index: number, field?: string): never;
}

export type CustomRule = (items: readonly never[], view: ArrayView) => void;

/**
 * How the arbitraries (src/arbitraries) satisfy a custom rule and break it, written next to the rule in rules.ts. The
 * array's elements are a union; `arrange` is given as many elements of the variant tagged `variant` as the array
 * holds, distinct in their serialized forms, and one random choice (a natural number) per element, and returns the
 * elements the rule accepts.
 */
export interface CustomConstruction {
  readonly variant: number;
  arrange(distinct: readonly unknown[], choices: readonly number[]): unknown[];
  /** Ways to break the rule: each turns a valid array of at least `atLeast` elements into one the decoder refuses with `code`. */
  readonly breaks: readonly {
    readonly name: string;
    readonly code: CoreErrorCode;
    readonly atLeast: number;
    apply(valid: readonly unknown[], choice: number): unknown[];
  }[];
}

export type ArrayRule =
  /** The elements' `field` numbers add up to at most `max` (VALUE_OUT_OF_RANGE at the element where the sum passes it). */
  | { readonly kind: "sumAtMost"; readonly field: string; readonly max: number; readonly message: string }
  /** No two elements agree on their serialized form up to the end of `through` (DUPLICATE at that field); needs sorted order. */
  | { readonly kind: "distinct"; readonly through: string; readonly message: string }
  /** A rule written in rules.ts, exported there under its function name (the generated code imports it by that name). */
  | { readonly kind: "custom"; readonly check: CustomRule; readonly construction: CustomConstruction | undefined };

export const sumAtMost = (field: string, max: number, message: string): ArrayRule => ({ kind: "sumAtMost", field, max, message });
export const distinct = (through: string, message: string): ArrayRule => ({ kind: "distinct", through, message });
export const custom = <T>(check: (items: readonly T[], view: ArrayView) => void, construction?: CustomConstruction): ArrayRule => ({ kind: "custom", check: check as CustomRule, construction });

// ---------------------------------------------------------------------------------------------------------------
// Builders, so objects.ts reads like the table in PROTOCOL.md §2.

/** The largest value of a 1-, 2- or 4-byte unsigned integer. */
export const maxOfWidth = (width: Width): number => (width === 1 ? MAX_U8 : width === 2 ? MAX_U16 : MAX_U32);

export const uint = (width: Width, min = 0, max = maxOfWidth(width)): UintNode => ({ kind: "uint", width, min, max });
export const u64: U64Node<"decimal"> = { kind: "u64", json: "decimal" };
/** A u64 that JSON writes as a number while it fits one exactly (the milestone timestamp). */
export const u64Number: U64Node<"number"> = { kind: "u64", json: "number" };
export const amount = (min: number, max: number): AmountNode => ({ kind: "amount", min, max });
export const bool: BoolNode = { kind: "bool" };
export const tag = <const V extends number>(width: 1 | 4, value: V): TagNode<V> => ({ kind: "tag", width, value });
export const bytes = (length: number): BytesNode => ({ kind: "bytes", length });
export const varBytes = (prefix: 2 | 4, min: number, max: number, json: { absentIsEmpty?: boolean } = {}): VarBytesNode => ({
  kind: "varBytes",
  prefix,
  min,
  max,
  absentIsEmpty: json.absentIsEmpty ?? false,
});

export interface ArraySpec {
  readonly prefix: 1 | 2;
  readonly min: number;
  readonly max: number;
  readonly order?: "strict" | "ascending";
  readonly sameCountAs?: readonly string[];
  readonly countRule?: string;
  readonly rules?: readonly ArrayRule[];
}

export const array = <E extends Node>(of: E, spec: ArraySpec): ArrayNode<E> => ({
  kind: "array",
  of,
  prefix: spec.prefix,
  min: spec.min,
  max: spec.max,
  order: spec.order,
  sameCountAs: spec.sameCountAs,
  countRule: spec.countRule,
  rules: spec.rules ?? [],
});

export const json = <N extends Node, const J extends string>(name: J, node: N): Named<N, J> => ({ kind: "named", json: name, node });

export function struct<const S extends Shape>(name: string, shape: S): StructNode<S> {
  const fields = Object.keys(shape).map((key): Field => {
    // Property order is wire order; integer-like keys would be enumerated first, whatever their place.
    if (/^\d+$/.test(key)) throw new Error(`${name}.${key}: a field name must not be a number`);
    const f = shape[key]!;
    return f.kind === "named" ? { key, json: f.json, node: f.node } : { key, json: key, node: f };
  });
  return { kind: "struct", name, shape, fields };
}

export function union<const V extends readonly StructNode[]>(width: 1 | 4, variants: V): UnionNode<V> {
  for (const v of variants) variantTag(v);
  return { kind: "union", width, variants };
}

export const payload = <U extends UnionNode, const O extends boolean>(of: U, optional: O): PayloadNode<U, O> => ({ kind: "payload", of, optional });

// ---------------------------------------------------------------------------------------------------------------
// Facts both engines derive from a schema.

/** A union variant's type tag: its first field, named `type`. */
export function variantTag(variant: StructNode): number {
  const first = variant.fields[0];
  if (first === undefined || first.key !== "type" || first.node.kind !== "tag") throw new Error(`${variant.name} has no type tag first`);
  return first.node.value;
}

/** The serialized size of a node when it is the same for every value, else undefined. */
export function fixedSize(node: Node): number | undefined {
  switch (node.kind) {
    case "uint":
      return node.width;
    case "u64":
    case "amount":
      return 8;
    case "bool":
      return 1;
    case "tag":
      return node.width;
    case "bytes":
      return node.length;
    case "struct": {
      let total = 0;
      for (const f of node.fields) {
        const size = fixedSize(f.node);
        if (size === undefined) return undefined;
        total += size;
      }
      return total;
    }
    case "union": {
      const sizes = new Set(node.variants.map(fixedSize));
      return sizes.size === 1 ? [...sizes][0] : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Where each field starts and ends inside an element's serialized form, for the fields behind a fixed-size prefix
 * (the byte offsets of rule failures). A field a union's variants place differently is left out.
 */
export function fieldSpans(node: Node): ReadonlyMap<string, readonly [start: number, end: number]> {
  const spans = new Map<string, readonly [number, number]>();
  if (node.kind === "struct") {
    let at = 0;
    for (const f of node.fields) {
      const size = fixedSize(f.node);
      if (size === undefined) break;
      spans.set(f.json, [at, at + size]);
      at += size;
    }
  } else if (node.kind === "union") {
    const all = node.variants.map(fieldSpans);
    for (const [field, span] of all[0] ?? []) {
      if (all.every((s) => s.get(field)?.[0] === span[0] && s.get(field)?.[1] === span[1])) spans.set(field, span);
    }
    // A field only one variant has (a reference unlock block's `reference`) keeps that variant's place.
    for (const s of all) for (const [field, span] of s) if (!all.some((o) => o !== s && o.has(field))) spans.set(field, span);
  }
  return spans;
}

// ---------------------------------------------------------------------------------------------------------------
// The inferred types.

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type NodeOf<F> = F extends Named<infer N> ? N : F;
type JsonKey<K, F> = F extends Named<Node, infer J> ? J : K;
type IsOptional<F> = NodeOf<F> extends PayloadNode<UnionNode, true> ? true : false;

/** The model type of a node: what decoders produce and encoders take. */
export type Model<N> = N extends UintNode | AmountNode
  ? number
  : N extends U64Node
    ? bigint
    : N extends BoolNode
      ? boolean
      : N extends TagNode<infer V>
        ? V
        : N extends BytesNode | VarBytesNode
          ? Uint8Array
          : N extends ArrayNode<infer E>
            ? Model<E>[]
            : N extends StructNode<infer S>
              ? StructModel<S>
              : N extends UnionNode<infer V>
                ? Model<V[number]>
                : N extends PayloadNode<infer U>
                  ? Model<U>
                  : never;

type StructModel<S extends Shape> = Simplify<
  { -readonly [K in keyof S as IsOptional<S[K]> extends true ? never : K]: Model<NodeOf<S[K]>> } & {
    -readonly [K in keyof S as IsOptional<S[K]> extends true ? K : never]?: Model<NodeOf<S[K]>> | undefined;
  }
>;

/** The node REST JSON type of a node, as messageToJson writes it (readers accept a little more: see objects.ts). */
export type Json<N> = N extends UintNode | AmountNode
  ? number
  : N extends U64Node<infer J>
    ? J extends "decimal"
      ? string
      : number | string
    : N extends BoolNode
      ? boolean
      : N extends TagNode<infer V>
        ? V
        : N extends BytesNode | VarBytesNode
          ? string
          : N extends ArrayNode<infer E>
            ? Json<E>[]
            : N extends StructNode<infer S>
              ? StructJson<S>
              : N extends UnionNode<infer V>
                ? Json<V[number]>
                : N extends PayloadNode<infer U, infer O>
                  ? O extends true
                    ? Json<U> | null
                    : Json<U>
                  : never;

type StructJson<S extends Shape> = Simplify<{ -readonly [K in keyof S as JsonKey<K & string, S[K]>]: Json<NodeOf<S[K]>> }>;
