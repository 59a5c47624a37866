// The node REST JSON form of a message (PROTOCOL.md §6, node API v1 / iota.js 1.8 IMessage) and the model, both ways.
// Every shape error names its JSON path; the syntactic rules then run on the model and report JSON paths too.
import { ProtocolError } from "../bytes/errors.js";
import { decodeHex, firstNonHexDigit, toHex } from "../bytes/hex.js";
import {
  ED25519_ADDRESS_LENGTH,
  ED25519_ADDRESS_TYPE,
  ED25519_SIGNATURE_TYPE,
  INDEXATION_PAYLOAD_TYPE,
  MILESTONE_PAYLOAD_TYPE,
  RECEIPT_PAYLOAD_TYPE,
  REFERENCE_UNLOCK_BLOCK_TYPE,
  SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE,
  SIG_LOCKED_SINGLE_OUTPUT_TYPE,
  SIGNATURE_UNLOCK_BLOCK_TYPE,
  TRANSACTION_ESSENCE_TYPE,
  TRANSACTION_PAYLOAD_TYPE,
  TREASURY_INPUT_TYPE,
  TREASURY_OUTPUT_TYPE,
  TREASURY_TRANSACTION_PAYLOAD_TYPE,
  UTXO_INPUT_TYPE,
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  MAX_INPUTS,
  MAX_MESSAGE_LENGTH,
  MAX_MIGRATED_FUNDS,
  MAX_MILESTONE_KEYS,
  MAX_OUTPUTS,
  MAX_U16,
  MAX_U32,
  MAX_U64,
  MAX_U8,
  MERKLE_PROOF_LENGTH,
  MESSAGE_ID_LENGTH,
  MILESTONE_ID_LENGTH,
  TAIL_TRANSACTION_HASH_LENGTH,
  TRANSACTION_ID_LENGTH,
} from "../bytes/limits.js";
import type {
  Ed25519Address,
  Ed25519Signature,
  IndexationPayload,
  Message,
  MigratedFundsEntry,
  MilestonePayload,
  Output,
  Payload,
  ReceiptPayload,
  TransactionEssence,
  TransactionPayload,
  TreasuryTransactionPayload,
  UnlockBlock,
  UtxoInput,
} from "./types.js";
import { validateMessage, validatePayload } from "./codec.js";

// ---------------------------------------------------------------------------------------------------------------
// The JSON types (what the node API sends and takes).

export interface Ed25519AddressJson {
  type: 0;
  address: string;
}

export interface UtxoInputJson {
  type: 0;
  transactionId: string;
  transactionOutputIndex: number;
}

export interface SigLockedSingleOutputJson {
  type: 0;
  address: Ed25519AddressJson;
  amount: number;
}

export interface SigLockedDustAllowanceOutputJson {
  type: 1;
  address: Ed25519AddressJson;
  amount: number;
}

export type OutputJson = SigLockedSingleOutputJson | SigLockedDustAllowanceOutputJson;

export interface IndexationPayloadJson {
  type: 2;
  /** Hex of 1 .. 64 bytes. */
  index: string;
  /** Hex, "" when empty. */
  data: string;
}

export interface TransactionEssenceJson {
  type: 0;
  inputs: UtxoInputJson[];
  outputs: OutputJson[];
  payload: IndexationPayloadJson | null;
}

export interface Ed25519SignatureJson {
  type: 0;
  publicKey: string;
  signature: string;
}

export interface SignatureUnlockBlockJson {
  type: 0;
  signature: Ed25519SignatureJson;
}

export interface ReferenceUnlockBlockJson {
  type: 1;
  reference: number;
}

export type UnlockBlockJson = SignatureUnlockBlockJson | ReferenceUnlockBlockJson;

export interface TransactionPayloadJson {
  type: 0;
  essence: TransactionEssenceJson;
  unlockBlocks: UnlockBlockJson[];
}

export interface TreasuryTransactionPayloadJson {
  type: 4;
  input: { type: 1; milestoneId: string };
  output: { type: 2; amount: number };
}

export interface MigratedFundsEntryJson {
  tailTransactionHash: string;
  address: Ed25519AddressJson;
  deposit: number;
}

export interface ReceiptPayloadJson {
  type: 3;
  migratedAt: number;
  final: boolean;
  funds: MigratedFundsEntryJson[];
  transaction: TreasuryTransactionPayloadJson;
}

