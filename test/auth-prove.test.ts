// The prove-ownership step (PROTOCOL.md §7, issues #4 and #11): stateless nonces (issuing stores nothing), each nonce
// redeemed once, within its lifetime, for the identity it was issued to; unknown identities 404; nothing anyone else
// sends disturbs a pending login; several instances on one store agree. Clocks are injected; nothing sleeps.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  createHs256Jwt,
  createProveOwnership,
  generateIdentityKeyPair,
  isNonce,
  nonceIssuedAt,
  signNonce,
  type IdentityResolver,
  type NonceStore,
} from "../src/auth/index.js";
import { SecondsMemory } from "../src/auth/prove.js";

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

function setup(options: { lifetime?: number | string; store?: MemoryNonceStore; clock?: Clock } = {}) {
  const clock = options.clock ?? new Clock();
  const store = options.store ?? new MemoryNonceStore({ now: clock.now });
  const registry = new MemoryIdentityRegistry();
  const jwt = createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes", now: clock.now });
  const alice = { id: "did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy", ...generateIdentityKeyPair() };
  const bob = { id: "bob.example", ...generateIdentityKeyPair() };
  registry.add(alice.id, alice.publicKey).add(bob.id, bob.publicKey);
  const service = createProveOwnership({ store, resolver: registry, jwt, now: clock.now, ...(options.lifetime !== undefined ? { lifetime: options.lifetime } : {}) });
  return { clock, store, registry, jwt, alice, bob, service };
}

async function login(service: ReturnType<typeof setup>["service"], who: { id: string; secretKey: string }): Promise<string> {
  return service.prove(who.id, signNonce(await service.issueNonce(who.id), who.secretKey));
}

describe("issuing a nonce keeps no state: 40 lowercase hex characters, nothing stored", () => {
  it("a thousand GETs for known identities leave the store empty", async () => {
    const { service, store, alice, bob } = setup();
    for (let i = 0; i < 500; i++) {
      expect(isNonce(await service.issueNonce(alice.id))).toBe(true);
      expect(isNonce(await service.issueNonce(bob.id))).toBe(true);
    }
    expect(store.size).toBe(0);
  });

  it("the nonce carries the second it was issued in", async () => {
    const { service, clock, alice } = setup();
    expect(nonceIssuedAt(await service.issueNonce(alice.id))).toEqual({ issued: Math.floor(clock.ms / 1000), lane: 0 });
  });
});

describe("a signed nonce buys one JWT for its identity", () => {
  it("GET nonce, sign, POST: the JWT's subject is the identity; only the redemption is stored", async () => {
    const { service, jwt, alice, store } = setup();
    const token = await login(service, alice);
    expect((await jwt.verify(token)).sub).toBe(alice.id);
    expect(store.size).toBe(1);
  });

  it("extra claims from the options land in the JWT", async () => {
    const { store, registry, jwt, alice, clock } = setup();
    const service = createProveOwnership({ store, resolver: registry, jwt, now: clock.now, claims: (id) => ({ role: id === alice.id ? "admin" : "user" }) });
    expect((await jwt.verify(await login(service, alice))).role).toBe("admin");
  });

  it("a client may name the nonce it signed; then only that one is checked", async () => {
    const { service, alice } = setup();
    const nonce = await service.issueNonce(alice.id);
    await expect(service.prove(alice.id, signNonce(nonce, alice.secretKey), nonce)).resolves.toBeTypeOf("string");
  });
});

