// The auth layer's signature and MAC checks: strict Ed25519 (the crypto layer's verifier in its strict mode; why strict
// is said there) and HMAC-SHA-256, native where node:crypto exists.
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { verifyEd25519, verifyEd25519StrictJs } from "../crypto/ed25519.js";
import { nativeCrypto as native } from "../crypto/native.js";

/** Strict (RFC 8032, as OpenSSL decides it) Ed25519 verification: crypto's one verifier in its "strict" mode. */
export function verifyEd25519Strict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyEd25519(publicKey, message, signature, "strict");
}

export { verifyEd25519StrictJs };

/** Keyed HMAC-SHA-256: the key schedule is done once, each call hashes one message. */
export function hmacSha256(key: Uint8Array): (message: Uint8Array) => Uint8Array {
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

/** The pure-TypeScript HMAC used where node:crypto is missing; exposed to test it against the native one. */
export function hmacSha256Js(key: Uint8Array): (message: Uint8Array) => Uint8Array {
  const keyed = hmac.create(nobleSha256, key);
  return (message) => keyed.clone().update(message).digest();
}

/** Fills `bytes` from the platform CSPRNG. */
export function randomFill(bytes: Uint8Array): Uint8Array {
  return globalThis.crypto.getRandomValues(bytes);
}

export const authBackend: "native" | "noble" = native ? "native" : "noble";
