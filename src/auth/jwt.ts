// JWTs for proven identities: HS256 (shared secret ≥ 32 bytes) or EdDSA (Ed25519; other services verify with the public key alone).
// Signing and verification are compact JWS of our own over node:crypto's HMAC and Ed25519 (noble where node:crypto is
// missing): jose's jwtVerify and SignJWT go through async WebCrypto (~6,500 verifications/s on this machine against a
// 20,000/s target; signing took a third of a node's time per login). Verification pins one algorithm, refuses
// `crit`/`b64`, non-canonical base64url and every claim problem with its own code; both directions are tested against
// jose.
import { base58Decode } from "../bytes/base58.js";
import { BoundedMap } from "../bytes/bounded-map.js";
import { constantTimeEqual, copyBytes, utf8 } from "../bytes/bytes.js";
import { ed25519PublicKey, signEd25519 } from "../crypto/ed25519.js";
import { AuthError, type AuthErrorCode } from "./errors.js";
import { base64urlDecode, base64urlEncode, base64urlEncodeText } from "./base64url.js";
import { decodeSecretKey } from "./nonce.js";
import { hmacSha256, hmacSha256Text, randomTokenId, verifyEd25519Strict } from "./primitives.js";

/** The claims of a token this layer issues and accepts. */
export interface JwtClaims {
  /** The identity id. */
  sub: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** Unique token id (128 random bits, base64url). */
  jti: string;
  /** Not before, seconds since the epoch. */
  nbf?: number;
  /** The issuer, when the service names one. */
  iss?: string;
  /** The audience, when the service names one. */
  aud?: string | string[];
  [claim: string]: unknown;
}

/** Issues and verifies JWTs; failures are AuthErrors (verify: 401 with a code per reason). */
export interface JwtService {
  /** A signed compact JWT for `subject` (the identity id), with `extra` claims. */
  issue(subject: string, extra?: Record<string, unknown>): Promise<string>;
  /** The claims of a token this service accepts; throws AuthError (401, a code per reason) otherwise. */
  verify(token: string): Promise<JwtClaims>;
}

/** The services built here: the contract plus the algorithm they pin and a synchronous verify. */
export interface LocalJwtService extends JwtService {
  /** The one algorithm the service issues and accepts (any other `alg` is refused). */
  readonly algorithm: "HS256" | "EdDSA";
  /** Token lifetime in seconds. */
  readonly lifetime: number;
  /** verify, synchronously. */
  verifySync(token: string): JwtClaims;
}

/** Options of every JWT service: lifetime, issuer, audience, clock tolerance, clock. */
export interface JwtOptions {
  /** Seconds as a number, or a duration with its unit: "90s", "15m", "2h", "1d". Default one hour. Never milliseconds. */
  lifetime?: number | string;
  /** `iss` put into tokens and required of them. */
  issuer?: string;
  /** `aud` put into tokens and required of them. */
  audience?: string;
  /** Leeway for exp, nbf and iat in seconds or as a duration (default 5 s, at most 5 min). */
  clockTolerance?: number | string;
  /** Clock in milliseconds (default Date.now). */
  now?: () => number;
}

/** An HS256 service: the shared secret. */
export interface Hs256JwtOptions extends JwtOptions {
  /** At least 32 bytes; a string counts its UTF-8 bytes. */
  secret: Uint8Array | string;
}

/** An EdDSA (Ed25519) service: the public key, and the private key to issue with. */
export interface EdDsaJwtOptions extends JwtOptions {
  /** The 32-byte seed (bytes or Base58, or Base58 of seed ‖ public key). Without it the service only verifies. */
  privateKey?: Uint8Array | string;
  /** The 32-byte Ed25519 public key, as bytes or Base58. */
  publicKey: Uint8Array | string;
}

/** A token's lifetime unless told otherwise: one hour. */
export const DEFAULT_JWT_LIFETIME_SECONDS = 3600;
/** The leeway for exp, nbf and iat unless told otherwise. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 5;
/** The shortest HS256 secret accepted, in bytes. */
export const MIN_HS256_SECRET_BYTES = 32;
/** Tokens longer than this are refused before any parsing. */
export const MAX_TOKEN_LENGTH = 8192;
const MAX_LIFETIME_SECONDS = 366 * 86_400;
const MAX_CLOCK_TOLERANCE_SECONDS = 300;
const RESERVED_CLAIMS = new Set(["sub", "iat", "exp", "jti", "nbf", "iss", "aud"]);
/** Tokens whose signature and fixed claims were checked, remembered per service at least (older forgotten beyond twice it). */
const VERIFIED_CACHE_SIZE = 1024;
/** Longer tokens are verified every time rather than remembered, which bounds the cache to a few MiB (2,048 × 2 KiB). */
const MAX_CACHED_TOKEN_LENGTH = 2048;

