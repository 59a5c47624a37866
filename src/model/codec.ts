// The canonical binary codec of Chrysalis messages and the payloads that are hashed or signed on their own.
// Every function here is derived from the layouts in layout.ts: decode enforces each syntactic rule, encode refuses what decode would reject.
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MIN_MESSAGE_LENGTH } from "../bytes/limits.js";
import * as layout from "./layout.js";
import { canGenerate, generate } from "./generate.js";
import { type Codec, type Layout, decodeWith, encodeWith, interpret, validateWith } from "./serializer.js";
import type { IndexationPayload, Message, MilestonePayload, Payload, ReceiptPayload, TransactionEssence, TransactionPayload } from "./types.js";

/** The back-end that runs the layouts: specialized generated functions, or the closure interpreter. */
export type CodecEngine = "generated" | "interpreted";

let messageCodec: Codec;
let payloadCodec: Codec;
let essenceCodec: Codec;
let transactionCodec: Codec;
let milestoneCodec: Codec;
let milestoneEssenceCodec: Codec;
let indexationCodec: Codec;
let receiptCodec: Codec;
let engine: CodecEngine;

/**
 * Chooses the back-end (both derive from the same layouts and give the same results). "generated" is the default where
 * the platform allows compiling code (no Content-Security-Policy forbidding it); returns the engine now in use.
 */
export function selectCodecEngine(choice: CodecEngine = canGenerate ? "generated" : "interpreted"): CodecEngine {
  const build: (l: Layout) => Codec = choice === "generated" && canGenerate ? generate : interpret;
  messageCodec = build(layout.message);
  payloadCodec = build(layout.messagePayload);
  essenceCodec = build(layout.transactionEssence);
  transactionCodec = build(layout.transactionPayload);
  milestoneCodec = build(layout.milestonePayload);
  milestoneEssenceCodec = build(layout.milestoneEssence);
  indexationCodec = build(layout.indexationPayload);
  receiptCodec = build(layout.receiptPayload);
  engine = build === generate ? "generated" : "interpreted";
  return engine;
}
selectCodecEngine();

export function codecEngine(): CodecEngine {
  return engine;
}

/**
 * The canonical bytes of a message (53 .. 32768 of them); throws ProtocolError for anything decode would reject.
 * Small results are carved out of a shared slab like Node's pooled Buffers: respect `byteOffset`, and `slice()` before
 * transferring the underlying ArrayBuffer to a worker.
 */
export function encodeMessage(message: Message): Uint8Array {
  return encodeWith(messageCodec, message, "", MAX_MESSAGE_LENGTH);
}

/** Parses a complete message and applies every syntactic rule; byte fields are views of one private copy of the input. */
export function decodeMessage(bytes: Uint8Array): Message {
  if (bytes instanceof Uint8Array && (bytes.length < MIN_MESSAGE_LENGTH || bytes.length > MAX_MESSAGE_LENGTH)) {
    throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message is ${MIN_MESSAGE_LENGTH} .. ${MAX_MESSAGE_LENGTH} bytes, got ${bytes.length}`, { path: "", offset: 0 });
  }
  return decodeWith(messageCodec, bytes) as Message;
}

/** Applies every syntactic rule to a message model (exactly what encodeMessage checks); throws ProtocolError. */
export function validateMessage(message: Message): void {
  validateWith(messageCodec, message, "", MAX_MESSAGE_LENGTH);
}

/** Applies every syntactic rule to a top-level payload (transaction, milestone or indexation); `path` prefixes error paths. */
export function validatePayload(payload: Payload, path = ""): void {
  validateWith(payloadCodec, payload, path);
}

/** A top-level payload's bytes from its u32 type tag on (no length prefix). */
export function encodePayload(payload: Payload): Uint8Array {
  return encodeWith(payloadCodec, payload);
}

export function decodePayload(bytes: Uint8Array): Payload {
  return decodeWith(payloadCodec, bytes) as Payload;
}

/** The essence bytes whose BLAKE2b-256 each signature unlock block signs. */
export function encodeTransactionEssence(essence: TransactionEssence): Uint8Array {
  return encodeWith(essenceCodec, essence);
}

export function decodeTransactionEssence(bytes: Uint8Array): TransactionEssence {
  return decodeWith(essenceCodec, bytes) as TransactionEssence;
}

/** The transaction payload from its u32 type tag on, unlock blocks included: what the transaction id hashes. */
export function encodeTransactionPayload(payload: TransactionPayload): Uint8Array {
  return encodeWith(transactionCodec, payload);
}

export function decodeTransactionPayload(bytes: Uint8Array): TransactionPayload {
  return decodeWith(transactionCodec, bytes) as TransactionPayload;
}

export function encodeMilestonePayload(payload: MilestonePayload): Uint8Array {
  return encodeWith(milestoneCodec, payload);
}

export function decodeMilestonePayload(bytes: Uint8Array): MilestonePayload {
  return decodeWith(milestoneCodec, bytes) as MilestonePayload;
}

/**
 * The milestone essence (TIP-8): index through receipt, without the payload type and the signatures. The milestone's
 * signatures are Ed25519 over BLAKE2b-256 of these bytes.
 */
export function encodeMilestoneEssence(milestone: MilestonePayload): Uint8Array {
  return encodeWith(milestoneEssenceCodec, milestone);
}

export function encodeIndexationPayload(payload: IndexationPayload): Uint8Array {
  return encodeWith(indexationCodec, payload);
}

export function decodeIndexationPayload(bytes: Uint8Array): IndexationPayload {
  return decodeWith(indexationCodec, bytes) as IndexationPayload;
}

export function encodeReceiptPayload(payload: ReceiptPayload): Uint8Array {
  return encodeWith(receiptCodec, payload);
}

export function decodeReceiptPayload(bytes: Uint8Array): ReceiptPayload {
  return decodeWith(receiptCodec, bytes) as ReceiptPayload;
}
