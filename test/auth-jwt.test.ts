// JWTs for proven identities (issue #4): HS256 and EdDSA round trips, each rejection with its own code, lifetimes that
// are never milliseconds, interoperability with jose and node:crypto, and a differential check against jose's verdicts.
import { createHmac, createPrivateKey, sign as nodeSign } from "node:crypto";
import fc from "fast-check";
import { SignJWT, UnsecuredJWT, importJWK, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { AuthError, createEdDsaJwt, createHs256Jwt, generateIdentityKeyPair, parseDuration, type JwtClaims, type LocalJwtService } from "../src/auth/index.js";
import { base58Decode, base58Encode } from "../src/bytes/base58.js";
import { randomTokenId } from "../src/auth/primitives.js";
import { base64urlDecode, base64urlEncode, base64urlEncodeJs, base64urlEncodeText } from "../src/auth/base64url.js";

const SECRET = new TextEncoder().encode("0123456789abcdef0123456789abcdef-hs256");
const T0 = 1_800_000_000_000;

class Clock {
  ms = T0;
  now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

const b64 = (value: unknown): string => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** A compact JWS with any header and claims, HMAC-SHA-256 signed with `secret` (node:crypto, independent of the code under test). */
function forgeHs256(header: unknown, claims: unknown, secret: Uint8Array = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

function decodeSegment(token: string, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[index]!, "base64url").toString("utf8")) as Record<string, unknown>;
}

async function rejection(service: LocalJwtService, token: string): Promise<AuthError> {
  const error = await service.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected the token to be refused").toBeInstanceOf(AuthError);
  expect((error as AuthError).status).toBe(401);
  return error as AuthError;
}

function edKeys() {
  const { secretKey, publicKey } = generateIdentityKeyPair();
  return { secretKey, publicKey };
}

describe("HS256: sign with a shared secret of at least 32 bytes", () => {
  it("round trip: sub, iat, exp one hour later by default, a random jti, header alg HS256 typ JWT", async () => {
    const clock = new Clock();
    const jwt = createHs256Jwt({ secret: SECRET, now: clock.now });
    const token = await jwt.issue("did:iota:abc");
    expect(decodeSegment(token, 0)).toEqual({ alg: "HS256", typ: "JWT" });
    const claims = await jwt.verify(token);
    expect(claims).toMatchObject({ sub: "did:iota:abc", iat: T0 / 1000, exp: T0 / 1000 + 3600 });
    expect(claims.jti).toMatch(/^[\w-]{22}$/);
    expect((await jwt.verify(await jwt.issue("did:iota:abc"))).jti).not.toBe(claims.jti);
    expect(jwt.verifySync(token)).toEqual(claims);
  });

  it("a secret shorter than 32 bytes is refused at construction", () => {
    for (const secret of [new Uint8Array(31), "thirty-one bytes of secret text", "", new Uint8Array(0), 42 as unknown as string]) {
      let caught: unknown;
      try {
        createHs256Jwt({ secret });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(AuthError);
      expect((caught as AuthError).code).toBe("INVALID_JWT_SECRET");
    }
    expect(() => createHs256Jwt({ secret: new Uint8Array(32) })).not.toThrow();
    expect(() => createHs256Jwt({ secret: "thirty-two bytes of secret text!" })).not.toThrow();
  });

  it("the secret is never in an error message", () => {
    const secret = "short-secret-value";
    try {
      createHs256Jwt({ secret });
    } catch (error) {
      expect(String(error)).not.toContain(secret);
      expect((error as Error).stack ?? "").not.toContain(secret);
    }
  });

  it("extra claims ride along; the service's own claims cannot be overridden", async () => {
    const jwt = createHs256Jwt({ secret: SECRET });
    expect((await jwt.verify(await jwt.issue("a", { role: "admin", n: 3 }))).role).toBe("admin");
    for (const name of ["sub", "exp", "iat", "jti", "nbf", "iss", "aud"]) {
      await expect(jwt.issue("a", { [name]: 1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    }
    await expect(jwt.issue("a", { big: 1n })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(jwt.issue("")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("EdDSA: sign with an Ed25519 key pair, verify with the public key alone", () => {
  it("round trip, and a verify-only service accepts the same token", async () => {
    const { secretKey, publicKey } = edKeys();
    const issuer = createEdDsaJwt({ privateKey: secretKey, publicKey });
    const token = await issuer.issue("did:iota:xyz");
    expect(decodeSegment(token, 0)).toEqual({ alg: "EdDSA", typ: "JWT" });
    expect((await issuer.verify(token)).sub).toBe("did:iota:xyz");
    const verifier = createEdDsaJwt({ publicKey: base58Encode(publicKey) });
    expect((await verifier.verify(token)).sub).toBe("did:iota:xyz");
    await expect(verifier.issue("x")).rejects.toMatchObject({ code: "JWT_CANNOT_ISSUE", status: 500 });
  });

  it("a private key that does not belong to the public key, or keys of the wrong size, are refused", () => {
    const a = edKeys();
    const b = edKeys();
    expect(() => createEdDsaJwt({ privateKey: a.secretKey, publicKey: b.publicKey })).toThrow(expect.objectContaining({ code: "INVALID_JWT_KEY" }));
    expect(() => createEdDsaJwt({ publicKey: a.publicKey.subarray(1) })).toThrow(expect.objectContaining({ code: "INVALID_JWT_KEY" }));
    expect(() => createEdDsaJwt({ privateKey: "not base58 0OIl", publicKey: a.publicKey })).toThrow(expect.objectContaining({ code: "INVALID_JWT_KEY" }));
  });

  it("tokens verify under jose with the public key, and node:crypto-signed tokens verify here", async () => {
    const { secretKey, publicKey } = edKeys();
    const service = createEdDsaJwt({ privateKey: secretKey, publicKey });
    const x = Buffer.from(publicKey).toString("base64url");
    const joseKey = await importJWK({ kty: "OKP", crv: "Ed25519", x }, "EdDSA");
    const { payload } = await jwtVerify(await service.issue("alice"), joseKey, { algorithms: ["EdDSA"] });
    expect(payload.sub).toBe("alice");

    const { seed, nodeKey } = (() => {
      const s = Buffer.from(base58Decode(secretKey));
      return { seed: s, nodeKey: createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", x, d: s.toString("base64url") }, format: "jwk" }) };
    })();
    expect(seed.length).toBe(32);
    const now = Math.floor(Date.now() / 1000);
    const input = `${b64({ alg: "EdDSA" })}.${b64({ sub: "bob", iat: now, exp: now + 60, jti: "j1" })}`;
    const token = `${input}.${nodeSign(null, Buffer.from(input), nodeKey).toString("base64url")}`;
    expect((await service.verify(token)).sub).toBe("bob");
  });
});

describe("HS256 interoperability with jose", () => {
  it("our tokens verify under jose's jwtVerify, and jose's verify here", async () => {
    const jwt = createHs256Jwt({ secret: SECRET, issuer: "chrysalis", audience: "api" });
    const { payload } = await jwtVerify(await jwt.issue("alice"), SECRET, { algorithms: ["HS256"], issuer: "chrysalis", audience: "api" });
    expect(payload.sub).toBe("alice");
    const theirs = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("bob").setIssuedAt().setExpirationTime("5m").setJti("id-1").setIssuer("chrysalis").setAudience(["api", "other"]).sign(SECRET);
    expect(await jwt.verify(theirs)).toMatchObject({ sub: "bob", jti: "id-1", aud: ["api", "other"] });
  });
});

describe("verification refuses each bad token with its own code", () => {
  const clock = new Clock();
  const hs = createHs256Jwt({ secret: SECRET, now: clock.now, issuer: "chrysalis", audience: "api" });
  const ed = edKeys();
  const eddsa = createEdDsaJwt({ privateKey: ed.secretKey, publicKey: ed.publicKey, now: clock.now });
  const t = T0 / 1000;
  const good = { sub: "alice", iat: t, exp: t + 600, jti: "j", iss: "chrysalis", aud: "api" };

  it("tampered payload: TOKEN_INVALID_SIGNATURE", async () => {
    const token = await hs.issue("alice");
    const [h, , s] = token.split(".");
    const claims = decodeSegment(token, 1);
    const forged = `${h}.${b64({ ...claims, sub: "mallory" })}.${s}`;
    expect((await rejection(hs, forged)).code).toBe("TOKEN_INVALID_SIGNATURE");
  });

  it("wrong key: TOKEN_INVALID_SIGNATURE (HS256 and EdDSA)", async () => {
    const other = createHs256Jwt({ secret: new Uint8Array(32).fill(1), now: clock.now, issuer: "chrysalis", audience: "api" });
    expect((await rejection(hs, await other.issue("alice"))).code).toBe("TOKEN_INVALID_SIGNATURE");
    const k = edKeys();
    const otherEd = createEdDsaJwt({ privateKey: k.secretKey, publicKey: k.publicKey, now: clock.now });
    expect((await rejection(eddsa, await otherEd.issue("alice"))).code).toBe("TOKEN_INVALID_SIGNATURE");
  });

  it("alg none: TOKEN_ALGORITHM_NOT_ALLOWED, with or without a signature", async () => {
    const unsecured = new UnsecuredJWT(good).encode();
    expect((await rejection(hs, unsecured)).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(eddsa, unsecured)).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(hs, forgeHs256({ alg: "none" }, good))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(hs, forgeHs256({ alg: "None" }, good))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(hs, forgeHs256({}, good))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
  });

  it("HS/EdDSA confusion: an HS256 token MACed with the EdDSA public key, and an EdDSA token at an HS256 service", async () => {
    expect((await rejection(eddsa, forgeHs256({ alg: "HS256", typ: "JWT" }, good, ed.publicKey))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(eddsa, forgeHs256({ alg: "HS256" }, good, new TextEncoder().encode(base58Encode(ed.publicKey))))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(hs, await eddsa.issue("alice"))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
    expect((await rejection(hs, forgeHs256({ alg: "HS512" }, good))).code).toBe("TOKEN_ALGORITHM_NOT_ALLOWED");
  });

  it("expired: TOKEN_EXPIRED once exp is past by more than the clock tolerance (default 5 s)", async () => {
    const c = new Clock();
    const jwt = createHs256Jwt({ secret: SECRET, now: c.now, lifetime: "10m" });
    const token = await jwt.issue("alice");
    c.advance(600 + 4);
    expect((await jwt.verify(token)).sub).toBe("alice");
    c.advance(1);
    expect((await rejection(jwt, token)).code).toBe("TOKEN_EXPIRED");
  });

  it("not yet valid: TOKEN_NOT_YET_VALID for nbf, or iat, beyond the tolerance in the future", async () => {
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, nbf: t + 60 }))).code).toBe("TOKEN_NOT_YET_VALID");
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, iat: t + 60 }))).code).toBe("TOKEN_NOT_YET_VALID");
    expect((await hs.verify(forgeHs256({ alg: "HS256" }, { ...good, nbf: t + 5 }))).sub).toBe("alice");
  });

  it("clockTolerance is configurable", async () => {
    const c = new Clock();
    const strict = createHs256Jwt({ secret: SECRET, now: c.now, clockTolerance: 0, lifetime: 60 });
    const lenient = createHs256Jwt({ secret: SECRET, now: c.now, clockTolerance: "2m", lifetime: 60 });
    const token = await strict.issue("a");
    c.advance(60);
    expect((await rejection(strict, token)).code).toBe("TOKEN_EXPIRED");
    expect((await lenient.verify(token)).sub).toBe("a");
  });

  it("missing or mistyped claims: TOKEN_CLAIM_INVALID", async () => {
    for (const claims of [{ ...good, sub: undefined }, { ...good, sub: "" }, { ...good, sub: 7 }, { ...good, exp: "soon" }, { ...good, exp: undefined }, { ...good, iat: null }, { ...good, jti: undefined }, { ...good, nbf: "x" }]) {
      const error = await rejection(hs, forgeHs256({ alg: "HS256" }, claims));
      expect(error.code).toBe("TOKEN_CLAIM_INVALID");
    }
  });

  it("another issuer or audience: TOKEN_ISSUER_MISMATCH, TOKEN_AUDIENCE_MISMATCH", async () => {
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, iss: "elsewhere" }))).code).toBe("TOKEN_ISSUER_MISMATCH");
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, iss: undefined }))).code).toBe("TOKEN_ISSUER_MISMATCH");
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, aud: "web" }))).code).toBe("TOKEN_AUDIENCE_MISMATCH");
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, aud: ["web", "x"] }))).code).toBe("TOKEN_AUDIENCE_MISMATCH");
    expect((await hs.verify(forgeHs256({ alg: "HS256" }, { ...good, aud: ["web", "api"] }))).sub).toBe("alice");
  });

  it("malformed tokens, critical headers and re-spelt signatures: TOKEN_MALFORMED or TOKEN_INVALID_SIGNATURE", async () => {
    const token = forgeHs256({ alg: "HS256" }, good);
    const [h, p, s] = token.split(".") as [string, string, string];
    for (const bad of ["", "abc", `${h}.${p}`, `${h}.${p}.${s}.x`, `.${p}.${s}`, `${h}..${s}`, `${h}=.${p}.${s}`, `${b64("[1]")}.${p}.${s}`, `${b64("nope")}.${p}.${s}`, "a".repeat(9000)]) {
      expect((await rejection(hs, bad)).code).toBe("TOKEN_MALFORMED");
    }
    expect((await rejection(hs, forgeHs256({ alg: "HS256", crit: ["exp"] }, good))).code).toBe("TOKEN_MALFORMED");
    expect((await rejection(hs, forgeHs256({ alg: "HS256" }, [good]))).code).toBe("TOKEN_MALFORMED");
    // The last character of a 32-byte signature carries 4 bits of padding: a sibling character decodes to the same bytes elsewhere.
    const last = s.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    expect(Buffer.from(s.slice(0, -1) + sibling, "base64url").equals(Buffer.from(s, "base64url"))).toBe(true);
    expect((await rejection(hs, `${h}.${p}.${s.slice(0, -1)}${sibling}`)).code).toBe("TOKEN_INVALID_SIGNATURE");
    expect((await rejection(hs, `${h}.${p}.`)).code).toBe("TOKEN_INVALID_SIGNATURE");
  });

  it("the distinct failure kinds have distinct codes", async () => {
    const codes = new Set<string>();
    codes.add((await rejection(hs, forgeHs256({ alg: "HS256" }, good, new Uint8Array(32)))).code);
    codes.add((await rejection(hs, new UnsecuredJWT(good).encode())).code);
    codes.add((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, exp: t - 60 }))).code);
    codes.add((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, nbf: t + 60 }))).code);
    codes.add((await rejection(hs, forgeHs256({ alg: "HS256" }, { ...good, jti: 1 }))).code);
    codes.add((await rejection(hs, "x.y")).code);
    expect(codes.size).toBe(6);
  });
});

