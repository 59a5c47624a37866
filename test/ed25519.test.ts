// Ed25519 verification (PROTOCOL.md §4, TIP-14) against the published ed25519-speccheck cases and the verdicts its
// README publishes per library (test/vectors/ed25519-speccheck.json): ZIP-215 is Zebra's row, node:crypto OpenSSL's.
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { readFileSync } from "node:fs";
import { Point, getPublicKey as nobleGetPublicKey, sign as nobleSign, utils as nobleUtils } from "@noble/ed25519";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ed25519Backend, ed25519PublicKey, signEd25519, verifyEd25519, verifyEd25519StrictJs, verifyEd25519Zip215 } from "../src/crypto/ed25519.js";
import { libsodium, smallOrderEncodings, sodiumRefusalIsFinal } from "../src/crypto/sodium.js";
import { toHex } from "../src/bytes/hex.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { hex } from "./helpers.js";

interface SpeccheckCase {
  message: string;
  pub_key: string;
  signature: string;
}

const speccheck = JSON.parse(readFileSync(new URL("./vectors/ed25519-speccheck.json", import.meta.url), "utf8")) as { cases: SpeccheckCase[]; verdicts: Record<string, string> };
const cases = speccheck.cases.map((c, i) => ({ i, publicKey: hex(c.pub_key), message: hex(c.message), signature: hex(c.signature) }));
/** The published verdict of `library` on case i. */
const published = (library: string, i: number): boolean => {
  const row = speccheck.verdicts[library];
  if (row === undefined || row.length !== cases.length) throw new Error(`no verdicts for ${library}`);
  return row[i] === "V";
};

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** What OpenSSL (node:crypto) says, with a key it refuses to load counted as "invalid". */
function openssl(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" });
    return nodeVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

describe("ZIP-215: verifyEd25519 gives Zebra's published verdict on every speccheck case", () => {
  it.each(cases)("case $i", ({ i, publicKey, message, signature }) => {
    expect(verifyEd25519(publicKey, message, signature)).toBe(published("Zebra", i));
    expect(verifyEd25519(publicKey, message, signature, "zip215")).toBe(published("Zebra", i));
    expect(verifyEd25519Zip215(publicKey, message, signature)).toBe(published("Zebra", i));
  });
});

describe("strict rules (auth): OpenSSL's published verdicts, which node:crypto gives", () => {
  it.runIf(ed25519Backend === "native+zip215").each(cases)("case $i", ({ i, publicKey, message, signature }) => {
    expect(openssl(publicKey, message, signature)).toBe(published("OpenSSL-3.0", i));
    expect(verifyEd25519(publicKey, message, signature, "strict")).toBe(published("OpenSSL-3.0", i));
  });

  it.each(cases)("without node:crypto the TypeScript strict check gives OpenSSL's verdict too: case $i", ({ i, publicKey, message, signature }) => {
    expect(verifyEd25519StrictJs(publicKey, message, signature)).toBe(published("OpenSSL-3.0", i));
  });
});

describe("the native fast path is sound: whatever OpenSSL accepts, ZIP-215 accepts", () => {
  it("in the published verdicts and on this platform", () => {
    for (const { i, publicKey, message, signature } of cases) {
      if (published("OpenSSL-3.0", i)) expect(published("Zebra", i), `case ${i}`).toBe(true);
      if (openssl(publicKey, message, signature)) expect(verifyEd25519Zip215(publicKey, message, signature), `case ${i}`).toBe(true);
    }
  });

  it("and ZIP-215 accepts cases OpenSSL rejects (so the native answer alone would fork off the network)", () => {
    const only = cases.filter(({ i }) => published("Zebra", i) && !published("OpenSSL-3.0", i));
    expect(only.map((c) => c.i)).toEqual([4, 5, 9, 10]);
    for (const { publicKey, message, signature } of only) expect(verifyEd25519(publicKey, message, signature)).toBe(true);
  });
});

const sodium = libsodium();
const order = Point.CURVE().n;

/** What libsodium (sodium-native) says on its own, with a refusal to take the arguments counted as "invalid". */
function sodiumSays(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return sodium!.crypto_sign_verify_detached(signature, message, publicKey) === true;
  } catch {
    return false;
  }
}

/** A little-endian number of any length, and a number below 2^256 as 32 little-endian bytes. */
function leValue(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let j = bytes.length - 1; j >= 0; j--) value = (value << 8n) | BigInt(bytes[j]!);
  return value;
}
function le32(value: bigint): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn));
}

/** A signature with another S. */
function withScalar(signature: Uint8Array, s: bigint): Uint8Array {
  const out = signature.slice();
  out.set(le32(s), 32);
  return out;
}

