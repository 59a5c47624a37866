// Ed25519 verification where libsodium is not loaded (sodium-native not installed, or its addon not loadable on the
// platform): node:crypto and noble alone must give the same verdicts as with it.
import { readFileSync } from "node:fs";
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

  it("an honest signature verifies under both rules, and each of its 512 one-bit changes is decided as ZIP-215 decides", () => {
    const seed = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
    const message = new TextEncoder().encode("a prove-ownership nonce, hashed");
    const publicKey = ed25519PublicKey(seed);
    const signature = signEd25519(seed, message);
    expect([verifyEd25519(publicKey, message, signature), verifyEd25519(publicKey, message, signature, "strict")]).toEqual([true, true]);
    for (let bit = 0; bit < 512; bit++) {
      const changed = signature.slice();
      changed[bit >> 3]! ^= 1 << (bit & 7);
      const expected = verifyEd25519Zip215(publicKey, message, changed);
      expect([verifyEd25519(publicKey, message, changed), verifyEd25519(publicKey, message, changed, "strict")], `bit ${bit}`).toEqual([expected, expected]);
    }
  });
});
