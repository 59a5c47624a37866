// What prove-ownership and JWT revocation keep: the set of redeemed nonces (each until it expires), the revoked token
// ids, and the nonce MAC key. Small interfaces here, so that the node's NodeStore (one store every instance shares)
// satisfies them without this layer importing it; MemoryNonceStore is the bounded in-memory default of one process.
import { AuthError } from "./errors.js";
import { randomFill } from "./primitives.js";

/** Remembers redeemed nonces. `redeemNonce` must be atomic: of two concurrent calls with one nonce exactly one gets true. */
export interface NonceRedemptions {
  /** Records `nonce` as redeemed until `expiresAt` (ms since the epoch); true only the first time. */
  redeemNonce(nonce: string, expiresAt: number): Promise<boolean>;
}

/** Named secrets shared by every instance on a store (created once, atomically). */
export interface SharedSecrets {
  /** The stored secret of this name, or `create()`'s value stored if there is none yet. */
  secret(name: string, create: () => Uint8Array): Promise<Uint8Array>;
}

/** Revoked JWT ids, each kept until the token would have expired anyway. */
export interface TokenRevocations {
  /** Refuses the token id `jti` until `expiresAt` (ms since the epoch). */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  /** Whether the token id was revoked. */
  isTokenRevoked(jti: string): Promise<boolean>;
}

/** What createProveOwnership needs of a store; the node's NodeStore has it. */
export interface NonceStore extends NonceRedemptions, SharedSecrets {}

/** Bounds and clock of a MemoryNonceStore. */
export interface MemoryNonceStoreOptions {
  /** Redeemed nonces and revoked token ids held at most, after dropping expired ones (default 1,000,000). Beyond it a
   * redemption fails with TOO_MANY_NONCES (429), closed rather than open: a nonce that cannot be recorded is not honoured. */
  maxTotal?: number;
  /** Clock in milliseconds (default Date.now), injectable for tests. */
  now?: () => number;
}

/** The nonce lifetime, in seconds, of createProveOwnership unless told otherwise. */
export const DEFAULT_NONCE_TTL_SECONDS = 30;
/** Redeemed nonces and revocations a MemoryNonceStore holds unless told otherwise. */
export const DEFAULT_MAX_NONCES_TOTAL = 1_000_000;

function positiveInteger(value: number | undefined, fallback: number, name: string, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new AuthError("INVALID_CONFIGURATION", `${name} must be an integer from 1 to ${max}`, { path: name });
  }
  return value;
}

/**
 * The in-memory store of one process: redeemed nonces, revoked token ids and secrets in maps. Only a successful proof
 * (a signature by a registered key) or an operator's revocation adds an entry, so anonymous traffic cannot fill it.
 * Expired entries are dropped when the bound is reached or `sweep` is called.
 */
export class MemoryNonceStore implements NonceStore, TokenRevocations {
  /** Redeemed nonces and revoked token ids held at most. */
  readonly maxTotal: number;
  readonly #now: () => number;
  readonly #redeemed = new Map<string, number>();
  readonly #revoked = new Map<string, number>();
  readonly #secrets = new Map<string, Uint8Array>();
  #lastDrop = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryNonceStoreOptions = {}) {
    this.maxTotal = positiveInteger(options.maxTotal, DEFAULT_MAX_NONCES_TOTAL, "maxTotal", 100_000_000);
    if (options.now !== undefined && typeof options.now !== "function") {
      throw new AuthError("INVALID_CONFIGURATION", "now must be a function returning milliseconds", { path: "now" });
    }
    this.#now = options.now ?? Date.now;
  }

  /** Redeemed nonces and revocations held, expired ones not yet dropped included. */
  get size(): number {
    return this.#redeemed.size + this.#revoked.size;
  }

  async redeemNonce(nonce: string, expiresAt: number): Promise<boolean> {
    if (this.#redeemed.has(nonce)) return false;
    this.#makeRoom();
    this.#redeemed.set(nonce, expiresAt);
    return true;
  }

  /** Refuses the token id `jti` until `expiresAt` (ms since the epoch; a later one already stored is kept). */
  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    if (!this.#revoked.has(jti)) this.#makeRoom();
    this.#revoked.set(jti, Math.max(expiresAt, this.#revoked.get(jti) ?? 0));
  }

  /** Whether the token id was revoked (and not yet dropped as expired). */
  async isTokenRevoked(jti: string): Promise<boolean> {
    return this.#revoked.has(jti);
  }

  async secret(name: string, create: () => Uint8Array): Promise<Uint8Array> {
    let value = this.#secrets.get(name);
    if (value === undefined) this.#secrets.set(name, (value = create().slice()));
    return value;
  }

  /** Drops entries that expired before `now`. */
  async sweep(now = this.#now()): Promise<void> {
    this.#drop(now);
  }

  #drop(now: number): void {
    for (const [key, expiresAt] of this.#redeemed) if (expiresAt < now) this.#redeemed.delete(key);
    for (const [key, expiresAt] of this.#revoked) if (expiresAt < now) this.#revoked.delete(key);
  }

  #makeRoom(): void {
    if (this.size < this.maxTotal) return;
    // A full scan at most once a second, so a full store does not turn every redemption into one.
    const now = this.#now();
    if (now - this.#lastDrop >= 1000) {
      this.#lastDrop = now;
      this.#drop(now);
    }
    if (this.size >= this.maxTotal) throw new AuthError("TOO_MANY_NONCES", "too many redeemed nonces are remembered; try again later");
  }
}

/** A fresh 32-byte key from the platform CSPRNG (what `secret()` is asked to create). */
export function randomKey(): Uint8Array {
  return randomFill(new Uint8Array(32));
}
