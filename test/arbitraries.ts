// The tests' arbitraries: chrysalis-core/arbitraries (src/arbitraries, derived from the schema of objects.ts) under the
// names the tests use, and the few generic helpers that have no equivalent there (fixed-length bytes, u64s, sorted ids).
import fc from "fast-check";
import { MAX_U64, MESSAGE_ID_LENGTH, TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { type ArbitraryOptions, message, output } from "../src/arbitraries/index.js";
import type { Output } from "../src/model/types.js";

export {
  indexationPayload as arbIndexationPayload,
  message as arbMessage,
  milestonePayload as arbMilestonePayload,
  receiptPayload as arbReceiptPayload,
  transactionEssence as arbEssence,
  transactionPayload as arbTransactionPayload,
} from "../src/arbitraries/index.js";

/** Unsigned byte-wise order, the protocol's "sorted". */
function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const key = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

export const arbBytes = (length: number): fc.Arbitrary<Uint8Array> => fc.uint8Array({ minLength: length, maxLength: length });
export const arbU64 = (): fc.Arbitrary<bigint> => fc.bigInt({ min: 0n, max: MAX_U64 });

/** Distinct ids in ascending order (the tests' own lists of keys and message ids). */
export function arbSortedIds(min: number, max: number, length = MESSAGE_ID_LENGTH): fc.Arbitrary<Uint8Array[]> {
  return fc.uniqueArray(arbBytes(length), { minLength: min, maxLength: max, selector: key }).map((ids) => ids.sort(compare));
}

/** A message's parents, as message() draws them. */
export const arbParents = (options: ArbitraryOptions = {}): fc.Arbitrary<Uint8Array[]> => message({ ...options, payloads: ["none"] }).map((m) => m.parents);

/** An output whose amount lets any `count` of them add up to at most the total supply. */
export const arbOutput = (count = 1): fc.Arbitrary<Output> => output({ maxAmount: Math.floor(TOTAL_SUPPLY / count) });
