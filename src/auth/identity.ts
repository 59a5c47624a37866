// Identities: the default id validator (W3C DIDs and other safe ids), the resolver interface from id to Ed25519 keys,
// an in-memory registry, and reading Ed25519 keys out of a DID document's verification methods.
import { base58Decode } from "../bytes/base58.js";
import { AuthError } from "./errors.js";
import { equalBytes, utf8 } from "../bytes/bytes.js";
import { sha256 } from "../crypto/sha256.js";
import { base64urlDecode, base64urlEncode } from "./base64url.js";
import { assertPublicKey } from "./nonce.js";
import { BoundedMap } from "../bytes/bounded-map.js";

/** The longest identity id accepted, in characters. */
export const MAX_IDENTITY_ID_LENGTH = 256;

/** Thumbprints remembered, by the key's bytes; the oldest is forgotten beyond it. */
export const KEY_THUMBPRINT_CACHE_SIZE = 4096;
// Every login binds its JWT to a key, and every guarded check of a submission's JWT compares the subject's keys with
// it: the same few keys are hashed again and again. Keyed by the key's bytes as text, one character per byte, so a
// hit is exact: String.fromCharCode makes that text in 0.4 µs less than a Buffer's base64url (1.3 µs) did.
const thumbprints = new BoundedMap<string, string>(KEY_THUMBPRINT_CACHE_SIZE);
/** Keys longer than this (never an Ed25519 key) are looked up by their base64url text, not spread into arguments. */
const MAX_SPREAD_KEY_BYTES = 64;
// The other way round, for the guard: which key a thumbprint was computed from. A JWT's `cnf.jkt` is then checked
// against its subject's keys with a 32-byte comparison per key instead of a base64url encoding and a lookup per key.
const keysByThumbprint = new BoundedMap<string, Uint8Array>(KEY_THUMBPRINT_CACHE_SIZE);

/**
 * The RFC 7638 JWK thumbprint of an Ed25519 public key: base64url(SHA-256 of {"crv":"Ed25519","kty":"OKP","x":…})).
 * A JWT from prove-ownership carries it as `cnf.jkt` (RFC 7800) so that the token dies with the key that earned it.
 */
export function keyThumbprint(publicKey: Uint8Array): string {
  // A byte text is at most 64 characters long, the base64url text of a longer key at least 86: they never meet.
  const bytes = publicKey.length <= MAX_SPREAD_KEY_BYTES ? String.fromCharCode.apply(null, publicKey as unknown as number[]) : base64urlEncode(publicKey);
  let thumbprint = thumbprints.get(bytes);
  if (thumbprint === undefined) {
    const x = base64urlEncode(publicKey);
    thumbprint = base64urlEncode(sha256(utf8.encode(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)));
    thumbprints.set(bytes, thumbprint);
    keysByThumbprint.set(thumbprint, publicKey.slice());
  }
  return thumbprint;
}

/**
 * Whether one of `keys` has the RFC 7638 thumbprint `thumbprint`. A thumbprint computed here before is answered by
 * comparing bytes with the key it came from: SHA-256 is collision-resistant, so no other key has that thumbprint.
 */
export function hasKeyWithThumbprint(keys: readonly Uint8Array[], thumbprint: string): boolean {
  const known = keysByThumbprint.get(thumbprint);
  if (known === undefined) return keys.some((key) => keyThumbprint(key) === thumbprint);
  for (const key of keys) if (equalBytes(key, known)) return true;
  return false;
}

// DID Core §3.1: did = "did:" method-name ":" method-specific-id; method-name = 1*method-char (%x61-7A / DIGIT);
// method-specific-id = *( *idchar ":" ) 1*idchar; idchar = ALPHA / DIGIT / "." / "-" / "_" / pct-encoded.
const DID = /^did:[a-z0-9]+:(?:(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})*:)*(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})+$/;
const SAFE_ID = /^[A-Za-z0-9._:-]+$/;

/**
 * The default identity id validator: a DID (`did:<method>:<method-specific-id>`, W3C DID syntax) or any other
 * non-empty id of [A-Za-z0-9._:-]; at most 256 characters either way. Anything starting with `did:` in any case
 * must be a valid DID. Returns the id unchanged; throws AuthError INVALID_IDENTITY_ID (400).
 */
export function validateIdentityId(id: unknown): string {
  const fail = (why: string): never => {
    throw new AuthError("INVALID_IDENTITY_ID", why, { path: "identityId" });
  };
  if (typeof id !== "string" || id.length === 0) return fail("expected a non-empty identity id");
  if (id.length > MAX_IDENTITY_ID_LENGTH) fail(`identity id longer than ${MAX_IDENTITY_ID_LENGTH} characters`);
  if (id.slice(0, 4).toLowerCase() === "did:") {
    if (!DID.test(id)) fail("not a valid DID (did:<method>:<method-specific-id>)");
    return id;
  }
  if (!SAFE_ID.test(id)) fail("identity id may hold only letters, digits, '.', '_', ':' and '-'");
  return id;
}

