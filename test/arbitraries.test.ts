// chrysalis-core/arbitraries (src/arbitraries): what the arbitraries derived from objects.ts draw is valid (or, for
// the malformed ones, refused for the rule named), the defaults reach every kind and bound within a couple of thousand
// draws under a fixed seed, a seed gives the same values, failures shrink toward small cases, and the options hold.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  indexationPayload,
  malformedMessageBytes,
  malformedMessageRules,
  message,
  messageBytes,
  messageJson,
  milestonePayload,
  output,
  receiptPayload,
  signedTransaction,
  transactionEssence,
  transactionPayload,
} from "../src/arbitraries/index.js";
import { serialize } from "../src/arbitraries/derive.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { DUST_ALLOWANCE_MINIMUM, MAX_INPUTS, MAX_MESSAGE_LENGTH, MAX_MIGRATED_FUNDS, MAX_MILESTONE_KEYS, MAX_OUTPUTS, MAX_PARENTS, MAX_INDEX_LENGTH, TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { ed25519Address } from "../src/crypto/address.js";
import {
  decodeIndexationPayload,
  decodeMessage,
  decodeMilestonePayload,
  decodeReceiptPayload,
  decodeTransactionEssence,
  decodeTransactionPayload,
  encodeIndexationPayload,
  encodeMessage,
  encodeMilestonePayload,
  encodeReceiptPayload,
  encodeTransactionEssence,
  encodeTransactionPayload,
  sortOutputs,
} from "../src/model/codec.js";
import { outputId } from "../src/model/ids.js";
import { messageFromJson, messageToJson } from "../src/model/json.js";
import * as objects from "../src/model/objects.js";
import { verifyTransactionSignatures } from "../src/model/transaction.js";
import type { Message } from "../src/model/types.js";
import { toHexString } from "./helpers.js";

const SEED = 42;
const N = 2000;

/** How often each of `names` comes up in `values`. */
function tally<T>(values: readonly T[], classify: (v: T) => string[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const v of values) for (const name of classify(v)) seen.set(name, (seen.get(name) ?? 0) + 1);
  return seen;
}

const bound = (n: number, min: number, max: number): string => (n === min ? `${min}` : n === max ? `${max}` : "between");

/** What a message holds that the coverage counts: its payload kind, the kinds inside, and each count or length at its bounds. */
function features(m: Message): string[] {
  const out: string[] = [`parents ${bound(m.parents.length, 1, MAX_PARENTS)}`];
  const length = encodeMessage(m).length;
  if (length === MAX_MESSAGE_LENGTH) out.push("length 32768");
  if (length > MAX_MESSAGE_LENGTH - 1024) out.push("length within 1 KiB of 32768");
  const indexation = (index: Uint8Array, data: Uint8Array): void => {
    out.push(`index ${bound(index.length, 1, MAX_INDEX_LENGTH)}`);
    if (data.length === 0) out.push("data empty");
  };
  const p = m.payload;
  if (p === undefined) out.push("payload none");
  else if (p.type === 0) {
    out.push("payload transaction");
    const e = p.essence;
    out.push(`inputs ${bound(e.inputs.length, 1, MAX_INPUTS)}`, `outputs ${bound(e.outputs.length, 1, MAX_OUTPUTS)}`);
    for (const o of e.outputs) out.push(o.type === 0 ? "output SigLockedSingleOutput" : "output SigLockedDustAllowanceOutput");
    for (const u of p.unlockBlocks) out.push(u.type === 0 ? "unlock SignatureUnlockBlock" : "unlock ReferenceUnlockBlock");
    if (e.payload !== undefined) {
      out.push("essence indexation");
      indexation(e.payload.index, e.payload.data);
    }
  } else if (p.type === 1) {
    out.push("payload milestone", `milestone parents ${bound(p.parents.length, 1, MAX_PARENTS)}`, `milestone keys ${bound(p.publicKeys.length, 1, MAX_MILESTONE_KEYS)}`);
    if (p.receipt !== undefined) out.push("milestone receipt", `receipt funds ${bound(p.receipt.funds.length, 1, MAX_MIGRATED_FUNDS)}`);
  } else {
    out.push("payload indexation");
    indexation(p.index, p.data);
  }
  return [...new Set(out)];
}

