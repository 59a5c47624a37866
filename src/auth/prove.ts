// The prove-ownership service step (PROTOCOL.md §7): issue a nonce for an identity, then trade a signedNonce for a JWT.
// Nonces are stateless (challenge.ts): issuing one writes nothing, so no flood of GETs can fill a table or push out
// someone else's nonce, and a bad POST consumes nothing. Only a proof that verifies is recorded, as a redeemed nonce in
// the store until the nonce expires (the node's NodeStore, so every instance sharing it agrees), and the MAC key comes
// from the same store. Every failure is an AuthError carrying its HTTP status.
//
// A nonce is a function of (identity, second, lane): the GET hands out the lowest lane of the current second that this
// instance has not seen redeemed, so one identity can log in again and again (up to MAX_LANES times a second). What an
// instance knows of redeemed lanes comes only from proofs whose signature verified, so anonymous traffic cannot fill
// it; it is bounded and only a hint, the store's redeemed set decides.
//
// Which nonce was signed? A POST may name it (`nonce`, an extension of ours), and then exactly that nonce is checked. The
// Integration Services client sends only the signature, so the service rebuilds the nonces it may have issued to the
// identity during one lifetime (the next free lane of each second, newest first: now, a second ago, a second ahead for
// another instance's clock, …; then the first lanes of the last two seconds, for nonces another instance issued) and
// tries the signature against each under each of the identity's keys: a proof from a client that signs and posts at
// once costs one or two verifications; a bad proof costs at most MAX_PROOF_VERIFICATIONS (about 6 ms), and an unknown
// identity costs none. Two logins of one identity whose GETs fall in the same second before either proof arrived get
// the same nonce: the first proof redeems it, the second is refused (NONCE_EXPIRED_OR_USED) and works when repeated.
import { constantTimeEqual } from "../bytes/bytes.js";
import { fromHex } from "../bytes/hex.js";
import { nonceIssuedAt, nonceMinter, MAX_ISSUED_SECONDS, MAX_LANES, type NonceMinter } from "./challenge.js";
import { AuthError } from "./errors.js";
import { keyThumbprint, validateIdentityId as defaultValidateIdentityId, type IdentityResolver } from "./identity.js";
import { parseDuration, type JwtService } from "./jwt.js";
import { hashNonce, isNonce, parseSignedNonce } from "./nonce.js";
import { verifyEd25519Strict } from "./primitives.js";
import { DEFAULT_NONCE_TTL_SECONDS, randomKey, type NonceStore } from "./store.js";

/** What createProveOwnership needs: a store, the identities and their keys, a JWT service; and its bounds. */
export interface ProveOwnershipOptions {
  /** Redeemed nonces and the nonce MAC key: the node's NodeStore (shared by its instances) or a MemoryNonceStore. */
  store: NonceStore;
  /** The identities and the keys that may prove each. */
  resolver: IdentityResolver;
  /** Issues the JWT a successful proof answers. */
  jwt: JwtService;
  /** How long a nonce can be redeemed: seconds, or a duration such as "2m" (default 30 s; 2 s to 1 h). */
  lifetime?: number | string;
  /** Issue nonces without asking the resolver first (for resolvers too slow to ask on every GET). Default false: a GET
   * for an identity the resolver does not know answers 404 UNKNOWN_IDENTITY. */
  issueForUnknownIdentities?: boolean;
  /** Returns the id to use or throws (AuthError INVALID_IDENTITY_ID); default validateIdentityId. */
  validateIdentityId?: (identityId: string) => string;
  /** Keys of one identity tried per nonce (default 8); further keys are ignored. */
  maxKeys?: number;
  /** Extra claims put into each JWT, from the identity id. */
  claims?: (identityId: string) => Record<string, unknown> | undefined;
  /** Clock in milliseconds (default Date.now), injectable for tests. */
  now?: () => number;
}

/** The prove-ownership service: the GET (issue a nonce) and the POST (prove it, get a JWT) without HTTP. */
export interface ProveOwnership {
  /** GET: the identity's current nonce (40 lowercase hex characters). */
  issueNonce(identityId: string): Promise<string>;
  /** POST: the JWT for an identity whose key signed one of its live nonces; `nonce` names the nonce that was signed. */
  prove(identityId: string, signedNonce: string, nonce?: string): Promise<string>;
  /** The nonce lifetime in seconds. */
  readonly lifetime: number;
}

