// TIP-12 proof-of-work arithmetic: the digest a nonce is searched for, the Curl input, trailing zeros, score, target.
// Exact throughout: targets are found with integer powers of 3, never with logarithms (PROTOCOL.md §5).
import { ProtocolError, assertBytes, assertInteger } from "../bytes/errors.js";
import { MAX_U64, NONCE_LENGTH } from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { CURL_HASH_TRITS, curlP81 } from "./curl.js";
import { TRITS_PER_BYTE, byteToTrits } from "./trits.js";

/** The PoW digest is BLAKE2b-256, 32 bytes. */
export const POW_DIGEST_LENGTH = 32;
/** Where the nonce's trits start in the Curl input: after the digest's 192. */
export const NONCE_TRIT_OFFSET = POW_DIGEST_LENGTH * TRITS_PER_BYTE;
/** The most trailing zeros a 243-trit hash can have. */
export const MAX_TRAILING_ZEROS = CURL_HASH_TRITS;

const MAX_NONCE = MAX_U64;

/** A nonce as a u64 bigint; numbers must be safe non-negative integers. */
export function toNonce(value: unknown, path: string): bigint {
  if (typeof value === "number") {
    assertInteger(value, path, 0, Number.MAX_SAFE_INTEGER);
    return BigInt(value);
  }
  if (typeof value !== "bigint") throw new ProtocolError("INVALID_ARGUMENT", "expected a bigint nonce", { path });
  if (value < 0n || value > MAX_NONCE) throw new ProtocolError("VALUE_OUT_OF_RANGE", "a nonce is a u64 (0 .. 2^64-1)", { path });
  return value;
}

function assertMessage(messageBytes: unknown): asserts messageBytes is Uint8Array {
  assertBytes(messageBytes, "messageBytes");
  if (messageBytes.length < NONCE_LENGTH) {
    throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message of ${messageBytes.length} bytes cannot carry an ${NONCE_LENGTH}-byte nonce`, { path: "messageBytes" });
  }
}

/** BLAKE2b-256 of the message without its final 8 nonce bytes. */
export function powDigest(messageBytes: Uint8Array): Uint8Array {
  assertMessage(messageBytes);
  return blake2b256(messageBytes.subarray(0, messageBytes.length - NONCE_LENGTH));
}

/** The 243 Curl input trits: b1t6(digest) ‖ b1t6(nonce as 8 bytes LE) ‖ 0 0 0. */
export function powInputTrits(digest: Uint8Array, nonce: bigint | number): Int8Array {
  assertBytes(digest, "digest", POW_DIGEST_LENGTH);
  const n = toNonce(nonce, "nonce");
  const trits = new Int8Array(CURL_HASH_TRITS);
  for (let i = 0; i < POW_DIGEST_LENGTH; i++) byteToTrits(digest[i]!, trits, i * TRITS_PER_BYTE);
  for (let i = 0; i < NONCE_LENGTH; i++) byteToTrits(Number((n >> BigInt(8 * i)) & 0xffn), trits, NONCE_TRIT_OFFSET + i * TRITS_PER_BYTE);
  return trits;
}

/** Trailing zero trits (from trit 242 down) of the Curl-P-81 hash for `digest` and `nonce` on the scalar reference
 * (~0.3 ms): the oracle the kernels are tested against. `trailingZeros` (hash.ts) is the fast path. */
export function referenceTrailingZeros(digest: Uint8Array, nonce: bigint | number): number {
  return countTrailingZeros(curlP81(powInputTrits(digest, nonce)));
}

/** Zero trits at the end of a 243-trit hash. */
export function countTrailingZeros(hash: Int8Array): number {
  let zeros = 0;
  while (zeros < CURL_HASH_TRITS && hash[CURL_HASH_TRITS - 1 - zeros] === 0) zeros++;
  return zeros;
}

/** The nonce a message carries: its last 8 bytes, little-endian. */
export function messageNonce(messageBytes: Uint8Array): bigint {
  assertMessage(messageBytes);
  return new DataView(messageBytes.buffer, messageBytes.byteOffset + messageBytes.length - NONCE_LENGTH, NONCE_LENGTH).getBigUint64(0, true);
}

/** TIP-12 score of a complete message on the scalar reference: 3^trailingZeros / length in bytes (nonce included). */
export function referencePowScore(messageBytes: Uint8Array): number {
  const zeros = referenceTrailingZeros(powDigest(messageBytes), messageNonce(messageBytes));
  return 3 ** zeros / messageBytes.length;
}

function assertScore(minScore: unknown): asserts minScore is number {
  if (typeof minScore !== "number" || !Number.isFinite(minScore) || minScore < 0) {
    throw new ProtocolError("INVALID_ARGUMENT", "minScore must be a finite number ≥ 0", { path: "minScore" });
  }
}

/** The smallest t with 3^t ≥ minScore · messageLength, exactly (a fractional score is an exact binary fraction).
 * May exceed 243, the most a hash can reach; the miner rejects such targets. */
export function targetZeros(messageLength: number, minScore: number): number {
  assertInteger(messageLength, "messageLength", 1, Number.MAX_SAFE_INTEGER);
  assertScore(minScore);
  if (minScore === 0) return 0;
  // minScore = numerator / 2^shift exactly; then compare 3^t · 2^shift ≥ numerator · length in integers.
  let shift = 0;
  let scaled = minScore;
  while (!Number.isInteger(scaled)) {
    scaled *= 2;
    shift++;
  }
  const need = BigInt(scaled) * BigInt(messageLength);
  const unit = 1n << BigInt(shift);
  let t = 0;
  let power = unit;
  while (power < need) {
    power *= 3n;
    t++;
  }
  return t;
}
