// Identities (issue #4): the default id validator (W3C DID syntax, or safe ids up to 256 characters), the in-memory
// registry, and Ed25519 keys read from DID documents (publicKeyMultibase `z…`, publicKeyBase58, publicKeyJwk).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  MemoryIdentityRegistry,
  MemoryNonceStore,
  createHs256Jwt,
  createProveOwnership,
  generateIdentityKeyPair,
  publicKeyFromDidDocument,
  publicKeysFromDidDocument,
  signNonce,
  validateIdentityId,
} from "../src/auth/index.js";
import { base58Encode } from "../src/bytes/base58.js";
import { expectProtocolError } from "./helpers.js";

// The multicodec varint of ed25519-pub (0xed), as Multikey and Ed25519VerificationKey2020 prefix it.
const ED25519_PUB = [0xed, 0x01];
const multibase = (key: Uint8Array, prefixed = true): string => `z${base58Encode(prefixed ? Uint8Array.from([...ED25519_PUB, ...key]) : key)}`;
const key = (): Uint8Array => generateIdentityKeyPair().publicKey;
const DID = "did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy";

describe("identity ids: DIDs per W3C DID syntax, or other safe ids up to 256 characters", () => {
  const accepted = [
    DID,
    "did:example:123456789abcdefghi",
    "did:web:example.com%3A8443",
    "did:web:example.com:user:alice",
    "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
    "did:iota:main:0x1234",
    "did:example::colon-first",
    "alice",
    "user_1.example:42",
    "A-Z",
    "x".repeat(256),
    `did:a:${"b".repeat(250)}`,
  ];
  const refused = [
    "",
    "x".repeat(257),
    `did:a:${"b".repeat(251)}`,
    "did:",
    "did:iota",
    "did:iota:",
    "did:iota:abc:",
    "did:IOTA:abc",
    "DID:iota:abc",
    "Did:iota:abc",
    "did:io-ta:abc",
    "did:iota:abc#key-1",
    "did:iota:abc/path",
    "did:iota:abc?query",
    "did:iota:a%zz",
    "did:iota:a%2",
    "has space",
    "a/b",
    "é",
    "a\u0000b",
    "line\nbreak",
    "semi;colon",
  ];

  it.each(accepted)("accepts %s", (id) => {
    expect(validateIdentityId(id)).toBe(id);
  });

  it.each(refused.map((id) => [JSON.stringify(id).slice(0, 60), id]))("refuses %s", (_label, id) => {
    const error = expectProtocolError(() => validateIdentityId(id), "INVALID_IDENTITY_ID", { path: "identityId" });
    expect((error as AuthError).status).toBe(400);
  });

  it("refuses non-strings, and any value either passes unchanged or raises INVALID_IDENTITY_ID", () => {
    for (const bad of [undefined, null, 1, ["alice"], { id: "alice" }]) expectProtocolError(() => validateIdentityId(bad), "INVALID_IDENTITY_ID");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^did:[a-z0-9]{0,4}:[A-Za-z0-9.:%_-]{0,20}$/), fc.anything()), (value) => {
        try {
          expect(validateIdentityId(value)).toBe(value);
        } catch (error) {
          expect((error as AuthError).code).toBe("INVALID_IDENTITY_ID");
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("MemoryIdentityRegistry: identity id → Ed25519 public keys", () => {
  it("adds, resolves (copies) and removes keys", async () => {
    const registry = new MemoryIdentityRegistry();
    const [k1, k2] = [key(), key()];
    registry.add("alice", k1).add("alice", k2).add("alice", k1);
    const keys = await registry.resolve("alice");
    expect(keys).toEqual([k1, k2]);
    keys![0]!.fill(0);
    expect((await registry.resolve("alice"))![0]).toEqual(k1);
    expect(await registry.resolve("bob")).toBeUndefined();
    expect(registry.remove("alice", k1)).toBe(true);
    expect(await registry.resolve("alice")).toEqual([k2]);
    expect(registry.remove("alice")).toBe(true);
    expect(await registry.resolve("alice")).toBeUndefined();
  });

  it("refuses invalid ids and keys of the wrong size", () => {
    const registry = new MemoryIdentityRegistry();
    expectProtocolError(() => registry.add("not valid", key()), "INVALID_IDENTITY_ID");
    expectProtocolError(() => registry.add("alice", new Uint8Array(31)), "INVALID_PUBLIC_KEY");
    expectProtocolError(() => registry.add("alice", "abc" as unknown as Uint8Array), "INVALID_PUBLIC_KEY");
  });
});

describe("DID documents: Ed25519 keys from verification methods", () => {
  it("publicKeyMultibase, base58btc with the z prefix, with or without the ed25519-pub multicodec prefix", () => {
    const [k1, k2] = [key(), key()];
    const doc = {
      id: DID,
      verificationMethod: [
        { id: `${DID}#key-1`, controller: DID, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(k1) },
        { id: `${DID}#key-2`, controller: DID, type: "Multikey", publicKeyMultibase: multibase(k2, false) },
      ],
    };
    expect(publicKeysFromDidDocument(doc)).toEqual([k1, k2]);
    expect(publicKeyFromDidDocument(doc)).toEqual(k1);
  });

  it("the older publicKeyBase58 and Ed25519 publicKeyJwk are read too", () => {
    const [k1, k2] = [key(), key()];
    const doc = {
      id: DID,
      verificationMethod: [
        { id: `${DID}#a`, type: "Ed25519VerificationKey2018", publicKeyBase58: base58Encode(k1) },
        { id: `${DID}#b`, type: "JsonWebKey2020", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: Buffer.from(k2).toString("base64url") } },
      ],
    };
    expect(publicKeysFromDidDocument(doc)).toEqual([k1, k2]);
  });

  it("keys named for authentication come first: embedded methods, then referenced ones (absolute or relative)", () => {
    const [k1, k2, k3, k4] = [key(), key(), key(), key()];
    const doc = {
      didDocument: {
        id: DID,
        verificationMethod: [
          { id: `${DID}#other`, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(k1) },
          { id: `${DID}#auth`, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(k2) },
          { id: "#rel", type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(k4) },
        ],
        authentication: [{ id: `${DID}#embedded`, type: "Ed25519VerificationKey2018", publicKeyBase58: base58Encode(k3) }, `${DID}#auth`, "#rel"],
      },
    };
    expect(publicKeysFromDidDocument(doc)).toEqual([k3, k2, k4, k1]);
    expect(publicKeyFromDidDocument(doc)).toEqual(k3);
  });

  it("keys embedded under capabilityInvocation (IOTA Identity's signing method) are read", () => {
    const k = key();
    expect(publicKeyFromDidDocument({ id: DID, capabilityInvocation: [{ id: `${DID}#sign-0`, type: "Ed25519VerificationKey2018", publicKeyMultibase: multibase(k, false) }] })).toEqual(k);
  });

  it("methods of other key types are skipped; a document with no Ed25519 key has none", () => {
    const doc = {
      id: DID,
      verificationMethod: [
        { id: `${DID}#x`, type: "X25519KeyAgreementKey2019", publicKeyBase58: base58Encode(key()) },
        { id: `${DID}#j`, type: "JsonWebKey2020", publicKeyJwk: { kty: "EC", crv: "P-256", x: "AA", y: "AA" } },
      ],
    };
    expect(publicKeysFromDidDocument(doc)).toEqual([]);
    expectProtocolError(() => publicKeyFromDidDocument(doc), "INVALID_DID_DOCUMENT");
  });

  it("malformed documents and Ed25519 methods raise INVALID_DID_DOCUMENT with the field's path", () => {
    const k = key();
    const cases: Array<[unknown, string | undefined]> = [
      [null, undefined],
      ["did document", undefined],
      [[], undefined],
      [{ verificationMethod: {} }, "verificationMethod"],
      [{ verificationMethod: [7] }, "verificationMethod[0]"],
      [{ verificationMethod: [{ publicKeyMultibase: multibase(k) }] }, "verificationMethod[0].type"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2020", publicKeyMultibase: `m${Buffer.from(k).toString("base64")}` }] }, "verificationMethod[0].publicKeyMultibase"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2020", publicKeyMultibase: "z0OIl" }] }, "verificationMethod[0].publicKeyMultibase"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(k.subarray(1), false) }] }, "verificationMethod[0].publicKeyMultibase"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2020", publicKeyMultibase: `z${base58Encode(Uint8Array.from([0xec, 0x01, ...k]))}` }] }, "verificationMethod[0].publicKeyMultibase"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2018", publicKeyBase58: base58Encode(new Uint8Array(33).fill(1)) }] }, "verificationMethod[0].publicKeyBase58"],
      [{ verificationMethod: [{ type: "Ed25519VerificationKey2018" }] }, "verificationMethod[0]"],
      [{ verificationMethod: [{ type: "JsonWebKey2020", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: "short" } }] }, "verificationMethod[0].publicKeyJwk.x"],
      [{ authentication: [{ type: "Ed25519VerificationKey2018", publicKeyBase58: 5 }] }, "authentication[0].publicKeyBase58"],
      [{ verificationMethod: Array.from({ length: 65 }, () => ({ type: "X" })) }, "verificationMethod"],
    ];
    for (const [doc, path] of cases) {
      const error = expectProtocolError(() => publicKeysFromDidDocument(doc), "INVALID_DID_DOCUMENT", path === undefined ? {} : { path });
      expect((error as AuthError).status).toBe(400);
    }
  });

  it("arbitrary JSON never crashes: keys or INVALID_DID_DOCUMENT", () => {
    const method = fc.record(
      { type: fc.constantFrom("Ed25519VerificationKey2018", "Ed25519VerificationKey2020", "Multikey", "JsonWebKey2020", "Other"), publicKeyMultibase: fc.oneof(fc.string(), fc.constant(multibase(key()))), publicKeyBase58: fc.string(), publicKeyJwk: fc.anything() },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ verificationMethod: fc.array(fc.oneof(method, fc.anything()), { maxLength: 4 }), authentication: fc.array(fc.oneof(fc.string(), method), { maxLength: 3 }) }, { requiredKeys: [] })), (doc) => {
        try {
          for (const k of publicKeysFromDidDocument(doc)) expect(k).toHaveLength(32);
        } catch (error) {
          expect((error as AuthError).code).toBe("INVALID_DID_DOCUMENT");
        }
      }),
      { numRuns: 500 },
    );
  });

  it("a resolver over DID documents lets the DID's key prove ownership", async () => {
    const holder = generateIdentityKeyPair();
    const documents = new Map([[DID, { id: DID, verificationMethod: [{ id: `${DID}#key-1`, type: "Ed25519VerificationKey2020", publicKeyMultibase: multibase(holder.publicKey) }] }]]);
    const service = createProveOwnership({
      store: new MemoryNonceStore(),
      resolver: { resolve: async (id) => (documents.has(id) ? publicKeysFromDidDocument(documents.get(id)) : undefined) },
      jwt: createHs256Jwt({ secret: new Uint8Array(32).fill(3) }),
    });
    const nonce = await service.issueNonce(DID);
    await expect(service.prove(DID, signNonce(nonce, holder.secretKey))).resolves.toBeTypeOf("string");
  });
});
