// The prove-ownership proof (PROTOCOL.md §7): nonce shape, SHA-256 of its text, Ed25519 over the raw digest, Base58 secrets.
// Checked by properties, against node:crypto in both directions, and for the secret never leaking into errors.
import { createHash, createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  createNonce,
  generateIdentityKeyPair,
  hashNonce,
  isNonce,
  publicKeyFromSecretKey,
  signNonce,
  verifySignedNonce,
} from "../src/auth/index.js";
import { createEdDsaJwt, createHs256Jwt } from "../src/auth/jwt.js";
import { hmacSha256, hmacSha256Js, hmacSha256Text, verifyEd25519Strict, verifyEd25519StrictJs } from "../src/auth/primitives.js";
import { verifyEd25519 } from "../src/crypto/ed25519.js";
import { base58Encode } from "../src/bytes/base58.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { ed25519PublicKey } from "../src/crypto/ed25519.js";
import { expectProtocolError, toHexString } from "./helpers.js";

const seedArb = fc.uint8Array({ minLength: 32, maxLength: 32 });
const nonceBytesArb = fc.uint8Array({ minLength: 20, maxLength: 20 });

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = bytes.slice();
  out[bit >> 3]! ^= 1 << (bit & 7);
  return out;
}

function nodeKeyPair(): { seed: Uint8Array; publicKey: Uint8Array; privateKey: ReturnType<typeof createPrivateKey> } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  return { seed: new Uint8Array(Buffer.from(jwk.d!, "base64url")), publicKey: new Uint8Array(Buffer.from(jwk.x!, "base64url")), privateKey };
}

describe("a nonce is 20 bytes from a CSPRNG as 40 lowercase hex characters", () => {
  it("createNonce gives 40 lowercase hex characters, never the same twice", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const nonce = createNonce();
      expect(nonce).toMatch(/^[0-9a-f]{40}$/);
      expect(isNonce(nonce)).toBe(true);
      seen.add(nonce);
    }
    expect(seen.size).toBe(2000);
  });

  it("anything else is not a nonce: uppercase, 0x, wrong length, non-strings", () => {
    const nonce = createNonce();
    for (const bad of [nonce.toUpperCase().replace(/[0-9]/g, "A"), `0x${nonce.slice(2)}`, nonce.slice(1), `${nonce}0`, "", 42, null, undefined, [nonce]]) {
      expect(isNonce(bad)).toBe(false);
      expectProtocolError(() => hashNonce(bad as string), "INVALID_NONCE", { path: "nonce" });
    }
  });
});

describe("the client hashes the UTF-8 bytes of the 40-character nonce with SHA-256", () => {
  it("hashNonce equals node:crypto's SHA-256 of the nonce text", () => {
    fc.assert(
      fc.property(nonceBytesArb, (bytes) => {
        const nonce = toHexString(bytes);
        expect(toHexString(hashNonce(nonce))).toBe(createHash("sha256").update(nonce, "utf8").digest("hex"));
      }),
      { numRuns: 200 },
    );
  });
});

