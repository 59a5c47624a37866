// Layer 1, bytes: encodings and the error type. Imports nothing from the layers above.
export * from "./errors.js";
export * from "./hex.js";
export * from "./base58.js";
export * from "./bech32.js";
export * from "./bytes.js";
