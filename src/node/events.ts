// What the node announces once the store holds it, and the one place that hands it to listeners (the MQTT bridge,
// metrics, gossip's relay, tests). Events flow from the store outward: each is emitted after the write it reports.
import type { MessageMetadata, MilestoneRecord, OutputRecord, StoredMessage } from "./store/contract.js";
import type { MilestonePayload } from "../model/types.js";

/**
 * What the node announces after the store accepted it. A milestone's events come after its one atomic write, in this
 * order: its message (when the same write stored it), every message it references, every output it books or spends,
 * every transaction it includes, then the milestone itself.
 */
export type NodeEvent =
  /** A message was stored (solid). `from`: the peer it came from (absent for the API, the coordinator, or another
   * instance on the same store). */
  | {
      /** MQTT's `messages` and `messages/indexation/…` topics. */
      readonly type: "message";
      /** The message as stored. */
      readonly stored: StoredMessage;
      /** Its metadata as stored: solid, with its cone roots, not referenced yet. */
      readonly metadata: MessageMetadata;
      /** The peer id it came from; absent for the API, the coordinator, or another instance on the same store. */
      readonly from?: string | undefined;
    }
  /** A milestone referenced a message: its metadata now carries the milestone index and inclusion state. */
  | {
      /** MQTT's `messages/referenced` and `messages/:id/metadata` topics. */
      readonly type: "referenced";
      /** The referenced message. */
      readonly stored: StoredMessage;
      /** Its metadata after the milestone: referencedByMilestoneIndex, ledgerInclusionState and conflictReason set. */
      readonly metadata: MessageMetadata;
    }
  /** A milestone confirmed the transaction that created this output, or the one that spent it (`output.spent`). */
  | {
      /** MQTT's `outputs/:id` and `addresses/…/outputs` topics. */
      readonly type: "output";
      /** The output as the ledger holds it after the milestone. */
      readonly output: OutputRecord;
      /** The milestone that booked or spent it. */
      readonly milestoneIndex: number;
    }
  /** A milestone included this transaction (in the message `stored`). */
  | {
      /** MQTT's `transactions/:id/included-message` topic. */
      readonly type: "transaction";
      /** The included transaction's id, lowercase hex. */
      readonly transactionId: string;
      /** The message carrying it. */
      readonly stored: StoredMessage;
      /** The milestone that included it. */
      readonly milestoneIndex: number;
    }
  /** A milestone was stored and confirmed; `payload` carries its receipt, if any. */
  | {
      /** MQTT's `milestones/latest`, `milestones/confirmed` and `receipts` topics. */
      readonly type: "milestone";
      /** The confirmed milestone's record: index, message id, timestamp. */
      readonly milestone: MilestoneRecord;
      /** Its milestone payload, receipt included. */
      readonly payload: MilestonePayload;
    };

/** Called with each NodeEvent, synchronously, in emit order; what it throws is ignored. */
export type NodeEventListener = (event: NodeEvent) => void;

/** Listeners of the node's events: each called in the order it subscribed; a throwing listener is ignored. */
export class NodeEvents {
  readonly #listeners = new Set<NodeEventListener>();

  /** Adds `listener` until the returned function is called. */
  subscribe(listener: NodeEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Whether anyone listens (events that cost reads to build are built only then). */
  get listened(): boolean {
    return this.#listeners.size > 0;
  }

  /** Hands `event` to every listener, synchronously, after the write it reports; a listener's throw is swallowed so
   * that the others and the writer carry on. */
  emit(event: NodeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; what the event reports is stored either way.
      }
    }
  }
}
