// Ed25519 address derivation and its Bech32 form (TIP-11): 0x00 ‖ BLAKE2b-256(public key).
import { bech32Decode, bech32Encode } from "../bytes/bech32.js";
import { ProtocolError } from "../bytes/errors.js";
import { ED25519_ADDRESS_LENGTH, ED25519_ADDRESS_TYPE, ED25519_PUBLIC_KEY_LENGTH } from "../bytes/limits.js";
import { blake2b256 } from "./blake2b.js";


/** The 32-byte Ed25519 address of a public key: BLAKE2b-256(publicKey). */
export function ed25519Address(publicKey: Uint8Array): Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) {
    throw new ProtocolError("INVALID_KEY", "expected a 32-byte Ed25519 public key", { path: "publicKey" });
  }
  return blake2b256(publicKey);
}

/** Bech32 text of a 32-byte Ed25519 address under `hrp` (`iota` mainnet, `atoi` test networks). */
export function bech32Address(hrp: string, address: Uint8Array): string {
  if (!(address instanceof Uint8Array) || address.length !== ED25519_ADDRESS_LENGTH) {
    throw new ProtocolError("INVALID_ARGUMENT", "expected a 32-byte Ed25519 address", { path: "address" });
  }
  const data = new Uint8Array(1 + ED25519_ADDRESS_LENGTH);
  data[0] = ED25519_ADDRESS_TYPE;
  data.set(address, 1);
  return bech32Encode(hrp, data);
}

/** Parses a Bech32 Ed25519 address; rejects other address types and lengths. */
export function parseBech32Address(text: string): {
  /** The human-readable part: `iota` on mainnet, `atoi` on test networks. */
  hrp: string;
  /** The 32-byte Ed25519 address. */
  address: Uint8Array;
} {
  const { hrp, data } = bech32Decode(text, "address");
  if (data.length !== 1 + ED25519_ADDRESS_LENGTH) {
    throw new ProtocolError("INVALID_BECH32", `expected 33 bytes of address data, got ${data.length}`, { path: "address" });
  }
  if (data[0] !== ED25519_ADDRESS_TYPE) {
    throw new ProtocolError("INVALID_TYPE", `unsupported address type ${data[0]}`, { path: "address" });
  }
  return { hrp, address: data.slice(1) };
}