describe("each nonce works once", () => {
  it("a replay of a signed nonce fails, with or without the nonce named", async () => {
    const { service, alice } = setup();
    const nonce = await service.issueNonce(alice.id);
    const signed = signNonce(nonce, alice.secretKey);
    await service.prove(alice.id, signed);
    await rejects(service.prove(alice.id, signed), "NONCE_EXPIRED_OR_USED", 401);
    await rejects(service.prove(alice.id, signed, nonce), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("two concurrent POSTs of one signed nonce yield one JWT", async () => {
    const { service, alice } = setup();
    const signed = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    const results = await Promise.allSettled([service.prove(alice.id, signed), service.prove(alice.id, signed), service.prove(alice.id, signed)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as AuthError).code).toBe("NONCE_EXPIRED_OR_USED");
  });

  it("one identity logs in again and again within one second: after each proof the next GET hands out the next lane", async () => {
    const { service, alice, clock } = setup();
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const nonce = await service.issueNonce(alice.id);
      expect(nonceIssuedAt(nonce)).toEqual({ issued: Math.floor(clock.ms / 1000), lane: i });
      seen.add(nonce);
      await service.prove(alice.id, signNonce(nonce, alice.secretKey));
    }
    expect(seen.size).toBe(16);
    await rejects(service.issueNonce(alice.id), "TOO_MANY_NONCES", 429);
    clock.advance(1);
    await expect(login(service, alice)).resolves.toBeTypeOf("string");
  });
});

describe("each nonce works for the identity it was issued to", () => {
  it("alice's nonce signed by alice does not prove bob, named or not", async () => {
    const { service, alice, bob } = setup();
    const nonce = await service.issueNonce(alice.id);
    const signed = signNonce(nonce, alice.secretKey);
    await rejects(service.prove(bob.id, signed), "INVALID_PROOF", 401);
    await rejects(service.prove(bob.id, signed, nonce), "INVALID_PROOF", 401);
    // And the failed attempts took nothing from alice.
    await expect(service.prove(alice.id, signed)).resolves.toBeTypeOf("string");
  });

  it("a nonce the server did not issue (no valid MAC) is refused before any signature check", async () => {
    const { service, alice, clock } = setup();
    const forged = `${Math.floor(clock.ms / 1000).toString(16).padStart(8, "0")}00${"ab".repeat(15)}`;
    await rejects(service.prove(alice.id, signNonce(forged, alice.secretKey), forged), "INVALID_PROOF", 401);
    await rejects(service.prove(alice.id, signNonce(forged, alice.secretKey)), "INVALID_PROOF", 401);
  });

  it("a signature by another key over the right nonce is refused", async () => {
    const { service, alice } = setup();
    const intruder = generateIdentityKeyPair();
    await rejects(service.prove(alice.id, signNonce(await service.issueNonce(alice.id), intruder.secretKey)), "INVALID_PROOF", 401);
  });
});

describe("each nonce works within its lifetime (default 30 s, configurable)", () => {
  it("a proof after the lifetime fails; just inside it succeeds", async () => {
    const { service, alice, clock } = setup();
    const early = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    clock.advance(1);
    const late = signNonce(await service.issueNonce(alice.id), alice.secretKey);
    clock.advance(29.5);
    // `early` was issued 30.5 s ago (past 30 s), `late` 29.5 s ago.
    await rejects(service.prove(alice.id, early), "INVALID_PROOF", 401);
    await expect(service.prove(alice.id, late)).resolves.toBeTypeOf("string");
  });

  it("a signature-only proof is found while the verification budget reaches back to it: ~62 s with one key, 6 s with eight", async () => {
    const { service, alice, registry, clock } = setup({ lifetime: "5m" });
    const signedAt = async (ageSeconds: number): Promise<[string, string]> => {
      const nonce = await service.issueNonce(alice.id);
      clock.advance(ageSeconds);
      return [nonce, signNonce(nonce, alice.secretKey)];
    };
    let [, signed] = await signedAt(62);
    await expect(service.prove(alice.id, signed)).resolves.toBeTypeOf("string");
    let nonce: string;
    [nonce, signed] = await signedAt(63);
    await rejects(service.prove(alice.id, signed), "INVALID_PROOF", 401);
    // Named, the same nonce is checked directly for its whole lifetime.
    await expect(service.prove(alice.id, signed, nonce)).resolves.toBeTypeOf("string");
    for (let i = 0; i < 7; i++) registry.add(alice.id, generateIdentityKeyPair().publicKey);
    [, signed] = await signedAt(6);
    await expect(service.prove(alice.id, signed)).resolves.toBeTypeOf("string");
    [, signed] = await signedAt(7);
    await rejects(service.prove(alice.id, signed), "INVALID_PROOF", 401);
  });

  it("an expired nonce named in the POST is refused as expired", async () => {
    const { service, alice, clock } = setup();
    const nonce = await service.issueNonce(alice.id);
    clock.advance(31);
    await rejects(service.prove(alice.id, signNonce(nonce, alice.secretKey), nonce), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("the lifetime option sets it, in seconds or with a unit", async () => {
    for (const lifetime of [90, "90s"]) {
      const { service, alice, clock } = setup({ lifetime });
      const nonce = await service.issueNonce(alice.id);
      clock.advance(89);
      await expect(service.prove(alice.id, signNonce(nonce, alice.secretKey), nonce)).resolves.toBeTypeOf("string");
      expect(service.lifetime).toBe(90);
    }
  });

  it("lifetimes out of range are refused at construction", () => {
    for (const lifetime of [0, 1, 3601, "1d", "5"]) {
      expect(() => createProveOwnership({ store: new MemoryNonceStore(), resolver: new MemoryIdentityRegistry(), jwt: createHs256Jwt({ secret: new Uint8Array(32) }), lifetime })).toThrow(AuthError);
    }
  });
});

describe("nothing others send disturbs a pending login", () => {
  it("GET floods and bad POSTs for the victim's id between its GET and its POST change nothing", async () => {
    const { service, alice } = setup();
    const nonce = await service.issueNonce(alice.id);
    const intruder = generateIdentityKeyPair();
    for (let i = 0; i < 200; i++) await service.issueNonce(alice.id);
    for (let i = 0; i < 20; i++) {
      await service.prove(alice.id, signNonce(await service.issueNonce(alice.id), intruder.secretKey)).catch(() => undefined);
      await service.prove(alice.id, "ab".repeat(64)).catch(() => undefined);
      await service.prove(alice.id, "ab".repeat(64), nonce).catch(() => undefined);
    }
    await expect(service.prove(alice.id, signNonce(nonce, alice.secretKey))).resolves.toBeTypeOf("string");
  });
});

describe("unknown identities: 404 and no work", () => {
  it("GET and POST for an identity the resolver does not know answer UNKNOWN_IDENTITY without touching the store", async () => {
    let storeCalls = 0;
    const store: NonceStore = {
      redeemNonce: async () => {
        storeCalls++;
        return true;
      },
      secret: async (_name, create) => {
        storeCalls++;
        return create();
      },
    };
    const service = createProveOwnership({ store, resolver: new MemoryIdentityRegistry(), jwt: createHs256Jwt({ secret: new Uint8Array(32) }) });
    await rejects(service.issueNonce("did:example:nobody"), "UNKNOWN_IDENTITY", 404);
    await rejects(service.prove("did:example:nobody", "ab".repeat(64)), "UNKNOWN_IDENTITY", 404);
    expect(storeCalls).toBe(0);
  });

  it("issueForUnknownIdentities issues without asking the resolver (for slow resolvers); the proof still needs a key", async () => {
    let asked = 0;
    const resolver: IdentityResolver = {
      resolve: async () => {
        asked++;
        return undefined;
      },
    };
    const service = createProveOwnership({ store: new MemoryNonceStore(), resolver, jwt: createHs256Jwt({ secret: new Uint8Array(32) }), issueForUnknownIdentities: true });
    expect(isNonce(await service.issueNonce("did:example:nobody"))).toBe(true);
    expect(asked).toBe(0);
    await rejects(service.prove("did:example:nobody", "ab".repeat(64)), "UNKNOWN_IDENTITY", 404);
  });
});

describe("instances sharing a store agree: one key, one set of redeemed nonces", () => {
  it("a nonce from one instance is proven at another, and is then used up at both", async () => {
    const clock = new Clock();
    const shared = new MemoryNonceStore({ now: clock.now });
    const a = setup({ store: shared, clock });
    const b = createProveOwnership({ store: shared, resolver: a.registry, jwt: a.jwt, now: clock.now });
    const nonce = await a.service.issueNonce(a.alice.id);
    expect(await b.issueNonce(a.alice.id)).toBe(nonce);
    const signed = signNonce(nonce, a.alice.secretKey);
    await expect(b.prove(a.alice.id, signed)).resolves.toBeTypeOf("string");
    await rejects(a.service.prove(a.alice.id, signed), "NONCE_EXPIRED_OR_USED", 401);
  });

  it("a nonce of a server with another key is not one of ours", async () => {
    const clock = new Clock();
    const ours = setup({ clock });
    const theirs = createProveOwnership({ store: new MemoryNonceStore(), resolver: ours.registry, jwt: ours.jwt, now: clock.now });
    const foreign = await theirs.issueNonce(ours.alice.id);
    await rejects(ours.service.prove(ours.alice.id, signNonce(foreign, ours.alice.secretKey)), "INVALID_PROOF", 401);
  });
});

describe("failures carry HTTP-ready statuses", () => {
  it("an invalid identity id is a 400 on both steps", async () => {
    const { service } = setup();
    for (const id of ["", "has space", "did:UPPER:x", "x".repeat(257), "a/b"]) {
      await rejects(service.issueNonce(id), "INVALID_IDENTITY_ID", 400);
      await rejects(service.prove(id, "0".repeat(128)), "INVALID_IDENTITY_ID", 400);
    }
  });

  it("a malformed signedNonce or nonce is a 400 and redeems nothing", async () => {
    const { service, alice, store } = setup();
    const nonce = await service.issueNonce(alice.id);
    for (const bad of ["", "zz".repeat(64), "ab".repeat(63), "ab".repeat(65)]) await rejects(service.prove(alice.id, bad), "INVALID_SIGNED_NONCE", 400);
    await rejects(service.prove(alice.id, signNonce(nonce, alice.secretKey), nonce.toUpperCase()), "INVALID_NONCE", 400);
    expect(store.size).toBe(0);
    await expect(service.prove(alice.id, signNonce(nonce, alice.secretKey))).resolves.toBeTypeOf("string");
  });

  it("a failing resolver is a 502 and redeems nothing", async () => {
    const store = new MemoryNonceStore();
    const alice = generateIdentityKeyPair();
    let up = true;
    const resolver: IdentityResolver = {
      resolve: async () => {
        if (!up) throw new Error("resolver offline");
        return [alice.publicKey];
      },
    };
    const service = createProveOwnership({ store, resolver, jwt: createHs256Jwt({ secret: new Uint8Array(32).fill(9) }) });
    const signed = signNonce(await service.issueNonce("alice"), alice.secretKey);
    up = false;
    await rejects(service.prove("alice", signed), "IDENTITY_RESOLUTION_FAILED", 502);
    up = true;
    await expect(service.prove("alice", signed)).resolves.toBeTypeOf("string");
  });

  it("a failing store is a 503 NONCE_STORE_FAILED (retry later), not a refused proof", async () => {
    const alice = generateIdentityKeyPair();
    const registry = new MemoryIdentityRegistry().add("alice", alice.publicKey);
    let secretWorks = false;
    const broken: NonceStore = {
      redeemNonce: async () => {
        throw new Error("connection refused");
      },
      secret: async (_name, create) => {
        if (!secretWorks) throw new Error("connection refused");
        return create();
      },
    };
    const service = createProveOwnership({ store: broken, resolver: registry, jwt: createHs256Jwt({ secret: new Uint8Array(32) }) });
    await rejects(service.issueNonce("alice"), "NONCE_STORE_FAILED", 503);
    secretWorks = true;
    const nonce = await service.issueNonce("alice");
    await rejects(service.prove("alice", signNonce(nonce, alice.secretKey)), "NONCE_STORE_FAILED", 503);
  });

  it("a replaceable identity id validator decides which ids are accepted", async () => {
    const { store, registry, jwt } = setup();
    registry.add("user-7", generateIdentityKeyPair().publicKey);
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

describe("MemoryNonceStore: redeemed nonces and revocations, each until it expires, bounded", () => {
  it("redeemNonce is true once per nonce, also under concurrency", async () => {
    const store = new MemoryNonceStore();
    const results = await Promise.all(Array.from({ length: 10 }, () => store.redeemNonce("n", Date.now() + 1000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("sweep drops what expired; a full store refuses further redemptions (429) until something expires", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now, maxTotal: 2 });
    await store.redeemNonce("a", clock.ms + 10_000);
    await store.revokeToken("t", clock.ms + 10_000);
    await rejects(store.redeemNonce("b", clock.ms + 10_000), "TOO_MANY_NONCES", 429);
    clock.advance(11);
    expect(await store.redeemNonce("b", clock.ms + 10_000)).toBe(true);
    expect(await store.isTokenRevoked("t")).toBe(false);
    await store.sweep(clock.ms + 20_000);
    expect(store.size).toBe(0);
  });

  it("secret() creates once and returns the same bytes after", async () => {
    const store = new MemoryNonceStore();
    const first = await store.secret("k", () => new Uint8Array(32).fill(1));
    expect(await store.secret("k", () => new Uint8Array(32).fill(2))).toEqual(first);
  });

  it("out-of-range options are refused at construction", () => {
    for (const options of [{ maxTotal: 0 }, { maxTotal: 1.5 }, { now: 5 as unknown as () => number }]) {
      expect(() => new MemoryNonceStore(options)).toThrow(AuthError);
    }
  });
});

describe("bad input never crashes", () => {
  it("arbitrary identity ids, signedNonces and nonces give a JWT-free AuthError with a 4xx status", async () => {
    const { service, alice } = setup();
    await service.issueNonce(alice.id);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(alice.id), fc.string(), fc.anything()),
        fc.oneof(fc.stringMatching(/^[0-9a-f]{128}$/), fc.string(), fc.anything()),
        fc.oneof(fc.constant(undefined), fc.stringMatching(/^[0-9a-f]{40}$/), fc.anything()),
        async (id, signed, nonce) => {
          const error = await service.prove(id as string, signed as string, nonce as string | undefined).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(AuthError);
          expect([400, 401, 404]).toContain((error as AuthError).status);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("what an instance remembers of recent seconds is bounded and forgets whole seconds", () => {
  it("answers what was set for a (second, identity) pair, and nothing for another pair", () => {
    const memory = new SecondsMemory<number>(8);
    memory.set(100, "alice", 1, 0);
    memory.set(100, "bob", 2, 0);
    memory.set(101, "alice", 3, 0);
    memory.set(100, "alice", 4, 0);
    expect(memory.get(100, "alice")).toBe(4);
    expect(memory.get(100, "bob")).toBe(2);
    expect(memory.get(101, "alice")).toBe(3);
    expect(memory.get(101, "bob")).toBeUndefined();
    expect(memory.get(99, "alice")).toBeUndefined();
    expect(memory.size).toBe(3);
  });

  it("seconds up to the expired one are forgotten when a new second begins", () => {
    const memory = new SecondsMemory<number>(100);
    for (let second = 0; second < 10; second++) memory.set(second, "alice", second, -1);
    expect(memory.size).toBe(10);
    memory.set(10, "alice", 10, 6);
    for (let second = 0; second <= 6; second++) expect(memory.get(second, "alice")).toBeUndefined();
    for (let second = 7; second <= 10; second++) expect(memory.get(second, "alice")).toBe(second);
    expect(memory.size).toBe(4);
    // An older second begun later (a proof search looking back) sweeps nothing; the next newer second does.
    memory.set(3, "bob", 3, 8);
    expect(memory.get(7, "alice")).toBe(7);
    expect(memory.get(3, "bob")).toBe(3);
    memory.set(11, "alice", 11, 8);
    expect(memory.get(3, "bob")).toBeUndefined();
    expect(memory.get(8, "alice")).toBeUndefined();
    expect(memory.get(9, "alice")).toBe(9);
    expect(memory.size).toBe(3);
  });

  it("never holds more than twice what it keeps; the oldest seconds go first, the newest stay", () => {
    const keep = 16;
    const memory = new SecondsMemory<string>(keep);
    for (let i = 0; i < 1000; i++) {
      const second = Math.floor(i / 5);
      memory.set(second, `id${i}`, `v${i}`, -1);
      expect(memory.size).toBeLessThanOrEqual(2 * keep);
      expect(memory.get(second, `id${i}`)).toBe(`v${i}`);
      // The whole previous second is still there.
      if (second > 0) for (let j = (second - 1) * 5; j < second * 5; j++) expect(memory.get(second - 1, `id${j}`)).toBe(`v${j}`);
    }
    // One second with more pairs than the bound is not kept whole, and the bound still holds.
    for (let i = 0; i < 5 * keep; i++) memory.set(5000, `flood${i}`, "x", -1);
    expect(memory.size).toBeLessThanOrEqual(2 * keep);
  });

  it("many identities logging in over many seconds keep logging in, each again within its second", async () => {
    const clock = new Clock();
    const store = new MemoryNonceStore({ now: clock.now });
    const registry = new MemoryIdentityRegistry();
    const people = Array.from({ length: 20 }, (_, i) => ({ id: `person${i}`, ...generateIdentityKeyPair() }));
    for (const p of people) registry.add(p.id, p.publicKey);
    const jwt = createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes", now: clock.now });
    const service = createProveOwnership({ store, resolver: registry, jwt, now: clock.now, lifetime: 3 });
    for (let second = 0; second < 8; second++) {
      for (const p of people) {
        await login(service, p);
        await login(service, p);
      }
      clock.advance(1);
    }
  });
});
