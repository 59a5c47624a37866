// TIP-12 proof of work: b1t6, Curl-P-81 (scalar reference and both WASM kernels), score and target, nonce search.
// Vectors come from test/vectors/public.json; properties compare every kernel lane with the scalar reference.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Kernel,
  KERNEL_LANES,
  b1t6Decode,
  b1t6Encode,
  curlP81,
  powDigest,
  powInputTrits,
  powScore,
  searchNonce,
  simdSupported,
  targetZeros,
  referencePowScore,
  referenceTrailingZeros,
  trailingZeros,
  tritsToTrytes,
  trytesToTrits,
  type KernelFlavor,
} from "../src/pow/index.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { expectProtocolError, hex, loadVectors, toHexString } from "./helpers.js";

const vectors = loadVectors();
const flavors: KernelFlavor[] = ["simd", "portable"];
const kernels = Object.fromEntries(flavors.map((f) => [f, new Kernel(f)])) as Record<KernelFlavor, Kernel>;

/** A message from a vector: hex, or the "N bytes of 0xXX" / "N zero bytes" descriptions. */
function vectorMessage(v: { messageHex?: string; messageWithZeroNonceHex?: string; message?: string }): Uint8Array {
  const text = v.messageHex ?? v.messageWithZeroNonceHex;
  if (text !== undefined) return hex(text);
  const filled = /^(\d+) bytes of 0x([0-9a-f]{2})/.exec(v.message!);
  if (filled) return new Uint8Array(Number(filled[1])).fill(parseInt(filled[2]!, 16));
  const zeros = /^(\d+) zero bytes$/.exec(v.message!);
  if (zeros) return new Uint8Array(Number(zeros[1]));
  throw new Error(`unknown message description ${v.message}`);
}

describe("b1t6: each byte, read as int8, becomes two trytes of three trits", () => {
  it.each(vectors.b1t6 as [string, string][])("%s encodes to trytes %s and decodes back", (bytesHex, trytes) => {
    const trits = b1t6Encode(hex(bytesHex));
    expect(tritsToTrytes(trits)).toBe(trytes);
    expect(toHexString(b1t6Decode(trytesToTrits(trytes)))).toBe(bytesHex);
  });

  it.each(vectors.b1t6InvalidTrytes as string[])("trytes %s encode a value outside int8 and are rejected", (trytes) => {
    expectProtocolError(() => b1t6Decode(trytesToTrits(trytes)), "VALUE_OUT_OF_RANGE");
  });

  it("round-trips any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(b1t6Decode(b1t6Encode(bytes))).toEqual(bytes);
      }),
    );
  });

  it("rejects malformed trits and trytes with ProtocolError", () => {
    expectProtocolError(() => b1t6Decode(Int8Array.of(0, 0, 0, 0, 0)), "LENGTH_OUT_OF_RANGE");
    expectProtocolError(() => b1t6Decode(Int8Array.of(0, 0, 2, 0, 0, 0)), "VALUE_OUT_OF_RANGE", { path: "trits[2]" });
    expectProtocolError(() => trytesToTrits("AB!"), "INVALID_ARGUMENT", { path: "trytes[2]" });
    expectProtocolError(() => b1t6Encode("00" as unknown as Uint8Array), "INVALID_ARGUMENT");
  });
});

describe("Curl-P-81: one absorb of 243 trits into a zero state, one transform of 81 rounds", () => {
  const cases = vectors.curlP81.cases as [string, string][];
  it.each(cases)("scalar reference: %s", (input, output) => {
    expect(tritsToTrytes(curlP81(trytesToTrits(input)))).toBe(output);
  });
  for (const flavor of flavors) {
    it.runIf(flavor === "portable" || simdSupported()).each(cases)(`${flavor} kernel, every lane alike: %s`, (input, output) => {
      expect(tritsToTrytes(kernels[flavor].hash(trytesToTrits(input)))).toBe(output);
    });
  }
  it.each(cases)("portable kernel, one-state path (what powScore runs): %s", (input, output) => {
    expect(tritsToTrytes(kernels.portable.hashOne(trytesToTrits(input)))).toBe(output);
  });
  it("rejects input longer than 243 trits or holding a non-trit", () => {
    expectProtocolError(() => curlP81(new Int8Array(244)), "LENGTH_OUT_OF_RANGE");
    expectProtocolError(() => curlP81(Int8Array.of(0, 3)), "VALUE_OUT_OF_RANGE", { path: "trits[1]" });
  });
});

