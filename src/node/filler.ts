// The filler (one job, for the API only): completes what a submission leaves out, as Hornet's REST API does: a
// missing networkId becomes the node's, missing parents come from tip selection, a missing nonce is mined on the
// node's PoW queue; then the complete message goes to the message processor like any other. At a score a nonce of 0
// meets already (score 0) it mines nothing.
import { NONCE_LENGTH } from "../bytes/limits.js";
import { completeMessage } from "../model/complete.js";
import type { PartialMessage } from "../model/json.js";
import type { Message } from "../model/types.js";
import { abortError, NodeError } from "./errors.js";
import type { MessageProcessor } from "./processor.js";

/** How one API submission is served: its abort signal, its requester, and the edge's PoW admission. */
export interface FillOptions {
  /** Aborting (the client went away) cancels the PoW job when nobody else waits for it; a message the node mined for
   * this submission is then not stored. Read only when the node mines. */
  signal?: AbortSignal | undefined;
  /** Who asks, for the PoW queue's round-robin and per-requester bound. */
  requester?: string | undefined;
  /** Called before the node mines for this submission; throwing refuses it (the edge's PoW rate limit). */
  admitPow?: (() => void) | undefined;
}

/** A submission completed and through the processor. */
export interface Filled {
  /** The message id (BLAKE2b-256 of `bytes`), lowercase hex. */
  readonly messageId: string;
  /** The complete message: the network id, parents and nonce the filler supplied included. */
  readonly message: Message;
  /** Its canonical bytes, nonce included. */
  readonly bytes: Uint8Array;
  /** False when the same message was stored already. */
  readonly stored: boolean;
}

/** Where the filler gets what a submission leaves out, and where it sends the complete message. */
export interface FillerOptions {
  /** Supplies the network id and checks a given one; takes every complete message. */
  readonly processor: MessageProcessor;
  /** The parents a message without any gets (tip selection; a gateway's upstream). */
  readonly tips: () => readonly string[] | Promise<readonly string[]>;
  /** Mines `bytes` (nonce slot included) at the node's score; undefined: the node's PoW is off for submitters. */
  readonly mine: ((bytes: Uint8Array, options: FillOptions) => Promise<bigint>) | undefined;
}

/**
 * Completes an API submission as Hornet's REST API does (network id, parents from tips, nonce mined), before the message
 * processor sees it. Refuses a milestone (MILESTONE_REFUSED) and, with the node's PoW off, anything left to mine
 * (POW_DISABLED); the rules are checked before any PoW is spent.
 */
export class Filler {
  readonly #o: FillerOptions;

  constructor(options: FillerOptions) {
    this.#o = options;
  }

  /** Completes, mines when it must, and hands the message to the processor. `known`: the bytes the JSON reader gave
   * with this very partial (used when only the nonce is left to fill). */
  async submit(partial: PartialMessage, options: FillOptions, known?: Uint8Array): Promise<Filled> {
    const { processor, mine } = this.#o;
    refuseMilestone(partial.payload);
    const tips = (): readonly string[] | Promise<readonly string[]> => {
      // Hornet (since 1.2.2) refuses to pick parents it could not then mine for.
      if (mine === undefined) throw new NodeError("POW_DISABLED", "no parents given and the node's PoW is disabled", { path: "parentMessageIds" });
      return this.#o.tips();
    };
    const filler = { networkId: () => processor.networkId, checkNetworkId: (id: bigint) => processor.checkNetwork(id), tips };
    const { message, bytes, needsNonce } = await completeMessage(partial, filler, (code, text, path) => new NodeError(code, text, { path }), known);
    // A nonce of 0 that meets the score is kept (at score 0, always): nothing to mine.
    if (!needsNonce || processor.meetsPow(bytes)) return { message, bytes, ...(await processor.submit(message, bytes)) };
    if (mine === undefined) throw new NodeError("POW_DISABLED", "proof of work is not enabled on this node; send a nonce", { path: "nonce" });
    const checked = await processor.check(message, undefined);
    options.admitPow?.();
    const nonce = await mine(bytes, options);
    new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - NONCE_LENGTH, nonce, true);
    message.nonce = nonce;
    processor.checkPow(bytes);
    // A client gone while the node mined for it gets nothing stored. The signal is read only here and by the miner:
    // a server's request makes it on first read, which a submission that needs no mining never pays for.
    if (options.signal?.aborted) throw abortError(options.signal.reason);
    return { message, bytes, ...(await processor.store(message, bytes, checked)) };
  }
}

/** Only the node's coordinator issues milestones; one from a submitter is refused before any work. */
export function refuseMilestone(payload: Message["payload"]): void {
  if (payload?.type === 1) throw new NodeError("MILESTONE_REFUSED", "this node takes milestones from its own coordinator only", { path: "payload" });
}
