// Milestone signatures (TIP-8): each key signs BLAKE2b-256 of the serialized milestone essence (as Bee and Hornet verify).
// Verifying checks the milestone's keys against the keys the caller trusts for that index and every signature (ZIP-215).
import { equalBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { ED25519_SIGNATURE_LENGTH } from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { ed25519PublicKey, signEd25519, verifyEd25519 } from "../crypto/ed25519.js";
import { encodeMilestoneEssence } from "./codec.js";
import type { MilestonePayload } from "./types.js";

/** The 32 bytes every milestone signature signs: BLAKE2b-256 of the serialized milestone essence. */
export function milestoneEssenceHash(milestone: MilestonePayload): Uint8Array {
  return blake2b256(encodeMilestoneEssence(milestone));
}

/** Signs a milestone's essence with a 32-byte seed (a coordinator or a test); returns the 64-byte signature. */
export function signMilestone(milestone: MilestonePayload, seed: Uint8Array): Uint8Array {
  return signEd25519(seed, milestoneEssenceHash(milestone));
}

/** The keys a verifier trusts for a milestone index, and how many of them must sign. */
export interface MilestoneKeyRange {
  /** The keys the node trusts for this milestone index (TIP-8 "Applicable Public Keys"). */
  publicKeys: Uint8Array[];
  /** The minimum number of valid signatures (TIP-8 "Signature Threshold"); defaults to 1. */
  threshold?: number | undefined;
}

/** What verifyMilestoneSignatures found: valid, or the first failure with its code, path and signature position. */
export type MilestoneSignatureResult =
  | {
      /** The signatures are valid. */
      valid: true;
    }
  | {
      /** The signatures are not valid. */
      valid: false;
      /** COUNT_OUT_OF_RANGE (signatures vs keys, or below the threshold), UNKNOWN_KEY, INVALID_SIGNATURE. */
      code: "COUNT_OUT_OF_RANGE" | "UNKNOWN_KEY" | "INVALID_SIGNATURE";
      /** The field concerned, relative to the milestone payload. */
      path: string;
      /** The position of the signature (or key) concerned. */
      index: number;
      /** What is wrong, in words. */
      message: string;
    };

/**
 * Verifies a milestone's signatures against the keys the caller trusts (TIP-8): as many signatures as keys, at least
 * `threshold` keys, each key among the applicable ones, and signature i valid for key i over the essence hash.
 * Paths are relative to the milestone payload.
 */
export function verifyMilestoneSignatures(milestone: MilestonePayload, applicable: MilestoneKeyRange): MilestoneSignatureResult {
  try {
    return checkMilestone(milestone, applicable);
  } catch (error) {
    // A value that is not a milestone model at all is bad input too: ProtocolError, never a TypeError.
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("INVALID_ARGUMENT", "expected a milestone payload model and its applicable keys", { path: "", cause: error });
  }
}

function checkMilestone(milestone: MilestonePayload, applicable: MilestoneKeyRange): MilestoneSignatureResult {
  if (!Array.isArray(applicable.publicKeys)) throw new ProtocolError("INVALID_ARGUMENT", "expected the applicable public keys", { path: "publicKeys" });
  const threshold = applicable.threshold ?? 1;
  if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > applicable.publicKeys.length) {
    throw new ProtocolError("INVALID_ARGUMENT", `the threshold must be 1 .. ${applicable.publicKeys.length}`, { path: "threshold" });
  }
  const { publicKeys, signatures } = milestone;
  if (signatures.length !== publicKeys.length) {
    return { valid: false, code: "COUNT_OUT_OF_RANGE", path: "signatures", index: Math.min(signatures.length, publicKeys.length), message: `${publicKeys.length} keys need as many signatures, got ${signatures.length}` };
  }
  if (publicKeys.length < threshold) {
    return { valid: false, code: "COUNT_OUT_OF_RANGE", path: "publicKeys", index: publicKeys.length, message: `${publicKeys.length} keys are below the threshold of ${threshold}` };
  }
  for (let i = 0; i < publicKeys.length; i++) {
    const key = publicKeys[i]!;
    if (!applicable.publicKeys.some((k) => k instanceof Uint8Array && equalBytes(k, key))) {
      return { valid: false, code: "UNKNOWN_KEY", path: `publicKeys[${i}]`, index: i, message: `key ${toHex(key)} is not applicable to milestone ${milestone.index}` };
    }
  }
  const hash = milestoneEssenceHash(milestone);
  for (let i = 0; i < publicKeys.length; i++) {
    const signature = signatures[i]!;
    if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_LENGTH || !verifyEd25519(publicKeys[i]!, hash, signature)) {
      return { valid: false, code: "INVALID_SIGNATURE", path: `signatures[${i}]`, index: i, message: `signature ${i} does not verify for its key over the essence hash` };
    }
  }
  return { valid: true };
}

/** verifyMilestoneSignatures that throws the failure as a ProtocolError (path prefixed by `basePath`, e.g. "payload"). */
export function assertMilestoneSignatures(milestone: MilestonePayload, applicable: MilestoneKeyRange, basePath = ""): void {
  const result = verifyMilestoneSignatures(milestone, applicable);
  if (!result.valid) throw new ProtocolError(result.code, result.message, { path: basePath === "" ? result.path : `${basePath}.${result.path}` });
}

/** The public key a seed signs milestones with (for building the applicable key set in tests and tools). */
export const milestonePublicKey = ed25519PublicKey;
