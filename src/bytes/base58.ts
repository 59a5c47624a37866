// Base58 (Bitcoin alphabet) through bs58, with failures turned into ProtocolError.
// Error messages never echo the input: it may be a secret key.
import bs58 from "bs58";
import { ProtocolError } from "./errors.js";

/** Base58 (Bitcoin alphabet) of the bytes: how secret keys and some identity keys are written. */
export function base58Encode(bytes: Uint8Array): string {
  return bs58.encode(bytes);
}

/** The bytes of a Base58 string (Bitcoin alphabet); throws ProtocolError INVALID_BASE58, naming `path`, never the input. */
export function base58Decode(text: unknown, path?: string): Uint8Array {
  if (typeof text !== "string" || text.length === 0) throw new ProtocolError("INVALID_BASE58", "expected a non-empty Base58 string", { path });
  // Base58 grows ~1.37 characters a byte; anything this long is no key or id we handle.
  if (text.length > 1024) throw new ProtocolError("INVALID_BASE58", "Base58 string too long", { path });
  const bytes = bs58.decodeUnsafe(text);
  if (bytes === undefined) throw new ProtocolError("INVALID_BASE58", "not a Base58 string", { path });
  return bytes;
}
