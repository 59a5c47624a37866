// The parallel miner: one compiled kernel, a pool of worker threads (Node) or Web Workers (browsers) that keep
// their kernel instance between jobs; jobs queue, each spreads over every worker; the first solution wins.
// Where WebAssembly is refused (CSP without 'wasm-unsafe-eval', node --jitless) the workers run the JavaScript kernel.
import { MAX_U64 } from "../bytes/limits.js";
import { ProtocolError, abortError, assertInteger } from "../bytes/errors.js";
import type {} from "./errors.js";
import { warnFallback } from "../crypto/fallback.js";
import { nodeBuiltin } from "../crypto/native.js";
import { Kernel, type KernelFlavor, defaultFlavor, kernelModule } from "./kernel.js";
import { createJsKernel } from "./kernel-js.js";
import { MAX_TRAILING_ZEROS, POW_DIGEST_LENGTH, powDigest, referenceTrailingZeros, targetZeros, toNonce } from "./score.js";
import { WORKER_SOURCE } from "./worker-source.js";

/** What a running job reports to `onProgress`. */
export interface MineProgress {
  /** Nonces tried so far in this job, over all workers. */
  hashes: number;
  /** Milliseconds since the job started. */
  elapsedMs: number;
}

/** One mining job: the score to reach, where to start, how to stop it and hear from it. */
export interface MineOptions {
  /** The network's minimum PoW score (4000 on mainnet). */
  minScore: number;
  /** Where the search starts (default 0); the miner may return any valid nonce at or after it. */
  startNonce?: bigint | number;
  /** Aborting rejects with an AbortError DOMException once every worker of the job has stopped. */
  signal?: AbortSignal;
  /** Called every 250 ms while the job runs. */
  onProgress?: (progress: MineProgress) => void;
}

/** The kernel a pool runs: a WASM build, or the JavaScript fallback. */
export type MinerKernel = KernelFlavor | "js";

/** A worker pool: how many workers, how many jobs may wait, which kernel, and (browsers) the worker's URL. */
export interface MinerOptions {
  /** Worker threads (default: the available parallelism). */
  workers?: number;
  /** Jobs allowed to wait behind the running one; one more rejects with POW_QUEUE_FULL. Default unlimited. */
  maxQueue?: number;
  /** Kernel (default: SIMD where the engine has it, else portable; JavaScript where WebAssembly is refused). */
  flavor?: MinerKernel;
  /**
   * Browsers: where to load the worker script from instead of a Blob URL, for pages whose Content-Security-Policy
   * has no `worker-src blob:`. Serve the package's `chrysalis-core/pow/worker.js` from an origin the policy allows
   * (e.g. with Vite: `import workerUrl from "chrysalis-core/pow/worker.js?url"`). Ignored in Node.
   */
  workerUrl?: string | URL;
}

/** A snapshot of a pool's state, from `Miner.stats()`. */
export interface MinerStats {
  /** Live workers. */
  workers: number;
  /** A job is running (or its workers are still stopping). */
  busy: boolean;
  /** Jobs waiting. */
  queued: number;
  /** Nonces tried since the pool started. */
  hashes: number;
  /** The live workers' thread ids. */
  threadIds: number[];
  /** The kernel the workers run ("js" once any worker had to fall back to JavaScript). */
  kernel: MinerKernel;
}

/** A persistent pool of PoW workers (createMiner): jobs queue and each spreads over every worker. */
export interface Miner {
  /** The nonce (as the u64 to write in the last 8 bytes) for a message whose last 8 bytes are its nonce field. */
  mine(messageBytes: Uint8Array, options: MineOptions): Promise<bigint>;
  /** The same from a PoW digest and a target number of trailing zero trits. */
  mineDigest(digest: Uint8Array, targetZeros: number, options?: Omit<MineOptions, "minScore">): Promise<bigint>;
  /** Rejects waiting and running jobs (POW_MINER_CLOSED) and stops every worker; resolves when all have exited. */
  close(): Promise<void>;
  /** A job is running (or its workers are still stopping). */
  readonly busy: boolean;
  /** Jobs waiting behind the running one. */
  readonly queueLength: number;
  /** The pool's state now. */
  stats(): MinerStats;
}

