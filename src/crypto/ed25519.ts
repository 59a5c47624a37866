// Ed25519 signing and verification, ZIP-215 (PROTOCOL.md §4, TIP-14) or strict: the library's one verifier.
// Native code is the fast path: libsodium (sodium-native) where it loads, else node:crypto (OpenSSL); whatever they do
// not accept, OpenSSL's verdict or @noble/ed25519 in ZIP-215 mode decides.
//
// Why the fast paths are sound: OpenSSL accepts only when S < L and [S]B = R + [k]A holds exactly (cofactorless),
// hashing R, A and the message as given; multiplying that equation by 8 gives the ZIP-215 one. So "native says
// valid" implies "ZIP-215 says valid", and every other answer (invalid, or a key it refuses to load) is re-decided
// by noble, which accepts non-canonical A and R and checks the cofactored equation. libsodium checks OpenSSL's
// equation after checks of its own, so its "valid" implies OpenSSL's, and a refusal it made at that equation is
// OpenSSL's too (sodium.ts): an honest signature is one libsodium call (about half an OpenSSL verification, with no
// key to import), and under the strict rules most refusals are too.
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { type ErrorCode, ProtocolError } from "../bytes/errors.js";
import { BoundedMap } from "../bytes/bounded-map.js";
import { toHex } from "../bytes/hex.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH, ED25519_SIGNATURE_LENGTH } from "../bytes/limits.js";
import { type NodeCrypto, nativeCrypto as native } from "./native.js";
import { libsodium, sodiumRefusalIsFinal, sodiumVerdict } from "./sodium.js";

ed.hashes.sha512 = sha512;


// The DER prefix that wraps a raw 32-byte seed as PKCS#8 for node:crypto.
const PKCS8_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + ED25519_SEED_LENGTH);
pkcs8.set(PKCS8_PREFIX);

function checkLength(value: unknown, length: number, path: string, code: ErrorCode): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new ProtocolError(code, `expected ${length} bytes`, { path });
  }
}

/** The Ed25519 public key of a 32-byte seed. */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  checkLength(seed, ED25519_SEED_LENGTH, "seed", "INVALID_KEY");
  return ed.getPublicKey(seed);
}

/** Signs `message` with the key of a 32-byte seed (deterministic, RFC 8032). */
export function signEd25519(seed: Uint8Array, message: Uint8Array): Uint8Array {
  checkLength(seed, ED25519_SEED_LENGTH, "seed", "INVALID_KEY");
  if (!(message instanceof Uint8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected a Uint8Array", { path: "message" });
  if (native) return new Uint8Array(native.sign(null, message, nativePrivateKey(native, seed, jwkSigning)));
  return ed.sign(message, seed);
}

// OpenSSL 3 loads a PKCS#8 (DER) key through its generic decoder, about 7× slower than a JWK. A JWK private key must
// name "x", but OpenSSL derives the public key from "d" and Node does not compare them, so any x serves. Whether that
// holds here is checked once below (the JWK signature must equal the DER one); otherwise signing stays on DER.
const PLACEHOLDER_X = "A".repeat(43);

function nativePrivateKey(crypto: NodeCrypto, seed: Uint8Array, jwk: boolean): import("node:crypto").KeyObject {
  if (jwk) {
    const d = Buffer.from(seed.buffer, seed.byteOffset, seed.length).toString("base64url");
    return crypto.createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d, x: PLACEHOLDER_X }, format: "jwk" });
  }
  pkcs8.set(seed, PKCS8_PREFIX.length);
  try {
    return crypto.createPrivateKey({ key: Buffer.from(pkcs8), format: "der", type: "pkcs8" });
  } finally {
    pkcs8.fill(0, PKCS8_PREFIX.length);
  }
}

function jwkSigningWorks(crypto: NodeCrypto): boolean {
  try {
    const seed = new Uint8Array(ED25519_SEED_LENGTH).fill(7);
    const message = new Uint8Array([1, 2, 3]);
    const viaJwk = crypto.sign(null, message, nativePrivateKey(crypto, seed, true));
    const viaDer = crypto.sign(null, message, nativePrivateKey(crypto, seed, false));
    return viaJwk.equals(viaDer);
  } catch {
    return false;
  }
}

const jwkSigning = native !== undefined && jwkSigningWorks(native);

/**
 * A raw 32-byte public key as a node:crypto key, or null for an encoding OpenSSL refuses to load. It goes in as a JWK:
 * OpenSSL 3 loads that with EVP_PKEY_new_raw_public_key, where a DER (SPKI) key goes through its generic decoder,
 * which costs more than the verification itself (measured: ~1.7× faster per call).
 */
export function nativePublicKey(crypto: NodeCrypto, publicKey: Uint8Array): import("node:crypto").KeyObject | null {
  try {
    const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString("base64url");
    return crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  } catch {
    return null;
  }
}

