// JWTs that stop working before they expire (issue #11): revoked by id, kept in the store every instance reads; and
// tokens of identities no longer registered. guardJwt checks both on every verification.
import { describe, expect, it } from "vitest";
import {
  AuthError,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  MAX_REVOCATION_SECONDS,
  createHs256Jwt,
  generateIdentityKeyPair,
  guardJwt,
  revokeJwt,
  tokenIdentity,
} from "../src/auth/index.js";

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