describe("PoW hash: digest = BLAKE2b-256(message without nonce), trits = b1t6(digest) ‖ b1t6(nonce LE) ‖ 000", () => {
  const ex = vectors.powExample;
  it("reproduces the TIP-12 example: digest, Curl input, hash, trailing zeros and score", () => {
    const message = hex(ex.messageHex);
    const digest = powDigest(message);
    expect(toHexString(digest)).toBe(ex.digest);
    const input = powInputTrits(digest, BigInt(ex.nonce));
    expect(tritsToTrytes(input)).toBe(ex.curlInputTrytes);
    expect(tritsToTrytes(curlP81(input))).toBe(ex.hashTrytes);
    expect(referenceTrailingZeros(digest, BigInt(ex.nonce))).toBe(ex.trailingZeros);
    expect(trailingZeros(digest, BigInt(ex.nonce))).toBe(ex.trailingZeros);
    expect(referencePowScore(message)).toBeCloseTo(ex.score, 9);
    expect(powScore(message)).toBeCloseTo(ex.score, 9);
  });
  for (const flavor of flavors) {
    it.runIf(flavor === "portable" || simdSupported())(`the ${flavor} kernel counts the example's trailing zeros in its lane`, () => {
      const kernel = kernels[flavor];
      const nonce = BigInt(ex.nonce);
      const lanes = kernel.laneZeros(hex(ex.digest), nonce);
      expect(lanes[Number(nonce % BigInt(kernel.lanes))]).toBe(ex.trailingZeros);
    });
  }
});

describe("score = 3^trailingZeros / message length (nonce included)", () => {
  it.each(vectors.powScores as { messageHex?: string; message?: string; trailingZeros: number; score: number }[])("$messageHex$message scores $score", (v) => {
    const message = vectorMessage(v);
    const digest = powDigest(message);
    const nonce = new DataView(message.buffer, message.byteOffset).getBigUint64(message.length - 8, true);
    expect(referenceTrailingZeros(digest, nonce)).toBe(v.trailingZeros);
    expect(trailingZeros(digest, nonce)).toBe(v.trailingZeros);
    expect(referencePowScore(message)).toBeCloseTo(v.score, 9);
    expect(powScore(message)).toBeCloseTo(v.score, 9);
  });

  it("a message shorter than 8 bytes cannot carry a nonce", () => {
    expectProtocolError(() => powScore(new Uint8Array(7)), "LENGTH_OUT_OF_RANGE", { path: "messageBytes" });
    expectProtocolError(() => powDigest(new Uint8Array(0)), "LENGTH_OUT_OF_RANGE");
    expectProtocolError(() => powScore("ab" as unknown as Uint8Array), "INVALID_ARGUMENT");
  });
});

