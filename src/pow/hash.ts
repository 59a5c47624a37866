// One PoW hash on the WASM kernel: trailingZeros and powScore for checking a message (nodes do it per submission).
// About 5× faster than the scalar reference; the reference takes over where WebAssembly is missing.
import { sharedKernel } from "./kernel.js";
import { countTrailingZeros, messageNonce, powDigest, powInputTrits, referenceTrailingZeros } from "./score.js";

const wasm = typeof WebAssembly === "object";

/** Trailing zero trits (from trit 242 down) of the Curl-P-81 hash for `digest` and `nonce`. */
export function trailingZeros(digest: Uint8Array, nonce: bigint | number): number {
  if (!wasm) return referenceTrailingZeros(digest, nonce);
  return countTrailingZeros(sharedKernel().hash(powInputTrits(digest, nonce)));
}

/** TIP-12 score of a complete message: 3^trailingZeros / length in bytes (nonce included). */
export function powScore(messageBytes: Uint8Array): number {
  const zeros = trailingZeros(powDigest(messageBytes), messageNonce(messageBytes));
  return 3 ** zeros / messageBytes.length;
}