const UNITS: Record<string, number> = { s: 1, sec: 1, secs: 1, second: 1, seconds: 1, m: 60, min: 60, mins: 60, minute: 60, minutes: 60, h: 3600, hr: 3600, hrs: 3600, hour: 3600, hours: 3600, d: 86_400, day: 86_400, days: 86_400, w: 604_800, week: 604_800, weeks: 604_800 };
const DURATION = /^(\d{1,9}) ?([a-z]+)$/;

/**
 * Seconds of a duration: a number is seconds; a string needs its unit ("30s", "15m", "2h", "1d", "1 week").
 * A bare numeric string is refused, so that nothing is ever read as milliseconds.
 */
export function parseDuration(value: number | string, path = "duration", min = 0, max = MAX_LIFETIME_SECONDS): number {
  let seconds: number | undefined;
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) seconds = value;
  } else if (typeof value === "string") {
    const match = DURATION.exec(value.trim().toLowerCase());
    const unit = match === null ? undefined : UNITS[match[2]!];
    if (match !== null && unit !== undefined) seconds = Number(match[1]) * unit;
  }
  if (seconds === undefined || seconds < min || seconds > max) {
    throw new AuthError("INVALID_CONFIGURATION", `${path} must be whole seconds from ${min} to ${max}, as a number or with a unit such as "15m" or "2h"`, { path });
  }
  return seconds;
}

function optionalText(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > 256) {
    throw new AuthError("INVALID_CONFIGURATION", `${path} must be a non-empty string of at most 256 characters`, { path });
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function refuse(code: AuthErrorCode, why: string, path?: string): never {
  throw new AuthError(code, why, { path });
}

function jsonSegment(token: string, start: number, end: number, path: string): Record<string, unknown> {
  const bytes = base64urlDecode(token, start, end);
  if (bytes === undefined) refuse("TOKEN_MALFORMED", "a token segment is not canonical base64url", path);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return refuse("TOKEN_MALFORMED", "a token segment is not UTF-8 JSON", path);
  }
  if (!isRecord(value)) refuse("TOKEN_MALFORMED", "a token segment is not a JSON object", path);
  return value;
}

interface Verifier {
  readonly alg: "HS256" | "EdDSA";
  readonly signatureLength: number;
  /** `signingInput` is the token's header.payload text; its UTF-8 bytes (ASCII here) are what was signed. */
  check(signingInput: string, signature: Uint8Array): boolean;
}

const encoder = new TextEncoder();

/** Signs a JWS signing input (the header.payload text; its UTF-8 bytes are signed): the signature's base64url text. */
type Signer = (signingInput: string) => string;

