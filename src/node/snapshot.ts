// The snapshot file: a store's LedgerSnapshot (contract.ts) as one binary, versioned, checksummed file, written by
// `chrysalis snapshot create` and read by `serve --snapshot`. docs/SNAPSHOT.md describes the layout byte by byte.
//
// Decoding is strict: the magic, the version, the length, the checksum, then every field's range and every list's
// order; anything else is refused with a NodeError whose code says which kind of fault it is (TRUNCATED,
// TRAILING_BYTES, STORE_CORRUPT for a checksum mismatch, STORE_TOO_NEW for a newer format, …), never a RangeError.
// Encoding refuses what decoding would refuse, except order: it writes every list in ascending order itself.
import { toHex } from "../bytes/hex.js";
import {
  DUST_ALLOWANCE_MINIMUM,
  ED25519_ADDRESS_LENGTH,
  ED25519_ADDRESS_TYPE,
  MAX_MILESTONE_KEYS,
  MAX_OUTPUT_INDEX,
  MAX_U32,
  MESSAGE_ID_LENGTH,
  OUTPUT_LENGTH,
  SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE,
  SIG_LOCKED_SINGLE_OUTPUT_TYPE,
  TOTAL_SUPPLY,
} from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { networkId, OUTPUT_ID_LENGTH } from "../model/ids.js";
import type { Output } from "../model/types.js";
import { NodeError, type NodeErrorCode } from "./errors.js";
import type { CoreErrorCode } from "../bytes/errors.js";
import type { EntryPoint, LedgerSnapshot, MilestoneRecord, SnapshotOutput } from "./store/contract.js";

/** The format version this code writes, and the newest it reads. */
export const SNAPSHOT_FORMAT_VERSION = 1;

/** The first 8 bytes of every snapshot file: a non-ASCII byte, "CSNP", CR LF and ^Z (as PNG's signature, so a file
 * mangled by a text-mode transfer or taken for text is told apart at once). */
export const SNAPSHOT_MAGIC = Uint8Array.of(0x89, 0x43, 0x53, 0x4e, 0x50, 0x0d, 0x0a, 0x1a);

const VERSION_AT = 8;
const LENGTH_AT = 10;
/** Magic, version and body length: what comes before the body. */
const HEADER_LENGTH = 18;
const CHECKSUM_LENGTH = 32;
const MAX_NETWORK_NAME_LENGTH = 255;
const FLAG_LEDGER = 1;
const FLAG_MILESTONE = 2;
const FLAG_BOOKED = 1;
const MILESTONE_LENGTH = 4 + MESSAGE_ID_LENGTH + 8;
const KEY_LENGTH = 32;
const ENTRY_POINT_LENGTH = MESSAGE_ID_LENGTH + 4;
/** One output: output id, creating message id, flags, booked milestone index, and the output's canonical bytes. */
export const SNAPSHOT_OUTPUT_LENGTH = OUTPUT_ID_LENGTH + MESSAGE_ID_LENGTH + 1 + 4 + OUTPUT_LENGTH;

type Code = NodeErrorCode | CoreErrorCode;