const PROGRESS_INTERVAL_MS = 250;
/** Workers that die before instantiating the kernel; after this many the pool stops replacing them. */
const MAX_START_FAILURES = 3;
const MAX_WORKERS = 512;
/** Nonces per chunk: ~15–20 ms of work, the longest a worker runs before it sees a stop. */
const CHUNK: Readonly<Record<MinerKernel, bigint>> = { simd: 65536n, portable: 32768n, js: 2048n };
/** The smallest chunk: below it the cost of a kernel call and its bookkeeping starts to show (the JavaScript kernel's
 * own chunk is smaller still and is kept). */
const MIN_CHUNK = 1024n;

/**
 * The chunk for a job expected to take 3^target nonces over `workers`: about a sixteenth of each worker's expected
 * share, within [MIN_CHUNK, the flavour's chunk]. A job ends when its last worker finishes its current chunk, and the
 * next job starts only then, so a chunk much longer than the whole search makes a small job (a node mining at score
 * 100) wait for the workers that did not find the nonce: with 64 Ki-nonce chunks that cost ~13 ms a job.
 */
function chunkFor(target: number, workers: number, max: bigint): bigint {
  const share = 3 ** Math.min(target, 40) / (16 * Math.max(1, workers));
  if (max <= MIN_CHUNK) return max;
  let chunk = MIN_CHUNK;
  while (chunk < max && Number(chunk) * 2 <= share) chunk *= 2n;
  return chunk;
}

// ---- platform: Node worker_threads or Web Workers -------------------------------------------------------------

interface WorkerHandle {
  readonly threadId: number;
  post(message: unknown): void;
  terminate(): Promise<void>;
  ref(): void;
  unref(): void;
}

interface WorkerEvents {
  message(data: unknown): void;
  /** An uncaught error or an exit nobody asked for. */
  failure(error: Error): void;
  exit(): void;
}

type Spawn = (events: WorkerEvents) => WorkerHandle;

interface Platform {
  spawn: Spawn;
  parallelism: number;
  /** The error for a worker that failed before it started: what to change so that workers can start here. */
  startFailure(error: Error): ProtocolError;
  /** Browsers: a worker that cannot start will not start on a retry either (each retry is one more CSP report). */
  retryStart: boolean;
  /** Releases what spawning needs (a browser's blob: URL), once the last worker is gone. */
  dispose?: () => void;
}

const isNode = typeof process === "object" && typeof process.versions?.node === "string";

