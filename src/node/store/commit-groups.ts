// Group commit for small writes whose commit costs more than the write: while one group's commit is in flight, the
// writes that arrive wait, and start together the moment it settles, so that they share the next commit.
//
// Why (measured in README, "Server CPU per operation"): an LMDB commit pays two flushes (the data pages' fdatasync and
// the meta page's synchronous write) and a hand-off between the main thread and lmdb-js's writer, whatever it holds.
// A nonce redemption is one small put: under a login load lmdb-js committed 3 or 4 of them a commit, so the commit's
// fixed price was most of a login's store cost. Waiting for the commit in flight, they went about 9 a commit.
// A write still resolves only once its own commit is durable; none waits while nothing is in flight, so a lone write is
// not delayed. Message writes do not go through here: their commits are already large (their pages are most of the
// price), and the wait would only add a turn to each.
//
// Bounded: a waiting write is a request in flight, which the edge's limits bound.
export class CommitGroups {
  #inFlight = false;
  #waiting: Array<() => Promise<unknown>> = [];

  /** Starts `write` now if no group is in flight, or with the next group; resolves or rejects as its promise does. */
  run<T>(write: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): Promise<unknown> => {
        let pending: Promise<T>;
        try {
          pending = write();
        } catch (error) {
          reject(error);
          return Promise.resolve();
        }
        pending.then(resolve, reject);
        return pending;
      };
      if (this.#inFlight) this.#waiting.push(start);
      else this.#launch([start]);
    });
  }

  #launch(group: ReadonlyArray<() => Promise<unknown>>): void {
    this.#inFlight = true;
    void Promise.allSettled(group.map((start) => start())).then(() => {
      const next = this.#waiting;
      if (next.length === 0) {
        this.#inFlight = false;
        return;
      }
      this.#waiting = [];
      this.#launch(next);
    });
  }
}
