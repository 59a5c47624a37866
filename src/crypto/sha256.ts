// SHA-256 (@noble/hashes): the prove-ownership nonce digest, and the digest configured secrets are compared as.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { constantTimeEqual, utf8 } from "../bytes/bytes.js";

export function sha256(bytes: Uint8Array): Uint8Array {
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