function buildService(verifier: Verifier, signer: Signer | undefined, options: JwtOptions): LocalJwtService {
  const lifetime = parseDuration(options.lifetime ?? DEFAULT_JWT_LIFETIME_SECONDS, "lifetime", 1);
  const tolerance = parseDuration(options.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_SECONDS, "clockTolerance", 0, MAX_CLOCK_TOLERANCE_SECONDS);
  const issuer = optionalText(options.issuer, "issuer");
  const audience = optionalText(options.audience, "audience");
  if (options.now !== undefined && typeof options.now !== "function") refuse("INVALID_CONFIGURATION", "now must be a function returning milliseconds", "now");
  const now = options.now ?? Date.now;
  const alg = verifier.alg;

  // A client sends the same token with every request: the signature, the header and the claims that do not change
  // with time (types, issuer, audience) are checked once per token, and only the clock checks run again on later
  // requests. Keyed by the whole token, so a hit is the very string whose signature verified; a refusal is never kept.
  // BoundedMap: the newest VERIFIED_CACHE_SIZE tokens always kept, twice that at most, O(1) eviction (a one-Map FIFO
  // stepped over deletion holes on every eviction, and missed on every call once one more token than it held went round).
  const verified = new BoundedMap<string, JwtClaims>(2 * VERIFIED_CACHE_SIZE);

  function verifySync(token: string): JwtClaims {
    const known = typeof token === "string" ? verified.get(token) : undefined;
    if (known !== undefined) checkTimes(known);
    const claims = known ?? verifyFixed(token);
    if (known === undefined && token.length <= MAX_CACHED_TOKEN_LENGTH) verified.set(token, claims);
    // A copy: what a caller does to its claims must not reach the next request with the same token.
    return { ...claims };
  }

  function checkTimes(claims: JwtClaims): void {
    const { iat, exp, nbf } = claims;
    const t = Math.floor(now() / 1000);
    if (exp <= t - tolerance) refuse("TOKEN_EXPIRED", "the token has expired", "payload.exp");
    if (nbf !== undefined && nbf > t + tolerance) refuse("TOKEN_NOT_YET_VALID", "the token is not valid yet", "payload.nbf");
    if (iat > t + tolerance) refuse("TOKEN_NOT_YET_VALID", "the token was issued in the future", "payload.iat");
  }

  /** The whole check of a token not seen before, the clock included, in the order that decides which refusal is named. */
  function verifyFixed(token: string): JwtClaims {
    if (typeof token !== "string" || token.length === 0) refuse("TOKEN_MALFORMED", "expected a JWT string", "token");
    if (token.length > MAX_TOKEN_LENGTH) refuse("TOKEN_MALFORMED", `token longer than ${MAX_TOKEN_LENGTH} characters`, "token");
    const first = token.indexOf(".");
    const second = first < 0 ? -1 : token.indexOf(".", first + 1);
    // An empty signature is left to the algorithm check, so that `alg: none` is reported as what it is.
    if (first <= 0 || second <= first + 1 || token.indexOf(".", second + 1) >= 0) {
      refuse("TOKEN_MALFORMED", "a JWT is a header, claims and a signature separated by dots", "token");
    }
    const header = jsonSegment(token, 0, first, "header");
    if (header.alg !== alg) refuse("TOKEN_ALGORITHM_NOT_ALLOWED", `only ${alg} tokens are accepted`, "header.alg");
    if (header.crit !== undefined || header.b64 !== undefined) refuse("TOKEN_MALFORMED", "critical header parameters are not supported", "header");
    const signature = base64urlDecode(token, second + 1);
    const signingInput = token.slice(0, second);
    if (signature === undefined || signature.length !== verifier.signatureLength || !verifier.check(signingInput, signature)) {
      refuse("TOKEN_INVALID_SIGNATURE", "the token signature does not verify", "signature");
    }
    const claims = jsonSegment(token, first + 1, second, "payload");
    const { sub, iat, exp, jti, nbf } = claims;
    if (typeof sub !== "string" || sub.length === 0) refuse("TOKEN_CLAIM_INVALID", "sub must be a non-empty string", "payload.sub");
    if (typeof jti !== "string" || jti.length === 0) refuse("TOKEN_CLAIM_INVALID", "jti must be a non-empty string", "payload.jti");
    if (typeof iat !== "number" || !Number.isFinite(iat)) refuse("TOKEN_CLAIM_INVALID", "iat must be a number", "payload.iat");
    if (typeof exp !== "number" || !Number.isFinite(exp)) refuse("TOKEN_CLAIM_INVALID", "exp must be a number", "payload.exp");
    if (nbf !== undefined && (typeof nbf !== "number" || !Number.isFinite(nbf))) refuse("TOKEN_CLAIM_INVALID", "nbf must be a number", "payload.nbf");
    checkTimes(claims as JwtClaims);
    if (issuer !== undefined && claims.iss !== issuer) refuse("TOKEN_ISSUER_MISMATCH", "the token is from another issuer", "payload.iss");
    if (audience !== undefined) {
      const aud = claims.aud;
      const ok = typeof aud === "string" ? aud === audience : Array.isArray(aud) && aud.includes(audience);
      if (!ok) refuse("TOKEN_AUDIENCE_MISMATCH", "the token is for another audience", "payload.aud");
    }
    return claims as JwtClaims;
  }

  const header = base64urlEncode(encoder.encode(JSON.stringify({ alg, typ: "JWT" })));

  async function issue(subject: string, extra?: Record<string, unknown>): Promise<string> {
    if (signer === undefined) refuse("JWT_CANNOT_ISSUE", "this EdDSA service holds no private key; it only verifies");
    if (typeof subject !== "string" || subject.length === 0 || subject.length > 1024) refuse("INVALID_ARGUMENT", "the subject must be a non-empty string of at most 1024 characters", "subject");
    if (extra !== undefined && !isRecord(extra)) refuse("INVALID_ARGUMENT", "extra claims must be an object", "extra");
    for (const name of Object.keys(extra ?? {})) {
      if (RESERVED_CLAIMS.has(name)) refuse("INVALID_ARGUMENT", `the claim ${name} is set by the service`, `extra.${name}`);
    }
    const iat = Math.floor(now() / 1000);
    // Object.assign, not `{ ...extra, sub, … }`: V8 clones a leading spread into an object that later writes and
    // JSON.stringify take slow paths on (measured 5.9 vs 0.6 µs for these claims). Same keys, same order.
    const claims: Record<string, unknown> = Object.assign({}, extra, { sub: subject, iat, exp: iat + lifetime, jti: randomTokenId() });
    if (issuer !== undefined) claims.iss = issuer;
    if (audience !== undefined) claims.aud = audience;
    let payload: string;
    try {
      payload = JSON.stringify(claims);
    } catch (error) {
      // What JSON.stringify cannot write: a BigInt, a cycle.
      throw new AuthError("INVALID_ARGUMENT", "extra claims must be JSON-serialisable", { path: "extra", cause: error });
    }
    // Text all the way to the MAC: Node encodes it natively (no TextEncoder round trips for payload and input).
    const signingInput = `${header}.${base64urlEncodeText(payload)}`;
    return `${signingInput}.${signer(signingInput)}`;
  }

  const verify = async (token: string): Promise<JwtClaims> => verifySync(token);
  synchronous.set(verify, verifySync);
  return {
    algorithm: alg,
    lifetime,
    issue,
    verifySync,
    verify,
  };
}

