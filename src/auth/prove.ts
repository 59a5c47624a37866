// The prove-ownership service step (PROTOCOL.md §7): issue a nonce for an identity, then trade a signedNonce for a JWT.
// It ties a NonceStore, an IdentityResolver and a JwtService together; every failure is an AuthError with its status.
//
// Which nonce was signed? The POST carries only the signature, so it is checked against each outstanding nonce of the
// identity (at most the store's per-identity bound) under each of its keys (at most `maxKeys`). What an attempt consumes:
// - a signature that matches consumes exactly the matching nonce (atomically, so two racing POSTs yield one JWT);
//   the identity's other outstanding nonces stay usable, each once;
// - a signature that matches none consumes every nonce it was checked against: each was used by an attempt that failed.
//   A captured signedNonce therefore works at most once, and a guesser gets one try per issued nonce. The cost is that
//   anyone who knows an identity id can cancel its pending nonces with a bad POST; they can do as much by requesting
//   nonces for it (the oldest are dropped), which is inherent in an unauthenticated challenge: rate-limit both routes.
// A malformed signedNonce (not 128 hex characters) is refused with 400 before any nonce is looked at, and consumes none.
// Unknown identities and bad proofs get one code and message, and an unknown identity still costs one verification
// per outstanding nonce, so neither the answer nor (roughly) its timing tells whether an identity exists.
import { AuthError } from "./errors.js";
import { createNonce, hashNonce, isNonce, parseSignedNonce } from "./nonce.js";
import { verifyEd25519Strict } from "./primitives.js";
import { validateIdentityId as defaultValidateIdentityId, type IdentityResolver } from "./identity.js";
import type { JwtService } from "./jwt.js";
import type { NonceStore } from "./store.js";

export interface ProveOwnershipOptions {
  store: NonceStore;
  resolver: IdentityResolver;
  jwt: JwtService;
  /** Returns the id to use or throws (AuthError INVALID_IDENTITY_ID); default validateIdentityId. */
  validateIdentityId?: (identityId: string) => string;
  /** Keys of one identity tried per nonce (default 8); further keys are ignored. */
  maxKeys?: number;
  /** Extra claims put into each JWT, from the identity id. */
  claims?: (identityId: string) => Record<string, unknown> | undefined;
}

export interface ProveOwnership {
  /** GET: a fresh nonce for the identity (whether or not it is known). */
  issueNonce(identityId: string): Promise<string>;
  /** POST: the JWT for an identity whose key signed one of its outstanding nonces. */
  prove(identityId: string, signedNonce: string): Promise<string>;
}

// A key no identity has, so that an unknown identity costs the same verifications as a known one.
const DECOY_KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 73 + 41) & 0xff);

export function createProveOwnership(options: ProveOwnershipOptions): ProveOwnership {
  const { store, resolver, jwt } = options;
  const validate = options.validateIdentityId ?? defaultValidateIdentityId;
  const maxKeys = options.maxKeys ?? 8;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1 || maxKeys > 64) {
    throw new AuthError("INVALID_CONFIGURATION", "maxKeys must be an integer from 1 to 64", { path: "maxKeys" });
  }

  function checkedId(identityId: unknown): string {
    const id = validate(identityId as string);
    if (typeof id !== "string" || id.length === 0) throw new AuthError("INVALID_IDENTITY_ID", "invalid identity id", { path: "identityId" });
    return id;
  }

  async function storeCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof AuthError) throw error;
      throw new AuthError("NONCE_STORE_FAILED", "the nonce store failed", { cause: error });
    }
  }

  async function keysOf(id: string): Promise<Uint8Array[]> {
    let keys: unknown;
    try {
      keys = await resolver.resolve(id);
    } catch (error) {
      if (error instanceof AuthError && error.status < 500) throw error;
      throw new AuthError("IDENTITY_RESOLUTION_FAILED", "the identity could not be resolved", { cause: error });
    }
    if (keys === undefined) return [];
    if (!Array.isArray(keys) || !keys.every((k) => k instanceof Uint8Array)) {
      throw new AuthError("IDENTITY_RESOLUTION_FAILED", "the identity resolver returned something other than a list of keys");
    }
    return keys.slice(0, maxKeys) as Uint8Array[];
  }

  function refused(): AuthError {
    return new AuthError("UNKNOWN_IDENTITY_OR_BAD_PROOF", "unknown identity or invalid proof of ownership", { path: "signedNonce" });
  }

  return {
    async issueNonce(identityId: string): Promise<string> {
      const id = checkedId(identityId);
      const nonce = createNonce();
      await storeCall(() => store.add(id, nonce));
      return nonce;
    },

    async prove(identityId: string, signedNonce: string): Promise<string> {
      const id = checkedId(identityId);
      const signature = parseSignedNonce(signedNonce);
      const nonces = await storeCall(() => store.outstanding(id));
      if (nonces.length === 0) throw new AuthError("NONCE_EXPIRED_OR_USED", "no outstanding nonce for this identity: request a new one", { path: "nonce" });
      const keys = await keysOf(id);
      const candidates = keys.length > 0 ? keys : [DECOY_KEY];
      let matched: string | undefined;
      for (const nonce of nonces) {
        if (!isNonce(nonce)) continue; // a store holding something else: never a match
        const digest = hashNonce(nonce);
        for (const key of candidates) {
          if (verifyEd25519Strict(key, digest, signature) && keys.length > 0) matched = nonce;
        }
        if (matched !== undefined) break;
      }
      if (matched === undefined) {
        await storeCall(() => Promise.all(nonces.map((n) => store.consume(id, n))));
        throw refused();
      }
      if (!(await storeCall(() => store.consume(id, matched)))) {
        // Another attempt consumed it between our read and now.
        throw new AuthError("NONCE_EXPIRED_OR_USED", "the nonce has expired or was used: request a new one", { path: "nonce" });
      }
      return jwt.issue(id, options.claims?.(id));
    },
  };
}
