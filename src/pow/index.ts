// chrysalis-core/pow: TIP-12 proof of work — b1t6, a scalar Curl-P-81 reference, score and target arithmetic,
// and the bitsliced WASM kernel run by a pool of workers.
export { b1t6Encode, b1t6Decode, trytesToTrits, tritsToTrytes, TRYTE_ALPHABET } from "./trits.js";
export { curlP81, CURL_HASH_TRITS, CURL_STATE_TRITS, CURL_ROUNDS } from "./curl.js";
export { powDigest, powInputTrits, targetZeros, messageNonce, referenceTrailingZeros, referencePowScore, MAX_TRAILING_ZEROS, POW_DIGEST_LENGTH } from "./score.js";
export { trailingZeros, powScore } from "./hash.js";
export { Kernel, KERNEL_LANES, type KernelFlavor, simdSupported, defaultFlavor, kernelModule, searchNonce } from "./kernel.js";
export {
  createMiner,
  mineNonce,
  mineNonceSync,
  abortError,
  type Miner,
  type MinerOptions,
  type MineOptions,
  type MineProgress,
  type MinerStats,
  type MinerKernel,
} from "./miner.js";
export type { PowErrorCode } from "./errors.js";
export { createJsKernel, type JsKernel } from "./kernel-js.js";
// The fallback warnings (also exported by the package root), here too for code that imports only chrysalis-core/pow.
export { warnings, ChrysalisWarningEvent, type FallbackComponent } from "../crypto/fallback.js";
