// The syntactic rules of PROTOCOL.md §3 that relate the elements of an array to each other (sums, repeated
// addresses, unlock references); counts, bounds, types and sorted order are declared in the layouts themselves.
import { ADDRESS_LENGTH, SIGNATURE_UNLOCK_BLOCK_TYPE, TAIL_TRANSACTION_HASH_LENGTH, TOTAL_SUPPLY } from "../bytes/limits.js";
import { compareSlices } from "../bytes/cursor.js";
import type { ArrayView } from "./serializer.js";
import type { MigratedFundsEntry, Output, UnlockBlock } from "./types.js";

// Where fields sit inside an element, for the byte offset of a rejection.
const OUTPUT_ADDRESS_AT = 1;
const OUTPUT_AMOUNT_AT = 1 + ADDRESS_LENGTH;
const REFERENCE_AT = 1;
const DEPOSIT_AT = TAIL_TRANSACTION_HASH_LENGTH + ADDRESS_LENGTH;

/**
 * Outputs: their sum stays within the total supply, and an address appears at most once per output type.
 * The sum is checked after every addition, so it never exceeds 2 × supply < 2^53 and stays exact.
 * Outputs are already sorted by serialized form (type, address, amount), so repeats of one (type, address) are neighbours.
 */
export function outputsRule(items: readonly Output[], view: ArrayView): void {
  let sum = 0;
  for (let i = 0; i < items.length; i++) {
    const o = items[i]!;
    sum += o.amount;
    if (sum > TOTAL_SUPPLY) view.fail("VALUE_OUT_OF_RANGE", "outputs sum to more than the total supply", i, "amount", OUTPUT_AMOUNT_AT);
    if (i > 0) {
      const a = view.start(i - 1);
      const b = view.start(i);
      if (compareSlices(view.bytes, a, a + OUTPUT_AMOUNT_AT, b, b + OUTPUT_AMOUNT_AT) === 0) {
        view.fail("DUPLICATE", "an address appears twice for one output type", i, "address", OUTPUT_ADDRESS_AT);
      }
    }
  }
}

/**
 * Unlock blocks: a reference at position i points at a position < i holding a signature block, and no signature
 * block appears twice (compared on their serialized slices).
 */
export function unlockBlocksRule(items: readonly UnlockBlock[], view: ArrayView): void {
  for (let i = 0; i < items.length; i++) {
    const block = items[i]!;
    if (block.type !== SIGNATURE_UNLOCK_BLOCK_TYPE) {
      const ref = block.reference;
      if (ref >= i) view.fail("INVALID_REFERENCE", `reference ${ref} must point before its own position ${i}`, i, "reference", REFERENCE_AT);
      if (items[ref]!.type !== SIGNATURE_UNLOCK_BLOCK_TYPE) {
        view.fail("INVALID_REFERENCE", `reference ${ref} must point at a signature unlock block`, i, "reference", REFERENCE_AT);
      }
      continue;
    }
    const s = view.start(i);
    const e = view.end(i);
    for (let j = 0; j < i; j++) {
      if (items[j]!.type !== SIGNATURE_UNLOCK_BLOCK_TYPE) continue;
      if (compareSlices(view.bytes, view.start(j), view.end(j), s, e) === 0) view.fail("DUPLICATE", `signature unlock block repeats block ${j}`, i);
    }
  }
}

/**
 * Receipt funds: (sorted and unique by the layout) each tail transaction hash once, and deposits summing to at most
 * the total supply. Sorted by serialized form, which starts with the tail hash, so repeats are neighbours.
 */
export function fundsRule(items: readonly MigratedFundsEntry[], view: ArrayView): void {
  let sum = 0;
  for (let i = 0; i < items.length; i++) {
    sum += items[i]!.deposit;
    if (sum > TOTAL_SUPPLY) view.fail("VALUE_OUT_OF_RANGE", "migrated funds sum to more than the total supply", i, "deposit", DEPOSIT_AT);
    if (i > 0) {
      const a = view.start(i - 1);
      const b = view.start(i);
      if (compareSlices(view.bytes, a, a + TAIL_TRANSACTION_HASH_LENGTH, b, b + TAIL_TRANSACTION_HASH_LENGTH) === 0) {
        view.fail("DUPLICATE", "a tail transaction hash appears twice", i, "tailTransactionHash", 0);
      }
    }
  }
}