describe("the lifetime is seconds or an explicit duration, never a bare number read as milliseconds", () => {
  it("numbers are seconds; strings need a unit", async () => {
    const clock = new Clock();
    for (const [lifetime, seconds] of [[900, 900], ["15m", 900], ["2h", 7200], ["90s", 90], ["1d", 86_400], ["1 hour", 3600]] as const) {
      const jwt = createHs256Jwt({ secret: SECRET, lifetime, now: clock.now });
      const claims: JwtClaims = await jwt.verify(await jwt.issue("a"));
      expect(claims.exp - claims.iat).toBe(seconds);
      expect(jwt.lifetime).toBe(seconds);
    }
  });

  it("a bare numeric string, milliseconds, fractions, zero and negatives are refused", () => {
    for (const lifetime of ["3600", "3600000", "10ms", "1.5h", "", "h", 0, -1, 1.5, Number.NaN, Infinity, "999999999d"]) {
      expect(() => createHs256Jwt({ secret: SECRET, lifetime })).toThrow(expect.objectContaining({ code: "INVALID_CONFIGURATION" }));
    }
    expect(() => parseDuration("5m", "x")).not.toThrow();
    expect(() => createHs256Jwt({ secret: SECRET, clockTolerance: "1h" })).toThrow(expect.objectContaining({ code: "INVALID_CONFIGURATION" }));
  });
});

