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

/**
 * The values of a Map in the order they went in, so that the oldest one still held is found in O(1) amortized time
 * (the FIFO bound of the Tangle, the in-memory store, the messages waiting for parents). Map.keys().next() steps over
 * every hole deletions left at the front of V8's table: evicting one entry that way per insert cost 20–80 µs at 50,000
 * to 100,000 entries. Values are taken out of the Map by their owner, anywhere (pruning); `isHeld` says whether a value
 * is still the one held under its key, and those that are not are passed over once and dropped.
 */
export class ArrivalOrder<V> {
  #items: (V | undefined)[] = [];
  #head = 0;
  readonly #isHeld: (value: V) => boolean;

  constructor(isHeld: (value: V) => boolean) {
    this.#isHeld = isHeld;
  }

  /** A value just put into the Map; `held`: how many the Map holds now (the queue is compacted to a bound of it). */
  push(value: V, held: number): void {
    this.#items.push(value);
    // Past the head, more than twice what is held: drop what no longer is. Before it, more than half the array: cut it.
    if (this.#items.length - this.#head > 2 * held + 1024) this.#compact();
    else if (this.#head > 1024 && this.#head > this.#items.length >>> 1) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  /** The oldest value still held, or undefined when none is. */
  oldest(): V | undefined {
    const items = this.#items;
    while (this.#head < items.length) {
      const value = items[this.#head]!;
      if (this.#isHeld(value)) return value;
      items[this.#head++] = undefined;
    }
    this.#items = [];
    this.#head = 0;
    return undefined;
  }

  /** The oldest value still held, as oldest(), which the caller now takes out of its Map: the queue moves past it at
   * once, so that the next oldest() does not look it up again to find it gone (a lookup in a map of up to 100,000). */
  takeOldest(): V | undefined {
    const value = this.oldest();
    if (value !== undefined) this.#items[this.#head++] = undefined;
    return value;
  }

  /** Values in the queue now, held or not (at most twice what is held, and 1024 more). */
  get queued(): number {
    return this.#items.length - this.#head;
  }

  #compact(): void {
    const live: V[] = [];
    for (let i = this.#head; i < this.#items.length; i++) {
      const value = this.#items[i]!;
      if (this.#isHeld(value)) live.push(value);
    }
    this.#items = live;
    this.#head = 0;
  }
}