export interface MilestonePayloadJson {
  type: 1;
  index: number;
  /** Seconds since the Unix epoch; a JSON number (a decimal string only beyond 2^53, which no real clock reaches). */
  timestamp: number | string;
  parentMessageIds: string[];
  inclusionMerkleProof: string;
  nextPoWScore: number;
  nextPoWScoreMilestoneIndex: number;
  publicKeys: string[];
  receipt: ReceiptPayloadJson | null;
  signatures: string[];
}

export type PayloadJson = TransactionPayloadJson | MilestonePayloadJson | IndexationPayloadJson;

export interface MessageJson {
  /** u64 as a decimal string. */
  networkId: string;
  parentMessageIds: string[];
  payload: PayloadJson | null;
  /** u64 as a decimal string. */
  nonce: string;
}

/** What GET /api/v1/info answers, in the Hornet shape (`networkId` is the network NAME there, as iota.js expects). */
export interface NodeInfoJson {
  name: string;
  version: string;
  isHealthy: boolean;
  networkId: string;
  bech32HRP: string;
  minPoWScore: number;
  features: string[];
}

/** A message as submitted to a node: networkId, parents and nonce may be left for the node to fill. */
export interface PartialMessage {
  networkId?: bigint | undefined;
  parents?: Uint8Array[] | undefined;
  payload?: Payload | undefined;
  nonce?: bigint | undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading unknown JSON: own properties only (a polluted Object.prototype cannot inject fields; see object()).
// The path is kept as a stack of segments and turned into text only when something is wrong, so a valid message
// costs no string building.

type Obj = Record<string, unknown>;

// Upper bounds checked before looping or decoding, so a hostile array or string is refused before any per-element
// work; the exact rules (minimums, order, sums) run afterwards in validateMessage.
const MAX_HEX_CHARS = 2 * MAX_MESSAGE_LENGTH;

const trail: (string | number)[] = [];

/** The JSON path of the current position, plus `key` when given. */
function here(key?: string | number): string {
  let out = "";
  const n = trail.length;
  for (let i = 0; i <= n; i++) {
    const segment = i < n ? trail[i] : key;
    if (segment === undefined) continue;
    out = typeof segment === "number" ? `${out}[${segment}]` : out === "" ? segment : `${out}.${segment}`;
  }
  return out;
}

function fail(code: string, message: string, key?: string | number): never {
  throw new ProtocolError(code, message, { path: here(key) });
}

function kindOf(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** False once anything has made an enumerable property appear on Object.prototype (prototype pollution). */
let pristine = true;

function prototypeIsPristine(): boolean {
  for (const _ in Object.prototype) return false;
  return true;
}

/**
 * The object at the current position, readable with plain property access that sees only its own properties: a
 * JSON.parse object while Object.prototype holds no enumerable property (checked once per call), or a null-prototype
 * object, as it is; anything else (another prototype, a polluted Object.prototype) as a null-prototype copy of its own
 * enumerable properties. Reads then cost no hasOwnProperty call.
 */
function object(value: unknown, key?: string | number): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("INVALID_JSON", `expected an object, got ${kindOf(value)}`, key);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || (proto === Object.prototype && pristine)) return value as Obj;
  const copy = Object.create(null) as Obj;
  for (const k of Object.keys(value)) copy[k] = (value as Obj)[k];
  return copy;
}

function array(value: unknown, key: string, max: number): unknown[] {
  if (!Array.isArray(value)) fail("INVALID_JSON", `expected an array, got ${kindOf(value)}`, key);
  if (value.length > max) fail("COUNT_OUT_OF_RANGE", `at most ${max} elements allowed, got ${value.length}`, key);
  return value;
}

/** Reads the array `value`, found at `key` (at most `max` elements), each element by `item` with `key[i]` on the path. */
function list<T>(value: unknown, key: string, max: number, item: (element: Obj) => T): T[] {
  const json = array(value, key, max);
  const out = new Array<T>(json.length);
  trail.push(key);
  for (let i = 0; i < json.length; i++) {
    trail.push(i);
    out[i] = item(object(json[i]));
    trail.pop();
  }
  trail.pop();
  return out;
}

function integer(value: unknown, key: string, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value)) fail("INVALID_JSON", `expected an integer number, got ${kindOf(value)}`, key);
  if (value < 0 || value > max) fail("VALUE_OUT_OF_RANGE", `expected 0 .. ${max}, got ${value}`, key);
  return value + 0; // -0 becomes 0, so the model equals what its bytes decode to
}