describe("bad tokens never crash, and we never accept what jose refuses", () => {
  it("arbitrary strings and values are refused with a 401 AuthError", async () => {
    const jwt = createHs256Jwt({ secret: SECRET });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.anything(), fc.stringMatching(/^[\w-]*\.[\w-]*\.[\w-]*$/)), async (value) => {
        const error = await jwt.verify(value as string).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AuthError);
        expect((error as AuthError).status).toBe(401);
      }),
      { numRuns: 500 },
    );
  });

  it.each(["HS256", "EdDSA"] as const)("differential (%s): any single-character mutation of a valid token that we accept, jose accepts too", async (alg) => {
    const keys = edKeys();
    const jwt = alg === "HS256" ? createHs256Jwt({ secret: SECRET, clockTolerance: 0 }) : createEdDsaJwt({ privateKey: keys.secretKey, publicKey: keys.publicKey, clockTolerance: 0 });
    const joseKey = alg === "HS256" ? SECRET : await importJWK({ kty: "OKP", crv: "Ed25519", x: Buffer.from(keys.publicKey).toString("base64url") }, "EdDSA");
    const token = await jwt.issue("did:iota:abc", { role: "holder" });
    await jwtVerify(token, joseKey, { algorithms: [alg] });
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ";
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat(token.length - 1), fc.nat(alphabet.length - 1), fc.constantFrom("replace", "insert", "delete"), async (at, ch, how) => {
        const c = alphabet[ch]!;
        const mutated = how === "replace" ? token.slice(0, at) + c + token.slice(at + 1) : how === "insert" ? token.slice(0, at) + c + token.slice(at) : token.slice(0, at) + token.slice(at + 1);
        const ours = await jwt.verify(mutated).then(
          () => true,
          () => false,
        );
        const theirs = await jwtVerify(mutated, joseKey, { algorithms: [alg] }).then(
          () => true,
          () => false,
        );
        if (ours) {
          accepted++;
          expect(mutated).toBe(token);
          expect(theirs).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
    expect(accepted).toBeLessThan(400);
  });
});