/** From an identity id to the Ed25519 public keys allowed to prove it; undefined (or none) when unknown. */
export interface IdentityResolver {
  /** The identity's Ed25519 public keys (32 bytes each), or undefined when it is unknown. */
  resolve(identityId: string): Promise<Uint8Array[] | undefined>;
}

/** Identity ids and their keys in memory: the default resolver, and the shape a test or a small deployment needs. */
export class MemoryIdentityRegistry implements IdentityResolver {
  #keys = new Map<string, Uint8Array[]>();
  readonly #validate: (id: string) => string;
  /** Keys one identity may hold; one more is refused (INVALID_ARGUMENT). */
  static readonly MAX_KEYS_PER_IDENTITY = 16;

  constructor(options: { validateIdentityId?: (id: string) => string } = {}) {
    this.#validate = options.validateIdentityId ?? validateIdentityId;
  }

  /** Adds a public key (32 bytes) for the identity; adding the same key twice keeps one. */
  add(identityId: string, publicKey: Uint8Array): this {
    const id = this.#validate(identityId);
    assertPublicKey(publicKey);
    const list = this.#keys.get(id) ?? [];
    if (list.some((k) => equalBytes(k, publicKey))) return this;
    if (list.length >= MemoryIdentityRegistry.MAX_KEYS_PER_IDENTITY) {
      throw new AuthError("INVALID_ARGUMENT", `at most ${MemoryIdentityRegistry.MAX_KEYS_PER_IDENTITY} keys per identity`, { path: "publicKey" });
    }
    list.push(publicKey.slice());
    this.#keys.set(id, list);
    return this;
  }

  /** Identities registered. */
  get size(): number {
    return this.#keys.size;
  }

