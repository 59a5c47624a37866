// Layer 2, crypto: BLAKE2b-256, SHA-256, Ed25519 (ZIP-215) and address derivation.
export * from "./blake2b.js";
export * from "./sha256.js";
export * from "./ed25519.js";
export * from "./address.js";
