// Which objects of objects.ts each codec operation is generated for: those the entry points of codec.ts and json.ts use
// (objects inside them are reached through them). One table per operation, so a bundle keeps only what it calls.
export const READ_ROOTS = ["message", "messagePayload", "transactionEssence", "transactionPayload", "milestonePayload", "indexationPayload", "receiptPayload"] as const;
/** Also the milestone essence (what milestone signatures sign) and inputs and outputs (sorted by their bytes). */
export const WRITE_ROOTS = [...READ_ROOTS, "milestoneEssence", "input", "output"] as const;
export const JSON_ROOTS = ["message", "messagePayload"] as const;

export type ReadRoot = (typeof READ_ROOTS)[number];
export type WriteRoot = (typeof WRITE_ROOTS)[number];
export type JsonRoot = (typeof JSON_ROOTS)[number];