describe("target: the smallest t with 3^t ≥ minScore · length, exactly", () => {
  it("matches the work table at score 4000: 53–132 B → 12, 133–398 B → 13, 399–1195 B → 14", () => {
    for (const [from, to, t] of [[53, 132, 12], [133, 398, 13], [399, 1195, 14]] as const) {
      expect(targetZeros(from, 4000)).toBe(t);
      expect(targetZeros(to, 4000)).toBe(t);
    }
    expect(targetZeros(1196, 4000)).toBe(15);
  });

  it("an exact power of 3 needs exactly that many zeros (a logarithm would ask for one more)", () => {
    for (let t = 0; t <= 40; t++) {
      const power = 3 ** t;
      if (!Number.isSafeInteger(power)) break;
      expect(targetZeros(1, power)).toBe(t);
      expect(targetZeros(1, power + 1)).toBe(t + 1);
    }
    expect(targetZeros(3 ** 7, 3 ** 5)).toBe(12);
  });

  it("agrees with the minerExamples", () => {
    for (const v of vectors.minerExamples) expect(targetZeros(vectorMessage(v).length, v.minScore)).toBe(v.targetZeros);
  });

  it("is the smallest such t for any length and score (checked with BigInt powers)", () => {
    // The score is built as m / 2^k from integers the test chose, so 3^t ≥ score · length > 3^(t−1) is checked in exact
    // integers without taking the double apart the way targetZeros does.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40000 }), fc.integer({ min: 1, max: 2 ** 40 }), fc.integer({ min: 0, max: 12 }), (length, m, k) => {
        const t = targetZeros(length, m / 2 ** k);
        const need = BigInt(m) * BigInt(length);
        expect((3n ** BigInt(t)) << BigInt(k) >= need).toBe(true);
        if (t > 0) expect((3n ** BigInt(t - 1)) << BigInt(k) < need).toBe(true);
      }),
    );
    expect(targetZeros(100, 0)).toBe(0);
  });

  it("rejects lengths and scores that are not numbers in range", () => {
    expectProtocolError(() => targetZeros(0, 4000), "VALUE_OUT_OF_RANGE", { path: "messageLength" });
    expectProtocolError(() => targetZeros(1.5, 4000), "INVALID_ARGUMENT", { path: "messageLength" });
    expectProtocolError(() => targetZeros(100, -1), "INVALID_ARGUMENT", { path: "minScore" });
    expectProtocolError(() => targetZeros(100, Number.NaN), "INVALID_ARGUMENT", { path: "minScore" });
    expectProtocolError(() => targetZeros(100, Number.POSITIVE_INFINITY), "INVALID_ARGUMENT", { path: "minScore" });
  });
});

describe("nonce search: the first nonce ≥ start whose hash has ≥ target trailing zeros", () => {
  const cases = vectors.nonceSearch.cases as { digest: string; targetZeros: number; start: string; nonce: string }[];
  for (const flavor of flavors) {
    it.runIf(flavor === "portable" || simdSupported()).each(cases)(`${flavor} kernel: target $targetZeros from $start → $nonce`, (c) => {
      expect(kernels[flavor].searchNonce(hex(c.digest), c.targetZeros, BigInt(c.start), 1n << 20n)).toBe(BigInt(c.nonce));
    });
  }

  it.each(cases)("scalar reference agrees: $nonce meets the target and no nonce from $start before it does", (c) => {
    const digest = hex(c.digest);
    const found = BigInt(c.nonce);
    expect(referenceTrailingZeros(digest, found)).toBeGreaterThanOrEqual(c.targetZeros);
    // Below 200 nonces from the start the reference checks every one; 4936 from 0 is covered by 4900 → 4936.
    if (found - BigInt(c.start) <= 200n) for (let n = BigInt(c.start); n < found; n++) expect(referenceTrailingZeros(digest, n)).toBeLessThan(c.targetZeros);
  });

  it.each(vectors.minerExamples as { message?: string; messageWithZeroNonceHex?: string; minScore: number; targetZeros: number; firstNonceFromZero: string; source: string }[])(
    "$source: first nonce from 0 is $firstNonceFromZero",
    (v) => {
      const message = vectorMessage(v);
      const nonce = searchNonce(powDigest(message), v.targetZeros, 0n, 1n << 24n);
      expect(nonce).toBe(BigInt(v.firstNonceFromZero));
      new DataView(message.buffer, message.byteOffset).setBigUint64(message.length - 8, nonce!, true);
      expect(powScore(message)).toBeGreaterThanOrEqual(v.minScore);
    },
  );

  it("respects the range exactly: a solution just outside [start, start + count) is not returned", () => {
    const c = cases[3]!;
    const digest = hex(c.digest);
    const found = BigInt(c.nonce);
    for (const flavor of flavors) {
      if (flavor === "simd" && !simdSupported()) continue;
      const k = kernels[flavor];
      expect(k.searchNonce(digest, c.targetZeros, BigInt(c.start), found - BigInt(c.start))).toBeUndefined();
      expect(k.searchNonce(digest, c.targetZeros, BigInt(c.start), found - BigInt(c.start) + 1n)).toBe(found);
      expect(k.searchNonce(digest, c.targetZeros, found, 1n)).toBe(found);
      expect(k.searchNonce(digest, c.targetZeros, found + 1n, 1n)).toBeUndefined();
      expect(k.searchNonce(digest, c.targetZeros, found, 0n)).toBeUndefined();
      // Target 0: every nonce qualifies, the start itself first, the top of the nonce space included.
      expect(k.searchNonce(digest, 0, 12345n, 10n)).toBe(12345n);
      expect(k.searchNonce(digest, 0, (1n << 64n) - 1n, 5n)).toBe((1n << 64n) - 1n);
    }
  });

  it("rejects bad digests, targets, starts and counts with ProtocolError", () => {
    const k = kernels.portable;
    expectProtocolError(() => k.searchNonce(new Uint8Array(31), 3, 0n, 10n), "LENGTH_OUT_OF_RANGE", { path: "digest" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), 244, 0n, 10n), "VALUE_OUT_OF_RANGE", { path: "targetZeros" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), -1, 0n, 10n), "VALUE_OUT_OF_RANGE", { path: "targetZeros" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), 3, -1n, 10n), "VALUE_OUT_OF_RANGE", { path: "start" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), 3, 1n << 64n, 10n), "VALUE_OUT_OF_RANGE", { path: "start" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), 3, 0n, -5n), "VALUE_OUT_OF_RANGE", { path: "count" });
    expectProtocolError(() => k.searchNonce(new Uint8Array(32), 3, 0.5, 10n), "INVALID_ARGUMENT", { path: "start" });
    expectProtocolError(() => trailingZeros(new Uint8Array(32), -1n), "VALUE_OUT_OF_RANGE", { path: "nonce" });
  });
});

