// The generated codec (codecs.generated.ts, written at build time) against the schema interpreter (interpreter.ts),
// the oracle: on every valid and every malformed input, binary and JSON, both directions, they must give the same
// value or the same error (code, path, byte offset and message). 10,000 cases each.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { malformedMessageBytes } from "../src/arbitraries/index.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { MAX_MESSAGE_LENGTH } from "../src/bytes/limits.js";
import { type CodecTables, decodeWith, encodeWith, fromJsonWith, toJsonWith, validateWith } from "../src/model/engine.js";
import { generatedTables as generated, interpretedTables as interpreted } from "../src/model/interpreter.js";
import { READ_ROOTS, WRITE_ROOTS } from "../src/model/roots.js";
import type { Message } from "../src/model/types.js";
import { arbEssence, arbIndexationPayload, arbMessage, arbMilestonePayload, arbReceiptPayload, arbTransactionPayload } from "./arbitraries.js";
import { arbMutation, mutate } from "./mutations.js";

const RUNS = 10_000;

/** A value, or the refusal: only ProtocolError may escape either engine. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { code: error.code, path: error.path, offset: error.offset, message: error.message };
  }
}

let refused = 0;
let accepted = 0;

/** Runs `use` on both engines' codecs and demands the same outcome; counts refusals so a test can show it saw both kinds. */
function agree(use: (engine: CodecTables) => unknown): void {
  const expected = outcome(() => use(interpreted));
  expect(outcome(() => use(generated))).toEqual(expected);
  if ((expected as { code?: string }).code === undefined) accepted++;
  else refused++;
}

function counting(body: () => void): { accepted: number; refused: number } {
  accepted = 0;
  refused = 0;
  body();
  return { accepted, refused };
}

/** Every (object, key) of a model or JSON value, to replace or remove one of them. */
function places(value: unknown, out: { parent: Record<string | number, unknown>; key: string | number }[] = []): typeof out {
  if (value instanceof Uint8Array || typeof value !== "object" || value === null) return out;
  for (const [key, child] of Object.entries(value)) {
    out.push({ parent: value as Record<string, unknown>, key: Array.isArray(value) ? Number(key) : key });
    places(child, out);
  }
  return out;
}


const encode = (root: (typeof WRITE_ROOTS)[number], value: unknown): Uint8Array => encodeWith(generated.sizers[root], generated.writers[root], value);

const arbEncoded = fc.oneof(
  arbMessage().map((m) => ({ root: "message" as const, bytes: encode("message", m) })),
  arbTransactionPayload().map((p) => ({ root: "transactionPayload" as const, bytes: encode("transactionPayload", p) })),
  arbEssence().map((e) => ({ root: "transactionEssence" as const, bytes: encode("transactionEssence", e) })),
  arbMilestonePayload().map((p) => ({ root: "milestonePayload" as const, bytes: encode("milestonePayload", p) })),
  arbReceiptPayload().map((p) => ({ root: "receiptPayload" as const, bytes: encode("receiptPayload", p) })),
  arbIndexationPayload().map((p) => ({ root: "indexationPayload" as const, bytes: encode("indexationPayload", p) })),
);

describe("binary: the generated decoder agrees with the interpreter", () => {
  it("on valid encodings of every object, mutated 0 to 3 times", () => {
    const seen = counting(() =>
      fc.assert(
        fc.property(arbEncoded, fc.array(arbMutation, { maxLength: 3 }), ({ root, bytes }, mutations) => {
          const input = mutate(bytes, mutations);
          agree((c) => decodeWith(c.readers[root], input));
        }),
        { numRuns: RUNS },
      ),
    );
    expect(seen.accepted).toBeGreaterThan(RUNS / 10);
    expect(seen.refused).toBeGreaterThan(RUNS / 10);
  });

  it("on malformed messages breaking one rule each (chrysalis-core/arbitraries): both refuse, with that rule's code", () => {
    fc.assert(
      fc.property(malformedMessageBytes(), ({ bytes, rule }) => {
        const before = refused;
        agree((c) => decodeWith(c.readers.message, bytes));
        expect(refused, rule.name).toBe(before + 1);
        // The message's own length bounds are decodeMessage's (codec.ts), not the schema's.
        if (!rule.name.startsWith("Message:length")) expect(outcome(() => decodeWith(generated.readers.message, bytes)), rule.name).toMatchObject({ code: rule.code });
      }),
      { numRuns: 2000 },
    );
  });

  it("on random bytes, for every object decoded on its own", () => {
    fc.assert(
      fc.property(fc.constantFrom(...READ_ROOTS), fc.uint8Array({ maxLength: 400 }), (root, bytes) => agree((c) => decodeWith(c.readers[root], bytes))),
      { numRuns: RUNS },
    );
  });
});

