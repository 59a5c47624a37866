// Identifiers (PROTOCOL.md §4): message id, transaction id, essence hash, output id, network id.
// Each is checked against bytes cut out of the encoded message by hand and against iota.js 1.8.6's BLAKE2b.
import { Blake2b } from "@iota/crypto.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBLAKE2b } from "hash-wasm";
import { blake2b256, blake2b256Js, blake2bImplementation } from "../src/crypto/blake2b.js";
import { decodeMessage, encodeMessage } from "../src/model/codec.js";
import { essenceHash, messageId, networkId, outputId, parseOutputId, transactionId } from "../src/model/ids.js";
import type { TransactionPayload } from "../src/model/types.js";
import { arbMessage, arbTransactionPayload } from "./arbitraries.js";
import { expectProtocolError, hex, loadVectors, toHexString } from "./helpers.js";

const vectors = loadVectors();

/** The payload bytes of an encoded message, cut out by the layout of PROTOCOL.md §2 (not by the codec). */
function payloadBytesOf(message: Uint8Array): Uint8Array {
  const parents = message[8]!;
  const at = 8 + 1 + 32 * parents;
  const length = new DataView(message.buffer, message.byteOffset).getUint32(at, true);
  return message.subarray(at + 4, at + 4 + length);
}

const unlockBlocksLength = (p: TransactionPayload): number => 2 + p.unlockBlocks.reduce((n, b) => n + (b.type === 0 ? 98 : 3), 0);

describe("message id: BLAKE2b-256 of the whole serialized message, nonce included", () => {
  for (const v of vectors.messages) {
    it(`gives the published id of ${v.name}, from the bytes and from the model`, () => {
      expect(messageId(hex(v.hex))).toBe(v.messageId);
      expect(messageId(decodeMessage(hex(v.hex)))).toBe(v.messageId);
    });
  }
  it("equals iota.js's BLAKE2b-256 of the encoded bytes for arbitrary messages", () => {
    fc.assert(
      fc.property(arbMessage(), (m) => {
        const bytes = encodeMessage(m);
        expect(messageId(m)).toBe(toHexString(Blake2b.sum256(bytes)));
        expect(messageId(bytes)).toBe(messageId(m));
      }),
      { numRuns: 100 },
    );
  });
  it("refuses a model that breaks a syntactic rule", () => {
    expectProtocolError(() => messageId({ networkId: 0n, parents: [], nonce: 0n }), "COUNT_OUT_OF_RANGE");
  });
});

describe("transaction id: BLAKE2b-256 of the transaction payload from its u32 type tag on, unlock blocks included", () => {
  it("hashes exactly the payload bytes inside the message (no length prefix)", () => {
    fc.assert(
      fc.property(arbTransactionPayload(), fc.uint8Array({ minLength: 32, maxLength: 32 }), (payload, parent) => {
        const bytes = encodeMessage({ networkId: 1n, parents: [parent], payload, nonce: 0n });
        const payloadBytes = payloadBytesOf(bytes);
        expect(payloadBytes.subarray(0, 4)).toEqual(Uint8Array.of(0, 0, 0, 0));
        expect(transactionId(payload)).toBe(toHexString(Blake2b.sum256(payloadBytes)));
      }),
      { numRuns: 100 },
    );
  });
});

describe("essence hash: BLAKE2b-256 of the serialized essence, what signature unlock blocks sign", () => {
  it("hashes the bytes between the payload type and the unlock blocks", () => {
    fc.assert(
      fc.property(arbTransactionPayload(), (payload) => {
        const bytes = encodeMessage({ networkId: 1n, parents: [new Uint8Array(32)], payload, nonce: 0n });
        const payloadBytes = payloadBytesOf(bytes);
        const essence = payloadBytes.subarray(4, payloadBytes.length - unlockBlocksLength(payload));
        expect(essenceHash(payload.essence)).toEqual(blake2b256(essence));
        expect(essenceHash(payload.essence).length).toBe(32);
      }),
      { numRuns: 100 },
    );
  });
});