function fault(code: Code, message: string, offset?: number, path?: string): NodeError {
  return new NodeError(code, `snapshot: ${message}`, { ...(offset !== undefined ? { offset } : {}), ...(path !== undefined ? { path } : {}) });
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding

function byId<T>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/** `items` in ascending order of `key` (lowercase hex, so string order is byte order); a repeat is refused. */
function ascending<T>(items: readonly T[], key: (item: T) => string, path: string): readonly T[] {
  const keys = items.map(key);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
  if (sorted) return items;
  const order = keys.map((_, i) => i).sort(byId((i) => keys[i]!));
  for (let i = 1; i < order.length; i++) {
    if (keys[order[i - 1]!] === keys[order[i]!]) throw fault("DUPLICATE", `${keys[order[i]!]!} appears twice`, undefined, path);
  }
  return order.map((i) => items[i]!);
}

// A hex digit's value by character code (0x10 for anything else), to write ids straight into the file's buffer.
const DIGIT = new Uint8Array(256).fill(0x10);
for (let c = 0; c < 16; c++) {
  DIGIT["0123456789abcdef".charCodeAt(c)] = c;
  DIGIT["0123456789ABCDEF".charCodeAt(c)] = c;
}

/** Writes `length` bytes of hex `text` at `at`; INVALID_HEX naming `path` unless it is exactly that many bytes of hex. */
function writeHex(bytes: Uint8Array, at: number, text: string, length: number, path: string): void {
  if (typeof text !== "string" || text.length !== 2 * length) throw fault("INVALID_HEX", `expected ${2 * length} hex characters`, undefined, path);
  let bad = 0;
  for (let i = 0; i < length; i++) {
    const a = text.charCodeAt(2 * i);
    const b = text.charCodeAt(2 * i + 1);
    const high = DIGIT[a & 0xff]! | (a >>> 8);
    const low = DIGIT[b & 0xff]! | (b >>> 8);
    bad |= high | low;
    bytes[at + i] = (high << 4) | low;
  }
  if (bad > 0x0f) throw fault("INVALID_HEX", "not a hex string", undefined, path);
}

/** An amount (at most TOTAL_SUPPLY < 2^53) as u64 LE, without a BigInt. */
function writeAmount(view: DataView, at: number, amount: number): void {
  view.setUint32(at, amount % 0x1_0000_0000, true);
  view.setUint32(at + 4, Math.floor(amount / 0x1_0000_0000), true);
}

function checkInteger(value: unknown, min: number, max: number, path: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw fault("VALUE_OUT_OF_RANGE", `expected an integer ${min} .. ${max}, got ${String(value)}`, undefined, path);
  }
  return value;
}

function checkOutput(value: Output, path: string): void {
  // Checked as untyped data: a snapshot may come from anywhere (a store, a file, a caller).
  const output = value as { type: unknown; address: { type: unknown; address: unknown }; amount: unknown };
  if (output === null || typeof output !== "object" || output.address === null || typeof output.address !== "object") {
    throw fault("INVALID_ARGUMENT", "expected an output", undefined, path);
  }
  if (output.type !== SIG_LOCKED_SINGLE_OUTPUT_TYPE && output.type !== SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE) {
    throw fault("INVALID_TYPE", `unknown output type ${String(output.type)}`, undefined, `${path}.type`);
  }
  if (output.address.type !== ED25519_ADDRESS_TYPE) throw fault("INVALID_TYPE", `unknown address type ${String(output.address.type)}`, undefined, `${path}.address.type`);
  if (!(output.address.address instanceof Uint8Array) || output.address.address.length !== ED25519_ADDRESS_LENGTH) {
    throw fault("LENGTH_OUT_OF_RANGE", `an Ed25519 address is ${ED25519_ADDRESS_LENGTH} bytes`, undefined, `${path}.address.address`);
  }
  const min = output.type === SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE ? DUST_ALLOWANCE_MINIMUM : 1;
  checkInteger(output.amount, min, TOTAL_SUPPLY, `${path}.amount`);
}

/**
 * The snapshot file's bytes: header, body and checksum, in one allocation. Lists are written in ascending id order
 * (sorted here when they are not); anything decodeSnapshot would refuse is refused with the same code.
 */
