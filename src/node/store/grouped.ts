// Small store operations made in groups: while one group is in flight, the calls that arrive wait, and go together
// the moment it settles, so that they share the next commit (LMDB) or the next statement (PostgreSQL). None waits while
// nothing is in flight, so a lone call is not delayed; each call gets its own outcome, and a write still resolves only
// once its own group is durable. A read in a group reads the database after its call was made, as it would alone.
//
// Why (measured in README, "Server CPU per operation"): a nonce redemption is one small row, a JWT revocation check or
// a message read one key, a submission's read of its parents' metadata and the latest milestone a few. On LMDB a
// commit pays two flushes (the data pages' fdatasync and the meta page's synchronous write) and a hand-off between
// the main thread and lmdb-js's writer, whatever it holds: under a login load lmdb-js committed 3 or 4 redemptions a
// commit, so the commit's fixed price was most of a login's store cost; waiting for the commit in flight, they went
// about 9 a commit. On PostgreSQL each statement costs the node a round trip (most of what a raw read cost it: grouped,
// a raw read's server CPU halved, and a complete submission's fell by 29%). LMDB's message writes do not go through
// here: their commits are already large (their pages are most of the price), and the wait would only add a turn to
// each. PostgreSQL's do (those without a claim or a milestone): each announces itself to the other instances with a
// NOTIFY, and notifying commits wait for one another across the whole cluster, so a group shares one.
//
// Bounded: a waiting call is a request in flight, which the edge's limits bound.

/** Carries out a group: one outcome per item, in the items' order. A rejection fails every item of the group. */
export type GroupCall<A, R> = (items: readonly A[]) => Promise<readonly PromiseSettledResult<R>[]>;

interface Waiting<A, R> {
  readonly item: A;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export class Grouped<A, R> {
  readonly #call: GroupCall<A, R>;
  #inFlight = false;
  #waiting: Waiting<A, R>[] = [];
  #idle: (() => void)[] = [];

  constructor(call: GroupCall<A, R>) {
    this.#call = call;
  }

  /** Whether a group is in flight (calls waiting for the next go when it settles). */
  get busy(): boolean {
    return this.#inFlight;
  }

  /** Resolves once no group is in flight and no call waits: a store's close() lets the calls made before it finish. */
  idle(): Promise<void> {
    return this.#inFlight ? new Promise((resolve) => this.#idle.push(resolve)) : Promise.resolve();
  }

  /** Sends `item` now if no group is in flight, or with the next group; resolves or rejects with its own outcome. */
  run(item: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiting = { item, resolve, reject };
      if (this.#inFlight) this.#waiting.push(waiting);
      else this.#launch([waiting]);
    });
  }

  #launch(group: readonly Waiting<A, R>[]): void {
    this.#inFlight = true;
    let written: Promise<readonly PromiseSettledResult<R>[]>;
    try {
      written = this.#call(group.map((w) => w.item));
    } catch (error) {
      written = Promise.reject(error);
    }
    void written.then(
      (outcomes) => this.#settled(group, outcomes, false),
      (error: unknown) => this.#settled(group, error, true),
    );
  }

  /** Gives each caller of `group` its outcome (the error to all when the call failed), then sends the next group. */
  #settled(group: readonly Waiting<A, R>[], value: unknown, failed: boolean): void {
    type Outcomes = readonly (PromiseSettledResult<R> | undefined)[];
    const outcomes = !failed && Array.isArray(value) ? (value as Outcomes) : undefined;
    group.forEach((w, i) => {
      if (failed) return w.reject(value);
      const outcome = outcomes?.[i];
      if (outcome?.status === "fulfilled") w.resolve(outcome.value);
      else if (outcome?.status === "rejected") w.reject(outcome.reason);
      else w.reject(new Error("the group call gave no outcome for this item"));
    });
    const next = this.#waiting;
    if (next.length === 0) {
      this.#inFlight = false;
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#waiting = [];
    this.#launch(next);
  }
}

/** A group call that starts each item's own write (lmdb-js gathers the writes started together into one commit). */
export function eachOnItsOwn<R>(starts: readonly (() => Promise<R>)[]): Promise<PromiseSettledResult<R>[]> {
  return Promise.allSettled(
    starts.map((start) => {
      try {
        return start();
      } catch (error) {
        return Promise.reject(error);
      }
    }),
  );
}
