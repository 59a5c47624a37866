// The tokens of node REST JSON *text* for the text readers generated from objects.ts (codecs.generated.ts, fromTextX):
// the text as ASCII codes and a position in it, and the plain forms of JSON values read straight from the characters
// (hex decoded in place, no JSON objects or strings in between).
//
// A reader here only ever succeeds on what JSON.parse followed by the JSON reader accepts, with the same value; any
// other text, and anything not in the plain form clients write (escapes, repeated or unknown keys, 1.0 or 1e3, -0,
// non-ASCII), is a miss: json-text.ts then hands the text to JSON.parse and the JSON reader, whose value or error it is.
import { decodeHexAsciiInto } from "../bytes/hex.js";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";
import { jsonDecimal } from "./runtime.js";

/** Leaves the text to JSON.parse (json-text.ts catches what this throws). */
export function miss(): never {
  throw 0;
}

const encoder = new TextEncoder();
// The ASCII codes of the text being read and a 0 after them (no token starts with 0, so every scan stops there), also
// read a digit pair at a time (hex); they grow with the longest text read.
let s = new Uint8Array(0);
let view = new DataView(s.buffer);
let at = 0;
let end = 0;
let source = "";

// Longer texts (a message is at most 32 KiB, 64 Ki hex digits) are left to JSON.parse.
const MAX_TEXT = 4 * MAX_MESSAGE_LENGTH;

/** Takes `text` as the one to read; false when it cannot be (too long, or not ASCII). */
export function beginText(text: string): boolean {
  const n = text.length;
  if (n > MAX_TEXT) return false;
  if (s.length <= n) view = new DataView((s = new Uint8Array(2 * n + 8)).buffer);
  // Any character outside ASCII encodes to more than one byte, so it shows in the counts (and is never plain here).
  const { read, written } = encoder.encodeInto(text, s);
  s[n] = 0;
  at = 0;
  end = n;
  source = text;
  return read === n && written === n;
}

/** Whether only whitespace is left. */
export function textEnded(): boolean {
  return space() === 0 && at === end;
}

const QUOTE = 0x22;
const COMMA = 0x2c;

/** Skips JSON whitespace; the next character's code (0 at the end). */
function space(): number {
  let c = s[at]!;
  while (c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) c = s[++at]!;
  return c;
}

/** The character `c` (after whitespace), consumed. */
function expect(c: number): void {
  if (space() !== c) miss();
  at++;
}

/** `c` (`{` or `[`) and whether `c + 2` (`}` or `]`) follows at once, consumed too. */
function open(c: number): boolean {
  expect(c);
  if (space() !== c + 2) return false;
  at++;
  return true;
}

/** After a member or an element: true after `,`, false after `close`. */
export function textMore(close: number): boolean {
  const c = space();
  at++;
  if (c === COMMA) return true;
  if (c !== close) miss();
  return false;
}

export type TextNames = readonly Uint8Array[];

/** The names of an object's keys, in the order its reader numbers them. */
export const textNames = (names: readonly string[]): TextNames => names.map((name) => encoder.encode(name));

/** `{` and the index in `names` of the object's first key, or -1 for `{}`. */
export function textFirst(names: TextNames): number {
  return open(0x7b) ? -1 : key(names, 0, 0);
}

/** After a member: `,` and the index of the next key (none of those in `seen`; `hint` is tried first), or `}` and -1. */
export function textNext(names: TextNames, seen: number, hint: number): number {
  return textMore(0x7d) ? key(names, seen, hint) : -1;
}

/** A key among `names` (none of those in `seen`; `hint` tried first, keys usually come in wire order) and its colon. */
function key(names: TextNames, seen: number, hint: number): number {
  if (space() !== QUOTE) miss();
  const start = at + 1;
  const count = names.length;
  for (let tried = 0, k = hint < count ? hint : 0; tried < count; tried++, k = k + 1 < count ? k + 1 : 0) {
    const name = names[k]!;
    const n = name.length;
    let i = 0;
    // A name is plain letters: the key is it when its characters follow and then the closing quote (the 0 after the
    // text stops the comparison there).
    while (i < n && s[start + i] === name[i]) i++;
    if (i < n || s[start + n] !== QUOTE || (seen & (1 << k)) !== 0) continue;
    at = start + n + 1;
    expect(0x3a);
    return k;
  }
  return miss();
}

/** `[`, and true when the array is empty (its `]` consumed too). */
export const textArray = (): boolean => open(0x5b);

/** `null` (consumed: true) or something else (not consumed: false). */
export function textNull(): boolean {
  if (space() !== 0x6e) return false;
  if (s[at + 1] !== 0x75 || s[at + 2] !== 0x6c || s[at + 3] !== 0x6c) miss();
  at += 4;
  return true;
}

/** `null`, or `[]` where an array is expected (`array`), consumed (true); anything else is left (false). */
export function textAbsent(array: boolean): boolean {
  if (textNull()) return true;
  if (!array || s[at] !== 0x5b) return false;
  const from = at++;
  if (space() === 0x5d) {
    at++;
    return true;
  }
  at = from;
  return false;
}

/** An integer written as plain digits (no sign, fraction or exponent), min .. max (both below 2^53). */
export function textInteger(min: number, max: number): number {
  let c = space();
  const start = at;
  let value = 0;
  while (c >= 0x30 && c <= 0x39) {
    value = value * 10 + (c - 0x30);
    c = s[++at]!;
  }
  const digits = at - start;
  // At most 16 digits and at most max < 2^53: every partial sum is exact, so this is the number JSON.parse reads.
  if (digits === 0 || digits > 16 || (digits > 1 && s[start] === 0x30) || c === 0x2e || c === 0x65 || c === 0x45) miss();
  if (value < min || value > max) miss();
  return value;
}

/** A string of at most `max` characters, consumed; where its characters start (it ends before `at - 1`). */
function string(max: number): number {
  if (space() !== QUOTE) miss();
  const start = at + 1;
  const close = s.indexOf(QUOTE, start);
  if (close < 0 || close >= end || close - start > max) miss();
  at = close + 1;
  return start;
}

/** A string of exactly 2·n hex digits (either case), as its n bytes. */
export function textHex(n: number): Uint8Array {
  if (space() !== QUOTE) miss();
  const start = at + 1;
  const close = start + 2 * n;
  // Anything that is not a hex digit (a quote, a backslash, a control character, the 0 after the text) fails the decoding.
  if (close >= end || s[close] !== QUOTE) miss();
  at = close + 1;
  return decode(start, n);
}

/** A string of hex digits for min .. max bytes, as those bytes. */
export function textVarHex(min: number, max: number): Uint8Array {
  const start = string(2 * max);
  const chars = at - 1 - start;
  if ((chars & 1) !== 0 || chars < 2 * min) miss();
  return decode(start, chars >>> 1);
}

/** The n bytes of the hex digits from `start`. */
function decode(start: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  if (!decodeHexAsciiInto(view, start, n, out, 0)) miss();
  return out;
}

/** A u64 as a decimal string, read by the JSON reader's own jsonDecimal. */
export function textDecimal(): bigint {
  const start = string(20);
  return jsonDecimal(source.slice(start, at - 1));
}