export function encodeSnapshot(snapshot: LedgerSnapshot): Uint8Array {
  const name = new TextEncoder().encode(snapshot.network);
  if (name.length < 1 || name.length > MAX_NETWORK_NAME_LENGTH) {
    throw fault("LENGTH_OUT_OF_RANGE", `a network name is 1 .. ${MAX_NETWORK_NAME_LENGTH} bytes of UTF-8, got ${name.length}`, undefined, "network");
  }
  const milestone = snapshot.milestone;
  const top = milestone === undefined ? 0 : checkInteger(milestone.index, 1, MAX_U32, "milestone.index");
  if (milestone !== undefined) checkInteger(milestone.timestamp, 0, Number.MAX_SAFE_INTEGER, "milestone.timestamp");
  const keys = ascending(
    snapshot.coordinatorPublicKeys.map((k) => k.toLowerCase()),
    (k) => k,
    "coordinatorPublicKeys",
  );
  if (keys.length > MAX_MILESTONE_KEYS) throw fault("COUNT_OUT_OF_RANGE", `at most ${MAX_MILESTONE_KEYS} coordinator keys, got ${keys.length}`, undefined, "coordinatorPublicKeys");
  const entryPoints = ascending(
    snapshot.entryPoints.map((e) => ({ messageId: e.messageId.toLowerCase(), index: e.index })),
    (e) => e.messageId,
    "entryPoints",
  );
  if (entryPoints.length > MAX_U32) throw fault("COUNT_OUT_OF_RANGE", "too many entry points", undefined, "entryPoints");
  const outputs = ascending(snapshot.outputs, (o) => o.outputId.toLowerCase(), "outputs");
  if (!snapshot.ledger && outputs.length > 0) throw fault("COUNT_OUT_OF_RANGE", "a snapshot of a store without a ledger carries no outputs", undefined, "outputs");
  if (outputs.length > MAX_U32) throw fault("COUNT_OUT_OF_RANGE", "too many outputs", undefined, "outputs");

  const bodyLength =
    1 + name.length + 8 + 1 + (milestone === undefined ? 0 : MILESTONE_LENGTH) + 1 + keys.length * KEY_LENGTH + 4 + entryPoints.length * ENTRY_POINT_LENGTH + 4 + outputs.length * SNAPSHOT_OUTPUT_LENGTH;
  const bytes = new Uint8Array(HEADER_LENGTH + bodyLength + CHECKSUM_LENGTH);
  const view = new DataView(bytes.buffer);
  bytes.set(SNAPSHOT_MAGIC, 0);
  view.setUint16(VERSION_AT, SNAPSHOT_FORMAT_VERSION, true);
  view.setBigUint64(LENGTH_AT, BigInt(bodyLength), true);
  let at = HEADER_LENGTH;
  bytes[at++] = name.length;
  bytes.set(name, at);
  at += name.length;
  view.setBigUint64(at, networkId(snapshot.network), true);
  at += 8;
  bytes[at++] = (snapshot.ledger ? FLAG_LEDGER : 0) | (milestone === undefined ? 0 : FLAG_MILESTONE);
  if (milestone !== undefined) {
    view.setUint32(at, milestone.index, true);
    writeHex(bytes, at + 4, milestone.messageId, MESSAGE_ID_LENGTH, "milestone.messageId");
    view.setBigUint64(at + 4 + MESSAGE_ID_LENGTH, BigInt(milestone.timestamp), true);
    at += MILESTONE_LENGTH;
  }
  bytes[at++] = keys.length;
  keys.forEach((key, i) => {
    writeHex(bytes, at, key, KEY_LENGTH, `coordinatorPublicKeys[${i}]`);
    at += KEY_LENGTH;
  });
  view.setUint32(at, entryPoints.length, true);
  at += 4;
  entryPoints.forEach((e, i) => {
    writeHex(bytes, at, e.messageId, MESSAGE_ID_LENGTH, `entryPoints[${i}].messageId`);
    view.setUint32(at + MESSAGE_ID_LENGTH, checkInteger(e.index, 0, top, `entryPoints[${i}].index`), true);
    at += ENTRY_POINT_LENGTH;
  });
  view.setUint32(at, outputs.length, true);
  at += 4;
  let supply = 0;
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs[i]!;
    const path = `outputs[${i}]`;
    writeHex(bytes, at, o.outputId, OUTPUT_ID_LENGTH, `${path}.outputId`);
    if ((bytes[at + 32]! | (bytes[at + 33]! << 8)) > MAX_OUTPUT_INDEX) throw fault("VALUE_OUT_OF_RANGE", `an output index is 0 .. ${MAX_OUTPUT_INDEX}`, undefined, `${path}.outputId`);
    writeHex(bytes, at + 34, o.messageId, MESSAGE_ID_LENGTH, `${path}.messageId`);
    if (o.milestoneIndexBooked !== undefined) {
      bytes[at + 66] = FLAG_BOOKED;
      view.setUint32(at + 67, checkInteger(o.milestoneIndexBooked, 0, top, `${path}.milestoneIndexBooked`), true);
    }
    checkOutput(o.output, `${path}.output`);
    supply += o.output.amount;
    if (supply > TOTAL_SUPPLY) throw fault("VALUE_OUT_OF_RANGE", `the outputs sum to more than the total supply ${TOTAL_SUPPLY}`, undefined, `${path}.output.amount`);
    // The output's canonical bytes (the protocol's serialization): type, address type, address, amount u64 LE.
    bytes[at + 71] = o.output.type;
    bytes[at + 72] = o.output.address.type;
    bytes.set(o.output.address.address, at + 73);
    writeAmount(view, at + 73 + ED25519_ADDRESS_LENGTH, o.output.amount);
    at += SNAPSHOT_OUTPUT_LENGTH;
  }
  bytes.set(blake2b256(bytes.subarray(0, at)), at);
  return bytes;
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding

