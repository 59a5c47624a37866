// Building and signing transactions, the signature part of semantic validation (PROTOCOL.md §3, §4),
// and milestone signatures (TIP-8).
import { Ed25519 } from "@iota/crypto.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareBytes } from "../src/bytes/bytes.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { ed25519Address } from "../src/crypto/address.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { ed25519PublicKey, signEd25519 } from "../src/crypto/ed25519.js";
import { decodeTransactionPayload, encodePayload, encodeTransactionPayload, sortInputs, sortOutputs } from "../src/model/codec.js";
import { essenceHash } from "../src/model/ids.js";
import { milestoneEssenceHash, signMilestone, verifyMilestoneSignatures } from "../src/model/milestone.js";
import { assertTransactionSignatures, buildTransactionPayload, buildTransactionPayloadAsync, type InputToSign, verifyTransactionSignatures } from "../src/model/transaction.js";
import type { MilestonePayload, Output, TransactionPayload, UtxoInput } from "../src/model/types.js";
import { arbMilestonePayload } from "./arbitraries.js";
import { expectProtocolError, toHexString } from "./helpers.js";

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const seedOf = (label: string): Uint8Array => blake2b256(text(`seed ${label}`));
const txId = (label: string): Uint8Array => blake2b256(text(`tx ${label}`));
const addressOfSeed = (seed: Uint8Array): Uint8Array => ed25519Address(ed25519PublicKey(seed));

const seedA = seedOf("A");
const seedB = seedOf("B");
const outputs: Output[] = [
  { type: 1, address: { type: 0, address: addressOfSeed(seedA) }, amount: 1_000_000 },
  { type: 0, address: { type: 0, address: addressOfSeed(seedB) }, amount: 3_000_000 },
  { type: 0, address: { type: 0, address: addressOfSeed(seedA) }, amount: 42 },
];
const inputs: InputToSign[] = [
  { transactionId: txId("3"), transactionOutputIndex: 0, seed: seedA },
  { transactionId: txId("1"), transactionOutputIndex: 126, seed: seedB },
  { transactionId: txId("1"), transactionOutputIndex: 2, seed: seedA },
  { transactionId: txId("2"), transactionOutputIndex: 1, seed: seedA },
];

/** The ledger of the tests: every input's output belongs to the address of the seed that spends it. */
function ledgerOf(spec: InputToSign[]): (input: UtxoInput) => Uint8Array | undefined {
  const owners = new Map<string, Uint8Array>();
  for (const i of spec) {
    const id = i.transactionId instanceof Uint8Array ? toHexString(i.transactionId) : i.transactionId.toLowerCase();
    owners.set(`${id}:${i.transactionOutputIndex}`, "seed" in i ? addressOfSeed(i.seed) : ed25519Address("publicKey" in i ? i.publicKey : i.signer.publicKey));
  }
  return (input) => owners.get(`${toHexString(input.transactionId)}:${input.transactionOutputIndex}`);
}

const serializedInput = (i: UtxoInput): Uint8Array => Uint8Array.of(0, ...i.transactionId, i.transactionOutputIndex & 0xff, i.transactionOutputIndex >> 8);

describe("buildTransactionPayload sorts inputs and outputs by their serialized form", () => {
  const payload = buildTransactionPayload({ inputs, outputs });
  it("inputs ascend by type, transaction id, then the index's little-endian bytes", () => {
    const sorted = payload.essence.inputs.map(serializedInput);
    for (let i = 1; i < sorted.length; i++) expect(compareBytes(sorted[i - 1]!, sorted[i]!)).toBeLessThan(0);
    // Two outputs of one transaction: the lower index first (given in the other order).
    const sameTx = payload.essence.inputs.filter((i) => toHexString(i.transactionId) === toHexString(txId("1"))).map((i) => i.transactionOutputIndex);
    expect(sameTx).toEqual([2, 126]);
  });
  it("outputs ascend by type, then address, then amount", () => {
    expect(payload.essence.outputs.map((o) => o.type)).toEqual([0, 0, 1]);
    expect(compareBytes(payload.essence.outputs[0]!.address.address, payload.essence.outputs[1]!.address.address)).toBeLessThan(0);
  });
  it("decodes to itself: the result passes every syntactic rule", () => {
    expect(decodeTransactionPayload(encodeTransactionPayload(payload))).toEqual(payload);
  });
});

