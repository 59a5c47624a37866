// What every storage engine derives the same way from a message or a record: its index keys, genesis output records,
// and the error of a closed store.
import type { Message } from "../../model/types.js";
import { parseOutputId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { ZERO_MESSAGE_ID, type GenesisOutput, type OutputRecord } from "./contract.js";

/** The indexation indexes a message is found by: its top-level indexation payload's, or its transaction essence's. */
export function indexesOf(message: Message): Uint8Array[] {
  const payload = message.payload;
  if (payload === undefined) return [];
  if (payload.type === 2) return [payload.index];
  if (payload.type === 0 && payload.essence.payload !== undefined) return [payload.essence.payload.index];
  return [];
}

/** Genesis outputs as ledger records: created by no message (the zero id), booked at milestone 0. */
export function genesisRecords(genesis: readonly GenesisOutput[]): OutputRecord[] {
  return genesis.map(({ outputId, output }) => {
    const { transactionId, index } = parseOutputId(outputId);
    return { outputId: outputId.toLowerCase(), transactionId, outputIndex: index, messageId: ZERO_MESSAGE_ID, output, milestoneIndexBooked: 0 };
  });
}

export function storeClosed(): NodeError {
  return new NodeError("STORE_UNAVAILABLE", "the store is closed");
}
