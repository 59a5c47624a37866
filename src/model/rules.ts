// Cross-element rules of PROTOCOL.md §3 that the schema's declarative rules (sumAtMost, distinct) cannot say. Each is
// exported under its own name: objects.ts names it with custom(), and the generated codec imports it by that name.
// Next to each rule, how to satisfy it and how to break it (its construction), for the arbitraries that objects.ts
// derives (src/arbitraries): what the rule means lives in one place.
import { MAX_U16, REFERENCE_UNLOCK_BLOCK_TYPE, SIGNATURE_UNLOCK_BLOCK_TYPE } from "../bytes/limits.js";
import { compareSlices } from "../bytes/cursor.js";
import type { ArrayView, CustomConstruction } from "./schema.js";

/** An unlock block as the rule needs it (the model type is inferred from objects.ts, which names this rule). */
type Block = { readonly type: number; readonly reference?: number };

/**
 * Unlock blocks: a reference at position i points at a position < i holding a signature block, and no signature
 * block appears twice (compared on their serialized slices).
 */
export function unlockBlocksRule(items: readonly Block[], view: ArrayView): void {
  for (let i = 0; i < items.length; i++) {
    const block = items[i]!;
    if (block.type !== SIGNATURE_UNLOCK_BLOCK_TYPE) {
      const ref = block.reference!;
      if (ref >= i) view.fail("INVALID_REFERENCE", `reference ${ref} must point before its own position ${i}`, i, "reference");
      if (items[ref]!.type !== SIGNATURE_UNLOCK_BLOCK_TYPE) view.fail("INVALID_REFERENCE", `reference ${ref} must point at a signature unlock block`, i, "reference");
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
 * The unlock blocks of inputs whose signers are `signerOf` (one signer number per input, numbered in order of first
 * use): each signer's first input carries its signature block, later ones reference that position. The arrangement
 * the rule above accepts and the semantic check asks for (one signature block per address); buildTransactionPayload
 * writes it too.
 */
export function unlockBlocksFor<S>(signerOf: readonly number[], signatureBlock: (signer: number) => S): (S | { type: typeof REFERENCE_UNLOCK_BLOCK_TYPE; reference: number })[] {
  const firstUse: number[] = [];
  return signerOf.map((signer, i) => {
    const at = firstUse[signer];
    if (at !== undefined) return { type: REFERENCE_UNLOCK_BLOCK_TYPE, reference: at };
    firstUse[signer] = i;
    return signatureBlock(signer);
  });
}

/**
 * Signer numbers for inputs from one random choice each (what an arbitrary draws): choice 0 reuses the first signer
 * (so choices shrink toward references, the smallest blocks), at least 128 a new signer while fewer than `maxSigners`
 * signed, anything else an earlier signer. Numbered in order of first use, as unlockBlocksFor expects.
 */
export function signersFrom(choices: readonly number[], maxSigners = Infinity): number[] {
  let signers = 0;
  return choices.map((choice, i) => {
    if (i === 0 || (choice >= 128 && signers < maxSigners)) return signers++;
    return choice % signers;
  });
}

/** How the arbitraries satisfy unlockBlocksRule, and the three ways to break it (each raises the code it names). */
export const unlockBlocksConstruction: CustomConstruction = {
  variant: SIGNATURE_UNLOCK_BLOCK_TYPE,
  arrange: (signatures, choices) => unlockBlocksFor(signersFrom(choices), (signer) => signatures[signer]),
  breaks: [
    {
      // A reference to its own position or a later one.
      name: "reference-back",
      code: "INVALID_REFERENCE",
      atLeast: 1,
      apply(blocks, choice) {
        const i = choice % blocks.length;
        const out = blocks.slice();
        out[i] = { type: REFERENCE_UNLOCK_BLOCK_TYPE, reference: i + (Math.floor(choice / blocks.length) % (MAX_U16 + 1 - i)) };
        return out;
      },
    },
    {
      // A reference to a reference: block 1 references block 0 (always a signature), a later block references block 1.
      name: "reference-signature",
      code: "INVALID_REFERENCE",
      atLeast: 3,
      apply(blocks, choice) {
        const out = blocks.slice();
        out[1] = { type: REFERENCE_UNLOCK_BLOCK_TYPE, reference: 0 };
        out[2 + (choice % (blocks.length - 2))] = { type: REFERENCE_UNLOCK_BLOCK_TYPE, reference: 1 };
        return out;
      },
    },
    {
      // The first signature block again, further on.
      name: "signature-unique",
      code: "DUPLICATE",
      atLeast: 2,
      apply(blocks, choice) {
        const out = blocks.slice();
        out[1 + (choice % (blocks.length - 1))] = blocks[0];
        return out;
      },
    },
  ],
};
