// Node REST JSON *text* of a message → the model and its canonical bytes in one scan, without JSON.parse: hex is decoded
// straight from the characters, no JSON objects or strings in between. Whatever it is not sure of goes to JSON.parse.
//
// Exact by construction: it reads only the plain form clients send (the message's own keys, each once; strings without
// escapes; integers written as plain digits; no payload, an indexation or a transaction payload; ASCII text) and checks
// every field rule the JSON reader checks; the order and array rules come from the generated writer, as for
// messageFromJsonWithBytes. Anything else (unknown or repeated keys, escapes, 1.0 or 1e3, milestone and receipt payloads,
// any refusal, any doubt) is handed to `messageFromJsonWithBytes(JSON.parse(text))`, so that results and errors are that
// path's own. test/json-text.test.ts compares the two on random and mutated texts.
import { ProtocolError } from "../bytes/errors.js";
import { decodeHexAscii } from "../bytes/hex.js";
import {
  DUST_ALLOWANCE_MINIMUM, ED25519_ADDRESS_LENGTH, ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH, MAX_INDEX_LENGTH, MAX_INPUTS,
  MAX_MESSAGE_LENGTH, MAX_OUTPUT_INDEX, MAX_OUTPUTS, MAX_PARENTS, MAX_U16, MESSAGE_ID_LENGTH, MIN_INDEX_LENGTH, MIN_PARENTS,
  TOTAL_SUPPLY, TRANSACTION_ID_LENGTH,
} from "../bytes/limits.js";
import { writers } from "./codecs.generated.js";
import { partialOf, writtenBytes } from "./engine.js";
import { messageFromJsonWithBytes, partialMessageFromJsonWithBytes } from "./json.js";
import { jsonDecimal, type Obj } from "./runtime.js";
import type { Message, PartialMessage } from "./types.js";

/**
 * `messageFromJsonWithBytes(JSON.parse(text))`, the same model, bytes or error, reading the text directly when it is in
 * the plain form a client writes (and through JSON.parse otherwise).
 */
export function messageFromJsonTextWithBytes(text: string): { message: Message; bytes: Uint8Array } {
  return readText(text, false) ?? messageFromJsonWithBytes(JSON.parse(text));
}

/** `messageFromJson(JSON.parse(text))`: messageFromJsonTextWithBytes without the bytes. */
export function messageFromJsonText(text: string): Message {
  return messageFromJsonTextWithBytes(text).message;
}

/**
 * `partialMessageFromJsonWithBytes(JSON.parse(text))` for a message submitted for the node to complete (networkId,
 * parentMessageIds and nonce may be missing or null), read as messageFromJsonTextWithBytes reads.
 */
export function partialMessageFromJsonTextWithBytes(text: string): { partial: PartialMessage; bytes: Uint8Array | undefined } {
  const read = readText(text, true);
  if (read === undefined) return partialMessageFromJsonWithBytes(JSON.parse(text));
  return partialOf(read.message, read.bytes, noParents);
}

// Longer texts (a message is at most 32 KiB, 64 Ki hex digits) go to JSON.parse; the ASCII copy of the text grows to
// the longest text read, at most this.
const TEXT_LIMIT = 4 * MAX_MESSAGE_LENGTH;
// Hex longer than a whole message is refused before it is decoded (as the JSON reader does).
const MAX_HEX_CHARS = 2 * MAX_MESSAGE_LENGTH;
const ZERO_PARENT = new Uint8Array(MESSAGE_ID_LENGTH);

const encoder = new TextEncoder();
let buffer = new Uint8Array(0);

// The scan's state: the text as ASCII codes, the position in it, the text itself (for decimal strings).
let src = buffer;
let at = 0;
let source = "";
// Whether the last partial message had no parents (missing, null or []).
let noParents = false;

/** Thrown (never out of this module) when the text is left to JSON.parse. */
const MISS = Object.freeze({ miss: true });

function miss(): never {
  throw MISS;
}

