// Node REST JSON *text* of a message → the model and its canonical bytes in one scan, without JSON.parse: the text
// reader generated from objects.ts (codecs.generated.ts, on the tokens of text.ts) reads the model straight from the
// characters, hex decoded in place, no JSON objects or strings in between; the order and array rules come from the
// generated writer, as for messageFromJsonWithBytes. Whatever it is not sure of goes to JSON.parse.
//
// Exact by construction: the reader reads only the plain form clients send (the objects' own keys, each once, in any
// order; strings without escapes; integers written as plain digits; ASCII text) and checks every field rule the JSON
// reader checks. Anything else (unknown or repeated keys, escapes, 1.0 or 1e3, milestone payloads, any refusal, any
// doubt) is handed to `messageFromJsonWithBytes(JSON.parse(text))`, so that results and errors are that path's own.
// test/json-text.test.ts compares the two on random and mutated texts.
import { ProtocolError } from "../bytes/errors.js";
import { MAX_MESSAGE_LENGTH, MESSAGE_ID_LENGTH } from "../bytes/limits.js";
import { textReaders, writers } from "./codecs.generated.js";
import { partialOf, writtenBytes } from "./engine.js";
import { messageFromJsonWithBytes, partialMessageFromJsonWithBytes } from "./json.js";
import { beginText, textEnded } from "./text.js";
import type { Message, PartialMessage } from "./types.js";

/**
 * `messageFromJsonWithBytes(JSON.parse(text))`, the same model, bytes or error, reading the text directly when it is in
 * the plain form a client writes (and through JSON.parse otherwise).
 */
export function messageFromJsonTextWithBytes(text: string): {
  /** The message. */
  message: Message;
  /** Its canonical bytes, as encodeMessage writes them. */
  bytes: Uint8Array;
} {
  return readText(text, undefined) ?? messageFromJsonWithBytes(JSON.parse(text));
}

/** `messageFromJson(JSON.parse(text))`: messageFromJsonTextWithBytes without the bytes. */
export function messageFromJsonText(text: string): Message {
  return messageFromJsonTextWithBytes(text).message;
}

/**
 * `partialMessageFromJsonWithBytes(JSON.parse(text))` for a message submitted for the node to complete (networkId,
 * parentMessageIds and nonce may be missing or null), read as messageFromJsonTextWithBytes reads.
 */
export function partialMessageFromJsonTextWithBytes(text: string): {
  /** The message as submitted, its missing fields absent. */
  partial: PartialMessage;
  /** Its canonical bytes when the JSON carried its network id and parents (a missing nonce is the 0 to mine), else undefined. */
  bytes: Uint8Array | undefined;
} {
  noParents = false;
  const read = readText(text, standIn);
  if (read === undefined) return partialMessageFromJsonWithBytes(JSON.parse(text));
  return partialOf(read.message, read.bytes, noParents);
}

const ZERO_PARENT = new Uint8Array(MESSAGE_ID_LENGTH);
// Whether the last partial message had no parents (missing, null or []).
let noParents = false;

/** What partialMessageFromJsonWithBytes puts in place of a message field left for the node: u64 0, one zero parent. */
function standIn(field: number): unknown {
  // The message's fields: networkId, parents, payload (optional, never stood in for), nonce.
  if (field !== 1) return 0n;
  noParents = true;
  return [ZERO_PARENT];
}

function readText(text: string, sub: ((field: number) => unknown) | undefined): { message: Message; bytes: Uint8Array } | undefined {
  if (typeof text !== "string") return undefined;
  // A polluted Object.prototype changes what the JSON reader sees; leave that to it.
  for (const _ in Object.prototype) return undefined;
  if (!beginText(text)) return undefined;
  try {
    const message = textReaders.message(sub) as Message;
    if (!textEnded()) return undefined;
    const bytes = writtenBytes(writers.message, message, MAX_MESSAGE_LENGTH);
    return bytes === undefined ? undefined : { message, bytes };
  } catch {
    return undefined;
  }
}

/** The refusal for text JSON.parse rejected (the SyntaxError the readers above throw), as the node answers it. */
export function malformedJson(error: unknown): ProtocolError {
  return new ProtocolError("INVALID_JSON", `malformed JSON: ${(error as Error).message.slice(0, 200)}`);
}