/**
 * The numeric type tag `value` (read from the object's `type` at the call site, so each property read sees one object
 * shape), which must be one of `a`, `b`, `c` (the latter two default to `a`).
 */
function typeTag(value: unknown, a: number, b = a, c = a): number {
  if (typeof value !== "number") fail("INVALID_JSON", `expected a numeric type tag, got ${kindOf(value)}`, "type");
  if (value !== a && value !== b && value !== c) {
    const allowed = [...new Set([a, b, c])].join(" or ");
    fail("INVALID_TYPE", `type ${value} not allowed here (expected ${allowed})`, "type");
  }
  return value;
}

/** Hex text (either case) to bytes; `length` is the exact byte count when given. */
function hexValue(value: unknown, key: string | number, length = -1): Uint8Array {
  if (typeof value !== "string") fail("INVALID_HEX", `expected a hex string, got ${kindOf(value)}`, key);
  const n = value.length;
  if (n > MAX_HEX_CHARS) fail("LENGTH_OUT_OF_RANGE", "hex string longer than a whole message", key);
  if ((n & 1) !== 0) fail("INVALID_HEX", "hex string of odd length", key);
  if (length >= 0 && n !== 2 * length) fail("INVALID_HEX", `expected ${2 * length} hex characters, got ${n}`, key);
  const out = decodeHex(value);
  if (out === undefined) fail("INVALID_HEX", `not a hex digit at character ${firstNonHexDigit(value)}`, key);
  return out;
}

// The last long decimal parsed: every message of a network carries the same networkId, and a bigint is immutable.
let lastDecimal = "";
let lastValue = 0n;

/** A u64 in JSON: a decimal string of digits only (no sign, no spaces, no exponent), at most 2^64 − 1. */
function u64(value: unknown, key: string): bigint {
  if (typeof value !== "string") fail("INVALID_JSON", `expected a decimal string, got ${kindOf(value)}`, key);
  const n = value.length;
  if (n === 0 || n > 20) fail("INVALID_JSON", "expected a decimal string of 1 to 20 digits", key);
  for (let i = 0; i < n; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) fail("INVALID_JSON", "expected a decimal string of 1 to 20 digits", key);
  }
  // Up to 15 digits a double holds the value exactly, and converting it is cheaper than parsing a BigInt.
  if (n <= 15) return BigInt(+value);
  if (value === lastDecimal) return lastValue;
  const big = BigInt(value);
  if (big > MAX_U64) fail("VALUE_OUT_OF_RANGE", "exceeds the largest u64", key);
  if (key === "networkId") {
    lastDecimal = value;
    lastValue = big;
  }
  return big;
}

function hexList(value: unknown, key: string, max: number, length: number): Uint8Array[] {
  const list = array(value, key, max);
  const out = new Array<Uint8Array>(list.length);
  trail.push(key);
  for (let i = 0; i < list.length; i++) out[i] = hexValue(list[i], i, length);
  trail.pop();
  return out;
}

function address(o: Obj): Ed25519Address {
  trail.push("address");
  const a = object(o["address"]);
  typeTag(a["type"], ED25519_ADDRESS_TYPE);
  const result: Ed25519Address = { type: 0, address: hexValue(a["address"], "address", ED25519_ADDRESS_LENGTH) };
  trail.pop();
  return result;
}

function indexation(o: Obj): IndexationPayload {
  const data = o["data"];
  return {
    type: 2,
    index: hexValue(o["index"], "index"),
    // iota.js leaves `data` out when empty; the node sends "".
    data: data === undefined || data === null ? new Uint8Array(0) : hexValue(data, "data"),
  };
}

function input(o: Obj): UtxoInput {
  typeTag(o["type"], UTXO_INPUT_TYPE);
  return { type: 0, transactionId: hexValue(o["transactionId"], "transactionId", TRANSACTION_ID_LENGTH), transactionOutputIndex: integer(o["transactionOutputIndex"], "transactionOutputIndex", MAX_U16) };
}

function output(o: Obj): Output {
  const type = typeTag(o["type"], SIG_LOCKED_SINGLE_OUTPUT_TYPE, SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE) as 0 | 1;
  return { type, address: address(o), amount: integer(o["amount"], "amount", Number.MAX_SAFE_INTEGER) };
}

