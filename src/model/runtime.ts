// What both codec engines share at run time: the array view the order checks and array rules work on, the declarative
// rules themselves, and the readers of JSON leaf values. The generated codec and the interpreter differ in everything
// structural (objects, arrays, unions, payloads, paths), which is what the property tests compare.
import { Fault, compareSlices } from "../bytes/cursor.js";
import { decodeHex, firstNonHexDigit } from "../bytes/hex.js";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";
import type { ArrayView } from "./schema.js";

/** Reusable per array node: the element boundaries of the array being processed (an array never nests in itself). */
export class Bounds implements ArrayView {
  bytes: Uint8Array = new Uint8Array(0);
  decoding = false;
  readonly starts: Int32Array;

  /** `spans`: where fields sit inside an element, for the byte offset and path of a rejection. */
  constructor(
    max: number,
    readonly spans: Readonly<Record<string, readonly [number, number]>>,
  ) {
    this.starts = new Int32Array(max + 1);
  }

  start(index: number): number {
    return this.starts[index]!;
  }

  end(index: number): number {
    return this.starts[index + 1]!;
  }

  /** Where `field` ends inside an element; a rule names only fields behind a fixed-size prefix. */
  fieldEnd(field: string): number {
    return this.span(field)[1];
  }

  private span(field: string): readonly [number, number] {
    const span = this.spans[field];
    if (span === undefined) throw new Error(`no fixed place for field ${field}`);
    return span;
  }

  fail(code: "DUPLICATE" | "INVALID_REFERENCE" | "VALUE_OUT_OF_RANGE" | "NOT_SORTED", message: string, index: number, field?: string): never {
    const within = field === undefined ? 0 : this.span(field)[0];
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

/**
 * The elements' `field` numbers add up to at most `max`. Checked after every addition, so the sum never exceeds
 * 2 × max < 2^53 and stays exact.
 */
export function sumAtMostRule(bounds: Bounds, items: readonly unknown[], field: string, max: number, message: string): void {
  let sum = 0;
  for (let i = 0; i < items.length; i++) {
    sum += (items[i] as Record<string, number>)[field]!;
    if (sum > max) bounds.fail("VALUE_OUT_OF_RANGE", message, i, field);
  }
}

/** No two neighbours (the array is sorted) agree on their serialized form up to the end of `through`. */
export function distinctRule(bounds: Bounds, count: number, through: string, message: string): void {
  const end = bounds.fieldEnd(through);
  for (let i = 1; i < count; i++) {
    const a = bounds.start(i - 1);
    const b = bounds.start(i);
    if (compareSlices(bounds.bytes, a, a + end, b, b + end) === 0) bounds.fail("DUPLICATE", message, i, through);
  }
}

/** The length of `value` when it is an array, else -1. */
export const lengthOf = (value: unknown): number => (Array.isArray(value) ? value.length : -1);

/** The count of the array at `path` inside `parent` (sameCountAs), or -1 when there is none to compare with. */
export function countAt(parent: unknown, path: readonly string[]): number {
  let v = parent;
  for (const key of path) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return Array.isArray(v) ? v.length : -1;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON leaves (PROTOCOL.md §6). Each throws a Fault without a path; the object and array levels add the segments.

export type Obj = Record<string, unknown>;

// Hex longer than a whole message is refused before it is decoded.
const MAX_HEX_CHARS = 2 * MAX_MESSAGE_LENGTH;

export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing (the field is missing)";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** False once anything has made an enumerable property appear on Object.prototype (prototype pollution). */
let pristine = true;

/** Called once per JSON entry point: whether Object.prototype still holds no enumerable property. */
export function beginJson(): void {
  pristine = true;
  for (const _ in Object.prototype) pristine = false;
}

/**
 * The object `value`, readable with plain property access that sees only its own properties: a JSON.parse object
 * while Object.prototype is pristine, or a null-prototype object, as it is; anything else (another prototype, a
 * polluted Object.prototype) as a null-prototype copy of its own enumerable properties.
 */
export function jsonObject(value: unknown): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Fault("INVALID_JSON", `expected an object, got ${kindOf(value)}`, undefined);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || (proto === Object.prototype && pristine)) return value as Obj;
  const copy = Object.create(null) as Obj;
  for (const k of Object.keys(value)) copy[k] = (value as Obj)[k];
  return copy;
}

/** An array of min .. max elements, refused by its length before any element is looked at. */
export function jsonArray(value: unknown, min: number, max: number): unknown[] {
  if (!Array.isArray(value)) throw new Fault("INVALID_JSON", `expected an array, got ${kindOf(value)}`, undefined);
  const n = value.length;
  if (n < min || n > max) throw new Fault("COUNT_OUT_OF_RANGE", `expected ${min} .. ${max} elements, got ${n}`, undefined);
  return value;
}

/** An integer number min .. max (-0 reads as 0, so the model equals what its bytes decode to). */
export function jsonInteger(value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value)) throw new Fault("INVALID_JSON", `expected an integer number, got ${kindOf(value)}`, undefined);
  if (value < min || value > max) throw new Fault("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${value}`, undefined);
  return value + 0;
}

/** The refusal of a JSON type tag `value` that is none of those `allowed` here (the caller adds the "type" segment). */
export function tagFault(value: unknown, allowed: string): Fault {
  if (typeof value !== "number") return new Fault("INVALID_JSON", `expected a numeric type tag, got ${kindOf(value)}`, undefined);
  return new Fault("INVALID_TYPE", `type ${value} not allowed here (allowed: ${allowed})`, undefined);
}