async function platform(workerUrl: string | URL | undefined): Promise<Platform> {
  if (isNode) {
    const { Worker } = await nodeBuiltin<typeof import("node:worker_threads")>("worker_threads");
    const os = await nodeBuiltin<typeof import("node:os")>("os");
    const spawn: Spawn = (events) => {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.on("message", (data: unknown) => events.message(data));
      worker.on("error", (error: Error) => events.failure(error));
      worker.on("exit", () => events.exit());
      return {
        threadId: worker.threadId,
        post: (message) => worker.postMessage(message),
        terminate: async () => {
          await worker.terminate();
        },
        ref: () => worker.ref(),
        unref: () => worker.unref(),
      };
    };
    const startFailure = (error: Error): ProtocolError => new ProtocolError("POW_WORKER_FAILED", `PoW workers fail to start: ${error.message}`, { cause: error });
    return { spawn, parallelism: os.availableParallelism(), startFailure, retryStart: true };
  }
  if (typeof Worker !== "function") throw new ProtocolError("UNSUPPORTED", "this platform has no workers for the PoW miner");
  const fromBlob = workerUrl === undefined;
  const url = fromBlob ? URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" })) : String(workerUrl);
  // Browsers say nothing about why a worker did not start (the error event has no message), and a blocked one
  // looks the same as one whose script is missing, so the message names both things to check.
  const startFailure = (error: Error): ProtocolError => {
    const detail = error.message !== "" ? ` (${error.message})` : "";
    const message = fromBlob
      ? `PoW workers cannot start from a blob: URL${detail}. If the page has a Content-Security-Policy, add blob: to its worker-src directive (or to script-src when it has no worker-src), or serve chrysalis-core/pow/worker.js from an origin worker-src allows and pass its URL as the workerUrl option`
      : `the PoW worker script ${url} did not start${detail}. Check that it is served (HTTP 200, a JavaScript MIME type) and that the page's Content-Security-Policy worker-src directive allows its origin`;
    return new ProtocolError("POW_WORKER_FAILED", message, { cause: error });
  };
  let next = 1;
  const spawn: Spawn = (events) => {
    let worker: Worker;
    try {
      worker = new Worker(url);
    } catch (error) {
      // Some engines refuse a blocked worker at once (a SecurityError) instead of with an error event.
      throw startFailure(error as Error);
    }
    worker.onmessage = (event: MessageEvent) => events.message(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      events.failure(new Error(event.message ?? ""));
    };
    return {
      threadId: next++,
      post: (message) => worker.postMessage(message),
      terminate: async () => {
        worker.terminate();
        events.exit();
      },
      ref: () => undefined,
      unref: () => undefined,
    };
  };
  const dispose = fromBlob ? () => URL.revokeObjectURL(url) : undefined;
  return { spawn, parallelism: Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 1), startFailure, retryStart: false, ...(dispose ? { dispose } : {}) };
}

// An aborted job rejects with the library's one abortError (a DOMException named AbortError, as fetch() raises).
export { abortError };

// ---- the pool -------------------------------------------------------------------------------------------------

interface PoolWorker {
  readonly handle: WorkerHandle;
  /** Int32 [0]: the job this worker may run; BigInt64 [1]: hashes tried in it. Absent without SharedArrayBuffer. */
  readonly control: Int32Array | undefined;
  readonly hashes: BigInt64Array | undefined;
  /** Hashes reported by message (no SharedArrayBuffer). */
  reported: number;
  /** It instantiated the kernel (posted "ready"). */
  started: boolean;
  alive: boolean;
  closing: boolean;
  exited: Promise<void>;
}

interface Job {
  readonly id: number;
  readonly digest: Uint8Array;
  readonly target: number;
  readonly start: bigint;
  readonly options: Omit<MineOptions, "minScore">;
  readonly resolve: (nonce: bigint) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  aborted: boolean;
  error: unknown;
  pending: Set<PoolWorker>;
  startedAt: number;
  timer: ReturnType<typeof setInterval> | undefined;
  onAbort: (() => void) | undefined;
}

/** The pool behind createMiner; exported for tests (its `workerHandles` let a test kill a thread). */
export class MinerPool implements Miner {
  private readonly requested: number | undefined;
  private readonly maxQueue: number;
  private readonly workerUrl: string | URL | undefined;
  private flavor: MinerKernel;
  /** The compiled WASM kernel; undefined: the workers run the JavaScript one. */
  private readonly module: WebAssembly.Module | undefined;
  /** The largest chunk for the kernel the workers run (it changes when they fall back to JavaScript). */
  private chunk: bigint;
  private readonly pool: PoolWorker[] = [];
  private readonly queue: Job[] = [];
  private active: Job | undefined;
  private platform: Platform | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private nextId = 1;
  private totalHashes = 0;
  // The last finished job and the hashes counted for it when it finished: a worker still hashing after its "done"
  // makes stats().hashes grow, so that a stop that did not stop is visible.
  private finishedId = 0;
  private hashesAtFinish = 0;
  private readonly ready: Promise<void>;
  private initError: unknown;
  private startFailures = 0;

