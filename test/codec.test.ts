// The canonical binary codec against the published vectors and as a round trip (PROTOCOL.md §2).
// Properties: decode(encode(m)) equals m for arbitrary valid models, encode(decode(b)) equals b for valid bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { blake2b256 } from "../src/crypto/blake2b.js";
import {
  decodeIndexationPayload,
  decodeMessage,
  decodeMilestonePayload,
  decodePayload,
  decodeReceiptPayload,
  decodeTransactionEssence,
  decodeTransactionPayload,
  encodeIndexationPayload,
  encodeMessage,
  encodeMilestoneEssence,
  encodeMilestonePayload,
  encodePayload,
  encodeReceiptPayload,
  encodeTransactionEssence,
  encodeTransactionPayload,
  validateMessage,
} from "../src/model/codec.js";
import { selectCodecEngine } from "../src/model/interpreter.js";
import type { Message } from "../src/model/types.js";
import {
  arbEssence,
  arbIndexationPayload,
  arbMessage,
  arbMilestonePayload,
  arbReceiptPayload,
  arbTransactionPayload,
} from "./arbitraries.js";
import { expectProtocolError, hex, loadVectors, toHexString } from "./helpers.js";

interface MessageVector {
  name: string;
  hex: string;
  messageId: string;
  notes: string;
}

const vectors = loadVectors() as { messages: MessageVector[] };

describe("published message vectors decode and re-encode byte-exact", () => {
  for (const vector of vectors.messages) {
    it(`${vector.name}: decode, re-encode to the same bytes, hash to the published message id`, () => {
      const bytes = hex(vector.hex);
      const message = decodeMessage(bytes);
      expect(message.parents.length).toBeGreaterThanOrEqual(1);
      const again = encodeMessage(message);
      expect(toHexString(again)).toBe(vector.hex);
      expect(toHexString(blake2b256(again))).toBe(vector.messageId);
    });

    it(`${vector.name}: the same bytes with one more byte appended are rejected as trailing bytes`, () => {
      const bytes = hex(vector.hex + "2a");
      expectProtocolError(() => decodeMessage(bytes), "TRAILING_BYTES", { path: "", offset: bytes.length - 1 });
    });
  }

  it("the TIP-6 indexation example holds index 'IOTA' and data 'hello world'", () => {
    const vector = vectors.messages.find((v) => v.name === "tip6-example-indexation")!;
    const message = decodeMessage(hex(vector.hex));
    expect(message.payload?.type).toBe(2);
    if (message.payload?.type !== 2) return;
    expect(Buffer.from(message.payload.index).toString()).toBe("IOTA");
    expect(Buffer.from(message.payload.data).toString()).toBe("hello world");
  });
});