export function jsonBool(value: unknown): boolean {
  if (typeof value !== "boolean") throw new Fault("INVALID_JSON", `expected a boolean, got ${kindOf(value)}`, undefined);
  return value;
}

/** Hex text (either case) of exactly `length` bytes. */
export function jsonHex(value: unknown, length: number): Uint8Array {
  if (typeof value !== "string") throw new Fault("INVALID_HEX", `expected a hex string, got ${kindOf(value)}`, undefined);
  if (value.length !== 2 * length) throw new Fault("INVALID_HEX", `expected ${2 * length} hex characters, got ${value.length}`, undefined);
  return hexDigits(value);
}

/** Hex text (either case) of min .. max bytes. */
export function jsonVarHex(value: unknown, min: number, max: number): Uint8Array {
  if (typeof value !== "string") throw new Fault("INVALID_HEX", `expected a hex string, got ${kindOf(value)}`, undefined);
  const n = value.length;
  if (n > MAX_HEX_CHARS) throw new Fault("LENGTH_OUT_OF_RANGE", "hex string longer than a whole message", undefined);
  if ((n & 1) !== 0) throw new Fault("INVALID_HEX", "hex string of odd length", undefined);
  if (n < 2 * min || n > 2 * max) throw new Fault("LENGTH_OUT_OF_RANGE", `expected ${min} .. ${max} bytes, got ${n >>> 1}`, undefined);
  return hexDigits(value);
}

function hexDigits(text: string): Uint8Array {
  const out = decodeHex(text);
  if (out === undefined) throw new Fault("INVALID_HEX", `not a hex digit at character ${firstNonHexDigit(text)}`, undefined);
  return out;
}

// A u64 has at most 20 digits: the first n − 15 of them and the last 15 are each exact in a double, and assembling the
// bigint from those two numbers costs a third of parsing the digits again with BigInt(string).
// Literals rather than computed from MAX_U64, so that a bundle that never reads JSON drops them (test/json.test.ts
// checks them against MAX_U64): 2^64 − 1 = 18446 · 10^15 + 744073709551615.
const LOW_DIGITS = 15;
export const TEN_TO_LOW = 1_000_000_000_000_000n;
export const MAX_U64_HIGH = 18446;
export const MAX_U64_LOW = 744_073_709_551_615;

// The two long decimals last parsed, most recently used first: every message of a network carries the same networkId
// (a bigint is immutable, so handing the same one out again is safe), and the nonce in between must not evict it.
let recentText = "0";
let recentValue = 0n;
let olderText = "0";
let olderValue = 0n;

/** A u64 in JSON: a decimal string of 1 to 20 digits (no sign, no spaces, no exponent), at most 2^64 − 1. */
export function jsonDecimal(value: unknown): bigint {
  if (typeof value !== "string") throw new Fault("INVALID_JSON", `expected a decimal string, got ${kindOf(value)}`, undefined);
  if (value === recentText) return recentValue;
  if (value === olderText) {
    olderText = recentText;
    recentText = value;
    const v = olderValue;
    olderValue = recentValue;
    recentValue = v;
    return v;
  }
  const n = value.length;
  if (n === 0 || n > 20) throw new Fault("INVALID_JSON", "expected a decimal string of 1 to 20 digits", undefined);
  const split = n - LOW_DIGITS;
  let high = 0;
  let low = 0;
  for (let i = 0; i < n; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) throw new Fault("INVALID_JSON", "expected a decimal string of 1 to 20 digits", undefined);
    if (i < split) high = high * 10 + digit;
    else low = low * 10 + digit;
  }
  if (split <= 0) return BigInt(low);
  if (high > MAX_U64_HIGH || (high === MAX_U64_HIGH && low > MAX_U64_LOW)) throw new Fault("VALUE_OUT_OF_RANGE", "exceeds the largest u64", undefined);
  const big = BigInt(high) * TEN_TO_LOW + BigInt(low);
  olderText = recentText;
  olderValue = recentValue;
  recentText = value;
  recentValue = big;
  return big;
}

/** A u64 that JSON may give as an integer number (up to 2^53 − 1) or as a decimal string. */
export function jsonU64Number(value: unknown): bigint {
  if (typeof value === "string") return jsonDecimal(value);
  return BigInt(jsonInteger(value, 0, Number.MAX_SAFE_INTEGER));
}

/** The JSON of such a u64: a number while it is exact, a decimal string beyond. */
export function u64NumberToJson(value: bigint): number | string {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** A JSON type tag that must equal `value` (a struct's own tag, read after any union chose the struct). */
export function jsonTag(value: unknown, expected: number): number {
  if (value !== expected) throw tagFault(value, String(expected));
  return expected;
}

/** Hex of min .. max bytes, or nothing (missing or null) for no bytes. */
export function jsonVarHexOrEmpty(value: unknown, min: number, max: number): Uint8Array {
  return value === undefined || value === null ? new Uint8Array(0) : jsonVarHex(value, min, max);
}

/** Adds a path segment to a Fault on its way out of an object or array level; returns what was thrown. */
export function segment(error: unknown, key: string | number): unknown {
  if (error instanceof Fault) error.segments.push(key);
  return error;
}
