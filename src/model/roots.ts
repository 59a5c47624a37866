// Which objects of objects.ts each codec operation is generated for: those the entry points of codec.ts and json.ts use
// (objects inside them are reached through them). One table per operation, so a bundle keeps only what it calls.
export const READ_ROOTS = ["message", "messagePayload", "transactionEssence", "transactionPayload", "milestonePayload", "indexationPayload", "receiptPayload"] as const;
/** Also the milestone essence (what milestone signatures sign) and inputs and outputs (sorted by their bytes). */
export const WRITE_ROOTS = [...READ_ROOTS, "milestoneEssence", "input", "output"] as const;
export const JSON_ROOTS = ["message", "messagePayload"] as const;
/** Read from JSON text directly (json-text.ts)... */
export const TEXT_ROOTS = ["message"] as const;
/** ...but for these, left to JSON.parse: milestones reach a node as bytes (from its peers or its coordinator), and every
 * byte of a reader for them would be in each browser bundle that reads a message's JSON text. */
export const TEXT_LEFT_OUT = ["milestonePayload"] as const;

export type ReadRoot = (typeof READ_ROOTS)[number];
export type WriteRoot = (typeof WRITE_ROOTS)[number];
export type JsonRoot = (typeof JSON_ROOTS)[number];
export type TextRoot = (typeof TEXT_ROOTS)[number];
