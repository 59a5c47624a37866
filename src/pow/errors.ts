// The codes the proof-of-work layer raises, registered into the library's ErrorCode union (bytes/errors.ts).
// Adding a code: one line here.

/** The codes the proof-of-work layer raises (POW_* and UNSUPPORTED), part of ErrorCode. */
export type PowErrorCode =
  | "POW_QUEUE_FULL" // the miner's queue of waiting jobs is full
  | "POW_MINER_CLOSED" // the miner was closed before or while the job ran
  | "POW_WORKER_FAILED" // a worker could not start or stopped
  | "POW_KERNEL_ERROR" // the kernel answered a nonce that misses the target
  | "POW_NOT_FOUND" // no nonce in the rest of the nonce space meets the target
  | "UNSUPPORTED"; // the platform lacks what was asked for (WebAssembly SIMD, workers)

declare module "../bytes/errors.js" {
  interface ErrorCodeRegistry {
    pow: PowErrorCode;
  }
}
