// AuthError: every refusal of the auth layer, a ProtocolError with a stable code and an HTTP-ready status.
// Messages are fixed texts: they never echo keys, signatures, tokens or secrets handed in.
import { ProtocolError, type ProtocolErrorOptions } from "../bytes/errors.js";

/** The statuses an auth failure maps to: 400 malformed, 401 refused proof or token, 404 unknown identity, 429 too many
 * redeemed nonces, 5xx the server's side (503: the store is unavailable, retry). */
export type AuthStatus = 400 | 401 | 404 | 429 | 500 | 502 | 503;

/** Each code and the status it always carries. */
export const AUTH_ERROR_STATUS = {
  /** Not 40 lowercase hex characters. */
  INVALID_NONCE: 400,
  /** Not Base58 of a 32-byte seed or a consistent 64-byte seed ‖ public key. */
  INVALID_SECRET_KEY: 400,
  /** Not 128 hex characters. */
  INVALID_SIGNED_NONCE: 400,
  /** Not a 32-byte Ed25519 public key. */
  INVALID_PUBLIC_KEY: 400,
  /** Refused by the identity id validator. */
  INVALID_IDENTITY_ID: 400,
  /** A DID document without a readable Ed25519 key. */
  INVALID_DID_DOCUMENT: 400,
  /** A call given the wrong kind of value. */
  INVALID_ARGUMENT: 400,
  /** The resolver knows no key for the identity (refused before any work). */
  UNKNOWN_IDENTITY: 404,
  /** The signature matches no live nonce of the identity under any of its keys. */
  INVALID_PROOF: 401,
  /** The signed nonce was redeemed before, or its lifetime is over. */
  NONCE_EXPIRED_OR_USED: 401,
  /** The set of redeemed nonces is full. */
  TOO_MANY_NONCES: 429,
  /** No Bearer token in Authorization or Authentication. */
  MISSING_TOKEN: 401,
  /** A Bearer header whose value is not one token68. */
  INVALID_AUTHORIZATION_HEADER: 400,
  /** Authorization and Authentication disagree. */
  CONFLICTING_TOKENS: 400,
  /** Not a compact JWS with a JSON header and claims. */
  TOKEN_MALFORMED: 401,
  /** Alg other than the one the service pins (none, confusion). */
  TOKEN_ALGORITHM_NOT_ALLOWED: 401,
  /** The token's signature does not verify under the service's key. */
  TOKEN_INVALID_SIGNATURE: 401,
  /** Exp is past, beyond the clock tolerance. */
  TOKEN_EXPIRED: 401,
  /** Nbf or iat in the future beyond the clock tolerance. */
  TOKEN_NOT_YET_VALID: 401,
  /** A required claim missing or of the wrong type. */
  TOKEN_CLAIM_INVALID: 401,
  /** Iss is not the issuer the service requires. */
  TOKEN_ISSUER_MISMATCH: 401,
  /** Aud does not name the audience the service requires. */
  TOKEN_AUDIENCE_MISMATCH: 401,
  /** Revoked by its id (jti). */
  TOKEN_REVOKED: 401,
  /** The identity it was issued to is no longer registered. */
  TOKEN_SUBJECT_UNKNOWN: 401,
  /** The key that earned it (cnf.jkt) is no longer one of its identity's keys. */
  TOKEN_KEY_UNKNOWN: 401,
  /** Configuration: an HS256 secret under 32 bytes. */
  INVALID_JWT_SECRET: 500,
  /** Configuration: an EdDSA key pair that is malformed or does not match. */
  INVALID_JWT_KEY: 500,
  /** An EdDSA service built with the public key alone was asked to issue. */
  JWT_CANNOT_ISSUE: 500,
  /** Another option out of range (lifetime, tolerance, bounds). */
  INVALID_CONFIGURATION: 500,
  /** The nonce store threw something other than an AuthError (unreachable: retry later). */
  NONCE_STORE_FAILED: 503,
  /** The identity resolver threw or returned something other than keys. */
  IDENTITY_RESOLUTION_FAILED: 502,
} as const satisfies Record<string, AuthStatus>;

/** The codes the auth layer raises, each with its HTTP status in AUTH_ERROR_STATUS; part of ErrorCode. */
export type AuthErrorCode = keyof typeof AUTH_ERROR_STATUS;

declare module "../bytes/errors.js" {
  interface ErrorCodeRegistry {
    auth: AuthErrorCode;
  }
}

/** Every refusal of the auth layer: a ProtocolError whose code always carries the same HTTP status. */
export class AuthError extends ProtocolError {
  declare readonly code: AuthErrorCode;
  /** The HTTP status the code maps to (AUTH_ERROR_STATUS). */
  readonly status: AuthStatus;

  constructor(code: AuthErrorCode, message: string, options: ProtocolErrorOptions = {}) {
    super(code, message, options);
    this.name = "AuthError";
    this.status = AUTH_ERROR_STATUS[code];
  }
}

/**
 * The RFC 6750 `WWW-Authenticate` value to send with a 401 or 400 token refusal,
 * e.g. `Bearer realm="chrysalis", error="invalid_token"`.
 */
export function wwwAuthenticate(error: AuthError, realm = "chrysalis"): string {
  const quoted = realm.replace(/[\\"\x00-\x1f\x7f]/g, "").slice(0, 128);
  if (error.code === "MISSING_TOKEN") return `Bearer realm="${quoted}"`;
  const kind = error.status === 400 ? "invalid_request" : "invalid_token";
  return `Bearer realm="${quoted}", error="${kind}"`;
}
