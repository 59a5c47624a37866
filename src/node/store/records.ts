// Fixed binary layouts of the records the embedded engine keeps (message metadata, outputs, spends, claims, pending
// outputs, balances, milestones), shared by its reads and writes so a record is laid out in one place. Integers are
// big-endian; u64 values are JavaScript numbers below 2^53 (amounts never exceed the total supply), written as two u32
// halves.
import type { Output } from "../../model/types.js";
import type { AddressBalance, ClaimRecord, LedgerInclusionState, MessageMetadata, PendingOutput, SpentRecord } from "./contract.js";

/** "Not set" for an optional u32 (a milestone index): no real milestone reaches it. */
export const NONE = 0xffffffff;

// Fields are read and written byte by byte, never through a DataView: a record lmdb-js hands over is a fresh small
// Buffer whose bytes V8 keeps on its heap, and a DataView (or anything reading its .buffer) first moves them into an
// ArrayBuffer of their own, about 1 µs a record (a submission reads or writes half a dozen).

/** A field past the record's end is a damaged record: refused as a DataView would, never read as zeros. */
function within(bytes: Uint8Array, at: number, size: number): void {
  if (at < 0 || at + size > bytes.length) throw new RangeError(`a record of ${bytes.length} bytes has no ${size}-byte field at ${at}`);
}

export function getU32(bytes: Uint8Array, at: number): number {
  within(bytes, at, 4);
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

export function setU32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = value >>> 16;
  bytes[at + 2] = value >>> 8;
  bytes[at + 3] = value;
}

export function getU64(bytes: Uint8Array, at: number): number {
  return getU32(bytes, at) * 0x1_0000_0000 + getU32(bytes, at + 4);
}

export function setU64(bytes: Uint8Array, at: number, value: number): void {
  setU32(bytes, at, Math.floor(value / 0x1_0000_0000));
  setU32(bytes, at + 4, value >>> 0);
}

// A float goes through these eight bytes and their one DataView, made once.
const FLOAT_BYTES = new Uint8Array(8);
const FLOAT_VIEW = new DataView(FLOAT_BYTES.buffer);

export function getF64(bytes: Uint8Array, at: number): number {
  within(bytes, at, 8);
  FLOAT_BYTES.set(bytes.subarray(at, at + 8));
  return FLOAT_VIEW.getFloat64(0);
}

export function setF64(bytes: Uint8Array, at: number, value: number): void {
  FLOAT_VIEW.setFloat64(0, value);
  bytes.set(FLOAT_BYTES, at);
}

/** A big-endian u64 on its own (for keys, where big-endian order is numeric order). */
export function u64(value: number): Uint8Array {
  const out = new Uint8Array(8);
  setU64(out, 0, value);
  return out;
}

export function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  setU32(out, 0, value);
  return out;
}

const INCLUSION: readonly (LedgerInclusionState | undefined)[] = [undefined, "noTransaction", "included", "conflicting"];

function inclusionCode(state: LedgerInclusionState | undefined): number {
  return state === undefined ? 0 : INCLUSION.indexOf(state);
}

const optional = (value: number): number | undefined => (value === NONE ? undefined : value);

// Metadata: seq u64 | arrivalTime f64 | cone oldest u32 | cone youngest u32 | referencedBy u32 | milestoneIndex u32 |
// inclusion u8 | conflictReason u8 | flags u8 (bit 0 solid, bit 1 conflictReason set).
export const METADATA_SIZE = 35;

export function encodeMetadata(seq: number, m: MessageMetadata): Uint8Array {
  const out = new Uint8Array(METADATA_SIZE);
  setU64(out, 0, seq);
  setF64(out, 8, m.arrivalTime);
  setU32(out, 16, m.coneRoots.oldest);
  setU32(out, 20, m.coneRoots.youngest);
  setU32(out, 24, m.referencedByMilestoneIndex ?? NONE);
  setU32(out, 28, m.milestoneIndex ?? NONE);
  out[32] = inclusionCode(m.ledgerInclusionState);
  out[33] = m.conflictReason ?? 0;
  out[34] = (m.solid ? 1 : 0) | (m.conflictReason !== undefined ? 2 : 0);
  return out;
}

export function decodeMetadata(bytes: Uint8Array): { seq: number; metadata: MessageMetadata } {
  const flags = bytes[34]!;
  // Built field by field (read for every parent of every submission; an Object.entries filter allocated per call):
  // the optional fields are present only when set.
  const metadata: { -readonly [K in keyof MessageMetadata]: MessageMetadata[K] } = {
    arrivalTime: getF64(bytes, 8),
    solid: (flags & 1) !== 0,
    coneRoots: { oldest: getU32(bytes, 16), youngest: getU32(bytes, 20) },
  };
  const referencedBy = getU32(bytes, 24);
  if (referencedBy !== NONE) metadata.referencedByMilestoneIndex = referencedBy;
  const milestoneIndex = getU32(bytes, 28);
  if (milestoneIndex !== NONE) metadata.milestoneIndex = milestoneIndex;
  const inclusion = INCLUSION[bytes[32]!];
  if (inclusion !== undefined) metadata.ledgerInclusionState = inclusion;
  if ((flags & 2) !== 0) metadata.conflictReason = bytes[33]!;
  return { seq: getU64(bytes, 0), metadata };
}

// Output: messageId 32 | seq u64 | milestoneIndexBooked u32 | output type u8 | address type u8 | address 32 | amount u64.
export const OUTPUT_SIZE = 86;

