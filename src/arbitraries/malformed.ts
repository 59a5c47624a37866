// Malformed message encodings, each breaking one rule that decodeMessage applies, found by walking the declarations of
// objects.ts: every bound, order, uniqueness, sum, same-count, type tag, declared length and custom rule there becomes
// a plan (one fault at one place, derive.ts), plus the rules on the message's length that codec.ts applies.
import fc from "fast-check";
import type { CoreErrorCode } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MAX_U64, MIN_MESSAGE_LENGTH } from "../bytes/limits.js";
import { encodeMessage } from "../model/codec.js";
import * as objects from "../model/objects.js";
import { type ArrayNode, type Node, type StructNode, maxOfWidth, variantTag } from "../model/schema.js";
import type { Message } from "../model/types.js";
import { Deriver, type Fault, NO_CAPS, type Plan, serialize, sortedBySerializedForm, variantOf } from "./derive.js";
import { invalidOption } from "./options.js";

/** A rule decodeMessage applies: its stable name, and the code of the ProtocolError that breaking it raises. */
export interface MessageRule {
  /**
   * `<Object>.<field>:<rule>` for a rule of a field (`TransactionEssence.inputs:count-max`, `UtxoInput.transactionOutputIndex:max`;
   * `[]` after the field for its elements' type tag), `Message:<rule>` for the message's length.
   */
  readonly name: string;
  /** The `code` of the ProtocolError decodeMessage raises for these bytes. */
  readonly code: CoreErrorCode;
}

/** Bytes that break one rule. */
export interface MalformedMessage {
  /** 0 .. 32832 bytes: a message's encoding with one rule broken (or one too short or too long to be a message). */
  readonly bytes: Uint8Array;
  /** The rule they break. */
  readonly rule: MessageRule;
}

/** Options of `malformedMessageBytes()`. */
export interface MalformedMessageOptions {
  /** Only these rules (names from `malformedMessageRules`); the default is every rule, each as often. */
  readonly rules?: readonly string[] | undefined;
}

// Room a fault may add to a valid message (one more element, a longer index, trailing bytes).
const SLACK = 256;
const BUDGET = MAX_MESSAGE_LENGTH - SLACK;

type Obj = Record<string, unknown>;

const TWO_53 = 2 ** 53;

/** A value out of `min .. max` up to `widthMax` (Infinity: a u64, drawn as a bigint past 2^53), for a number field. */
function outside(which: "min" | "max", min: number, max: number, widthMax: number): fc.Arbitrary<unknown> {
  if (which === "min") return fc.integer({ min: 0, max: min - 1 });
  if (max + 1 >= TWO_53) return fc.bigInt({ min: BigInt(max) + 1n, max: BigInt(widthMax) });
  if (widthMax < TWO_53) return fc.integer({ min: max + 1, max: widthMax });
  return fc.oneof(fc.integer({ min: max + 1, max: TWO_53 - 1 }), fc.bigInt({ min: BigInt(TWO_53), max: MAX_U64 }));
}

/** A type tag of `width` bytes other than those allowed: nearby ones and any. */
function otherTag(width: 1 | 4, allowed: readonly number[]): fc.Arbitrary<number> {
  const last = maxOfWidth(width);
  return fc.oneof(fc.integer({ min: 0, max: Math.max(...allowed) + 2 }), fc.integer({ min: 0, max: last })).filter((t) => !allowed.includes(t));
}

/** A declared length off by one more byte than the payload holds, or one to sixteen fewer (never none: that is "absent"). */
const offLength: fc.Arbitrary<(length: number) => number> = fc.integer({ min: -16, max: 1 }).map((d) => (length: number) => (d >= 0 ? length + 1 : Math.max(1, length + d)));

const transform = (apply: (items: readonly unknown[], choice: number) => unknown[]): Fault => ({ kind: "transform", apply });

/** Two neighbours swapped. */
const swap = transform((items, c) => {
  const i = c % (items.length - 1);
  const out = items.slice();
  [out[i], out[i + 1]] = [out[i + 1], out[i]];
  return out;
});

/** An element in its neighbour's place as well. */
const repeat = transform((items, c) => {
  const i = c % (items.length - 1);
  const out = items.slice();
  out[i + 1] = out[i];
  return out;
});

/** The first number field after `through` in the element's struct: the one to change to make two elements differ after it. */
function afterThrough(element: StructNode, through: string): { key: string; min: number } {
  const at = element.fields.findIndex((f) => f.json === through);
  const field = element.fields.slice(at + 1).find((f) => f.node.kind === "amount" || f.node.kind === "uint");
  if (at < 0 || field === undefined || (field.node.kind !== "amount" && field.node.kind !== "uint")) throw new Error(`${element.name}: nothing after ${through} to tell repeats apart`);
  return { key: field.key, min: field.node.min };
}