  /**
   * Takes over every identity and key of `other` in one step (a reload of the registry file): identities missing from
   * it are gone at once, so their JWTs are refused by a guard that asks this registry (guardJwt's resolver).
   */
  replaceWith(other: MemoryIdentityRegistry): this {
    const next = new Map<string, Uint8Array[]>();
    for (const [id, keys] of other.#keys) next.set(id, keys.map((k) => k.slice()));
    this.#keys = next;
    return this;
  }

  /** Removes one key of the identity, or the whole identity when no key is given. True when something was removed. */
  remove(identityId: string, publicKey?: Uint8Array): boolean {
    const list = this.#keys.get(identityId);
    if (list === undefined) return false;
    if (publicKey === undefined) return this.#keys.delete(identityId);
    const at = list.findIndex((k) => equalBytes(k, publicKey));
    if (at < 0) return false;
    list.splice(at, 1);
    if (list.length === 0) this.#keys.delete(identityId);
    return true;
  }

  /** Copies of the identity's public keys, or undefined when it is not registered. */
  async resolve(identityId: string): Promise<Uint8Array[] | undefined> {
    const list = this.#keys.get(identityId);
    return list === undefined ? undefined : list.map((k) => k.slice());
  }
}


// ---- DID documents ----

const ED25519_METHOD_TYPES = new Set(["Ed25519VerificationKey2018", "Ed25519VerificationKey2020"]);
const JWK_METHOD_TYPES = new Set(["JsonWebKey2020", "JsonWebKey"]);
// The multicodec varint of ed25519-pub (0xed) that Multikey and Ed25519VerificationKey2020 put before the key.
const ED25519_PUB_MULTICODEC = [0xed, 0x01] as const;
// Bounds on what one document may make us look at.
const MAX_METHODS = 64;

function badDoc(why: string, path: string): AuthError {
  return new AuthError("INVALID_DID_DOCUMENT", why, { path });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function listOf(doc: Record<string, unknown>, field: string): unknown[] {
  const value = doc[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw badDoc(`${field} must be an array`, field);
  if (value.length > MAX_METHODS) throw badDoc(`more than ${MAX_METHODS} entries`, field);
  return value;
}

function keyFromMultibase(text: unknown, path: string): Uint8Array {
  if (typeof text !== "string" || text.length < 2 || text[0] !== "z") throw badDoc("publicKeyMultibase must be base58btc with the 'z' prefix", path);
  let bytes: Uint8Array;
  try {
    bytes = base58Decode(text.slice(1), path);
  } catch {
    throw badDoc("publicKeyMultibase is not base58btc", path);
  }
  if (bytes.length === 34 && bytes[0] === ED25519_PUB_MULTICODEC[0] && bytes[1] === ED25519_PUB_MULTICODEC[1]) return bytes.slice(2);
  if (bytes.length === 32) return bytes;
  throw badDoc("publicKeyMultibase does not hold a 32-byte Ed25519 key", path);
}

/** The Ed25519 key of one verification method; undefined for a method of another key type. */
function keyOfMethod(method: unknown, path: string): Uint8Array | undefined {
  if (!isRecord(method)) throw badDoc("a verification method must be an object", path);
  const type = method.type;
  if (typeof type !== "string") throw badDoc("a verification method needs a type", `${path}.type`);
  if (ED25519_METHOD_TYPES.has(type) || type === "Multikey") {
    if (method.publicKeyMultibase !== undefined) {
      const key = keyFromMultibase(method.publicKeyMultibase, `${path}.publicKeyMultibase`);
      return key;
    }
    if (type === "Ed25519VerificationKey2018" && method.publicKeyBase58 !== undefined) {
      const at = `${path}.publicKeyBase58`;
      let key: Uint8Array;
      try {
        key = base58Decode(method.publicKeyBase58, at);
      } catch {
        throw badDoc("publicKeyBase58 is not Base58", at);
      }
      if (key.length !== 32) throw badDoc("publicKeyBase58 does not hold a 32-byte Ed25519 key", at);
      return key;
    }
    if (type === "Multikey") return undefined; // a Multikey of another curve has no publicKeyMultibase we read
    throw badDoc(`${type} without publicKeyMultibase or publicKeyBase58`, path);
  }
  if (JWK_METHOD_TYPES.has(type)) {
    const jwk = method.publicKeyJwk;
    if (!isRecord(jwk)) throw badDoc("publicKeyJwk must be an object", `${path}.publicKeyJwk`);
    if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") return undefined;
    const x = typeof jwk.x === "string" && jwk.x.length === 43 ? base64urlDecode(jwk.x) : undefined;
    if (x === undefined || x.length !== 32) throw badDoc("publicKeyJwk.x is not a base64url 32-byte key", `${path}.publicKeyJwk.x`);
    return x;
  }
  return undefined;
}

/**
 * Every Ed25519 public key of a DID document, those it names for `authentication` first: methods embedded in
 * `authentication` (and `capabilityInvocation`, the relationship IOTA Identity put its signing key under), the
 * `verificationMethod` entries they reference, then the remaining `verificationMethod` entries. Reads
 * publicKeyMultibase (base58btc `z…`, with or without the ed25519-pub multicodec prefix), the older publicKeyBase58,
 * and Ed25519 publicKeyJwk. A malformed document or Ed25519 method raises AuthError INVALID_DID_DOCUMENT (400).
 */
export function publicKeysFromDidDocument(doc: unknown): Uint8Array[] {
  const root = isRecord(doc) && isRecord(doc.didDocument) ? doc.didDocument : doc; // a DID resolution result wraps it
  if (!isRecord(root)) throw badDoc("a DID document must be a JSON object", "");
  const keys: Uint8Array[] = [];
  const push = (key: Uint8Array | undefined): void => {
    if (key !== undefined && !keys.some((k) => equalBytes(k, key))) keys.push(key);
  };
  const methods = listOf(root, "verificationMethod");
  const byId = new Map<string, number>();
  methods.forEach((m, i) => {
    if (isRecord(m) && typeof m.id === "string") byId.set(m.id, i);
  });
  const documentId = typeof root.id === "string" ? root.id : "";
  const referenced: number[] = [];
  for (const relationship of ["authentication", "capabilityInvocation"]) {
    listOf(root, relationship).forEach((entry, i) => {
      if (typeof entry === "string") {
        // A reference, absolute or relative to the document ("#key-1").
        const at = byId.get(entry) ?? byId.get(documentId + entry) ?? (entry.startsWith(documentId + "#") ? byId.get(entry.slice(documentId.length)) : undefined);
        if (at !== undefined) referenced.push(at);
      } else {
        push(keyOfMethod(entry, `${relationship}[${i}]`));
      }
    });
  }
  for (const at of referenced) push(keyOfMethod(methods[at], `verificationMethod[${at}]`));
  methods.forEach((m, i) => push(keyOfMethod(m, `verificationMethod[${i}]`)));
  return keys;
}

/** The first Ed25519 public key of a DID document (see publicKeysFromDidDocument); AuthError INVALID_DID_DOCUMENT when there is none. */
export function publicKeyFromDidDocument(doc: unknown): Uint8Array {
  const keys = publicKeysFromDidDocument(doc);
  const first = keys[0];
  if (first === undefined) throw badDoc("the DID document has no Ed25519 verification method", "verificationMethod");
  return first;
}