  /** `module` replaces the kernel (tests use a broken one to play workers that cannot start). */
  constructor(options: MinerOptions = {}, module?: WebAssembly.Module) {
    if (typeof options !== "object" || options === null) throw new ProtocolError("INVALID_ARGUMENT", "expected an options object", { path: "options" });
    if (options.workers !== undefined) assertInteger(options.workers, "workers", 1, MAX_WORKERS);
    if (options.maxQueue !== undefined) assertInteger(options.maxQueue, "maxQueue", 0, Number.MAX_SAFE_INTEGER);
    if (options.flavor !== undefined && options.flavor !== "simd" && options.flavor !== "portable" && options.flavor !== "js") {
      throw new ProtocolError("INVALID_ARGUMENT", "flavor is simd, portable or js", { path: "flavor" });
    }
    if (options.workerUrl !== undefined && typeof options.workerUrl !== "string" && !(options.workerUrl instanceof URL)) {
      throw new ProtocolError("INVALID_ARGUMENT", "workerUrl must be a string or a URL", { path: "workerUrl" });
    }
    this.requested = options.workers;
    this.maxQueue = options.maxQueue ?? Number.POSITIVE_INFINITY;
    this.workerUrl = options.workerUrl;
    this.flavor = options.flavor ?? defaultFlavor();
    if (module !== undefined) this.module = module;
    else if (this.flavor !== "js") {
      try {
        this.module = kernelModule(this.flavor);
      } catch (error) {
        // A flavour asked for by name must not silently become another; the default may.
        if (options.flavor !== undefined) throw error;
        this.flavor = "js";
        warnFallback("pow", "WebAssembly is unavailable here, so proof of work runs in JavaScript, 10–50 times slower", error);
      }
    }
    this.chunk = CHUNK[this.flavor];
    this.ready = this.init().catch((error: unknown) => {
      this.initError = error;
    });
  }

  private async init(): Promise<void> {
    this.platform = await platform(this.workerUrl);
    const count = this.requested ?? Math.min(this.platform.parallelism, MAX_WORKERS);
    for (let i = 0; i < count && !this.closed; i++) this.addWorker();
  }

  private addWorker(): void {
    const spawn = this.platform!.spawn;
    const shared = typeof SharedArrayBuffer === "function" ? new SharedArrayBuffer(16) : undefined;
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const worker: PoolWorker = {
      handle: undefined as unknown as WorkerHandle,
      control: shared ? new Int32Array(shared, 0, 2) : undefined,
      hashes: shared ? new BigInt64Array(shared, 8, 1) : undefined,
      reported: 0,
      started: false,
      alive: true,
      closing: false,
      exited,
    };
    const handle = spawn({
      message: (data) => this.onMessage(worker, data),
      failure: (error) => this.onFailure(worker, error),
      exit: () => {
        markExited();
        if (!worker.closing) this.onFailure(worker, new Error("the worker exited"));
      },
    });
    (worker as { handle: WorkerHandle }).handle = handle;
    handle.post({ type: "init", module: this.module, control: shared });
    handle.unref();
    this.pool.push(worker);
  }

  /** The live worker handles (tests terminate one to play a crash). */
  get workerHandles(): readonly WorkerHandle[] {
    return this.pool.map((w) => w.handle);
  }

  get busy(): boolean {
    return this.active !== undefined;
  }

  /** Closed, or its workers cannot start: a new pool is needed. */
  get failed(): boolean {
    return this.closed || this.initError !== undefined;
  }

  get queueLength(): number {
    return this.queue.length;
  }

  stats(): MinerStats {
    return {
      workers: this.pool.length,
      busy: this.busy,
      queued: this.queue.length,
      hashes: this.totalHashes + (this.active ? this.jobHashes() : this.jobHashes() - this.hashesAtFinish),
      threadIds: this.pool.map((w) => w.handle.threadId),
      kernel: this.flavor,
    };
  }

