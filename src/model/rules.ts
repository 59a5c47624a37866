// Cross-element rules of PROTOCOL.md §3 that the schema's declarative rules (sumAtMost, distinct) cannot say. Each is
// exported under its own name: objects.ts names it with custom(), and the generated codec imports it by that name.
import { SIGNATURE_UNLOCK_BLOCK_TYPE } from "../bytes/limits.js";
import { compareSlices } from "../bytes/cursor.js";
import type { ArrayView } from "./schema.js";

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
