// signatures: verifyEd25519 on honest signatures against raw node:crypto (≥ 0.8×), and the signature check of a
// 2-input transaction against what iota.js 1.8.6 offers for it (its essence serializer, BLAKE2b and Ed25519; ≥ 300×).
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { Blake2b, Ed25519 } from "@iota/crypto.js";
import { serializeTransactionEssence } from "@iota/iota.js";
import { WriteStream } from "@iota/util.js";
import { ed25519Address } from "../src/crypto/address.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { ed25519PublicKey, signEd25519, verifyEd25519 } from "../src/crypto/ed25519.js";
import { messageToJson } from "../src/model/json.js";
import { buildTransactionPayload, verifyTransactionSignatures } from "../src/model/transaction.js";
import type { TransactionPayload, UtxoInput } from "../src/model/types.js";
import { medianRound } from "./repeat.js";
import { compare, medians, type Row } from "./harness.js";

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** What a user holding raw key bytes must do with node:crypto: wrap the key as SPKI, load it, verify. */
function nodeVerifyRaw(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" });
  return nodeVerify(null, message, key, signature);
}

/** The same with the key as a JWK, the other way node:crypto takes raw key bytes (and the faster one on OpenSSL 3). */
function nodeVerifyJwk(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") }, format: "jwk" });
  return nodeVerify(null, message, key, signature);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The same check with iota.js: serialize the essence, hash it, check each signer's address and signature. */
function iotaVerify(payload: TransactionPayload, addresses: Uint8Array[]): boolean {
  const json = messageToJson({ networkId: 0n, parents: [new Uint8Array(32)], payload, nonce: 0n }).payload as unknown as { essence: Record<string, unknown> };
  const stream = new WriteStream();
  serializeTransactionEssence(stream, json.essence);
  const hash = Blake2b.sum256(stream.finalBytes());
  for (let i = 0; i < payload.unlockBlocks.length; i++) {
    const block = payload.unlockBlocks[i]!;
    if (block.type !== 0) continue;
    if (!equal(Blake2b.sum256(block.signature.publicKey), addresses[i]!)) return false;
    if (!Ed25519.verify(block.signature.publicKey, hash, block.signature.signature)) return false;
  }
  return true;
}

export default async function signatures(): Promise<Row[]> {
  const seed = blake2b256(text("bench seed"));
  const publicKey = ed25519PublicKey(seed);
  const message = blake2b256(text("an essence hash"));
  const signature = signEd25519(seed, message);
  const keyObject = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" });
  if (!verifyEd25519(publicKey, message, signature) || !nodeVerifyRaw(publicKey, message, signature) || !nodeVerifyJwk(publicKey, message, signature)) throw new Error("honest signature must verify");

  const rows: Row[] = [];
  rows.push(await medianRound(3, () => compare("signatures", "verifyEd25519, honest signature (raw key bytes)", () => verifyEd25519(publicKey, message, signature), { "node:crypto raw key (DER)": () => nodeVerifyRaw(publicKey, message, signature), "node:crypto raw key (JWK)": () => nodeVerifyJwk(publicKey, message, signature) }, { target: 0.8 })));
  // For the record: node:crypto with a KeyObject made once (a server that caches keys), not the target's baseline.
  const premade = await medians({ ours: () => verifyEd25519(publicKey, message, signature), premade: () => nodeVerify(null, message, keyObject, signature) });
  rows.push({ suite: "signatures", case: "verifyEd25519 vs node:crypto with a pre-made KeyObject (info)", ours: premade["ours"]!, theirs: premade["premade"]!, theirName: "node:crypto KeyObject", ratio: premade["ours"]! / premade["premade"]!, unit: "ops/s" });
  // A wrong signature under the strict rules (a refused login): what an unauthenticated request can make the server spend.
  const wrong = signature.slice();
  wrong[7]! ^= 1;
  if (verifyEd25519(publicKey, message, wrong, "strict") || nodeVerify(null, message, keyObject, wrong)) throw new Error("a wrong signature must fail");
  const refused = await medians({ ours: () => verifyEd25519(publicKey, message, wrong, "strict"), premade: () => nodeVerify(null, message, keyObject, wrong) });
  rows.push({ suite: "signatures", case: "verifyEd25519 strict, a wrong signature, vs node:crypto with a pre-made KeyObject (info)", ours: refused["ours"]!, theirs: refused["premade"]!, theirName: "node:crypto KeyObject", ratio: refused["ours"]! / refused["premade"]!, unit: "ops/s" });

  // A 2-input transaction spending from two addresses: two signature unlock blocks to check.
  const seeds = [blake2b256(text("bench A")), blake2b256(text("bench B"))];
  const addresses = seeds.map((s) => ed25519Address(ed25519PublicKey(s)));
  const payload = buildTransactionPayload({
    inputs: seeds.map((s, i) => ({ transactionId: blake2b256(text(`input ${i}`)), transactionOutputIndex: i, seed: s })),
    outputs: [{ type: 0, address: { type: 0, address: addresses[0]! }, amount: 2_000_000 }, { type: 0, address: { type: 0, address: addresses[1]! }, amount: 1_000_000 }],
    indexation: { type: 2, index: text("bench"), data: text("two inputs") },
  });
  const owner = new Map(payload.essence.inputs.map((input, i) => [input, i]));
  const inputAddresses = payload.unlockBlocks.map((b) => (b.type === 0 ? ed25519Address(b.signature.publicKey) : new Uint8Array(32)));
  const addressOf = (input: UtxoInput): Uint8Array | undefined => inputAddresses[owner.get(input)!];
  if (!verifyTransactionSignatures(payload, addressOf).valid || !iotaVerify(payload, inputAddresses)) throw new Error("the transaction must verify both ways");
  rows.push(await medianRound(3, () => compare("signatures", "2-input transaction signature check", () => verifyTransactionSignatures(payload, addressOf), { "iota.js": () => iotaVerify(payload, inputAddresses) }, { target: 300, time: 2000 })));
  return rows;
}
