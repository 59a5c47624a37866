// Fixed binary layouts of the records the embedded engine keeps (message metadata, outputs, spends, balances,
// milestones), shared by its reads and writes so a record is laid out in one place. Integers are big-endian; u64
// values are JavaScript numbers below 2^53 (amounts never exceed the total supply), written as two u32 halves.
import type { Output } from "../../model/types.js";
import type { AddressBalance, LedgerInclusionState, MessageMetadata, SpentRecord } from "./contract.js";

/** "Not set" for an optional u32 (a milestone index): no real milestone reaches it. */
export const NONE = 0xffffffff;

export function writeU64(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, Math.floor(value / 0x1_0000_0000));
  view.setUint32(offset + 4, value >>> 0);
}

export function readU64(view: DataView, offset: number): number {
  return view.getUint32(offset) * 0x1_0000_0000 + view.getUint32(offset + 4);
}

/** A big-endian u64 on its own (for keys, where big-endian order is numeric order). */
export function u64(value: number): Uint8Array {
  const out = new Uint8Array(8);
  writeU64(new DataView(out.buffer), 0, value);
  return out;
}

export function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
  const v = viewOf(out);
  writeU64(v, 0, seq);
  v.setFloat64(8, m.arrivalTime);
  v.setUint32(16, m.coneRoots.oldest);
  v.setUint32(20, m.coneRoots.youngest);
  v.setUint32(24, m.referencedByMilestoneIndex ?? NONE);
  v.setUint32(28, m.milestoneIndex ?? NONE);
  out[32] = inclusionCode(m.ledgerInclusionState);
  out[33] = m.conflictReason ?? 0;
  out[34] = (m.solid ? 1 : 0) | (m.conflictReason !== undefined ? 2 : 0);
  return out;
}

export function decodeMetadata(bytes: Uint8Array): { seq: number; metadata: MessageMetadata } {
  const v = viewOf(bytes);
  const flags = bytes[34]!;
  // Built field by field (read for every parent of every submission; an Object.entries filter allocated per call):
  // the optional fields are present only when set.
  const metadata: { -readonly [K in keyof MessageMetadata]: MessageMetadata[K] } = {
    arrivalTime: v.getFloat64(8),
    solid: (flags & 1) !== 0,
    coneRoots: { oldest: v.getUint32(16), youngest: v.getUint32(20) },
  };
  const referencedBy = v.getUint32(24);
  if (referencedBy !== NONE) metadata.referencedByMilestoneIndex = referencedBy;
  const milestoneIndex = v.getUint32(28);
  if (milestoneIndex !== NONE) metadata.milestoneIndex = milestoneIndex;
  const inclusion = INCLUSION[bytes[32]!];
  if (inclusion !== undefined) metadata.ledgerInclusionState = inclusion;
  if ((flags & 2) !== 0) metadata.conflictReason = bytes[33]!;
  return { seq: readU64(v, 0), metadata };
}

// Output: messageId 32 | seq u64 | milestoneIndexBooked u32 | output type u8 | address type u8 | address 32 | amount u64.
export const OUTPUT_SIZE = 86;

export interface StoredOutput {
  readonly messageId: Uint8Array;
  /** Creation order: the creating message's seq × 128 + the output index (genesis outputs: their index). */
  readonly seq: number;
  readonly milestoneIndexBooked: number | undefined;
  readonly output: Output;
}

export function encodeOutput(record: StoredOutput): Uint8Array {
  const out = new Uint8Array(OUTPUT_SIZE);
  const v = viewOf(out);
  out.set(record.messageId, 0);
  writeU64(v, 32, record.seq);
  v.setUint32(40, record.milestoneIndexBooked ?? NONE);
  out[44] = record.output.type;
  out[45] = record.output.address.type;
  out.set(record.output.address.address, 46);
  writeU64(v, 78, record.output.amount);
  return out;
}

export function decodeOutput(bytes: Uint8Array): StoredOutput {
  const v = viewOf(bytes);
  const type = bytes[44] === 1 ? 1 : 0;
  const output: Output = { type, address: { type: 0, address: new Uint8Array(bytes.subarray(46, 78)) }, amount: readU64(v, 78) };
  return { messageId: bytes.subarray(0, 32), seq: readU64(v, 32), milestoneIndexBooked: optional(v.getUint32(40)), output };
}

// Spent: transactionId 32 | messageId 32 | milestoneIndex u32.
export function encodeSpent(transactionId: Uint8Array, messageId: Uint8Array, milestoneIndex: number | undefined): Uint8Array {
  const out = new Uint8Array(68);
  out.set(transactionId, 0);
  out.set(messageId, 32);
  viewOf(out).setUint32(64, milestoneIndex ?? NONE);
  return out;
}

export function decodeSpent(bytes: Uint8Array, hex: (b: Uint8Array) => string): SpentRecord {
  const milestoneIndex = optional(viewOf(bytes).getUint32(64));
  return { transactionId: hex(bytes.subarray(0, 32)), messageId: hex(bytes.subarray(32, 64)), ...(milestoneIndex !== undefined ? { milestoneIndex } : {}) };
}

// Balance: balance u64 | dustAllowance u64 | dustOutputs u32.
export function encodeBalance(b: AddressBalance): Uint8Array {
  const out = new Uint8Array(20);
  const v = viewOf(out);
  writeU64(v, 0, b.balance);
  writeU64(v, 8, b.dustAllowance);
  v.setUint32(16, b.dustOutputs);
  return out;
}

export function decodeBalance(bytes: Uint8Array): AddressBalance {
  const v = viewOf(bytes);
  return { balance: readU64(v, 0), dustAllowance: readU64(v, 8), dustOutputs: v.getUint32(16) };
}

// Milestone: messageId 32 | timestamp u64.
export function encodeMilestone(messageId: Uint8Array, timestamp: number): Uint8Array {
  const out = new Uint8Array(40);
  out.set(messageId, 0);
  writeU64(viewOf(out), 32, timestamp);
  return out;
}

// UTXO changes: u32 count | count × 34-byte output ids, for created then consumed.
export function encodeOutputIdLists(lists: readonly (readonly Uint8Array[])[]): Uint8Array {
  let size = 0;
  for (const list of lists) size += 4 + list.length * 34;
  const out = new Uint8Array(size);
  const v = viewOf(out);
  let at = 0;
  for (const list of lists) {
    v.setUint32(at, list.length);
    at += 4;
    for (const id of list) {
      out.set(id, at);
      at += 34;
    }
  }
  return out;
}

export function decodeOutputIdLists(bytes: Uint8Array, count: number): Uint8Array[][] {
  const v = viewOf(bytes);
  const lists: Uint8Array[][] = [];
  let at = 0;
  for (let l = 0; l < count; l++) {
    const n = v.getUint32(at);
    at += 4;
    const list: Uint8Array[] = [];
    for (let i = 0; i < n; i++, at += 34) list.push(bytes.subarray(at, at + 34));
    lists.push(list);
  }
  return lists;
}
