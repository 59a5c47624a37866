// The node's libp2p identity: an Ed25519 key kept as Hornet keeps its identity.key (PKCS#8 PEM, "PRIVATE KEY"), the
// peer id derived from it (base58 of the identity multihash of its protobuf public key, "12D3KooW…") and peer id checks.
import { createPrivateKey, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { base58Decode, base58Encode } from "../../bytes/base58.js";
import { ProtocolError } from "../../bytes/errors.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH } from "../../bytes/limits.js";
import { ed25519PublicKey } from "../../crypto/ed25519.js";
import type {} from "../errors.js";

/** A node's libp2p identity: the Ed25519 key that secures its connections (Noise) and the peer id it is known by. */
export interface P2pIdentity {
  /** The 32-byte Ed25519 seed (RFC 8032's private key). */
  readonly seed: Uint8Array;
  /** The seed's 32-byte Ed25519 public key, which the peer id inlines. */
  readonly publicKey: Uint8Array;
  /** The libp2p peer id, base58: 52 characters starting "12D3KooW". */
  readonly peerId: string;
}

// PKCS#8 v1 of an Ed25519 key (RFC 8410): SEQUENCE { INTEGER 0, AlgorithmIdentifier { 1.3.101.112 }, OCTET STRING {
// OCTET STRING seed } }, what Go's x509.MarshalPKCS8PrivateKey writes for Hornet.
const PKCS8_ED25519_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);
// libp2p's PublicKey protobuf: field 1 (KeyType) = 1 (Ed25519), field 2 (Data) of 32 bytes; as an identity multihash
// (code 0x00, length 36) it is the peer id itself.
const ED25519_PEER_ID_PREFIX = Uint8Array.of(0x00, 0x24, 0x08, 0x01, 0x12, 0x20);
const IDENTITY_MULTIHASH = 0x00;
const SHA2_256_MULTIHASH = 0x12;
/** libp2p inlines public keys of at most this many bytes in the peer id (identity multihash); longer ones are hashed. */
const MAX_INLINE_KEY_LENGTH = 42;
const MAX_PEER_ID_CHARS = 128;
const MAX_PEM_CHARS = 4096;

/** The peer id of an Ed25519 public key. */
export function peerIdOf(publicKey: Uint8Array): string {
  if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) throw new ProtocolError("INVALID_KEY", `an Ed25519 public key is ${ED25519_PUBLIC_KEY_LENGTH} bytes, got ${publicKey.length}`, { path: "publicKey" });
  const bytes = new Uint8Array(ED25519_PEER_ID_PREFIX.length + ED25519_PUBLIC_KEY_LENGTH);
  bytes.set(ED25519_PEER_ID_PREFIX);
  bytes.set(publicKey, ED25519_PEER_ID_PREFIX.length);
  return base58Encode(bytes);
}

/** The identity of a 32-byte seed (the lead keeps one in the store when no file is given). */
export function p2pIdentityFromSeed(seed: Uint8Array): P2pIdentity {
  if (!(seed instanceof Uint8Array) || seed.length !== ED25519_SEED_LENGTH) throw new ProtocolError("INVALID_KEY", `an Ed25519 seed is ${ED25519_SEED_LENGTH} bytes`, { path: "seed" });
  const copy = Uint8Array.from(seed);
  const publicKey = ed25519PublicKey(copy);
  return { seed: copy, publicKey, peerId: peerIdOf(publicKey) };
}

/** A new identity from the system's random source. */
export function createP2pIdentity(): P2pIdentity {
  return p2pIdentityFromSeed(new Uint8Array(randomBytes(ED25519_SEED_LENGTH)));
}

/** The identity as Hornet's identity.key holds it: PKCS#8 DER in a "PRIVATE KEY" PEM block. */
export function p2pIdentityToPem(identity: P2pIdentity): string {
  const der = new Uint8Array(PKCS8_ED25519_PREFIX.length + ED25519_SEED_LENGTH);
  der.set(PKCS8_ED25519_PREFIX);
  der.set(identity.seed, PKCS8_ED25519_PREFIX.length);
  const base64 = Buffer.from(der).toString("base64");
  return `-----BEGIN PRIVATE KEY-----\n${base64.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
}

/** Reads a PKCS#8 PEM Ed25519 private key (Hornet's identity.key, or what node:crypto or OpenSSL write). */
export function p2pIdentityFromPem(pem: string): P2pIdentity {
  if (typeof pem !== "string" || pem.length > MAX_PEM_CHARS) throw new ProtocolError("INVALID_KEY", "an identity is a PEM text of a few hundred characters", { path: "identity" });
  let jwk: { kty?: string; crv?: string; d?: string };
  try {
    const key = createPrivateKey({ key: pem, format: "pem" });
    if (key.asymmetricKeyType !== "ed25519") throw new ProtocolError("INVALID_KEY", `the identity is an ${key.asymmetricKeyType ?? "unknown"} key, not Ed25519`, { path: "identity" });
    jwk = key.export({ format: "jwk" });
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    // node:crypto's words name its decoder, never the key's bytes.
    throw new ProtocolError("INVALID_KEY", "the identity is not a PKCS#8 PEM private key", { path: "identity", cause: error });
  }
  if (jwk.d === undefined) throw new ProtocolError("INVALID_KEY", "the identity holds no private key", { path: "identity" });
  return p2pIdentityFromSeed(new Uint8Array(Buffer.from(jwk.d, "base64url")));
}

/** Reads an identity file (Hornet's `p2pstore/identity.key`, or one writeP2pIdentityFile wrote); INVALID_KEY when it
 * holds no Ed25519 private key, the file system's error when it cannot be read. */
export async function readP2pIdentityFile(path: string): Promise<P2pIdentity> {
  return p2pIdentityFromPem(await readFile(path, "utf8"));
}

/** Writes the identity file readable by its owner only; refuses (EEXIST) to replace an existing file. */
export async function writeP2pIdentityFile(path: string, identity: P2pIdentity): Promise<void> {
  await writeFile(path, p2pIdentityToPem(identity), { mode: 0o600, flag: "wx" });
}

function varint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let shift = 0, i = at; i < bytes.length && shift < 28; shift += 7, i++) {
    value |= (bytes[i]! & 0x7f) << shift;
    if ((bytes[i]! & 0x80) === 0) return { value, next: i + 1 };
  }
  return undefined;
}

/** True for a base58 peer id: a multihash, identity (an inlined key) or SHA2-256 (a hashed one), of the right length. */
export function isPeerId(text: unknown): text is string {
  if (typeof text !== "string" || text.length === 0 || text.length > MAX_PEER_ID_CHARS) return false;
  let bytes: Uint8Array;
  try {
    bytes = base58Decode(text);
  } catch {
    return false;
  }
  const code = varint(bytes, 0);
  const length = code === undefined ? undefined : varint(bytes, code.next);
  if (code === undefined || length === undefined || length.next + length.value !== bytes.length) return false;
  if (code.value === SHA2_256_MULTIHASH) return length.value === 32;
  return code.value === IDENTITY_MULTIHASH && length.value > 0 && length.value <= MAX_INLINE_KEY_LENGTH;
}

/** The peer id, checked (INVALID_PEER_ID otherwise). */
export function parsePeerId(text: unknown, path = "peerId"): string {
  if (!isPeerId(text)) throw new ProtocolError("INVALID_PEER_ID", "not a libp2p peer id (a base58 multihash such as 12D3KooW…)", { path });
  return text;
}
