// The node REST JSON form of a message (PROTOCOL.md §6, node API v1 / iota.js 1.8 IMessage) and the model, both ways,
// run by the JSON codec derived from objects.ts. Every error names its JSON path.
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MESSAGE_ID_LENGTH } from "../bytes/limits.js";
import { jsonReaders, jsonWriters, sizers, writers } from "./codecs.generated.js";
import { fromJsonWith, fromJsonWithBytes, partialOf, toJsonWith } from "./engine.js";
import type { Message, MessageJson, PartialMessage, Payload, PayloadJson } from "./types.js";

export type {
  Ed25519AddressJson,
  Ed25519SignatureJson,
  IndexationPayloadJson,
  MessageJson,
  MigratedFundsEntryJson,
  MilestonePayloadJson,
  OutputJson,
  PartialMessage,
  PayloadJson,
  ReceiptPayloadJson,
  ReferenceUnlockBlockJson,
  SigLockedDustAllowanceOutputJson,
  SigLockedSingleOutputJson,
  SignatureUnlockBlockJson,
  TransactionEssenceJson,
  TransactionPayloadJson,
  TreasuryTransactionPayloadJson,
  UnlockBlockJson,
  UtxoInputJson,
} from "./types.js";

/** What GET /api/v1/info answers, in the Hornet shape (`networkId` is the network NAME there, as iota.js expects). */
export interface NodeInfoJson {
  /** The node software's name. */
  name: string;
  /** Its version. */
  version: string;
  /** Whether the node is healthy (a recent milestone). */
  isHealthy: boolean;
  /** The network's name. */
  networkId: string;
  /** The Bech32 human-readable part of the network's addresses. */
  bech32HRP: string;
  /** The minimum PoW score a message needs. */
  minPoWScore: number;
  /** What the node offers beyond the core API. */
  features: string[];
}

/** Parses the node REST JSON of a complete message and applies every syntactic rule. */
export function messageFromJson(json: unknown): Message {
  return fromJsonWith(jsonReaders.message, sizers.message, writers.message, json, "", MAX_MESSAGE_LENGTH) as Message;
}

/**
 * messageFromJson, also giving the message's canonical bytes (what encodeMessage would return) from the same pass:
 * JSON to bytes, or to a message id, without encoding the message a second time.
 */
export function messageFromJsonWithBytes(json: unknown): {
  /** The message. */
  message: Message;
  /** Its canonical bytes, as encodeMessage writes them. */
  bytes: Uint8Array;
} {
  const { value, bytes } = fromJsonWithBytes(jsonReaders.message, sizers.message, writers.message, json, "", MAX_MESSAGE_LENGTH);
  return { message: value as Message, bytes };
}

/** The node REST JSON of a message: lowercase hex, u64 as decimal strings, an absent payload as null. */
export function messageToJson(message: Message): MessageJson {
  return toJsonWith(jsonWriters.message, message) as MessageJson;
}

/** Parses the JSON of a payload alone (as found at `path`, e.g. "payload") and applies its syntactic rules. */
export function payloadFromJson(json: unknown, path = "payload"): Payload {
  return fromJsonWith(jsonReaders.messagePayload, sizers.messagePayload, writers.messagePayload, json, path) as Payload;
}

/** The JSON of a payload (node API v1 shapes). */
export function payloadToJson(payload: Payload): PayloadJson {
  return toJsonWith(jsonWriters.messagePayload, payload) as PayloadJson;
}

const ZERO_PARENT = "00".repeat(MESSAGE_ID_LENGTH);

const isMissing = (value: unknown): boolean => value === undefined || value === null;

/**
 * Parses a message as submitted for the node to complete: `networkId`, `parentMessageIds` and `nonce` may be missing
 * or null; "0" for networkId or nonce and an empty parent list count as missing (the node fills them). What is present
 * is checked by every rule, as part of a whole message whose missing fields hold stand-ins (u64 0, one zero parent).
 */
export function partialMessageFromJson(json: unknown): PartialMessage {
  return partialMessageFromJsonWithBytes(json).partial;
}

/**
 * partialMessageFromJson, also giving `bytes` when they are already the message's: when the JSON carries its networkId
 * and parents (a missing nonce is the 0 to mine either way), the bytes its check wrote, so a node need not encode again.
 */
export function partialMessageFromJsonWithBytes(json: unknown): {
  /** The message as submitted, its missing fields absent. */
  partial: PartialMessage;
  /** Its canonical bytes when the JSON carried its network id and parents (a missing nonce is the 0 to mine), else undefined. */
  bytes: Uint8Array | undefined;
} {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { partial: messageFromJson(json), bytes: undefined }; // refused as a message is
  let given: { networkId: unknown; parentMessageIds: unknown; payload: unknown; nonce: unknown };
  try {
    // Own properties only, as the message reader reads them (a polluted prototype supplies nothing).
    const own = (key: string): unknown => (Object.prototype.hasOwnProperty.call(json, key) ? (json as Record<string, unknown>)[key] : undefined);
    given = { networkId: own("networkId"), parentMessageIds: own("parentMessageIds"), payload: own("payload"), nonce: own("nonce") };
  } catch (error) {
    throw new ProtocolError("INVALID_JSON", "the JSON value could not be read", { path: "", cause: error });
  }
  const parents = given.parentMessageIds;
  const noParents = isMissing(parents) || (Array.isArray(parents) && parents.length === 0);
  const { message: whole, bytes } = messageFromJsonWithBytes({
    networkId: isMissing(given.networkId) ? "0" : given.networkId,
    parentMessageIds: noParents ? [ZERO_PARENT] : parents,
    payload: given.payload,
    nonce: isMissing(given.nonce) ? "0" : given.nonce,
  });
  return partialOf(whole, bytes, noParents);
}