function essence(o: Obj): TransactionEssence {
  typeTag(o["type"], TRANSACTION_ESSENCE_TYPE);
  const inputs = list(o["inputs"], "inputs", MAX_INPUTS, input);
  const outputs = list(o["outputs"], "outputs", MAX_OUTPUTS, output);
  // Absent optional fields are own properties set to undefined, so nothing downstream can find an inherited one.
  const result: TransactionEssence = { type: 0, inputs, outputs, payload: undefined };
  const payloadJson = o["payload"];
  if (payloadJson !== undefined && payloadJson !== null) {
    trail.push("payload");
    const p = object(payloadJson);
    typeTag(p["type"], INDEXATION_PAYLOAD_TYPE);
    result.payload = indexation(p);
    trail.pop();
  }
  return result;
}

function signature(o: Obj): Ed25519Signature {
  trail.push("signature");
  const s = object(o["signature"]);
  typeTag(s["type"], ED25519_SIGNATURE_TYPE);
  const result: Ed25519Signature = { type: 0, publicKey: hexValue(s["publicKey"], "publicKey", ED25519_PUBLIC_KEY_LENGTH), signature: hexValue(s["signature"], "signature", ED25519_SIGNATURE_LENGTH) };
  trail.pop();
  return result;
}

function unlockBlock(o: Obj): UnlockBlock {
  const type = typeTag(o["type"], SIGNATURE_UNLOCK_BLOCK_TYPE, REFERENCE_UNLOCK_BLOCK_TYPE);
  return type === SIGNATURE_UNLOCK_BLOCK_TYPE ? { type: 0, signature: signature(o) } : { type: 1, reference: integer(o["reference"], "reference", MAX_U16) };
}

function transaction(o: Obj): TransactionPayload {
  trail.push("essence");
  const e = essence(object(o["essence"]));
  trail.pop();
  const unlockBlocks = list(o["unlockBlocks"], "unlockBlocks", MAX_INPUTS, unlockBlock);
  return { type: 0, essence: e, unlockBlocks };
}

function timestamp(o: Obj): bigint {
  const value = o["timestamp"];
  if (typeof value === "string") return u64(value, "timestamp");
  return BigInt(integer(o["timestamp"], "timestamp", Number.MAX_SAFE_INTEGER));
}

function treasuryTransaction(o: Obj): TreasuryTransactionPayload {
  typeTag(o["type"], TREASURY_TRANSACTION_PAYLOAD_TYPE);
  trail.push("input");
  const i = object(o["input"]);
  typeTag(i["type"], TREASURY_INPUT_TYPE);
  const milestoneId = hexValue(i["milestoneId"], "milestoneId", MILESTONE_ID_LENGTH);
  trail.pop();
  trail.push("output");
  const out = object(o["output"]);
  typeTag(out["type"], TREASURY_OUTPUT_TYPE);
  const amount = integer(out["amount"], "amount", Number.MAX_SAFE_INTEGER);
  trail.pop();
  return { type: 4, input: { type: 1, milestoneId }, output: { type: 2, amount } };
}

function migratedFundsEntry(f: Obj): MigratedFundsEntry {
  return { tailTransactionHash: hexValue(f["tailTransactionHash"], "tailTransactionHash", TAIL_TRANSACTION_HASH_LENGTH), address: address(f), deposit: integer(f["deposit"], "deposit", Number.MAX_SAFE_INTEGER) };
}

function receipt(o: Obj): ReceiptPayload {
  typeTag(o["type"], RECEIPT_PAYLOAD_TYPE);
  const migratedAt = integer(o["migratedAt"], "migratedAt", MAX_U32);
  const final = o["final"];
  if (typeof final !== "boolean") fail("INVALID_JSON", `expected a boolean, got ${kindOf(final)}`, "final");
  const funds = list(o["funds"], "funds", MAX_MIGRATED_FUNDS, migratedFundsEntry);
  trail.push("transaction");
  const transaction = treasuryTransaction(object(o["transaction"]));
  trail.pop();
  return { type: 3, migratedAt, final, funds, transaction };
}

