// chrysalis-core/arbitraries: fast-check arbitraries of Chrysalis messages and their parts, derived from the schema of
// objects.ts (derive.ts walks the declarations), for the property tests and fuzzers of projects that use the library.
// fast-check is a peer dependency: only this entry point imports it.
import type { Arbitrary } from "fast-check";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";
import { encodeMessage } from "../model/codec.js";
import { messageToJson } from "../model/json.js";
import * as objects from "../model/objects.js";
import type { Node } from "../model/schema.js";
import type { IndexationPayload, Message, MessageJson, MilestonePayload, Output, ReceiptPayload, TransactionEssence, TransactionPayload } from "../model/types.js";
import { Deriver, fewestBytes } from "./derive.js";
import { type ArbitraryOptions, capsOf, invalidOption, MAX_PAYLOAD_BYTES, type MessageOptions } from "./options.js";

export type { ArbitraryOptions, MessageOptions, MessagePayloadKind } from "./options.js";
export { signedTransaction, type SignedTransaction, type SignedTransactionOptions, type SigningKey, type SpentOutput } from "./signed.js";
export { malformedMessageBytes, malformedMessageRules, type MalformedMessage, type MalformedMessageOptions, type MessageRule } from "./malformed.js";

/** An arbitrary of `node` under the options, within `most` bytes unless `maxBytes` says fewer. */
function derived<T>(node: Node, options: ArbitraryOptions | MessageOptions, most: number, message = false): Arbitrary<T> {
  const { caps, budget } = capsOf(options, most, message);
  const fewest = fewestBytes(node, caps);
  if (budget < fewest) throw invalidOption("maxBytes", `these options need at least ${fewest} bytes, got ${budget}`);
  return new Deriver(caps).root(node, budget) as Arbitrary<T>;
}

/**
 * Syntactically valid messages (every rule `decodeMessage` applies holds): no payload, a transaction, a milestone
 * (with or without a receipt) or an indexation, each as often; every count and length from its least to its most,
 * each bound often, and messages up to exactly 32768 bytes. Shrinks toward fewer and smaller parts.
 */
export function message(options: MessageOptions = {}): Arbitrary<Message> {
  return derived(objects.message, options, MAX_MESSAGE_LENGTH, true);
}

/** The canonical encodings of `message(options)`: bytes `decodeMessage` takes and `encodeMessage` gives back. */
export function messageBytes(options: MessageOptions = {}): Arbitrary<Uint8Array> {
  return message(options).map((m) => encodeMessage(m));
}

/** The node REST JSON of `message(options)`: what `messageToJson` writes, which `messageFromJson` reads back to the message. */
export function messageJson(options: MessageOptions = {}): Arbitrary<MessageJson> {
  return message(options).map((m) => messageToJson(m));
}

/** Transaction payloads (their unlock blocks meet the syntactic rules; signatures are random bytes: see signedTransaction). */
export function transactionPayload(options: ArbitraryOptions = {}): Arbitrary<TransactionPayload> {
  return derived(objects.transactionPayload, options, MAX_PAYLOAD_BYTES);
}

/** Transaction essences, as a transaction payload holds them (room is left for their unlock blocks). */
export function transactionEssence(options: ArbitraryOptions = {}): Arbitrary<TransactionEssence> {
  return derived(objects.transactionEssence, options, MAX_PAYLOAD_BYTES - 4);
}

/** Milestone payloads, with or without a receipt; signatures are random bytes. */
export function milestonePayload(options: ArbitraryOptions = {}): Arbitrary<MilestonePayload> {
  return derived(objects.milestonePayload, options, MAX_PAYLOAD_BYTES);
}

/** Indexation payloads: an index of 1 .. 64 bytes, data of any length that fits. */
export function indexationPayload(options: ArbitraryOptions = {}): Arbitrary<IndexationPayload> {
  return derived(objects.indexationPayload, options, MAX_PAYLOAD_BYTES);
}

/** Receipts of migrated funds, as a milestone carries them. */
export function receiptPayload(options: ArbitraryOptions = {}): Arbitrary<ReceiptPayload> {
  return derived(objects.receiptPayload, options, MAX_PAYLOAD_BYTES);
}

/** Outputs of either kind (SigLockedSingleOutput, SigLockedDustAllowanceOutput), any amount in their range. */
export function output(options: ArbitraryOptions = {}): Arbitrary<Output> {
  return derived(objects.output, options, MAX_PAYLOAD_BYTES);
}