describe("buildTransactionPayload signs the essence hash once per distinct key and references it after", () => {
  const payload = buildTransactionPayload({ inputs, outputs, indexation: { type: 2, index: text("spend"), data: text("rent") } });
  it("writes one signature unlock block per key, at its first input, and references for the others", () => {
    const hash = essenceHash(payload.essence);
    const owner = ledgerOf(inputs);
    const firstOf = new Map<string, number>();
    payload.unlockBlocks.forEach((block, i) => {
      const address = toHexString(owner(payload.essence.inputs[i]!)!);
      if (!firstOf.has(address)) {
        firstOf.set(address, i);
        expect(block.type).toBe(0);
        if (block.type === 0) {
          expect(toHexString(ed25519Address(block.signature.publicKey))).toBe(address);
          // Ed25519 over the 32-byte hash, checked by iota.js's own verifier.
          expect(Ed25519.verify(block.signature.publicKey, hash, block.signature.signature)).toBe(true);
        }
      } else {
        expect(block).toEqual({ type: 1, reference: firstOf.get(address) });
      }
    });
    expect(payload.unlockBlocks.filter((b) => b.type === 0)).toHaveLength(2);
    expect(payload.essence.payload).toEqual({ type: 2, index: text("spend"), data: text("rent") });
  });
  it("verifies with verifyTransactionSignatures", () => {
    expect(verifyTransactionSignatures(payload, ledgerOf(inputs))).toEqual({ valid: true });
  });
  it("holds for arbitrary inputs spread over a few keys", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ tx: fc.uint8Array({ minLength: 32, maxLength: 32 }), index: fc.integer({ min: 0, max: 126 }), key: fc.integer({ min: 0, max: 3 }) }), {
          minLength: 1,
          maxLength: 8,
          selector: (r) => `${toHexString(r.tx)}:${r.index}`,
        }),
        (spec) => {
          const list: InputToSign[] = spec.map((s) => ({ transactionId: s.tx, transactionOutputIndex: s.index, seed: seedOf(`k${s.key}`) }));
          const p = buildTransactionPayload({ inputs: list, outputs: [outputs[1]!] });
          expect(p.unlockBlocks.filter((b) => b.type === 0)).toHaveLength(new Set(spec.map((s) => s.key)).size);
          expect(verifyTransactionSignatures(p, ledgerOf(list))).toEqual({ valid: true });
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("the sign hook lets keys live elsewhere (hardware wallets, remote signers)", () => {
  const bySeed = buildTransactionPayload({ inputs, outputs });
  const keyOf = (seed: Uint8Array) => ed25519PublicKey(seed);
  const seeds = new Map([seedA, seedB].map((s) => [toHexString(keyOf(s)), s]));
  it("a signer object, a public key with the sign option, and an async signer give the same payload as the seeds", async () => {
    const viaSigner = buildTransactionPayload({
      inputs: inputs.map((i) => ({ transactionId: i.transactionId, transactionOutputIndex: i.transactionOutputIndex, signer: { publicKey: keyOf((i as { seed: Uint8Array }).seed), sign: (h: Uint8Array) => signEd25519((i as { seed: Uint8Array }).seed, h) } })),
      outputs,
    });
    const asked: string[] = [];
    const viaHook = buildTransactionPayload({
      inputs: inputs.map((i) => ({ transactionId: i.transactionId, transactionOutputIndex: i.transactionOutputIndex, publicKey: keyOf((i as { seed: Uint8Array }).seed) })),
      outputs,
      sign: (publicKey, hash) => {
        asked.push(toHexString(publicKey));
        return signEd25519(seeds.get(toHexString(publicKey))!, hash);
      },
    });
    const viaAsync = await buildTransactionPayloadAsync({
      inputs: inputs.map((i) => ({ transactionId: toHexString(i.transactionId as Uint8Array).toUpperCase(), transactionOutputIndex: i.transactionOutputIndex, publicKey: keyOf((i as { seed: Uint8Array }).seed) })),
      outputs,
      sign: async (publicKey, hash) => signEd25519(seeds.get(toHexString(publicKey))!, hash),
    });
    expect(viaSigner).toEqual(bySeed);
    expect(viaHook).toEqual(bySeed);
    expect(viaAsync).toEqual(bySeed);
    expect(asked).toHaveLength(2);
  });
  it("refuses a signature that does not verify (a device that signed something else)", () => {
    const liar = { publicKey: keyOf(seedA), sign: (h: Uint8Array) => signEd25519(seedB, h) };
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, signer: liar }], outputs }), "INVALID_SIGNATURE", { path: "signers[0]" });
    const short = { publicKey: keyOf(seedA), sign: () => new Uint8Array(63) };
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, signer: short }], outputs }), "INVALID_SIGNATURE");
  });
  it("refuses an async signer in the synchronous builder, and bad keys and arguments with their paths", () => {
    const slow = { publicKey: keyOf(seedA), sign: async (h: Uint8Array) => signEd25519(seedA, h) } as unknown as { publicKey: Uint8Array; sign(h: Uint8Array): Uint8Array };
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, signer: slow }], outputs }), "INVALID_ARGUMENT", { path: "signers[0]" });
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, publicKey: new Uint8Array(31) }], outputs, sign: () => new Uint8Array(64) }), "INVALID_KEY", { path: "inputs[0].publicKey" });
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, publicKey: keyOf(seedA) }], outputs }), "INVALID_ARGUMENT", { path: "sign" });
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: "zz", transactionOutputIndex: 0, seed: seedA }], outputs }), "INVALID_HEX", { path: "inputs[0].transactionId" });
    expectProtocolError(() => buildTransactionPayload({ inputs: [{ transactionId: txId("x"), transactionOutputIndex: 0, seed: new Uint8Array(5) }], outputs }), "INVALID_KEY", { path: "inputs[0].seed" });
  });
  it("applies the syntactic rules: no inputs, a duplicate input, a dust allowance below the minimum", () => {
    expectProtocolError(() => buildTransactionPayload({ inputs: [], outputs }), "COUNT_OUT_OF_RANGE");
    expectProtocolError(() => buildTransactionPayload({ inputs: [inputs[0]!, inputs[0]!], outputs }), "DUPLICATE");
    expectProtocolError(() => buildTransactionPayload({ inputs, outputs: [{ type: 1, address: { type: 0, address: addressOfSeed(seedA) }, amount: 999_999 }] }), "VALUE_OUT_OF_RANGE");
  });
});

