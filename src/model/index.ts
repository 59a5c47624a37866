// Layer 3, model: the message types, the canonical binary codec, the node REST JSON, identifiers,
// transaction building and signature checks, and milestone signatures.
export type * from "./types.js";
export * from "./codec.js";
export * from "./json.js";
export { messageFromJsonText, messageFromJsonTextWithBytes, partialMessageFromJsonTextWithBytes } from "./json-text.js";
export type * from "./rest.js";
export * from "./ids.js";
export * from "./transaction.js";
export * from "./milestone.js";
export * from "./complete.js";
