// chrysalis-core: the Chrysalis message model, its canonical codec and identifiers, and the crypto under them.
export { ProtocolError, type ProtocolErrorOptions, type CoreErrorCode, type ErrorCode } from "./bytes/errors.js";
// Each layer adds its codes to ErrorCode by declaration merging. Naming each layer's union here (types only: nothing
// of those layers enters the JavaScript) loads those declarations, so ErrorCode and `ProtocolError.code` are the full
// union whichever entry point a program imports.
export type { PowErrorCode } from "./pow/errors.js";
export type { AuthErrorCode } from "./auth/errors.js";
export type { NodeErrorCode } from "./node/errors.js";
export type { ClientErrorCode } from "./client/client.js";
export { toHex, fromHex } from "./bytes/hex.js";
export { base58Encode, base58Decode } from "./bytes/base58.js";
export { bech32Encode, bech32Decode } from "./bytes/bech32.js";
export { blake2b256, sha256, ed25519PublicKey, signEd25519, verifyEd25519, ed25519Address, bech32Address, parseBech32Address } from "./crypto/index.js";
export { blake2bBackend, ed25519Backend, verifyEd25519Zip215 } from "./crypto/index.js";
// Told when hashing or PoW falls back to JavaScript because WebAssembly is refused (a strict CSP) or missing.
export { warnings, ChrysalisWarningEvent, type FallbackComponent } from "./crypto/fallback.js";
export { compareBytes, equalBytes, constantTimeEqual } from "./bytes/bytes.js";
export { isLowerHex } from "./bytes/hex.js";
// Every protocol constant (sizes, counts, type tags, the total supply), from their one place.
export * from "./bytes/limits.js";
// The model: types, canonical codec, REST JSON, identifiers, transactions, milestones.
export * from "./model/index.js";