function readText(text: string, partial: boolean): { message: Message; bytes: Uint8Array } | undefined {
  if (typeof text !== "string" || text.length > TEXT_LIMIT) return undefined;
  // A polluted Object.prototype changes what the JSON reader sees; leave that to it.
  for (const _ in Object.prototype) return undefined;
  const n = text.length;
  if (buffer.length < n) buffer = new Uint8Array(Math.min(TEXT_LIMIT, Math.max(4096, 2 ** Math.ceil(Math.log2(n)))));
  // Any character outside ASCII encodes to more than one byte, so it shows in the counts (and is never valid here).
  const { read, written } = encoder.encodeInto(text, buffer);
  if (read !== n || written !== n) return undefined;
  src = buffer.subarray(0, n);
  at = 0;
  source = text;
  try {
    const message = readMessage(partial);
    if (space() !== -1) miss();
    const bytes = writtenBytes(writers.message, message, MAX_MESSAGE_LENGTH);
    return bytes === undefined ? undefined : { message: message as unknown as Message, bytes };
  } catch {
    return undefined;
  } finally {
    source = "";
  }
}

// ---- JSON tokens (plain forms only) ----

/** Skips JSON whitespace; the next character's code, or -1 at the end. */
function space(): number {
  const s = src;
  while (at < s.length) {
    const c = s[at]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
    at++;
  }
  return -1;
}

function expect(code: number): void {
  if (space() !== code) miss();
  at++;
}

/** After a member or element: true at the closing `close`, false after a comma. */
function endOf(close: number): boolean {
  const c = space();
  at++;
  if (c === close) return true;
  if (c !== 0x2c) miss();
  return false;
}

/** `{`, and true if the object is empty. */
function openObject(): boolean {
  expect(0x7b);
  if (space() !== 0x7d) return false;
  at++;
  return true;
}

/** `{` and the key of the object's first member (its index in `names`), or -1 for `{}`. */
function firstMember(names: readonly Uint8Array[]): number {
  return openObject() ? -1 : key(names, 0);
}

/** After a member: `,` and the next member's key (none of `seen` again), or `}` and -1. */
function nextMember(names: readonly Uint8Array[], seen: number): number {
  return endOf(0x7d) ? -1 : key(names, seen);
}

/** `[`, and true if the array is empty. */
function openArray(): boolean {
  expect(0x5b);
  if (space() !== 0x5d) return false;
  at++;
  return true;
}

/** A key among `names` (its index) and its colon; a key read before (a bit of `seen`) or any other key is a miss. */
function key(names: readonly Uint8Array[], seen: number): number {
  if (space() !== 0x22) miss();
  const s = src;
  const start = at + 1;
  // A name is plain letters, so the key equals it exactly when its characters follow and then the closing quote.
  next: for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    const n = name.length;
    if (s[start + n] !== 0x22) continue;
    for (let i = 0; i < n; i++) if (s[start + i] !== name[i]) continue next;
    if ((seen & (1 << k)) !== 0) miss();
    at = start + n + 1;
    expect(0x3a);
    return k;
  }
  return miss();
}

/** `null` (consumed: true) or something else (not consumed: false). */
function isNull(): boolean {
  if (space() !== 0x6e) return false;
  const s = src;
  if (s[at + 1] !== 0x75 || s[at + 2] !== 0x6c || s[at + 3] !== 0x6c) miss();
  at += 4;
  return true;
}

/** An integer written as plain digits (no sign, fraction or exponent), min .. max (both below 2^53). */
function integer(min: number, max: number): number {
  const s = src;
  let c = space();
  const start = at;
  let value = 0;
  while (c >= 0x30 && c <= 0x39) {
    value = value * 10 + (c - 0x30);
    c = ++at < s.length ? s[at]! : -1;
  }
  const digits = at - start;
  // At most 16 digits and at most max < 2^53: every partial sum is exact, so this is the number JSON.parse reads.
  if (digits === 0 || digits > 16 || (digits > 1 && s[start] === 0x30) || c === 0x2e || c === 0x65 || c === 0x45) miss();
  if (value < min || value > max) miss();
  return value;
}

/** A string of exactly 2·length hex digits. */
function hex(length: number): Uint8Array {
  if (space() !== 0x22) miss();
  const start = at + 1;
  const close = start + 2 * length;
  // Anything that is not a hex digit (a quote, a backslash, a control character) makes the decoding fail.
  if (src[close] !== 0x22) miss();
  const bytes = decodeHexAscii(src, start, length);
  if (bytes === undefined) miss();
  at = close + 1;
  return bytes;
}

