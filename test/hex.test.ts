// Hex text ↔ bytes against Node's Buffer, across every path the converters take: short text read a character at a
// time, longer text encoded natively first, and text longer than the shared buffer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeHex, firstNonHexDigit, fromHex, toHex } from "../src/bytes/hex.js";
import { MAX_MESSAGE_LENGTH } from "../src/bytes/limits.js";
import { expectProtocolError } from "./helpers.js";

const bufferHex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");

// Lengths in bytes on both sides of each switch: 16 (toHex), 32 characters (decodeHex), a whole message (shared buffer).
const lengths = fc.oneof(fc.integer({ min: 0, max: 80 }), fc.integer({ min: MAX_MESSAGE_LENGTH - 2, max: MAX_MESSAGE_LENGTH + 2 }));
const anyBytes = lengths.chain((n) => fc.uint8Array({ minLength: n, maxLength: n }));

// Characters that are not hex digits, including ones whose low byte is a digit's code (U+0130, U+0161) and lone surrogates.
const nonDigits = fc.oneof(
  fc.constantFrom("g", "G", "x", "/", ":", "@", "`", " ", "\u0000", "\u007f", "\u0080", "\u00ff", "\u0130", "\u0161", "\u0100", "\ud800", "\udfff", "\u3030"),
  fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !/^[0-9a-fA-F]$/.test(c)),
);

const mixCase = (text: string, flips: number[]): string => {
  const chars = [...text];
  for (const f of flips) if (chars.length > 0) chars[f % chars.length] = chars[f % chars.length]!.toUpperCase();
  return chars.join("");
};

describe("hex", () => {
  it("toHex is Buffer's lowercase hex at every length", () => {
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        expect(toHex(bytes)).toBe(bufferHex(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it("toHex reads a view by its own offset and length", () => {
    const whole = Uint8Array.from({ length: 100 }, (_, i) => i);
    expect(toHex(whole.subarray(37, 70))).toBe(bufferHex(whole.subarray(37, 70)));
  });

  it("fromHex and decodeHex give back the bytes from lower, upper and mixed case", () => {
    fc.assert(
      fc.property(anyBytes, fc.array(fc.nat(), { maxLength: 20 }), (bytes, flips) => {
        const text = bufferHex(bytes);
        for (const t of [text, text.toUpperCase(), mixCase(text, flips)]) {
          // Compared as hex: vitest's deep equality walks a 32 KiB array element by element.
          expect(bufferHex(fromHex(t))).toBe(text);
          expect(bufferHex(decodeHex(t)!)).toBe(text);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("one character that is not a hex digit, anywhere, is refused and named by its position", () => {
    fc.assert(
      fc.property(anyBytes.filter((b) => b.length > 0), nonDigits, fc.nat(), (bytes, bad, at) => {
        const text = bufferHex(bytes);
        const i = at % text.length;
        const broken = text.slice(0, i) + bad + text.slice(i + 1);
        expect(decodeHex(broken)).toBeUndefined();
        expect(firstNonHexDigit(broken)).toBe(i);
        if (broken.length % 2 === 0) expectProtocolError(() => fromHex(broken, "field"), "INVALID_HEX", { path: "field" });
      }),
      { numRuns: 400 },
    );
  });

  it("odd lengths and wrong exact lengths are refused", () => {
    expect(decodeHex("abc")).toBeUndefined();
    expect(decodeHex("ab".repeat(40) + "a")).toBeUndefined();
    expectProtocolError(() => fromHex("abc"), "INVALID_HEX");
    expectProtocolError(() => fromHex("abcd", "id", 3), "INVALID_HEX", { path: "id" });
    expectProtocolError(() => fromHex(42 as unknown), "INVALID_HEX");
  });

  it("a hex digit's code plus 256 is not a hex digit (the fast paths look at low bytes)", () => {
    for (const digit of "09afAF") {
      const impostor = String.fromCharCode(digit.charCodeAt(0) + 256);
      for (const n of [2, 64, 200]) {
        const text = impostor + "0".repeat(n - 1);
        expect(decodeHex(text)).toBeUndefined();
        expect(firstNonHexDigit(text)).toBe(0);
      }
    }
  });
});
