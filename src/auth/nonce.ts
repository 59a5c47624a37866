// The prove-ownership proof itself (PROTOCOL.md §7): a 40-hex nonce, its SHA-256 digest, and Ed25519 over the 32 raw digest bytes.
// Both sides: createNonce/verifySignedNonce for servers, signNonce for clients. The secret key never reaches an error message.
import { base58Decode, base58Encode } from "../bytes/base58.js";
import { constantTimeEqual, copyBytes } from "../bytes/bytes.js";
import { isLowerHex, toHex } from "../bytes/hex.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH, ED25519_SIGNATURE_LENGTH } from "../bytes/limits.js";
import { ed25519PublicKey, signEd25519 } from "../crypto/ed25519.js";
import { sha256 } from "../crypto/sha256.js";
import { AuthError } from "./errors.js";
import { randomFill, verifyEd25519Strict } from "./primitives.js";

/** Random bytes in a nonce; its text is twice as many lowercase hex characters. */
export const AUTH_NONCE_BYTES = 20;
/** Lowercase hex characters of a nonce. */
export const AUTH_NONCE_LENGTH = 2 * AUTH_NONCE_BYTES;
/** Hex characters of a signedNonce (a 64-byte Ed25519 signature). */
export const SIGNED_NONCE_LENGTH = 2 * ED25519_SIGNATURE_LENGTH;

/** A fresh nonce: 20 bytes from the platform CSPRNG as 40 lowercase hex characters. */
export function createNonce(): string {
  return toHex(randomFill(new Uint8Array(AUTH_NONCE_BYTES)));
}

/** True when `nonce` has the nonce's shape: exactly 40 lowercase hex characters. */
export function isNonce(nonce: unknown): nonce is string {
  return isLowerHex(nonce, AUTH_NONCE_BYTES);
}

/** SHA-256 of the nonce's UTF-8 bytes (the 32 bytes that get signed). Refuses anything but 40 lowercase hex characters. */
export function hashNonce(nonce: string): Uint8Array {
  if (!isNonce(nonce)) throw new AuthError("INVALID_NONCE", "expected a nonce of 40 lowercase hex characters", { path: "nonce" });
  // Validated ASCII: each character is its own UTF-8 byte.
  const text = new Uint8Array(AUTH_NONCE_LENGTH);
  for (let i = 0; i < AUTH_NONCE_LENGTH; i++) text[i] = nonce.charCodeAt(i);
  return sha256(text);
}

function badSecret(why: string): AuthError {
  return new AuthError("INVALID_SECRET_KEY", why, { path: "secretKey" });
}

/**
 * The 32-byte seed of a secret key given as Base58 text (or bytes): a 32-byte seed,
 * or a 64-byte seed ‖ public key whose public half must match. Returns a fresh copy the caller may wipe.
 */
export function decodeSecretKey(secretKey: string | Uint8Array): Uint8Array {
  let decoded: Uint8Array;
  let owned: boolean;
  if (typeof secretKey === "string") {
    try {
      decoded = base58Decode(secretKey, "secretKey");
    } catch {
      throw badSecret("the secret key is not Base58 text");
    }
    owned = true;
  } else if (secretKey instanceof Uint8Array) {
    decoded = secretKey;
    owned = false;
  } else {
    throw badSecret("expected the secret key as Base58 text");
  }
  try {
    if (decoded.length === ED25519_SEED_LENGTH) return copyBytes(decoded);
    if (decoded.length === ED25519_SEED_LENGTH + ED25519_PUBLIC_KEY_LENGTH) {
      const seed = copyBytes(decoded, 0, ED25519_SEED_LENGTH);
      if (!constantTimeEqual(ed25519PublicKey(seed), decoded.subarray(ED25519_SEED_LENGTH))) {
        seed.fill(0);
        throw badSecret("the public half of the 64-byte secret key does not belong to its seed");
      }
      return seed;
    }
    throw badSecret(`expected a 32-byte seed or a 64-byte seed and public key, got ${decoded.length} bytes`);
  } finally {
    if (owned) decoded.fill(0);
  }
}

/**
 * Signs a nonce for the POST of prove-ownership: Ed25519 with the key of `secretKeyBase58` over
 * SHA-256(nonce), as 128 lowercase hex characters.
 */
export function signNonce(nonce: string, secretKeyBase58: string | Uint8Array): string {
  const digest = hashNonce(nonce);
  const seed = decodeSecretKey(secretKeyBase58);
  try {
    return toHex(signEd25519(seed, digest));
  } finally {
    seed.fill(0);
  }
}

/** The Ed25519 public key of a secret key in the form signNonce takes. */
export function publicKeyFromSecretKey(secretKeyBase58: string | Uint8Array): Uint8Array {
  const seed = decodeSecretKey(secretKeyBase58);
  try {
    return ed25519PublicKey(seed);
  } finally {
    seed.fill(0);
  }
}

/** A new identity key pair: the Base58 32-byte seed (the secret a client keeps) and its public key. */
export function generateIdentityKeyPair(): {
  /** The 32-byte Ed25519 seed in Base58: what signNonce takes. */
  secretKey: string;
  /** The 32-byte Ed25519 public key: what an identity registry holds. */
  publicKey: Uint8Array;
} {
  const seed = randomFill(new Uint8Array(ED25519_SEED_LENGTH));
  try {
    return { secretKey: base58Encode(seed), publicKey: ed25519PublicKey(seed) };
  } finally {
    seed.fill(0);
  }
}

/** The 64 signature bytes of a signedNonce (128 hex characters; either case is read). */
export function parseSignedNonce(signedNonce: unknown): Uint8Array {
  if (typeof signedNonce !== "string" || signedNonce.length !== SIGNED_NONCE_LENGTH) {
    throw new AuthError("INVALID_SIGNED_NONCE", "expected a signedNonce of 128 hex characters", { path: "signedNonce" });
  }
  const out = new Uint8Array(ED25519_SIGNATURE_LENGTH);
  for (let i = 0; i < ED25519_SIGNATURE_LENGTH; i++) {
    const hi = hexValue(signedNonce.charCodeAt(2 * i));
    const lo = hexValue(signedNonce.charCodeAt(2 * i + 1));
    if ((hi | lo) < 0) throw new AuthError("INVALID_SIGNED_NONCE", `not a hex digit at character ${hi < 0 ? 2 * i : 2 * i + 1}`, { path: "signedNonce" });
    out[i] = (hi << 4) | lo;
  }
  return out;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Checks a 32-byte Ed25519 public key given as bytes. */
export function assertPublicKey(publicKey: unknown, path = "publicKey"): asserts publicKey is Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) {
    throw new AuthError("INVALID_PUBLIC_KEY", "expected a 32-byte Ed25519 public key", { path });
  }
}

/**
 * Whether `signedNonce` is the Ed25519 signature by `publicKey` over SHA-256(nonce) (strict RFC 8032, see primitives.ts).
 * Malformed arguments raise AuthError (400); a well-formed proof that does not verify returns false.
 */
export function verifySignedNonce(nonce: string, signedNonce: string, publicKey: Uint8Array): boolean {
  const digest = hashNonce(nonce);
  const signature = parseSignedNonce(signedNonce);
  assertPublicKey(publicKey);
  return verifyEd25519Strict(publicKey, digest, signature);
}
