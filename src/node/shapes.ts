// The Hornet JSON shapes (NODE-API.md §1.7–§1.9, §2.2; the types are model/rest.ts's) built from store records, shared by the REST routes and the MQTT
// bridge so both answer the same thing. Absent fields are left out (Hornet's omitempty), never null.
import { toHex } from "../bytes/hex.js";
import type { OutputJson } from "../model/json.js";
import type { MessageMetadataJson, MilestoneJson, OutputResponseJson, UtxoChangesJson } from "../model/rest.js";
import type { Output } from "../model/types.js";
import type { PromotionAdvice } from "./cone.js";
import type { MessageMetadata, MilestoneRecord, OutputRecord, UtxoChanges } from "./store/contract.js";

/** `advice` is given only for a solid message no milestone references yet (Hornet sends both flags then, else neither). */
export function messageMetadataJson(messageId: string, parents: readonly Uint8Array[], metadata: MessageMetadata, advice?: PromotionAdvice): MessageMetadataJson {
  const json: MessageMetadataJson = { messageId, parentMessageIds: parents.map(toHex), isSolid: metadata.solid };
  if (metadata.referencedByMilestoneIndex !== undefined) {
    json.referencedByMilestoneIndex = metadata.referencedByMilestoneIndex;
    if (metadata.milestoneIndex !== undefined) json.milestoneIndex = metadata.milestoneIndex;
    json.ledgerInclusionState = metadata.ledgerInclusionState ?? "noTransaction";
    if (metadata.ledgerInclusionState === "conflicting" && metadata.conflictReason !== undefined) json.conflictReason = metadata.conflictReason;
  } else if (metadata.solid && advice !== undefined) {
    json.shouldPromote = advice.shouldPromote;
    json.shouldReattach = advice.shouldReattach;
  }
  return json;
}

export function outputJson(output: Output): OutputJson {
  return { type: output.type, address: { type: 0, address: toHex(output.address.address) }, amount: output.amount } as OutputJson;
}

/**
 * Hornet's output answer (GET /outputs/:id) from a ledger record: `ledgerIndex` is the confirmed milestone the answer
 * stands at. `spentFields` false leaves out milestoneIndexSpent and transactionIdSpent, as Hornet's MQTT payloads do.
 */
export function outputResponseJson(record: OutputRecord, ledgerIndex: number, spentFields = true): OutputResponseJson {
  const json: OutputResponseJson = {
    messageId: record.messageId,
    transactionId: record.transactionId,
    outputIndex: record.outputIndex,
    isSpent: record.spent !== undefined,
    ledgerIndex,
    output: outputJson(record.output),
  };
  if (spentFields && record.spent !== undefined) {
    if (record.spent.milestoneIndex !== undefined) json.milestoneIndexSpent = record.spent.milestoneIndex;
    json.transactionIdSpent = record.spent.transactionId;
  }
  return json;
}

/** Hornet's milestone answer (GET /milestones/:index) from a milestone record. */
export function milestoneJson(record: MilestoneRecord): MilestoneJson {
  return { index: record.index, messageId: record.messageId, timestamp: record.timestamp };
}

export function utxoChangesJson(changes: UtxoChanges): UtxoChangesJson {
  return { index: changes.index, createdOutputs: [...changes.createdOutputs], consumedOutputs: [...changes.consumedOutputs] };
}
