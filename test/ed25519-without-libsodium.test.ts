// Ed25519 verification where libsodium is not loaded (sodium-native not installed, or its addon not loadable on the
// platform): node:crypto and noble alone must give the same verdicts as with it.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { hex } from "./helpers.js";

vi.mock("../src/crypto/sodium.js", async (importOriginal) => ({ ...(await importOriginal<typeof import("../src/crypto/sodium.js")>()), libsodium: () => undefined }));

const { ed25519PublicKey, signEd25519, verifyEd25519, verifyEd25519Zip215 } = await import("../src/crypto/ed25519.js");
const { nativeCrypto } = await import("../src/crypto/native.js");
const { libsodium } = await import("../src/crypto/sodium.js");

const speccheck = JSON.parse(readFileSync(new URL("./vectors/ed25519-speccheck.json", import.meta.url), "utf8")) as { cases: { message: string; pub_key: string; signature: string }[]; verdicts: Record<string, string> };
const cases = speccheck.cases.map((c, i) => ({ i, publicKey: hex(c.pub_key), message: hex(c.message), signature: hex(c.signature) }));
const published = (library: string, i: number): boolean => speccheck.verdicts[library]![i] === "V";

describe("without libsodium, node:crypto and noble decide alone, with the same verdicts", () => {
  it("libsodium is not loaded here, node:crypto is", () => {
    expect(libsodium()).toBeUndefined();
    expect(nativeCrypto).toBeDefined();
  });

  it.each(cases)("ZIP-215 gives Zebra's published verdict and strict OpenSSL's: case $i", ({ i, publicKey, message, signature }) => {
    expect(verifyEd25519(publicKey, message, signature)).toBe(published("Zebra", i));
    expect(verifyEd25519(publicKey, message, signature, "strict")).toBe(published("OpenSSL-3.0", i));
  });

  it("honest signatures verify under both rules, and a flipped bit fails both as ZIP-215 decides", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 64 }), fc.nat(511), (seed, message, bit) => {
        const publicKey = ed25519PublicKey(seed);
        const signature = signEd25519(seed, message);
        expect(verifyEd25519(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519(publicKey, message, signature, "strict")).toBe(true);
        const flipped = signature.slice();
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        const zip = verifyEd25519Zip215(publicKey, message, flipped);
        expect(verifyEd25519(publicKey, message, flipped)).toBe(zip);
        expect(verifyEd25519(publicKey, message, flipped, "strict")).toBe(zip);
      }),
      { numRuns: 40 },
    );
  });
});
