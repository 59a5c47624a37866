// The node REST JSON (PROTOCOL.md §6): representation rules, the error table (test/vectors/json-errors.json),
// hostile JSON values, round trips over the arbitraries and a differential against iota.js 1.8.6.
import { readFileSync } from "node:fs";
import { Blake2b } from "@iota/crypto.js";
import { deserializeMessage, serializeMessage } from "@iota/iota.js";
import { ReadStream, WriteStream } from "@iota/util.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { decodeMessage, encodeMessage, encodePayload } from "../src/model/codec.js";
import type { TransactionPayload } from "../src/model/types.js";
import { messageId } from "../src/model/ids.js";
import { messageFromJson, messageFromJsonWithBytes, messageToJson, partialMessageFromJson, partialMessageFromJsonWithBytes, payloadFromJson, type MessageJson } from "../src/model/json.js";
import { MAX_U64 } from "../src/bytes/limits.js";
import { MAX_U64_HIGH, MAX_U64_LOW, TEN_TO_LOW } from "../src/model/runtime.js";
import { arbMessage } from "./arbitraries.js";
import { expectProtocolError, hex, loadVectors, toHexString } from "./helpers.js";

interface ErrorCase {
  name: string;
  on?: "milestone";
  at: (string | number)[];
  op: "set" | "delete" | "swap";
  value?: unknown;
  with?: number;
  code: string;
  path: string;
}

const table = JSON.parse(readFileSync(new URL("./vectors/json-errors.json", import.meta.url), "utf8")) as { base: MessageJson; milestoneBase: MessageJson; cases: ErrorCase[] };
const vectors = loadVectors();

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Applies one edit of the error table to a copy of the base message. */
function edit(base: unknown, c: ErrorCase): unknown {
  const root = clone(base) as Record<string | number, unknown>;
  let parent = root;
  for (const key of c.at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = c.at[c.at.length - 1]!;
  if (c.op === "delete") {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (c.op === "swap") {
    const other = parent[c.with!];
    parent[c.with!] = parent[last];
    parent[last] = other;
  } else {
    parent[last] = c.value;
  }
  return root;
}

/** Only ProtocolError may escape; anything else fails the test with the value that caused it. */
function onlyProtocolErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw new Error(`not a ProtocolError: ${String(error)}`, { cause: error });
    expect(typeof error.code).toBe("string");
  }
}

describe("byte strings are lowercase hex without 0x; upper case is accepted on input", () => {
  it("writes the published vectors' bytes as lowercase hex and reads them back", () => {
    for (const v of vectors.messages) {
      const json = messageToJson(decodeMessage(hex(v.hex)));
      const strings = JSON.stringify(json).match(/"[0-9a-fA-F]{8,}"/g) ?? [];
      expect(strings.length).toBeGreaterThan(0);
      for (const s of strings) expect(s).toBe(s.toLowerCase());
      expect(toHexString(encodeMessage(messageFromJson(json)))).toBe(v.hex);
    }
  });
  it("reads upper-case hex to the same message", () => {
    const upper = JSON.parse(JSON.stringify(table.base).replace(/"([0-9a-f]{2,})"/g, (_, h: string) => `"${h.toUpperCase()}"`)) as unknown;
    expect(JSON.stringify(upper)).not.toBe(JSON.stringify(table.base));
    expect(messageFromJson(upper)).toEqual(messageFromJson(table.base));
  });
});

