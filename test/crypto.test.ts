import { createHash, generateKeyPairSync, sign as nodeSign } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bech32Address, blake2b256, blake2b256Js, blake2bBackend, ed25519Address, ed25519PublicKey, parseBech32Address, sha256, signEd25519, verifyEd25519, verifyEd25519Zip215 } from "../src/crypto/index.js";
import { expectProtocolError, hex, loadVectors, toHexString } from "./helpers.js";

const vectors = loadVectors();

describe("BLAKE2b-256 is BLAKE2b with a 32-byte digest parameter", () => {
  it("runs on WebAssembly in Node", () => expect(blake2bBackend).toBe("wasm"));
  it("matches the RFC 7693 style known answer for the empty input", () => {
    expect(toHexString(blake2b256(new Uint8Array(0)))).toBe("0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
  });
  it("is not a truncated BLAKE2b-512", () => {
    const truncated = createHash("blake2b512").update("abc").digest().subarray(0, 32);
    expect(toHexString(blake2b256(new TextEncoder().encode("abc")))).not.toBe(toHexString(truncated));
  });
  it("agrees with the pure TypeScript fallback on every length up to 70 KiB", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(blake2b256(bytes)).toEqual(blake2b256Js(bytes));
      }),
    );
    const big = Uint8Array.from({ length: 70_000 }, (_, i) => i * 7);
    expect(blake2b256(big)).toEqual(blake2b256Js(big));
    expect(blake2b256(new Uint8Array(3))).toEqual(blake2b256Js(new Uint8Array(3)));
  });
});

describe("SHA-256", () => {
  it("matches node:crypto", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        expect(toHexString(sha256(b))).toBe(createHash("sha256").update(b).digest("hex"));
      }));
  });
});

describe("Bech32 addresses (TIP-11)", () => {
  for (const v of vectors.bech32) {
    it(`derives ${v.iota} from the TIP-11 public key`, () => {
      const address = ed25519Address(hex(v.publicKey));
      expect(toHexString(address)).toBe(v.address);
      expect(bech32Address("iota", address)).toBe(v.iota);
      expect(bech32Address("atoi", address)).toBe(v.atoi);
      expect(parseBech32Address(v.iota)).toEqual({ hrp: "iota", address });
      expect(parseBech32Address(v.atoi.toUpperCase())).toEqual({ hrp: "atoi", address });
    });
    it("rejects a flipped character, mixed case and a bech32m checksum", () => {
      const flipped = v.iota.slice(0, 10) + (v.iota[10] === "q" ? "p" : "q") + v.iota.slice(11);
      expectProtocolError(() => parseBech32Address(flipped), "INVALID_BECH32");
      expectProtocolError(() => parseBech32Address(v.iota.slice(0, 5) + v.iota.slice(5).toUpperCase()), "INVALID_BECH32");
      expectProtocolError(() => parseBech32Address("iota1"), "INVALID_BECH32");
    });
  }
  it("round-trips any address under any hrp", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.constantFrom("iota", "atoi", "smr", "rms"), (address, hrp) => {
        expect(parseBech32Address(bech32Address(hrp, address))).toEqual({ hrp, address });
      }),
    );
  });
  it("never throws anything but ProtocolError on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (text) => {
        try {
          parseBech32Address(text);
        } catch (error) {
          expect((error as Error).name).toBe("ProtocolError");
        }
      }),
    );
  });
});

describe("Ed25519 signatures", () => {
  it("signs like node:crypto and verifies both ways", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 100 }), (seed, message) => {
        const signature = signEd25519(seed, message);
        const publicKey = ed25519PublicKey(seed);
        expect(verifyEd25519(publicKey, message, signature)).toBe(true);
        expect(verifyEd25519Zip215(publicKey, message, signature)).toBe(true);
        const flipped = signature.slice();
        flipped[0]! ^= 1;
        expect(verifyEd25519(publicKey, message, flipped)).toBe(false);
      }),
      { numRuns: 50 },
    );
  });
  it("verifies a node:crypto signature", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12);
    const message = new TextEncoder().encode("chrysalis");
    expect(verifyEd25519(new Uint8Array(raw), message, new Uint8Array(nodeSign(null, message, privateKey)))).toBe(true);
  });
  it("returns false for keys and signatures of the wrong length", () => {
    expect(verifyEd25519(new Uint8Array(31), new Uint8Array(0), new Uint8Array(64))).toBe(false);
    expect(verifyEd25519(new Uint8Array(32), new Uint8Array(0), new Uint8Array(63))).toBe(false);
    expectProtocolError(() => signEd25519(new Uint8Array(31), new Uint8Array(0)), "INVALID_KEY");
  });
});