/** The name of the nonce MAC key in the store's shared secrets. */
export const NONCE_KEY_NAME = "prove-ownership/nonce-key";
/** Seconds another instance's clock may run ahead: its nonces are accepted that much early. */
export const NONCE_CLOCK_SKEW_SECONDS = 1;
/** Signature verifications one POST may cost at most (nonces searched × keys). */
export const MAX_PROOF_VERIFICATIONS = 64;
/** (identity, second) pairs whose redeemed lanes an instance remembers: twice it at most, the newest seconds kept. */
const LANE_MEMORY = 65_536;
/** (identity, second) pairs whose minted nonces an instance remembers, so that a login's POST finds the nonce its GET
 * made (one MAC less): twice it at most, the newest seconds kept. */
const MINTED_MEMORY = 2048;
/** Lanes of the two newest seconds tried besides the next free one (nonces issued by another instance). */
const OTHER_LANES_TRIED = 4;
const MIN_LIFETIME_SECONDS = 2;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_LIFETIME_SECONDS = 3600;

/**
 * Values per (second, identity), kept in one map per second and forgotten a whole second at a time. A login mostly
 * asks about the current second, for which nothing is known yet: that is one lookup among a few dozen seconds here,
 * where a table keyed by a "second, identity" string (the former BoundedMap of up to 131,072 pairs, two generations)
 * took a fresh key's hash and two probes of a large table, 0.7 µs each on this machine's caches.
 * Seconds up to `expired` are dropped whenever a second newer than all before is begun. Beyond 2 × `keep` pairs the
 * oldest seconds are dropped until at most `keep` are left (a single second above it too: what is kept here is only a
 * hint).
 */
export class SecondsMemory<V> {
  readonly #seconds = new Map<number, Map<string, V>>();
  readonly #keep: number;
  #size = 0;
  #newest = Number.NEGATIVE_INFINITY;

  constructor(keep: number) {
    this.#keep = keep;
  }

  /** Pairs held. */
  get size(): number {
    return this.#size;
  }

  get(second: number, id: string): V | undefined {
    return this.#seconds.get(second)?.get(id);
  }

  set(second: number, id: string, value: V, expired: number): void {
    let pairs = this.#seconds.get(second);
    if (pairs === undefined) {
      // Looked through once a second at most (when time moves on), not for each older second a proof search begins.
      if (second > this.#newest) {
        this.#newest = second;
        for (const [old, its] of this.#seconds) if (old <= expired) this.#drop(old, its);
      }
      pairs = new Map();
      this.#seconds.set(second, pairs);
    }
    const before = pairs.size;
    pairs.set(id, value);
    this.#size += pairs.size - before;
    if (this.#size > 2 * this.#keep) {
      for (const old of [...this.#seconds.keys()].sort((a, b) => a - b)) {
        if (this.#size <= this.#keep) break;
        this.#drop(old, this.#seconds.get(old)!);
      }
    }
  }

  #drop(second: number, pairs: Map<string, V>): void {
    this.#size -= pairs.size;
    this.#seconds.delete(second);
  }
}

/** Which lanes this instance has seen redeemed, per (identity, second): a bit per lane. */
class LaneMemory {
  readonly #masks = new SecondsMemory<number>(LANE_MEMORY);
  /** Seconds a lane matters for after the second it was issued in (a nonce's lifetime and the clock skew). */
  readonly #horizon: number;

  constructor(horizon: number) {
    this.#horizon = horizon;
  }

  mask(id: string, second: number, now: number): number {
    return second + this.#horizon <= now ? 0 : (this.#masks.get(second, id) ?? 0);
  }

  mark(id: string, second: number, lane: number, now: number): void {
    this.#masks.set(second, id, (this.#masks.get(second, id) ?? 0) | (1 << lane), now - this.#horizon);
  }
}

function firstFreeLane(mask: number): number {
  for (let lane = 0; lane < MAX_LANES; lane++) if ((mask & (1 << lane)) === 0) return lane;
  return -1;
}

/**
 * The prove-ownership service (`PROTOCOL.md` §7). A nonce is an HMAC of the identity, its issue second and a lane under
 * a key kept in the store, so issuing one stores nothing; a proof whose signature verifies redeems its nonce once.
 */
export function createProveOwnership(options: ProveOwnershipOptions): ProveOwnership {
  const { store, resolver, jwt } = options;
  const validate = options.validateIdentityId ?? defaultValidateIdentityId;
  const maxKeys = options.maxKeys ?? 8;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_PROOF_VERIFICATIONS) {
    throw new AuthError("INVALID_CONFIGURATION", `maxKeys must be an integer from 1 to ${MAX_PROOF_VERIFICATIONS}`, { path: "maxKeys" });
  }
  const lifetime = parseDuration(options.lifetime ?? DEFAULT_NONCE_TTL_SECONDS, "lifetime", MIN_LIFETIME_SECONDS, MAX_LIFETIME_SECONDS);
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new AuthError("INVALID_CONFIGURATION", "now must be a function returning milliseconds", { path: "now" });
  }
  const now = options.now ?? Date.now;
  const checkOnIssue = options.issueForUnknownIdentities !== true;
  const horizon = lifetime + NONCE_CLOCK_SKEW_SECONDS;
  const lanes = new LaneMemory(horizon);
  // A nonce is a pure function of (key, identity, second, lane) and the key never changes once read, so a remembered
  // nonce is exactly the one the MAC would give; a miss (another instance's GET, a forgotten second) computes it. By
  // lane within a pair: nearly always one, more for an identity that logs in again within the second.
  const minted = new SecondsMemory<string[]>(MINTED_MEMORY);
  // `remember`: false where the second and lane come from the request (a named nonce), so that what a client writes
  // there cannot push the nonces of real GETs out.
  function nonceOf(mint: NonceMinter, id: string, second: number, lane: number, current: number, remember = true): string {
    const known = minted.get(second, id);
    let nonce = known?.[lane];
    if (nonce === undefined) {
      nonce = mint.nonce(id, second, lane);
      if (!remember) return nonce;
      if (known !== undefined) known[lane] = nonce;
      else {
        const made: string[] = [];
        made[lane] = nonce;
        minted.set(second, id, made, current - horizon);
      }
    }
    return nonce;
  }