function milestone(o: Obj): MilestonePayload {
  const result: MilestonePayload = {
    type: 1,
    index: integer(o["index"], "index", MAX_U32),
    timestamp: timestamp(o),
    parents: hexList(o["parentMessageIds"], "parentMessageIds", MAX_U8, MESSAGE_ID_LENGTH),
    inclusionMerkleProof: hexValue(o["inclusionMerkleProof"], "inclusionMerkleProof", MERKLE_PROOF_LENGTH),
    nextPoWScore: integer(o["nextPoWScore"], "nextPoWScore", MAX_U32),
    nextPoWScoreMilestoneIndex: integer(o["nextPoWScoreMilestoneIndex"], "nextPoWScoreMilestoneIndex", MAX_U32),
    publicKeys: hexList(o["publicKeys"], "publicKeys", MAX_MILESTONE_KEYS, ED25519_PUBLIC_KEY_LENGTH),
    signatures: hexList(o["signatures"], "signatures", MAX_MILESTONE_KEYS, ED25519_SIGNATURE_LENGTH),
    receipt: undefined,
  };
  const r = o["receipt"];
  if (r !== undefined && r !== null) {
    trail.push("receipt");
    result.receipt = receipt(object(r));
    trail.pop();
  }
  return result;
}

/** The payload at the current position (undefined for null or a missing key). */
function payload(value: unknown): Payload | undefined {
  if (value === undefined || value === null) return undefined;
  const o = object(value);
  const type = typeTag(o["type"], TRANSACTION_PAYLOAD_TYPE, MILESTONE_PAYLOAD_TYPE, INDEXATION_PAYLOAD_TYPE);
  if (type === TRANSACTION_PAYLOAD_TYPE) return transaction(o);
  if (type === MILESTONE_PAYLOAD_TYPE) return milestone(o);
  return indexation(o);
}

/** Model paths use the model's names; JSON callers want the JSON names. */
export function jsonPath(modelPath: string | undefined): string | undefined {
  return modelPath?.replace(/(^|\.)parents(?=\[|$|\.)/g, "$1parentMessageIds");
}

/** Runs `fn` from the JSON root; anything but a ProtocolError (a throwing getter, a Proxy trap) becomes INVALID_JSON. */
function guarded<T>(fn: () => T, root?: string): T {
  // Each step pops what it pushes, so the trail is empty here unless an error cut a parse short.
  if (trail.length !== 0) trail.length = 0;
  pristine = prototypeIsPristine();
  if (root !== undefined) trail.push(root);
  try {
    const result = fn();
    if (root !== undefined) trail.pop();
    return result;
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("INVALID_JSON", "the JSON value could not be read", { path: here(), cause: error });
  }
}

function withJsonPaths(run: () => void): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const path = jsonPath(error.path);
    if (path === error.path) throw error;
    // Keep the code and offset; the message text already names the model path, so say the JSON one instead.
    const bare = error.message.replace(/ \(at [^)]*\)$/, "");
    throw new ProtocolError(error.code, bare, { path, offset: error.offset, cause: error });
  }
}

/** Parses the node REST JSON of a complete message and applies every syntactic rule. */
export function messageFromJson(json: unknown): Message {
  const message = guarded(() => {
    const o = object(json);
    const m: Message = {
      networkId: u64(o["networkId"], "networkId"),
      parents: hexList(o["parentMessageIds"], "parentMessageIds", MAX_U8, MESSAGE_ID_LENGTH),
      nonce: u64(o["nonce"], "nonce"),
      payload: undefined,
    };
    trail.push("payload");
    m.payload = payload(o["payload"]);
    trail.pop();
    return m;
  });
  withJsonPaths(() => validateMessage(message));
  return message;
}

/**
 * Parses a message as submitted for the node to complete: `networkId`, `parentMessageIds` and `nonce` may be
 * missing or null; "0" for networkId or nonce and an empty parent list count as missing (the node fills them).
 * What is present is checked: parents as for a message, the payload by every syntactic rule.
 */
export function partialMessageFromJson(json: unknown): PartialMessage {
  const message = guarded(() => {
    const o = object(json);
    const m: PartialMessage = {};
    const networkId = o["networkId"];
    if (networkId !== undefined && networkId !== null) {
      const n = u64(networkId, "networkId");
      if (n !== 0n) m.networkId = n;
    }
    const parents = o["parentMessageIds"];
    if (parents !== undefined && parents !== null) {
      const list = hexList(parents, "parentMessageIds", MAX_U8, MESSAGE_ID_LENGTH);
      if (list.length > 0) m.parents = list;
    }
    const nonce = o["nonce"];
    if (nonce !== undefined && nonce !== null) {
      const n = u64(nonce, "nonce");
      if (n !== 0n) m.nonce = n;
    }
    trail.push("payload");
    const p = payload(o["payload"]);
    trail.pop();
    if (p !== undefined) m.payload = p;
    return m;
  });
  withJsonPaths(() => {
    if (message.parents !== undefined) {
      // The parent rules alone: a stand-in message without payload carries them through the codec's checks.
      validateMessage({ networkId: 0n, parents: message.parents, nonce: 0n });
    }
    if (message.payload !== undefined) validatePayload(message.payload, "payload");
  });
  return message;
}