describe("kernel lanes equal the scalar reference", () => {
  for (const flavor of flavors) {
    it.runIf(flavor === "portable" || simdSupported())(`every lane of the ${flavor} kernel counts the same trailing zeros for random digests and nonces`, () => {
      const kernel = kernels[flavor];
      fc.assert(
        fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (digest, start) => {
          const base = start - (start % BigInt(KERNEL_LANES[flavor]));
          const lanes = kernel.laneZeros(digest, base);
          for (let j = 0; j < kernel.lanes; j++) expect(lanes[j], `lane ${j}`).toBe(referenceTrailingZeros(digest, base + BigInt(j)));
        }),
        { numRuns: 6 },
      );
    });
  }

  for (const flavor of flavors) {
    it.runIf(flavor === "portable" || simdSupported())(`the ${flavor} kernel's search returns exactly the scalar reference's first nonce, across 256- and 65536-nonce blocks`, () => {
      const kernel = kernels[flavor];
      fc.assert(
        fc.property(
          fc.uint8Array({ minLength: 32, maxLength: 32 }),
          fc.bigInt({ min: 1n, max: (1n << 48n) - 1n }),
          fc.integer({ min: 0, max: 64 }),
          fc.integer({ min: 1, max: 3 }),
          (digest, block, back, target) => {
            // Start just below a block boundary so the search crosses it (the kernel rebuilds its template there).
            const start = block * 65536n - BigInt(back);
            const found = kernel.searchNonce(digest, target, start, 4096n);
            expect(found).toBeDefined();
            expect(referenceTrailingZeros(digest, found!)).toBeGreaterThanOrEqual(target);
            for (let n = start; n < found!; n++) expect(referenceTrailingZeros(digest, n), `nonce ${n}`).toBeLessThan(target);
          },
        ),
        { numRuns: 25 },
      );
    });
  }

  it("trailingZeros (one hash on the kernel) equals the scalar reference for random digests and nonces", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (digest, nonce) => {
        expect(trailingZeros(digest, nonce)).toBe(referenceTrailingZeros(digest, nonce));
      }),
      { numRuns: 200 },
    );
  });

  describe("the one-state path (portable kernel), which trailingZeros, powScore and a node's check run", () => {
    const kernel = kernels.portable;
    it("gives every hash trit of the scalar reference for random trits", () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: -1, max: 1 }), { maxLength: 243 }), (input) => {
          const trits = Int8Array.from(input);
          expect(kernel.hashOne(trits)).toEqual(curlP81(trits));
        }),
        { numRuns: 300 },
      );
    });

    it("counts the trailing zeros of the scalar reference for random digests and nonces", () => {
      fc.assert(
        fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (digest, nonce) => {
          expect(kernel.trailingZeros(digest, nonce)).toBe(referenceTrailingZeros(digest, nonce));
        }),
        { numRuns: 300 },
      );
    });

    it("counts the trailing zeros of the scalar reference on nonces the search found for 1 .. 9 zeros", () => {
      // Random nonces rarely end in more than a few zeros; the search's nonces reach each count.
      const digest = Uint8Array.from({ length: 32 }, (_, i) => (i * 89 + 7) & 0xff);
      for (let target = 1, start = 0n; target <= 9; target++) {
        const found = kernel.searchNonce(digest, target, start, 1n << 40n)!;
        expect(kernel.trailingZeros(digest, found)).toBe(referenceTrailingZeros(digest, found));
        expect(kernel.trailingZeros(digest, found)).toBeGreaterThanOrEqual(target);
        start = found + 1n;
      }
    });

    it.runIf(simdSupported())("is not in the SIMD build, which says so", () => {
      expectProtocolError(() => kernels.simd.hashOne(new Int8Array(243)), "UNSUPPORTED");
      expectProtocolError(() => kernels.simd.trailingZeros(new Uint8Array(32), 0n), "UNSUPPORTED");
    });
  });

  it("powScore equals the scalar referencePowScore on random messages of every length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 700 }), (message) => {
        expect(powScore(message)).toBe(referencePowScore(message));
      }),
      { numRuns: 200 },
    );
  });

  it("the kernels agree with each other on the first nonce for random digests and starts", () => {
    if (!simdSupported()) return;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 100_000n }), fc.integer({ min: 0, max: 7 }), (digest, start, target) => {
        const a = kernels.simd.searchNonce(digest, target, start, 20_000n);
        expect(kernels.portable.searchNonce(digest, target, start, 20_000n)).toBe(a);
        if (a !== undefined) {
          expect(referenceTrailingZeros(digest, a)).toBeGreaterThanOrEqual(target);
          if (a > start) expect(referenceTrailingZeros(digest, a - 1n)).toBeLessThan(target);
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe("bad input never crashes: any value either works or raises ProtocolError", () => {
  const anything = fc.oneof(
    fc.anything(),
    fc.uint8Array({ maxLength: 80 }),
    fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }),
    fc.double(),
    fc.integer({ min: -1000, max: 100_000 }),
    fc.string({ maxLength: 20 }),
  );
  const calls: [string, (a: unknown, b: unknown, c: unknown) => unknown][] = [
    ["powScore", (a) => powScore(a as Uint8Array)],
    ["powDigest", (a) => powDigest(a as Uint8Array)],
    ["trailingZeros", (a, b) => trailingZeros(a as Uint8Array, b as bigint)],
    ["referenceTrailingZeros", (a, b) => referenceTrailingZeros(a as Uint8Array, b as bigint)],
    ["targetZeros", (a, b) => targetZeros(a as number, b as number)],
    ["b1t6Encode", (a) => b1t6Encode(a as Uint8Array)],
    ["b1t6Decode", (a) => b1t6Decode(a as Int8Array)],
    ["trytesToTrits", (a) => trytesToTrits(a as string)],
    ["tritsToTrytes", (a) => tritsToTrytes(a as Int8Array)],
    ["curlP81", (a) => curlP81(a as Int8Array)],
    ["searchNonce", (a, b, c) => kernels.portable.searchNonce(a as Uint8Array, b as number, c as bigint, 256n)],
    ["laneZeros", (a, b) => kernels.portable.laneZeros(a as Uint8Array, b as bigint)],
    ["hash", (a) => kernels.portable.hash(a as Int8Array)],
    ["hashOne", (a) => kernels.portable.hashOne(a as Int8Array)],
    ["kernel trailingZeros", (a, b) => kernels.portable.trailingZeros(a as Uint8Array, b as bigint)],
  ];
  it.each(calls)("%s", (_name, call) => {
    fc.assert(
      fc.property(anything, anything, anything, (a, b, c) => {
        try {
          call(a, b, c);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
