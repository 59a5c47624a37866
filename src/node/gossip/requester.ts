// The requester (H requester.go, rqueue.go): a bounded set of pending message and milestone requests, sent at once,
// re-sent every retry interval, lowest milestone index first, and given up after the discard time unless preventDiscard.

export interface PendingRequest {
  readonly kind: "message" | "milestone";
  /** The message id's hex, or "m<index>" for a milestone. */
  readonly key: string;
  /** The message id (message requests). */
  readonly id: Uint8Array | undefined;
  /** The milestone index the message is needed for, or the milestone's own index. */
  index: number;
  preventDiscard: boolean;
  readonly since: number;
  lastSent: number | undefined;
}

export interface RequesterOptions {
  readonly limit: number;
  readonly retryMs: number;
  readonly discardMs: number;
}

export interface RequesterCounts {
  sent: number;
  answered: number;
  discarded: number;
  refused: number;
}

/** The key a milestone request is held under. */
export const milestoneKey = (index: number): string => `m${index}`;

export class Requester {
  readonly #options: RequesterOptions;
  /** Writes the request to the peers the caller chooses; returns how many it went to (0: none can answer yet). */
  readonly #send: (request: PendingRequest) => number;
  readonly #pending = new Map<string, PendingRequest>();
  readonly counts: RequesterCounts = { sent: 0, answered: 0, discarded: 0, refused: 0 };

  constructor(options: RequesterOptions, send: (request: PendingRequest) => number) {
    this.#options = options;
    this.#send = send;
  }

  get pending(): number {
    return this.#pending.size;
  }

  has(key: string): boolean {
    return this.#pending.has(key);
  }

  /**
   * Asks for `key` unless it is pending already (then the lower index and a preventDiscard win). False when the queue is
   * full: the caller may ask again later.
   */
  request(kind: PendingRequest["kind"], key: string, id: Uint8Array | undefined, index: number, preventDiscard: boolean, now: number): boolean {
    const pending = this.#pending.get(key);
    if (pending !== undefined) {
      pending.index = Math.min(pending.index, index);
      pending.preventDiscard ||= preventDiscard;
      return true;
    }
    if (this.#pending.size >= this.#options.limit) {
      this.counts.refused++;
      return false;
    }
    const request: PendingRequest = { kind, key, id, index, preventDiscard, since: now, lastSent: undefined };
    this.#pending.set(key, request);
    this.#sendNow(request, now);
    return true;
  }

  /** The message or milestone arrived: the request is done. True when it was pending. */
  answered(key: string): boolean {
    if (!this.#pending.delete(key)) return false;
    this.counts.answered++;
    return true;
  }

  /** Re-sends what is due (lowest index first) and gives up what is too old; call it often (a fifth of the retry time). */
  tick(now: number): void {
    const due: PendingRequest[] = [];
    for (const request of this.#pending.values()) {
      if (!request.preventDiscard && now - request.since >= this.#options.discardMs) {
        this.#pending.delete(request.key);
        this.counts.discarded++;
      } else if (request.lastSent === undefined || now - request.lastSent >= this.#options.retryMs) {
        due.push(request);
      }
    }
    due.sort((a, b) => a.index - b.index);
    for (const request of due) this.#sendNow(request, now);
  }

  clear(): void {
    this.#pending.clear();
  }

  #sendNow(request: PendingRequest, now: number): void {
    const peers = this.#send(request);
    if (peers === 0) return;
    request.lastSent = now;
    this.counts.sent += peers;
  }
}