describe("output id: transaction id followed by the output index as u16 little-endian, 68 hex characters", () => {
  const tx = "ab".repeat(32);
  it("appends the index little-endian", () => {
    expect(outputId(tx, 0)).toBe(`${tx}0000`);
    expect(outputId(tx, 1)).toBe(`${tx}0100`);
    expect(outputId(tx, 126)).toBe(`${tx}7e00`);
    expect(outputId(tx, 5)).toHaveLength(68);
  });
  it("takes the transaction id as bytes or hex of either case, and answers in lowercase", () => {
    expect(outputId(tx.toUpperCase(), 3)).toBe(`${tx}0300`);
    expect(outputId(hex(tx), 3)).toBe(`${tx}0300`);
  });
  it("parses back what it writes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.integer({ min: 0, max: 126 }), (id, index) => {
        const text = outputId(id, index);
        expect(parseOutputId(text)).toEqual({ transactionId: toHexString(id), index });
        expect(parseOutputId(text.toUpperCase())).toEqual({ transactionId: toHexString(id), index });
      }),
    );
  });
  it("rejects ids of the wrong length or alphabet and indices outside 0 .. 126", () => {
    expectProtocolError(() => parseOutputId(`${tx}000`), "INVALID_HEX", { path: "outputId" });
    expectProtocolError(() => parseOutputId(`${tx}00zz`), "INVALID_HEX", { path: "outputId" });
    expectProtocolError(() => parseOutputId(`${tx}7f00`), "VALUE_OUT_OF_RANGE", { path: "outputId" });
    expectProtocolError(() => parseOutputId(`${tx}0001`), "VALUE_OUT_OF_RANGE", { path: "outputId" });
    expectProtocolError(() => parseOutputId(5 as unknown as string), "INVALID_HEX", { path: "outputId" });
    expectProtocolError(() => outputId(tx, 127), "VALUE_OUT_OF_RANGE", { path: "index" });
    expectProtocolError(() => outputId(tx, -1), "VALUE_OUT_OF_RANGE", { path: "index" });
    expectProtocolError(() => outputId(tx, 1.5), "INVALID_ARGUMENT", { path: "index" });
    expectProtocolError(() => outputId(new Uint8Array(31), 0), "LENGTH_OUT_OF_RANGE", { path: "transactionId" });
    expectProtocolError(() => outputId("ab", 0), "INVALID_HEX", { path: "transactionId" });
  });
  it("never raises anything but ProtocolError on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        try {
          parseOutputId(text);
        } catch (error) {
          expect((error as Error).name).toBe("ProtocolError");
        }
      }),
    );
  });
});

describe("network id: the first 8 bytes of BLAKE2b-256 of the UTF-8 network name, little-endian", () => {
  for (const v of vectors.networkIds) {
    it(`${v.name} → ${v.id}`, () => expect(networkId(v.name).toString()).toBe(v.id));
  }
  it("reads the digest as iota.js does for any name", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), (name) => {
        const digest = Blake2b.sum256(new TextEncoder().encode(name));
        let expected = 0n;
        for (let i = 7; i >= 0; i--) expected = (expected << 8n) | BigInt(digest[i]!);
        expect(networkId(name)).toBe(expected);
      }),
    );
  });
  it("rejects a name that is not a string", () => {
    expectProtocolError(() => networkId(7 as unknown as string), "INVALID_ARGUMENT", { path: "name" });
  });
});

describe("BLAKE2b-256 under every id: the WebAssembly kernel equals the reference at every block boundary", () => {
  it("runs our kernel in Node", () => expect(blake2bImplementation).toBe("kernel"));
  it("agrees with @noble/hashes and hash-wasm on lengths around the 128-byte blocks and on large inputs", async () => {
    const hasher = await createBLAKE2b(256);
    for (const n of [0, 1, 3, 64, 111, 127, 128, 129, 255, 256, 257, 383, 384, 385, 1000, 32 * 1024, 32 * 1024 + 1, 200_000]) {
      const input = Uint8Array.from({ length: n }, (_, i) => (i * 151 + n) & 0xff);
      const ours = toHexString(blake2b256(input));
      expect(ours, `length ${n}`).toBe(toHexString(blake2b256Js(input)));
      expect(ours, `length ${n}`).toBe(hasher.init().update(input).digest("hex"));
    }
  });
  it("agrees on arbitrary inputs, and a small hash after a large one is unaffected by leftovers in memory", () => {
    blake2b256(new Uint8Array(100_000).fill(0xff));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 700 }), (bytes) => {
        expect(blake2b256(bytes)).toEqual(blake2b256Js(bytes));
      }),
    );
  });
});