/** A string of hex digits for min .. max bytes. */
function varHex(min: number, max: number): Uint8Array {
  if (space() !== 0x22) miss();
  const start = at + 1;
  const close = src.indexOf(0x22, start);
  const n = close - start;
  if (close < 0 || n > MAX_HEX_CHARS || (n & 1) !== 0 || n < 2 * min || n > 2 * max) miss();
  const bytes = decodeHexAscii(src, start, n >>> 1);
  if (bytes === undefined) miss();
  at = close + 1;
  return bytes;
}

/** A u64 as a decimal string, by the JSON reader's own rule. */
function decimal(): bigint {
  if (space() !== 0x22) miss();
  const start = at + 1;
  const close = src.indexOf(0x22, start);
  if (close < 0 || close - start > 20) miss();
  at = close + 1;
  return jsonDecimal(source.slice(start, close));
}

// ---- the message's shape ----

const names = (...list: string[]): readonly Uint8Array[] => list.map((name) => encoder.encode(name));
const MESSAGE_KEYS = names("networkId", "parentMessageIds", "payload", "nonce");
const PAYLOAD_KEYS = names("type", "essence", "unlockBlocks", "index", "data");
const ESSENCE_KEYS = names("type", "inputs", "outputs", "payload");
const INDEXATION_KEYS = names("type", "index", "data");
const INPUT_KEYS = names("type", "transactionId", "transactionOutputIndex");
const OUTPUT_KEYS = names("type", "address", "amount");
const ADDRESS_KEYS = names("type", "address");
const UNLOCK_KEYS = names("type", "signature", "reference");
const SIGNATURE_KEYS = names("type", "publicKey", "signature");

/** The model's keys in the JSON reader's order; for a partial message, missing parts as its stand-ins (0, no parents). */
function readMessage(partial: boolean): Obj {
  let networkId: bigint | undefined;
  let parents: Uint8Array[] | undefined;
  let payload: Obj | undefined;
  let nonce: bigint | undefined;
  let seen = 0;
  for (let k = firstMember(MESSAGE_KEYS); k >= 0; k = nextMember(MESSAGE_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) networkId = partial && isNull() ? undefined : decimal();
    else if (k === 1) parents = partial && isNull() ? undefined : parentList(partial ? 0 : MIN_PARENTS);
    else if (k === 2) payload = isNull() ? undefined : messagePayload();
    else nonce = partial && isNull() ? undefined : decimal();
  }
  if (partial) {
    noParents = parents === undefined || parents.length === 0;
    return { networkId: networkId ?? 0n, parents: noParents ? [ZERO_PARENT] : parents, payload, nonce: nonce ?? 0n };
  }
  if (networkId === undefined || parents === undefined || nonce === undefined) miss();
  return { networkId, parents, payload, nonce };
}

function parentList(min: number): Uint8Array[] {
  const parents: Uint8Array[] = [];
  if (!openArray()) {
    do {
      if (parents.length === MAX_PARENTS) miss();
      parents.push(hex(MESSAGE_ID_LENGTH));
    } while (!endOf(0x5d));
  }
  if (parents.length < min) miss();
  return parents;
}

/** A message's payload: a transaction or an indexation (the keys of both read as they come, the type checked last). */
function messagePayload(): Obj {
  let type = -1;
  let essence: Obj | undefined;
  let unlockBlocks: Obj[] | undefined;
  let index: Uint8Array | undefined;
  let data: Uint8Array | undefined;
  let seen = 0;
  for (let k = firstMember(PAYLOAD_KEYS); k >= 0; k = nextMember(PAYLOAD_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 2);
    else if (k === 1) essence = transactionEssence();
    else if (k === 2) unlockBlocks = unlockBlockList();
    else if (k === 3) index = varHex(MIN_INDEX_LENGTH, MAX_INDEX_LENGTH);
    else data = isNull() ? undefined : varHex(0, MAX_HEX_CHARS);
  }
  if (type === 0 && seen === 0b111 && essence !== undefined && unlockBlocks !== undefined) {
    if (unlockBlocks.length !== (essence.inputs as unknown[]).length) miss();
    return { type, essence, unlockBlocks };
  }
  if (type === 2 && (seen & 0b110) === 0 && index !== undefined) return { type, index, data: data ?? new Uint8Array(0) };
  return miss();
}

