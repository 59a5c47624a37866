// Reading JSON text without JSON.parse (src/model/json-text.ts): for every text, exactly what JSON.parse followed by the
// JSON reader gives (the same model, bytes and error), on random messages written with random key order and
// whitespace, on the error table's edits, and on mutated texts; and the plain form is read without JSON.parse.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageFromJsonWithBytes, messageToJson, partialMessageFromJsonWithBytes, type MessageJson } from "../src/model/json.js";
import { messageFromJsonText, messageFromJsonTextWithBytes, partialMessageFromJsonTextWithBytes } from "../src/model/json-text.js";
import type { Message } from "../src/model/types.js";
import { arbMessage } from "./arbitraries.js";
import { toHexString } from "./helpers.js";

const table = JSON.parse(readFileSync(new URL("./vectors/json-errors.json", import.meta.url), "utf8")) as {
  base: MessageJson;
  milestoneBase: MessageJson;
  cases: { on?: "milestone"; at: (string | number)[]; op: "set" | "delete" | "swap"; value?: unknown; with?: number }[];
};

/** What a call gave: its value, or its error's class, code, path and message. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    const e = error as Error & { code?: unknown; path?: unknown };
    return { error: e.constructor.name, code: e.code, path: e.path, message: e.message };
  }
}

const viaParse = (text: string): unknown => outcome(() => messageFromJsonWithBytes(JSON.parse(text)));
const viaText = (text: string): unknown => outcome(() => messageFromJsonTextWithBytes(text));
const partialViaParse = (text: string): unknown => outcome(() => partialMessageFromJsonWithBytes(JSON.parse(text)));
const partialViaText = (text: string): unknown => outcome(() => partialMessageFromJsonTextWithBytes(text));

function expectSame(text: string): void {
  expect(viaText(text)).toStrictEqual(viaParse(text));
  expect(partialViaText(text)).toStrictEqual(partialViaParse(text));
}

/** A small deterministic generator, so that one fast-check seed draws a whole layout. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const SPACES = ["", "", "", " ", "\n", "\t", "\r\n", "  "];

/** JSON of `value` with its keys in random order and random whitespace between tokens. */
function render(value: unknown, next: () => number): string {
  const ws = (): string => SPACES[Math.floor(next() * SPACES.length)]!;
  if (Array.isArray(value)) return `[${ws()}${value.map((v) => `${ws()}${render(v, next)}${ws()}`).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [keys[i], keys[j]] = [keys[j]!, keys[i]!];
    }
    return `{${ws()}${keys.map((k) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${render((value as Record<string, unknown>)[k], next)}${ws()}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What a client leaves for the node in networkId, parentMessageIds and nonce: each dropped, null, kept, or "0" / []. */
const arbLeftOut = fc.array(fc.constantFrom("drop", "null", "keep", "zero"), { minLength: 3, maxLength: 3 });

function partialJson(message: Message, how: readonly string[]): Record<string, unknown> {
  const json = messageToJson(message) as unknown as Record<string, unknown>;
  ["networkId", "parentMessageIds", "nonce"].forEach((k, i) => {
    if (how[i] === "drop") delete json[k];
    else if (how[i] === "null") json[k] = null;
    else if (how[i] === "zero") json[k] = k === "parentMessageIds" ? [] : "0";
  });
  return json;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a message's JSON text reads as JSON.parse and messageFromJsonWithBytes read it", () => {
  // 3000 messages of up to 32 KiB (chrysalis-core/arbitraries): toStrictEqual, comparing byte by byte, takes most of
  // the time, some 40 s on two busy cores.
  it("the same model and exactly the same bytes, on random messages in any key order and whitespace", () => {
    fc.assert(
      fc.property(arbMessage(), fc.integer(), (message, seed) => {
        const json = messageToJson(message);
        for (const text of [JSON.stringify(json), render(json, random(seed))]) {
          const got = messageFromJsonTextWithBytes(text);
          const expected = messageFromJsonWithBytes(JSON.parse(text));
          expect(got.message).toStrictEqual(expected.message);
          expect(toHexString(got.bytes)).toBe(toHexString(expected.bytes));
          expect(toHexString(got.bytes)).toBe(toHexString(encodeMessage(message)));
          expect(messageFromJsonText(text)).toStrictEqual(expected.message);
        }
      }),
      { numRuns: 3000 },
    );
  }, 180_000);

  it("reads the plain form of messages without a payload, with an indexation or a transaction without calling JSON.parse", () => {
    const parse = vi.spyOn(JSON, "parse");
    fc.assert(
      fc.property(arbMessage({ payloads: ["none", "indexation", "transaction"] }), fc.integer(), (message, seed) => {
        messageFromJsonTextWithBytes(render(messageToJson(message), random(seed)));
      }),
      { numRuns: 500 },
    );
    expect(parse).not.toHaveBeenCalled();
  });

  it("reads the plain form of a partial message (networkId, parents or nonce missing, null, \"0\" or []) without calling JSON.parse", () => {
    const parse = vi.spyOn(JSON, "parse");
    fc.assert(
      fc.property(arbMessage({ payloads: ["none", "indexation", "transaction"] }), fc.integer(), arbLeftOut, (message, seed, how) => {
        partialMessageFromJsonTextWithBytes(render(partialJson(message, how), random(seed)));
      }),
      { numRuns: 500 },
    );
    expect(parse).not.toHaveBeenCalled();
  });

  it("refuses every edit of the JSON error table with JSON.parse's path's code, path and message", () => {
    for (const c of table.cases) {
      const root = JSON.parse(JSON.stringify(c.on === "milestone" ? table.milestoneBase : table.base)) as Record<string | number, unknown>;
      let parent = root;
      for (const k of c.at.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
      const last = c.at[c.at.length - 1]!;
      if (c.op === "set") parent[last] = c.value;
      else if (c.op === "delete") {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      }
      else {
        const list = parent as unknown as unknown[];
        [list[last as number], list[c.with!]] = [list[c.with!], list[last as number]];
      }
      const text = JSON.stringify(root);
      expect(viaParse(text)).toHaveProperty("error");
      expectSame(text);
    }
  });

  // Texts a client could send that the direct reader must hand over, or read exactly as JSON.parse would.
  const base = JSON.stringify(table.base);
  const edits: [string, string][] = [
    ["an escaped character in a hex string", base.replace(/"[0-9a-f]{64}"/, (s) => `"\\u0030${s.slice(2)}`)],
    ["an escaped key", base.replace('"nonce"', '"\\u006eonce"')],
    ["a repeated key", base.replace('"nonce":', '"nonce":"1","nonce":')],
    ["a repeated key in an object of the payload", base.replace('"type":0', '"type":0,"type":0')],
    ["an unknown key", base.replace('"nonce":', '"extra":[1,{"a":null}],"nonce":')],
    ["__proto__ as a key", base.replace('"nonce":', '"__proto__":{"x":1},"nonce":')],
    ["a number with a fraction", base.replace('"transactionOutputIndex":0', '"transactionOutputIndex":0.0')],
    ["a number with an exponent", base.replace('"transactionOutputIndex":0', '"transactionOutputIndex":0e0')],
    ["-0", base.replace('"transactionOutputIndex":0', '"transactionOutputIndex":-0')],
    ["a leading zero", base.replace('"transactionOutputIndex":0', '"transactionOutputIndex":00')],
    ["a huge number", base.replace(/"amount":\d+/, '"amount":99999999999999999999')],
    ["2^53 + 1", base.replace(/"amount":\d+/, '"amount":9007199254740993')],
    ["upper-case hex", base.replace(/"[0-9a-f]{64}"/, (s) => s.toUpperCase())],
    ["a control character in a string", base.replace('"nonce":"', '"nonce":"\u0001')],
    ["a raw tab in a hex string", base.replace(/"([0-9a-f]{64})"/, (s) => `${s.slice(0, 10)}\t${s.slice(11)}`)],
    ["a byte order mark", `\ufeff${base}`],
    ["non-ASCII in a string", base.replace('"nonce":"', '"nonce":"é')],
    ["a lone surrogate", base.replace('"nonce":"', '"nonce":"\ud800')],
    ["trailing text", `${base} x`],
    ["a trailing comma", base.replace(/}$/, ",}")],
    ["two values", `${base}${base}`],
    ["whitespace JSON does not allow", base.replace('"nonce":', "\u00a0\"nonce\":")],
    ["a form feed", base.replace('"nonce":', '\f"nonce":')],
    ["a null payload", base.replace(/"payload":.*,"nonce"/, '"payload":null,"nonce"')],
    ["an indexation with null data", base.replace(/"payload":.*,"nonce"/, '"payload":{"type":2,"index":"00","data":null},"nonce"')],
    ["an indexation without data", base.replace(/"payload":.*,"nonce"/, '"payload":{"index":"00","type":2},"nonce"')],
    ["an indexation with a transaction's keys", base.replace(/"payload":.*,"nonce"/, '"payload":{"type":2,"index":"00","data":"","unlockBlocks":[]},"nonce"')],
    ["an empty index", base.replace(/"payload":.*,"nonce"/, '"payload":{"type":2,"index":"","data":""},"nonce"')],
    ["a milestone payload", JSON.stringify(table.milestoneBase)],
    ["a nonce of 21 digits", base.replace(/"nonce":"\d+"/, '"nonce":"000000000000000000001"')],
    ["a nonce of 2^64", base.replace(/"nonce":"\d+"/, '"nonce":"18446744073709551616"')],
    ["a nonce with leading zeros", base.replace(/"nonce":"\d+"/, '"nonce":"0007"')],
    ["an empty nonce", base.replace(/"nonce":"\d+"/, '"nonce":""')],
    ["a numeric nonce", base.replace(/"nonce":"(\d+)"/, '"nonce":5')],
    ["null networkId", base.replace(/"networkId":"\d+"/, '"networkId":null')],
    ["no parents", base.replace(/"parentMessageIds":\[[^\]]*\]/, '"parentMessageIds":[]')],
    ["null parents", base.replace(/"parentMessageIds":\[[^\]]*\]/, '"parentMessageIds":null')],
    ["nine parents", base.replace(/"parentMessageIds":\[[^\]]*\]/, `"parentMessageIds":${JSON.stringify(Array.from({ length: 9 }, (_, i) => i.toString(16).padStart(64, "0")))}`)],
    ["an empty object", "{}"],
    ["only a payload", `{"payload":${JSON.stringify(table.base.payload)}}`],
    ["an array", "[]"],
    ["null", "null"],
    ["an empty text", ""],
    ["whitespace only", " \n"],
    ["nul", base.replace(/"payload":.*,"nonce"/, '"payload":nul,"nonce"')],
  ];
  it.each(edits)("%s: the same outcome", (_name, text) => {
    expectSame(text);
  });

  it("the same outcome on mutated texts (truncations, replaced, inserted and deleted characters)", () => {
    const pieces = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "0", "1", "9", "a", "F", "g", "-", ".", "e", "null", "\\u0030", '"type":2,', '"x":1,', "\u0000", "é"];
    fc.assert(
      fc.property(
        arbMessage({ payloads: ["none", "indexation", "transaction"] }),
        fc.integer(),
        fc.array(fc.tuple(fc.constantFrom("truncate", "replace", "insert", "delete", "repeat"), fc.nat(), fc.nat(pieces.length - 1), fc.integer({ min: 1, max: 80 })), { minLength: 1, maxLength: 3 }),
        (message, seed, mutations) => {
          let text = seed % 2 === 0 ? JSON.stringify(messageToJson(message)) : render(messageToJson(message), random(seed));
          for (const [kind, where, piece, count] of mutations) {
            const at = where % (text.length + 1);
            if (kind === "truncate") text = text.slice(0, at);
            else if (kind === "replace") text = text.slice(0, at) + pieces[piece]! + text.slice(at + 1);
            else if (kind === "insert") text = text.slice(0, at) + pieces[piece]! + text.slice(at);
            else if (kind === "delete") text = text.slice(0, at) + text.slice(at + count);
            else text = text.slice(0, at) + text.slice(at, at + count) + text.slice(at);
          }
          expectSame(text);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("a partial message (networkId, parents or nonce missing or null) reads as partialMessageFromJsonWithBytes reads it", () => {
    fc.assert(
      fc.property(arbMessage({ payloads: ["none", "indexation", "transaction"] }), fc.integer(), arbLeftOut, (message, seed, how) => {
        const text = render(partialJson(message, how), random(seed));
        const got = partialMessageFromJsonTextWithBytes(text);
        expect(partialViaText(text)).toStrictEqual(partialViaParse(text));
        if (got.bytes !== undefined) expect(toHexString(got.bytes)).toBe(toHexString(encodeMessage({ ...(got.partial as Message), nonce: got.partial.nonce ?? 0n })));
      }),
      { numRuns: 2000 },
    );
  });

  it("errors are the JSON path's own: SyntaxError for text JSON.parse refuses, ProtocolError for a refused message", () => {
    expect(() => messageFromJsonTextWithBytes('{"networkId":')).toThrow(SyntaxError);
    expect(() => messageFromJsonTextWithBytes(JSON.stringify({ ...table.base, nonce: "x" }))).toThrow(ProtocolError);
  });
});