/** An element again next to itself up to `through`, differing after it (in a number one less or one more), sorted. */
function repeatThrough(node: ArrayNode, through: string): Fault {
  return transform((items, c) => {
    const i = c % (items.length - 1);
    const element = items[i] as Obj;
    const struct = node.of.kind === "union" ? variantOf(node.of, element) : (node.of as StructNode);
    const { key, min } = afterThrough(struct, through);
    const v = element[key] as number;
    const out = items.slice();
    out[i + 1] = { ...element, [key]: v - 1 >= min ? v - 1 : v + 1 };
    return sortedBySerializedForm(node.of, out);
  });
}

/** The last element's `field` at the sum's maximum, so the sum of two or more passes it. */
const lastAtMost = (field: string, max: number): Fault =>
  transform((items) => {
    const out = items.slice();
    out[out.length - 1] = { ...(out.at(-1) as Obj), [field]: max };
    return out;
  });

/** Every rule of the schema under the message, with the plans (places) that break it. */
function schemaRules(): Map<string, { rule: MessageRule; plans: Plan[] }> {
  const rules = new Map<string, { rule: MessageRule; plans: Plan[] }>();
  const add = (site: string, rule: string, code: CoreErrorCode, path: string, fault: Fault, atLeast?: readonly [string, number]): void => {
    const name = `${site}:${rule}`;
    let entry = rules.get(name);
    if (entry === undefined) rules.set(name, (entry = { rule: { name, code }, plans: [] }));
    entry.plans.push({ site: path, fault, atLeast: new Map(atLeast === undefined ? [] : [atLeast]) });
  };

  const fields = (struct: StructNode, path: string): void => {
    for (const f of struct.fields) if (f.node.kind !== "tag") visit(f.node, `${path}/${f.key}`, `${struct.name}.${f.key}`);
  };

  function visit(node: Node, path: string, site: string): void {
    switch (node.kind) {
      case "uint":
        if (node.min > 0) add(site, "min", "VALUE_OUT_OF_RANGE", path, { kind: "value", value: outside("min", node.min, node.max, maxOfWidth(node.width)) });
        if (node.max < maxOfWidth(node.width)) add(site, "max", "VALUE_OUT_OF_RANGE", path, { kind: "value", value: outside("max", node.min, node.max, maxOfWidth(node.width)) });
        return;
      case "amount":
        if (node.min > 0) add(site, "min", "VALUE_OUT_OF_RANGE", path, { kind: "value", value: outside("min", node.min, node.max, Infinity) });
        add(site, "max", "VALUE_OUT_OF_RANGE", path, { kind: "value", value: outside("max", node.min, node.max, Infinity) });
        return;
      case "bool":
        add(site, "boolean", "VALUE_OUT_OF_RANGE", path, { kind: "value", value: fc.integer({ min: 2, max: 255 }) });
        return;
      case "varBytes":
        if (node.min > 0) add(site, "length-min", "LENGTH_OUT_OF_RANGE", path, { kind: "length", exact: node.min - 1 });
        if (node.max < maxOfWidth(node.prefix)) add(site, "length-max", "LENGTH_OUT_OF_RANGE", path, { kind: "length", exact: node.max + 1 });
        return;
      case "array": {
        const parent = path.slice(0, path.lastIndexOf("/"));
        const reference = node.sameCountAs === undefined ? path : `${parent}/${node.sameCountAs.join("/")}`;
        if (node.min > 0) add(site, "count-min", "COUNT_OUT_OF_RANGE", path, { kind: "count", exact: node.min - 1 });
        if (node.max < maxOfWidth(node.prefix)) add(site, "count-max", "COUNT_OUT_OF_RANGE", path, { kind: "count", exact: node.max + 1 });
        if (node.sameCountAs !== undefined) add(site, "count-same", "COUNT_OUT_OF_RANGE", path, { kind: "countOffset" });
        if (node.order !== undefined) add(site, "order", "NOT_SORTED", path, swap, [path, 2]);
        if (node.order === "strict") add(site, "unique", "DUPLICATE", path, repeat, [path, 2]);
        for (const rule of node.rules) {
          if (rule.kind === "sumAtMost") add(site, "sum", "VALUE_OUT_OF_RANGE", path, lastAtMost(rule.field, rule.max), [path, 2]);
          else if (rule.kind === "distinct") add(site, "distinct", "DUPLICATE", path, repeatThrough(node, rule.through), [path, 2]);
          else for (const b of rule.construction?.breaks ?? []) add(site, b.name, b.code, path, transform(b.apply), [reference, b.atLeast]);
        }
        visit(node.of, `${path}/[]`, `${site}[]`);
        return;
      }
      case "struct":
        // Reached as a field or an element, a struct checks its own type tag.
        if (node.fields[0]?.node.kind === "tag") {
          const tag = node.fields[0].node;
          add(site, "type", "INVALID_TYPE", path, { kind: "tag", tag: otherTag(tag.width, [tag.value]) });
        }
        fields(node, path);
        return;
      case "union":
        add(site, "type", "INVALID_TYPE", path, { kind: "tag", tag: otherTag(node.width, node.variants.map(variantTag)) });
        for (const v of node.variants) fields(v, `${path}/<${v.name}>`);
        return;
      case "payload":
        add(site, "declared-length", "LENGTH_MISMATCH", path, { kind: "declaredLength", declared: offLength });
        if (!node.optional) add(site, "required", "LENGTH_OUT_OF_RANGE", path, { kind: "declaredLength", declared: fc.constant(() => 0) });
        visit(node.of, path, site);
        return;
      default:
        return;
    }
  }

  fields(objects.message, "");
  return rules;
}

