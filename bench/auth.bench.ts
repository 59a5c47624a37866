// auth: the issue #4 speed targets — verifySignedNonce ≥ 5,000/s (native Ed25519 with cached keys) and HS256 JWT verify ≥ 20,000/s
// (a token not seen before; a repeated token is remembered) —
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
    "the crypto layer's verifyEd25519": layer,
  });
  rows.push(nonceRow, absolute(nonceRow, "verifySignedNonce, one core", 5000));

  // HS256 JWT verify: ours (sync HMAC, strict parse) against jose's jwtVerify with the same secret and pinned algorithm.
  // A service remembers the last 1,024 tokens it verified, so the main rows cycle through 4,096 distinct tokens: every
  // verification is a first one. The repeat of one token (what a client sending its JWT with each request costs) is
  // shown apart.
  const secret = encoder.encode("a shared secret of at least thirty-two bytes");
  const hs = createHs256Jwt({ secret, issuer: "chrysalis", audience: "api" });
  const hsTokens = await Promise.all(Array.from({ length: 4096 }, (_, i) => hs.issue(`did:iota:bench${i}`)));
  const hsToken = hsTokens[0]!;
  let next = 0;
  const fresh = (): string => hsTokens[next++ & 4095]!;
  const joseOptions = { algorithms: ["HS256"], issuer: "chrysalis", audience: "api" };
  const joseHs = () => jwtVerify(fresh(), secret, joseOptions);
  if ((await hs.verify(hsToken)).sub !== (await jwtVerify(hsToken, secret, joseOptions)).payload.sub) throw new Error("jose disagrees on an HS256 token");
  const hsRow = await compare("auth", "JWT verify HS256 (each token seen once)", () => hs.verify(fresh()), { "jose jwtVerify": joseHs });
  rows.push(hsRow, absolute(hsRow, "JWT verify HS256 (each token seen once), one core", 20_000));
  rows.push(await compare("auth", "JWT verify HS256, the same token again (remembered; clock checked) (info)", () => hs.verify(hsToken), { "jose jwtVerify": () => jwtVerify(hsToken, secret, joseOptions) }));

  // EdDSA JWT verify: informational, against jose with the imported public key; each token seen once, as above.
  const edService = createEdDsaJwt({ privateKey: secretKey, publicKey });
  const edTokens = await Promise.all(Array.from({ length: 4096 }, (_, i) => edService.issue(`did:iota:bench${i}`)));
  let nextEd = 0;
  const freshEd = (): string => edTokens[nextEd++ & 4095]!;
  const edKey = await importJWK({ kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey).toString("base64url") }, "EdDSA");
  const joseEd = () => jwtVerify(freshEd(), edKey, { algorithms: ["EdDSA"] });
  if ((await edService.verify(edTokens[0]!)).sub !== (await jwtVerify(edTokens[0]!, edKey, { algorithms: ["EdDSA"] })).payload.sub) throw new Error("jose disagrees on an EdDSA token");
  rows.push(await compare("auth", "JWT verify EdDSA (each token seen once)", () => edService.verify(freshEd()), { "jose jwtVerify": joseEd }));

  return rows;
}
