// What every storage engine derives the same way from a message or a record: its index keys, genesis output records,
// the error of a closed store; and the reads the node makes of any store the same way (metadataWithLatest).
import type { Message } from "../../model/types.js";
import { decodeMessage } from "../../model/codec.js";
import { parseOutputId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { ZERO_MESSAGE_ID, type GenesisOutput, type MetadataWithLatest, type NodeStore, type OutputRecord, type StoredMessage } from "./contract.js";

/**
 * A stored message read back by its id: its bytes at once, its model decoded on the first read of `message` (and
 * kept), so a raw read (GET …/raw) never pays for the decode. The bytes were checked when they were accepted; a damaged
 * record throws its codec error on that first read. `message` is a getter of the class (an object literal with a getter
 * costs more to build than the decode it saves): a spread copies `id` and `bytes` only, so none is spread in src/.
 */
class LazyStoredMessage implements StoredMessage {
  #message: Message | undefined;
  constructor(
    readonly id: string,
    readonly bytes: Uint8Array,
  ) {}
  get message(): Message {
    return (this.#message ??= decodeMessage(this.bytes));
  }
}

export function storedMessage(id: string, bytes: Uint8Array): StoredMessage {
  return new LazyStoredMessage(id, bytes);
}

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

/**
 * Outputs per message in an engine's arrival-ordered output sequence (an essence holds at most 127 outputs): output i
 * of the message with sequence number n sorts at n × OUTPUTS_PER_SEQ + i.
 */
export const OUTPUTS_PER_SEQ = 128;

/** An engine error's text for a message: its code (ENOSPC, 08006, …) and what it says. */
export function reason(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === "string" && e.message !== "" ? e.message : String(error);
  return typeof e?.code === "string" && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

/** A store written by a newer schema than this version reads: refused, never read or migrated down. */
export function storeTooNew(where: string, version: number, known: number): NodeError {
  return new NodeError("STORE_TOO_NEW", `${where} was written by schema version ${version}; this version reads up to ${known}: upgrade chrysalis-core`);
}

export function storeClosed(): NodeError {
  return new NodeError("STORE_UNAVAILABLE", "the store is closed");
}

/** The metadata of `ids` (in order, undefined where none is stored) and the latest milestone: the store's own
 * metadataWithLatest where it has one (a single round trip), else its metadata and latestMilestone, asked together. */
export async function metadataWithLatest(store: NodeStore, ids: readonly string[]): Promise<MetadataWithLatest> {
  if (store.metadataWithLatest !== undefined) return store.metadataWithLatest(ids);
  const [metadata, latest] = await Promise.all([Promise.all(ids.map((id) => store.metadata(id))), store.latestMilestone()]);
  return { metadata, latest };
}
