// The node REST API v1's response shapes beyond the message itself (Hornet's, NODE-API.md §1.7–§1.9): written by the
// node (node/shapes.ts builds them from store records) and read by the client, so both sides name one type. Absent
// fields are left out (Hornet's omitempty), never null. /api/v1/info's shape, NodeInfoJson, is in json.ts.
import type { OutputJson } from "./json.js";

/** GET /api/v1/messages/{id}/metadata and the MQTT metadata topics. */
export interface MessageMetadataJson {
  messageId: string;
  parentMessageIds: string[];
  isSolid: boolean;
  referencedByMilestoneIndex?: number;
  milestoneIndex?: number;
  ledgerInclusionState?: "noTransaction" | "included" | "conflicting";
  conflictReason?: number;
  shouldPromote?: boolean;
  shouldReattach?: boolean;
}

/** GET /api/v1/outputs/{id}; the MQTT output topics leave out the two `…Spent` fields. */
export interface OutputResponseJson {
  messageId: string;
  transactionId: string;
  outputIndex: number;
  isSpent: boolean;
  milestoneIndexSpent?: number;
  transactionIdSpent?: string;
  ledgerIndex: number;
  output: OutputJson;
}

/** GET /api/v1/addresses/{bech32} and /addresses/ed25519/{hex}. */
export interface AddressBalanceJson {
  addressType: 0;
  /** The Ed25519 address, hex, whichever form was asked. */
  address: string;
  balance: number;
  dustAllowed: boolean;
  ledgerIndex: number;
}

/** GET …/outputs of an address: unspent output ids first, then spent ones when asked. */
export interface AddressOutputsJson {
  addressType: 0;
  address: string;
  maxResults: number;
  count: number;
  outputIds: string[];
  ledgerIndex: number;
}

/** GET /api/v1/milestones/{index}. */
export interface MilestoneJson {
  index: number;
  messageId: string;
  /** Unix seconds. */
  timestamp: number;
}

/** GET /api/v1/milestones/{index}/utxo-changes. */
export interface UtxoChangesJson {
  index: number;
  createdOutputs: string[];
  consumedOutputs: string[];
}
