// The node REST API v1's response shapes beyond the message itself (Hornet's, NODE-API.md §1.7–§1.9): written by the
// node (node/shapes.ts builds them from store records) and read by the client, so both sides name one type. Absent
// fields are left out (Hornet's omitempty), never null. /api/v1/info's shape, NodeInfoJson, is in json.ts.
import type { OutputJson } from "./json.js";

/** GET /api/v1/messages/{id}/metadata and the MQTT metadata topics. */
export interface MessageMetadataJson {
  /** The message's id, hex. */
  messageId: string;
  /** Its parents' ids, hex. */
  parentMessageIds: string[];
  /** Whether the node holds the message's whole past cone. */
  isSolid: boolean;
  /** The index of the milestone that referenced the message, once one did. */
  referencedByMilestoneIndex?: number;
  /** For a milestone message, its index. */
  milestoneIndex?: number;
  /** Once referenced: whether the message had no transaction, had one included in the ledger, or one that conflicted. */
  ledgerInclusionState?: "noTransaction" | "included" | "conflicting";
  /** For a conflicting transaction, Hornet's reason code. */
  conflictReason?: number;
  /** While unreferenced: whether a client should promote it. */
  shouldPromote?: boolean;
  /** While unreferenced: whether a client should reattach it (it fell below max depth). */
  shouldReattach?: boolean;
}

/** GET /api/v1/outputs/{id}; the MQTT output topics leave out the two `…Spent` fields. */
export interface OutputResponseJson {
  /** The message whose transaction created the output. */
  messageId: string;
  /** That transaction's id. */
  transactionId: string;
  /** The output's index in the transaction. */
  outputIndex: number;
  /** Whether it is spent. */
  isSpent: boolean;
  /** Once a milestone booked the spend, that milestone's index. */
  milestoneIndexSpent?: number;
  /** The transaction that spent it. */
  transactionIdSpent?: string;
  /** The confirmed milestone the answer is as of. */
  ledgerIndex: number;
  /** The output itself. */
  output: OutputJson;
}

/** GET /api/v1/addresses/{bech32} and /addresses/ed25519/{hex}. */
export interface AddressBalanceJson {
  /** 0: Ed25519. */
  addressType: 0;
  /** The Ed25519 address, hex, whichever form was asked. */
  address: string;
  /** IOTA base units held. */
  balance: number;
  /** Whether the address may receive dust outputs (it holds a dust allowance). */
  dustAllowed: boolean;
  /** The confirmed milestone the answer is as of. */
  ledgerIndex: number;
}

/** GET …/outputs of an address: unspent output ids first, then spent ones when asked. */
export interface AddressOutputsJson {
  /** 0: Ed25519. */
  addressType: 0;
  /** The Ed25519 address, hex. */
  address: string;
  /** The most ids one answer lists. */
  maxResults: number;
  /** How many ids this answer lists. */
  count: number;
  /** Output ids, unspent first. */
  outputIds: string[];
  /** The confirmed milestone the answer is as of. */
  ledgerIndex: number;
}

/** GET /api/v1/milestones/{index}. */
export interface MilestoneJson {
  /** The milestone's index. */
  index: number;
  /** The id of the message that carries it. */
  messageId: string;
  /** Unix seconds. */
  timestamp: number;
}

/** GET /api/v1/milestones/{index}/utxo-changes. */
export interface UtxoChangesJson {
  /** The milestone's index. */
  index: number;
  /** Ids of the outputs it created. */
  createdOutputs: string[];
  /** Ids of the outputs it spent. */
  consumedOutputs: string[];
}
