// Differential check against @iota/iota.js 1.8.6: for random valid messages its serializer must produce our bytes
// and its BLAKE2b-256 our message ids. Only its encoder is trusted here; its decoder is too lenient to compare rules with.
import { Blake2b } from "@iota/crypto.js";
import { serializeMessage } from "@iota/iota.js";
import { WriteStream } from "@iota/util.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toIotaMessage } from "../bench/iota-shape.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { decodeMessage, encodeMessage } from "../src/model/codec.js";
import type { Message } from "../src/model/types.js";
import { arbMessage, arbParents, arbTransactionPayload, arbU64 } from "./arbitraries.js";
import { loadVectors, hex, toHexString } from "./helpers.js";

function iotaBytes(m: Message): Uint8Array {
  const stream = new WriteStream();
  serializeMessage(stream, toIotaMessage(m) as never);
  return stream.finalBytes();
}

describe("encodeMessage equals iota.js serializeMessage", () => {
  it("on the published vectors, decoded by us", () => {
    for (const vector of (loadVectors() as { messages: { hex: string }[] }).messages) {
      expect(toHexString(iotaBytes(decodeMessage(hex(vector.hex))))).toBe(vector.hex);
    }
  });

  it("on 2000 random valid messages of every payload kind, with the same message ids", () => {
    let compared = 0;
    const kinds = new Map<string, number>();
    fc.assert(
      fc.property(arbMessage(), (m) => {
        const ours = encodeMessage(m);
        const theirs = iotaBytes(m);
        expect(toHexString(ours)).toBe(toHexString(theirs));
        expect(toHexString(blake2b256(ours))).toBe(toHexString(Blake2b.sum256(theirs)));
        compared++;
        const kind = m.payload === undefined ? "none" : m.payload.type === 1 && m.payload.receipt !== undefined ? "milestone+receipt" : String(m.payload.type);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }),
      { numRuns: 2000 },
    );
    expect(compared).toBe(2000);
    // Every payload kind took part, receipts included.
    expect([...kinds.keys()].sort()).toEqual(["0", "1", "2", "milestone+receipt", "none"]);
  });

  it("on 50 large transactions of up to 127 inputs and 127 outputs", () => {
    const large = fc.record({
      networkId: arbU64(),
      parents: arbParents(),
      // The arbitraries reach 127 one time in twenty; here only transactions with more than 63 inputs or outputs.
      payload: arbTransactionPayload().filter((p) => p.essence.inputs.length > 63 || p.essence.outputs.length > 63),
      nonce: arbU64(),
    });
    let inputs = 0;
    let outputs = 0;
    fc.assert(
      fc.property(large, (m) => {
        const ours = encodeMessage(m);
        expect(toHexString(ours)).toBe(toHexString(iotaBytes(m)));
        inputs = Math.max(inputs, m.payload.essence.inputs.length);
        outputs = Math.max(outputs, m.payload.essence.outputs.length);
      }),
      { numRuns: 50 },
    );
    expect(inputs).toBeGreaterThan(50);
    expect(outputs).toBeGreaterThan(50);
  });
});
