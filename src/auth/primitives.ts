// The auth layer's signature and MAC checks: strict Ed25519 (the crypto layer's verifier in its strict mode; why strict
// is said there) and HMAC-SHA-256, native where node:crypto exists.
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { utf8 } from "../bytes/bytes.js";
import { toHex } from "../bytes/hex.js";
import { verifyEd25519, verifyEd25519StrictJs } from "../crypto/ed25519.js";
import { nativeCrypto as native } from "../crypto/native.js";
import { ALPHABET, base64urlEncode } from "./base64url.js";

/** Strict (RFC 8032, as OpenSSL decides it) Ed25519 verification: crypto's one verifier in its "strict" mode. */
export function verifyEd25519Strict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyEd25519(publicKey, message, signature, "strict");
}

export { verifyEd25519StrictJs };

/** Keyed HMAC-SHA-256: the key schedule is done once, each call hashes one message (bytes, or text as its UTF-8). */
export function hmacSha256(key: Uint8Array): (message: Uint8Array | string) => Uint8Array {
  if (native) {
    const crypto = native;
    const secret = crypto.createSecretKey(key);
    return (message) => {
      const mac = crypto.createHmac("sha256", secret).update(message).digest();
      return new Uint8Array(mac.buffer, mac.byteOffset, mac.length);
    };
  }
  return hmacSha256Js(key);
}

/**
 * Keyed HMAC-SHA-256 whose tag comes back as text: lowercase hex, or unpadded base64url. node:crypto writes it straight
 * from its digest; going through the bytes (a Uint8Array over the Buffer, a Buffer over that, its text) cost 1.7 µs
 * more per tag, and a login makes two (its nonce, its JWT's signature).
 */
export function hmacSha256Text(key: Uint8Array, encoding: "hex" | "base64url"): (message: Uint8Array | string) => string {
  if (native) {
    const crypto = native;
    const secret = crypto.createSecretKey(key);
    return (message) => crypto.createHmac("sha256", secret).update(message).digest(encoding);
  }
  const mac = hmacSha256Js(key);
  return encoding === "hex" ? (message) => toHex(mac(message)) : (message) => base64urlEncode(mac(message));
}

/** The pure-TypeScript HMAC used where node:crypto is missing; exposed to test it against the native one. */
export function hmacSha256Js(key: Uint8Array): (message: Uint8Array | string) => Uint8Array {
  const keyed = hmac.create(nobleSha256, key);
  return (message) => keyed.clone().update(typeof message === "string" ? utf8.encode(message) : message).digest();
}

/** Fills `bytes` from the platform CSPRNG. */
export function randomFill(bytes: Uint8Array): Uint8Array {
  return globalThis.crypto.getRandomValues(bytes);
}

// A JWT id is the base64url text of 16 random bytes. A CSPRNG call costs about the same (~4 µs quiet, ~8 µs on a busy
// machine) for 16 bytes as for 4 KiB, and encoding one token at a time (a copy, a Buffer and its encoding) took 1.4 µs
// per login: a block of 256 ids is drawn and encoded at once, each byte handed out once. 15 bytes of each id are five
// whole base64 groups, cut as 20 characters from the block's text, and the 16th is encoded alone (2 characters): the
// same text as encoding the 16 bytes together. Ids are public the moment they are drawn; keys and seeds never come from
// here (randomFill), so no secret waits in the block.
const IDS_PER_BLOCK = 256;
const ID_RUN_BYTES = 15;
const idBlock = new Uint8Array(IDS_PER_BLOCK * (ID_RUN_BYTES + 1));
let idBlockText = "";
let idNext = IDS_PER_BLOCK;

/** A fresh token id: base64url of 16 CSPRNG bytes (22 characters). Public the moment it is drawn; never a key. */
export function randomTokenId(): string {
  if (idNext === IDS_PER_BLOCK) {
    randomFill(idBlock);
    idBlockText = base64urlEncode(idBlock.subarray(0, IDS_PER_BLOCK * ID_RUN_BYTES));
    idNext = 0;
  }
  const last = idBlock[IDS_PER_BLOCK * ID_RUN_BYTES + idNext]!;
  const run = idBlockText.slice(20 * idNext, 20 * idNext + 20);
  idNext++;
  return run + ALPHABET[last >> 2]! + ALPHABET[(last & 3) << 4]!;
}

/** Whether the auth layer's HMAC-SHA-256 and strict Ed25519 run on node:crypto (`native`) or in JavaScript through the `@noble` libraries (`noble`, where node:crypto is absent, as in browsers). */
export const authBackend: "native" | "noble" = native ? "native" : "noble";
