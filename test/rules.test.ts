// One named bad case per syntactic rule of PROTOCOL.md §3, for decode (code, path, byte offset) and encode (code, path).
// Valid messages are assembled here from named segments, independently of the codec, so each case edits one segment.
import { beforeAll, describe, expect, it } from "vitest";
import { DUST_ALLOWANCE_MINIMUM, MAX_MESSAGE_LENGTH, TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { decodeMessage, encodeMessage, validateMessage } from "../src/model/codec.js";
import { type CodecEngine, selectCodecEngine } from "../src/model/interpreter.js";
import type { Message, MilestonePayload, Output, TransactionPayload } from "../src/model/types.js";
import { expectProtocolError, toHexString } from "./helpers.js";

// ---------------------------------------------------------------------------------------------------------------
// Little-endian field writers and the segment assembler.

const u8 = (v: number): Uint8Array => Uint8Array.of(v);
const u16 = (v: number): Uint8Array => Uint8Array.of(v & 0xff, v >>> 8);
const u32 = (v: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
};
const u64 = (v: bigint | number): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
};
const fill = (length: number, byte: number): Uint8Array => new Uint8Array(length).fill(byte);
const ascii = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, "ascii"));
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

/** A message as an ordered list of named segments; length prefixes are recomputed from the segments they cover. */
class Segments {
  readonly names: string[] = [];
  readonly parts = new Map<string, Uint8Array>();
  /** length segment → [first, last] segment it measures. */
  readonly lengths = new Map<string, [string, string]>();
  /** Length prefixes a case overrides on purpose. */
  readonly fixed = new Set<string>();

  add(name: string, bytes: Uint8Array): this {
    this.names.push(name);
    this.parts.set(name, bytes);
    return this;
  }

  length(name: string, first: string, last: string): this {
    this.lengths.set(name, [first, last]);
    return this.add(name, u32(0));
  }

  set(name: string, bytes: Uint8Array): void {
    if (!this.parts.has(name)) throw new Error(`no segment ${name}`);
    this.parts.set(name, bytes);
    if (this.lengths.has(name)) this.fixed.add(name);
  }

  get(name: string): Uint8Array {
    return this.parts.get(name)!;
  }

  /** Removes a segment; a length prefix that ended (or started) with it now ends (or starts) at its neighbour. */
  remove(name: string): void {
    const at = this.names.indexOf(name);
    for (const [length, [first, last]] of this.lengths) {
      if (last === name) this.lengths.set(length, [first, this.names[at - 1]!]);
      if (first === name) this.lengths.set(length, [this.names[at + 1]!, last]);
    }
    this.names.splice(at, 1);
  }

  /** Inserts a segment after another one. */
  insertAfter(after: string, name: string, bytes: Uint8Array): void {
    this.names.splice(this.names.indexOf(after) + 1, 0, name);
    this.parts.set(name, bytes);
  }

  swap(a: string, b: string): void {
    const x = this.get(a);
    this.parts.set(a, this.get(b));
    this.parts.set(b, x);
  }

  offset(name: string): number {
    let at = 0;
    for (const n of this.names) {
      if (n === name) return at;
      at += this.parts.get(n)!.length;
    }
    throw new Error(`no segment ${name}`);
  }

