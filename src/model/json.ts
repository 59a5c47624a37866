// The node REST JSON form of a message (PROTOCOL.md §6, node API v1 / iota.js 1.8 IMessage) and the model, both ways.
// Every shape error names its JSON path; the syntactic rules then run on the model and report JSON paths too.
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import {
  ED25519_ADDRESS_LENGTH,
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

/** A message as submitted to a node: networkId, parents and nonce may be left for the node to fill. */
export interface PartialMessage {
  networkId?: bigint | undefined;
  parents?: Uint8Array[] | undefined;
  payload?: Payload | undefined;
  nonce?: bigint | undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading unknown JSON: own properties only (a polluted Object.prototype cannot inject fields), paths built as we go.

type Obj = Record<string, unknown>;
const hasOwn = Object.prototype.hasOwnProperty;

// Upper bounds checked before looping or decoding, so a hostile array or string is refused before any per-element
// work; the exact rules (minimums, order, sums) run afterwards in validateMessage.
const MAX_HEX_CHARS = 2 * MAX_MESSAGE_LENGTH;
const DECIMAL = /^[0-9]{1,20}$/;

function where(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function jsonError(path: string, message: string): ProtocolError {
  return new ProtocolError("INVALID_JSON", message, { path });
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function object(value: unknown, path: string): Obj {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw jsonError(path, `expected an object, got ${kindOf(value)}`);
  }
  return value as Obj;
}

function field(o: Obj, key: string): unknown {
  return hasOwn.call(o, key) ? o[key] : undefined;
}

function array(value: unknown, path: string, max: number): unknown[] {
  if (!Array.isArray(value)) throw jsonError(path, `expected an array, got ${kindOf(value)}`);
  if (value.length > max) {
    throw new ProtocolError("COUNT_OUT_OF_RANGE", `at most ${max} elements allowed, got ${value.length}`, { path });
  }
  return value;
}

function integer(value: unknown, path: string, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value)) throw jsonError(path, `expected an integer number, got ${kindOf(value)}`);
  if (value < 0 || value > max) throw new ProtocolError("VALUE_OUT_OF_RANGE", `expected 0 .. ${max}, got ${value}`, { path });
  return value;
}

function typeTag(o: Obj, path: string, ...allowed: number[]): number {
  const p = where(path, "type");
  const value = field(o, "type");
  if (typeof value !== "number") throw jsonError(p, `expected a numeric type tag, got ${kindOf(value)}`);
  if (!allowed.includes(value)) throw new ProtocolError("INVALID_TYPE", `type ${value} not allowed here (expected ${allowed.join(" or ")})`, { path: p });
  return value;
}

function hex(value: unknown, path: string, length?: number): Uint8Array {
  if (typeof value !== "string") throw new ProtocolError("INVALID_HEX", `expected a hex string, got ${kindOf(value)}`, { path });
  if (value.length > MAX_HEX_CHARS) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `hex string longer than a whole message`, { path });
  return fromHex(value, path, length);
}

/** A u64 in JSON: a decimal string of digits only (no sign, no spaces, no exponent), at most 2^64 − 1. */
function u64(value: unknown, path: string): bigint {
  if (typeof value !== "string") throw jsonError(path, `expected a decimal string, got ${kindOf(value)}`);
  if (!DECIMAL.test(value)) throw jsonError(path, "expected a decimal string of 1 to 20 digits");
  const n = BigInt(value);
  if (n > MAX_U64) throw new ProtocolError("VALUE_OUT_OF_RANGE", "exceeds the largest u64", { path });
  return n;
}

function hexList(value: unknown, path: string, max: number, length: number): Uint8Array[] {
  const list = array(value, path, max);
  const out = new Array<Uint8Array>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = hex(list[i], `${path}[${i}]`, length);
  return out;
}

function address(value: unknown, path: string): Ed25519Address {
  const o = object(value, path);
  typeTag(o, path, 0);
  return { type: 0, address: hex(field(o, "address"), where(path, "address"), ED25519_ADDRESS_LENGTH) };
}

function indexation(o: Obj, path: string): IndexationPayload {
  const data = field(o, "data");
  return {
    type: 2,
    index: hex(field(o, "index"), where(path, "index")),
    // iota.js leaves `data` out when empty; the node sends "".
    data: data === undefined || data === null ? new Uint8Array(0) : hex(data, where(path, "data")),
  };
}

function input(value: unknown, path: string): UtxoInput {
  const o = object(value, path);
  typeTag(o, path, 0);
  return {
    type: 0,
    transactionId: hex(field(o, "transactionId"), where(path, "transactionId"), TRANSACTION_ID_LENGTH),
    transactionOutputIndex: integer(field(o, "transactionOutputIndex"), where(path, "transactionOutputIndex"), MAX_U16),
  };
}

