// The nonce store and the prove-ownership step (PROTOCOL.md §7, issue #4): expiry, single use, several outstanding per identity,
// bounds, no enumeration of identities, and the failures each with its status. Clocks are injected; nothing sleeps.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  createHs256Jwt,
  createProveOwnership,
  generateIdentityKeyPair,
  signNonce,
  type IdentityResolver,
  type NonceStore,
} from "../src/auth/index.js";

class Clock {
  ms = 1_800_000_000_000;
  now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

async function rejects(promise: Promise<unknown>, code: string, status: number): Promise<AuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected AuthError ${code}`).toBeInstanceOf(AuthError);
  expect((error as AuthError).code).toBe(code);
  expect((error as AuthError).status).toBe(status);
  return error as AuthError;
}

function setup(storeOptions: ConstructorParameters<typeof MemoryNonceStore>[0] = {}) {
  const clock = new Clock();
  const store = new MemoryNonceStore({ now: clock.now, ...storeOptions });
  const registry = new MemoryIdentityRegistry();
  const jwt = createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes", now: clock.now });
  const alice = { id: "did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy", ...generateIdentityKeyPair() };
  const bob = { id: "bob.example", ...generateIdentityKeyPair() };
  registry.add(alice.id, alice.publicKey).add(bob.id, bob.publicKey);
  const service = createProveOwnership({ store, resolver: registry, jwt });
  return { clock, store, registry, jwt, alice, bob, service };
}

describe("MemoryNonceStore: nonces expire (default 5 minutes, configurable)", () => {
  it("a nonce is outstanding until its lifetime ends, then gone", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now });
    await store.add("a", "n1");
    clock.advance(299);
    expect(await store.outstanding("a")).toEqual(["n1"]);
    clock.advance(1);
    expect(await store.outstanding("a")).toEqual([]);
    expect(await store.consume("a", "n1")).toBe(false);
  });

  it("ttlSeconds sets the lifetime", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now, ttlSeconds: 30 });
    await store.add("a", "n1");
    clock.advance(29);
    expect(await store.consume("a", "n1")).toBe(true);
    await store.add("a", "n2");
    clock.advance(30);
    expect(await store.consume("a", "n2")).toBe(false);
  });

  it("expired entries are swept, so they stop counting against the bound", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now, ttlSeconds: 10, maxTotal: 3 });
    for (const id of ["a", "b", "c"]) await store.add(id, `n-${id}`);
    expect(store.size).toBe(3);
    await rejects(store.add("d", "n-d"), "TOO_MANY_NONCES", 429);
    clock.advance(10);
    expect(store.sweep()).toBe(3);
    expect(store.size).toBe(0);
    await store.add("d", "n-d");
    expect(await store.outstanding("d")).toEqual(["n-d"]);
  });

  it("out-of-range options are refused at construction", () => {
    for (const options of [{ ttlSeconds: 0 }, { ttlSeconds: 1.5 }, { maxPerIdentity: 0 }, { maxTotal: -1 }, { now: 5 as unknown as () => number }]) {
      expect(() => new MemoryNonceStore(options)).toThrow(AuthError);
    }
  });
});

describe("MemoryNonceStore: several outstanding per identity, bounded, oldest dropped; no identity touches another's", () => {
  it("the per-identity bound drops the oldest", async () => {
    const store = new MemoryNonceStore({ maxPerIdentity: 3 });
    for (const n of ["n1", "n2", "n3", "n4"]) await store.add("a", n);
    expect(await store.outstanding("a")).toEqual(["n2", "n3", "n4"]);
    expect(await store.consume("a", "n1")).toBe(false);
  });

  it("nonces for one identity never replace or release another's", async () => {
    const store = new MemoryNonceStore({ maxPerIdentity: 2 });
    await store.add("a", "na");
    for (let i = 0; i < 10; i++) await store.add("b", `nb${i}`);
    expect(await store.outstanding("a")).toEqual(["na"]);
    expect(await store.consume("b", "na")).toBe(false);
    expect(await store.consume("a", "na")).toBe(true);
  });

  it("consume is single-use: of concurrent consumers exactly one wins", async () => {
    const store = new MemoryNonceStore();
    await store.add("a", "n1");
    const results = await Promise.all([store.consume("a", "n1"), store.consume("a", "n1"), store.consume("a", "n1")]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describe("prove-ownership: a signed nonce buys one JWT for its identity", () => {
  it("GET nonce, sign, POST: the JWT's subject is the identity", async () => {
    const { service, alice, jwt } = setup();
    const nonce = await service.issueNonce(alice.id);
    const token = await service.prove(alice.id, signNonce(nonce, alice.secretKey));
    expect((await jwt.verify(token)).sub).toBe(alice.id);
  });

  it("extra claims from the options land in the JWT", async () => {
    const { store, registry, jwt, alice } = setup();
    const service = createProveOwnership({ store, resolver: registry, jwt, claims: (id) => ({ role: id.startsWith("did:") ? "holder" : "user" }) });
    const nonce = await service.issueNonce(alice.id);
    expect((await jwt.verify(await service.prove(alice.id, signNonce(nonce, alice.secretKey)))).role).toBe("holder");
  });
});

describe("prove-ownership: no captured signedNonce can be replayed", () => {
  it("a signed nonce works once; the second use fails", async () => {
    const { service, alice } = setup();
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    await service.prove(alice.id, signed);
    await rejects(service.prove(alice.id, signed), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("a replay while a newer nonce is outstanding fails too, and uses that nonce up", async () => {
    const { service, alice } = setup();
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    await service.prove(alice.id, signed);
    const fresh = await service.issueNonce(alice.id);
    await rejects(service.prove(alice.id, signed), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
    await rejects(service.prove(alice.id, signNonce(fresh, alice.secretKey)), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("two concurrent POSTs of one signed nonce yield one JWT", async () => {
    const { service, alice } = setup();
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    const results = await Promise.allSettled([service.prove(alice.id, signed), service.prove(alice.id, signed), service.prove(alice.id, signed)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as AuthError).code).toBe("NONCE_EXPIRED_OR_USED");
  });

  it("a signed nonce is tied to its identity: it does not prove another", async () => {
    const { service, alice, bob } = setup();
    const nonce = await service.issueNonce(alice.id);
    await service.issueNonce(bob.id);
    await rejects(service.prove(bob.id, signNonce(nonce, alice.secretKey)), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
  });
});

describe("prove-ownership: nonces expire", () => {
  it("a proof after the nonce's lifetime fails with NONCE_EXPIRED_OR_USED (injected clock)", async () => {
    const { service, alice, clock } = setup({ ttlSeconds: 60 });
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    clock.advance(60);
    await rejects(service.prove(alice.id, signed), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("a proof just inside the lifetime succeeds", async () => {
    const { service, alice, clock } = setup({ ttlSeconds: 60 });
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    clock.advance(59);
    await expect(service.prove(alice.id, signed)).resolves.toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});

describe("prove-ownership: several nonces may be outstanding per identity", () => {
  it("two outstanding nonces for one identity both work, each once", async () => {
    const { service, alice } = setup();
    const first = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    const second = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    await service.prove(alice.id, second);
    await service.prove(alice.id, first);
    await rejects(service.prove(alice.id, first), "NONCE_EXPIRED_OR_USED", 401);
    await rejects(service.prove(alice.id, second), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("beyond the per-identity bound the oldest nonce is dropped", async () => {
    const { service, alice } = setup({ maxPerIdentity: 2 });
    const oldest = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    const middle = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    const newest = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    await service.prove(alice.id, middle);
    await rejects(service.prove(alice.id, oldest), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
    await rejects(service.prove(alice.id, newest), "NONCE_EXPIRED_OR_USED", 401); // the failed attempt used it up
  });

  it("another identity's requests never overwrite a pending nonce", async () => {
    const { service, alice, bob } = setup({ maxPerIdentity: 2 });
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    for (let i = 0; i < 5; i++) await service.issueNonce(bob.id);
    await expect(service.prove(alice.id, signed)).resolves.toBeTypeOf("string");
  });
});

describe("prove-ownership: a failed attempt consumes the nonces it was checked against", () => {
  it("a bad proof uses up every outstanding nonce of the identity", async () => {
    const { service, alice, bob } = setup();
    const n1 = await service.issueNonce(alice.id);
    const n2 = await service.issueNonce(alice.id);
    await rejects(service.prove(alice.id, signNonce(n1, bob.secretKey)), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
    await rejects(service.prove(alice.id, signNonce(n1, alice.secretKey)), "NONCE_EXPIRED_OR_USED", 401);
    await rejects(service.prove(alice.id, signNonce(n2, alice.secretKey)), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("a malformed signedNonce is a 400 and consumes nothing", async () => {
    const { service, alice } = setup();
    const nonce = await service.issueNonce(alice.id);
    for (const bad of ["", "zz", "0".repeat(127), `${"0".repeat(127)}x`, 17 as unknown as string]) {
      await rejects(service.prove(alice.id, bad), "INVALID_SIGNED_NONCE", 400);
    }
    await expect(service.prove(alice.id, signNonce(nonce, alice.secretKey))).resolves.toBeTypeOf("string");
  });
});

describe("prove-ownership: unknown identity and bad proof look the same", () => {
  it("one code, one message, one status for both", async () => {
    const { service, alice } = setup();
    const stranger = "did:iota:unknownIdentity";
    const n1 = await service.issueNonce(stranger);
    const unknown = await rejects(service.prove(stranger, signNonce(n1, alice.secretKey)), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
    const n2 = await service.issueNonce(alice.id);
    const intruder = generateIdentityKeyPair();
    const bad = await rejects(service.prove(alice.id, signNonce(n2, intruder.secretKey)), "UNKNOWN_IDENTITY_OR_BAD_PROOF", 401);
    expect(unknown.message).toBe(bad.message);
    expect(unknown.message).not.toContain(stranger);
  });

  it("issuing a nonce does not depend on whether the identity is known", async () => {
    const { service } = setup();
    await expect(service.issueNonce("did:example:nobody")).resolves.toMatch(/^[0-9a-f]{40}$/);
  });
});

describe("prove-ownership: failures carry HTTP-ready statuses", () => {
  it("an invalid identity id is a 400 on both steps", async () => {
    const { service } = setup();
    for (const id of ["", "has space", "did:UPPER:x", "x".repeat(257), "a/b"]) {
      await rejects(service.issueNonce(id), "INVALID_IDENTITY_ID", 400);
      await rejects(service.prove(id, "0".repeat(128)), "INVALID_IDENTITY_ID", 400);
    }
  });

  it("a full store answers 429 TOO_MANY_NONCES", async () => {
    const { service } = setup({ maxTotal: 2 });
    await service.issueNonce("a");
    await service.issueNonce("b");
    await rejects(service.issueNonce("c"), "TOO_MANY_NONCES", 429);
  });

  it("a failing resolver is a 502 and consumes no nonce", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now });
    const alice = generateIdentityKeyPair();
    let up = false;
    const resolver: IdentityResolver = {
      resolve: async () => {
        if (!up) throw new Error("resolver offline");
        return [alice.publicKey];
      },
    };
    const service = createProveOwnership({ store, resolver, jwt: createHs256Jwt({ secret: new Uint8Array(32).fill(9) }) });
    const signed = signNonce(await service.issueNonce("alice"), alice.secretKey);
    await rejects(service.prove("alice", signed), "IDENTITY_RESOLUTION_FAILED", 502);
    up = true;
    await expect(service.prove("alice", signed)).resolves.toBeTypeOf("string");
  });

  it("a failing store is a 500 NONCE_STORE_FAILED", async () => {
    const broken: NonceStore = {
      add: async () => {
        throw new Error("connection refused");
      },
      outstanding: async () => {
        throw new Error("connection refused");
      },
      consume: async () => false,
    };
    const service = createProveOwnership({ store: broken, resolver: new MemoryIdentityRegistry(), jwt: createHs256Jwt({ secret: new Uint8Array(32) }) });
    await rejects(service.issueNonce("a"), "NONCE_STORE_FAILED", 500);
    await rejects(service.prove("a", "0".repeat(128)), "NONCE_STORE_FAILED", 500);
  });

  it("a replaceable identity id validator decides which ids are accepted", async () => {
    const { store, registry, jwt } = setup();
    const service = createProveOwnership({
      store,
      resolver: registry,
      jwt,
      validateIdentityId: (id) => {
        if (!/^user-\d+$/.test(id)) throw new AuthError("INVALID_IDENTITY_ID", "only user-<n>");
        return id;
      },
    });
    await expect(service.issueNonce("user-7")).resolves.toBeTypeOf("string");
    await rejects(service.issueNonce("did:iota:abc"), "INVALID_IDENTITY_ID", 400);
  });
});

describe("prove-ownership: bad input never crashes", () => {
  it("arbitrary identity ids and signedNonces give a JWT-free AuthError with a 4xx status", async () => {
    const { service, alice } = setup();
    await service.issueNonce(alice.id);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constant(alice.id), fc.string(), fc.anything()), fc.oneof(fc.stringMatching(/^[0-9a-f]{128}$/), fc.string(), fc.anything()), async (id, signed) => {
        const error = await service.prove(id as string, signed as string).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AuthError);
        expect([400, 401]).toContain((error as AuthError).status);
      }),
      { numRuns: 300 },
    );
  });
});
