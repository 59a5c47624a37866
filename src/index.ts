// chrysalis-core: the Chrysalis message model, its canonical codec and identifiers, and the crypto under them.
export { ProtocolError, type ProtocolErrorOptions, type CoreErrorCode } from "./bytes/errors.js";
export { toHex, fromHex } from "./bytes/hex.js";
export { base58Encode, base58Decode } from "./bytes/base58.js";
export { bech32Encode, bech32Decode } from "./bytes/bech32.js";
export { blake2b256, sha256, ed25519PublicKey, signEd25519, verifyEd25519, ed25519Address, bech32Address, parseBech32Address } from "./crypto/index.js";