function indexationPayload(): Obj {
  let type = -1;
  let index: Uint8Array | undefined;
  let data: Uint8Array | undefined;
  let seen = 0;
  for (let k = firstMember(INDEXATION_KEYS); k >= 0; k = nextMember(INDEXATION_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(2, 2);
    else if (k === 1) index = varHex(MIN_INDEX_LENGTH, MAX_INDEX_LENGTH);
    else data = isNull() ? undefined : varHex(0, MAX_HEX_CHARS);
  }
  if (type !== 2 || index === undefined) miss();
  return { type, index, data: data ?? new Uint8Array(0) };
}

function transactionEssence(): Obj {
  let type = -1;
  let inputs: Obj[] | undefined;
  let outputs: Obj[] | undefined;
  let payload: Obj | undefined;
  let seen = 0;
  for (let k = firstMember(ESSENCE_KEYS); k >= 0; k = nextMember(ESSENCE_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 0);
    else if (k === 1) inputs = list(MAX_INPUTS, utxoInput);
    else if (k === 2) outputs = list(MAX_OUTPUTS, output);
    else payload = isNull() ? undefined : indexationPayload();
  }
  if (type !== 0 || inputs === undefined || outputs === undefined) miss();
  return { type, inputs, outputs, payload };
}

/** 1 .. max elements. */
function list(max: number, element: () => Obj): Obj[] {
  const items: Obj[] = [];
  if (openArray()) miss();
  do {
    if (items.length === max) miss();
    items.push(element());
  } while (!endOf(0x5d));
  return items;
}

function utxoInput(): Obj {
  let type = -1;
  let transactionId: Uint8Array | undefined;
  let transactionOutputIndex = -1;
  let seen = 0;
  for (let k = firstMember(INPUT_KEYS); k >= 0; k = nextMember(INPUT_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 0);
    else if (k === 1) transactionId = hex(TRANSACTION_ID_LENGTH);
    else transactionOutputIndex = integer(0, MAX_OUTPUT_INDEX);
  }
  if (type !== 0 || transactionId === undefined || transactionOutputIndex < 0) miss();
  return { type, transactionId, transactionOutputIndex };
}

function output(): Obj {
  let type = -1;
  let address: Obj | undefined;
  let amount = -1;
  let seen = 0;
  for (let k = firstMember(OUTPUT_KEYS); k >= 0; k = nextMember(OUTPUT_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 1);
    else if (k === 1) address = ed25519Address();
    else amount = integer(1, TOTAL_SUPPLY);
  }
  if (type < 0 || address === undefined || amount < (type === 1 ? DUST_ALLOWANCE_MINIMUM : 1)) miss();
  return { type, address, amount };
}

function ed25519Address(): Obj {
  let type = -1;
  let address: Uint8Array | undefined;
  let seen = 0;
  for (let k = firstMember(ADDRESS_KEYS); k >= 0; k = nextMember(ADDRESS_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 0);
    else address = hex(ED25519_ADDRESS_LENGTH);
  }
  if (type !== 0 || address === undefined) miss();
  return { type, address };
}

function unlockBlockList(): Obj[] {
  return list(MAX_INPUTS, unlockBlock);
}

function unlockBlock(): Obj {
  let type = -1;
  let signature: Obj | undefined;
  let reference = -1;
  let seen = 0;
  for (let k = firstMember(UNLOCK_KEYS); k >= 0; k = nextMember(UNLOCK_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 1);
    else if (k === 1) signature = ed25519Signature();
    else reference = integer(0, MAX_U16);
  }
  if (type === 0 && seen === 0b011 && signature !== undefined) return { type, signature };
  if (type === 1 && seen === 0b101) return { type, reference };
  return miss();
}

function ed25519Signature(): Obj {
  let type = -1;
  let publicKey: Uint8Array | undefined;
  let signature: Uint8Array | undefined;
  let seen = 0;
  for (let k = firstMember(SIGNATURE_KEYS); k >= 0; k = nextMember(SIGNATURE_KEYS, seen)) {
    seen |= 1 << k;
    if (k === 0) type = integer(0, 0);
    else if (k === 1) publicKey = hex(ED25519_PUBLIC_KEY_LENGTH);
    else signature = hex(ED25519_SIGNATURE_LENGTH);
  }
  if (type !== 0 || publicKey === undefined || signature === undefined) miss();
  return { type, publicKey, signature };
}

/** The refusal for text JSON.parse rejected (the SyntaxError the readers above throw), as the node answers it. */
export function malformedJson(error: unknown): ProtocolError {
  return new ProtocolError("INVALID_JSON", `malformed JSON: ${(error as Error).message.slice(0, 200)}`);
}
