// The canonical binary codec of Chrysalis messages and of the payloads that are hashed or signed on their own.
// Every function here runs the codec derived from objects.ts: decode enforces each syntactic rule, encode refuses what decode would reject.
import { compareBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MIN_MESSAGE_LENGTH } from "../bytes/limits.js";
import { readers, sizers, writers } from "./codecs.generated.js";
import { decodeWith, encodeWith, type SizeFn, validateWith, type WriteFn } from "./engine.js";
import type { WriteRoot } from "./roots.js";
import type { IndexationPayload, Input, Message, MilestonePayload, Output, Payload, ReceiptPayload, TransactionEssence, TransactionPayload } from "./types.js";

/**
 * The canonical bytes of a message (53 .. 32768 of them); throws ProtocolError for anything decode would reject.
 * Small results are carved out of a shared slab like Node's pooled Buffers: respect `byteOffset`, and `slice()` before
 * transferring the underlying ArrayBuffer to a worker.
 */
export function encodeMessage(message: Message): Uint8Array {
  return encodeWith(sizers.message, writers.message, message, "", MAX_MESSAGE_LENGTH);
}

/** Parses a complete message and applies every syntactic rule; byte fields are views of one private copy of the input. */
export function decodeMessage(bytes: Uint8Array): Message {
  if (bytes instanceof Uint8Array && (bytes.length < MIN_MESSAGE_LENGTH || bytes.length > MAX_MESSAGE_LENGTH)) {
    throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message is ${MIN_MESSAGE_LENGTH} .. ${MAX_MESSAGE_LENGTH} bytes, got ${bytes.length}`, { path: "", offset: 0 });
  }
  return decodeWith(readers.message, bytes) as Message;
}

/** Applies every syntactic rule to a message model (exactly what encodeMessage checks); throws ProtocolError. */
export function validateMessage(message: Message): void {
  validateWith(sizers.message, writers.message, message, "", MAX_MESSAGE_LENGTH);
}

/** Applies every syntactic rule to a top-level payload (transaction, milestone or indexation); `path` prefixes error paths. */
export function validatePayload(payload: Payload, path = ""): void {
  validateWith(sizers.messagePayload, writers.messagePayload, payload, path);
}

/** A top-level payload's bytes from its u32 type tag on (no length prefix). */
export function encodePayload(payload: Payload): Uint8Array {
  return encodeWith(sizers.messagePayload, writers.messagePayload, payload);
}

/** Parses a top-level payload's bytes from its u32 type tag on (no length prefix) and applies every syntactic rule. */
export function decodePayload(bytes: Uint8Array): Payload {
  return decodeWith(readers.messagePayload, bytes) as Payload;
}

/** The essence bytes whose BLAKE2b-256 each signature unlock block signs. */
export function encodeTransactionEssence(essence: TransactionEssence): Uint8Array {
  return encodeWith(sizers.transactionEssence, writers.transactionEssence, essence);
}

/** Parses transaction essence bytes and applies every syntactic rule. */
export function decodeTransactionEssence(bytes: Uint8Array): TransactionEssence {
  return decodeWith(readers.transactionEssence, bytes) as TransactionEssence;
}

/** The transaction payload from its u32 type tag on, unlock blocks included: what the transaction id hashes. */
export function encodeTransactionPayload(payload: TransactionPayload): Uint8Array {
  return encodeWith(sizers.transactionPayload, writers.transactionPayload, payload);
}

/** Parses a transaction payload's bytes from its u32 type tag on and applies every syntactic rule. */
export function decodeTransactionPayload(bytes: Uint8Array): TransactionPayload {
  return decodeWith(readers.transactionPayload, bytes) as TransactionPayload;
}

/** The milestone payload from its u32 type tag on, signatures included; throws ProtocolError for anything decode would reject. */
export function encodeMilestonePayload(payload: MilestonePayload): Uint8Array {
  return encodeWith(sizers.milestonePayload, writers.milestonePayload, payload);
}

/** Parses a milestone payload's bytes from its u32 type tag on and applies every syntactic rule. */
export function decodeMilestonePayload(bytes: Uint8Array): MilestonePayload {
  return decodeWith(readers.milestonePayload, bytes) as MilestonePayload;
}

/**
 * The milestone essence (TIP-8): index through receipt, without the payload type and the signatures. The milestone's
 * signatures are Ed25519 over BLAKE2b-256 of these bytes.
 */
export function encodeMilestoneEssence(milestone: MilestonePayload): Uint8Array {
  return encodeWith(sizers.milestoneEssence, writers.milestoneEssence, milestone);
}

/** The indexation payload from its u32 type tag on; throws ProtocolError for anything decode would reject. */
export function encodeIndexationPayload(payload: IndexationPayload): Uint8Array {
  return encodeWith(sizers.indexationPayload, writers.indexationPayload, payload);
}

/** Parses an indexation payload's bytes from its u32 type tag on and applies every syntactic rule. */
export function decodeIndexationPayload(bytes: Uint8Array): IndexationPayload {
  return decodeWith(readers.indexationPayload, bytes) as IndexationPayload;
}

/** The receipt payload from its u32 type tag on; throws ProtocolError for anything decode would reject. */
export function encodeReceiptPayload(payload: ReceiptPayload): Uint8Array {
  return encodeWith(sizers.receiptPayload, writers.receiptPayload, payload);
}

/** Parses a receipt payload's bytes from its u32 type tag on and applies every syntactic rule. */
export function decodeReceiptPayload(bytes: Uint8Array): ReceiptPayload {
  return decodeWith(readers.receiptPayload, bytes) as ReceiptPayload;
}

/**
 * `items` in the protocol's sorted order (ascending serialized form, type tag included), each encoded once to find its
 * place; an element that does not encode is refused with `path[i]` (its position as given).
 */
function sortedBySerializedForm<T>(root: WriteRoot, items: readonly T[], path: string): T[] {
  const size: SizeFn = sizers[root];
  const write: WriteFn = writers[root];
  if (!Array.isArray(items)) throw new ProtocolError("INVALID_ARGUMENT", `expected an array of ${root}s`, { path });
  const keyed = items.map((item, i) => ({ item, key: encodeWith(size, write, item, `${path}[${i}]`) }));
  return keyed.sort((a, b) => compareBytes(a.key, b.key)).map((k) => k.item);
}

/** Inputs in canonical (serialized) order, as an essence must hold them. */
export function sortInputs<T extends Input>(inputs: readonly T[], path = "inputs"): T[] {
  return sortedBySerializedForm("input", inputs, path);
}

/** Outputs in canonical (serialized) order, as an essence must hold them. */
export function sortOutputs<T extends Output>(outputs: readonly T[], path = "outputs"): T[] {
  return sortedBySerializedForm("output", outputs, path);
}