describe("verifyTransactionSignatures: the signature part of semantic validation", () => {
  const payload = buildTransactionPayload({ inputs, outputs });
  const owner = ledgerOf(inputs);
  const copy = (): TransactionPayload => decodeTransactionPayload(encodeTransactionPayload(payload));
  const firstRef = payload.unlockBlocks.findIndex((b) => b.type === 1);
  const sigOfB = payload.unlockBlocks.findIndex((b, i) => b.type === 0 && toHexString(owner(payload.essence.inputs[i]!)!) === toHexString(addressOfSeed(seedB)));

  it("reports an input whose output is unknown", () => {
    expect(verifyTransactionSignatures(payload, (input, i) => (i === 2 ? undefined : owner(input)))).toMatchObject({ valid: false, code: "INPUT_NOT_FOUND", path: "essence.inputs[2]", index: 2 });
  });
  it("a signature unlock's BLAKE2b-256(publicKey) must equal the consumed output's address", () => {
    expect(verifyTransactionSignatures(payload, (input, i) => (i === sigOfB ? addressOfSeed(seedA) : owner(input)))).toMatchObject({ valid: false, code: "ADDRESS_MISMATCH", path: `unlockBlocks[${sigOfB}].signature.publicKey` });
  });
  it("the signature must verify over the essence hash", () => {
    const bad = copy();
    const block = bad.unlockBlocks[sigOfB]!;
    if (block.type === 0) block.signature.signature[5]! ^= 0x10;
    expect(verifyTransactionSignatures(bad, owner)).toMatchObject({ valid: false, code: "INVALID_SIGNATURE", path: `unlockBlocks[${sigOfB}].signature.signature`, index: sigOfB });
    expectProtocolError(() => assertTransactionSignatures(bad, owner, "payload"), "INVALID_SIGNATURE", { path: `payload.unlockBlocks[${sigOfB}].signature.signature` });
    // A changed essence invalidates every signature.
    const changed = copy();
    changed.essence.outputs[0]!.amount += 1;
    expect(verifyTransactionSignatures(changed, owner)).toMatchObject({ valid: false, code: "INVALID_SIGNATURE" });
  });
  it("a reference must point back at a signature block of the same address", () => {
    const toLater = copy();
    toLater.unlockBlocks[firstRef] = { type: 1, reference: firstRef + 1 };
    expect(verifyTransactionSignatures(toLater, owner)).toMatchObject({ valid: false, code: "INVALID_REFERENCE", path: `unlockBlocks[${firstRef}].reference` });
    const toOther = copy();
    toOther.unlockBlocks[firstRef] = { type: 1, reference: sigOfB };
    const result = verifyTransactionSignatures(toOther, owner);
    expect(result).toMatchObject({ valid: false, path: `unlockBlocks[${firstRef}].reference` });
    expect(["ADDRESS_MISMATCH", "INVALID_REFERENCE"]).toContain((result as { code: string }).code);
  });
  it("inputs sharing an address share one signature block: a second signature block for it is refused", () => {
    const twice = copy();
    const target = (twice.unlockBlocks[firstRef] as { reference: number }).reference;
    twice.unlockBlocks[firstRef] = twice.unlockBlocks[target]!;
    expect(verifyTransactionSignatures(twice, owner)).toMatchObject({ valid: false, code: "DUPLICATE", path: `unlockBlocks[${firstRef}]` });
  });
  it("needs one unlock block per input", () => {
    const short = copy();
    short.unlockBlocks.pop();
    expect(verifyTransactionSignatures(short, owner)).toMatchObject({ valid: false, code: "COUNT_OUT_OF_RANGE", path: "unlockBlocks" });
  });
  it("agrees with iota.js's Ed25519 on each signature of an honest transaction", () => {
    const hash = essenceHash(payload.essence);
    for (const block of payload.unlockBlocks) if (block.type === 0) expect(Ed25519.verify(block.signature.publicKey, hash, block.signature.signature)).toBe(true);
  });
});

