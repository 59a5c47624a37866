// Hex text ↔ bytes. Output is lowercase without 0x; input accepts either case (PROTOCOL.md §6).
// Table-driven so that a 32 KiB message converts without per-byte string concatenation.
import { ProtocolError } from "./errors.js";

const TO_HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const FROM_HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  FROM_HEX["0123456789abcdef".charCodeAt(i)] = i;
  FROM_HEX["0123456789ABCDEF".charCodeAt(i)] = i;
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += TO_HEX[bytes[i]!];
  return out;
}

function nibble(text: string, index: number, path: string | undefined): number {
  const code = text.charCodeAt(index);
  const value = code < 128 ? FROM_HEX[code]! : -1;
  if (value < 0) throw new ProtocolError("INVALID_HEX", `not a hex digit at character ${index}`, { path });
  return value;
}

/** Decodes hex text; `length`, when given, is the exact number of bytes expected. */
export function fromHex(text: unknown, path?: string, length?: number): Uint8Array {
  if (typeof text !== "string") throw new ProtocolError("INVALID_HEX", "expected a hex string", { path });
  if (text.length % 2 !== 0) throw new ProtocolError("INVALID_HEX", "hex string of odd length", { path });
  if (length !== undefined && text.length !== length * 2) {
    throw new ProtocolError("INVALID_HEX", `expected ${length * 2} hex characters, got ${text.length}`, { path });
  }
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibble(text, 2 * i, path) << 4) | nibble(text, 2 * i + 1, path);
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