describe("a token verified once is remembered, and still checked against the clock on every use", () => {
  it("a remembered token expires like any other, and a caller changing its claims changes nothing for the next request", async () => {
    const c = new Clock();
    const jwt = createHs256Jwt({ secret: SECRET, now: c.now, lifetime: 60, clockTolerance: 0 });
    const token = await jwt.issue("alice");
    const first = await jwt.verify(token);
    first.sub = "mallory";
    expect((await jwt.verify(token)).sub).toBe("alice");
    c.advance(60);
    expect((await rejection(jwt, token)).code).toBe("TOKEN_EXPIRED");
  });

  it("a token with a re-spelt signature is not the remembered one: TOKEN_INVALID_SIGNATURE", async () => {
    const jwt = createHs256Jwt({ secret: SECRET });
    const token = await jwt.issue("alice");
    expect((await jwt.verify(token)).sub).toBe("alice");
    const [h, p, s] = token.split(".") as [string, string, string];
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sibling = alphabet[alphabet.indexOf(s.at(-1)!) ^ 1]!;
    expect((await rejection(jwt, `${h}.${p}.${s.slice(0, -1)}${sibling}`)).code).toBe("TOKEN_INVALID_SIGNATURE");
  });
});

describe("the memory of verified tokens is bounded and changes no verdict", () => {
  it("more distinct tokens than it holds, twice round, all verify with their own claims; each still expires", async () => {
    const c = new Clock();
    const jwt = createHs256Jwt({ secret: SECRET, now: c.now, lifetime: 60, clockTolerance: 0 });
    const tokens = await Promise.all(Array.from({ length: 2500 }, (_, i) => jwt.issue(`id-${i}`)));
    for (let pass = 0; pass < 2; pass++) for (const [i, token] of tokens.entries()) expect((await jwt.verify(token)).sub).toBe(`id-${i}`);
    c.advance(60);
    for (const token of [tokens[0]!, tokens[2499]!]) expect((await rejection(jwt, token)).code).toBe("TOKEN_EXPIRED");
  });
});

