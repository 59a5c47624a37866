// SHA-256 (@noble/hashes): the prove-ownership nonce digest.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";

export function sha256(bytes: Uint8Array): Uint8Array {
  return nobleSha256(bytes);
}