describe("Ed25519 signs the 32 raw digest bytes; signedNonce is 128 lowercase hex characters", () => {
  it("sign then verify succeeds for random keys and nonces", () => {
    fc.assert(
      fc.property(seedArb, nonceBytesArb, (seed, bytes) => {
        const nonce = toHexString(bytes);
        const signed = signNonce(nonce, base58Encode(seed));
        expect(signed).toMatch(/^[0-9a-f]{128}$/);
        expect(verifySignedNonce(nonce, signed, ed25519PublicKey(seed))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("any one-bit change of the signature, the nonce or the key fails", () => {
    fc.assert(
      fc.property(seedArb, nonceBytesArb, fc.nat(511), fc.nat(159), fc.nat(255), (seed, bytes, sigBit, nonceBit, keyBit) => {
        const nonce = toHexString(bytes);
        const publicKey = ed25519PublicKey(seed);
        const signature = Buffer.from(signNonce(nonce, base58Encode(seed)), "hex");
        const signed = toHexString(signature);
        expect(verifySignedNonce(nonce, toHexString(flipBit(signature, sigBit)), publicKey)).toBe(false);
        expect(verifySignedNonce(toHexString(flipBit(bytes, nonceBit)), signed, publicKey)).toBe(false);
        expect(verifySignedNonce(nonce, signed, flipBit(publicKey, keyBit))).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it("the signature is over the raw digest, not over its 64-character hex text", () => {
    const { seed, publicKey, privateKey } = nodeKeyPair();
    const nonce = createNonce();
    const overHexText = nodeSign(null, Buffer.from(toHexString(hashNonce(nonce)), "utf8"), privateKey);
    expect(verifySignedNonce(nonce, overHexText.toString("hex"), publicKey)).toBe(false);
    expect(nodeVerify(null, hashNonce(nonce), createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") }, format: "jwk" }), Buffer.from(signNonce(nonce, base58Encode(seed)), "hex"))).toBe(true);
  });

  it("an uppercase signedNonce is read too (hex input accepts either case)", () => {
    const { secretKey, publicKey } = generateIdentityKeyPair();
    const nonce = createNonce();
    expect(verifySignedNonce(nonce, signNonce(nonce, secretKey).toUpperCase(), publicKey)).toBe(true);
  });
});

describe("interoperability with node:crypto's Ed25519, both ways", () => {
  it("a signature node:crypto makes over the SHA-256 digest verifies with verifySignedNonce", () => {
    for (let i = 0; i < 20; i++) {
      const { publicKey, privateKey } = nodeKeyPair();
      const nonce = createNonce();
      const signature = nodeSign(null, createHash("sha256").update(nonce).digest(), privateKey);
      expect(verifySignedNonce(nonce, signature.toString("hex"), publicKey)).toBe(true);
    }
  });

  it("signNonce's signature verifies under node:crypto, with the seed node:crypto generated", () => {
    for (let i = 0; i < 20; i++) {
      const { seed, privateKey } = nodeKeyPair();
      const nonce = createNonce();
      const signature = Buffer.from(signNonce(nonce, base58Encode(seed)), "hex");
      const nodePublic = createPublicKey(privateKey);
      expect(nodeVerify(null, createHash("sha256").update(nonce).digest(), nodePublic, signature)).toBe(true);
      // Ed25519 is deterministic: both sides make the very same signature.
      expect(signature.equals(nodeSign(null, createHash("sha256").update(nonce).digest(), privateKey))).toBe(true);
    }
  });
});

describe("the secret key is Base58 of the 32-byte seed, or of seed ‖ public key with a matching public half", () => {
  it("a 64-byte seed ‖ public key signs like its seed", () => {
    const { seed, publicKey } = nodeKeyPair();
    const nonce = createNonce();
    const full = base58Encode(new Uint8Array([...seed, ...publicKey]));
    expect(signNonce(nonce, full)).toBe(signNonce(nonce, base58Encode(seed)));
    expect(publicKeyFromSecretKey(full)).toEqual(publicKey);
    expect(publicKeyFromSecretKey(base58Encode(seed))).toEqual(publicKey);
  });

  it("a 64-byte key whose public half belongs to another seed is refused", () => {
    const a = nodeKeyPair();
    const b = nodeKeyPair();
    expectProtocolError(() => signNonce(createNonce(), base58Encode(new Uint8Array([...a.seed, ...b.publicKey]))), "INVALID_SECRET_KEY", { path: "secretKey" });
  });

  it("other lengths, non-Base58 text and non-strings are refused with INVALID_SECRET_KEY (400)", () => {
    const nonce = createNonce();
    for (const bad of ["", "0OIl", base58Encode(new Uint8Array(31).fill(7)), base58Encode(new Uint8Array(33).fill(7)), base58Encode(new Uint8Array(65).fill(7)), "x".repeat(2000), 12, null, undefined, {}]) {
      const error = expectProtocolError(() => signNonce(nonce, bad as string), "INVALID_SECRET_KEY");
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).status).toBe(400);
    }
  });

  it("generateIdentityKeyPair gives a Base58 seed whose public key it reports", () => {
    const { secretKey, publicKey } = generateIdentityKeyPair();
    expect(publicKeyFromSecretKey(secretKey)).toEqual(publicKey);
    const nonce = createNonce();
    expect(verifySignedNonce(nonce, signNonce(nonce, secretKey), publicKey)).toBe(true);
  });
});

describe("the secret never appears in an error message", () => {
  it("malformed variants of a real secret key raise errors that do not contain it", () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom("truncate", "append", "badchar", "mismatch", "pad"), (seed, how) => {
        const secret = base58Encode(seed);
        const other = ed25519PublicKey(seed.map((b) => b ^ 0xff));
        const variant =
          how === "truncate" ? secret.slice(0, -3)
          : how === "append" ? `${secret}${secret.slice(0, 4)}`
          : how === "badchar" ? `${secret.slice(0, 10)}0${secret.slice(11)}`
          : how === "mismatch" ? base58Encode(new Uint8Array([...seed, ...other]))
          : `1${secret}`;
        let caught: unknown;
        try {
          signNonce(createNonce(), variant);
        } catch (error) {
          caught = error;
        }
        // A leading '1' adds a zero byte: 33 bytes, refused.
        expect(caught).toBeInstanceOf(AuthError);
        const error = caught as AuthError;
        expect(error.code).toBe("INVALID_SECRET_KEY");
        for (const text of [error.message, String(error), error.stack ?? "", JSON.stringify(error), String(error.cause ?? "")]) {
          expect(text).not.toContain(variant);
          expect(text).not.toContain(secret.slice(0, 16));
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("bad input never crashes: it verifies, or raises ProtocolError with a stable code", () => {
  it("verifySignedNonce and signNonce on arbitrary values", () => {
    const { secretKey, publicKey } = generateIdentityKeyPair();
    const nonce = createNonce();
    const signed = signNonce(nonce, secretKey);
    const anyOf = (good: unknown) => fc.oneof(fc.constant(good), fc.anything(), fc.string(), fc.uint8Array({ maxLength: 70 }));
    fc.assert(
      fc.property(anyOf(nonce), anyOf(signed), anyOf(publicKey), anyOf(secretKey), (n, s, k, sk) => {
        try {
          expect(typeof verifySignedNonce(n as string, s as string, k as Uint8Array)).toBe("boolean");
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as AuthError).status).toBe(400);
        }
        try {
          expect(signNonce(n as string, sk as string)).toMatch(/^[0-9a-f]{128}$/);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as AuthError).status).toBe(400);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a malformed signedNonce or public key is a 400 with its own code, not false", () => {
    const nonce = createNonce();
    const { publicKey, secretKey } = generateIdentityKeyPair();
    const signed = signNonce(nonce, secretKey);
    expectProtocolError(() => verifySignedNonce(nonce, signed.slice(2), publicKey), "INVALID_SIGNED_NONCE", { path: "signedNonce" });
    expectProtocolError(() => verifySignedNonce(nonce, `${signed.slice(0, 127)}g`, publicKey), "INVALID_SIGNED_NONCE");
    expectProtocolError(() => verifySignedNonce(nonce, signed, publicKey.subarray(1)), "INVALID_PUBLIC_KEY", { path: "publicKey" });
  });
});

describe("a Node Buffer the caller passes is read, never changed or kept (its slice() is a view, not a copy)", () => {
  it("signNonce and a failed EdDSA key check leave a Buffer seed as it was", () => {
    const seed = Buffer.alloc(32, 7);
    const nonce = createNonce();
    const signed = signNonce(nonce, seed);
    expect(seed.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(verifySignedNonce(nonce, signed, publicKeyFromSecretKey(seed))).toBe(true);
    expect(() => createEdDsaJwt({ publicKey: generateIdentityKeyPair().publicKey, privateKey: seed })).toThrow(AuthError);
    expect(seed.equals(Buffer.alloc(32, 7))).toBe(true);
  });

  it("verifying a pooled Buffer signature with R's sign bit flipped leaves it flipped and refused, every time, under both rules", () => {
    const seed = new Uint8Array(32).fill(3);
    const nonce = createNonce();
    const digest = hashNonce(nonce);
    const flipped = Buffer.from(signNonce(nonce, seed), "hex"); // small: carved from Buffer's pool, at an offset
    flipped[31]! ^= 0x80;
    const before = Buffer.from(flipped);
    const publicKey = publicKeyFromSecretKey(seed);
    for (let round = 0; round < 3; round++) {
      expect(verifyEd25519Strict(publicKey, digest, flipped)).toBe(false);
      expect(verifyEd25519(publicKey, digest, flipped)).toBe(false);
      expect(verifyEd25519StrictJs(publicKey, digest, flipped)).toBe(false);
      expect(flipped.equals(before)).toBe(true);
    }
  });

  it("an HS256 secret given as a Buffer is copied: the caller changing it later changes nothing", async () => {
    const secret = Buffer.alloc(32, 9);
    const jwt = createHs256Jwt({ secret });
    const token = await jwt.issue("did:iota:abc");
    secret.fill(0);
    expect((await jwt.verify(token)).sub).toBe("did:iota:abc");
  });
});

describe("where node:crypto is missing, the pure-TypeScript paths decide the same", () => {
  it("strict Ed25519: valid, bit-flipped and wrong-key proofs get the same verdict from both backends", () => {
    fc.assert(
      fc.property(seedArb, nonceBytesArb, fc.nat(511), fc.boolean(), (seed, bytes, bit, flip) => {
        const digest = hashNonce(toHexString(bytes));
        const signature = Buffer.from(signNonce(toHexString(bytes), base58Encode(seed)), "hex");
        const sig = flip ? flipBit(signature, bit) : new Uint8Array(signature);
        const publicKey = ed25519PublicKey(seed);
        expect(verifyEd25519StrictJs(publicKey, digest, sig)).toBe(verifyEd25519Strict(publicKey, digest, sig));
        expect(verifyEd25519Strict(publicKey, digest, sig)).toBe(!flip);
      }),
      { numRuns: 40 },
    );
  });

  it("HMAC-SHA-256: both backends equal node:crypto's createHmac", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 100 }), fc.uint8Array({ maxLength: 300 }), (key, message) => {
        const expected = createHmac("sha256", key).update(message).digest("hex");
        expect(toHexString(hmacSha256(key)(message))).toBe(expected);
        const js = hmacSha256Js(key);
        expect(toHexString(js(message))).toBe(expected);
        expect(toHexString(js(message))).toBe(expected); // the keyed state is reused, not consumed
      }),
      { numRuns: 100 },
    );
  });

  it("HMAC-SHA-256 as text: lowercase hex and unpadded base64url of the same tag, for bytes and for text", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 64 }), fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string(), fc.constant("a\uD800b")), (key, message) => {
        const bytes = typeof message === "string" ? new TextEncoder().encode(message) : message;
        const tag = createHmac("sha256", key).update(bytes).digest();
        const hex = hmacSha256Text(key, "hex");
        const base64url = hmacSha256Text(key, "base64url");
        expect(hex(message)).toBe(tag.toString("hex"));
        expect(base64url(message)).toBe(tag.toString("base64url"));
        expect(base64url(message)).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(hex(message)).toBe(tag.toString("hex")); // the keyed state is reused, not consumed
      }),
      { numRuns: 100 },
    );
  });

  it("HMAC-SHA-256 of text is the HMAC of its UTF-8 bytes, on both backends (lone surrogates as U+FFFD)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 64 }), fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constant("a\uD800b")), (key, text) => {
        const expected = createHmac("sha256", key).update(new TextEncoder().encode(text)).digest("hex");
        expect(toHexString(hmacSha256(key)(text))).toBe(expected);
        expect(toHexString(hmacSha256Js(key)(text))).toBe(expected);
      }),
      { numRuns: 100 },
    );
  });
});
