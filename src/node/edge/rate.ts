// Token buckets per client and rate class, in a table of bounded size: one small record per client (a timestamp and a
// level per class, refilled lazily when the client is next seen), the clients not seen lately forgotten when the table
// is full (BoundedMap's two generations: a client seen since the last turn is kept). Forgetting a client only refills
// its buckets, so the bound never locks anyone out.
import { BoundedMap } from "../../bytes/bounded-map.js";
import { RATE_CLASSES, type RateClass, type RateLimit } from "./limits.js";

/** The outcome of taking a token: allowed, or refused with the seconds until one is back. */
export type RateDecision =
  | {
      /** A token was taken: the request goes on. */
      readonly allowed: true;
    }
  | {
      /** The bucket is empty: answer 429 RATE_LIMITED. */
      readonly allowed: false;
      /** Whole seconds, at least 1, until the bucket holds a token again: the Retry-After to send. */
      readonly retryAfterSeconds: number;
    };

const ALLOWED: RateDecision = { allowed: true };
const CLASS_INDEX: Readonly<Record<RateClass, number>> = Object.fromEntries(RATE_CLASSES.map((c, i) => [c, i])) as Record<RateClass, number>;

/**
 * Token buckets per client key and rate class, for at most `maxClients` clients at once: past that the clients not seen
 * since the table last turned over are forgotten (the latest maxClients / 2 always kept), which only refills their
 * buckets. `now` is a monotonic clock in ms (default performance.now).
 */
export class RateLimiter {
  readonly #rates: readonly RateLimit[];
  readonly #now: () => number;
  // Per client: [last refill (ms), level of class 0, level of class 1, …]. Not a Map kept in recency order with the
  // oldest evicted through keys().next(): that steps over the holes at the table's front, 10–34 µs for each new client
  // once 100,000 were tracked (an address spray would have paid it on every request).
  readonly #clients: BoundedMap<string, Float64Array>;

  constructor(rates: Readonly<Record<RateClass, RateLimit>>, maxClients: number, now: () => number = () => performance.now()) {
    this.#rates = RATE_CLASSES.map((c) => rates[c]);
    this.#clients = new BoundedMap(maxClients);
    this.#now = now;
  }

  /** Clients tracked now, at most maxClients (one seen again since the table turned over may count twice). */
  get size(): number {
    return this.#clients.size;
  }

  /** Takes one token of `rateClass` for `client`. */
  take(client: string, rateClass: RateClass): RateDecision {
    const now = this.#now();
    let record = this.#clients.get(client);
    if (record === undefined) {
      record = new Float64Array(1 + this.#rates.length);
      record[0] = now;
      for (let i = 0; i < this.#rates.length; i++) record[i + 1] = this.#rates[i]!.burst;
    } else {
      const elapsed = Math.max(0, now - record[0]!) / 1000;
      record[0] = now;
      for (let i = 0; i < this.#rates.length; i++) {
        const r = this.#rates[i]!;
        record[i + 1] = Math.min(r.burst, record[i + 1]! + elapsed * r.perSecond);
      }
    }
    this.#clients.set(client, record);
    const at = CLASS_INDEX[rateClass] + 1;
    const level = record[at]!;
    if (level >= 1) {
      record[at] = level - 1;
      return ALLOWED;
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - level) / this.#rates[at - 1]!.perSecond)) };
  }
}