  // The key is read once from the store (created there by the first instance to ask); a failed read is retried.
  // Once read, the minter is taken as it is: every request awaited the settled promise again, a microtask each.
  let minter: Promise<NonceMinter> | undefined;
  let ready: NonceMinter | undefined;
  function getMinter(): Promise<NonceMinter> {
    minter ??= storeCall(() => store.secret(NONCE_KEY_NAME, randomKey)).then(
      (key) => {
        if (!(key instanceof Uint8Array) || key.length < 32) throw new AuthError("NONCE_STORE_FAILED", "the store returned a nonce key shorter than 32 bytes");
        ready = nonceMinter(key);
        return ready;
      },
      (error: unknown) => {
        minter = undefined;
        throw error;
      },
    );
    return minter;
  }

  function checkedId(identityId: unknown): string {
    const id = validate(identityId as string);
    // A lone surrogate would be encoded as U+FFFD, so two ids could share a MAC.
    if (typeof id !== "string" || id.length === 0 || LONE_SURROGATE.test(id)) throw new AuthError("INVALID_IDENTITY_ID", "invalid identity id", { path: "identityId" });
    return id;
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
    let valid = Array.isArray(keys);
    if (valid) for (const key of keys as unknown[]) valid &&= key instanceof Uint8Array;
    if (!valid) throw new AuthError("IDENTITY_RESOLUTION_FAILED", "the identity resolver returned something other than a list of keys");
    // Read only, never changed here: the resolver's list itself unless it holds more keys than are tried.
    const list = keys as Uint8Array[];
    return list.length <= maxKeys ? list : list.slice(0, maxKeys);
  }

  function unknown(): AuthError {
    return new AuthError("UNKNOWN_IDENTITY", "no such identity is registered here", { path: "identityId" });
  }

  function refused(): AuthError {
    return new AuthError("INVALID_PROOF", "the signature matches no live nonce of this identity: request a new nonce and sign it", { path: "signedNonce" });
  }

  /** The key among `keys` that signed `nonce`, if one did. */
  function signedBy(keys: readonly Uint8Array[], nonce: string, signature: Uint8Array): Uint8Array | undefined {
    const digest = hashNonce(nonce);
    for (const key of keys) if (verifyEd25519Strict(key, digest, signature)) return key;
    return undefined;
  }

  /**
   * The (second, lane) pairs a nonce-less proof is tried against, likeliest first, within the verification budget.
   * Made one at a time: a client that signs and posts at once matches the first, so the rest (a lane lookup per second
   * of the lifetime) is only worked out for proofs that need it.
   */
  function* candidates(id: string, current: number, keyCount: number): Generator<readonly [number, number]> {
    let budget = Math.max(1, Math.floor(MAX_PROOF_VERIFICATIONS / keyCount));
    // At most lifetime + skew + 2 × OTHER_LANES_TRIED pairs: a linear search of the few already given beats a Set.
    const tried: number[] = [];
    function fresh(second: number, lane: number): boolean {
      if (second < 0 || second > MAX_ISSUED_SECONDS || lane < 0) return false;
      const key = second * MAX_LANES + lane;
      if (tried.includes(key)) return false;
      tried.push(key);
      return true;
    }
    const free = (second: number): number => firstFreeLane(lanes.mask(id, second, current));
    const seconds = function* (): Generator<number> {
      yield current;
      yield current - 1;
      for (let s = 1; s <= NONCE_CLOCK_SKEW_SECONDS; s++) yield current + s;
      for (let back = 2; back < lifetime; back++) yield current - back;
    };
    for (const second of seconds()) {
      const lane = free(second);
      if (!fresh(second, lane)) continue;
      yield [second, lane];
      if (--budget === 0) return;
    }
    for (const second of [current, current - 1]) {
      for (let lane = 0; lane < OTHER_LANES_TRIED; lane++) {
        if (!fresh(second, lane)) continue;
        yield [second, lane];
        if (--budget === 0) return;
      }
    }
  }

