// Hex text ↔ bytes. Output is lowercase without 0x; input accepts either case (PROTOCOL.md §6).
// Table-driven so that a 32 KiB message converts without per-byte string concatenation.
import { ProtocolError } from "./errors.js";
import { MAX_MESSAGE_LENGTH } from "./limits.js";

const TO_HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

// A digit's value by the low byte of its character code, already shifted for the high nibble; anything that is not a
// hex digit holds BAD, which survives every OR and so marks the whole string invalid once, after the loop.
const BAD = 0x100;
const HIGH = new Uint16Array(256).fill(BAD);
const LOW = new Uint16Array(256).fill(BAD);
const DIGIT_CODES = Array.from("0123456789abcdefABCDEF", (c) => c.charCodeAt(0));
for (const code of DIGIT_CODES) {
  const value = parseInt(String.fromCharCode(code), 16);
  HIGH[code] = value << 4;
  LOW[code] = value;
}

// Hex text as ASCII bytes, for both directions: toHex writes digits here and decodes them in one native call, and
// decodeHex of longer text has them encoded here in one call (reading a string a character at a time costs more than
// that call). Room for a whole message; beyond that (rare), toHex takes a buffer of its own and decodeHex reads
// characters. With the pair table below, 192 KiB that the module keeps.
const digits = new Uint8Array(2 * MAX_MESSAGE_LENGTH);
const digitPairs = new Uint16Array(digits.buffer);
const ascii = new TextDecoder();
const asciiEncoder = new TextEncoder();
// The two ASCII digits of each byte value.
const HIGH_DIGIT = Uint8Array.from(TO_HEX, (pair) => pair.charCodeAt(0));
const LOW_DIGIT = Uint8Array.from(TO_HEX, (pair) => pair.charCodeAt(1));
// A byte's value by its two digits read as one u16 of `digitPairs` (whatever the platform's byte order), else BAD.
const PAIR = new Uint16Array(0x10000).fill(BAD);
for (const high of DIGIT_CODES) {
  for (const low of DIGIT_CODES) {
    digits[0] = high;
    digits[1] = low;
    PAIR[digitPairs[0]!] = HIGH[high]! | LOW[low]!;
  }
}
// From this many characters on, one native encode plus a table lookup per byte beats reading characters.
const ENCODE_FROM = 64;

/**
 * Lowercase hex of `bytes`. Short inputs concatenate; from 16 bytes on, the digits are written as ASCII and decoded
 * in one call, which is faster and gives a flat string rather than a rope of 2-character pieces.
 */
export function toHex(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n < 16) {
    let out = "";
    for (let i = 0; i < n; i++) out += TO_HEX[bytes[i]!];
    return out;
  }
  const d = 2 * n <= digits.length ? digits : new Uint8Array(2 * n);
  for (let i = 0, j = 0; i < n; i++, j += 2) {
    const b = bytes[i]!;
    d[j] = HIGH_DIGIT[b]!;
    d[j + 1] = LOW_DIGIT[b]!;
  }
  return ascii.decode(d.subarray(0, 2 * n));
}

/**
 * Hex text of even length (either case) to bytes, or undefined if any character is not a hex digit. The hot loop has
 * no branch per character: codes above 255 set bits above the byte and table misses set BAD, both checked at the end.
 */
export function decodeHex(text: string): Uint8Array | undefined {
  const n = text.length;
  if (n >= ENCODE_FROM && n <= digits.length) return decodeEncoded(text);
  const out = new Uint8Array(n >>> 1);
  let seen = n & 1 ? BAD : 0;
  let i = 0;
  let j = 0;
  for (; i + 3 < n; i += 4, j += 2) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = text.charCodeAt(i + 2);
    const d = text.charCodeAt(i + 3);
    const x = HIGH[a & 255]! | LOW[b & 255]!;
    const y = HIGH[c & 255]! | LOW[d & 255]!;
    seen |= x | y | a | b | c | d;
    out[j] = x;
    out[j + 1] = y;
  }
  if (i + 1 < n) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const x = HIGH[a & 255]! | LOW[b & 255]!;
    seen |= x | a | b;
    out[j] = x;
  }
  return seen > 255 ? undefined : out;
}

/** decodeHex of text that fits `digits`: any character outside ASCII encodes to more than one byte, so it shows in the count. */
function decodeEncoded(text: string): Uint8Array | undefined {
  const n = text.length;
  if ((n & 1) !== 0) return undefined;
  const { read, written } = asciiEncoder.encodeInto(text, digits);
  if (read !== n || written !== n) return undefined;
  const m = n >>> 1;
  const out = new Uint8Array(m);
  let seen = 0;
  for (let j = 0; j < m; j++) {
    const x = PAIR[digitPairs[j]!]!;
    seen |= x;
    out[j] = x;
  }
  return seen > 255 ? undefined : out;
}

// The platform's byte order, for reading digit pairs through a DataView the way `digitPairs` reads them.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Decodes the hex digits at `ascii[start, start + 2n)` (character codes, either case, seen through a DataView at any
 * offset) into `out[at, at + n)`, for a reader of JSON text held as ASCII bytes; false if any is not a hex digit (then
 * `out` holds garbage there).
 */
export function decodeHexAsciiInto(ascii: DataView, start: number, n: number, out: Uint8Array, at: number): boolean {
  let seen = 0;
  for (let j = 0, i = start; j < n; j++, i += 2) {
    const x = PAIR[ascii.getUint16(i, LITTLE_ENDIAN)]!;
    seen |= x;
    out[at + j] = x;
  }
  return seen <= 255;
}

/** The index of the first character of `text` that is not a hex digit (-1 if there is none). */
export function firstNonHexDigit(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 255 || LOW[code] === BAD) return i;
  }
  return -1;
}

/** Decodes hex text; `length`, when given, is the exact number of bytes expected. */
export function fromHex(text: unknown, path?: string, length?: number): Uint8Array {
  if (typeof text !== "string") throw new ProtocolError("INVALID_HEX", "expected a hex string", { path });
  if (text.length % 2 !== 0) throw new ProtocolError("INVALID_HEX", "hex string of odd length", { path });
  if (length !== undefined && text.length !== length * 2) {
    throw new ProtocolError("INVALID_HEX", `expected ${length * 2} hex characters, got ${text.length}`, { path });
  }
  const out = decodeHex(text);
  if (out === undefined) throw new ProtocolError("INVALID_HEX", `not a hex digit at character ${firstNonHexDigit(text)}`, { path });
  return out;
}

/** True when `text` is exactly `length` bytes of lowercase hex. */
export function isLowerHex(text: unknown, length: number): text is string {
  if (typeof text !== "string" || text.length !== length * 2) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