// Each service's verify, to its synchronous twin: a wrapper (guardJwt) that is handed a service's verify calls the twin
// and spares a promise per request; a verify of anyone else's is not in here and is awaited as it is.
const synchronous = new WeakMap<JwtService["verify"], (token: string) => JwtClaims>();

/** The synchronous verification behind `verify` when it is a service of this module's, else undefined. */
export function synchronousVerify(verify: JwtService["verify"]): ((token: string) => JwtClaims) | undefined {
  return synchronous.get(verify);
}

/** HS256 tokens under a shared secret of at least 32 bytes (shorter: AuthError INVALID_JWT_SECRET at construction). */
export function createHs256Jwt(options: Hs256JwtOptions): LocalJwtService {
  if (!isRecord(options)) refuse("INVALID_CONFIGURATION", "expected an options object");
  const raw = options.secret;
  let secret: Uint8Array;
  if (typeof raw === "string") secret = utf8.encode(raw);
  else if (raw instanceof Uint8Array) secret = copyBytes(raw);
  else return refuse("INVALID_JWT_SECRET", "the HS256 secret must be bytes or a string", "secret");
  if (secret.length < MIN_HS256_SECRET_BYTES) refuse("INVALID_JWT_SECRET", `the HS256 secret must be at least ${MIN_HS256_SECRET_BYTES} bytes`, "secret");
  const mac = hmacSha256(secret);
  const verifier: Verifier = { alg: "HS256", signatureLength: 32, check: (input, signature) => constantTimeEqual(mac(input), signature) };
  return buildService(verifier, hmacSha256Text(secret, "base64url"), options);
}

function publicKeyOption(value: unknown): Uint8Array {
  let key: Uint8Array | undefined;
  if (value instanceof Uint8Array) key = copyBytes(value);
  else if (typeof value === "string") {
    try {
      key = base58Decode(value, "publicKey");
    } catch {
      key = undefined;
    }
  }
  if (key === undefined || key.length !== 32) return refuse("INVALID_JWT_KEY", "the EdDSA public key must be 32 bytes (or their Base58)", "publicKey");
  return key;
}

/** EdDSA (Ed25519) tokens; with the public key alone the service verifies but cannot issue. */
export function createEdDsaJwt(options: EdDsaJwtOptions): LocalJwtService {
  if (!isRecord(options)) refuse("INVALID_CONFIGURATION", "expected an options object");
  const publicKey = publicKeyOption(options.publicKey);
  let signer: Signer | undefined;
  if (options.privateKey !== undefined) {
    let seed: Uint8Array;
    try {
      seed = decodeSecretKey(options.privateKey);
    } catch {
      return refuse("INVALID_JWT_KEY", "the EdDSA private key must be a 32-byte seed (or Base58 of it)", "privateKey");
    }
    if (!constantTimeEqual(ed25519PublicKey(seed), publicKey)) {
      seed.fill(0);
      refuse("INVALID_JWT_KEY", "the EdDSA private key does not belong to the public key", "privateKey");
    }
    // The seed stays in this closure for as long as the service lives, as a signing key must.
    const key = seed;
    signer = (input) => base64urlEncode(signEd25519(key, encoder.encode(input)));
  }
  const verifier: Verifier = { alg: "EdDSA", signatureLength: 64, check: (input, signature) => verifyEd25519Strict(publicKey, encoder.encode(input), signature) };
  return buildService(verifier, signer, options);
}
