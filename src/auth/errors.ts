// AuthError: every refusal of the auth layer, a ProtocolError with a stable code and an HTTP-ready status.
// Messages are fixed texts: they never echo keys, signatures, tokens or secrets handed in.
import { ProtocolError, type ProtocolErrorOptions } from "../bytes/errors.js";

/** The statuses an auth failure maps to: 400 malformed, 401 refused proof or token, 404 unknown identity, 429 too many
 * redeemed nonces, 5xx the server's side (503: the store is unavailable, retry). */
export type AuthStatus = 400 | 401 | 404 | 429 | 500 | 502 | 503;

/** Each code and the status it always carries. */
export const AUTH_ERROR_STATUS = {
  INVALID_NONCE: 400, // not 40 lowercase hex characters
  INVALID_SECRET_KEY: 400, // not Base58 of a 32-byte seed or a consistent 64-byte seed ‖ public key
  INVALID_SIGNED_NONCE: 400, // not 128 hex characters
  INVALID_PUBLIC_KEY: 400, // not a 32-byte Ed25519 public key
  INVALID_IDENTITY_ID: 400, // refused by the identity id validator
  INVALID_DID_DOCUMENT: 400, // a DID document without a readable Ed25519 key
  INVALID_ARGUMENT: 400, // a call given the wrong kind of value
  UNKNOWN_IDENTITY: 404, // the resolver knows no key for the identity (refused before any work)
  INVALID_PROOF: 401, // the signature matches no live nonce of the identity under any of its keys
  NONCE_EXPIRED_OR_USED: 401, // the signed nonce was redeemed before, or its lifetime is over
  TOO_MANY_NONCES: 429, // the set of redeemed nonces is full
  MISSING_TOKEN: 401, // no Bearer token in Authorization or Authentication
  INVALID_AUTHORIZATION_HEADER: 400, // a Bearer header whose value is not one token68
  CONFLICTING_TOKENS: 400, // Authorization and Authentication disagree
  TOKEN_MALFORMED: 401, // not a compact JWS with a JSON header and claims
  TOKEN_ALGORITHM_NOT_ALLOWED: 401, // alg other than the one the service pins (none, confusion)
  TOKEN_INVALID_SIGNATURE: 401,
  TOKEN_EXPIRED: 401,
  TOKEN_NOT_YET_VALID: 401, // nbf or iat in the future beyond the clock tolerance
  TOKEN_CLAIM_INVALID: 401, // a required claim missing or of the wrong type
  TOKEN_ISSUER_MISMATCH: 401,
  TOKEN_AUDIENCE_MISMATCH: 401,
  TOKEN_REVOKED: 401, // revoked by its id (jti)
  TOKEN_SUBJECT_UNKNOWN: 401, // the identity it was issued to is no longer registered
  TOKEN_KEY_UNKNOWN: 401, // the key that earned it (cnf.jkt) is no longer one of its identity's keys
  INVALID_JWT_SECRET: 500, // configuration: an HS256 secret under 32 bytes
  INVALID_JWT_KEY: 500, // configuration: an EdDSA key pair that is malformed or does not match
  JWT_CANNOT_ISSUE: 500, // an EdDSA service built with the public key alone was asked to issue
  INVALID_CONFIGURATION: 500, // another option out of range (lifetime, tolerance, bounds)
  NONCE_STORE_FAILED: 503, // the nonce store threw something other than an AuthError (unreachable: retry later)
  IDENTITY_RESOLUTION_FAILED: 502, // the identity resolver threw or returned something other than keys
} as const satisfies Record<string, AuthStatus>;

export type AuthErrorCode = keyof typeof AUTH_ERROR_STATUS;

declare module "../bytes/errors.js" {
  interface ErrorCodeRegistry {
    auth: AuthErrorCode;
  }
}

export class AuthError extends ProtocolError {
  declare readonly code: AuthErrorCode;
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