/** Valid messages with room for the fault (as the plan has them, where one is given). */
const validMessage = (plan?: Plan): fc.Arbitrary<Message> => new Deriver(NO_CAPS, plan).root(objects.message, BUDGET) as fc.Arbitrary<Message>;

/** `length` more bytes of filler, from a seed. */
const filler = (length: number, seed: number): Uint8Array => Uint8Array.from({ length }, (_, i) => (seed + i * 131) & 0xff);

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** The rules on the whole message's length and end (codec.ts), with how to break each. */
const MESSAGE_RULES: readonly { rule: MessageRule; bytes: () => fc.Arbitrary<Uint8Array> }[] = [
  {
    rule: { name: "Message:length-min", code: "LENGTH_OUT_OF_RANGE" },
    bytes: () => fc.tuple(validMessage(), fc.nat()).map(([m, n]) => encodeMessage(m).slice(0, n % MIN_MESSAGE_LENGTH)),
  },
  {
    rule: { name: "Message:length-max", code: "LENGTH_OUT_OF_RANGE" },
    bytes: () =>
      fc.tuple(validMessage(), fc.integer({ min: 1, max: 64 }), fc.nat()).map(([m, extra, seed]) => {
        const bytes = encodeMessage(m);
        return concat(bytes, filler(MAX_MESSAGE_LENGTH - bytes.length + extra, seed));
      }),
  },
  {
    rule: { name: "Message:trailing-bytes", code: "TRAILING_BYTES" },
    bytes: () => fc.tuple(validMessage(), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([m, tail]) => concat(encodeMessage(m), tail)),
  },
  {
    // Cut short anywhere past the shortest message: a message with a payload is always longer.
    rule: { name: "Message:truncated", code: "TRUNCATED" },
    bytes: () =>
      fc.tuple(validMessage({ site: "/payload", fault: { kind: "present" }, atLeast: new Map() }), fc.nat()).map(([m, n]) => {
        const bytes = encodeMessage(m);
        return bytes.slice(0, MIN_MESSAGE_LENGTH + (n % (bytes.length - MIN_MESSAGE_LENGTH)));
      }),
  },
];

const SCHEMA_RULES = schemaRules();

/** Every rule `malformedMessageBytes` breaks, by name, with the error code decodeMessage raises for it. */
export const malformedMessageRules: readonly MessageRule[] = [...MESSAGE_RULES.map((r) => r.rule), ...[...SCHEMA_RULES.values()].map((r) => r.rule)];

const byName = new Map<string, () => fc.Arbitrary<Uint8Array>>([
  ...MESSAGE_RULES.map((r) => [r.rule.name, r.bytes] as const),
  ...[...SCHEMA_RULES.values()].map(
    (r) =>
      [
        r.rule.name,
        () => {
          // The message as the plan has it, written as given; one whose length breaks the message's own bounds first is drawn again.
          const places = r.plans.map((plan) => validMessage(plan).map((m) => serialize(objects.message, m)));
          return (places.length === 1 ? places[0]! : fc.oneof(...places)).filter((b) => b.length >= MIN_MESSAGE_LENGTH && b.length <= MAX_MESSAGE_LENGTH);
        },
      ] as const,
  ),
]);
const built = new Map<string, fc.Arbitrary<Uint8Array>>();

/**
 * Bytes `decodeMessage` refuses with a ProtocolError, each with the one rule it breaks (everything else about them is
 * valid, so any conforming decoder refuses them for that rule) and the code `decodeMessage` raises: every rule is drawn
 * as often as every other.
 */
export function malformedMessageBytes(options: MalformedMessageOptions = {}): fc.Arbitrary<MalformedMessage> {
  if (options === null || typeof options !== "object") throw invalidOption("", "expected an options object");
  const names = options.rules ?? malformedMessageRules.map((r) => r.name);
  if (!Array.isArray(names) || names.length === 0) throw invalidOption("rules", "expected a non-empty list of rule names");
  const arbitraries = names.map((name) => {
    const make = typeof name === "string" ? byName.get(name) : undefined;
    if (make === undefined) throw invalidOption("rules", `no rule named ${String(name)} (malformedMessageRules lists them)`);
    let arbitrary = built.get(name);
    if (arbitrary === undefined) built.set(name, (arbitrary = make()));
    const rule = malformedMessageRules.find((r) => r.name === name)!;
    return arbitrary.map((bytes): MalformedMessage => ({ bytes, rule }));
  });
  return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
}
