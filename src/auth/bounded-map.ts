// A Map that holds at most a fixed number of entries, forgetting the oldest insertion first: the auth layer's caches of
// values that are pure functions of immutable inputs (a key's thumbprint), so that a cache never grows with traffic.

export class BoundedMap<K, V> {
  readonly limit: number;
  readonly #entries = new Map<K, V>();

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError("a BoundedMap holds at least one entry");
    this.limit = limit;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Stores `value` under `key`; beyond the limit the oldest entry is forgotten. */
  set(key: K, value: V): void {
    if (!this.#entries.has(key) && this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value as K);
    this.#entries.set(key, value);
  }
}
