// Message storage for the node: the MessageStore interface and the embedded in-memory default.
// The memory store keeps a real tip set (a stored message's parents stop being tips), bounded in size.
import { toHex } from "../bytes/hex.js";
import type { Message } from "../model/types.js";

/** One stored message: its id (lowercase hex), its canonical bytes and the decoded model of those bytes. */
export interface StoredMessage {
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly message: Message;
}

/**
 * Where the node keeps what it accepts. Every method may be asynchronous so that a database or a remote node
 * can stand behind it (see UpstreamStore).
 */
export interface MessageStore {
  /** Stores a message; resolves true when it was new, false when the id was already stored. */
  put(entry: StoredMessage): Promise<boolean>;
  get(id: string): Promise<StoredMessage | undefined>;
  has(id: string): Promise<boolean>;
  /** Up to `max` current tips (message ids, lowercase hex), for the parents of new messages. */
  tips(max: number): Promise<string[]>;
  /** Ids of stored messages whose indexation payload (top level or in a transaction essence) has this index. */
  findByIndex(index: Uint8Array, max?: number): Promise<string[]>;
  close?(): Promise<void>;
}

export interface MemoryStoreOptions {
  /**
   * Ids that count as tips while nothing references them, though they are not stored: the solid entry points
   * a fresh network starts from. Default: the all-zero message id, as Hornet and Bee use for genesis.
   */
  entryPoints?: string[];
  /** Most tips kept; past it the oldest tip is dropped (a real node drops tips that grow too old). Default 1000. */
  maxTips?: number;
  /** Most messages kept; past it the oldest are evicted. Default 100,000. */
  maxMessages?: number;
  /** Most ids remembered per index. Default 1000 (the newest). */
  maxPerIndex?: number;
  /** Random source for tip selection, for reproducible tests. Default Math.random. */
  random?: () => number;
}

export const ZERO_MESSAGE_ID = "0".repeat(64);

function indexesOf(message: Message): Uint8Array[] {
  const payload = message.payload;
  if (payload === undefined) return [];
  if (payload.type === 2) return [payload.index];
  if (payload.type === 0 && payload.essence.payload !== undefined) return [payload.essence.payload.index];
  return [];
}

/** The embedded store: maps in memory, a tip set maintained as messages arrive. */
export class MemoryStore implements MessageStore {
  readonly #messages = new Map<string, StoredMessage>();
  // Insertion order = age: the first key is the oldest tip.
  readonly #tips = new Map<string, true>();
  // Every id some stored message names as a parent: such an id never becomes a tip again.
  readonly #referenced = new Set<string>();
  readonly #byIndex = new Map<string, string[]>();
  readonly #maxTips: number;
  readonly #maxMessages: number;
  readonly #maxPerIndex: number;
  readonly #random: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxTips = Math.max(1, options.maxTips ?? 1000);
    this.#maxMessages = Math.max(1, options.maxMessages ?? 100_000);
    this.#maxPerIndex = Math.max(1, options.maxPerIndex ?? 1000);
    this.#random = options.random ?? Math.random;
    for (const id of options.entryPoints ?? [ZERO_MESSAGE_ID]) this.#tips.set(id.toLowerCase(), true);
  }

  get size(): number {
    return this.#messages.size;
  }

  async put(entry: StoredMessage): Promise<boolean> {
    return this.putSync(entry);
  }

  /** The synchronous body of put: no other submission can interleave between the check and the tip update. */
  putSync(entry: StoredMessage): boolean {
    if (this.#messages.has(entry.id)) return false;
    this.#messages.set(entry.id, entry);
    for (const parent of entry.message.parents) {
      const id = toHex(parent);
      this.#referenced.delete(id); // re-inserted as the newest, so the bound below drops the longest-unreferenced ids
      this.#referenced.add(id);
      this.#tips.delete(id);
    }
    // Up to 8 parents per message: bounded like the messages themselves. An id dropped here could only become a tip
    // again if its message arrived after being forgotten as a parent, which a node does not wait that long for.
    while (this.#referenced.size > 8 * this.#maxMessages) this.#referenced.delete(this.#referenced.values().next().value!);
    if (!this.#referenced.has(entry.id)) {
      this.#tips.set(entry.id, true);
      if (this.#tips.size > this.#maxTips) this.#tips.delete(this.#tips.keys().next().value!);
    }
    for (const index of indexesOf(entry.message)) {
      const key = toHex(index);
      let ids = this.#byIndex.get(key);
      if (ids === undefined) this.#byIndex.set(key, (ids = []));
      ids.push(entry.id);
      if (ids.length > this.#maxPerIndex) ids.shift();
    }
    if (this.#messages.size > this.#maxMessages) this.#evictOldest();
    return true;
  }

  #evictOldest(): void {
    const oldest = this.#messages.keys().next().value!;
    const entry = this.#messages.get(oldest)!;
    this.#messages.delete(oldest);
    this.#tips.delete(oldest);
    for (const index of indexesOf(entry.message)) {
      const key = toHex(index);
      const ids = this.#byIndex.get(key);
      if (ids === undefined) continue;
      const at = ids.indexOf(oldest);
      if (at >= 0) ids.splice(at, 1);
      if (ids.length === 0) this.#byIndex.delete(key);
    }
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    return this.#messages.get(id.toLowerCase());
  }

  async has(id: string): Promise<boolean> {
    return this.#messages.has(id.toLowerCase());
  }

  /** A uniform random choice of up to `max` tips, so concurrent submissions spread over the tip set. */
  async tips(max: number): Promise<string[]> {
    return this.tipsSync(max);
  }

  tipsSync(max: number): string[] {
    const all = [...this.#tips.keys()];
    const n = Math.min(Math.max(0, max), all.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.#random() * (all.length - i));
      const t = all[i]!;
      all[i] = all[j]!;
      all[j] = t;
    }
    return all.slice(0, n);
  }

  /** Every current tip (for inspection and tests). */
  allTips(): string[] {
    return [...this.#tips.keys()];
  }

  /** Whether some stored message names `id` as a parent. */
  isReferenced(id: string): boolean {
    return this.#referenced.has(id.toLowerCase());
  }

  async findByIndex(index: Uint8Array, max = 1000): Promise<string[]> {
    const ids = this.#byIndex.get(toHex(index)) ?? [];
    return ids.slice(Math.max(0, ids.length - max));
  }

  /** Every stored id, oldest first. */
  ids(): string[] {
    return [...this.#messages.keys()];
  }
}