const REQUIRED = [
  "payload none",
  "payload transaction",
  "payload milestone",
  "payload indexation",
  "milestone receipt",
  "essence indexation",
  "output SigLockedSingleOutput",
  "output SigLockedDustAllowanceOutput",
  "unlock SignatureUnlockBlock",
  "unlock ReferenceUnlockBlock",
  "parents 1",
  "parents 8",
  "milestone parents 1",
  "milestone parents 8",
  "inputs 1",
  "inputs 127",
  "outputs 1",
  "outputs 127",
  "index 1",
  "index 64",
  "data empty",
  "length 32768",
  "length within 1 KiB of 32768",
];

const print = (title: string, seen: ReadonlyMap<string, number>): void =>
  console.log(`${title}\n${[...seen].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `  ${k}: ${n}`).join("\n")}`);

describe("message(): every value is a message decodeMessage accepts", () => {
  it("encodes (every syntactic rule holds), decodes back to itself, and the arbitraries' own writer writes the same bytes", () => {
    fc.assert(
      fc.property(message(), (m) => {
        const bytes = encodeMessage(m);
        expect(decodeMessage(bytes)).toEqual(m);
        expect(toHexString(serialize(objects.message, m))).toBe(toHexString(bytes));
      }),
      { numRuns: 500 },
    );
  });
});

describe(`the defaults reach every kind and every bound within ${N} values (seed ${SEED})`, () => {
  it("message(): every payload kind, receipts, both outputs and both unlock blocks, 1 and 8 parents, 1 and 127 inputs and outputs, index lengths 1 and 64, messages of 32768 bytes", () => {
    const seen = tally(fc.sample(message(), { numRuns: N, seed: SEED }), features);
    print(`message(), ${N} values, seed ${SEED}:`, seen);
    expect(REQUIRED.filter((name) => !seen.has(name))).toEqual([]);
  });

  it("transactionPayload() and milestonePayload() alone: 1 and 127 inputs and outputs, 1 and 255 keys, 1 and 127 migrated funds", () => {
    const transactions = tally(fc.sample(transactionPayload(), { numRuns: N, seed: SEED }), (p) => [
      `inputs ${bound(p.essence.inputs.length, 1, MAX_INPUTS)}`,
      `outputs ${bound(p.essence.outputs.length, 1, MAX_OUTPUTS)}`,
    ]);
    const milestones = tally(fc.sample(milestonePayload(), { numRuns: N, seed: SEED }), (p) => [
      `keys ${bound(p.publicKeys.length, 1, MAX_MILESTONE_KEYS)}`,
      ...(p.receipt === undefined ? ["no receipt"] : [`funds ${bound(p.receipt.funds.length, 1, MAX_MIGRATED_FUNDS)}`]),
    ]);
    print(`transactionPayload(), ${N} values:`, transactions);
    print(`milestonePayload(), ${N} values:`, milestones);
    for (const name of ["inputs 1", "inputs 127", "outputs 1", "outputs 127"]) expect(transactions.get(name) ?? 0, name).toBeGreaterThan(0);
    for (const name of ["keys 1", "keys 255", "no receipt", "funds 1", "funds 127"]) expect(milestones.get(name) ?? 0, name).toBeGreaterThan(0);
  });

  it("malformedMessageBytes(): every rule", () => {
    const seen = tally(fc.sample(malformedMessageBytes(), { numRuns: N, seed: SEED }), (m) => [m.rule.name]);
    console.log(`malformedMessageBytes(), ${N} values: ${seen.size} of ${malformedMessageRules.length} rules, each ${Math.min(...seen.values())} .. ${Math.max(...seen.values())} times`);
    expect(malformedMessageRules.map((r) => r.name).filter((name) => !seen.has(name))).toEqual([]);
  });
});