describe("milestone signatures: Ed25519 over BLAKE2b-256 of the milestone essence (TIP-8)", () => {
  const seeds = ["m1", "m2", "m3"].map(seedOf);
  const keys = seeds.map(ed25519PublicKey);
  const order = keys.map((k, i) => i).sort((a, b) => compareBytes(keys[a]!, keys[b]!));
  const signed = (m: MilestonePayload, use = order): MilestonePayload => {
    const base = { ...m, publicKeys: use.map((i) => keys[i]!), signatures: use.map(() => new Uint8Array(64)) };
    return { ...base, signatures: use.map((i) => signMilestone(base, seeds[i]!)) };
  };

  it("the essence is the payload without its type tag and signatures", () => {
    fc.assert(
      fc.property(arbMilestonePayload(), (m) => {
        const bytes = encodePayload(m);
        const essence = bytes.subarray(4, bytes.length - 1 - 64 * m.signatures.length);
        expect(milestoneEssenceHash(m)).toEqual(blake2b256(essence));
      }),
      { numRuns: 50 },
    );
  });
  it("verifies signatures made by the applicable keys, for arbitrary milestones", () => {
    fc.assert(
      fc.property(arbMilestonePayload(), (m) => {
        const s = signed(m);
        expect(verifyMilestoneSignatures(s, { publicKeys: keys, threshold: 3 })).toEqual({ valid: true });
        // The signatures do not cover themselves: changing one signature leaves the hash unchanged.
        expect(milestoneEssenceHash({ ...s, signatures: s.signatures.map(() => new Uint8Array(64)) })).toEqual(milestoneEssenceHash(s));
      }),
      { numRuns: 10 },
    );
  });
  const [m] = fc.sample(arbMilestonePayload(), { numRuns: 1, seed: 7 });
  it("refuses a key outside the applicable set", () => {
    expect(verifyMilestoneSignatures(signed(m!), { publicKeys: keys.slice(0, 2) })).toMatchObject({ valid: false, code: "UNKNOWN_KEY" });
  });
  it("refuses fewer keys than the threshold", () => {
    expect(verifyMilestoneSignatures(signed(m!, order.slice(0, 1)), { publicKeys: keys, threshold: 2 })).toMatchObject({ valid: false, code: "COUNT_OUT_OF_RANGE", path: "publicKeys" });
  });
  it("refuses a signature over other bytes, a changed essence and a signature count that differs from the keys", () => {
    const s = signed(m!);
    const flipped = { ...s, signatures: s.signatures.map((x, i) => (i === 1 ? Uint8Array.from(x, (b, j) => (j === 0 ? b ^ 1 : b)) : x)) };
    expect(verifyMilestoneSignatures(flipped, { publicKeys: keys })).toMatchObject({ valid: false, code: "INVALID_SIGNATURE", path: "signatures[1]", index: 1 });
    // (>>> 0: an index of 2^31 or more stays a u32 when its lowest bit flips.)
    expect(verifyMilestoneSignatures({ ...s, index: (s.index ^ 1) >>> 0 }, { publicKeys: keys })).toMatchObject({ valid: false, code: "INVALID_SIGNATURE", path: "signatures[0]" });
    expect(verifyMilestoneSignatures({ ...s, signatures: s.signatures.slice(1) }, { publicKeys: keys })).toMatchObject({ valid: false, code: "COUNT_OUT_OF_RANGE", path: "signatures" });
    // Signing the raw essence bytes instead of their hash does not verify.
    const raw = { ...s, signatures: order.map((i) => signEd25519(seeds[i]!, encodePayload(s).subarray(4, encodePayload(s).length - 1 - 64 * 3))) };
    expect(verifyMilestoneSignatures(raw, { publicKeys: keys })).toMatchObject({ valid: false, code: "INVALID_SIGNATURE" });
  });
  it("refuses a threshold outside 1 .. the number of applicable keys", () => {
    expectProtocolError(() => verifyMilestoneSignatures(signed(m!), { publicKeys: keys, threshold: 4 }), "INVALID_ARGUMENT", { path: "threshold" });
    expectProtocolError(() => verifyMilestoneSignatures(signed(m!), { publicKeys: keys, threshold: 0 }), "INVALID_ARGUMENT", { path: "threshold" });
  });
});

