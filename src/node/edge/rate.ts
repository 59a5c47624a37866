// Token buckets per client and rate class, in a table of bounded size: one small record per client (a timestamp and a
// level per class, refilled lazily when the client is next seen), the least recently seen client forgotten when the
// table is full. Forgetting a client only refills its buckets, so the bound never locks anyone out.
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
 * Token buckets per client key and rate class, for at most `maxClients` clients at once: past that the least recently
 * seen is forgotten, which only refills its buckets. `now` is a monotonic clock in ms (default performance.now).
 */
export class RateLimiter {
  readonly #rates: readonly RateLimit[];
  readonly #max: number;
  readonly #now: () => number;
  // Per client: [last refill (ms), level of class 0, level of class 1, …]. Map order is recency order.
  readonly #clients = new Map<string, Float64Array>();

  constructor(rates: Readonly<Record<RateClass, RateLimit>>, maxClients: number, now: () => number = () => performance.now()) {
    this.#rates = RATE_CLASSES.map((c) => rates[c]);
    this.#max = maxClients;
    this.#now = now;
  }

  /** Clients tracked now. */
  get size(): number {
    return this.#clients.size;
  }

  /** Takes one token of `rateClass` for `client`. */
  take(client: string, rateClass: RateClass): RateDecision {
    const now = this.#now();
    let record = this.#clients.get(client);
    if (record === undefined) {
      if (this.#clients.size >= this.#max) this.#clients.delete(this.#clients.keys().next().value as string);
      record = new Float64Array(1 + this.#rates.length);
      record[0] = now;
      for (let i = 0; i < this.#rates.length; i++) record[i + 1] = this.#rates[i]!.burst;
    } else {
      this.#clients.delete(client);
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
