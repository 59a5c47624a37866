// codec: encodeMessage / decodeMessage against iota.js 1.8.6 serializeMessage / deserializeMessage (issue #2 asked ≥ 10×
// and ≥ 5×; issue #35 asks ≥ 20× and ≥ 12×, the targets below).
// Fair inputs: iota.js serializes its own hex-string objects, we serialize our model; both decode the same bytes.
import { deserializeMessage, serializeMessage } from "@iota/iota.js";
import { ReadStream, WriteStream } from "@iota/util.js";
import { decodeMessage, encodeMessage } from "../src/model/codec.js";
import type { Message } from "../src/model/types.js";
import { loadBaseline } from "./baseline.js";
import { compare, compareEach, type Row } from "./harness.js";
import { toIotaMessage } from "./iota-shape.js";
import { medianRound, medianRoundEach, ROUNDS } from "./repeat.js";

const ENCODE_TARGET = 20;
const DECODE_TARGET = 12;

const fill = (length: number, byte: number): Uint8Array => new Uint8Array(length).fill(byte);
const text = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "utf8"));

/** A 2-input / 2-output / 2-parent transaction with an indexation payload in its essence. */
export function transactionMessage(): Message {
  return {
    networkId: 14379272398717627559n,
    parents: [fill(32, 0x11), fill(32, 0x22)],
    payload: {
      type: 0,
      essence: {
        type: 0,
        inputs: [
          { type: 0, transactionId: fill(32, 0xa1), transactionOutputIndex: 0 },
          { type: 0, transactionId: fill(32, 0xa2), transactionOutputIndex: 1 },
        ],
        outputs: [
          { type: 0, address: { type: 0, address: fill(32, 0x0a) }, amount: 1_000_000 },
          { type: 0, address: { type: 0, address: fill(32, 0x0b) }, amount: 9_000_000 },
        ],
        payload: { type: 2, index: text("chrysalis-core"), data: text("benchmark transaction") },
      },
      unlockBlocks: [
        { type: 0, signature: { type: 0, publicKey: fill(32, 0x50), signature: fill(64, 0x5e) } },
        { type: 0, signature: { type: 0, publicKey: fill(32, 0x51), signature: fill(64, 0x5f) } },
      ],
    },
    nonce: 12345678901234n,
  };
}

/** A small indexation message. */
export function indexationMessage(): Message {
  return {
    networkId: 14379272398717627559n,
    parents: [fill(32, 0x11), fill(32, 0x22)],
    payload: { type: 2, index: text("IOTA"), data: text("hello world") },
    nonce: 28110n,
  };
}

function iotaSerialize(message: Record<string, unknown>): Uint8Array {
  const stream = new WriteStream();
  serializeMessage(stream, message);
  return stream.finalBytes();
}

export default async function codec(): Promise<Row[]> {
  const baseline = await loadBaseline();
  const rows: Row[] = [];
  for (const [name, build] of [["2-in/2-out tx + indexation", transactionMessage], ["small indexation", indexationMessage]] as const) {
    const model = build();
    const theirs = toIotaMessage(model);
    const bytes = encodeMessage(model);
    // Both sides must produce and read the same bytes, or the comparison means nothing.
    if (Buffer.compare(Buffer.from(bytes), Buffer.from(iotaSerialize(theirs))) !== 0) throw new Error(`iota.js encodes ${name} differently`);
    const decoded = deserializeMessage(new ReadStream(bytes));
    if (Buffer.compare(Buffer.from(iotaSerialize(decoded)), Buffer.from(bytes)) !== 0) throw new Error(`iota.js decodes ${name} differently`);
    if (baseline === undefined) {
      rows.push(
        await medianRound(ROUNDS, () => compare("codec", `encodeMessage ${name}`, () => encodeMessage(model), { "iota.js serializeMessage": () => iotaSerialize(theirs) }, { target: ENCODE_TARGET })),
        await medianRound(ROUNDS, () => compare("codec", `decodeMessage ${name}`, () => decodeMessage(bytes), { "iota.js deserializeMessage": () => deserializeMessage(new ReadStream(bytes)) }, { target: DECODE_TARGET })),
      );
      continue;
    }
    // With a previous build (bench/baseline.ts): it runs in the same tinybench run as ours and iota.js.
    if (Buffer.compare(Buffer.from(baseline.encodeMessage(model)), Buffer.from(bytes)) !== 0) throw new Error(`the previous build encodes ${name} differently`);
    rows.push(
      ...(await medianRoundEach(ROUNDS, () => compareEach("codec", `encodeMessage ${name}`, () => encodeMessage(model), { "iota.js serializeMessage": () => iotaSerialize(theirs), "previous build": () => baseline.encodeMessage(model) }, { "iota.js serializeMessage": ENCODE_TARGET }))),
      ...(await medianRoundEach(ROUNDS, () => compareEach("codec", `decodeMessage ${name}`, () => decodeMessage(bytes), { "iota.js deserializeMessage": () => deserializeMessage(new ReadStream(bytes)), "previous build": () => baseline.decodeMessage(bytes) }, { "iota.js deserializeMessage": DECODE_TARGET }))),
    );
  }
  return rows;
}