// Imported public keys by hex: importing costs a third of a verification (~26 µs), and keys recur (an address signs
// many transactions, an identity many logins). Bounded (BoundedMap: the newest 2,048 always kept, 4,096 at most). The
// former strict 1,024-entry FIFO missed on every call once one more key than that went round (1,024 identities logging
// in plus a coordinator or a transaction key): 20 µs more per verification.
const KEY_CACHE_SIZE = 4096;
const keyCache = new BoundedMap<string, import("node:crypto").KeyObject | null>(KEY_CACHE_SIZE);

function cachedNativeKey(crypto: NodeCrypto, publicKey: Uint8Array): import("node:crypto").KeyObject | null {
  const id = toHex(publicKey);
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  const key = nativePublicKey(crypto, publicKey);
  keyCache.set(id, key);
  return key;
}

function verifyNative(crypto: NodeCrypto, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = cachedNativeKey(crypto, publicKey);
  if (key === null) return false;
  try {
    return crypto.verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * Which signatures count as valid:
 * - "zip215" (the default; `PROTOCOL.md` §4, TIP-14): what the network decides for transactions and milestones;
 * - "strict": what OpenSSL decides (S < L and the cofactorless equation [S]B = R + [k]A), used where no consensus is
 *   at stake (logins, JWTs): honest signatures verify the same under both, and a refusal costs one native
 *   verification instead of a slow pure-JS re-check, which bounds the CPU an unauthenticated request can burn.
 *   Without node:crypto (browsers) verifyEd25519StrictJs computes the same rule, so a page and a server agree on
 *   every published edge case (test/ed25519.test.ts pins both to OpenSSL's verdicts).
 */
export type Ed25519Rules = "zip215" | "strict";

/**
 * Ed25519 verification of 64-byte `signature` over `message` by 32-byte `publicKey` under `rules` (ZIP-215 by
 * default). Returns false for a signature that does not verify and for arguments of the wrong length; never throws.
 */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, rules: Ed25519Rules = "zip215"): boolean {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) return false;
  if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_LENGTH) return false;
  if (!(message instanceof Uint8Array)) return false;
  const sodium = libsodium();
  // Where libsodium refused at OpenSSL's own equation (S < L, the points its own), OpenSSL would refuse too: final
  // under the strict rules, and not asked again on the way to noble under ZIP-215.
  let opensslRefuses = false;
  if (sodium) {
    const verdict = sodiumVerdict(sodium, publicKey, message, signature);
    if (verdict === true) return true;
    opensslRefuses = verdict === false && sodiumRefusalIsFinal(publicKey, signature);
    if (opensslRefuses && rules === "strict") return false;
  }
  if (native && !opensslRefuses) {
    if (verifyNative(native, publicKey, message, signature)) return true;
    // Native "valid" implies ZIP-215 "valid" (see the top of this file); its "invalid" is final only for strict.
    if (rules === "strict") return false;
  }
  return rules === "strict" ? verifyEd25519StrictJs(publicKey, message, signature) : verifyEd25519Zip215(publicKey, message, signature);
}

/** The ZIP-215 decision alone (no native fast path), for tests and comparisons. */
export function verifyEd25519Zip215(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: true });
  } catch {
    return false;
  }
}

// The group order L of Ed25519's prime-order subgroup.
const L = ed.Point.CURVE().n;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

// A as OpenSSL decodes it: any y below 2^255, taken mod p, and the sign bit honoured even on x = 0 (OpenSSL 3 accepts
// A = p + 1, the identity written with a y ≥ p): what noble's ZIP-215 decoding does.
function decodeKeyLikeOpenSsl(publicKey: Uint8Array): ed.Point | undefined {
  try {
    return ed.Point.fromBytes(publicKey, true);
  } catch {
    return undefined;
  }
}

/**
 * The strict rule in TypeScript, for platforms without node:crypto: OpenSSL's check, which is S < L, A decodable, and
 * the encoding of [S]B − [k]A equal byte for byte to R (cofactorless, so R must be canonical), with k = SHA-512(R ‖ A ‖
 * message) mod L over A and R as given. Exposed to test it against the native one.
 */
export function verifyEd25519StrictJs(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const s = littleEndian(signature.subarray(32, 64));
    if (s >= L) return false;
    const a = decodeKeyLikeOpenSsl(publicKey);
    if (a === undefined) return false;
    const r = signature.subarray(0, 32);
    const hashed = new Uint8Array(64 + message.length);
    hashed.set(r, 0);
    hashed.set(publicKey, 32);
    hashed.set(message, 64);
    const k = littleEndian(sha512(hashed)) % L;
    const expected = ed.Point.BASE.multiplyUnsafe(s).subtract(a.multiplyUnsafe(k)).toBytes();
    let difference = 0;
    for (let i = 0; i < 32; i++) difference |= expected[i]! ^ r[i]!;
    return difference === 0;
  } catch {
    return false;
  }
}

/** Whether the native fast path is available on this platform. */
export const ed25519Backend: "native+zip215" | "zip215" = native ? "native+zip215" : "zip215";