describe("messageBytes(): canonical encodings", () => {
  it("decodeMessage takes them and encodeMessage gives the same bytes back", () => {
    fc.assert(
      fc.property(messageBytes(), (bytes) => {
        expect(toHexString(encodeMessage(decodeMessage(bytes)))).toBe(toHexString(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

describe("messageJson(): node REST JSON", () => {
  it("messageFromJson takes it (also as JSON text) and messageToJson gives it back unchanged", () => {
    fc.assert(
      fc.property(messageJson(), (json) => {
        const text = JSON.stringify(json);
        expect(JSON.parse(text)).toEqual(json);
        expect(messageToJson(messageFromJson(json))).toEqual(json);
        expect(messageToJson(messageFromJson(JSON.parse(text)))).toEqual(json);
      }),
      { numRuns: 300 },
    );
  });
});

describe("the parts on their own decode back to themselves", () => {
  it("transactionPayload(), transactionEssence(), milestonePayload(), indexationPayload(), receiptPayload(), output()", () => {
    fc.assert(
      fc.property(transactionPayload(), transactionEssence(), milestonePayload(), indexationPayload(), receiptPayload(), output(), (t, e, m, i, r, o) => {
        expect(decodeTransactionPayload(encodeTransactionPayload(t))).toEqual(t);
        expect(decodeTransactionEssence(encodeTransactionEssence(e))).toEqual(e);
        expect(decodeMilestonePayload(encodeMilestonePayload(m))).toEqual(m);
        expect(decodeIndexationPayload(encodeIndexationPayload(i))).toEqual(i);
        expect(decodeReceiptPayload(encodeReceiptPayload(r))).toEqual(r);
        expect(sortOutputs([o])).toEqual([o]);
      }),
      { numRuns: 200 },
    );
  });

  it("a standalone payload fits in a message with 8 parents, and an essence leaves room for its unlock blocks", () => {
    fc.assert(
      fc.property(transactionEssence(), fc.uint8Array({ minLength: 32 * MAX_PARENTS, maxLength: 32 * MAX_PARENTS }), (essence, ids) => {
        const parents = Array.from({ length: MAX_PARENTS }, (_, i) => ids.slice(32 * i, 32 * i + 32)).sort((a, b) => Buffer.compare(a, b));
        if (new Set(parents.map(toHexString)).size < MAX_PARENTS) return;
        // The most unlock blocks can take: a signature block per input.
        const unlockBlocks = essence.inputs.map((_, i) => ({ type: 0 as const, signature: { type: 0 as const, publicKey: new Uint8Array(32).fill(i), signature: new Uint8Array(64) } }));
        expect(encodeMessage({ networkId: 0n, parents, payload: { type: 0, essence, unlockBlocks }, nonce: 0n }).length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
      }),
      { numRuns: 200 },
    );
  });
});

describe("signedTransaction(): signatures that verify, each input tied by its output id to the key and address owning it", () => {
  const values = fc.sample(signedTransaction(), { numRuns: 300, seed: SEED });

  it("verifyTransactionSignatures accepts every payload with its addressOf", () => {
    for (const t of values) expect(verifyTransactionSignatures(t.payload, (input) => t.addressOf(input))).toEqual({ valid: true });
  });

  it("each input's output id, owner key and address; one signature unlock block per key; amounts that balance the outputs", () => {
    for (const t of values) {
      const { inputs, outputs } = t.payload.essence;
      expect(t.inputs.map((s) => s.input)).toEqual(inputs);
      expect(new Set(t.keys.map((k) => toHexString(k.address))).size).toBe(t.keys.length);
      t.inputs.forEach((spent, i) => {
        expect(spent.outputId).toBe(outputId(inputs[i]!.transactionId, inputs[i]!.transactionOutputIndex));
        const key = t.keys[spent.key]!;
        expect(spent.address).toEqual(ed25519Address(key.publicKey));
        expect(t.addressOf(inputs[i]!)).toEqual(spent.address);
        expect(spent.amount).toBeGreaterThanOrEqual(1);
      });
      expect(t.payload.unlockBlocks.filter((b) => b.type === 0)).toHaveLength(t.keys.length);
      expect(t.inputs.reduce((s, i) => s + i.amount, 0)).toBe(outputs.reduce((s, o) => s + o.amount, 0));
      expect(t.addressOf({ type: 0, transactionId: new Uint8Array(32).fill(0xee), transactionOutputIndex: 126 })).toBeUndefined();
    }
  });

  it("a changed signature no longer verifies", () => {
    const t = values.find((v) => v.payload.unlockBlocks[0]!.type === 0)!;
    const [first, ...rest] = t.payload.unlockBlocks;
    if (first?.type !== 0) throw new Error("the first unlock block is a signature block");
    const signature = first.signature.signature.slice();
    signature[0]! ^= 1;
    const changed = { ...t.payload, unlockBlocks: [{ ...first, signature: { ...first.signature, signature } }, ...rest] };
    expect(verifyTransactionSignatures(changed, (input) => t.addressOf(input))).toMatchObject({ valid: false, code: "INVALID_SIGNATURE" });
  });

  it(`within ${values.length} values: 1 and 127 inputs, one key and several, references to earlier signatures`, () => {
    const seen = tally(values, (t) => [`inputs ${bound(t.inputs.length, 1, MAX_INPUTS)}`, t.keys.length === 1 ? "one key" : "several keys", ...(t.payload.unlockBlocks.some((b) => b.type === 1) ? ["references"] : [])]);
    print(`signedTransaction(), ${values.length} values:`, seen);
    for (const name of ["inputs 1", "inputs 127", "one key", "several keys", "references"]) expect(seen.get(name) ?? 0, name).toBeGreaterThan(0);
  });
});

describe("malformedMessageBytes(): decodeMessage refuses each with exactly the code of the rule it names", () => {
  it("every value raises a ProtocolError with the rule's code", () => {
    fc.assert(
      fc.property(malformedMessageBytes(), ({ bytes, rule }) => {
        let error: unknown;
        try {
          decodeMessage(bytes);
        } catch (e) {
          error = e;
        }
        expect(error, rule.name).toBeInstanceOf(ProtocolError);
        expect((error as ProtocolError).code, rule.name).toBe(rule.code);
      }),
      { numRuns: N },
    );
  });

  it("each rule alone, 25 values each: the rule named, its code raised", () => {
    for (const rule of malformedMessageRules) {
      for (const m of fc.sample(malformedMessageBytes({ rules: [rule.name] }), { numRuns: 25, seed: SEED })) {
        expect(m.rule).toEqual(rule);
        expect(() => decodeMessage(m.bytes), rule.name).toThrow(expect.objectContaining({ code: rule.code }));
      }
    }
  });

  it("names every bound, order, uniqueness, sum, same count, type tag and declared length of the schema, each once", () => {
    const names = malformedMessageRules.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [
      "Message:length-min",
      "Message:length-max",
      "Message:trailing-bytes",
      "Message:truncated",
      "Message.parents:count-max",
      "Message.parents:order",
      "Message.payload:type",
      "Message.payload:declared-length",
      "TransactionEssence.inputs:unique",
      "UtxoInput.transactionOutputIndex:max",
      "TransactionEssence.outputs:sum",
      "TransactionEssence.outputs:distinct",
      "SigLockedDustAllowanceOutput.amount:min",
      "IndexationPayload.index:length-max",
      "TransactionPayload.unlockBlocks:count-same",
      "TransactionPayload.unlockBlocks:reference-back",
      "TransactionPayload.unlockBlocks:reference-signature",
      "TransactionPayload.unlockBlocks:signature-unique",
      "MilestonePayload.signatures:count-same",
      "ReceiptPayload.final:boolean",
      "ReceiptPayload.transaction:required",
    ]) {
      expect(names).toContain(name);
    }
  });
});

describe("a fixed seed gives the same values", () => {
  const hexes = (arbitrary: fc.Arbitrary<Uint8Array>, seed: number): string[] => fc.sample(arbitrary, { numRuns: 60, seed }).map(toHexString);

  it("messageBytes(), malformedMessageBytes() and signedTransaction(), drawn twice with one seed, and not with another", () => {
    expect(hexes(messageBytes(), 7)).toEqual(hexes(messageBytes(), 7));
    expect(hexes(messageBytes(), 7)).not.toEqual(hexes(messageBytes(), 8));
    const malformed = malformedMessageBytes().map((m) => m.bytes);
    expect(hexes(malformed, 7)).toEqual(hexes(malformed, 7));
    const signed = signedTransaction().map((t) => encodeTransactionPayload(t.payload));
    expect(fc.sample(signed, { numRuns: 10, seed: 7 }).map(toHexString)).toEqual(fc.sample(signed, { numRuns: 10, seed: 7 }).map(toHexString));
  });
});

describe("failures shrink toward small cases", () => {
  const counterexample = <T>(arbitrary: fc.Arbitrary<T>, holds: (v: T) => boolean): T => {
    const result = fc.check(fc.property(arbitrary, holds), { seed: SEED, numRuns: N });
    expect(result.failed).toBe(true);
    return result.counterexample![0];
  };

  it("'no message carries a transaction' shrinks to one zero parent and a transaction of one input, one output, one unlock block, no indexation", () => {
    const m = counterexample(message(), (m) => m.payload?.type !== 0);
    expect(m.networkId).toBe(0n);
    expect(m.nonce).toBe(0n);
    expect(m.parents).toEqual([new Uint8Array(32)]);
    if (m.payload?.type !== 0) throw new Error("a transaction");
    expect(m.payload.essence.inputs).toEqual([{ type: 0, transactionId: new Uint8Array(32), transactionOutputIndex: 0 }]);
    expect(m.payload.essence.outputs).toEqual([{ type: 0, address: { type: 0, address: new Uint8Array(32) }, amount: 1 }]);
    expect(m.payload.essence.payload).toBeUndefined();
    expect(m.payload.unlockBlocks).toHaveLength(1);
  });

  it("'messages are shorter than 4000 bytes' shrinks to one of 4000 bytes, 'fewer than 5 inputs' to exactly 5", () => {
    // (Indexations only: a large transaction shrinks as well, but each of its hundreds of bytes fields takes a while.)
    const long = counterexample(message({ payloads: ["none", "indexation"] }), (m) => encodeMessage(m).length < 4000);
    expect(encodeMessage(long).length).toBe(4000);
    expect(long.parents).toHaveLength(1);
    const five = counterexample(transactionPayload(), (p) => p.essence.inputs.length < 5);
    expect(five.essence.inputs).toHaveLength(5);
    expect(five.essence.outputs).toHaveLength(1);
  });

  it("'fewer than 3 keys sign' shrinks to exactly 3 keys", () => {
    expect(counterexample(signedTransaction(), (t) => t.keys.length < 3).keys).toHaveLength(3);
  });
});

describe("options narrow what is drawn", () => {
  it("maxParents, maxInputs, maxOutputs, maxDataLength, maxMilestoneKeys, maxMigratedFunds, maxAmount, receipts, essencePayloads, payloads, maxBytes", () => {
    const options = { maxParents: 2, maxInputs: 3, maxOutputs: 4, maxDataLength: 5, maxMilestoneKeys: 6, maxMigratedFunds: 7, maxAmount: DUST_ALLOWANCE_MINIMUM + 1, receipts: false, essencePayloads: false, maxBytes: 3000 };
    for (const m of fc.sample(message(options), { numRuns: 400, seed: SEED })) {
      expect(m.parents.length).toBeLessThanOrEqual(2);
      expect(encodeMessage(m).length).toBeLessThanOrEqual(3000);
      const p = m.payload;
      if (p?.type === 0) {
        expect(p.essence.inputs.length).toBeLessThanOrEqual(3);
        expect(p.essence.outputs.length).toBeLessThanOrEqual(4);
        for (const o of p.essence.outputs) expect(o.amount).toBeLessThanOrEqual(DUST_ALLOWANCE_MINIMUM + 1);
        expect(p.essence.payload).toBeUndefined();
      } else if (p?.type === 1) {
        expect(p.parents.length).toBeLessThanOrEqual(2);
        expect(p.publicKeys.length).toBeLessThanOrEqual(6);
        expect(p.receipt).toBeUndefined();
      } else if (p?.type === 2) expect(p.data.length).toBeLessThanOrEqual(5);
    }
    for (const r of fc.sample(receiptPayload({ maxMigratedFunds: 7 }), { numRuns: 100, seed: SEED })) expect(r.funds.length).toBeLessThanOrEqual(7);
    expect(new Set(fc.sample(message({ payloads: ["milestone", "none"] }), { numRuns: 200, seed: SEED }).map((m) => m.payload?.type ?? "none"))).toEqual(new Set([1, "none"]));
    expect(fc.sample(message({ payloads: ["indexation"] }), { numRuns: 50, seed: SEED }).every((m) => m.payload?.type === 2)).toBe(true);
    expect(fc.sample(signedTransaction({ maxSigners: 1, maxInputs: 20 }), { numRuns: 30, seed: SEED }).every((t) => t.keys.length === 1 && t.inputs.length <= 20)).toBe(true);
    expect(fc.sample(malformedMessageBytes({ rules: ["Message:truncated"] }), { numRuns: 20, seed: SEED }).every((m) => m.rule.name === "Message:truncated")).toBe(true);
  });

  it("a maximum the schema forbids, a wrong kind of value or too few bytes is refused with INVALID_ARGUMENT naming the option", () => {
    const refused = (make: () => unknown, path: string): void => {
      expect(make).toThrow(expect.objectContaining({ name: "ProtocolError", code: "INVALID_ARGUMENT", path }));
    };
    refused(() => message({ maxParents: 9 }), "options.maxParents");
    refused(() => message({ maxInputs: 0 }), "options.maxInputs");
    refused(() => message({ maxBytes: 40_000 }), "options.maxBytes");
    refused(() => message({ payloads: ["transaction"], maxBytes: 100 }), "options.maxBytes");
    refused(() => message({ payloads: [] }), "options.payloads");
    refused(() => message({ payloads: ["receipt" as never] }), "options.payloads");
    refused(() => message({ receipts: "no" as never }), "options.receipts");
    refused(() => message({ maxAmount: TOTAL_SUPPLY + 1 }), "options.maxAmount");
    refused(() => signedTransaction({ maxSigners: 0 }), "options.maxSigners");
    refused(() => malformedMessageBytes({ rules: ["no such rule"] }), "options.rules");
  });
});