  async mine(messageBytes: Uint8Array, options: MineOptions): Promise<bigint> {
    if (typeof options !== "object" || options === null) throw new ProtocolError("INVALID_ARGUMENT", "expected an options object", { path: "options" });
    const digest = powDigest(messageBytes);
    const target = targetZeros(messageBytes.length, options.minScore);
    if (target > MAX_TRAILING_ZEROS) throw new ProtocolError("VALUE_OUT_OF_RANGE", `minScore needs ${target} trailing zeros; a hash has ${MAX_TRAILING_ZEROS}`, { path: "minScore" });
    return this.mineDigest(digest, target, options);
  }

  async mineDigest(digest: Uint8Array, target: number, options: Omit<MineOptions, "minScore"> = {}): Promise<bigint> {
    if (!(digest instanceof Uint8Array) || digest.length !== POW_DIGEST_LENGTH) throw new ProtocolError("INVALID_ARGUMENT", `expected a ${POW_DIGEST_LENGTH}-byte digest`, { path: "digest" });
    assertInteger(target, "targetZeros", 0, MAX_TRAILING_ZEROS);
    const start = toNonce(options.startNonce ?? 0n, "startNonce");
    const { signal, onProgress } = options;
    if (signal !== undefined && !(typeof signal === "object" && signal !== null && "aborted" in signal)) throw new ProtocolError("INVALID_ARGUMENT", "signal must be an AbortSignal", { path: "signal" });
    if (onProgress !== undefined && typeof onProgress !== "function") throw new ProtocolError("INVALID_ARGUMENT", "onProgress must be a function", { path: "onProgress" });
    if (this.closed) throw new ProtocolError("POW_MINER_CLOSED", "the miner is closed");
    if (signal?.aborted) throw abortError(signal.reason);
    if (this.queue.length >= this.maxQueue) throw new ProtocolError("POW_QUEUE_FULL", `${this.queue.length} PoW jobs are already waiting`);
    return new Promise<bigint>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        digest: digest.slice(),
        target,
        start,
        options,
        resolve,
        reject,
        settled: false,
        aborted: false,
        error: undefined,
        pending: new Set(),
        startedAt: 0,
        timer: undefined,
        onAbort: undefined,
      };
      if (signal !== undefined) {
        job.onAbort = () => this.abort(job);
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      void this.ready.then(() => this.pump());
    });
  }

  private abort(job: Job): void {
    if (job.settled) return;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(job, undefined, abortError(job.options.signal?.reason));
      return;
    }
    // Running: stop every worker; the rejection comes once they have all stopped.
    job.aborted = true;
    this.stopWorkers(job);
  }

  private settle(job: Job, nonce: bigint | undefined, error?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort !== undefined) job.options.signal?.removeEventListener("abort", job.onAbort);
    if (nonce !== undefined) job.resolve(nonce);
    else job.reject(error);
  }

  private pump(): void {
    if (this.active !== undefined || this.closed) return;
    if (this.initError !== undefined || this.pool.length === 0) {
      const error = this.initError ?? new ProtocolError("POW_WORKER_FAILED", "no PoW worker is running");
      for (const job of this.queue.splice(0)) this.settle(job, undefined, error);
      return;
    }
    const job = this.queue.shift();
    if (job === undefined) return;
    this.active = job;
    this.hashesAtFinish = 0;
    job.startedAt = performance.now();
    const workers = this.pool.length;
    const chunk = chunkFor(job.target, workers, this.chunk);
    this.pool.forEach((worker, index) => {
      job.pending.add(worker);
      worker.reported = 0;
      if (worker.control !== undefined) {
        Atomics.store(worker.hashes!, 0, 0n);
        Atomics.store(worker.control, 0, job.id);
      }
      worker.handle.ref();
      worker.handle.post({ type: "job", id: job.id, digest: job.digest, target: job.target, start: job.start, chunk, index, workers });
    });
    const onProgress = job.options.onProgress;
    if (onProgress !== undefined) {
      job.timer = setInterval(() => {
        if (!job.settled) onProgress({ hashes: this.jobHashes(), elapsedMs: performance.now() - job.startedAt });
      }, PROGRESS_INTERVAL_MS);
    }
  }

  private jobHashes(): number {
    let sum = 0;
    for (const worker of this.pool) sum += worker.hashes !== undefined ? Number(Atomics.load(worker.hashes, 0)) : worker.reported;
    return sum;
  }

  private stopWorkers(job: Job): void {
    for (const worker of job.pending) {
      if (worker.control !== undefined) Atomics.store(worker.control, 0, 0);
      else worker.handle.post({ type: "stop", id: job.id });
    }
  }

  private onMessage(worker: PoolWorker, data: unknown): void {
    const message = data as { type: string; id: number; nonce?: bigint; hashes?: number };
    const job = this.active;
    if (message.type === "ready") {
      worker.started = true;
      if ((message as { kernel?: string }).kernel === "js" && this.flavor !== "js") {
        // The page compiled the kernel but the worker may not instantiate it (its script has a stricter policy).
        this.flavor = "js";
        this.chunk = CHUNK.js;
        warnFallback("pow", "the PoW workers may not run WebAssembly, so they mine in JavaScript, 10–50 times slower");
      }
      return;
    }
    if (message.type === "progress" && message.id === this.finishedId && job === undefined) {
      worker.reported = message.hashes ?? 0;
      return;
    }
    if (job === undefined || message.id !== job.id) return;
    if (message.type === "progress") worker.reported = message.hashes ?? 0;
    else if (message.type === "found") {
      const nonce = message.nonce!;
      // A cheap guard on the whole chain (kernel, slicing, transfer): the scalar reference must agree.
      if (referenceTrailingZeros(job.digest, nonce) >= job.target) this.settle(job, nonce);
      else job.error ??= new ProtocolError("POW_KERNEL_ERROR", `the kernel returned nonce ${nonce}, which misses the target`);
      this.stopWorkers(job);
    } else if (message.type === "done") {
      job.pending.delete(worker);
      worker.handle.unref();
      if (job.pending.size === 0) this.finish(job);
    }
  }

  private onFailure(worker: PoolWorker, error: Error): void {
    if (!worker.alive) return;
    worker.alive = false;
    const index = this.pool.indexOf(worker);
    if (index >= 0) this.pool.splice(index, 1);
    if (!worker.closing) {
      worker.closing = true;
      void worker.handle.terminate().catch(() => undefined);
    }
    // A worker that never started says how the platform refuses workers (a CSP, a missing script); that is fatal at
    // once in browsers, and after a few tries in Node (a crash at start could be bad luck there).
    const startFailure = worker.started ? undefined : this.platform!.startFailure(error);
    const fatal = startFailure !== undefined && (!this.platform!.retryStart || ++this.startFailures >= MAX_START_FAILURES);
    if (fatal) this.initError ??= startFailure;
    const job = this.active;
    if (job !== undefined && job.pending.delete(worker)) {
      job.error ??= startFailure ?? new ProtocolError("POW_WORKER_FAILED", `a PoW worker stopped: ${error.message || "no reason given"}`, { cause: error });
      this.stopWorkers(job);
      if (job.pending.size === 0) this.finish(job);
    }
    if (fatal) {
      // Workers that cannot even start would be replaced forever: give up and fail what waits.
      if (this.active === undefined) this.pump();
      return;
    }
    if (!this.closed) {
      try {
        this.addWorker();
      } catch (spawnError) {
        // Called from a worker event: never let it throw there. With no worker left, what waits fails.
        if (this.pool.length === 0) this.initError ??= spawnError instanceof ProtocolError ? spawnError : new ProtocolError("POW_WORKER_FAILED", "cannot start a PoW worker", { cause: spawnError });
        if (this.active === undefined) this.pump();
      }
    }
  }

  private finish(job: Job): void {
    if (job.timer !== undefined) clearInterval(job.timer);
    this.hashesAtFinish = this.jobHashes();
    this.finishedId = job.id;
    this.totalHashes += this.hashesAtFinish;
    this.active = undefined;
    if (job.aborted) this.settle(job, undefined, abortError(job.options.signal?.reason));
    else if (job.error !== undefined) this.settle(job, undefined, job.error);
    else this.settle(job, undefined, new ProtocolError("POW_NOT_FOUND", "no nonce meets the target in the rest of the nonce space"));
    this.pump();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    await this.ready;
    const error = new ProtocolError("POW_MINER_CLOSED", "the miner was closed");
    for (const job of this.queue.splice(0)) this.settle(job, undefined, error);
    const job = this.active;
    if (job !== undefined) {
      if (job.timer !== undefined) clearInterval(job.timer);
      this.stopWorkers(job);
      this.totalHashes += this.jobHashes();
      this.settle(job, undefined, error);
      this.active = undefined;
    }
    const workers = this.pool.splice(0);
    await Promise.all(
      workers.map(async (worker) => {
        worker.closing = true;
        worker.alive = false;
        await worker.handle.terminate().catch(() => undefined);
        await worker.exited;
      }),
    );
    this.platform?.dispose?.();
  }
}