describe("networkId and nonce are decimal strings of a u64", () => {
  it("accepts 0 and 2^64 − 1 and writes them back unchanged", () => {
    for (const value of ["0", "18446744073709551615", "14379272398717627559"]) {
      const json = { ...clone(table.base), networkId: value, nonce: value };
      const back = messageToJson(messageFromJson(json));
      expect(back.networkId).toBe(value);
      expect(back.nonce).toBe(value);
    }
  });
  it("reads leading zeros as the same number (as the reference node does)", () => {
    expect(messageFromJson({ ...clone(table.base), nonce: "000123" }).nonce).toBe(123n);
  });
  it("reads every decimal of 1 to 20 digits as BigInt does, and refuses each above 2^64 − 1 as exceeding a u64", () => {
    expect(TEN_TO_LOW * BigInt(MAX_U64_HIGH) + BigInt(MAX_U64_LOW)).toBe(MAX_U64);
    const base = clone(table.base);
    const edges = ["18446744073709551614", "18446744073709551616", "18446744073709551625", "18447000000000000000", "18445999999999999999", "99999999999999999999", "00000000000000000001", "1000000000000000", "999999999999999"];
    const digits = fc.integer({ min: 1, max: 20 }).chain((n) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`)));
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...edges), digits, fc.bigInt({ min: 0n, max: MAX_U64 }).map(String)), (text) => {
        const value = BigInt(text);
        if (value <= MAX_U64) expect(messageFromJson({ ...base, nonce: text }).nonce).toBe(value);
        else expectProtocolError(() => messageFromJson({ ...base, nonce: text }), "VALUE_OUT_OF_RANGE", { path: "nonce" });
      }),
      { numRuns: 2000 },
    );
  });
});

describe("an absent payload is null or a missing key; empty indexation data is \"\"", () => {
  it("reads null and a missing payload alike and writes null", () => {
    const { payload: _, ...without } = clone(table.base);
    const fromMissing = messageFromJson(without);
    const fromNull = messageFromJson({ ...without, payload: null });
    expect(fromMissing.payload).toBeUndefined();
    expect(fromNull).toEqual(fromMissing);
    expect(messageToJson(fromMissing).payload).toBeNull();
  });
  it("writes empty indexation data as \"\" and reads \"\" and a missing data key (as iota.js sends it)", () => {
    const json = { ...clone(table.base), payload: { type: 2, index: "6869", data: "" } };
    const message = messageFromJson(json);
    expect(messageToJson(message).payload).toEqual({ type: 2, index: "6869", data: "" });
    expect(messageFromJson({ ...json, payload: { type: 2, index: "6869" } })).toEqual(message);
  });
  it("reads a transaction essence without payload from null or a missing key", () => {
    const json = clone(table.base) as unknown as { payload: { essence: Record<string, unknown>; unlockBlocks: unknown } };
    delete json.payload.essence["payload"];
    // Dropping the indexation changes the essence hash, so only the shape is checked here, not the signatures.
    const missing = payloadFromJson(json.payload);
    json.payload.essence["payload"] = null;
    expect(payloadFromJson(json.payload)).toEqual(missing);
  });
});

describe("every shape error raises ProtocolError with the code and the exact JSON path", () => {
  it("the base messages of the table are valid", () => {
    expect(messageToJson(messageFromJson(table.base))).toEqual(table.base);
    expect(messageToJson(messageFromJson(table.milestoneBase))).toEqual(table.milestoneBase);
  });
  for (const c of table.cases) {
    it(`${c.on === "milestone" ? "milestone: " : ""}${c.name} → ${c.code} at ${c.path}`, () => {
      expectProtocolError(() => messageFromJson(edit(c.on === "milestone" ? table.milestoneBase : table.base, c)), c.code, { path: c.path });
    });
  }
});

describe("hostile JSON values never raise anything but ProtocolError", () => {
  it("rejects non-objects at the root", () => {
    for (const value of [null, undefined, [], "message", 5, true, 10n]) expectProtocolError(() => messageFromJson(value), "INVALID_JSON", { path: "" });
  });
  it("turns a throwing getter and a throwing Proxy into INVALID_JSON", () => {
    const getter = clone(table.base) as unknown as Record<string, unknown>;
    Object.defineProperty(getter, "nonce", { enumerable: true, get: () => { throw new TypeError("boom"); } });
    expectProtocolError(() => messageFromJson(getter), "INVALID_JSON");
    const proxy = new Proxy(clone(table.base), { get: () => { throw new RangeError("trap"); } });
    expectProtocolError(() => messageFromJson(proxy), "INVALID_JSON");
  });
  it("does not let __proto__ keys pollute prototypes", () => {
    const text = JSON.stringify(table.base).replace('{"networkId"', '{"__proto__":{"polluted":true},"networkId"');
    const message = messageFromJson(JSON.parse(text));
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
    expect((message as unknown as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
  it("reads only own properties: a polluted Object.prototype cannot supply a missing field", () => {
    const { payload: _, ...without } = clone(table.base);
    const proto = Object.prototype as Record<string, unknown>;
    proto["payload"] = table.base.payload;
    try {
      expect(messageFromJson(without).payload).toBeUndefined();
    } finally {
      delete proto["payload"];
    }
  });
  it("reads only own properties of objects with another prototype, and of null-prototype objects", () => {
    const { payload: _, ...without } = clone(table.base);
    const inheriting = Object.assign(Object.create({ payload: table.base.payload }) as object, without);
    expect(messageFromJson(inheriting).payload).toBeUndefined();
    const bare = Object.assign(Object.create(null) as object, clone(table.base));
    expect(messageFromJson(bare)).toEqual(messageFromJson(table.base));
  });
  it("refuses a huge array before looking at its elements", () => {
    const json = clone(table.base) as unknown as { payload: { essence: { inputs: unknown[] } } };
    json.payload.essence.inputs = new Array(1_000_000).fill(0);
    expectProtocolError(() => messageFromJson(json), "COUNT_OUT_OF_RANGE", { path: "payload.essence.inputs" });
  });
  it("fast-check: any JSON-like value", () => {
    fc.assert(fc.property(fc.anything({ withBigInt: true, withNullPrototype: true, withObjectString: true }), (value) => onlyProtocolErrors(() => messageFromJson(value))), { numRuns: 500 });
  });
  it("fast-check: a valid message with one value anywhere replaced or removed either parses to a message that re-encodes or raises ProtocolError", () => {
    const paths: { base: MessageJson; at: (string | number)[] }[] = [];
    const walk = (base: MessageJson, value: unknown, at: (string | number)[]): void => {
      if (at.length > 0) paths.push({ base, at });
      if (Array.isArray(value)) value.forEach((v, i) => walk(base, v, [...at, i]));
      else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) walk(base, v, [...at, k]);
    };
    walk(table.base, table.base, []);
    walk(table.milestoneBase, table.milestoneBase, []);
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.option(fc.jsonValue(), { nil: undefined }), ({ base, at }, value) => {
        const c: ErrorCase = value === undefined ? { name: "", at, op: "delete", code: "", path: "" } : { name: "", at, op: "set", value, code: "", path: "" };
        const mutated = edit(base, c);
        let message;
        try {
          message = messageFromJson(mutated);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          return;
        }
        expect(decodeMessage(encodeMessage(message))).toEqual(message);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("round trips over arbitrary valid messages", () => {
  it("a JSON -0 reads as 0, so the model equals what its bytes decode to", () => {
    const json = {
      networkId: "1",
      parentMessageIds: ["00".repeat(32)],
      payload: {
        type: 0,
        essence: {
          type: 0,
          inputs: [{ type: 0, transactionId: "11".repeat(32), transactionOutputIndex: -0 }],
          outputs: [{ type: 0, address: { type: 0, address: "22".repeat(32) }, amount: 1 }],
          payload: null,
        },
        unlockBlocks: [{ type: 0, signature: { type: 0, publicKey: "33".repeat(32), signature: "44".repeat(64) } }],
      },
      nonce: "5",
    };
    const m = messageFromJson(json);
    expect(Object.is((m.payload as TransactionPayload).essence.inputs[0]!.transactionOutputIndex, 0)).toBe(true);
    expect(decodeMessage(encodeMessage(m))).toEqual(m);
  });
  it("messageFromJson(JSON text of messageToJson(m)) equals m, and the JSON comes back identical", () => {
    fc.assert(
      fc.property(arbMessage(), (m) => {
        const json = JSON.parse(JSON.stringify(messageToJson(m))) as unknown;
        const back = messageFromJson(json);
        expect(back).toEqual(m);
        expect(messageToJson(back)).toEqual(json);
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * iota.js 1.8.6 differs from the node JSON in representation only, normalized here:
 * it leaves absent payloads (message, essence, receipt) out instead of null; it leaves empty indexation data out;
 * it reads every u32 of a milestone and receipt (index, nextPoWScore, nextPoWScoreMilestoneIndex, migratedAt) as a signed 32-bit number (values ≥ 2^31 come out negative); and it turns the u64
 * timestamp into a JS number (rounded above 2^53, where we write a decimal string).
 * And one limitation: it refuses milestone payloads shorter than its MIN_MILESTONE_PAYLOAD_LENGTH (218 bytes), though
 * one parent, one key and one signature make a valid 191-byte milestone; those are checked to be exactly that case.
 */
function normalizeIota(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => normalizeIota(v));
  if (typeof value !== "object" || value === null) return value;
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = normalizeIota(v, k);
  if (o["type"] === 1 && "inclusionMerkleProof" in o) {
    for (const k of ["index", "nextPoWScore", "nextPoWScoreMilestoneIndex"]) out[k] = (o[k] as number) >>> 0;
    if (!("receipt" in o) || o["receipt"] === undefined) out["receipt"] = null;
  }
  if (o["type"] === 3 && "migratedAt" in o) out["migratedAt"] = (o["migratedAt"] as number) >>> 0;
  if (o["type"] === 2 && "index" in o && typeof o["index"] === "string" && o["data"] === undefined) out["data"] = "";
  if ((key === "" && "nonce" in o) || (key === "essence" && "inputs" in o)) {
    if (o["payload"] === undefined) out["payload"] = null;
  }
  return out;
}

function normalizeOurs(json: MessageJson): unknown {
  const text = JSON.stringify(json, (k, v: unknown) => (k === "timestamp" && typeof v === "string" ? Number(v) : v));
  return JSON.parse(text);
}

describe("differential: the same JSON, bytes and ids as iota.js 1.8.6", () => {
  it("messageToJson(decodeMessage(bytes)) equals iota.js deserializeMessage, its serializeMessage of our JSON gives the same bytes, and the ids agree", () => {
    fc.assert(
      fc.property(arbMessage(), (m) => {
        const bytes = encodeMessage(m);
        const ours = messageToJson(decodeMessage(bytes));
        let theirs;
        try {
          theirs = deserializeMessage(new ReadStream(bytes));
        } catch (error) {
          expect(String(error)).toMatch(/Milestone Payload data .* less than the minimimum size required of 218/);
          expect(m.payload?.type).toBe(1);
          expect(encodePayload(m.payload!).length).toBeLessThan(218);
          return;
        }
        expect(normalizeOurs(ours)).toEqual(normalizeIota(JSON.parse(JSON.stringify(theirs))));
        const stream = new WriteStream();
        serializeMessage(stream, JSON.parse(JSON.stringify(ours)));
        const theirBytes = stream.finalBytes();
        expect(toHexString(theirBytes)).toBe(toHexString(bytes));
        expect(messageId(messageFromJson(ours))).toBe(toHexString(Blake2b.sum256(theirBytes)));
      }),
      { numRuns: 300 },
    );
  });
});

describe("the partial submission form: networkId, parentMessageIds and nonce may be left to the node", () => {
  it("leaves out what is missing or null", () => {
    const { networkId: _n, parentMessageIds: _p, nonce: _o, ...payloadOnly } = clone(table.base);
    const partial = partialMessageFromJson(payloadOnly);
    expect(partial.networkId).toBeUndefined();
    expect(partial.parents).toBeUndefined();
    expect(partial.nonce).toBeUndefined();
    expect(partial.payload).toEqual(messageFromJson(table.base).payload);
    expect(partialMessageFromJson({ ...payloadOnly, networkId: null, parentMessageIds: null, nonce: null })).toEqual(partial);
  });
  it("counts \"0\" as missing for networkId and nonce, and an empty parent list as missing", () => {
    const partial = partialMessageFromJson({ ...clone(table.base), networkId: "0", nonce: "0", parentMessageIds: [] });
    expect(partial.networkId).toBeUndefined();
    expect(partial.nonce).toBeUndefined();
    expect(partial.parents).toBeUndefined();
  });
  it("keeps what is given", () => {
    const full = messageFromJson(table.base);
    expect(partialMessageFromJson(table.base)).toEqual(full);
  });
  it("still checks what is present: parents, payload rules, u64 strings", () => {
    const base = clone(table.base);
    expectProtocolError(() => partialMessageFromJson({ ...base, parentMessageIds: [...base.parentMessageIds].reverse() }), "NOT_SORTED", { path: "parentMessageIds[1]" });
    expectProtocolError(() => partialMessageFromJson({ ...base, nonce: "-5" }), "INVALID_JSON", { path: "nonce" });
    const swapped = edit(base, { name: "", at: ["payload", "essence", "inputs", 0], op: "swap", with: 1, code: "", path: "" });
    expectProtocolError(() => partialMessageFromJson(swapped), "NOT_SORTED", { path: "payload.essence.inputs[1]" });
    expectProtocolError(() => partialMessageFromJson({ payload: { type: 2, index: "", data: "" } }), "LENGTH_OUT_OF_RANGE", { path: "payload.index" });
  });
  it("fast-check: any JSON-like value raises only ProtocolError", () => {
    fc.assert(fc.property(fc.anything(), (value) => onlyProtocolErrors(() => partialMessageFromJson(value))), { numRuns: 300 });
  });
});

describe("a message that breaks several rules is refused for the one a full validation names first", () => {
  it("refuses a message over 32768 bytes for its size even when its parents are also out of order", () => {
    const parents = [...clone(table.base).parentMessageIds].reverse();
    const json = { ...clone(table.base), parentMessageIds: parents, payload: { type: 2, index: "00", data: "ab".repeat(32768) } };
    expectProtocolError(() => messageFromJson(json), "LENGTH_OUT_OF_RANGE", { path: "" });
    expectProtocolError(() => messageFromJson({ ...json, payload: { type: 2, index: "00", data: "ab" } }), "NOT_SORTED", { path: "parentMessageIds[1]" });
  });
});

describe("u64 strings are checked on every call, whatever was parsed before", () => {
  it("rejects an empty or signed networkId even right after a valid one, and parses repeated ones alike", () => {
    const base = clone(table.base);
    expect(messageFromJson(base).networkId).toBe(14379272398717627559n);
    expectProtocolError(() => messageFromJson({ ...base, networkId: "" }), "INVALID_JSON", { path: "networkId" });
    expectProtocolError(() => messageFromJson({ ...base, networkId: "+14379272398717627559" }), "INVALID_JSON", { path: "networkId" });
    expect(messageFromJson(base).networkId).toBe(14379272398717627559n);
    expect(messageFromJson({ ...base, networkId: "18446744073709551615" }).networkId).toBe(18446744073709551615n);
    expect(messageFromJson(base).networkId).toBe(14379272398717627559n);
  });
});

describe("JSON to bytes in one pass: messageFromJsonWithBytes and partialMessageFromJsonWithBytes", () => {
  const outcome = (run: () => unknown): unknown => {
    try {
      return run();
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
      return { code: (error as ProtocolError).code, path: (error as ProtocolError).path };
    }
  };

  it("gives messageFromJson's message and exactly encodeMessage's bytes, on random valid messages", () => {
    fc.assert(
      fc.property(arbMessage(), (message) => {
        const json = JSON.parse(JSON.stringify(messageToJson(message))) as unknown;
        const { message: read, bytes } = messageFromJsonWithBytes(json);
        expect(read).toEqual(messageFromJson(json));
        expect(toHexString(bytes)).toBe(toHexString(encodeMessage(read)));
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses what messageFromJson refuses, with the same code and path", () => {
    const base = clone(table.base) as unknown as Record<string, unknown>;
    fc.assert(
      fc.property(fc.constantFrom("networkId", "parentMessageIds", "payload", "nonce"), fc.jsonValue(), (key, value) => {
        const mutated = { ...base, [key]: value };
        const expected = outcome(() => messageFromJson(mutated));
        const got = outcome(() => messageFromJsonWithBytes(mutated).message);
        expect(got).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("a partial message's bytes are given only when networkId and parents were there, and are then the message's", () => {
    fc.assert(
      fc.property(arbMessage(), fc.boolean(), fc.boolean(), fc.boolean(), (message, dropNetwork, dropParents, dropNonce) => {
        const json = JSON.parse(JSON.stringify(messageToJson(message))) as Record<string, unknown>;
        if (dropNetwork) delete json.networkId;
        if (dropParents) delete json.parentMessageIds;
        if (dropNonce) delete json.nonce;
        if (dropNonce === false && dropNetwork && message.nonce !== 0n) return; // refused later, by completion
        const { partial, bytes } = partialMessageFromJsonWithBytes(json);
        expect(partial).toEqual(partialMessageFromJson(json));
        if (dropNetwork || dropParents || message.networkId === 0n) expect(bytes).toBeUndefined();
        else expect(toHexString(bytes!)).toBe(toHexString(encodeMessage({ ...message, nonce: dropNonce ? 0n : message.nonce })));
      }),
      { numRuns: 1000 },
    );
  });
});