/** Compares `length` bytes at `a` and at `b` of one buffer: negative, 0 or positive as memcmp. */
function compareAt(bytes: Uint8Array, a: number, b: number, length: number): number {
  for (let i = 0; i < length; i++) {
    const d = bytes[a + i]! - bytes[b + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether `count` records of `size` bytes fit between `at` and `end`; refused (COUNT_OUT_OF_RANGE) when not. */
function fits(count: number, size: number, at: number, end: number, what: string, countAt: number): void {
  if (count * size > end - at) throw fault("COUNT_OUT_OF_RANGE", `${count} ${what} need ${count * size} bytes, the body holds ${Math.max(0, end - at)} more`, countAt, what);
}

/** Refuses records that are not in strictly ascending order of their first `keyLength` bytes. */
function checkOrder(bytes: Uint8Array, first: number, count: number, size: number, keyLength: number, what: string): void {
  for (let i = 1; i < count; i++) {
    const at = first + i * size;
    const c = compareAt(bytes, at - size, at, keyLength);
    if (c === 0) throw fault("DUPLICATE", `${what}[${i}] repeats ${toHex(bytes.subarray(at, at + keyLength))}`, at, `${what}[${i}]`);
    if (c > 0) throw fault("NOT_SORTED", `${what} are not in ascending order at ${i}`, at, `${what}[${i}]`);
  }
}

/**
 * The snapshot a file holds. Checks, in this order: the magic, the version, the body length against the file's size
 * (TRUNCATED / TRAILING_BYTES), the checksum (STORE_CORRUPT), then every field (ranges, counts, order, the network id
 * against the name). Throws NodeError, never anything else, for any input.
 */
export function decodeSnapshot(bytes: Uint8Array): LedgerSnapshot {
  if (!(bytes instanceof Uint8Array)) throw fault("INVALID_ARGUMENT", "expected a Uint8Array");
  const n = bytes.length;
  for (let i = 0; i < SNAPSHOT_MAGIC.length; i++) {
    if (i >= n) throw fault("TRUNCATED", `${n} bytes is too short for a snapshot file`, n);
    if (bytes[i] !== SNAPSHOT_MAGIC[i]) throw fault("INVALID_TYPE", "not a chrysalis snapshot file (its first bytes are not the snapshot magic)", i);
  }
  if (n < HEADER_LENGTH) throw fault("TRUNCATED", `${n} bytes is too short for a snapshot file`, n);
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  const version = view.getUint16(VERSION_AT, true);
  if (version > SNAPSHOT_FORMAT_VERSION) {
    throw fault("STORE_TOO_NEW", `written in snapshot format version ${version}; this version reads up to ${SNAPSHOT_FORMAT_VERSION}: upgrade chrysalis-core`, VERSION_AT);
  }
  if (version < 1) throw fault("VALUE_OUT_OF_RANGE", `unknown snapshot format version ${version}`, VERSION_AT);
  const declared = view.getBigUint64(LENGTH_AT, true);
  const actual = BigInt(n - HEADER_LENGTH - CHECKSUM_LENGTH);
  if (declared > actual) throw fault("TRUNCATED", `the file ends ${declared - actual} bytes before the end its header declares`, n);
  if (declared < actual) throw fault("TRAILING_BYTES", `${actual - declared} bytes follow the checksum`, HEADER_LENGTH + Number(declared) + CHECKSUM_LENGTH);
  const end = n - CHECKSUM_LENGTH;
  const sum = blake2b256(bytes.subarray(0, end));
  if (compareBytesAt(sum, bytes, end) !== 0) throw fault("STORE_CORRUPT", "the checksum does not match the contents: the file is damaged", end);
  return decodeBody(bytes, view, HEADER_LENGTH, end);
}

/** Lowercase hex of `bytes[start, end)`: Node's native conversion, three times faster than a TextDecoder per id. */
type HexOf = (start: number, end: number) => string;

function hexReader(bytes: Uint8Array): HexOf {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return (start, end) => buffer.toString("hex", start, end);
}

function compareBytesAt(a: Uint8Array, bytes: Uint8Array, at: number): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== bytes[at + i]) return 1;
  return 0;
}

/** The body (version 1): every read is bounds-checked against `end` first. */
function decodeBody(bytes: Uint8Array, view: DataView, start: number, end: number): LedgerSnapshot {
  const hex = hexReader(bytes);
  let at = start;
  const need = (length: number, path: string): void => {
    if (length > end - at) throw fault("TRUNCATED", `the body ends inside ${path}`, at, path);
  };
  need(1, "network");
  const nameLength = bytes[at]!;
  if (nameLength < 1) throw fault("LENGTH_OUT_OF_RANGE", "the network name is empty", at, "network");
  at += 1;
  need(nameLength + 8 + 1, "network");
  let network: string;
  try {
    network = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(at, at + nameLength));
  } catch {
    throw fault("INVALID_ARGUMENT", "the network name is not UTF-8", at, "network");
  }
  at += nameLength;
  const id = view.getBigUint64(at, true);
  if (id !== networkId(network)) throw fault("WRONG_NETWORK_ID", `network id ${id} is not that of network ${JSON.stringify(network)} (${networkId(network)})`, at, "networkId");
  at += 8;
  const flags = bytes[at]!;
  if ((flags & ~(FLAG_LEDGER | FLAG_MILESTONE)) !== 0) throw fault("VALUE_OUT_OF_RANGE", `unknown flags 0x${flags.toString(16)}`, at, "flags");
  at += 1;
  const ledger = (flags & FLAG_LEDGER) !== 0;
  let milestone: MilestoneRecord | undefined;
  if ((flags & FLAG_MILESTONE) !== 0) {
    need(MILESTONE_LENGTH, "milestone");
    const index = view.getUint32(at, true);
    if (index < 1) throw fault("VALUE_OUT_OF_RANGE", "milestone index 0 is no milestone", at, "milestone.index");
    const timestamp = view.getBigUint64(at + 4 + MESSAGE_ID_LENGTH, true);
    if (timestamp > BigInt(Number.MAX_SAFE_INTEGER)) throw fault("VALUE_OUT_OF_RANGE", `milestone timestamp ${timestamp} is out of range`, at + 36, "milestone.timestamp");
    milestone = { index, messageId: hex(at + 4, at + 4 + MESSAGE_ID_LENGTH), timestamp: Number(timestamp) };
    at += MILESTONE_LENGTH;
  }
  const top = milestone?.index ?? 0;

  need(1, "coordinatorPublicKeys");
  const keyCount = bytes[at]!;
  at += 1;
  fits(keyCount, KEY_LENGTH, at, end, "coordinatorPublicKeys", at - 1);
  checkOrder(bytes, at, keyCount, KEY_LENGTH, KEY_LENGTH, "coordinatorPublicKeys");
  const coordinatorPublicKeys: string[] = [];
  for (let i = 0; i < keyCount; i++, at += KEY_LENGTH) coordinatorPublicKeys.push(hex(at, at + KEY_LENGTH));

  need(4, "entryPoints");
  const entryCount = view.getUint32(at, true);
  at += 4;
  fits(entryCount, ENTRY_POINT_LENGTH, at, end, "entryPoints", at - 4);
  checkOrder(bytes, at, entryCount, ENTRY_POINT_LENGTH, MESSAGE_ID_LENGTH, "entryPoints");
  const entryPoints: EntryPoint[] = new Array(entryCount);
  for (let i = 0; i < entryCount; i++, at += ENTRY_POINT_LENGTH) {
    const index = view.getUint32(at + MESSAGE_ID_LENGTH, true);
    if (index > top) throw fault("VALUE_OUT_OF_RANGE", `entry point index ${index} is past the snapshot's milestone ${top}`, at + MESSAGE_ID_LENGTH, `entryPoints[${i}].index`);
    entryPoints[i] = { messageId: hex(at, at + MESSAGE_ID_LENGTH), index };
  }

  need(4, "outputs");
  const outputCount = view.getUint32(at, true);
  at += 4;
  if (!ledger && outputCount > 0) throw fault("COUNT_OUT_OF_RANGE", "a snapshot of a store without a ledger carries no outputs", at - 4, "outputs");
  fits(outputCount, SNAPSHOT_OUTPUT_LENGTH, at, end, "outputs", at - 4);
  checkOrder(bytes, at, outputCount, SNAPSHOT_OUTPUT_LENGTH, OUTPUT_ID_LENGTH, "outputs");
  const outputs: SnapshotOutput[] = new Array(outputCount);
  let supply = 0;
  for (let i = 0; i < outputCount; i++, at += SNAPSHOT_OUTPUT_LENGTH) {
    outputs[i] = readOutput(bytes, view, hex, at, top, i);
    supply += outputs[i]!.output.amount;
    if (supply > TOTAL_SUPPLY) throw fault("VALUE_OUT_OF_RANGE", `the outputs sum to more than the total supply ${TOTAL_SUPPLY}`, at + 105, `outputs[${i}].output.amount`);
  }
  if (at !== end) throw fault("TRAILING_BYTES", `${end - at} bytes follow the last output`, at);
  return { network, ledger, ...(milestone !== undefined ? { milestone } : {}), coordinatorPublicKeys, entryPoints, outputs };
}