describe("the libsodium fast path is sound: whatever libsodium accepts, OpenSSL accepts", () => {
  it("is loaded under Node (sodium-native is installed with the library), so the tests below run it", () => {
    expect(sodium).toBeDefined();
  });

  it.runIf(sodium !== undefined)("where libsodium gives no verdict (inputs in a SharedArrayBuffer) the others decide: honest signatures verify, wrong ones do not", () => {
    const seed = new Uint8Array(32).fill(9);
    const message = new Uint8Array(40).fill(3);
    const shared = (bytes: Uint8Array): Uint8Array => {
      const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
      out.set(bytes);
      return out;
    };
    const publicKey = ed25519PublicKey(seed);
    const signature = signEd25519(seed, message);
    const wrong = signature.slice();
    wrong[3]! ^= 1;
    for (const rules of ["strict", "zip215"] as const) {
      expect(verifyEd25519(shared(publicKey), shared(message), shared(signature), rules)).toBe(true);
      expect(verifyEd25519(publicKey, shared(message), signature, rules)).toBe(true);
      expect(verifyEd25519(shared(publicKey), shared(message), shared(wrong), rules)).toBe(false);
    }
  });

  it.runIf(sodium !== undefined).each(cases)("libsodium gives its published verdict, and accepts only where OpenSSL does: case $i", ({ i, publicKey, message, signature }) => {
    expect(sodiumSays(publicKey, message, signature)).toBe(published("LibSodium", i));
    if (sodiumSays(publicKey, message, signature)) expect(openssl(publicKey, message, signature)).toBe(true);
  });

  it.runIf(sodium !== undefined)("on honest signatures with any bit flipped or S pushed past L: never libsodium's yes where OpenSSL says no", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), (seed, message, bit) => {
        const publicKey = ed25519PublicKey(seed);
        const signature = signEd25519(seed, message);
        expect(sodiumSays(publicKey, message, signature)).toBe(true);
        const flipped = signature.slice();
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        if (sodiumSays(publicKey, message, flipped)) expect(openssl(publicKey, message, flipped)).toBe(true);
        // S + L verifies the same equation; every rule here refuses it (a malleated signature), whatever libsodium says.
        const malleated = withScalar(signature, leValue(signature.subarray(32)) + order);
        expect(openssl(publicKey, message, malleated)).toBe(false);
        expect(verifyEd25519(publicKey, message, malleated)).toBe(false);
        expect(verifyEd25519(publicKey, message, malleated, "strict")).toBe(false);
      }),
      { numRuns: 60 },
    );
  });
});

describe("under the strict rules a libsodium refusal is final only where OpenSSL refuses too", () => {
  const { p } = Point.CURVE();

  it("the small-order encodings are the 5 y of the 8 points of order dividing 8, and p and p + 1 (the y ≥ p that decode to them)", () => {
    const found = smallOrderEncodings();
    // The eight torsion points, found here another way: L·P of points from hashed bytes, until eight are seen.
    const torsion = new Map<string, Point>();
    for (let i = 0; torsion.size < 8 && i < 200; i++) {
      let point: Point;
      try {
        point = Point.fromBytes(sha512(Uint8Array.of(i)).subarray(0, 32), true);
      } catch {
        continue;
      }
      const t = point.multiplyUnsafe(order - 1n).add(point);
      for (let k = 0, q = Point.ZERO; k < 8; k++, q = q.add(t)) torsion.set(q.toHex(), q);
    }
    expect(torsion.size).toBe(8);
    const canonical = new Set([...torsion.values()].map((q) => q.y));
    expect(canonical.size).toBe(5);
    // Every y from p to 2^255 - 1 (19 of them) whose encoding decodes to a point of small order.
    const high: bigint[] = [];
    for (let y = p; y < 2n ** 255n; y++) {
      try {
        if (Point.fromBytes(le32(y), true).isSmallOrder()) high.push(y - p);
      } catch {
        // no point for this y
      }
    }
    expect(high).toEqual([0n, 1n]);
    const expected = [...canonical, p, p + 1n].map((y) => toHex(le32(y))).sort();
    expect([...found].sort()).toEqual(expected);
    // And they are libsodium's own list (ge25519_has_small_order's, test/vectors/ed25519-small-order.json).
    const published = JSON.parse(readFileSync(new URL("./vectors/ed25519-small-order.json", import.meta.url), "utf8")) as { encodings: string[] };
    expect([...found].sort()).toEqual([...published.encodings].sort());
  });

  // Signatures OpenSSL accepts and libsodium refuses by its own checks (a small-order or non-canonical A, or a
  // small-order R): S = 0 with R the identity over a small-order A where k·A is the identity, and S = k·a with R the
  // identity over an honest key. Built here; each must go on to OpenSSL and verify.
  it.runIf(sodium !== undefined)("signatures only OpenSSL accepts, built for every small-order A (sign bit either way) and for an honest A with R the identity, verify under the strict rules", () => {
    const identity = le32(1n);
    const k = (r: Uint8Array, a: Uint8Array, message: Uint8Array): bigint => leValue(sha512(Uint8Array.from([...r, ...a, ...message]))) % order;
    let built = 0;
    for (const hexA of smallOrderEncodings()) {
      for (const sign of [0, 0x80]) {
        const a = Uint8Array.from(Buffer.from(hexA, "hex"));
        a[31]! |= sign;
        let point: Point;
        try {
          point = Point.fromBytes(a, true);
        } catch {
          continue; // no point under this encoding
        }
        for (let m = 0; m < 64; m++) {
          const message = Uint8Array.of(m);
          const scalar = k(identity, a, message);
          if (!(scalar === 0n ? Point.ZERO : point.multiplyUnsafe(scalar)).is0()) continue;
          const signature = Uint8Array.from([...identity, ...le32(0n)]);
          expect(sodiumSays(a, message, signature)).toBe(false);
          expect(verifyEd25519(a, message, signature, "strict"), `A ${toHex(a)}`).toBe(openssl(a, message, signature));
          expect(verifyEd25519StrictJs(a, message, signature), `A ${toHex(a)}, without node:crypto`).toBe(openssl(a, message, signature));
          expect(verifyEd25519(a, message, signature)).toBe(true);
          if (openssl(a, message, signature)) built++;
          break;
        }
      }
    }
    expect(built).toBeGreaterThanOrEqual(7);
    const seed = new Uint8Array(32).fill(4);
    const { scalar, pointBytes } = nobleUtils.getExtendedPublicKey(seed);
    for (let m = 0; m < 8; m++) {
      const message = Uint8Array.of(m, 1);
      const signature = Uint8Array.from([...identity, ...le32((k(identity, pointBytes, message) * scalar) % order)]);
      expect(openssl(pointBytes, message, signature)).toBe(true);
      expect(sodiumSays(pointBytes, message, signature)).toBe(false);
      expect(verifyEd25519(pointBytes, message, signature, "strict")).toBe(true);
    }
  });

  it.runIf(sodium !== undefined)("on honest and flipped signatures, and small-order keys and R: a final refusal is never OpenSSL's yes", () => {
    const small = [...smallOrderEncodings()].map((h) => Uint8Array.from(Buffer.from(h, "hex")));
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), fc.nat(small.length * 4 - 1), fc.nat(2), (seed, message, bit, pick, where) => {
        let publicKey = ed25519PublicKey(seed);
        const signature = signEd25519(seed, message);
        if (where < 2) {
          const encoding = small[pick % small.length]!.slice();
          if (pick >= small.length * 2) encoding[31]! |= 0x80;
          if (where === 0) publicKey = encoding;
          else signature.set(encoding, 0);
        }
        signature[bit >> 3]! ^= pick % 2 === 0 ? 0 : 1 << (bit & 7);
        if (sodiumSays(publicKey, message, signature)) expect(openssl(publicKey, message, signature)).toBe(true);
        else if (sodiumRefusalIsFinal(publicKey, signature)) expect(openssl(publicKey, message, signature)).toBe(false);
        expect(verifyEd25519(publicKey, message, signature, "strict")).toBe(openssl(publicKey, message, signature));
      }),
      { numRuns: 300 },
    );
    for (const { publicKey, message, signature } of cases) {
      if (!sodiumSays(publicKey, message, signature) && sodiumRefusalIsFinal(publicKey, signature)) expect(openssl(publicKey, message, signature)).toBe(false);
    }
  });
});