describe("decode copies its input once and hands out views of that copy", () => {
  it("changing the input after decoding leaves the decoded message untouched", () => {
    const bytes = hex(vectors.messages[0]!.hex);
    const message = decodeMessage(bytes);
    const before = toHexString(message.parents[0]!);
    bytes.fill(0);
    expect(toHexString(message.parents[0]!)).toBe(before);
  });

  it("byte fields of one decoded message share one buffer", () => {
    const message = decodeMessage(hex(vectors.messages[0]!.hex));
    expect(message.parents[0]!.buffer).toBe(message.parents[1]!.buffer);
  });

  it("results carved from the shared slabs never overlap, across many slabs and both sides of the own-buffer size", () => {
    // 400 arbitrary messages (53 bytes to ~2 KiB, some 200 KB in all: several slabs), and between them indexation
    // messages around half a slab and beyond, which get buffers of their own.
    const big = (n: number): Message => ({ ...decodeMessage(hex(vectors.messages[0]!.hex)), payload: { type: 2, index: Uint8Array.of(1), data: new Uint8Array(n).fill(n & 255) } });
    const messages = fc.sample(arbMessage(), { numRuns: 400, seed: 7 });
    [16300, 16340, 16400, 20000, 30000].forEach((n, i) => messages.splice(50 + 70 * i, 0, big(n)));
    const encoded = messages.map((m) => encodeMessage(m));
    const decoded = encoded.map((b) => decodeMessage(b));
    const expected = encoded.map((b) => toHexString(b));
    const spans = encoded.map((b) => [b.buffer, b.byteOffset, b.byteOffset + b.length] as const);
    for (let i = 0; i < spans.length; i++) {
      for (let j = i + 1; j < spans.length; j++) {
        const [bi, si, ei] = spans[i]!;
        const [bj, sj, ej] = spans[j]!;
        if (bi === bj) expect(ei <= sj || ej <= si, `results ${i} and ${j} overlap`).toBe(true);
      }
    }
    // Writing every byte of every result leaves the others and every decoded model as they were.
    for (const b of encoded) b.fill(0xff);
    decoded.forEach((m, i) => expect(toHexString(encodeMessage(m))).toBe(expected[i]));
  });
});

  it("an error's offset counts from the start of the input, wherever its copy landed in a slab", () => {
    // The copy is read in place inside the shared slab: after other decodes it starts far into it, or past a fresh
    // slab's start, and the offsets must not show it. Truncating a message at k bytes fails at offset ≤ k, the same
    // offset whatever was decoded before.
    const whole = hex(vectors.messages[0]!.hex);
    const cuts = [20, 40, whole.length - 3];
    const offsets = (): (number | undefined)[] =>
      cuts.map((k) => {
        try {
          decodeMessage(whole.subarray(0, k));
        } catch (e) {
          return (e as { offset?: number }).offset;
        }
        throw new Error(`a message cut at ${k} bytes decoded`);
      });
    const first = offsets();
    first.forEach((offset, i) => expect(offset).toBeLessThanOrEqual(cuts[i]!));
    for (let i = 0; i < 300; i++) {
      decodeMessage(whole);
      if (i % 37 === 0) expect(offsets()).toEqual(first);
    }
  });

describe("round trip: decode(encode(m)) equals m and encode(decode(b)) equals b", () => {
  it("messages of every payload kind", () => {
    fc.assert(
      fc.property(arbMessage(), (m: Message) => {
        const bytes = encodeMessage(m);
        const back = decodeMessage(bytes);
        expect(back).toEqual(m);
        expect(encodeMessage(back)).toEqual(bytes);
        validateMessage(back);
      }),
      { numRuns: 300 },
    );
  });

  it("messages of every payload kind, on the interpreted engine as well", () => {
    expect(selectCodecEngine("interpreted")).toBe("interpreted");
    try {
      fc.assert(
        fc.property(arbMessage(), (m: Message) => {
          const bytes = encodeMessage(m);
          expect(decodeMessage(bytes)).toEqual(m);
        }),
        { numRuns: 200 },
      );
    } finally {
      selectCodecEngine();
    }
  });

  it("transaction payloads on their own", () => {
    fc.assert(
      fc.property(arbTransactionPayload(), (p) => {
        const bytes = encodeTransactionPayload(p);
        expect(decodeTransactionPayload(bytes)).toEqual(p);
        expect(decodePayload(bytes)).toEqual(p);
        expect(encodePayload(p)).toEqual(bytes);
      }),
      { numRuns: 100 },
    );
  });

  it("transaction essences on their own", () => {
    fc.assert(
      fc.property(arbEssence(), (e) => {
        const bytes = encodeTransactionEssence(e);
        expect(decodeTransactionEssence(bytes)).toEqual(e);
      }),
      { numRuns: 100 },
    );
  });

  it("milestone payloads, with and without receipts; the essence is the payload minus type tag and signatures", () => {
    fc.assert(
      fc.property(arbMilestonePayload(), (p) => {
        const bytes = encodeMilestonePayload(p);
        expect(decodeMilestonePayload(bytes)).toEqual(p);
        const essence = encodeMilestoneEssence(p);
        const signaturesLength = 1 + 64 * p.signatures.length;
        expect(toHexString(essence)).toBe(toHexString(bytes.subarray(4, bytes.length - signaturesLength)));
      }),
      { numRuns: 100 },
    );
  });

  it("receipts and indexation payloads on their own", () => {
    fc.assert(
      fc.property(arbReceiptPayload(), arbIndexationPayload(), (receipt, indexation) => {
        expect(decodeReceiptPayload(encodeReceiptPayload(receipt))).toEqual(receipt);
        expect(decodeIndexationPayload(encodeIndexationPayload(indexation))).toEqual(indexation);
      }),
      { numRuns: 100 },
    );
  });
});
