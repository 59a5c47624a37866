// Outstanding prove-ownership nonces: an async store interface (so Redis and the like fit) and the bounded in-memory default.
// Expiry, several per identity (oldest dropped), a bound overall with sweeping, and an atomic consume that makes each nonce single-use.
import { AuthError } from "./errors.js";

/**
 * Where issued nonces wait for their proof. Every method may be asynchronous.
 * `consume` must be atomic (in Redis: DEL returning 1): of two concurrent attempts with the same nonce, exactly one gets true.
 */
export interface NonceStore {
  /** Records a fresh nonce for `identityId`; may drop that identity's oldest; throws AuthError TOO_MANY_NONCES when full. */
  add(identityId: string, nonce: string): Promise<void>;
  /** The identity's unexpired outstanding nonces, oldest first (at most the per-identity bound). */
  outstanding(identityId: string): Promise<readonly string[]>;
  /** Removes the nonce; true only when it was outstanding and unexpired for this identity. */
  consume(identityId: string, nonce: string): Promise<boolean>;
}

export interface MemoryNonceStoreOptions {
  /** Seconds a nonce stays valid (default 300). */
  ttlSeconds?: number;
  /** Outstanding nonces per identity; a further one drops the oldest (default 4). */
  maxPerIdentity?: number;
  /** Outstanding nonces overall, after sweeping expired ones; beyond it `add` throws TOO_MANY_NONCES (default 100,000). */
  maxTotal?: number;
  /** Clock in milliseconds (default Date.now), injectable for tests. */
  now?: () => number;
}

export const DEFAULT_NONCE_TTL_SECONDS = 300;
export const DEFAULT_MAX_NONCES_PER_IDENTITY = 4;
export const DEFAULT_MAX_NONCES_TOTAL = 100_000;

interface Entry {
  readonly identityId: string;
  readonly nonce: string;
  readonly expiresAt: number;
}

function positiveInteger(value: number | undefined, fallback: number, name: string, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new AuthError("INVALID_CONFIGURATION", `${name} must be an integer from 1 to ${max}`, { path: name });
  }
  return value;
}

/**
 * The in-memory NonceStore of one process. Memory is bounded by `maxTotal` entries of an id and a nonce each.
 * Entries live in one insertion-ordered map, so with a fixed lifetime the expired ones are always at its front
 * and a sweep touches only what it removes.
 */
export class MemoryNonceStore implements NonceStore {
  readonly ttlMs: number;
  readonly maxPerIdentity: number;
  readonly maxTotal: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #byIdentity = new Map<string, Entry[]>();

  constructor(options: MemoryNonceStoreOptions = {}) {
    this.ttlMs = positiveInteger(options.ttlSeconds, DEFAULT_NONCE_TTL_SECONDS, "ttlSeconds", 86_400) * 1000;
    this.maxPerIdentity = positiveInteger(options.maxPerIdentity, DEFAULT_MAX_NONCES_PER_IDENTITY, "maxPerIdentity", 64);
    this.maxTotal = positiveInteger(options.maxTotal, DEFAULT_MAX_NONCES_TOTAL, "maxTotal", 100_000_000);
    if (options.now !== undefined && typeof options.now !== "function") {
      throw new AuthError("INVALID_CONFIGURATION", "now must be a function returning milliseconds", { path: "now" });
    }
    this.#now = options.now ?? Date.now;
  }

  /** Outstanding nonces overall, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  async add(identityId: string, nonce: string): Promise<void> {
    const now = this.#now();
    this.sweep(now);
    const list = this.#byIdentity.get(identityId) ?? [];
    const key = entryKey(identityId, nonce);
    if (this.#entries.has(key)) return; // the same nonce twice (a 160-bit collision or a caller's retry): keep the first
    while (list.length >= this.maxPerIdentity) this.#remove(list[0]!);
    if (this.#entries.size >= this.maxTotal) {
      throw new AuthError("TOO_MANY_NONCES", "too many outstanding nonces; try again later");
    }
    const entry: Entry = { identityId, nonce, expiresAt: now + this.ttlMs };
    this.#entries.set(key, entry);
    list.push(entry);
    this.#byIdentity.set(identityId, list);
  }

  async outstanding(identityId: string): Promise<readonly string[]> {
    this.sweep(this.#now());
    const list = this.#byIdentity.get(identityId);
    return list === undefined ? [] : list.map((e) => e.nonce);
  }

  async consume(identityId: string, nonce: string): Promise<boolean> {
    const now = this.#now();
    this.sweep(now);
    const entry = this.#entries.get(entryKey(identityId, nonce));
    if (entry === undefined) return false;
    this.#remove(entry);
    return entry.expiresAt > now;
  }

  /** Drops every expired entry; called by each operation, callable on a timer too. Returns how many it dropped. */
  sweep(now = this.#now()): number {
    let dropped = 0;
    for (const entry of this.#entries.values()) {
      // Insertion order is expiry order while the clock runs forward; a clock stepped back only delays the sweep.
      if (entry.expiresAt > now) break;
      this.#remove(entry);
      dropped++;
    }
    return dropped;
  }

  #remove(entry: Entry): void {
    this.#entries.delete(entryKey(entry.identityId, entry.nonce));
    const list = this.#byIdentity.get(entry.identityId);
    if (list === undefined) return;
    const at = list.indexOf(entry);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.#byIdentity.delete(entry.identityId);
  }
}

// A NUL cannot occur in a validated identity id, so the pair maps to one key.
function entryKey(identityId: string, nonce: string): string {
  return `${identityId}\u0000${nonce}`;
}