export interface StoredOutput {
  readonly messageId: Uint8Array;
  /** Booking order, the key of an address's output lists: the header's next output seq when a milestone booked it
   * (genesis and snapshot outputs: their index; outputs booked under schemas 1 to 3: their creating message's seq × 128
   * + the output index, all below the first output seq of schema 4). */
  readonly seq: number;
  readonly milestoneIndexBooked: number | undefined;
  readonly output: Output;
}

export function encodeOutput(record: StoredOutput): Uint8Array {
  const out = new Uint8Array(OUTPUT_SIZE);
  out.set(record.messageId, 0);
  setU64(out, 32, record.seq);
  setU32(out, 40, record.milestoneIndexBooked ?? NONE);
  out[44] = record.output.type;
  out[45] = record.output.address.type;
  out.set(record.output.address.address, 46);
  setU64(out, 78, record.output.amount);
  return out;
}

export function decodeOutput(bytes: Uint8Array): StoredOutput {
  const type = bytes[44] === 1 ? 1 : 0;
  const output: Output = { type, address: { type: 0, address: new Uint8Array(bytes.subarray(46, 78)) }, amount: getU64(bytes, 78) };
  return { messageId: bytes.subarray(0, 32), seq: getU64(bytes, 32), milestoneIndexBooked: optional(getU32(bytes, 40)), output };
}

// Spent: transactionId 32 | messageId 32 | milestoneIndex u32.
export const SPENT_SIZE = 68;

export function encodeSpent(transactionId: Uint8Array, messageId: Uint8Array, milestoneIndex: number | undefined): Uint8Array {
  const out = new Uint8Array(SPENT_SIZE);
  out.set(transactionId, 0);
  out.set(messageId, 32);
  setU32(out, 64, milestoneIndex ?? NONE);
  return out;
}

export function decodeSpent(bytes: Uint8Array, hex: (b: Uint8Array) => string): SpentRecord {
  const milestoneIndex = optional(getU32(bytes, 64));
  return { transactionId: hex(bytes.subarray(0, 32)), messageId: hex(bytes.subarray(32, 64)), ...(milestoneIndex !== undefined ? { milestoneIndex } : {}) };
}

// Claim: transactionId 32 | messageId 32 | index u32 (the confirmed milestone index when the claim was made). The spent
// record's layout, with the index always set.
export function encodeClaim(transactionId: Uint8Array, messageId: Uint8Array, index: number): Uint8Array {
  return encodeSpent(transactionId, messageId, index);
}

export function decodeClaim(bytes: Uint8Array, hex: (b: Uint8Array) => string): ClaimRecord {
  return { transactionId: hex(bytes.subarray(0, 32)), messageId: hex(bytes.subarray(32, 64)), index: getU32(bytes, 64) };
}

// Pending output: messageId 32 | index u32 (the confirmed milestone index when it was recorded) | output type u8 |
// address type u8 | address 32 | amount u64. Its transaction id is the first 32 bytes of its key's output id.
export const PENDING_SIZE = 78;

export function encodePendingOutput(messageId: Uint8Array, index: number, output: Output): Uint8Array {
  const out = new Uint8Array(PENDING_SIZE);
  out.set(messageId, 0);
  setU32(out, 32, index);
  out[36] = output.type;
  out[37] = output.address.type;
  out.set(output.address.address, 38);
  setU64(out, 70, output.amount);
  return out;
}

/** The pending output of `outputId` (34 bytes) from its record. */
export function decodePendingOutput(outputId: Uint8Array, bytes: Uint8Array, hex: (b: Uint8Array) => string): PendingOutput {
  const output: Output = { type: bytes[36] === 1 ? 1 : 0, address: { type: 0, address: new Uint8Array(bytes.subarray(38, 70)) }, amount: getU64(bytes, 70) };
  return { outputId: hex(outputId), transactionId: hex(outputId.subarray(0, 32)), messageId: hex(bytes.subarray(0, 32)), output, index: getU32(bytes, 32) };
}

// Balance: balance u64 | dustAllowance u64 | dustOutputs u32.
export function encodeBalance(b: AddressBalance): Uint8Array {
  const out = new Uint8Array(20);
  setU64(out, 0, b.balance);
  setU64(out, 8, b.dustAllowance);
  setU32(out, 16, b.dustOutputs);
  return out;
}

export function decodeBalance(bytes: Uint8Array): AddressBalance {
  return { balance: getU64(bytes, 0), dustAllowance: getU64(bytes, 8), dustOutputs: getU32(bytes, 16) };
}

// Milestone: messageId 32 | timestamp u64.
export function encodeMilestone(messageId: Uint8Array, timestamp: number): Uint8Array {
  const out = new Uint8Array(40);
  out.set(messageId, 0);
  setU64(out, 32, timestamp);
  return out;
}

// UTXO changes: u32 count | count × 34-byte output ids, for created then consumed.
export function encodeOutputIdLists(lists: readonly (readonly Uint8Array[])[]): Uint8Array {
  let size = 0;
  for (const list of lists) size += 4 + list.length * 34;
  const out = new Uint8Array(size);
  let at = 0;
  for (const list of lists) {
    setU32(out, at, list.length);
    at += 4;
    for (const id of list) {
      out.set(id, at);
      at += 34;
    }
  }
  return out;
}

export function decodeOutputIdLists(bytes: Uint8Array, count: number): Uint8Array[][] {
  const lists: Uint8Array[][] = [];
  let at = 0;
  for (let l = 0; l < count; l++) {
    const n = getU32(bytes, at);
    at += 4;
    const list: Uint8Array[] = [];
    for (let i = 0; i < n; i++, at += 34) list.push(bytes.subarray(at, at + 34));
    lists.push(list);
  }
  return lists;
}