describe("verifyTransactionSignatures on something that is not a transaction model raises ProtocolError, nothing else", () => {
  it("for missing fields, wrong types and arbitrary values", () => {
    const owner = (): Uint8Array => new Uint8Array(32);
    for (const value of [null, {}, { essence: {} }, { essence: { inputs: [{}] }, unlockBlocks: [{ type: 0 }] }, { type: 0, essence: { type: 0, inputs: [], outputs: [] }, unlockBlocks: [] }]) {
      expect(() => verifyTransactionSignatures(value as unknown as TransactionPayload, owner)).toThrow(ProtocolError);
    }
    fc.assert(
      fc.property(fc.anything(), (value) => {
        try {
          verifyTransactionSignatures(value as TransactionPayload, owner);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("verifyMilestoneSignatures on something that is not a milestone model raises ProtocolError, nothing else", () => {
  it("for arbitrary values and key sets", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (value, keys) => {
        try {
          verifyMilestoneSignatures(value as MilestonePayload, { publicKeys: keys as Uint8Array[] });
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("sortInputs and sortOutputs refuse what is not an array with a ProtocolError", () => {
  it("a number, a string, null or an object is INVALID_ARGUMENT naming the path", () => {
    for (const bad of [5, "inputs", null, {}]) {
      expect(() => sortInputs(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", path: "inputs" }));
      expect(() => sortOutputs(bad as never, "essence.outputs")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", path: "essence.outputs" }));
    }
  });
});