function readOutput(bytes: Uint8Array, view: DataView, hex: HexOf, at: number, top: number, i: number): SnapshotOutput {
  const path = `outputs[${i}]`;
  if ((bytes[at + 32]! | (bytes[at + 33]! << 8)) > MAX_OUTPUT_INDEX) throw fault("VALUE_OUT_OF_RANGE", `an output index is 0 .. ${MAX_OUTPUT_INDEX}`, at + 32, `${path}.outputId`);
  const flags = bytes[at + 66]!;
  const booked = view.getUint32(at + 67, true);
  if (flags === 0) {
    if (booked !== 0) throw fault("VALUE_OUT_OF_RANGE", "an output not booked has milestone index 0", at + 67, `${path}.milestoneIndexBooked`);
  } else if (flags !== FLAG_BOOKED) {
    throw fault("VALUE_OUT_OF_RANGE", `unknown output flags 0x${flags.toString(16)}`, at + 66, `${path}.flags`);
  } else if (booked > top) {
    throw fault("VALUE_OUT_OF_RANGE", `booked at milestone ${booked}, past the snapshot's milestone ${top}`, at + 67, `${path}.milestoneIndexBooked`);
  }
  const type = bytes[at + 71]!;
  if (type !== SIG_LOCKED_SINGLE_OUTPUT_TYPE && type !== SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE) throw fault("INVALID_TYPE", `unknown output type ${type}`, at + 71, `${path}.output.type`);
  if (bytes[at + 72] !== ED25519_ADDRESS_TYPE) throw fault("INVALID_TYPE", `unknown address type ${bytes[at + 72]!}`, at + 72, `${path}.output.address.type`);
  // Read as two u32 halves: a high half of 2^21 or more is past TOTAL_SUPPLY anyway, so the sum stays exact.
  const high = view.getUint32(at + 109, true);
  const amount = high >= 0x20_0000 ? Infinity : high * 0x1_0000_0000 + view.getUint32(at + 105, true);
  const min = type === SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE ? DUST_ALLOWANCE_MINIMUM : 1;
  if (amount < min || amount > TOTAL_SUPPLY) {
    throw fault("VALUE_OUT_OF_RANGE", `amount ${view.getBigUint64(at + 105, true)} is outside ${min} .. ${TOTAL_SUPPLY}`, at + 105, `${path}.output.amount`);
  }
  const output: Output = { type, address: { type: ED25519_ADDRESS_TYPE, address: bytes.slice(at + 73, at + 105) }, amount } as Output;
  return {
    outputId: hex(at, at + OUTPUT_ID_LENGTH),
    messageId: hex(at + 34, at + 66),
    ...(flags === FLAG_BOOKED ? { milestoneIndexBooked: booked } : {}),
    output,
  };
}
