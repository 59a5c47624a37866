// auth: the issue #4 speed targets — verifySignedNonce ≥ 5,000/s (native Ed25519 with cached keys) and HS256 JWT verify ≥ 20,000/s —
// each measured beside what a user would use instead: @noble/ed25519 alone, the crypto layer's verifyEd25519, and jose's jwtVerify.
import * as ed from "@noble/ed25519";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { importJWK, jwtVerify } from "jose";
import { createEdDsaJwt, createHs256Jwt, createNonce, generateIdentityKeyPair, hashNonce, signNonce, verifySignedNonce } from "../src/auth/index.js";
import { fromHex } from "../src/bytes/hex.js";
import { verifyEd25519 } from "../src/crypto/ed25519.js";
import { compare, type Row } from "./harness.js";

function absolute(row: Row, name: string, target: number): Row {
  return { suite: row.suite, case: name, ours: row.ours, target, unit: row.unit };
}

export default async function auth(): Promise<Row[]> {
  const rows: Row[] = [];

  // verifySignedNonce: hex parse, SHA-256 of the nonce text, Ed25519 verify.
  const { secretKey, publicKey } = generateIdentityKeyPair();
  const nonce = createNonce();
  const signed = signNonce(nonce, secretKey);
  const encoder = new TextEncoder();
  const noble = () => ed.verify(fromHex(signed), nobleSha256(encoder.encode(nonce)), publicKey, { zip215: false });
  const layer = () => verifyEd25519(publicKey, hashNonce(nonce), fromHex(signed));
  if (!verifySignedNonce(nonce, signed, publicKey) || !noble() || !layer()) throw new Error("a verifier disagrees on a valid proof");
  const nonceRow = await compare("auth", "verifySignedNonce", () => verifySignedNonce(nonce, signed, publicKey), {
    "@noble/ed25519": noble,
    "crypto verifyEd25519 (key import per call)": layer,
  });
  rows.push(nonceRow, absolute(nonceRow, "verifySignedNonce, one core", 5000));

  // HS256 JWT verify: ours (sync HMAC, strict parse) against jose's jwtVerify with the same secret and pinned algorithm.
  const secret = encoder.encode("a shared secret of at least thirty-two bytes");
  const hs = createHs256Jwt({ secret, issuer: "chrysalis", audience: "api" });
  const hsToken = await hs.issue("did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy");
  const joseHs = () => jwtVerify(hsToken, secret, { algorithms: ["HS256"], issuer: "chrysalis", audience: "api" });
  if ((await hs.verify(hsToken)).sub !== (await joseHs()).payload.sub) throw new Error("jose disagrees on an HS256 token");
  const hsRow = await compare("auth", "JWT verify HS256", () => hs.verify(hsToken), { "jose jwtVerify": joseHs });
  rows.push(hsRow, absolute(hsRow, "JWT verify HS256, one core", 20_000));

  // EdDSA JWT verify: informational, against jose with the imported public key.
  const edService = createEdDsaJwt({ privateKey: secretKey, publicKey });
  const edToken = await edService.issue("did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy");
  const edKey = await importJWK({ kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") }, "EdDSA");
  const joseEd = () => jwtVerify(edToken, edKey, { algorithms: ["EdDSA"] });
  if ((await edService.verify(edToken)).sub !== (await joseEd()).payload.sub) throw new Error("jose disagrees on an EdDSA token");
  rows.push(await compare("auth", "JWT verify EdDSA", () => edService.verify(edToken), { "jose jwtVerify": joseEd }));

  return rows;
}
