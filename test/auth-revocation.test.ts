// JWTs that stop working before they expire (issue #11): revoked by id, kept in the store every instance reads; and
// tokens of identities no longer registered. guardJwt checks both on every verification.
import { describe, expect, it } from "vitest";
import {
  AuthError,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  MAX_REVOCATION_SECONDS,
  createHs256Jwt,
  createProveOwnership,
  generateIdentityKeyPair,
  keyThumbprint,
  signNonce,
  guardJwt,
  revokeJwt,
  tokenIdentity,
} from "../src/auth/index.js";
import { createHash } from "node:crypto";
import { BoundedMap } from "../src/bytes/bounded-map.js";
import { KEY_THUMBPRINT_CACHE_SIZE, hasKeyWithThumbprint } from "../src/auth/identity.js";

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => {
      expect(e).toBeInstanceOf(AuthError);
      expect((e as AuthError).status).toBe(401);
      return (e as AuthError).code;
    },
  );
}

function setup() {
  const now = { ms: 1_800_000_000_000 };
  const jwt = createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes", lifetime: "1h", now: () => now.ms });
  const store = new MemoryNonceStore({ now: () => now.ms });
  const registry = new MemoryIdentityRegistry().add("alice", generateIdentityKeyPair().publicKey).add("bob", generateIdentityKeyPair().publicKey);
  const guarded = guardJwt(jwt, { revocations: store, resolver: registry, now: () => now.ms });
  return { now, jwt, store, registry, guarded };
}

