// The auth layer's signature and MAC checks: strict RFC 8032 Ed25519 and HMAC-SHA-256, native where node:crypto exists.
// Strict rather than ZIP-215 (PROTOCOL.md §4 is about transaction consensus, not logins): honest signatures verify
// the same under both, and a refused proof then costs one native verification instead of a slow pure-JS re-check,
// which bounds the CPU an unauthenticated POST can burn. Public keys are imported once and cached.
import * as ed from "@noble/ed25519";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../bytes/hex.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from "../bytes/limits.js";
import { nativePublicKey } from "../crypto/ed25519.js";
import { type NodeCrypto, nativeCrypto as native } from "../crypto/native.js";

type KeyObject = import("node:crypto").KeyObject;

// Imported public keys by hex; importing costs about as much as a verification. Bounded, oldest evicted.
const KEY_CACHE_SIZE = 1024;
const keyCache = new Map<string, KeyObject | null>();

function nativeKey(crypto: NodeCrypto, publicKey: Uint8Array): KeyObject | null {
  const id = toHex(publicKey);
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  // An encoding OpenSSL refuses to load (null) is no valid key under the strict rules either.
  const key = nativePublicKey(crypto, publicKey);
  if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value as string);
  keyCache.set(id, key);
  return key;
}

/** Strict (RFC 8032) Ed25519 verification of 64-byte `signature` over `message`; false for anything that does not verify. */
export function verifyEd25519Strict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH || signature.length !== ED25519_SIGNATURE_LENGTH) return false;
  if (native) {
    const key = nativeKey(native, publicKey);
    if (key === null) return false;
    try {
      return native.verify(null, message, key, signature);
    } catch {
      return false;
    }
  }
  return verifyEd25519StrictJs(publicKey, message, signature);
}

/** The pure-TypeScript strict verification used where node:crypto is missing; exposed to test it against the native one. */
export function verifyEd25519StrictJs(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

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
