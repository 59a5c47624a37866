// A Map that holds at most a fixed number of entries, for caches of values that are pure functions of immutable
// inputs (an imported public key, a key's thumbprint, a minted nonce), so that a cache never grows with traffic.
//
// Two generations instead of evicting the oldest entry one by one: Map.keys().next() has to step over the holes that
// deletions leave at the front of V8's table, which made each evicting set cost ~2 µs (more than the HMAC a cache of
// nonces saves). Here a full young generation becomes the old one and the previous old one is dropped whole: O(1) per
// call, at most `limit` entries, and the newest limit/2 always kept.

export class BoundedMap<K, V> {
  readonly limit: number;
  readonly #half: number;
  #young = new Map<K, V>();
  #old = new Map<K, V>();

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 2) throw new RangeError("a BoundedMap holds at least two entries");
    this.limit = limit;
    this.#half = Math.floor(limit / 2);
  }

  /** Entries held (an entry set again since it aged may count twice; the bound holds either way). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }

  get(key: K): V | undefined {
    const value = this.#young.get(key);
    return value !== undefined ? value : this.#old.get(key);
  }

  /** Stores `value` under `key`; when the young generation is full, the old one is forgotten. */
  set(key: K, value: V): void {
    if (this.#young.size >= this.#half && !this.#young.has(key)) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}
