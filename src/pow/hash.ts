// One PoW hash on the WASM kernel: trailingZeros and powScore for checking a message (nodes do it per submission).
// About 5× faster than the scalar reference; the reference takes over where WebAssembly is missing or refused.
import { warnFallback } from "../crypto/fallback.js";
import { type Kernel, sharedKernel } from "./kernel.js";
import { countTrailingZeros, messageNonce, powDigest, powInputTrits, referenceTrailingZeros } from "./score.js";

// undefined: not tried yet; null: WebAssembly is missing or refused here.
let kernel: Kernel | null | undefined;

/** Trailing zero trits (from trit 242 down) of the Curl-P-81 hash for `digest` and `nonce`. */
export function trailingZeros(digest: Uint8Array, nonce: bigint | number): number {
  if (kernel === undefined) {
    try {
      if (typeof WebAssembly !== "object") throw new ReferenceError("this engine has no WebAssembly");
      kernel = sharedKernel();
    } catch (error) {
      kernel = null;
      warnFallback("pow", "WebAssembly is unavailable here, so PoW hashes run in JavaScript, 10–50 times slower", error);
    }
  }
  if (kernel === null) return referenceTrailingZeros(digest, nonce);
  return countTrailingZeros(kernel.hash(powInputTrits(digest, nonce)));
}

/** TIP-12 score of a complete message: 3^trailingZeros / length in bytes (nonce included). */
export function powScore(messageBytes: Uint8Array): number {
  const zeros = trailingZeros(powDigest(messageBytes), messageNonce(messageBytes));
  return 3 ** zeros / messageBytes.length;
}
