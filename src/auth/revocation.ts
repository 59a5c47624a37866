// JWTs that stop working before they expire: revoked by their id (kept in a store every instance reads), or issued to an
// identity that is no longer registered. guardJwt wraps a JwtService so that every verification checks both.
import { utf8 } from "../bytes/bytes.js";
import { base64urlDecode } from "./base64url.js";
import { AuthError } from "./errors.js";
import { hasKeyWithThumbprint, type IdentityResolver } from "./identity.js";
import { synchronousVerify, type JwtClaims, type JwtService } from "./jwt.js";
import type { TokenRevocations } from "./store.js";

/** What guardJwt checks beyond the signature: revocations, and (with a resolver) that the subject and its key are still registered. */
export interface JwtGuardOptions {
  /** Where revocations are kept and read (the node's NodeStore, or a MemoryNonceStore). */
  revocations?: TokenRevocations;
  /**
   * When given, a token whose subject this resolver no longer knows is refused (TOKEN_SUBJECT_UNKNOWN), and so is one
   * bound to a key (`cnf.jkt`, as prove-ownership issues them) that is no longer among the subject's keys
   * (TOKEN_KEY_UNKNOWN): rotating a key out ends the sessions it opened.
   */
  resolver?: IdentityResolver;
  /** Clock in milliseconds (default Date.now). */
  now?: () => number;
}

/** What a revocation stored: the token id and until when (ms since the epoch) it is refused. */
export interface Revocation {
  /** The token id revoked. */
  readonly jti: string;
  /** Until when (ms since the epoch) the token is refused. */
  readonly expiresAt: number;
}

/** A JwtService whose verify also refuses revoked tokens and unregistered subjects, and which can revoke. */
export interface GuardedJwtService extends JwtService {
  /** Revokes a token, given whole or by its id (jti). */
  revoke(tokenOrId: string): Promise<Revocation>;
}

/** How long a revocation given by id alone is kept: the longest lifetime a token of ours can have. */
export const MAX_REVOCATION_SECONDS = 366 * 86_400;
// A revoked token is refused a little past its exp, for the verifier's clock tolerance.
const EXPIRY_MARGIN_SECONDS = 300;
const JTI = /^[A-Za-z0-9_-]{1,128}$/;

function storeFailure(error: unknown): AuthError {
  if (error instanceof AuthError) return error;
  return new AuthError("NONCE_STORE_FAILED", "the revocation store failed", { cause: error });
}

/** The `jti` and `exp` claims of a compact JWT, read without checking its signature (revoking a forgery is harmless). */
export function tokenIdentity(token: string): {
  /** The token id. */
  jti: string;
  /** The expiry, seconds since the epoch, if the token has one. */
  exp: number | undefined;
} {
  const parts = typeof token === "string" ? token.split(".") : [];
  const payload = parts.length === 3 ? base64urlDecode(parts[1]!) : undefined;
  let claims: unknown;
  try {
    claims = payload === undefined ? undefined : JSON.parse(utf8.decode(payload));
  } catch {
    claims = undefined;
  }
  const { jti, exp } = (typeof claims === "object" && claims !== null ? claims : {}) as { jti?: unknown; exp?: unknown };
  if (typeof jti !== "string" || !JTI.test(jti)) throw new AuthError("TOKEN_MALFORMED", "not a JWT with a jti claim", { path: "token" });
  return { jti, exp: typeof exp === "number" && Number.isFinite(exp) ? exp : undefined };
}

/**
 * Stores the revocation of a token, given whole (its exp then bounds how long it is kept) or by its id alone (kept for
 * MAX_REVOCATION_SECONDS). Every verifier reading the same store refuses the token from then on.
 */
export async function revokeJwt(revocations: Pick<TokenRevocations, "revokeToken">, tokenOrId: string, options: { now?: () => number } = {}): Promise<Revocation> {
  const now = (options.now ?? Date.now)();
  let jti: string;
  let expiresAt: number;
  if (typeof tokenOrId === "string" && tokenOrId.includes(".")) {
    const identity = tokenIdentity(tokenOrId);
    jti = identity.jti;
    expiresAt = identity.exp === undefined ? now + MAX_REVOCATION_SECONDS * 1000 : (identity.exp + EXPIRY_MARGIN_SECONDS) * 1000;
  } else {
    if (typeof tokenOrId !== "string" || !JTI.test(tokenOrId)) throw new AuthError("INVALID_ARGUMENT", "expected a JWT or its id (base64url, at most 128 characters)", { path: "token" });
    jti = tokenOrId;
    expiresAt = now + MAX_REVOCATION_SECONDS * 1000;
  }
  try {
    await revocations.revokeToken(jti, expiresAt);
  } catch (error) {
    throw storeFailure(error);
  }
  return { jti, expiresAt };
}

/** The key thumbprint a token is bound to (its `cnf.jkt` claim), if any. */
function boundKey(claims: JwtClaims): string | undefined {
  const cnf = claims.cnf;
  const jkt = typeof cnf === "object" && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
  return typeof jkt === "string" ? jkt : undefined;
}

/**
 * Wraps `jwt` so that verify also refuses revoked tokens (TOKEN_REVOKED), unregistered subjects (TOKEN_SUBJECT_UNKNOWN)
 * and tokens bound to a key their subject no longer has (TOKEN_KEY_UNKNOWN).
 */
export function guardJwt(jwt: JwtService, options: JwtGuardOptions = {}): GuardedJwtService {
  const { revocations, resolver } = options;
  const now = options.now ?? Date.now;
  return {
    issue: (subject, extra) => jwt.issue(subject, extra),
    async verify(token: string): Promise<JwtClaims> {
      // The services of jwt.ts verify synchronously: one promise less on every protected request.
      const verifySync = synchronousVerify(jwt.verify);
      const claims = verifySync !== undefined ? verifySync(token) : await jwt.verify(token);
      if (revocations !== undefined) {
        let revoked: boolean;
        try {
          revoked = await revocations.isTokenRevoked(claims.jti);
        } catch (error) {
          throw storeFailure(error);
        }
        if (revoked) throw new AuthError("TOKEN_REVOKED", "the token was revoked", { path: "payload.jti" });
      }
      if (resolver !== undefined) {
        let keys: Uint8Array[] | undefined;
        try {
          keys = await resolver.resolve(claims.sub);
        } catch (error) {
          throw new AuthError("IDENTITY_RESOLUTION_FAILED", "the token's identity could not be resolved", { cause: error });
        }
        if (keys === undefined || keys.length === 0) throw new AuthError("TOKEN_SUBJECT_UNKNOWN", "the identity this token was issued to is no longer registered", { path: "payload.sub" });
        const bound = boundKey(claims);
        // A thumbprint is derived from a public key: nothing secret to compare in constant time.
        if (bound !== undefined && !hasKeyWithThumbprint(keys, bound)) {
          throw new AuthError("TOKEN_KEY_UNKNOWN", "the key that proved ownership for this token is no longer registered for its identity", { path: "payload.cnf.jkt" });
        }
      }
      return claims;
    },
    async revoke(tokenOrId: string): Promise<Revocation> {
      if (revocations === undefined) throw new AuthError("INVALID_CONFIGURATION", "this JWT service has no revocation store", { path: "revocations" });
      return revokeJwt(revocations, tokenOrId, { now });
    },
  };
}
