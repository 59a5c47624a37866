// json: the whole path for a JSON submission, JSON text → messageFromJsonTextWithBytes (the text read directly to the
// model and its canonical bytes, JSON.parse only for what it does not read itself) → messageId, against iota.js 1.8.6's
// JSON.parse → serializeMessage → Blake2b.sum256 (issue #19 asked ≥ 5×, issue #35 ≥ 6×). Also side by side: JSON.parse then
// messageFromJsonWithBytes (the path before the text reader), the two-step path (messageFromJson, then encodeMessage)
// and, with CHRYSALIS_BASELINE, the previous build's paths (its own text path where it has one).
import { Blake2b } from "@iota/crypto.js";
import { serializeMessage } from "@iota/iota.js";
import { WriteStream } from "@iota/util.js";
import { ed25519Address } from "../src/crypto/address.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { ed25519PublicKey } from "../src/crypto/ed25519.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId } from "../src/model/ids.js";
import { messageFromJson, messageFromJsonWithBytes, messageToJson } from "../src/model/json.js";
import { messageFromJsonTextWithBytes } from "../src/model/json-text.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message } from "../src/model/types.js";
import { type Baseline, loadBaseline } from "./baseline.js";
import { indexationMessage, transactionMessage } from "./codec.bench.js";
import { compareEach, type Row } from "./harness.js";
import { medianRoundEach, ROUNDS } from "./repeat.js";

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const sortedParents = (n: number): Uint8Array[] => Array.from({ length: n }, (_, i) => blake2b256(text(`parent ${i}`))).sort((a, b) => Buffer.compare(a, b));

function ours(json: string): string {
  return messageId(messageFromJsonTextWithBytes(json).bytes);
}

/** The path before the text reader: JSON.parse, then the model and its bytes in one pass. */
function afterParse(json: string): string {
  return messageId(messageFromJsonWithBytes(JSON.parse(json)).bytes);
}

function twoStep(json: string): string {
  return messageId(encodeMessage(messageFromJson(JSON.parse(json))));
}

function previous(baseline: Baseline, json: string): string {
  return baseline.messageId(baseline.encodeMessage(baseline.messageFromJson(JSON.parse(json))));
}

/** The previous build's own one-pass path: the same steps as `ours`, for a before/after in one run. */
function previousOnePass(baseline: Baseline, json: string): string {
  return baseline.messageId(baseline.messageFromJsonWithBytes!(JSON.parse(json)).bytes);
}

function previousText(baseline: Baseline, json: string): string {
  return baseline.messageId(baseline.messageFromJsonTextWithBytes!(json).bytes);
}

function theirs(json: string): string {
  const stream = new WriteStream();
  serializeMessage(stream, JSON.parse(json) as Record<string, unknown>);
  return Buffer.from(Blake2b.sum256(stream.finalBytes())).toString("hex");
}

export default async function json(): Promise<Row[]> {
  // The transaction: 2 inputs, 2 outputs, 2 parents, an indexation payload in the essence.
  const seeds = [blake2b256(text("json A")), blake2b256(text("json B"))];
  const addresses = seeds.map((s) => ed25519Address(ed25519PublicKey(s)));
  const transaction: Message = {
    networkId: 14379272398717627559n,
    parents: sortedParents(2),
    payload: buildTransactionPayload({
      inputs: seeds.map((s, i) => ({ transactionId: blake2b256(text(`input ${i}`)), transactionOutputIndex: i, seed: s })),
      outputs: [{ type: 0, address: { type: 0, address: addresses[0]! }, amount: 2_000_000 }, { type: 0, address: { type: 0, address: addresses[1]! }, amount: 1_000_000 }],
      indexation: { type: 2, index: text("chrysalis-core"), data: text("a transaction with an indexation payload") },
    }),
    nonce: 12345678901234567n,
  };
  const indexation: Message = { networkId: 14379272398717627559n, parents: sortedParents(2), payload: { type: 2, index: text("IOTA"), data: text("hello world") }, nonce: 28110n };

  const baseline = await loadBaseline();
  const rows: Row[] = [];
  // Also every fixture of the codec bench (issue #19: "on every fixture of the codec bench").
  const fixtures = [
    ["2-input/2-output transaction, 2 parents, indexation", transaction],
    ["small indexation message", indexation],
    ["codec bench's 2-in/2-out tx + indexation", transactionMessage()],
    ["codec bench's small indexation", indexationMessage()],
  ] as const;
  for (const [name, message] of fixtures) {
    const jsonText = JSON.stringify(messageToJson(message));
    if (ours(jsonText) !== theirs(jsonText)) throw new Error(`message ids differ for ${name}`);
    if (twoStep(jsonText) !== ours(jsonText)) throw new Error(`the two-step path gives another message id for ${name}`);
    if (baseline !== undefined && previous(baseline, jsonText) !== ours(jsonText)) throw new Error(`the previous build gives another message id for ${name}`);
    if (afterParse(jsonText) !== ours(jsonText)) throw new Error(`JSON.parse and messageFromJsonWithBytes give another message id for ${name}`);
    const others: Record<string, () => unknown> = {
      "iota.js": () => theirs(jsonText),
      "JSON.parse, then messageFromJsonWithBytes": () => afterParse(jsonText),
      "two-step (messageFromJson, encodeMessage)": () => twoStep(jsonText),
    };
    if (baseline !== undefined) others["previous build (two-step)"] = () => previous(baseline, jsonText);
    if (baseline?.messageFromJsonTextWithBytes !== undefined) {
      // The previous build's own text path, the very steps of `ours`: the before/after of the text reader in one run.
      if (previousText(baseline, jsonText) !== ours(jsonText)) throw new Error(`the previous build's text path gives another message id for ${name}`);
      others["previous build (JSON text, as ours)"] = () => previousText(baseline, jsonText);
    } else if (baseline?.messageFromJsonWithBytes !== undefined) {
      if (previousOnePass(baseline, jsonText) !== ours(jsonText)) throw new Error(`the previous build's one-pass path gives another message id for ${name}`);
      others["previous build (one pass, as ours)"] = () => previousOnePass(baseline, jsonText);
    }
    // Each round runs every contender; each row is the round of median ratio against its contender.
    rows.push(...(await medianRoundEach(ROUNDS, () => compareEach("json", `JSON text → message id: ${name}`, () => ours(jsonText), others, { "iota.js": 6 }))));
  }
  return rows;
}
