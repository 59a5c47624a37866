// Ed25519 verification follows ZIP-215 (PROTOCOL.md §4, TIP-14) on the adversarial edge cases, not OpenSSL's stricter rule.
// The vectors (test/vectors/zip215.json) carry the answer each case gets by construction; see generate-zip215.mjs.
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { readFileSync } from "node:fs";
import { getPublicKey as nobleGetPublicKey, sign as nobleSign } from "@noble/ed25519";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ed25519PublicKey, signEd25519, verifyEd25519, verifyEd25519Zip215 } from "../src/crypto/ed25519.js";
import { hex } from "./helpers.js";

interface Zip215Case {
  group: string;
  name: string;
  publicKey: string;
  signature: string;
  message: string;
  zip215: boolean;
  cofactorless: boolean;
}

const { cases } = JSON.parse(readFileSync(new URL("./vectors/zip215.json", import.meta.url), "utf8")) as { cases: Zip215Case[] };
const groups = [...new Set(cases.map((c) => c.group))];

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** What OpenSSL (node:crypto) says, with a key it refuses to load counted as "invalid". */
function openssl(c: Zip215Case): boolean {
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(c.publicKey, "hex")]), format: "der", type: "spki" });
    return nodeVerify(null, Buffer.from(c.message, "hex"), key, Buffer.from(c.signature, "hex"));
  } catch {
    return false;
  }
}

describe("verifyEd25519 gives the ZIP-215 answer on every edge case", () => {
  for (const group of groups) {
    const inGroup = cases.filter((c) => c.group === group);
    it(`${group} (${inGroup.length} cases)`, () => {
      for (const c of inGroup) {
        const args = [hex(c.publicKey), hex(c.message), hex(c.signature)] as const;
        expect(verifyEd25519(...args), c.name).toBe(c.zip215);
        expect(verifyEd25519Zip215(...args), c.name).toBe(c.zip215);
      }
    });
  }
});

describe("ZIP-215 accepts where OpenSSL rejects (the native answer alone would fork)", () => {
  it("small-order and mixed-order keys and R values that fail the cofactorless equation still verify", () => {
    const disagreements = cases.filter((c) => c.zip215 && !openssl(c));
    // Every such case has the cofactorless equation failing or a non-canonical encoding; there are many.
    expect(disagreements.length).toBeGreaterThan(100);
    for (const c of disagreements) expect(verifyEd25519(hex(c.publicKey), hex(c.message), hex(c.signature)), c.name).toBe(true);
  });
  it("non-canonical encodings of A and R are accepted (y ≥ p, x = −0)", () => {
    const nonCanonical = cases.filter((c) => c.zip215 && /y = p|x = −0/.test(c.name));
    expect(nonCanonical.length).toBeGreaterThan(50);
    for (const c of nonCanonical) expect(verifyEd25519(hex(c.publicKey), hex(c.message), hex(c.signature)), c.name).toBe(true);
  });
});

describe("the native fast path is sound: whatever OpenSSL accepts, ZIP-215 accepts", () => {
  it("holds on every edge case", () => {
    for (const c of cases) if (openssl(c)) expect(c.zip215, c.name).toBe(true);
  });
});

describe("S must be below L", () => {
  it("rejects S + L and S with the top bit set, though the point equation is the same", () => {
    const high = cases.filter((c) => c.group === "S ≥ L");
    expect(high.length).toBeGreaterThan(0);
    for (const c of high) {
      expect(verifyEd25519(hex(c.publicKey), hex(c.message), hex(c.signature)), c.name).toBe(false);
      expect(openssl(c), c.name).toBe(false);
    }
  });
});

describe("honest signatures verify the same under every rule set", () => {
  it("native, noble ZIP-215 and the combined verifier agree, and a flipped bit fails all three", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), (seed, message, bit) => {
        const publicKey = ed25519PublicKey(seed);
        const signature = signEd25519(seed, message);
        const c = { publicKey: Buffer.from(publicKey).toString("hex"), message: Buffer.from(message).toString("hex"), signature: Buffer.from(signature).toString("hex") } as Zip215Case;
        expect(openssl(c)).toBe(true);
        expect(verifyEd25519Zip215(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519(publicKey, message, signature)).toBe(true);
        const flipped = signature.slice();
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        const f = { ...c, signature: Buffer.from(flipped).toString("hex") };
        const zip = verifyEd25519Zip215(publicKey, message, flipped);
        expect(verifyEd25519(publicKey, message, flipped)).toBe(zip);
        expect(zip).toBe(openssl(f));
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