/** A persistent pool of PoW workers; close() it when done (idle workers do not keep Node alive). */
export function createMiner(options: MinerOptions = {}): Miner {
  return new MinerPool(options);
}

// mineNonce's pools, one per worker count (and worker URL), created on first use. Idle workers are unref'd, so these
// never keep a Node process alive; concurrent calls queue on one pool instead of each spawning its own threads.
const sharedPools = new Map<string, MinerPool>();

/** Mines one message on a shared, lazily created pool of `workers` threads (default: all cores). */
export async function mineNonce(messageBytes: Uint8Array, options: MineOptions & Pick<MinerOptions, "workers" | "workerUrl">): Promise<bigint> {
  const { workers, workerUrl } = typeof options === "object" && options !== null ? options : ({} as MinerOptions);
  const key = `${workers ?? ""} ${workerUrl === undefined ? "" : String(workerUrl)}`;
  let pool = sharedPools.get(key);
  if (pool === undefined || pool.failed) {
    const poolOptions: MinerOptions = {};
    if (workers !== undefined) poolOptions.workers = workers;
    if (workerUrl !== undefined) poolOptions.workerUrl = workerUrl;
    pool = new MinerPool(poolOptions);
    sharedPools.set(key, pool);
  }
  return pool.mine(messageBytes, options);
}

/** The first nonce ≥ startNonce meeting the target, on the calling thread (deterministic; for small targets). */
export function mineNonceSync(messageBytes: Uint8Array, minScore: number, startNonce: bigint | number = 0n, flavor?: MinerKernel): bigint | undefined {
  const target = targetZeros(messageBytes.length, minScore);
  if (target > MAX_TRAILING_ZEROS) throw new ProtocolError("VALUE_OUT_OF_RANGE", `minScore needs ${target} trailing zeros; a hash has ${MAX_TRAILING_ZEROS}`, { path: "minScore" });
  const start = toNonce(startNonce, "startNonce");
  const digest = powDigest(messageBytes);
  if (flavor !== "js") {
    try {
      return new Kernel(flavor ?? defaultFlavor()).searchNonce(digest, target, start, (1n << 64n) - start);
    } catch (error) {
      if (flavor !== undefined || error instanceof ProtocolError) throw error;
      warnFallback("pow", "WebAssembly is unavailable here, so proof of work runs in JavaScript, 10–50 times slower", error);
    }
  }
  const kernel = createJsKernel();
  kernel.setDigest(digest);
  const nonce = kernel.search(target, start, MAX_U64);
  return nonce < 0n ? undefined : nonce;
}