// ---------------------------------------------------------------------------------------------------------------
// Model → JSON. The model is trusted here (it came from a decoder or was built by the caller): no validation.

function addressToJson(a: Ed25519Address): Ed25519AddressJson {
  return { type: 0, address: toHex(a.address) };
}

function indexationToJson(p: IndexationPayload): IndexationPayloadJson {
  return { type: 2, index: toHex(p.index), data: toHex(p.data) };
}

function essenceToJson(e: TransactionEssence): TransactionEssenceJson {
  const inputs = new Array<UtxoInputJson>(e.inputs.length);
  for (let i = 0; i < e.inputs.length; i++) {
    const input = e.inputs[i]!;
    inputs[i] = { type: 0, transactionId: toHex(input.transactionId), transactionOutputIndex: input.transactionOutputIndex };
  }
  const outputs = new Array<OutputJson>(e.outputs.length);
  for (let i = 0; i < e.outputs.length; i++) {
    const o = e.outputs[i]!;
    outputs[i] = { type: o.type, address: addressToJson(o.address), amount: o.amount };
  }
  return { type: 0, inputs, outputs, payload: e.payload === undefined ? null : indexationToJson(e.payload) };
}

function unlockBlockToJson(b: UnlockBlock): UnlockBlockJson {
  if (b.type === 1) return { type: 1, reference: b.reference };
  return { type: 0, signature: { type: 0, publicKey: toHex(b.signature.publicKey), signature: toHex(b.signature.signature) } };
}

function hexListToJson(items: Uint8Array[]): string[] {
  const out = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = toHex(items[i]!);
  return out;
}

function receiptToJson(r: ReceiptPayload): ReceiptPayloadJson {
  return {
    type: 3,
    migratedAt: r.migratedAt,
    final: r.final,
    funds: r.funds.map((f) => ({ tailTransactionHash: toHex(f.tailTransactionHash), address: addressToJson(f.address), deposit: f.deposit })),
    transaction: {
      type: 4,
      input: { type: 1, milestoneId: toHex(r.transaction.input.milestoneId) },
      output: { type: 2, amount: r.transaction.output.amount },
    },
  };
}

function milestoneToJson(m: MilestonePayload): MilestonePayloadJson {
  return {
    type: 1,
    index: m.index,
    timestamp: m.timestamp <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(m.timestamp) : m.timestamp.toString(),
    parentMessageIds: hexListToJson(m.parents),
    inclusionMerkleProof: toHex(m.inclusionMerkleProof),
    nextPoWScore: m.nextPoWScore,
    nextPoWScoreMilestoneIndex: m.nextPoWScoreMilestoneIndex,
    publicKeys: hexListToJson(m.publicKeys),
    receipt: m.receipt === undefined ? null : receiptToJson(m.receipt),
    signatures: hexListToJson(m.signatures),
  };
}

/** The JSON of a payload (node API v1 shapes). */
export function payloadToJson(p: Payload): PayloadJson {
  if (p.type === 0) {
    return { type: 0, essence: essenceToJson(p.essence), unlockBlocks: p.unlockBlocks.map(unlockBlockToJson) };
  }
  if (p.type === 1) return milestoneToJson(p);
  return indexationToJson(p);
}

/** The node REST JSON of a message: lowercase hex, u64 as decimal strings, an absent payload as null. */
export function messageToJson(m: Message): MessageJson {
  return {
    networkId: m.networkId.toString(),
    parentMessageIds: hexListToJson(m.parents),
    payload: m.payload === undefined ? null : payloadToJson(m.payload),
    nonce: m.nonce.toString(),
  };
}

/** Parses the JSON of a payload alone (as found at `path`, e.g. "payload") and applies its syntactic rules. */
export function payloadFromJson(json: unknown, path = "payload"): Payload {
  const p = guarded(() => payload(json), path === "" ? undefined : path);
  if (p === undefined) throw new ProtocolError("INVALID_JSON", `expected a payload, got ${kindOf(json)}`, { path });
  withJsonPaths(() => validatePayload(p, path));
  return p;
}
