// The snapshot file (src/node/snapshot.ts, docs/SNAPSHOT.md): what is written reads back exactly, the layout is the
// documented one, and decoding refuses every malformed input with a stable code (never a RangeError or a crash).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { toHex } from "../src/bytes/hex.js";
import { MAX_OUTPUT_INDEX, MAX_U32, TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { sizers, writers } from "../src/model/codecs.generated.js";
import { encodeWith } from "../src/model/engine.js";
import { networkId } from "../src/model/ids.js";
import type { Output } from "../src/model/types.js";
import { ZERO_MESSAGE_ID, type LedgerSnapshot, type SnapshotOutput } from "../src/node/index.js";
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_FORMAT_VERSION, SNAPSHOT_MAGIC, SNAPSHOT_OUTPUT_LENGTH } from "../src/node/snapshot.js";
import { arbBytes, arbOutput, arbSortedIds } from "./arbitraries.js";

const MI = 1_000_000;
const id = (byte: number, length = 32): string => toHex(new Uint8Array(length).fill(byte));
const outputId = (byte: number, index = 0): string => id(byte) + toHex(Uint8Array.of(index & 0xff, index >>> 8));
const single = (byte: number, amount: number): Output => ({ type: 0, address: { type: 0, address: new Uint8Array(32).fill(byte) }, amount });
const allowance = (byte: number, amount: number): Output => ({ type: 1, address: { type: 0, address: new Uint8Array(32).fill(byte) }, amount });

/** A small snapshot with every kind of field: a milestone, two keys, two entry points, a booked and an unbooked output. */
const SAMPLE: LedgerSnapshot = {
  network: "t",
  ledger: true,
  milestone: { index: 7, messageId: id(0xaa), timestamp: 1_700_000_007 },
  coordinatorPublicKeys: [id(0x03), id(0x07)],
  entryPoints: [
    { messageId: id(0x10), index: 7 },
    { messageId: id(0x20), index: 5 },
  ],
  outputs: [
    { outputId: outputId(0x01, 0), messageId: ZERO_MESSAGE_ID, milestoneIndexBooked: 0, output: single(0x31, TOTAL_SUPPLY - 2 * MI) },
    { outputId: outputId(0x02, 1), messageId: id(0x41), output: allowance(0x32, 2 * MI) },
  ],
};

// Offsets in SAMPLE's file, as docs/SNAPSHOT.md lays them out (network name "t": 1 byte).
const AT = {
  version: 8,
  length: 10,
  body: 18,
  nameLength: 18,
  name: 19,
  networkId: 20,
  flags: 28,
  milestone: 29,
  keyCount: 73,
  keys: 74,
  entryCount: 138,
  entries: 142,
  outputCount: 214,
  outputs: 218,
} as const;
const SAMPLE_LENGTH = AT.outputs + 2 * SNAPSHOT_OUTPUT_LENGTH + 32;

