// SHA-256: the prove-ownership nonce digest, the JWK thumbprint, and the digest configured secrets are compared as.
// node:crypto's one-shot hash where it exists (about 1.5 µs against 2.3 µs for @noble/hashes on a 40-byte nonce,
// once per login), @noble/hashes elsewhere.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { constantTimeEqual, utf8 } from "../bytes/bytes.js";
import { nativeCrypto as native } from "./native.js";

// crypto.hash arrived in Node 20.12 / 21.7; older Node keeps noble (createHash costs as much as noble here).
const oneShot = typeof native?.hash === "function" ? native.hash : undefined;

/** SHA-256 of the bytes (node:crypto where it has a one-shot hash, else @noble/hashes): 32 bytes. */
export function sha256(bytes: Uint8Array): Uint8Array {
  if (oneShot !== undefined) {
    const digest = oneShot("sha256", bytes, "buffer") as Buffer;
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.length);
  }
  return nobleSha256(bytes);
}

/**
 * A matcher for a configured secret (an API key, a metrics token): the given text is compared as a SHA-256 digest in
 * constant time, so neither the secret's bytes nor its length leak through timing.
 */
export function secretMatcher(secret: string): (given: string) => boolean {
  const expected = sha256(utf8.encode(secret));
  return (given) => constantTimeEqual(sha256(utf8.encode(given)), expected);
}
