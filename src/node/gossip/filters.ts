// The gossip part's bounded tables: the duplicate filter of recent message ids (with who sent them), per-peer token
// buckets for frame and request rates, and the ban table. Each is bounded in entries whatever peers send.

/** What the duplicate filter remembers of one message. */
export interface SeenEntry {
  readonly at: number;
  /** Peers that sent these bytes within the window (at most `maxSenders`): relays skip them. */
  readonly senders: string[];
  /** The node's verdict once known ("invalid" punishes later senders of the same bytes too, as Hornet does). */
  verdict: "new" | "known" | "invalid" | "ignored" | undefined;
}

/**
 * Message ids seen within a time window, in two generations (as BoundedMap): the young one becomes the old one when it
 * is `window` old or holds half the limit, so an entry lives at least `window` unless the filter is flooded, and the
 * filter never holds more than `limit` ids.
 */
export class SeenFilter {
  readonly #window: number;
  readonly #half: number;
  readonly #maxSenders: number;
  #young = new Map<string, SeenEntry>();
  #old = new Map<string, SeenEntry>();
  #youngSince: number;

  constructor(window: number, limit: number, maxSenders: number, now: number) {
    this.#window = window;
    this.#half = Math.max(1, Math.floor(limit / 2));
    this.#maxSenders = maxSenders;
    this.#youngSince = now;
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  /** The entry for `key` if it was seen within the window. */
  get(key: string, now: number): SeenEntry | undefined {
    const entry = this.#young.get(key) ?? this.#old.get(key);
    return entry !== undefined && now - entry.at < this.#window ? entry : undefined;
  }

  /** Records a first sighting (the caller asked get() first). */
  add(key: string, sender: string, now: number): SeenEntry {
    if (now - this.#youngSince >= this.#window || this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
      this.#youngSince = now;
    }
    const entry: SeenEntry = { at: now, senders: [sender], verdict: undefined };
    this.#young.set(key, entry);
    return entry;
  }

  /** Adds a sender to an entry, up to the bound. */
  addSender(entry: SeenEntry, sender: string): void {
    if (entry.senders.length < this.#maxSenders && !entry.senders.includes(sender)) entry.senders.push(sender);
  }
}

/** A token bucket holding one second's worth: `take()` is false once a peer sends faster than `perSecond`. */
export class TokenBucket {
  readonly #rate: number;
  #tokens: number;
  #at: number;

  constructor(perSecond: number, now: number) {
    this.#rate = perSecond;
    this.#tokens = perSecond;
    this.#at = now;
  }

  take(now: number): boolean {
    if (now > this.#at) {
      this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) * this.#rate) / 1000);
      this.#at = now;
    }
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** Peers kept out until a time: at most `limit` entries; when full, expired bans go, then the one ending soonest. */
export class BanList {
  readonly #limit: number;
  readonly #until = new Map<string, number>();

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  ban(peerId: string, until: number, now: number): void {
    if (!this.#until.has(peerId) && this.#until.size >= this.#limit) {
      this.purge(now);
      if (this.#until.size >= this.#limit) {
        let soonest: string | undefined;
        let end = Infinity;
        for (const [id, t] of this.#until) if (t < end) [soonest, end] = [id, t];
        if (soonest !== undefined) this.#until.delete(soonest);
      }
    }
    this.#until.set(peerId, Math.max(until, this.#until.get(peerId) ?? 0));
  }

  isBanned(peerId: string, now: number): boolean {
    const until = this.#until.get(peerId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(peerId);
    return false;
  }

  /** When the ban of `peerId` ends (undefined when not banned). */
  until(peerId: string, now: number): number | undefined {
    return this.isBanned(peerId, now) ? this.#until.get(peerId) : undefined;
  }

  lift(peerId: string): void {
    this.#until.delete(peerId);
  }

  purge(now: number): void {
    for (const [id, t] of this.#until) if (t <= now) this.#until.delete(id);
  }

  count(now: number): number {
    this.purge(now);
    return this.#until.size;
  }
}
