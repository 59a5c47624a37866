// chrysalis-core/auth: prove-ownership authentication (PROTOCOL.md §7) for clients and servers.
// Nonces and their proof, stateless nonces and the redeemed-nonce store, JWT revocation, identities and DID keys, JWTs, Bearer headers, and the service step joining them.
export { AuthError, AUTH_ERROR_STATUS, wwwAuthenticate, type AuthErrorCode, type AuthStatus } from "./errors.js";
export {
  createNonce,
  isNonce,
  hashNonce,
  signNonce,
  verifySignedNonce,
  parseSignedNonce,
  publicKeyFromSecretKey,
  generateIdentityKeyPair,
  AUTH_NONCE_BYTES,
  AUTH_NONCE_LENGTH,
  SIGNED_NONCE_LENGTH,
} from "./nonce.js";
export {
  MemoryNonceStore,
  DEFAULT_NONCE_TTL_SECONDS,
  DEFAULT_MAX_NONCES_TOTAL,
  type NonceStore,
  type NonceRedemptions,
  type SharedSecrets,
  type TokenRevocations,
  type MemoryNonceStoreOptions,
} from "./store.js";
export { nonceMinter, nonceIssuedAt, type NonceMinter } from "./challenge.js";
export {
  validateIdentityId,
  keyThumbprint,
  MemoryIdentityRegistry,
  publicKeyFromDidDocument,
  publicKeysFromDidDocument,
  MAX_IDENTITY_ID_LENGTH,
  type IdentityResolver,
} from "./identity.js";
export {
  createHs256Jwt,
  createEdDsaJwt,
  parseDuration,
  DEFAULT_JWT_LIFETIME_SECONDS,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  MIN_HS256_SECRET_BYTES,
  MAX_TOKEN_LENGTH,
  type JwtClaims,
  type JwtService,
  type LocalJwtService,
  type JwtOptions,
  type Hs256JwtOptions,
  type EdDsaJwtOptions,
} from "./jwt.js";
export { bearerToken, authHeaders, MAX_AUTHORIZATION_HEADER_LENGTH, type HeaderBag } from "./headers.js";
export {
  createProveOwnership,
  NONCE_KEY_NAME,
  NONCE_CLOCK_SKEW_SECONDS,
  MAX_PROOF_VERIFICATIONS,
  type ProveOwnership,
  type ProveOwnershipOptions,
} from "./prove.js";
export { guardJwt, revokeJwt, tokenIdentity, MAX_REVOCATION_SECONDS, type GuardedJwtService, type JwtGuardOptions, type Revocation } from "./revocation.js";
export { authBackend } from "./primitives.js";