describe("honest signatures verify the same under every rule set", () => {
  it("native, noble ZIP-215, the TypeScript strict check and the combined verifier agree, and a flipped bit fails them all", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), (seed, message, bit) => {
        const publicKey = ed25519PublicKey(seed);
        const signature = signEd25519(seed, message);
        expect(openssl(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519Zip215(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519StrictJs(publicKey, message, signature)).toBe(true);
        const flipped = signature.slice();
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        const zip = verifyEd25519Zip215(publicKey, message, flipped);
        expect(verifyEd25519(publicKey, message, flipped)).toBe(zip);
        expect(verifyEd25519(publicKey, message, flipped, "strict")).toBe(zip);
        expect(zip).toBe(openssl(publicKey, message, flipped));
        expect(verifyEd25519StrictJs(publicKey, message, flipped)).toBe(zip);
      }),
      { numRuns: 60 },
    );
  });
});

describe("signing is RFC 8032 deterministic Ed25519 whichever way the key reaches OpenSSL", () => {
  it("signEd25519 equals @noble/ed25519's signature and ed25519PublicKey its public key", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), (seed, message) => {
        expect(signEd25519(seed, message)).toEqual(nobleSign(message, seed));
        expect(ed25519PublicKey(seed)).toEqual(nobleGetPublicKey(seed));
      }),
      { numRuns: 40 },
    );
  });
});

describe("verification does not depend on which keys were seen before (imported keys are remembered, boundedly)", () => {
  it("more distinct keys than the import cache holds, twice round: every honest signature verifies, a swapped one fails", () => {
    const message = new Uint8Array(32).fill(5);
    const pairs = Array.from({ length: 4200 }, (_, i) => {
      const seed = new Uint8Array(32);
      new DataView(seed.buffer).setUint32(0, i + 1);
      return { key: ed25519PublicKey(seed), signature: signEd25519(seed, message) };
    });
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, { key, signature }] of pairs.entries()) {
        expect(verifyEd25519(key, message, signature, "strict")).toBe(true);
        if (i % 500 === 0) expect(verifyEd25519(key, message, pairs[(i + 1) % pairs.length]!.signature, "strict")).toBe(false);
      }
    }
  });
});