  bytes(): Uint8Array {
    for (const [name, [first, last]] of this.lengths) {
      if (this.fixed.has(name)) continue;
      let size = 0;
      for (let i = this.names.indexOf(first); i <= this.names.indexOf(last); i++) size += this.parts.get(this.names[i]!)!.length;
      this.parts.set(name, u32(size));
    }
    return cat(...this.names.map((n) => this.parts.get(n)!));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The valid base messages, once as models and once as segments.

const PARENT_A = fill(32, 0x11);
const PARENT_B = fill(32, 0x22);
const TX_ID = fill(32, 0xaa);
const ADDRESS_A = fill(32, 0x0a);
const ADDRESS_B = fill(32, 0x0b);
const PUBLIC_KEY = fill(32, 0x50);
const SIGNATURE = fill(64, 0x5e);
const MILLION = DUST_ALLOWANCE_MINIMUM;

function transactionModel(): Message {
  const payload: TransactionPayload = {
    type: 0,
    essence: {
      type: 0,
      inputs: [
        { type: 0, transactionId: TX_ID, transactionOutputIndex: 0 },
        { type: 0, transactionId: TX_ID, transactionOutputIndex: 1 },
      ],
      outputs: [
        { type: 0, address: { type: 0, address: ADDRESS_A }, amount: MILLION },
        { type: 1, address: { type: 0, address: ADDRESS_B }, amount: MILLION },
      ],
      payload: { type: 2, index: ascii("IOTA"), data: ascii("hi") },
    },
    unlockBlocks: [
      { type: 0, signature: { type: 0, publicKey: PUBLIC_KEY, signature: SIGNATURE } },
      { type: 1, reference: 0 },
    ],
  };
  return { networkId: 1n, parents: [PARENT_A, PARENT_B], payload, nonce: 0n };
}

const input = (index: number): Uint8Array => cat(u8(0), TX_ID, u16(index));
const output = (type: number, address: Uint8Array, amount: number | bigint): Uint8Array => cat(u8(type), u8(0), address, u64(amount));
const signatureBlock = (publicKey = PUBLIC_KEY, signature = SIGNATURE): Uint8Array => cat(u8(0), u8(0), publicKey, signature);

function transactionSegments(): Segments {
  return new Segments()
    .add("networkId", u64(1))
    .add("parentsCount", u8(2))
    .add("parent0", PARENT_A)
    .add("parent1", PARENT_B)
    .length("payloadLength", "payloadType", "unlock1")
    .add("payloadType", u32(0))
    .add("essenceType", u8(0))
    .add("inputsCount", u16(2))
    .add("input0", input(0))
    .add("input1", input(1))
    .add("outputsCount", u16(2))
    .add("output0", output(0, ADDRESS_A, MILLION))
    .add("output1", output(1, ADDRESS_B, MILLION))
    .length("essencePayloadLength", "indexationType", "data")
    .add("indexationType", u32(2))
    .add("indexLength", u16(4))
    .add("index", ascii("IOTA"))
    .add("dataLength", u32(2))
    .add("data", ascii("hi"))
    .add("unlockCount", u16(2))
    .add("unlock0", signatureBlock())
    .add("unlock1", cat(u8(1), u16(0)))
    .add("nonce", u64(0));
}

const KEY_A = fill(32, 0x31);
const KEY_B = fill(32, 0x32);
const TAIL_A = fill(49, 0x41);
const TAIL_B = fill(49, 0x42);

function milestoneModel(): Message {
  const payload: MilestonePayload = {
    type: 1,
    index: 7,
    timestamp: 1_620_000_000n,
    parents: [PARENT_A, PARENT_B],
    inclusionMerkleProof: fill(32, 0x99),
    nextPoWScore: 4000,
    nextPoWScoreMilestoneIndex: 8,
    publicKeys: [KEY_A, KEY_B],
    receipt: {
      type: 3,
      migratedAt: 5,
      final: true,
      funds: [
        { tailTransactionHash: TAIL_A, address: { type: 0, address: ADDRESS_A }, deposit: MILLION },
        { tailTransactionHash: TAIL_B, address: { type: 0, address: ADDRESS_B }, deposit: MILLION },
      ],
      transaction: { type: 4, input: { type: 1, milestoneId: fill(32, 0x77) }, output: { type: 2, amount: 1000 } },
    },
    signatures: [fill(64, 0x61), fill(64, 0x62)],
  };
  return { networkId: 1n, parents: [PARENT_A], payload, nonce: 0n };
}

const fund = (tail: Uint8Array, address: Uint8Array, deposit: number): Uint8Array => cat(tail, u8(0), address, u64(deposit));

function milestoneSegments(): Segments {
  return new Segments()
    .add("networkId", u64(1))
    .add("parentsCount", u8(1))
    .add("parent0", PARENT_A)
    .length("payloadLength", "payloadType", "signature1")
    .add("payloadType", u32(1))
    .add("index", u32(7))
    .add("timestamp", u64(1_620_000_000))
    .add("msParentsCount", u8(2))
    .add("msParent0", PARENT_A)
    .add("msParent1", PARENT_B)
    .add("merkleProof", fill(32, 0x99))
    .add("nextPoWScore", u32(4000))
    .add("nextPoWScoreMilestoneIndex", u32(8))
    .add("keysCount", u8(2))
    .add("key0", KEY_A)
    .add("key1", KEY_B)
    .length("receiptLength", "receiptType", "treasuryAmount")
    .add("receiptType", u32(3))
    .add("migratedAt", u32(5))
    .add("final", u8(1))
    .add("fundsCount", u16(2))
    .add("fund0", fund(TAIL_A, ADDRESS_A, MILLION))
    .add("fund1", fund(TAIL_B, ADDRESS_B, MILLION))
    .length("treasuryLength", "treasuryType", "treasuryAmount")
    .add("treasuryType", u32(4))
    .add("treasuryInputType", u8(1))
    .add("milestoneId", fill(32, 0x77))
    .add("treasuryOutputType", u8(2))
    .add("treasuryAmount", u64(1000))
    .add("signaturesCount", u8(2))
    .add("signature0", fill(64, 0x61))
    .add("signature1", fill(64, 0x62))
    .add("nonce", u64(0));
}

function indexationSegments(): Segments {
  return new Segments()
    .add("networkId", u64(1))
    .add("parentsCount", u8(1))
    .add("parent0", PARENT_A)
    .length("payloadLength", "payloadType", "data")
    .add("payloadType", u32(2))
    .add("indexLength", u16(4))
    .add("index", ascii("IOTA"))
    .add("dataLength", u32(2))
    .add("data", ascii("hi"))
    .add("nonce", u64(0));
}

const BASES = { transaction: transactionSegments, milestone: milestoneSegments, indexation: indexationSegments };

// ---------------------------------------------------------------------------------------------------------------
// The table: each rule of §3, the bad bytes that break it, and what decode must say.

interface DecodeCase {
  rule: string;
  name: string;
  base: keyof typeof BASES;
  edit: (s: Segments) => void;
  code: string;
  path: string;
  /** The segment the offset points into, and how far into it (default 0). */
  at: string | ((s: Segments) => number);
  plus?: number;
}

const OUTPUT_AMOUNT = 34;

const DECODE_CASES: DecodeCase[] = [
  // Message
  { rule: "message total size is 53 .. 32768 bytes", name: "52 bytes", base: "indexation", edit: (s) => { s.remove("data"); s.remove("dataLength"); s.remove("index"); s.remove("indexLength"); s.remove("payloadType"); s.set("payloadLength", u32(0)); s.set("parent0", fill(31, 0x11)); }, code: "LENGTH_OUT_OF_RANGE", path: "", at: () => 0 },
  { rule: "message total size is 53 .. 32768 bytes", name: "32769 bytes", base: "indexation", edit: (s) => { const n = MAX_MESSAGE_LENGTH + 1 - 53 - 10 - 4; s.set("data", fill(n, 1)); s.set("dataLength", u32(n)); }, code: "LENGTH_OUT_OF_RANGE", path: "", at: () => 0 },
  { rule: "no trailing bytes after the nonce", name: "one byte after the nonce", base: "indexation", edit: (s) => s.insertAfter("nonce", "extra", u8(0)), code: "TRAILING_BYTES", path: "", at: "extra" },
  { rule: "message input ends before a field does", name: "nonce cut short", base: "indexation", edit: (s) => s.set("nonce", u32(0)), code: "TRUNCATED", path: "nonce", at: "nonce" },
  { rule: "1 .. 8 parents", name: "no parents", base: "indexation", edit: (s) => { s.set("parentsCount", u8(0)); s.remove("parent0"); s.insertAfter("parentsCount", "pad", fill(32, 0)); }, code: "COUNT_OUT_OF_RANGE", path: "parentMessageIds", at: "parentsCount" },
  { rule: "1 .. 8 parents", name: "nine parents", base: "indexation", edit: (s) => { s.set("parentsCount", u8(9)); s.set("parent0", fill(32 * 9, 0x11)); }, code: "COUNT_OUT_OF_RANGE", path: "parentMessageIds", at: "parentsCount" },
  { rule: "parents strictly ascending (sorted and unique)", name: "parents out of order", base: "transaction", edit: (s) => s.swap("parent0", "parent1"), code: "NOT_SORTED", path: "parentMessageIds[1]", at: "parent1" },
  { rule: "parents strictly ascending (sorted and unique)", name: "a parent twice", base: "transaction", edit: (s) => s.set("parent1", PARENT_A), code: "DUPLICATE", path: "parentMessageIds[1]", at: "parent1" },
  { rule: "a payload is of type 0, 1 or 2", name: "receipt (3) as a message payload", base: "indexation", edit: (s) => s.set("payloadType", u32(3)), code: "INVALID_TYPE", path: "payload.type", at: "payloadType" },
  { rule: "a payload is of type 0, 1 or 2", name: "unknown payload type 9", base: "indexation", edit: (s) => s.set("payloadType", u32(9)), code: "INVALID_TYPE", path: "payload.type", at: "payloadType" },
  { rule: "declared payload length equals the bytes it consumes", name: "declared one byte longer", base: "indexation", edit: (s) => s.set("payloadLength", u32(4 + 2 + 4 + 4 + 2 + 1)), code: "LENGTH_MISMATCH", path: "payload", at: "payloadLength" },
  { rule: "declared payload length equals the bytes it consumes", name: "declared one byte shorter", base: "indexation", edit: (s) => s.set("payloadLength", u32(4 + 2 + 4 + 4 + 2 - 1)), code: "LENGTH_MISMATCH", path: "payload", at: "payloadLength" },
  { rule: "declared payload length equals the bytes it consumes", name: "huge length prefix, rejected before allocating", base: "indexation", edit: (s) => s.set("payloadLength", u32(0xffff_ffff)), code: "TRUNCATED", path: "payload", at: "payloadLength" },
  { rule: "declared payload length equals the bytes it consumes", name: "essence payload declared one byte longer", base: "transaction", edit: (s) => s.set("essencePayloadLength", u32(17)), code: "LENGTH_MISMATCH", path: "payload.essence.payload", at: "essencePayloadLength" },
  // Transaction
  { rule: "essence type 0", name: "essence type 1", base: "transaction", edit: (s) => s.set("essenceType", u8(1)), code: "INVALID_TYPE", path: "payload.essence.type", at: "essenceType" },
  { rule: "1 .. 127 inputs", name: "no inputs", base: "transaction", edit: (s) => s.set("inputsCount", u16(0)), code: "COUNT_OUT_OF_RANGE", path: "payload.essence.inputs", at: "inputsCount" },
  { rule: "1 .. 127 inputs", name: "128 inputs", base: "transaction", edit: (s) => s.set("inputsCount", u16(128)), code: "COUNT_OUT_OF_RANGE", path: "payload.essence.inputs", at: "inputsCount" },
  { rule: "inputs are all UTXO (type 0)", name: "input of type 1", base: "transaction", edit: (s) => s.set("input1", cat(u8(1), TX_ID, u16(1))), code: "INVALID_TYPE", path: "payload.essence.inputs[1].type", at: "input1" },
  { rule: "output index 0 .. 126", name: "output index 127", base: "transaction", edit: (s) => s.set("input1", input(127)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.inputs[1].transactionOutputIndex", at: "input1", plus: 33 },
  { rule: "inputs sorted", name: "inputs out of order", base: "transaction", edit: (s) => s.swap("input0", "input1"), code: "NOT_SORTED", path: "payload.essence.inputs[1]", at: "input1" },
  { rule: "no (transactionId, index) pair twice", name: "an input twice", base: "transaction", edit: (s) => s.set("input1", input(0)), code: "DUPLICATE", path: "payload.essence.inputs[1]", at: "input1" },
  { rule: "1 .. 127 outputs", name: "no outputs", base: "transaction", edit: (s) => s.set("outputsCount", u16(0)), code: "COUNT_OUT_OF_RANGE", path: "payload.essence.outputs", at: "outputsCount" },
  { rule: "1 .. 127 outputs", name: "128 outputs", base: "transaction", edit: (s) => s.set("outputsCount", u16(128)), code: "COUNT_OUT_OF_RANGE", path: "payload.essence.outputs", at: "outputsCount" },
  { rule: "outputs of type 0 or 1", name: "output of type 2", base: "transaction", edit: (s) => s.set("output1", output(2, ADDRESS_B, MILLION)), code: "INVALID_TYPE", path: "payload.essence.outputs[1].type", at: "output1" },
  { rule: "address type 0", name: "address of type 1", base: "transaction", edit: (s) => s.set("output0", cat(u8(0), u8(1), ADDRESS_A, u64(MILLION))), code: "INVALID_TYPE", path: "payload.essence.outputs[0].address.type", at: "output0", plus: 1 },
  { rule: "outputs sorted", name: "outputs out of order", base: "transaction", edit: (s) => s.swap("output0", "output1"), code: "NOT_SORTED", path: "payload.essence.outputs[1]", at: "output1" },
  { rule: "amount > 0", name: "amount 0", base: "transaction", edit: (s) => s.set("output0", output(0, ADDRESS_A, 0)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[0].amount", at: "output0", plus: OUTPUT_AMOUNT },
  { rule: "amount ≤ the total supply", name: "amount one above the supply", base: "transaction", edit: (s) => s.set("output0", output(0, ADDRESS_A, TOTAL_SUPPLY + 1)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[0].amount", at: "output0", plus: OUTPUT_AMOUNT },
  { rule: "amount ≤ the total supply", name: "amount 2^64 − 1", base: "transaction", edit: (s) => s.set("output0", output(0, ADDRESS_A, 0xffff_ffff_ffff_ffffn)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[0].amount", at: "output0", plus: OUTPUT_AMOUNT },
  { rule: "the sum of all outputs ≤ the total supply", name: "supply plus a million", base: "transaction", edit: (s) => s.set("output0", output(0, ADDRESS_A, TOTAL_SUPPLY)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[1].amount", at: "output1", plus: OUTPUT_AMOUNT },
  { rule: "a dust-allowance output carries at least 1,000,000", name: "dust allowance of 999,999", base: "transaction", edit: (s) => s.set("output1", output(1, ADDRESS_B, MILLION - 1)), code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[1].amount", at: "output1", plus: OUTPUT_AMOUNT },
  { rule: "an address appears at most once per output type", name: "two single outputs to one address", base: "transaction", edit: (s) => s.set("output1", output(0, ADDRESS_A, 2 * MILLION)), code: "DUPLICATE", path: "payload.essence.outputs[1].address", at: "output1", plus: 1 },
  { rule: "the essence payload is absent or an indexation payload", name: "transaction inside an essence", base: "transaction", edit: (s) => s.set("indexationType", u32(0)), code: "INVALID_TYPE", path: "payload.essence.payload.type", at: "indexationType" },
  { rule: "exactly one unlock block per input", name: "one unlock block for two inputs", base: "transaction", edit: (s) => { s.set("unlockCount", u16(1)); s.remove("unlock1"); }, code: "COUNT_OUT_OF_RANGE", path: "payload.unlockBlocks", at: "unlockCount" },
  { rule: "unlock blocks of type 0 or 1", name: "unlock block of type 2", base: "transaction", edit: (s) => s.set("unlock1", cat(u8(2), u16(0))), code: "INVALID_TYPE", path: "payload.unlockBlocks[1].type", at: "unlock1" },
  { rule: "every signature unlock block is unique", name: "the same signature block twice", base: "transaction", edit: (s) => s.set("unlock1", signatureBlock()), code: "DUPLICATE", path: "payload.unlockBlocks[1]", at: "unlock1" },
  { rule: "a reference unlock block at position i references a position < i", name: "reference to itself", base: "transaction", edit: (s) => s.set("unlock1", cat(u8(1), u16(1))), code: "INVALID_REFERENCE", path: "payload.unlockBlocks[1].reference", at: "unlock1", plus: 1 },
  { rule: "a reference unlock block at position i references a position < i", name: "first block a reference", base: "transaction", edit: (s) => { s.set("unlock0", cat(u8(1), u16(0))); s.set("unlock1", signatureBlock()); }, code: "INVALID_REFERENCE", path: "payload.unlockBlocks[0].reference", at: "unlock0", plus: 1 },
  { rule: "a reference unlock block points at a signature unlock block", name: "reference to a reference", base: "transaction", edit: (s) => {
      s.set("inputsCount", u16(3)); s.insertAfter("input1", "input2", input(2));
      s.set("unlockCount", u16(3)); s.insertAfter("unlock1", "unlock2", cat(u8(1), u16(1)));
      s.lengths.set("payloadLength", ["payloadType", "unlock2"]);
    }, code: "INVALID_REFERENCE", path: "payload.unlockBlocks[2].reference", at: "unlock2", plus: 1 },
  { rule: "Ed25519 signature type 0", name: "signature of type 1", base: "transaction", edit: (s) => s.set("unlock0", cat(u8(0), u8(1), PUBLIC_KEY, SIGNATURE)), code: "INVALID_TYPE", path: "payload.unlockBlocks[0].signature.type", at: "unlock0", plus: 1 },
  // Indexation
  { rule: "index 1 .. 64 bytes", name: "empty index", base: "indexation", edit: (s) => { s.set("indexLength", u16(0)); s.set("index", new Uint8Array(0)); }, code: "LENGTH_OUT_OF_RANGE", path: "payload.index", at: "indexLength" },
  { rule: "index 1 .. 64 bytes", name: "65-byte index", base: "indexation", edit: (s) => { s.set("indexLength", u16(65)); s.set("index", fill(65, 0x49)); }, code: "LENGTH_OUT_OF_RANGE", path: "payload.index", at: "indexLength" },
  { rule: "index 1 .. 64 bytes", name: "index length beyond its payload", base: "indexation", edit: (s) => s.set("indexLength", u16(60)), code: "LENGTH_MISMATCH", path: "payload", at: "payloadLength" },
  { rule: "data length within the payload", name: "data length 2^32 − 1", base: "indexation", edit: (s) => s.set("dataLength", u32(0xffff_ffff)), code: "LENGTH_MISMATCH", path: "payload", at: "payloadLength" },
  // Milestone
  { rule: "milestone parents as for a message", name: "milestone without parents", base: "milestone", edit: (s) => s.set("msParentsCount", u8(0)), code: "COUNT_OUT_OF_RANGE", path: "payload.parentMessageIds", at: "msParentsCount" },
  { rule: "milestone parents as for a message", name: "milestone parents out of order", base: "milestone", edit: (s) => s.swap("msParent0", "msParent1"), code: "NOT_SORTED", path: "payload.parentMessageIds[1]", at: "msParent1" },
  { rule: "keys sorted and unique", name: "keys out of order", base: "milestone", edit: (s) => s.swap("key0", "key1"), code: "NOT_SORTED", path: "payload.publicKeys[1]", at: "key1" },
  { rule: "keys sorted and unique", name: "a key twice", base: "milestone", edit: (s) => s.set("key1", KEY_A), code: "DUPLICATE", path: "payload.publicKeys[1]", at: "key1" },
  { rule: "as many signatures as keys", name: "one signature for two keys", base: "milestone", edit: (s) => { s.set("signaturesCount", u8(1)); s.remove("signature1"); }, code: "COUNT_OUT_OF_RANGE", path: "payload.signatures", at: "signaturesCount" },
  { rule: "a milestone's receipt is of type 3", name: "indexation as a receipt", base: "milestone", edit: (s) => s.set("receiptType", u32(2)), code: "INVALID_TYPE", path: "payload.receipt.type", at: "receiptType" },
  { rule: "a receipt's final flag is a boolean", name: "final = 2", base: "milestone", edit: (s) => s.set("final", u8(2)), code: "VALUE_OUT_OF_RANGE", path: "payload.receipt.final", at: "final" },
  { rule: "receipt funds sorted and unique", name: "funds out of order", base: "milestone", edit: (s) => s.swap("fund0", "fund1"), code: "NOT_SORTED", path: "payload.receipt.funds[1]", at: "fund1" },
  { rule: "receipt funds: each tail transaction hash once", name: "one tail hash twice", base: "milestone", edit: (s) => s.set("fund1", fund(TAIL_A, ADDRESS_B, MILLION)), code: "DUPLICATE", path: "payload.receipt.funds[1].tailTransactionHash", at: "fund1" },
  { rule: "receipt funds: a deposit carries at least 1,000,000", name: "deposit 999,999", base: "milestone", edit: (s) => s.set("fund0", fund(TAIL_A, ADDRESS_A, MILLION - 1)), code: "VALUE_OUT_OF_RANGE", path: "payload.receipt.funds[0].deposit", at: "fund0", plus: 49 + 33 },
  { rule: "a receipt's transaction is a treasury transaction (type 4)", name: "transaction payload type 0 in a receipt", base: "milestone", edit: (s) => s.set("treasuryType", u32(0)), code: "INVALID_TYPE", path: "payload.receipt.transaction.type", at: "treasuryType" },
  { rule: "a treasury input is of type 1", name: "treasury input of type 0", base: "milestone", edit: (s) => s.set("treasuryInputType", u8(0)), code: "INVALID_TYPE", path: "payload.receipt.transaction.input.type", at: "treasuryInputType" },
  { rule: "a treasury output is of type 2 and carries at most the supply", name: "treasury amount above the supply", base: "milestone", edit: (s) => s.set("treasuryAmount", u64(TOTAL_SUPPLY + 1)), code: "VALUE_OUT_OF_RANGE", path: "payload.receipt.transaction.output.amount", at: "treasuryAmount" },
];

describe("the assembled base messages are valid and match the codec byte for byte", () => {
  it("transaction message", () => {
    const bytes = transactionSegments().bytes();
    expect(toHexString(encodeMessage(transactionModel()))).toBe(toHexString(bytes));
    expect(decodeMessage(bytes)).toEqual(transactionModel());
  });
  it("milestone message with a receipt", () => {
    const bytes = milestoneSegments().bytes();
    expect(toHexString(encodeMessage(milestoneModel()))).toBe(toHexString(bytes));
    expect(decodeMessage(bytes)).toEqual(milestoneModel());
  });
  it("indexation message", () => {
    expect(decodeMessage(indexationSegments().bytes()).payload?.type).toBe(2);
  });
});

// Both back-ends derive from the same layouts; each must give the same answer to every case.
const ENGINES: CodecEngine[] = ["generated", "interpreted"];

const rules = [...new Set(DECODE_CASES.map((c) => c.rule))];
for (const engine of ENGINES) for (const rule of rules) {
  describe(`decode rejects: ${rule} (${engine})`, () => {
    beforeAll(() => {
      selectCodecEngine(engine);
    });
    for (const c of DECODE_CASES.filter((x) => x.rule === rule)) {
      it(`${c.name} → ${c.code} at ${c.path === "" ? "(message)" : c.path}`, () => {
        const s = BASES[c.base]();
        c.edit(s);
        const bytes = s.bytes();
        const offset = typeof c.at === "function" ? c.at(s) : s.offset(c.at) + (c.plus ?? 0);
        expectProtocolError(() => decodeMessage(bytes), c.code, { path: c.path, offset });
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Encode refuses the same: models that break one rule each.

interface EncodeCase {
  rule: string;
  name: string;
  base: "transaction" | "milestone";
  edit: (m: Message) => void;
  code: string;
  path: string;
}

const tx = (m: Message): TransactionPayload => m.payload as TransactionPayload;
const ms = (m: Message): MilestonePayload => m.payload as MilestonePayload;
const single = (address: Uint8Array, amount: number): Output => ({ type: 0, address: { type: 0, address }, amount });

const ENCODE_CASES: EncodeCase[] = [
  { rule: "1 .. 8 parents", name: "no parents", base: "transaction", edit: (m) => { m.parents = []; }, code: "COUNT_OUT_OF_RANGE", path: "parentMessageIds" },
  { rule: "parents strictly ascending", name: "parents out of order", base: "transaction", edit: (m) => m.parents.reverse(), code: "NOT_SORTED", path: "parentMessageIds[1]" },
  { rule: "parents strictly ascending", name: "a 31-byte parent", base: "transaction", edit: (m) => { m.parents[0] = fill(31, 1); }, code: "LENGTH_OUT_OF_RANGE", path: "parentMessageIds[0]" },
  { rule: "a payload is of type 0, 1 or 2", name: "receipt as a message payload", base: "milestone", edit: (m) => { m.payload = ms(m).receipt as never; }, code: "INVALID_TYPE", path: "payload.type" },
  { rule: "message total size ≤ 32768 bytes", name: "32 KiB of indexation data", base: "transaction", edit: (m) => { m.payload = { type: 2, index: fill(1, 1), data: fill(MAX_MESSAGE_LENGTH, 0) }; }, code: "LENGTH_OUT_OF_RANGE", path: "" },
  { rule: "inputs sorted and unique", name: "an input twice", base: "transaction", edit: (m) => { tx(m).essence.inputs[1] = tx(m).essence.inputs[0]!; }, code: "DUPLICATE", path: "payload.essence.inputs[1]" },
  { rule: "output index 0 .. 126", name: "output index 127", base: "transaction", edit: (m) => { tx(m).essence.inputs[1]!.transactionOutputIndex = 127; }, code: "VALUE_OUT_OF_RANGE", path: "payload.essence.inputs[1].transactionOutputIndex" },
  { rule: "outputs sorted", name: "outputs out of order", base: "transaction", edit: (m) => tx(m).essence.outputs.reverse(), code: "NOT_SORTED", path: "payload.essence.outputs[1]" },
  { rule: "amount > 0 and ≤ the supply", name: "amount 0", base: "transaction", edit: (m) => { tx(m).essence.outputs[0]!.amount = 0; }, code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[0].amount" },
  { rule: "amount > 0 and ≤ the supply", name: "a fractional amount", base: "transaction", edit: (m) => { tx(m).essence.outputs[0]!.amount = 1.5; }, code: "INVALID_ARGUMENT", path: "payload.essence.outputs[0].amount" },
  { rule: "the sum of all outputs ≤ the total supply", name: "supply plus a million", base: "transaction", edit: (m) => { tx(m).essence.outputs[0]!.amount = TOTAL_SUPPLY; }, code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[1].amount" },
  { rule: "a dust-allowance output carries at least 1,000,000", name: "dust allowance of 999,999", base: "transaction", edit: (m) => { tx(m).essence.outputs[1]!.amount = MILLION - 1; }, code: "VALUE_OUT_OF_RANGE", path: "payload.essence.outputs[1].amount" },
  { rule: "an address appears at most once per output type", name: "two single outputs to one address", base: "transaction", edit: (m) => { tx(m).essence.outputs = [single(ADDRESS_A, MILLION), single(ADDRESS_A, 2 * MILLION)]; }, code: "DUPLICATE", path: "payload.essence.outputs[1].address" },
  { rule: "the essence payload is absent or an indexation payload", name: "a milestone inside an essence", base: "transaction", edit: (m) => { tx(m).essence.payload = milestoneModel().payload as never; }, code: "INVALID_TYPE", path: "payload.essence.payload.type" },
  { rule: "exactly one unlock block per input", name: "one unlock block for two inputs", base: "transaction", edit: (m) => { tx(m).unlockBlocks.pop(); }, code: "COUNT_OUT_OF_RANGE", path: "payload.unlockBlocks" },
  { rule: "every signature unlock block is unique", name: "the same signature block twice", base: "transaction", edit: (m) => { tx(m).unlockBlocks[1] = tx(m).unlockBlocks[0]!; }, code: "DUPLICATE", path: "payload.unlockBlocks[1]" },
  { rule: "a reference points before itself at a signature block", name: "reference to itself", base: "transaction", edit: (m) => { tx(m).unlockBlocks[1] = { type: 1, reference: 1 }; }, code: "INVALID_REFERENCE", path: "payload.unlockBlocks[1].reference" },
  { rule: "index 1 .. 64 bytes", name: "empty index", base: "transaction", edit: (m) => { tx(m).essence.payload = { type: 2, index: new Uint8Array(0), data: new Uint8Array(0) }; }, code: "LENGTH_OUT_OF_RANGE", path: "payload.essence.payload.index" },
  { rule: "keys sorted and unique", name: "a key twice", base: "milestone", edit: (m) => { ms(m).publicKeys[1] = KEY_A; }, code: "DUPLICATE", path: "payload.publicKeys[1]" },
  { rule: "as many signatures as keys", name: "three signatures for two keys", base: "milestone", edit: (m) => { ms(m).signatures.push(fill(64, 3)); }, code: "COUNT_OUT_OF_RANGE", path: "payload.signatures" },
  { rule: "receipt funds: each tail transaction hash once", name: "one tail hash twice", base: "milestone", edit: (m) => { ms(m).receipt!.funds[1]!.tailTransactionHash = TAIL_A; }, code: "DUPLICATE", path: "payload.receipt.funds[1].tailTransactionHash" },
  { rule: "model values of the wrong kind", name: "networkId as a number", base: "transaction", edit: (m) => { (m as { networkId: unknown }).networkId = 1; }, code: "INVALID_ARGUMENT", path: "networkId" },
  { rule: "model values of the wrong kind", name: "inputs not an array", base: "transaction", edit: (m) => { (tx(m).essence as { inputs: unknown }).inputs = "x"; }, code: "INVALID_ARGUMENT", path: "payload.essence.inputs" },
  { rule: "model values of the wrong kind", name: "a null output", base: "transaction", edit: (m) => { (tx(m).essence.outputs as unknown[])[0] = null; }, code: "INVALID_ARGUMENT", path: "payload.essence.outputs[0]" },
];

for (const engine of ENGINES) for (const rule of [...new Set(ENCODE_CASES.map((c) => c.rule))]) {
  describe(`encode refuses: ${rule} (${engine})`, () => {
    beforeAll(() => {
      selectCodecEngine(engine);
    });
    for (const c of ENCODE_CASES.filter((x) => x.rule === rule)) {
      it(`${c.name} → ${c.code} at ${c.path === "" ? "(message)" : c.path}`, () => {
        const m = c.base === "transaction" ? transactionModel() : milestoneModel();
        c.edit(m);
        const error = expectProtocolError(() => encodeMessage(m), c.code, { path: c.path });
        expect(error.offset).toBeUndefined();
        expectProtocolError(() => validateMessage(m), c.code, { path: c.path });
      });
    }
  });
}

describe("an address may appear once for each output type", () => {
  beforeAll(() => {
    selectCodecEngine();
  });
  it("a single output and a dust allowance to the same address are accepted", () => {
    const m = transactionModel();
    tx(m).essence.outputs = [single(ADDRESS_A, MILLION), { type: 1, address: { type: 0, address: ADDRESS_A }, amount: MILLION }];
    expect(decodeMessage(encodeMessage(m))).toEqual(m);
  });
});

describe("the bounds themselves are accepted", () => {
  it("127 inputs, 127 outputs, 127 unlock blocks; outputs summing to exactly the supply", () => {
    const m = transactionModel();
    const t = tx(m);
    t.essence.inputs = Array.from({ length: 127 }, (_, i) => ({ type: 0 as const, transactionId: TX_ID, transactionOutputIndex: i }));
    // Sorted by serialized form: the index is little-endian, so its low byte decides first.
    const amounts = Array.from({ length: 127 }, () => Math.floor(TOTAL_SUPPLY / 127));
    amounts[0]! += TOTAL_SUPPLY - amounts.reduce((a, b) => a + b, 0);
    t.essence.outputs = amounts.map((amount, i) => single(fill(32, i), amount));
    t.essence.payload = undefined;
    t.unlockBlocks = [t.unlockBlocks[0]!, ...Array.from({ length: 126 }, () => ({ type: 1 as const, reference: 0 }))];
    const bytes = encodeMessage(m);
    const back = decodeMessage(bytes);
    expect(tx(back).essence.outputs.reduce((a, o) => a + o.amount, 0)).toBe(TOTAL_SUPPLY);
    expect(tx(back).unlockBlocks).toHaveLength(127);
  });

  it("8 parents, a 64-byte index, empty data and the largest message", () => {
    const parents = Array.from({ length: 8 }, (_, i) => fill(32, i + 1));
    const base: Message = { networkId: 0n, parents, payload: { type: 2, index: fill(64, 1), data: new Uint8Array(0) }, nonce: 0n };
    expect(decodeMessage(encodeMessage(base))).toEqual(base);
    const room = MAX_MESSAGE_LENGTH - encodeMessage(base).length;
    const largest: Message = { ...base, payload: { type: 2, index: fill(64, 1), data: fill(room, 7) } };
    expect(encodeMessage(largest)).toHaveLength(MAX_MESSAGE_LENGTH);
    expect(decodeMessage(encodeMessage(largest))).toEqual(largest);
  });
});
