// Completing a partial message (PROTOCOL.md §6): what a node and a client both do with a submission that leaves
// networkId, parents or nonce out. One function, so both refuse the same things with the same codes and paths.
import { compareBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex } from "../bytes/hex.js";
import { MAX_PARENTS, MESSAGE_ID_LENGTH } from "../bytes/limits.js";
import { encodeMessage } from "./codec.js";
import type { Message, PartialMessage } from "./types.js";

/** Where the missing fields come from: the node itself, or (for a client) the node's info and tips. */
export interface MessageFiller {
  /** The network id for a message that carries none (or 0); asked only then. */
  networkId(): bigint | Promise<bigint>;
  /** Checks a network id the message carries (a node refuses another network's); optional. */
  checkNetworkId?(networkId: bigint): void;
  /** Tip message ids (hex) for a message without parents; the first 8 are used, sorted, each once. */
  tips(): readonly string[] | Promise<readonly string[]>;
}

/** A partial message with its missing fields filled, encoded, and whether its nonce is still to be mined. */
export interface CompletedMessage {
  /** The whole message. */
  message: Message;
  /** The encoded message (every syntactic rule applied); when `needsNonce`, its last 8 bytes are the 0 to mine. */
  bytes: Uint8Array;
  /** The message had no nonce (or 0): mine one for the last 8 bytes. */
  needsNonce: boolean;
}

/** Builds the error for a refusal; a node passes one that adds its HTTP status. */
export type Refusal = (code: "NONCE_WITHOUT_NETWORK_ID" | "CANNOT_FILL", message: string, path: string) => Error;

const protocolRefusal: Refusal = (code, message, path) => new ProtocolError(code, message, { path });

/**
 * Fills what a partial message leaves out and encodes it: a missing or 0 networkId becomes the filler's; missing parents
 * come from its tips; a nonce is left to mine (`needsNonce`). Refused: a nonce without a networkId (its PoW cannot have
 * covered the right bytes), and parents the filler has no tips for (CANNOT_FILL naming parentMessageIds). Whether a missing
 * nonce can be mined is the caller's to decide (a node with PoW disabled keeps a nonce of 0 that already meets its score).
 * `known`: the bytes partialMessageFromJsonWithBytes gave with this very partial, used when nothing had to be filled
 * but the nonce (they hold it, or the 0 to mine), instead of encoding again.
 */
export async function completeMessage(partial: PartialMessage, filler: MessageFiller, refuse: Refusal = protocolRefusal, known?: Uint8Array): Promise<CompletedMessage> {
  if (typeof partial !== "object" || partial === null) throw new ProtocolError("INVALID_ARGUMENT", "expected a partial message object", { path: "" });
  if (typeof filler !== "object" || filler === null || typeof filler.networkId !== "function" || typeof filler.tips !== "function") {
    throw new ProtocolError("INVALID_ARGUMENT", "expected a filler with networkId() and tips()", { path: "filler" });
  }
  const hasNonce = partial.nonce !== undefined && partial.nonce !== 0n;
  const hasNetwork = partial.networkId !== undefined && partial.networkId !== 0n;
  if (hasNonce && !hasNetwork) throw refuse("NONCE_WITHOUT_NETWORK_ID", "a message with a nonce must carry its networkId: the PoW could not have covered the right bytes", "networkId");
  if (hasNetwork) filler.checkNetworkId?.(partial.networkId!);
  let parents = partial.parents;
  const filled = !hasNetwork || parents === undefined || parents.length === 0;
  if (parents === undefined || parents.length === 0) {
    const tips = (await filler.tips()).slice(0, MAX_PARENTS).map((id, i) => fromHex(id, `tips[${i}]`, MESSAGE_ID_LENGTH)).sort(compareBytes);
    parents = tips.filter((p, i) => i === 0 || compareBytes(tips[i - 1]!, p) !== 0);
    if (parents.length === 0) throw refuse("CANNOT_FILL", "there are no tips to fill parentMessageIds with; send parentMessageIds", "parentMessageIds");
  }
  const message: Message = { networkId: hasNetwork ? partial.networkId! : await filler.networkId(), parents, nonce: hasNonce ? partial.nonce! : 0n };
  if (partial.payload !== undefined) message.payload = partial.payload;
  return { message, bytes: !filled && known !== undefined ? known : encodeMessage(message), needsNonce: !hasNonce };
}