describe("a revoked JWT is refused by every verifier reading the store", () => {
  it("revoking by the token itself: TOKEN_REVOKED from then on, kept until the token's own expiry", async () => {
    const { guarded, store, now } = setup();
    const token = await guarded.issue("alice");
    expect((await guarded.verify(token)).sub).toBe("alice");
    const revocation = await guarded.revoke(token);
    expect(revocation.jti).toBe(tokenIdentity(token).jti);
    expect(revocation.expiresAt).toBe((tokenIdentity(token).exp! + 300) * 1000);
    expect(await code(guarded.verify(token))).toBe("TOKEN_REVOKED");
    // A second verifier (another instance) on the same store refuses it too.
    const other = guardJwt(createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes", now: () => now.ms }), { revocations: store });
    expect(await code(other.verify(token))).toBe("TOKEN_REVOKED");
    // Other tokens of the same identity are untouched.
    expect((await guarded.verify(await guarded.issue("alice"))).sub).toBe("alice");
  });

  it("revoking by jti alone keeps the revocation for the longest lifetime a token can have", async () => {
    const { guarded, store, now } = setup();
    const token = await guarded.issue("bob");
    const { jti } = tokenIdentity(token);
    const revocation = await revokeJwt(store, jti, { now: () => now.ms });
    expect(revocation).toEqual({ jti, expiresAt: now.ms + MAX_REVOCATION_SECONDS * 1000 });
    expect(await code(guarded.verify(token))).toBe("TOKEN_REVOKED");
  });

  it("what is not a token or a token id is refused", async () => {
    const { guarded } = setup();
    for (const bad of ["", "has space", "a.b.c", "x".repeat(129)]) {
      await expect(guarded.revoke(bad)).rejects.toBeInstanceOf(AuthError);
    }
  });

  it("a forged token is refused for its signature, before any revocation or registry lookup", async () => {
    const { guarded } = setup();
    const token = await guarded.issue("alice");
    const [h, p] = token.split(".");
    expect(await code(guarded.verify(`${h}.${p}.${"A".repeat(43)}`))).toBe("TOKEN_INVALID_SIGNATURE");
  });
});

describe("a guard verifies with the service it wraps, whatever that service is", () => {
  it("a JwtService of someone else's (a wrapper around ours) is asked on every verification, its refusals passed on", async () => {
    const { jwt, store, registry } = setup();
    let asked = 0;
    const wrapped = {
      issue: (subject: string, extra?: Record<string, unknown>) => jwt.issue(subject, extra),
      verify: async (token: string) => {
        asked++;
        if (token.endsWith("refused")) throw new AuthError("TOKEN_MALFORMED", "refused by the wrapper");
        return jwt.verify(token);
      },
    };
    const guarded = guardJwt(wrapped, { revocations: store, resolver: registry });
    const token = await guarded.issue("alice");
    expect((await guarded.verify(token)).sub).toBe("alice");
    expect((await guarded.verify(token)).sub).toBe("alice");
    expect(await code(guarded.verify(`${token}refused`))).toBe("TOKEN_MALFORMED");
    expect(asked).toBe(3);
  });

  it("a service's verify replaced after the guard was made is the one asked", async () => {
    const { jwt, store } = setup();
    const guarded = guardJwt(jwt, { revocations: store });
    const token = await jwt.issue("alice");
    expect((await guarded.verify(token)).sub).toBe("alice");
    jwt.verify = async () => {
      throw new AuthError("TOKEN_EXPIRED", "replaced");
    };
    expect(await code(guarded.verify(token))).toBe("TOKEN_EXPIRED");
  });
});

describe("a JWT whose subject is no longer registered is refused", () => {
  it("removing the identity, or reloading a registry without it, refuses its tokens at once", async () => {
    const { guarded, registry } = setup();
    const alice = await guarded.issue("alice");
    const bob = await guarded.issue("bob");
    registry.remove("alice");
    expect(await code(guarded.verify(alice))).toBe("TOKEN_SUBJECT_UNKNOWN");
    expect((await guarded.verify(bob)).sub).toBe("bob");
    registry.replaceWith(new MemoryIdentityRegistry().add("alice", generateIdentityKeyPair().publicKey));
    expect((await guarded.verify(alice)).sub).toBe("alice");
    expect(await code(guarded.verify(bob))).toBe("TOKEN_SUBJECT_UNKNOWN");
  });
});

describe("a JWT from prove-ownership dies with the key that earned it", () => {
  it("is bound to the signing key (cnf.jkt); rotating that key out refuses it, other keys' tokens stay valid", async () => {
    const { now, store, registry, guarded } = setup();
    const old = generateIdentityKeyPair();
    const kept = generateIdentityKeyPair();
    registry.add("carol", old.publicKey).add("carol", kept.publicKey);
    const prove = createProveOwnership({ store, resolver: registry, jwt: guarded, now: () => now.ms });
    const login = async (secretKey: string) => {
      const nonce = await prove.issueNonce("carol");
      return prove.prove("carol", signNonce(nonce, secretKey), nonce);
    };
    const byOld = await login(old.secretKey);
    const byKept = await login(kept.secretKey);
    expect((await guarded.verify(byOld)).cnf).toEqual({ jkt: keyThumbprint(old.publicKey) });
    expect((await guarded.verify(byKept)).cnf).toEqual({ jkt: keyThumbprint(kept.publicKey) });
    expect(registry.remove("carol", old.publicKey)).toBe(true);
    const refused = await guarded.verify(byOld).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AuthError);
    expect((refused as AuthError).code).toBe("TOKEN_KEY_UNKNOWN");
    expect((refused as AuthError).status).toBe(401);
    expect((await guarded.verify(byKept)).sub).toBe("carol");
    // A token issued without a key binding (the library's issue()) is checked for its subject only.
    expect((await guarded.verify(await guarded.issue("carol"))).sub).toBe("carol");
  });

  it("the thumbprint is RFC 7638's for an OKP Ed25519 JWK (RFC 8037 appendix A.3)", () => {
    const x = Buffer.from("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "base64url");
    expect(keyThumbprint(new Uint8Array(x))).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
  });

  it("thumbprints stay exact past the bound of the cache that remembers them", () => {
    const reference = (key: Uint8Array): string =>
      createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${Buffer.from(key).toString("base64url")}"}`).digest("base64url");
    const keys = Array.from({ length: KEY_THUMBPRINT_CACHE_SIZE + 100 }, (_, i) => {
      const key = new Uint8Array(32);
      new DataView(key.buffer).setUint32(0, i);
      return key;
    });
    // Twice round, so the second pass meets keys that were forgotten as well as keys still remembered.
    for (let pass = 0; pass < 2; pass++) for (const key of keys) expect(keyThumbprint(key)).toBe(reference(key));
    // The cache is keyed by the whole key: a key differing in its last byte has its own thumbprint.
    const sibling = keys[0]!.slice();
    sibling[31] = 1;
    expect(keyThumbprint(sibling)).toBe(reference(sibling));
    expect(keyThumbprint(sibling)).not.toBe(keyThumbprint(keys[0]!));
  });

  it("byte strings of any length get the formula's thumbprint, remembered or not", () => {
    const reference = (key: Uint8Array): string =>
      createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${Buffer.from(key).toString("base64url")}"}`).digest("base64url");
    for (const length of [0, 1, 31, 32, 33, 63, 64, 65, 86, 100, 1000]) {
      const key = new Uint8Array(length).map((_, i) => (i * 37 + length) & 255);
      for (let pass = 0; pass < 2; pass++) expect(keyThumbprint(key)).toBe(reference(key));
      // A key whose bytes spell base64url text is still read as bytes.
      const text = new TextEncoder().encode(Buffer.from(key).toString("base64url"));
      if (text.length <= 64) expect(keyThumbprint(text)).toBe(reference(text));
    }
  });

  it("a key is found by its thumbprint from its bytes alone: a copy matches, another key does not, also past the cache bound", () => {
    const reference = (key: Uint8Array): string =>
      createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${Buffer.from(key).toString("base64url")}"}`).digest("base64url");
    const bound = generateIdentityKeyPair().publicKey;
    const other = generateIdentityKeyPair().publicKey;
    const jkt = keyThumbprint(bound);
    expect(hasKeyWithThumbprint([other, bound.slice()], jkt)).toBe(true);
    expect(hasKeyWithThumbprint([other], jkt)).toBe(false);
    expect(hasKeyWithThumbprint([], jkt)).toBe(false);
    // Changing the caller's key after the thumbprint was taken changes nothing remembered.
    bound[0]! ^= 1;
    expect(hasKeyWithThumbprint([bound], jkt)).toBe(false);
    bound[0]! ^= 1;
    // A thumbprint never computed here (or forgotten) is worked out from the keys given.
    const fresh = generateIdentityKeyPair().publicKey;
    expect(hasKeyWithThumbprint([other, fresh], reference(fresh))).toBe(true);
    expect(hasKeyWithThumbprint([other], reference(generateIdentityKeyPair().publicKey))).toBe(false);
    for (let i = 0; i < 2 * KEY_THUMBPRINT_CACHE_SIZE + 10; i++) {
      const key = new Uint8Array(32);
      new DataView(key.buffer).setUint32(4, i);
      keyThumbprint(key);
    }
    expect(hasKeyWithThumbprint([other, bound], jkt)).toBe(true);
    expect(hasKeyWithThumbprint([other], jkt)).toBe(false);
  });

  it("a bounded cache never holds more than its limit, keeps its newest half, and answers exactly what was set", () => {
    const cache = new BoundedMap<string, number>(6);
    for (let i = 0; i < 50; i++) {
      cache.set(`k${i}`, i);
      expect(cache.size).toBeLessThanOrEqual(6);
      for (let back = 0; back < 3 && back <= i; back++) expect(cache.get(`k${i - back}`)).toBe(i - back);
    }
    // What it still holds is right; what it forgot answers undefined, never another value.
    for (let i = 0; i < 50; i++) expect([undefined, i]).toContain(cache.get(`k${i}`));
    expect(cache.get("k0")).toBeUndefined();
    // Setting a key again replaces its value.
    cache.set("k49", -1);
    expect(cache.get("k49")).toBe(-1);
    expect(() => new BoundedMap(1)).toThrow(RangeError);
  });
});