function output(value: unknown, path: string): Output {
  const o = object(value, path);
  const type = typeTag(o, path, 0, 1) as 0 | 1;
  return {
    type,
    address: address(field(o, "address"), where(path, "address")),
    amount: integer(field(o, "amount"), where(path, "amount"), Number.MAX_SAFE_INTEGER),
  };
}

function essence(value: unknown, path: string): TransactionEssence {
  const o = object(value, path);
  typeTag(o, path, 0);
  const inputsPath = where(path, "inputs");
  const inputsJson = array(field(o, "inputs"), inputsPath, MAX_INPUTS);
  const inputs = new Array<UtxoInput>(inputsJson.length);
  for (let i = 0; i < inputsJson.length; i++) inputs[i] = input(inputsJson[i], `${inputsPath}[${i}]`);
  const outputsPath = where(path, "outputs");
  const outputsJson = array(field(o, "outputs"), outputsPath, MAX_OUTPUTS);
  const outputs = new Array<Output>(outputsJson.length);
  for (let i = 0; i < outputsJson.length; i++) outputs[i] = output(outputsJson[i], `${outputsPath}[${i}]`);
  // Absent optional fields are own properties set to undefined, so nothing downstream can find an inherited one.
  const result: TransactionEssence = { type: 0, inputs, outputs, payload: undefined };
  const payloadJson = field(o, "payload");
  if (payloadJson !== undefined && payloadJson !== null) {
    const payloadPath = where(path, "payload");
    const p = object(payloadJson, payloadPath);
    typeTag(p, payloadPath, 2);
    result.payload = indexation(p, payloadPath);
  }
  return result;
}

function signature(value: unknown, path: string): Ed25519Signature {
  const o = object(value, path);
  typeTag(o, path, 0);
  return {
    type: 0,
    publicKey: hex(field(o, "publicKey"), where(path, "publicKey"), ED25519_PUBLIC_KEY_LENGTH),
    signature: hex(field(o, "signature"), where(path, "signature"), ED25519_SIGNATURE_LENGTH),
  };
}

function unlockBlock(value: unknown, path: string): UnlockBlock {
  const o = object(value, path);
  const type = typeTag(o, path, 0, 1);
  if (type === 0) return { type: 0, signature: signature(field(o, "signature"), where(path, "signature")) };
  return { type: 1, reference: integer(field(o, "reference"), where(path, "reference"), MAX_U16) };
}

function transaction(o: Obj, path: string): TransactionPayload {
  const e = essence(field(o, "essence"), where(path, "essence"));
  const blocksPath = where(path, "unlockBlocks");
  const blocksJson = array(field(o, "unlockBlocks"), blocksPath, MAX_INPUTS);
  const unlockBlocks = new Array<UnlockBlock>(blocksJson.length);
  for (let i = 0; i < blocksJson.length; i++) unlockBlocks[i] = unlockBlock(blocksJson[i], `${blocksPath}[${i}]`);
  return { type: 0, essence: e, unlockBlocks };
}

function timestamp(value: unknown, path: string): bigint {
  if (typeof value === "string") return u64(value, path);
  return BigInt(integer(value, path, Number.MAX_SAFE_INTEGER));
}

function treasuryTransaction(value: unknown, path: string): TreasuryTransactionPayload {
  const o = object(value, path);
  typeTag(o, path, 4);
  const inputPath = where(path, "input");
  const i = object(field(o, "input"), inputPath);
  typeTag(i, inputPath, 1);
  const outputPath = where(path, "output");
  const out = object(field(o, "output"), outputPath);
  typeTag(out, outputPath, 2);
  return {
    type: 4,
    input: { type: 1, milestoneId: hex(field(i, "milestoneId"), where(inputPath, "milestoneId"), MILESTONE_ID_LENGTH) },
    output: { type: 2, amount: integer(field(out, "amount"), where(outputPath, "amount"), Number.MAX_SAFE_INTEGER) },
  };
}

