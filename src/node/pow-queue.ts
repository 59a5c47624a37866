// The node's PoW queue: submissions that need a nonce wait here for the shared miner, which runs one job at a time
// over all its workers. Requesters (an authenticated identity, else a client address) are served round-robin, each with
// a bound on its jobs in flight, so that one busy caller cannot starve the others; identical work is mined once.
import { NodeError, abortError } from "./errors.js";

/** The queue's bounds and the miner it feeds. */
export interface PowQueueOptions {
  /** Jobs in flight in all (mining or queued); one more answers 503 POW_QUEUE_FULL. */
  maxPending: number;
  /** Jobs in flight for one requester; one more answers 503 POW_QUEUE_FULL. */
  maxPerRequester: number;
  /** Mines one job; rejects with an AbortError when `signal` aborts. */
  run(bytes: Uint8Array, signal: AbortSignal): Promise<bigint>;
}

/** The queue's counters since it was made, and its state now (NodeStats' pow fields come from them). */
export interface PowQueueStats {
  /** Jobs started (identical work waited for by several submissions counts once). */
  jobs: number;
  /** Submissions that joined a job already in flight for the same bytes. */
  shared: number;
  /** Jobs cancelled because every submission waiting for them went away. */
  cancelled: number;
  /** Jobs in flight (mining or queued). */
  pending: number;
  /** Jobs waiting for the miner. */
  queued: number;
  /** Requesters with jobs in flight. */
  requesters: number;
}

interface Job {
  readonly key: string;
  readonly requester: string;
  readonly bytes: Uint8Array;
  readonly controller: AbortController;
  readonly promise: Promise<bigint>;
  resolve(nonce: bigint): void;
  reject(error: unknown): void;
  waiters: number;
  running: boolean;
  done: boolean;
}

// The first retry estimate, before any job has been timed.
const INITIAL_JOB_MS = 1000;
const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * The fair queue in front of the node's one miner: one job mines at a time, requesters are served round-robin within
 * their bounds, identical work is mined once, and a full queue answers 503 POW_QUEUE_FULL with a Retry-After estimated
 * from the jobs timed so far.
 */
export class PowQueue {
  readonly #options: PowQueueOptions;
  readonly #jobs = new Map<string, Job>();
  // Jobs not yet handed to the miner, per requester, and the requesters in the order they are served.
  readonly #waiting = new Map<string, Job[]>();
  readonly #inFlight = new Map<string, number>();
  #running: Job | undefined;
  #closed: Error | undefined;
  #averageMs = INITIAL_JOB_MS;
  readonly #stats = { jobs: 0, shared: 0, cancelled: 0 };

  constructor(options: PowQueueOptions) {
    this.#options = options;
  }