describe("binary: the generated encoder and validator agree with the interpreter", () => {
  it("on valid messages, and on valid messages with one value anywhere replaced by anything or removed", () => {
    const seen = counting(() =>
      fc.assert(
        fc.property(arbMessage(), fc.nat(), fc.option(fc.anything({ withBigInt: true, withTypedArray: true, withNullPrototype: true }), { freq: 4 }), (m, which, value) => {
          const model = structuredClone(m) as unknown as Record<string, unknown>;
          const all = places(model);
          const place = all[which % all.length]!;
          if (which % 5 !== 0) {
            if (value === null) delete place.parent[place.key];
            else place.parent[place.key] = value;
          }
          agree((c) => Buffer.from(encodeWith(c.sizers.message, c.writers.message, model, "", MAX_MESSAGE_LENGTH)).toString("hex"));
          agree((c) => validateWith(c.sizers.message, c.writers.message, model, "", MAX_MESSAGE_LENGTH));
        }),
        { numRuns: RUNS },
      ),
    );
    expect(seen.accepted).toBeGreaterThan(RUNS / 10);
    expect(seen.refused).toBeGreaterThan(RUNS / 10);
  });

  it("on anything at all in place of a model, for every object encoded on its own", () => {
    fc.assert(
      fc.property(fc.constantFrom(...WRITE_ROOTS), fc.anything({ withBigInt: true, withTypedArray: true }), (root, value) => agree((c) => encodeWith(c.sizers[root], c.writers[root], value))),
      { numRuns: RUNS },
    );
  });
});

describe("JSON: the generated reader and writer agree with the interpreter", () => {
  it("on valid message JSON with one value anywhere replaced by any JSON value or removed", () => {
    const seen = counting(() =>
      fc.assert(
        fc.property(arbMessage(), fc.nat(), fc.option(fc.jsonValue(), { freq: 4 }), (m, which, value) => {
          const json = JSON.parse(JSON.stringify(toJsonWith(generated.jsonWriters.message, m))) as Record<string, unknown>;
          const all = places(json);
          const place = all[which % all.length]!;
          if (which % 5 !== 0) {
            if (value === null) delete place.parent[place.key];
            else place.parent[place.key] = value;
          }
          agree((c) => fromJsonWith(c.jsonReaders.message, c.sizers.message, c.writers.message, json, "", MAX_MESSAGE_LENGTH));
        }),
        { numRuns: RUNS },
      ),
    );
    expect(seen.accepted).toBeGreaterThan(RUNS / 10);
    expect(seen.refused).toBeGreaterThan(RUNS / 10);
  });

  it("on any JSON-like value, for the message and the payload", () => {
    fc.assert(
      fc.property(fc.constantFrom("message" as const, "messagePayload" as const), fc.anything({ withBigInt: true, withNullPrototype: true, withObjectString: true }), (root, value) =>
        agree((c) => fromJsonWith(c.jsonReaders[root], c.sizers[root], c.writers[root], value)),
      ),
      { numRuns: RUNS },
    );
  });

  it("writing the JSON of valid messages, which reads back to the same message", () => {
    fc.assert(
      fc.property(arbMessage(), (m: Message) => {
        const text = JSON.stringify(toJsonWith(generated.jsonWriters.message, m));
        expect(text).toBe(JSON.stringify(toJsonWith(interpreted.jsonWriters.message, m)));
        // Compared as the bytes they encode to (a deep comparison of the models costs more than everything else here).
        agree((c) => {
          const back = fromJsonWith(c.jsonReaders.message, c.sizers.message, c.writers.message, JSON.parse(text), "", MAX_MESSAGE_LENGTH);
          return Buffer.from(encodeWith(c.sizers.message, c.writers.message, back)).toString("hex");
        });
      }),
      { numRuns: RUNS },
    );
  });
});