function receipt(value: unknown, path: string): ReceiptPayload {
  const o = object(value, path);
  typeTag(o, path, 3);
  const finalPath = where(path, "final");
  const final = field(o, "final");
  if (typeof final !== "boolean") throw jsonError(finalPath, `expected a boolean, got ${kindOf(final)}`);
  const fundsPath = where(path, "funds");
  const fundsJson = array(field(o, "funds"), fundsPath, MAX_MIGRATED_FUNDS);
  const funds = new Array<MigratedFundsEntry>(fundsJson.length);
  for (let i = 0; i < fundsJson.length; i++) {
    const p = `${fundsPath}[${i}]`;
    const f = object(fundsJson[i], p);
    funds[i] = {
      tailTransactionHash: hex(field(f, "tailTransactionHash"), where(p, "tailTransactionHash"), TAIL_TRANSACTION_HASH_LENGTH),
      address: address(field(f, "address"), where(p, "address")),
      deposit: integer(field(f, "deposit"), where(p, "deposit"), Number.MAX_SAFE_INTEGER),
    };
  }
  return {
    type: 3,
    migratedAt: integer(field(o, "migratedAt"), where(path, "migratedAt"), MAX_U32),
    final,
    funds,
    transaction: treasuryTransaction(field(o, "transaction"), where(path, "transaction")),
  };
}

function milestone(o: Obj, path: string): MilestonePayload {
  const result: MilestonePayload = {
    type: 1,
    index: integer(field(o, "index"), where(path, "index"), MAX_U32),
    timestamp: timestamp(field(o, "timestamp"), where(path, "timestamp")),
    parents: hexList(field(o, "parentMessageIds"), where(path, "parentMessageIds"), MAX_U8, MESSAGE_ID_LENGTH),
    inclusionMerkleProof: hex(field(o, "inclusionMerkleProof"), where(path, "inclusionMerkleProof"), MERKLE_PROOF_LENGTH),
    nextPoWScore: integer(field(o, "nextPoWScore"), where(path, "nextPoWScore"), MAX_U32),
    nextPoWScoreMilestoneIndex: integer(field(o, "nextPoWScoreMilestoneIndex"), where(path, "nextPoWScoreMilestoneIndex"), MAX_U32),
    publicKeys: hexList(field(o, "publicKeys"), where(path, "publicKeys"), MAX_MILESTONE_KEYS, ED25519_PUBLIC_KEY_LENGTH),
    signatures: hexList(field(o, "signatures"), where(path, "signatures"), MAX_MILESTONE_KEYS, ED25519_SIGNATURE_LENGTH),
    receipt: undefined,
  };
  const r = field(o, "receipt");
  if (r !== undefined && r !== null) result.receipt = receipt(r, where(path, "receipt"));
  return result;
}

function payload(value: unknown, path: string): Payload | undefined {
  if (value === undefined || value === null) return undefined;
  const o = object(value, path);
  const type = typeTag(o, path, 0, 1, 2);
  if (type === 0) return transaction(o, path);
  if (type === 1) return milestone(o, path);
  return indexation(o, path);
}

/** Model paths use the model's names; JSON callers want the JSON names. */
export function jsonPath(modelPath: string | undefined): string | undefined {
  return modelPath?.replace(/(^|\.)parents(?=\[|$|\.)/g, "$1parentMessageIds");
}

/** Runs `fn`; anything but a ProtocolError (a throwing getter, a Proxy trap) becomes INVALID_JSON. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("INVALID_JSON", "the JSON value could not be read", { path: "", cause: error });
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

function parentIds(value: unknown): Uint8Array[] {
  return hexList(value, "parentMessageIds", MAX_U8, MESSAGE_ID_LENGTH);
}

/** Parses the node REST JSON of a complete message and applies every syntactic rule. */
export function messageFromJson(json: unknown): Message {
  const message = guarded(() => {
    const o = object(json, "");
    const m: Message = {
      networkId: u64(field(o, "networkId"), "networkId"),
      parents: parentIds(field(o, "parentMessageIds")),
      nonce: u64(field(o, "nonce"), "nonce"),
      payload: payload(field(o, "payload"), "payload"),
    };
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
    const o = object(json, "");
    const m: PartialMessage = {};
    const networkId = field(o, "networkId");
    if (networkId !== undefined && networkId !== null) {
      const n = u64(networkId, "networkId");
      if (n !== 0n) m.networkId = n;
    }
    const parents = field(o, "parentMessageIds");
    if (parents !== undefined && parents !== null) {
      const list = parentIds(parents);
      if (list.length > 0) m.parents = list;
    }
    const nonce = field(o, "nonce");
    if (nonce !== undefined && nonce !== null) {
      const n = u64(nonce, "nonce");
      if (n !== 0n) m.nonce = n;
    }
    const p = payload(field(o, "payload"), "payload");
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

function hexListToJson(list: Uint8Array[]): string[] {
  const out = new Array<string>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = toHex(list[i]!);
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

/** Parses the JSON of a payload alone (as found at `path`) and applies its syntactic rules. */
export function payloadFromJson(json: unknown, path = "payload"): Payload {
  const p = guarded(() => payload(json, path));
  if (p === undefined) throw jsonError(path, "expected a payload, got " + kindOf(json));
  withJsonPaths(() => validatePayload(p, path));
  return p;
}