  /** The counters and the queue's state now, read synchronously. */
  stats(): PowQueueStats {
    let queued = 0;
    for (const list of this.#waiting.values()) queued += list.length;
    return { ...this.#stats, pending: this.#jobs.size, queued, requesters: this.#inFlight.size };
  }

  /** The nonce for `bytes`; `key` identifies identical work (equal keys are mined once). */
  mine(key: string, bytes: Uint8Array, requester: string, signal: AbortSignal | undefined): Promise<bigint> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    const existing = this.#jobs.get(key);
    if (existing !== undefined) {
      this.#stats.shared++;
      return this.#wait(existing, signal);
    }
    const job = this.#enqueue(key, bytes, requester);
    return job instanceof NodeError ? Promise.reject(job) : this.#wait(job, signal);
  }

  /** Rejects every job with `error` (the node is shutting down) and aborts the one mining. */
  close(error: Error): void {
    this.#closed ??= error;
    for (const job of [...this.#jobs.values()]) {
      job.controller.abort();
      this.#finish(job, undefined, error);
    }
    this.#waiting.clear();
  }

  #retryAfter(jobsAhead: number): number {
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((this.#averageMs * jobsAhead) / 1000)));
  }

  #enqueue(key: string, bytes: Uint8Array, requester: string): Job | NodeError {
    const { maxPending, maxPerRequester } = this.#options;
    const mine = this.#inFlight.get(requester) ?? 0;
    // A full queue makes room for a requester lighter than its heaviest one, never for a heavier one: otherwise a few
    // callers at their own bound would hold every slot and lock out everyone else.
    if (this.#jobs.size >= maxPending && !this.#pushBackHeaviest(mine + 1)) {
      // A slot frees when the job mining now ends.
      return new NodeError("POW_QUEUE_FULL", `the node is busy: ${this.#jobs.size} PoW jobs are in flight, try again later`, { retryAfter: this.#retryAfter(1) });
    }
    if (mine >= maxPerRequester) {
      // One of this requester's jobs ends after about one round over the requesters now served.
      return new NodeError("POW_QUEUE_FULL", `${mine} PoW jobs of yours are in flight already, at most ${maxPerRequester}: try again when one has finished`, { retryAfter: this.#retryAfter(this.#inFlight.size) });
    }
    let resolve!: (nonce: bigint) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<bigint>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => undefined); // waiters observe it; a job nobody waits for any more must not be unhandled
    const job: Job = { key, requester, bytes, controller: new AbortController(), promise, resolve, reject, waiters: 0, running: false, done: false };
    this.#jobs.set(key, job);
    this.#inFlight.set(requester, mine + 1);
    const list = this.#waiting.get(requester);
    if (list === undefined) this.#waiting.set(requester, [job]);
    else list.push(job);
    this.#stats.jobs++;
    this.#next();
    return job;
  }

  /**
   * Drops the newest queued (not mining) job of the requester with the most jobs in flight, when it holds more than
   * `than`; its submissions answer 503 with a Retry-After. False when no requester is heavier.
   */
  #pushBackHeaviest(than: number): boolean {
    let heaviest: Job[] | undefined;
    let count = than;
    for (const [requester, list] of this.#waiting) {
      const held = this.#inFlight.get(requester) ?? 0;
      if (list.length > 0 && held > count) {
        heaviest = list;
        count = held;
      }
    }
    const job = heaviest?.at(-1);
    if (job === undefined) return false;
    job.controller.abort();
    const ahead = this.#inFlight.size;
    this.#finish(job, undefined, new NodeError("POW_QUEUE_FULL", `the node's PoW queue is full and your ${count} jobs were the most in it: try again later`, { retryAfter: this.#retryAfter(ahead) }));
    return true;
  }

  #wait(job: Job, signal: AbortSignal | undefined): Promise<bigint> {
    job.waiters++;
    return new Promise<bigint>((resolve, reject) => {
      let settled = false;
      const onAbort = (): void => {
        if (settled) return;
        settled = true;
        if (--job.waiters === 0 && !job.done) {
          this.#stats.cancelled++;
          job.controller.abort();
          // A queued job is dropped at once; a mining one ends when the miner has stopped its workers.
          if (!job.running) this.#finish(job, undefined, abortError(signal?.reason));
        }
        reject(abortError(signal?.reason));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      job.promise.then(
        (nonce) => {
          signal?.removeEventListener("abort", onAbort);
          if (settled) return;
          settled = true;
          job.waiters--;
          resolve(nonce);
        },
        (error: unknown) => {
          signal?.removeEventListener("abort", onAbort);
          if (settled) return;
          settled = true;
          job.waiters--;
          reject(error);
        },
      );
    });
  }

  // Hands the miner the next job: the first requester in line gives one job and goes to the back of the line.
  #next(): void {
    if (this.#running !== undefined || this.#closed !== undefined) return;
    for (const [requester, list] of this.#waiting) {
      const job = list.shift()!;
      this.#waiting.delete(requester);
      if (list.length > 0) this.#waiting.set(requester, list);
      this.#start(job);
      return;
    }
  }

  #start(job: Job): void {
    this.#running = job;
    job.running = true;
    const started = performance.now();
    let mining: Promise<bigint>;
    try {
      mining = this.#options.run(job.bytes, job.controller.signal);
    } catch (error) {
      mining = Promise.reject(error);
    }
    mining.then(
      (nonce) => {
        // The estimate behind Retry-After: a moving average of how long a job mines.
        this.#averageMs = 0.8 * this.#averageMs + 0.2 * (performance.now() - started);
        this.#finish(job, nonce);
      },
      (error: unknown) => this.#finish(job, undefined, error),
    );
  }

  #finish(job: Job, nonce: bigint | undefined, error?: unknown): void {
    if (job.done) return;
    job.done = true;
    if (this.#jobs.get(job.key) === job) this.#jobs.delete(job.key);
    const left = (this.#inFlight.get(job.requester) ?? 1) - 1;
    if (left > 0) this.#inFlight.set(job.requester, left);
    else this.#inFlight.delete(job.requester);
    if (!job.running) {
      const list = this.#waiting.get(job.requester);
      const at = list?.indexOf(job) ?? -1;
      if (list !== undefined && at >= 0) list.splice(at, 1);
      if (list !== undefined && list.length === 0) this.#waiting.delete(job.requester);
    }
    if (this.#running === job) this.#running = undefined;
    if (nonce !== undefined) job.resolve(nonce);
    else job.reject(error);
    this.#next();
  }
}