  function live(issued: number, current: number): boolean {
    return issued <= current + NONCE_CLOCK_SKEW_SECONDS && current < issued + lifetime;
  }

  return {
    lifetime,

    async issueNonce(identityId: string): Promise<string> {
      const id = checkedId(identityId);
      if (checkOnIssue && (await keysOf(id)).length === 0) throw unknown();
      const mint = ready ?? (await getMinter());
      const current = Math.floor(now() / 1000);
      const lane = firstFreeLane(lanes.mask(id, current, current));
      if (lane < 0) throw new AuthError("TOO_MANY_NONCES", `this identity proved ownership ${MAX_LANES} times this second; try again in a second`, { path: "identityId" });
      return nonceOf(mint, id, current, lane, current);
    },

    async prove(identityId: string, signedNonce: string, nonce?: string): Promise<string> {
      const id = checkedId(identityId);
      // Malformed input is refused with 400 before anything is looked up or verified.
      const signature = parseSignedNonce(signedNonce);
      if (nonce !== undefined && !isNonce(nonce)) throw new AuthError("INVALID_NONCE", "expected a nonce of 40 lowercase hex characters", { path: "nonce" });
      const keys = await keysOf(id);
      if (keys.length === 0) throw unknown();
      const mint = ready ?? (await getMinter());
      const current = Math.floor(now() / 1000);
      let matched: string | undefined;
      let signer: Uint8Array | undefined;
      let issued = 0;
      let lane = 0;
      if (nonce !== undefined) {
        ({ issued, lane } = nonceIssuedAt(nonce));
        // Ours and for this identity (the MAC), before any signature work.
        if (lane >= MAX_LANES || !constantTimeEqual(fromHex(nonceOf(mint, id, issued, lane, current, false)), fromHex(nonce))) throw refused();
        if (!live(issued, current)) throw new AuthError("NONCE_EXPIRED_OR_USED", "the nonce has expired: request a new one", { path: "nonce" });
        signer = signedBy(keys, nonce, signature);
        if (signer !== undefined) matched = nonce;
      } else {
        // The likeliest nonce first, without the search's generator: the one this instance's GET hands out now, which a
        // client that signs and posts at once signed. The search yields the same pair first (same lane memory, nothing
        // awaited in between) and counts it against its budget, so skipping it there keeps the verification bound.
        const tryNonce = (second: number, candidateLane: number): boolean => {
          const candidate = nonceOf(mint, id, second, candidateLane, current);
          signer = signedBy(keys, candidate, signature);
          if (signer === undefined) return false;
          matched = candidate;
          issued = second;
          lane = candidateLane;
          return true;
        };
        const firstLane = firstFreeLane(lanes.mask(id, current, current));
        const first = firstLane >= 0 && current >= 0 && current <= MAX_ISSUED_SECONDS;
        if (!first || !tryNonce(current, firstLane)) {
          for (const [second, candidateLane] of candidates(id, current, keys.length)) {
            if (first && second === current && candidateLane === firstLane) continue;
            if (tryNonce(second, candidateLane)) break;
          }
        }
      }
      if (matched === undefined || signer === undefined) throw refused();
      const signed: string = matched;
      const expiresAt = (issued + lifetime + NONCE_CLOCK_SKEW_SECONDS) * 1000;
      const redeemed = await storeCall(() => store.redeemNonce(signed, expiresAt));
      // Either way the lane is taken now: the next GET of this second hands out the next one.
      lanes.mark(id, issued, lane, current);
      if (!redeemed) throw new AuthError("NONCE_EXPIRED_OR_USED", "this nonce was used already: request a new one", { path: "nonce" });
      // Bound to the key that signed (RFC 7800 cnf.jkt): a guarded verifier refuses the token once that key is gone.
      return jwt.issue(id, { ...options.claims?.(id), cnf: { jkt: keyThumbprint(signer) } });
    },
  };
}

async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AuthError) throw error;
    throw new AuthError("NONCE_STORE_FAILED", "the nonce store failed", { cause: error });
  }
}