describe("every token has its own id: 128 random bits, each drawn once", () => {
  it("ids stay distinct 128-bit values across refills of the random pool they are drawn from", async () => {
    const jwt = createHs256Jwt({ secret: SECRET });
    const ids = new Set<string>();
    // 600 ids pass the 256-id block twice.
    for (let i = 0; i < 600; i++) {
      const jti = decodeSegment(await jwt.issue("alice"), 1).jti as string;
      expect(Buffer.from(jti, "base64url")).toHaveLength(16);
      ids.add(jti);
    }
    expect(ids.size).toBe(600);
  });
});

describe("a token id is the canonical base64url of 16 fresh random bytes", () => {
  it("randomTokenId: 22 characters that decode to 16 bytes and encode back the same, all distinct across many blocks", () => {
    const ids = new Set<string>();
    const bytesSeen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = randomTokenId();
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const bytes = base64urlDecode(id);
      expect(bytes).toHaveLength(16);
      expect(base64urlEncode(bytes!)).toBe(id);
      ids.add(id);
      bytesSeen.add(Buffer.from(bytes!).toString("hex"));
    }
    expect(ids.size).toBe(1000);
    expect(bytesSeen.size).toBe(1000);
  });

  it("its last character takes each of the four values a 16th byte can give it", () => {
    const last = new Set<string>();
    for (let i = 0; i < 400; i++) last.add(randomTokenId().slice(-1));
    expect([...last].sort()).toEqual(["A", "Q", "g", "w"]);
  });
});

describe("segments are unpadded base64url, written the same by the native and the portable encoder", () => {
  it("both encoders write the same canonical text, which decodes back to the bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(8), (bytes, offset) => {
        // A view into a larger buffer, as a signature or a hash often is.
        const view = new Uint8Array(offset + bytes.length);
        view.set(bytes, offset);
        const sub = view.subarray(offset);
        const text = base64urlEncode(sub);
        expect(text).toBe(base64urlEncodeJs(sub));
        expect(text).toBe(Buffer.from(bytes).toString("base64url"));
        expect(base64urlDecode(text)).toEqual(bytes);
      }),
    );
  });

  it("text is encoded as its UTF-8 bytes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constant("x\uDC00y")), (text) => {
        expect(base64urlEncodeText(text)).toBe(base64urlEncodeJs(new TextEncoder().encode(text)));
      }),
    );
  });
});
