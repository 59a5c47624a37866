// Identifiers (PROTOCOL.md §4): message id, transaction id, essence hash, output id and network id.
// All are BLAKE2b-256 over canonical bytes; ids handed to users are lowercase hex.
import { utf8 } from "../bytes/bytes.js";
import { assertString, ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { MAX_OUTPUT_INDEX, TRANSACTION_ID_LENGTH } from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { encodeMessage, encodeTransactionEssence, encodeTransactionPayload } from "./codec.js";
import type { Message, TransactionEssence, TransactionPayload } from "./types.js";

/** An output id is the transaction id followed by the output index as u16 little-endian. */
export const OUTPUT_ID_LENGTH = TRANSACTION_ID_LENGTH + 2;

/**
 * The message id: BLAKE2b-256 of the whole serialized message, nonce included. Given bytes, hashes them as they
 * are (the caller decoded or received them); given a model, encodes it first (which applies every syntactic rule).
 */
export function messageId(messageOrBytes: Message | Uint8Array): string {
  const bytes = messageOrBytes instanceof Uint8Array ? messageOrBytes : encodeMessage(messageOrBytes);
  return toHex(blake2b256(bytes));
}

/** The transaction id: BLAKE2b-256 of the serialized transaction payload from its u32 type tag on, unlock blocks included. */
export function transactionId(payload: TransactionPayload): string {
  return toHex(blake2b256(encodeTransactionPayload(payload)));
}

/** What every signature unlock block of the transaction signs: BLAKE2b-256 of the serialized essence (32 bytes). */
export function essenceHash(essence: TransactionEssence): Uint8Array {
  return blake2b256(encodeTransactionEssence(essence));
}

function checkIndex(index: unknown, path: string): number {
  if (typeof index !== "number" || !Number.isInteger(index)) throw new ProtocolError("INVALID_ARGUMENT", "expected an integer output index", { path });
  if (index < 0 || index > MAX_OUTPUT_INDEX) throw new ProtocolError("VALUE_OUT_OF_RANGE", `output index must be 0 .. ${MAX_OUTPUT_INDEX}, got ${index}`, { path });
  return index;
}

/** The output id as 68 lowercase hex characters: transaction id (hex or 32 bytes) ‖ index as u16 LE. */
export function outputId(transactionId: string | Uint8Array, index: number): string {
  let id: string;
  if (transactionId instanceof Uint8Array) {
    if (transactionId.length !== TRANSACTION_ID_LENGTH) {
      throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a transaction id is ${TRANSACTION_ID_LENGTH} bytes, got ${transactionId.length}`, { path: "transactionId" });
    }
    id = toHex(transactionId);
  } else {
    // Validates and lower-cases in one go (upper case is accepted on input, PROTOCOL.md §6).
    id = toHex(fromHex(transactionId, "transactionId", TRANSACTION_ID_LENGTH));
  }
  const i = checkIndex(index, "index");
  return id + toHex(Uint8Array.of(i & 0xff, i >>> 8));
}

/** Splits a 68-hex-character output id into its transaction id (lowercase hex) and output index. */
export function parseOutputId(id: string): {
  /** The transaction id, lowercase hex. */
  transactionId: string;
  /** The output's index in that transaction. */
  index: number;
} {
  const bytes = fromHex(id, "outputId", OUTPUT_ID_LENGTH);
  const index = bytes[TRANSACTION_ID_LENGTH]! | (bytes[TRANSACTION_ID_LENGTH + 1]! << 8);
  if (index > MAX_OUTPUT_INDEX) throw new ProtocolError("VALUE_OUT_OF_RANGE", `output index must be 0 .. ${MAX_OUTPUT_INDEX}, got ${index}`, { path: "outputId" });
  return { transactionId: toHex(bytes.subarray(0, TRANSACTION_ID_LENGTH)), index };
}

/** The network id of a network name: the first 8 bytes of BLAKE2b-256(UTF-8 name) as a little-endian u64. */
export function networkId(name: string): bigint {
  assertString(name, "name");
  const digest = blake2b256(utf8.encode(name));
  return new DataView(digest.buffer, digest.byteOffset, 8).getBigUint64(0, true);
}
