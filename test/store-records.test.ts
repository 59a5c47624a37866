// The embedded engine's record layouts read and write their integers and floats byte by byte: each field must be the
// big-endian bytes a DataView writes, and every record must read back as it was written.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBalance, decodeMetadata, encodeBalance, encodeMetadata, getF64, getU32, getU64, setF64, setU32, setU64, u32, u64 } from "../src/node/store/records.js";

const u64s = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const u32s = fc.integer({ min: 0, max: 0xffffffff });

describe("record fields are DataView's big-endian bytes", () => {
  it("u32, u64 and f64 at any offset, both ways (2,000 cases each)", () => {
    fc.assert(
      fc.property(u32s, u64s, fc.double(), fc.integer({ min: 0, max: 24 }), (a, b, f, at) => {
        const ours = new Uint8Array(48).fill(0xaa);
        const theirs = new Uint8Array(48).fill(0xaa);
        const view = new DataView(theirs.buffer);
        setU32(ours, at, a);
        view.setUint32(at, a);
        setU64(ours, at + 4, b);
        view.setUint32(at + 4, Math.floor(b / 2 ** 32));
        view.setUint32(at + 8, b >>> 0);
        setF64(ours, at + 12, f);
        view.setFloat64(at + 12, f);
        expect(ours).toEqual(theirs);
        expect(getU32(ours, at)).toBe(a);
        expect(getU64(ours, at + 4)).toBe(b);
        expect(Object.is(getF64(ours, at + 12), f)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(u32(0x01020304)).toEqual(Uint8Array.of(1, 2, 3, 4));
    expect(u64(2 ** 40 + 5)).toEqual(Uint8Array.of(0, 0, 1, 0, 0, 0, 0, 5));
  });

  it("metadata and balances read back as written, from a Buffer slice as lmdb-js returns them (1,000 cases)", () => {
    fc.assert(
      fc.property(u64s, fc.double({ noNaN: true }), u32s, u32s, fc.option(u32s.filter((n) => n !== 0xffffffff), { nil: undefined }), fc.boolean(), (seq, arrivalTime, oldest, youngest, referenced, solid) => {
        const metadata = { arrivalTime, solid, coneRoots: { oldest, youngest }, ...(referenced !== undefined ? { referencedByMilestoneIndex: referenced, milestoneIndex: referenced } : {}) };
        const stored = Buffer.concat([Buffer.alloc(3), encodeMetadata(seq, metadata)]).subarray(3);
        expect(decodeMetadata(stored)).toEqual({ seq, metadata });
        const balance = { balance: seq, dustAllowance: Math.floor(seq / 3), dustOutputs: oldest };
        expect(decodeBalance(Buffer.from(encodeBalance(balance)))).toEqual(balance);
      }),
      { numRuns: 1000 },
    );
  });

  it("a field past a record's end is refused, as a DataView refuses it", () => {
    const short = Buffer.alloc(20);
    expect(() => decodeMetadata(short)).toThrow(RangeError);
    expect(() => getU32(Uint8Array.of(1, 2, 3), 0)).toThrow(RangeError);
    expect(() => getU64(new Uint8Array(7), 0)).toThrow(RangeError);
    expect(() => getF64(new Uint8Array(8), 1)).toThrow(RangeError);
    expect(getU32(Uint8Array.of(0, 0, 0, 7), 0)).toBe(7);
  });
});
