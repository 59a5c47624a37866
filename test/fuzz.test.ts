// Fuzzing the decoders and encoders: whatever they are handed, they either succeed canonically or raise ProtocolError.
// Mutated valid encodings must decode to a message that re-encodes to exactly the same bytes, or be rejected; nothing else.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import {
  decodeIndexationPayload,
  decodeMessage,
  decodeMilestonePayload,
  decodePayload,
  decodeReceiptPayload,
  decodeTransactionEssence,
  decodeTransactionPayload,
  encodeMessage,
  encodeMilestonePayload,
  encodePayload,
  encodeTransactionEssence,
  encodeTransactionPayload,
} from "../src/model/codec.js";
import { selectCodecEngine } from "../src/model/interpreter.js";
import type { Message } from "../src/model/types.js";
import { arbMessage } from "./arbitraries.js";
import { arbMutation, mutate } from "./mutations.js";

/** Decodes; a success must re-encode byte-exact, a failure must be a ProtocolError with a code and a byte offset. */
function decodesCanonicallyOrRejects(bytes: Uint8Array): "accepted" | "rejected" {
  let message: Message;
  try {
    message = decodeMessage(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    const e = error as ProtocolError;
    expect(e.code).toMatch(/^[A-Z_]+$/);
    expect(typeof e.offset).toBe("number");
    expect(e.offset).toBeGreaterThanOrEqual(0);
    expect(e.offset).toBeLessThanOrEqual(bytes.length);
    return "rejected";
  }
  expect(Buffer.from(encodeMessage(message)).equals(Buffer.from(bytes))).toBe(true);
  return "accepted";
}

describe("mutated valid encodings decode canonically or raise ProtocolError", () => {
  it("byte flips, truncations, insertions, deletions and length-field tweaks of random valid messages", () => {
    const outcomes = { accepted: 0, rejected: 0 };
    fc.assert(
      fc.property(arbMessage(), fc.array(arbMutation, { minLength: 1, maxLength: 3 }), (m, mutations) => {
        outcomes[decodesCanonicallyOrRejects(mutate(encodeMessage(m), mutations))]++;
      }),
      { numRuns: 3000 },
    );
    // Both branches were exercised: some mutations keep a valid message (a flipped nonce bit), most break one.
    expect(outcomes.accepted).toBeGreaterThan(0);
    expect(outcomes.rejected).toBeGreaterThan(0);
  });

  it("a length prefix overwritten at every position with 0xffffffff decodes canonically or is rejected", () => {
    fc.assert(
      // Each message is decoded once per position, a cost that grows with the square of its length: up to 4 KiB here.
      fc.property(arbMessage({ payloads: ["transaction", "milestone"], maxBytes: 4096 }), (m) => {
        const bytes = encodeMessage(m);
        for (let at = 0; at + 4 <= bytes.length; at += 1) {
          const b = Uint8Array.from(bytes);
          new DataView(b.buffer).setUint32(at, 0xffff_ffff, true);
          decodesCanonicallyOrRejects(b);
        }
      }),
      { numRuns: 20 },
    );
  });
});

describe("arbitrary byte strings decode canonically or raise ProtocolError", () => {
  it("random bytes of any length, for every decoder", () => {
    const decoders = [decodeTransactionPayload, decodeTransactionEssence, decodeMilestonePayload, decodeIndexationPayload, decodeReceiptPayload, decodePayload];
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 400 }), (bytes) => {
        decodesCanonicallyOrRejects(bytes);
        for (const decode of decoders) {
          try {
            decode(bytes);
          } catch (error) {
            expect(error).toBeInstanceOf(ProtocolError);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("random bytes behind a plausible header (a transaction payload's type and counts)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 600 }), fc.integer({ min: 0, max: 4 }), (tail, type) => {
        const head = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 1, ...new Uint8Array(32).fill(1), 0xff, 0xff, 0, 0, type, 0, 0, 0, 0, 2, 0]);
        decodesCanonicallyOrRejects(Uint8Array.from([...head, ...tail]));
      }),
      { numRuns: 2000 },
    );
  });

  it("values that are not bytes at all", () => {
    for (const value of [undefined, null, 0, "00", [1, 2, 3], {}, new ArrayBuffer(60), new Uint16Array(60)]) {
      expect(() => decodeMessage(value as never)).toThrow(ProtocolError);
      expect(() => decodeTransactionPayload(value as never)).toThrow(ProtocolError);
    }
  });
});

describe("encoders given arbitrary values raise ProtocolError or produce bytes that decode back", () => {
  it("anything at all as a message or payload", () => {
    const encoders = [encodeMessage, encodePayload, encodeTransactionPayload, encodeTransactionEssence, encodeMilestonePayload];
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withTypedArray: true, withNullPrototype: true, withSparseArray: true }), (value) => {
        for (const encode of encoders) {
          try {
            encode(value as never);
          } catch (error) {
            expect(error).toBeInstanceOf(ProtocolError);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("valid messages with one field replaced by an arbitrary value", () => {
    const paths: ((m: Message, v: unknown) => void)[] = [
      (m, v) => ((m as unknown as Record<string, unknown>).networkId = v),
      (m, v) => ((m as unknown as Record<string, unknown>).nonce = v),
      (m, v) => ((m.parents as unknown[])[0] = v),
      (m, v) => ((m as unknown as Record<string, unknown>).payload = v),
      (m, v) => {
        if (m.payload?.type === 0) (m.payload.essence.inputs as unknown[])[0] = v;
      },
      (m, v) => {
        if (m.payload?.type === 0) (m.payload.essence.outputs[0] as unknown as Record<string, unknown>).amount = v;
      },
      (m, v) => {
        if (m.payload?.type === 0) (m.payload.unlockBlocks as unknown[])[0] = v;
      },
      (m, v) => {
        if (m.payload?.type === 1) (m.payload as unknown as Record<string, unknown>).receipt = v;
      },
    ];
    fc.assert(
      fc.property(arbMessage(), fc.nat(paths.length - 1), fc.anything({ withBigInt: true, withTypedArray: true }), (m, which, value) => {
        paths[which]!(m, value);
        let bytes: Uint8Array;
        try {
          bytes = encodeMessage(m);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          return;
        }
        expect(Buffer.from(encodeMessage(decodeMessage(bytes))).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("a model that changes while it is encoded is refused, not written half-checked", () => {
  it("parents that grow between the size pass and the write pass", () => {
    const parent = new Uint8Array(32).fill(1);
    let reads = 0;
    const message = {
      networkId: 0n,
      nonce: 0n,
      get parents(): Uint8Array[] {
        reads++;
        return reads === 1 ? [parent] : [parent, new Uint8Array(32).fill(2)];
      },
    };
    for (const engine of ["generated", "interpreted"] as const) {
      reads = 0;
      selectCodecEngine(engine);
      expect(() => encodeMessage(message as unknown as Message)).toThrow(ProtocolError);
      expect(reads).toBe(2);
    }
    selectCodecEngine();
  });

  it("index bytes that become a string between the passes", () => {
    let reads = 0;
    const payload = {
      type: 2,
      data: new Uint8Array(0),
      get index(): unknown {
        reads++;
        return reads === 1 ? new Uint8Array(4) : "a much longer index than was measured";
      },
    };
    const message = { networkId: 0n, nonce: 0n, parents: [new Uint8Array(32)], payload };
    expect(() => encodeMessage(message as unknown as Message)).toThrow(ProtocolError);
  });
});
