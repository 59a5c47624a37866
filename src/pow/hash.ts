// One PoW hash for checking a message (nodes do it per submission): trailingZeros and powScore on the kernel's
// one-state path, a few microseconds; the scalar reference takes over where WebAssembly is missing or refused.
import { NONCE_LENGTH } from "../bytes/limits.js";
import { warnFallback } from "../crypto/fallback.js";
import { type Kernel, sharedKernel } from "./kernel.js";
import { messageNonce, powDigest, referenceTrailingZeros } from "./score.js";

// undefined: not tried yet; null: WebAssembly is missing or refused here.
let kernel: Kernel | null | undefined;

function loadKernel(): Kernel | null {
  if (kernel === undefined) {
    try {
      if (typeof WebAssembly !== "object") throw new ReferenceError("this engine has no WebAssembly");
      // The portable build: the one-state path uses no SIMD, so it is written into that build alone (every engine
      // with WebAssembly runs it), which keeps it out of the SIMD kernel's bytes in every bundle.
      kernel = sharedKernel("portable");
    } catch (error) {
      kernel = null;
      warnFallback("pow", "WebAssembly is unavailable here, so PoW hashes run in JavaScript, 10–50 times slower", error);
    }
  }
  return kernel;
}

/** Trailing zero trits (from trit 242 down) of the Curl-P-81 hash for `digest` and `nonce`. */
export function trailingZeros(digest: Uint8Array, nonce: bigint | number): number {
  const k = loadKernel();
  return k === null ? referenceTrailingZeros(digest, nonce) : k.trailingZeros(digest, nonce);
}

/** Trailing zero trits of a complete message's PoW hash (its own nonce, the last 8 bytes). */
export function messageTrailingZeros(messageBytes: Uint8Array): number {
  const digest = powDigest(messageBytes); // checks the bytes and that a nonce fits
  const k = loadKernel();
  if (k === null) return referenceTrailingZeros(digest, messageNonce(messageBytes));
  return k.trailingZerosAt(digest, messageBytes, messageBytes.length - NONCE_LENGTH);
}

/** TIP-12 score of a complete message: 3^trailingZeros / length in bytes (nonce included). */
export function powScore(messageBytes: Uint8Array): number {
  return 3 ** messageTrailingZeros(messageBytes) / messageBytes.length;
}