/** The refusal decoding `bytes` ends in (failing the test when it decodes or throws anything but a ProtocolError). */
function refusal(bytes: Uint8Array): ProtocolError {
  let error: unknown;
  try {
    decodeSnapshot(bytes);
  } catch (e) {
    error = e;
  }
  expect(error, "expected a refusal").toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

function encodeRefusal(snapshot: LedgerSnapshot): ProtocolError {
  let error: unknown;
  try {
    encodeSnapshot(snapshot);
  } catch (e) {
    error = e;
  }
  expect(error, "expected a refusal").toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

/** `bytes` changed by `edit`, with the checksum computed again: a file a faulty writer could have made. */
function resigned(bytes: Uint8Array, edit: (copy: Uint8Array, view: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(copy, new DataView(copy.buffer));
  copy.set(blake2b256(copy.subarray(0, copy.length - 32)), copy.length - 32);
  return copy;
}

/** A file whose body is `body`, with a correct header and checksum. */
function fileOf(body: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(18 + body.length + 32);
  bytes.set(SNAPSHOT_MAGIC, 0);
  const view = new DataView(bytes.buffer);
  view.setUint16(8, SNAPSHOT_FORMAT_VERSION, true);
  view.setBigUint64(10, BigInt(body.length), true);
  bytes.set(body, 18);
  bytes.set(blake2b256(bytes.subarray(0, 18 + body.length)), 18 + body.length);
  return bytes;
}

const arbHexId = (length = 32): fc.Arbitrary<string> => arbBytes(length).map(toHex);

const arbSnapshot: fc.Arbitrary<LedgerSnapshot> = fc
  .record({
    network: fc.string({ unit: "grapheme", minLength: 1, maxLength: 24 }).filter((s) => new TextEncoder().encode(s).length <= 255),
    ledger: fc.boolean(),
    milestone: fc.option(fc.record({ index: fc.integer({ min: 1, max: MAX_U32 }), messageId: arbHexId(), timestamp: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }) }), { nil: undefined }),
    keys: arbSortedIds(0, 4),
    entryIds: arbSortedIds(0, 6),
    outputIds: fc.uniqueArray(fc.tuple(arbBytes(32), fc.integer({ min: 0, max: MAX_OUTPUT_INDEX })), { maxLength: 8, selector: ([t, i]) => toHex(t) + i }),
    outputs: fc.array(fc.tuple(arbHexId(), fc.boolean(), fc.nat(), arbOutput(8)), { minLength: 8, maxLength: 8 }),
    entryIndexes: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  })
  .map(({ network, ledger, milestone, keys, entryIds, outputIds, outputs, entryIndexes }) => {
    const top = milestone?.index ?? 0;
    const made: SnapshotOutput[] = ledger
      ? outputIds
          .map(([tx, index]) => toHex(tx) + toHex(Uint8Array.of(index, 0)))
          .sort()
          .map((oid, i) => {
            const [messageId, booked, at, output] = outputs[i]!;
            return { outputId: oid, messageId, ...(booked ? { milestoneIndexBooked: at % (top + 1) } : {}), output };
          })
      : [];
    return {
      network,
      ledger,
      ...(milestone !== undefined ? { milestone } : {}),
      coordinatorPublicKeys: keys.map(toHex),
      entryPoints: entryIds.map((e, i) => ({ messageId: toHex(e), index: entryIndexes[i]! % (top + 1) })),
      outputs: made,
    };
  });

describe("the snapshot file: what is written reads back exactly", () => {
  it("a snapshot with every kind of field reads back equal", () => {
    expect(decodeSnapshot(encodeSnapshot(SAMPLE))).toEqual(SAMPLE);
  });

  it("a snapshot without a milestone, keys, entry points or ledger reads back equal", () => {
    const bare: LedgerSnapshot = { network: "chrysalis-bare", ledger: false, coordinatorPublicKeys: [], entryPoints: [], outputs: [] };
    expect(decodeSnapshot(encodeSnapshot(bare))).toEqual(bare);
  });

  it("any valid snapshot reads back equal, and encoding is deterministic (property)", () => {
    fc.assert(
      fc.property(arbSnapshot, (snapshot) => {
        const bytes = encodeSnapshot(snapshot);
        expect(decodeSnapshot(bytes)).toEqual(snapshot);
        expect(Buffer.from(encodeSnapshot(decodeSnapshot(bytes))).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("lists are written in ascending id order whatever order they are given in; ids in upper case are written the same", () => {
    const shuffled: LedgerSnapshot = {
      ...SAMPLE,
      coordinatorPublicKeys: [...SAMPLE.coordinatorPublicKeys].reverse(),
      entryPoints: [...SAMPLE.entryPoints].reverse().map((e) => ({ ...e, messageId: e.messageId.toUpperCase() })),
      outputs: [...SAMPLE.outputs].reverse(),
    };
    expect(Buffer.from(encodeSnapshot(shuffled)).equals(Buffer.from(encodeSnapshot(SAMPLE)))).toBe(true);
    expect(decodeSnapshot(encodeSnapshot(shuffled))).toEqual(SAMPLE);
  });

  it("100,000 outputs: one file of the documented size that decodes back to the same outputs (times: npm run bench -- ageing)", () => {
    const outputs: SnapshotOutput[] = Array.from({ length: 100_000 }, (_, i) => ({
      outputId: i.toString(16).padStart(64, "0") + "0000",
      messageId: id(i & 0xff),
      milestoneIndexBooked: i % 50,
      output: single(i & 0xff, MI + i),
    }));
    const big: LedgerSnapshot = { ...SAMPLE, milestone: { index: 50, messageId: id(1), timestamp: 1 }, entryPoints: [], outputs };
    const bytes = encodeSnapshot(big);
    const back = decodeSnapshot(bytes);
    expect(bytes.length).toBe(AT.keys + 64 + 4 + 4 + 100_000 * SNAPSHOT_OUTPUT_LENGTH + 32);
    expect(back.outputs).toHaveLength(100_000);
    expect(back.outputs[0]).toEqual(outputs[0]);
    expect(back.outputs[99_999]).toEqual(outputs[99_999]);
  });
});

describe("the snapshot file: the layout docs/SNAPSHOT.md gives", () => {
  const bytes = encodeSnapshot(SAMPLE);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);

  it("magic, format version and body length, little-endian, then the body and a BLAKE2b-256 checksum of everything before it", () => {
    expect(bytes.length).toBe(SAMPLE_LENGTH);
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x43, 0x53, 0x4e, 0x50, 0x0d, 0x0a, 0x1a]);
    expect(view.getUint16(AT.version, true)).toBe(1);
    expect(SNAPSHOT_FORMAT_VERSION).toBe(1);
    expect(view.getBigUint64(AT.length, true)).toBe(BigInt(bytes.length - 18 - 32));
    expect(toHex(bytes.subarray(bytes.length - 32))).toBe(toHex(blake2b256(bytes.subarray(0, bytes.length - 32))));
  });

  it("the network by name and by id (the id derived from the name), the flags, the milestone", () => {
    expect(bytes[AT.nameLength]).toBe(1);
    expect(new TextDecoder().decode(bytes.subarray(AT.name, AT.name + 1))).toBe("t");
    expect(view.getBigUint64(AT.networkId, true)).toBe(networkId("t"));
    expect(bytes[AT.flags]).toBe(0b11);
    expect(view.getUint32(AT.milestone, true)).toBe(7);
    expect(toHex(bytes.subarray(AT.milestone + 4, AT.milestone + 36))).toBe(id(0xaa));
    expect(view.getBigUint64(AT.milestone + 36, true)).toBe(1_700_000_007n);
  });

  it("the coordinator keys, the entry points, and the outputs, each list after its count", () => {
    expect(bytes[AT.keyCount]).toBe(2);
    expect(toHex(bytes.subarray(AT.keys + 32, AT.keys + 64))).toBe(id(0x07));
    expect(view.getUint32(AT.entryCount, true)).toBe(2);
    expect(toHex(bytes.subarray(AT.entries + 36, AT.entries + 68))).toBe(id(0x20));
    expect(view.getUint32(AT.entries + 68, true)).toBe(5);
    expect(view.getUint32(AT.outputCount, true)).toBe(2);
    const second = AT.outputs + SNAPSHOT_OUTPUT_LENGTH;
    expect(toHex(bytes.subarray(second, second + 34))).toBe(outputId(0x02, 1));
    expect(toHex(bytes.subarray(second + 34, second + 66))).toBe(id(0x41));
    expect(bytes[AT.outputs + 66]).toBe(1); // booked
    expect(view.getUint32(AT.outputs + 67, true)).toBe(0);
    expect(bytes[second + 66]).toBe(0); // not booked
  });

  it("each output in its canonical binary form, as the protocol serializes it", () => {
    SAMPLE.outputs.forEach((o, i) => {
      const at = AT.outputs + i * SNAPSHOT_OUTPUT_LENGTH + 71;
      expect(toHex(bytes.subarray(at, at + 42))).toBe(toHex(encodeWith(sizers.output, writers.output, o.output)));
    });
  });
});

describe("the snapshot file: encoding refuses what decoding would refuse", () => {
  it("a repeated output id or entry point (DUPLICATE)", () => {
    expect(encodeRefusal({ ...SAMPLE, outputs: [SAMPLE.outputs[0]!, SAMPLE.outputs[0]!] }).code).toBe("DUPLICATE");
    expect(encodeRefusal({ ...SAMPLE, entryPoints: [SAMPLE.entryPoints[0]!, SAMPLE.entryPoints[0]!] }).code).toBe("DUPLICATE");
  });

  it("outputs in a snapshot of a store without a ledger (COUNT_OUT_OF_RANGE)", () => {
    expect(encodeRefusal({ ...SAMPLE, ledger: false }).code).toBe("COUNT_OUT_OF_RANGE");
  });

  it("an empty or over-long network name (LENGTH_OUT_OF_RANGE)", () => {
    expect(encodeRefusal({ ...SAMPLE, network: "" }).code).toBe("LENGTH_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, network: "n".repeat(256) }).code).toBe("LENGTH_OUT_OF_RANGE");
  });

  it("amounts outside an output's range, indexes past the milestone, a milestone index 0 (VALUE_OUT_OF_RANGE)", () => {
    const first = SAMPLE.outputs[0]!;
    expect(encodeRefusal({ ...SAMPLE, outputs: [{ ...first, output: single(1, 0) }] }).code).toBe("VALUE_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, outputs: [{ ...first, output: allowance(1, MI - 1) }] }).code).toBe("VALUE_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, outputs: [{ ...first, milestoneIndexBooked: 8 }] }).code).toBe("VALUE_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, entryPoints: [{ messageId: id(1), index: 8 }] }).code).toBe("VALUE_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, milestone: { ...SAMPLE.milestone!, index: 0 } }).code).toBe("VALUE_OUT_OF_RANGE");
    expect(encodeRefusal({ ...SAMPLE, outputs: [{ ...first, outputId: outputId(1, MAX_OUTPUT_INDEX + 1) }] }).code).toBe("VALUE_OUT_OF_RANGE");
    const halves = [0, 1].map((i) => ({ ...first, outputId: outputId(1, i), output: single(1, TOTAL_SUPPLY - 1) }));
    expect(encodeRefusal({ ...SAMPLE, outputs: halves }).code).toBe("VALUE_OUT_OF_RANGE");
  });

  it("ids that are not hex of their length (INVALID_HEX)", () => {
    expect(encodeRefusal({ ...SAMPLE, entryPoints: [{ messageId: "zz".repeat(32), index: 0 }] }).code).toBe("INVALID_HEX");
    expect(encodeRefusal({ ...SAMPLE, outputs: [{ ...SAMPLE.outputs[0]!, outputId: id(1) }] }).code).toBe("INVALID_HEX");
  });
});

describe("the snapshot file: decoding refuses every malformed input with its code, never a crash", () => {
  const good = encodeSnapshot(SAMPLE);

  it("a file that is not a snapshot: bad magic (INVALID_TYPE)", () => {
    expect(refusal(new TextEncoder().encode('{"network":"t","outputs":[]}')).code).toBe("INVALID_TYPE");
    const bad = good.slice();
    bad[0] = 0x88;
    const error = refusal(bad);
    expect(error.code).toBe("INVALID_TYPE");
    expect(error.message).toMatch(/not a chrysalis snapshot/);
  });

  it("a format version newer than this code reads (STORE_TOO_NEW, saying to upgrade), or 0 (VALUE_OUT_OF_RANGE)", () => {
    const newer = good.slice();
    new DataView(newer.buffer).setUint16(AT.version, SNAPSHOT_FORMAT_VERSION + 1, true);
    const error = refusal(newer);
    expect(error.code).toBe("STORE_TOO_NEW");
    expect(error.message).toMatch(/version 2.*upgrade/);
    const zero = good.slice();
    new DataView(zero.buffer).setUint16(AT.version, 0, true);
    expect(refusal(zero).code).toBe("VALUE_OUT_OF_RANGE");
  });

  it("a truncated file, cut at any byte (TRUNCATED)", () => {
    for (let n = 0; n < good.length; n++) expect(refusal(good.subarray(0, n)).code, `cut at ${n}`).toBe("TRUNCATED");
  });

  it("bytes after the checksum (TRAILING_BYTES)", () => {
    const longer = new Uint8Array(good.length + 1);
    longer.set(good);
    expect(refusal(longer).code).toBe("TRAILING_BYTES");
  });

  it("a flipped byte anywhere is refused: in the body or the checksum it fails the checksum (STORE_CORRUPT)", () => {
    for (let at = 0; at < good.length; at++) {
      const bad = good.slice();
      bad[at]! ^= 0x5a;
      const error = refusal(bad);
      if (at < AT.version) expect(error.code).toBe("INVALID_TYPE");
      else if (at < AT.length) expect(["STORE_TOO_NEW", "VALUE_OUT_OF_RANGE"]).toContain(error.code);
      else if (at < AT.body) expect(["TRUNCATED", "TRAILING_BYTES"]).toContain(error.code);
      else {
        expect(error.code, `flipped at ${at}`).toBe("STORE_CORRUPT");
        expect(error.message).toMatch(/checksum/);
      }
    }
  });

  it("any bit flipped in a snapshot's body fails the checksum (property)", () => {
    fc.assert(
      fc.property(arbSnapshot, fc.nat(), fc.integer({ min: 0, max: 7 }), (snapshot, where, bit) => {
        const bytes = encodeSnapshot(snapshot);
        const at = AT.body + (where % (bytes.length - AT.body));
        bytes[at]! ^= 1 << bit;
        expect(refusal(bytes).code).toBe("STORE_CORRUPT");
      }),
      { numRuns: 200 },
    );
  });

  it("counts the body cannot hold (COUNT_OUT_OF_RANGE), or that leave bytes over (TRAILING_BYTES)", () => {
    expect(refusal(resigned(good, (b, v) => v.setUint32(AT.outputCount, 3, true))).code).toBe("COUNT_OUT_OF_RANGE");
    expect(refusal(resigned(good, (b, v) => v.setUint32(AT.outputCount, MAX_U32, true))).code).toBe("COUNT_OUT_OF_RANGE");
    expect(refusal(resigned(good, (b, v) => v.setUint32(AT.entryCount, 1000, true))).code).toBe("COUNT_OUT_OF_RANGE");
    expect(refusal(resigned(good, (b) => (b[AT.keyCount] = 255))).code).toBe("COUNT_OUT_OF_RANGE");
    expect(refusal(resigned(good, (b, v) => v.setUint32(AT.outputCount, 1, true))).code).toBe("TRAILING_BYTES");
    // The ledger flag off, with outputs.
    expect(refusal(resigned(good, (b) => (b[AT.flags] = 0b10))).code).toBe("COUNT_OUT_OF_RANGE");
  });

  it("output ids, entry points or keys out of order (NOT_SORTED) or repeated (DUPLICATE)", () => {
    const swap = (at: number, size: number) => (b: Uint8Array) => {
      const first = b.slice(at, at + size);
      b.copyWithin(at, at + size, at + 2 * size);
      b.set(first, at + size);
    };
    const repeat = (at: number, size: number) => (b: Uint8Array) => b.copyWithin(at + size, at, at + size);
    expect(refusal(resigned(good, swap(AT.outputs, SNAPSHOT_OUTPUT_LENGTH))).code).toBe("NOT_SORTED");
    expect(refusal(resigned(good, repeat(AT.outputs, SNAPSHOT_OUTPUT_LENGTH))).code).toBe("DUPLICATE");
    expect(refusal(resigned(good, swap(AT.entries, 36))).code).toBe("NOT_SORTED");
    expect(refusal(resigned(good, repeat(AT.entries, 36))).code).toBe("DUPLICATE");
    expect(refusal(resigned(good, swap(AT.keys, 32))).code).toBe("NOT_SORTED");
    expect(refusal(resigned(good, repeat(AT.keys, 32))).code).toBe("DUPLICATE");
  });

  it("a network id that is not the name's (WRONG_NETWORK_ID); an empty or non-UTF-8 name", () => {
    const error = refusal(resigned(good, (b, v) => v.setBigUint64(AT.networkId, networkId("u"), true)));
    expect(error.code).toBe("WRONG_NETWORK_ID");
    expect(error.message).toContain('"t"');
    expect(refusal(resigned(good, (b) => (b[AT.name] = 0xff))).code).toBe("INVALID_ARGUMENT");
    expect(refusal(fileOf(Uint8Array.of(0))).code).toBe("LENGTH_OUT_OF_RANGE");
  });

  it("fields out of range: flags, milestone index 0, a milestone timestamp past 2^53, an index past the milestone, an output's type, address type, amount or booked flag (INVALID_TYPE / VALUE_OUT_OF_RANGE)", () => {
    const out = AT.outputs;
    const cases: [string, (b: Uint8Array, v: DataView) => void, string][] = [
      ["unknown flags", (b) => (b[AT.flags] = 0b111), "VALUE_OUT_OF_RANGE"],
      ["milestone index 0", (b, v) => v.setUint32(AT.milestone, 0, true), "VALUE_OUT_OF_RANGE"],
      ["timestamp past 2^53", (b, v) => v.setBigUint64(AT.milestone + 36, 2n ** 53n, true), "VALUE_OUT_OF_RANGE"],
      ["entry point index past the milestone", (b, v) => v.setUint32(AT.entries + 32, 8, true), "VALUE_OUT_OF_RANGE"],
      ["output index past 126", (b) => (b[out + 32] = 127), "VALUE_OUT_OF_RANGE"],
      ["unknown booked flag", (b) => (b[out + 66] = 2), "VALUE_OUT_OF_RANGE"],
      ["booked past the milestone", (b, v) => v.setUint32(out + 67, 8, true), "VALUE_OUT_OF_RANGE"],
      ["not booked, with an index", (b, v) => v.setUint32(out + SNAPSHOT_OUTPUT_LENGTH + 67, 3, true), "VALUE_OUT_OF_RANGE"],
      ["unknown output type", (b) => (b[out + 71] = 2), "INVALID_TYPE"],
      ["unknown address type", (b) => (b[out + 72] = 1), "INVALID_TYPE"],
      ["amount 0", (b, v) => v.setBigUint64(out + 105, 0n, true), "VALUE_OUT_OF_RANGE"],
      ["amount past the total supply", (b, v) => v.setBigUint64(out + 105, BigInt(TOTAL_SUPPLY) + 1n, true), "VALUE_OUT_OF_RANGE"],
      ["amount 2^64 − 1", (b, v) => v.setBigUint64(out + 105, 2n ** 64n - 1n, true), "VALUE_OUT_OF_RANGE"],
      ["dust allowance below 1 Mi", (b, v) => v.setBigUint64(out + SNAPSHOT_OUTPUT_LENGTH + 105, BigInt(MI - 1), true), "VALUE_OUT_OF_RANGE"],
      ["outputs summing past the total supply", (b, v) => v.setBigUint64(out + SNAPSHOT_OUTPUT_LENGTH + 105, BigInt(TOTAL_SUPPLY), true), "VALUE_OUT_OF_RANGE"],
    ];
    for (const [what, edit, code] of cases) expect(refusal(resigned(good, edit)).code, what).toBe(code);
  });

  it("any bytes at all, and any body with a valid checksum, either decode to a snapshot that encodes back to them or are refused with a ProtocolError (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (random, framed) => {
        // Framed: behind the magic and version 1, so the length, checksum and body checks are reached too.
        const bytes = framed ? Uint8Array.from([...SNAPSHOT_MAGIC, 1, 0, ...random]) : random;
        expect(refusal(bytes).code).toBeTypeOf("string");
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }), (edits) => {
        const bytes = resigned(good, (b) => {
          for (const [where, xor] of edits) b[AT.body + (where % (b.length - AT.body - 32))]! ^= xor;
        });
        let decoded: LedgerSnapshot | undefined;
        try {
          decoded = decodeSnapshot(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
        }
        if (decoded !== undefined) expect(toHex(encodeSnapshot(decoded))).toBe(toHex(bytes));
      }),
      { numRuns: 500 },
    );
  });
});
