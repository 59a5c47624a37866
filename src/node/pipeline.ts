// The submission pipeline of a node: take a message as JSON (partial allowed), a model or raw bytes, fill what is
// missing (networkId, parents from the tips, nonce by PoW), run every rule, and store it. Nothing is stored on rejection.
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { DEVNET_MIN_POW_SCORE, DEVNET_NAME, MAINNET_HRP, MAINNET_MIN_POW_SCORE, MAINNET_NAME, MAX_PARENTS, NONCE_LENGTH, TESTNET_HRP } from "../bytes/limits.js";
import { decodeMessage } from "../model/codec.js";
import { completeMessage } from "../model/complete.js";
import { messageId, networkId as networkIdOf, transactionId } from "../model/ids.js";
import { partialMessageFromJson, type NodeInfoJson, type PartialMessage } from "../model/json.js";
import type { Message } from "../model/types.js";
import { createMiner, powDigest, powScore, searchNonce, targetZeros, type Miner } from "../pow/index.js";
import { abortError, isAbortError, NodeError } from "./errors.js";
import { checkTransaction, type UtxoResolver } from "./ledger.js";
import { MemoryStore, type MessageStore, type StoredMessage } from "./storage.js";

export interface PowOptions {
  /** Worker threads of the node's miner pool. Default: the pow module's default. */
  workers?: number;
  /** Most PoW jobs in flight (mining or queued); one more answers 503 POW_QUEUE_FULL. Default 32. */
  maxPending?: number;
  /** A miner to use instead of creating one (the node does not close a miner it did not create). */
  miner?: Miner;
}

export interface NodeOptions {
  /** Network name (PROTOCOL.md §4); the network id is derived from it. Default "chrysalis-devnet". */
  network?: string;
  /** Bech32 human-readable part. Default "iota" for chrysalis-mainnet, "atoi" otherwise. */
  bech32Hrp?: string;
  /** Minimum PoW score a message must reach. Default: 2000 on chrysalis-devnet, otherwise 4000 (mainnet's). */
  minPoWScore?: number;
  /** Where accepted messages go. Default: a new MemoryStore. */
  store?: MessageStore;
  /** When given, transactions are checked against this ledger (semantic rules) and applied to it when stored. */
  ledger?: UtxoResolver;
  /** `false` disables PoW on the node (a submission without a nonce then answers 503 naming `nonce`). */
  pow?: false | PowOptions;
  /** Node name reported by /api/v1/info. */
  name?: string;
}

/** What GET /api/v1/info reports (the node API's shape, defined with the other REST JSON in model/json.ts). */
export type NodeInfo = NodeInfoJson;

export interface SubmitOptions {
  /** Aborting (the client went away) cancels the PoW job when nobody else waits for it; nothing is stored. */
  signal?: AbortSignal | undefined;
}

export interface SubmitResult {
  messageId: string;
  message: Message;
  bytes: Uint8Array;
  /** False when the same message was already stored. */
  stored: boolean;
}

export interface NodeStats {
  accepted: number;
  rejected: number;
  /** PoW jobs started on the miner (identical work waited for by several submissions counts once). */
  powJobs: number;
  /** PoW jobs in flight now. */
  powActive: number;
  /** Submissions that joined a job already mining the same bytes. */
  powShared: number;
  /** PoW jobs cancelled because every submission waiting for them went away. */
  powCancelled: number;
}

export interface ChrysalisNode {
  readonly info: NodeInfo;
  readonly networkId: bigint;
  readonly store: MessageStore;
  /** Raw bytes (Uint8Array) or the REST JSON form, partial allowed. */
  submitMessage(input: Uint8Array | unknown, options?: SubmitOptions): Promise<SubmitResult>;
  /** A partial model (networkId, parents, nonce may be missing; 0 counts as missing for networkId and nonce). */
  submitModel(partial: PartialMessage, options?: SubmitOptions): Promise<SubmitResult>;
  getMessage(id: string): Promise<StoredMessage | undefined>;
  tips(): Promise<string[]>;
  stats(): NodeStats;
  /** Stops the miner's workers (if the node created them); queued and running jobs reject. */
  close(): Promise<void>;
}

interface PowJob {
  promise: Promise<bigint>;
  controller: AbortController;
  waiters: number;
}

export const NODE_VERSION = "0.1.0";

/** Creates a node: the submission pipeline over a store, an optional ledger and a shared miner pool. */
export function createNode(options: NodeOptions = {}): ChrysalisNode {
  const network = options.network ?? DEVNET_NAME;
  const ownNetworkId = networkIdOf(network);
  const minPoWScore = options.minPoWScore ?? (network === DEVNET_NAME ? DEVNET_MIN_POW_SCORE : MAINNET_MIN_POW_SCORE);
  if (!Number.isFinite(minPoWScore) || minPoWScore < 0) throw new ProtocolError("INVALID_ARGUMENT", "minPoWScore must be a number ≥ 0", { path: "minPoWScore" });
  const store: MessageStore = options.store ?? new MemoryStore();
  const ledger = options.ledger;
  const powOptions = options.pow === false ? undefined : (options.pow ?? {});
  const maxPending = Math.max(1, powOptions?.maxPending ?? 32);
  const info: NodeInfo = {
    name: options.name ?? "chrysalis-core",
    version: NODE_VERSION,
    isHealthy: true,
    networkId: network,
    bech32HRP: options.bech32Hrp ?? (network === MAINNET_NAME ? MAINNET_HRP : TESTNET_HRP),
    minPoWScore,
    features: powOptions === undefined ? [] : ["PoW"],
  };
  const stats: NodeStats = { accepted: 0, rejected: 0, powJobs: 0, powActive: 0, powShared: 0, powCancelled: 0 };
  const jobs = new Map<string, PowJob>();
  let miner: Miner | undefined = powOptions?.miner;
  const ownsMiner = miner === undefined;
  let closed = false;

  function getMiner(): Miner {
    if (miner === undefined) miner = createMiner(powOptions?.workers !== undefined ? { workers: powOptions.workers } : {});
    return miner;
  }

  // Mines `bytes` (nonce slot included) at the node's score. Identical bytes in flight share one job; the job is
  // aborted when its last waiter goes away.
  function mine(bytes: Uint8Array, signal: AbortSignal | undefined): Promise<bigint> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    // The PoW digest covers every byte but the nonce, so equal digests (and lengths) mean identical work.
    const key = `${bytes.length}:${toHex(powDigest(bytes))}`;
    let job = jobs.get(key);
    if (job === undefined) {
      if (jobs.size >= maxPending) {
        return Promise.reject(new NodeError("POW_QUEUE_FULL", `the node is busy: ${jobs.size} PoW jobs are in flight, try again later`));
      }
      const controller = new AbortController();
      const created: PowJob = { promise: getMiner().mine(bytes, { minScore: minPoWScore, signal: controller.signal }).catch(minerFailure), controller, waiters: 0 };
      job = created;
      jobs.set(key, created);
      stats.powJobs++;
      stats.powActive = jobs.size;
      const done = (): void => {
        if (jobs.get(key) === created) jobs.delete(key);
        stats.powActive = jobs.size;
      };
      created.promise.then(done, done);
    } else stats.powShared++;
    const shared = job;
    shared.waiters++;
    return new Promise<bigint>((resolve, reject) => {
      let settled = false;
      const onAbort = (): void => {
        if (settled) return;
        settled = true;
        if (--shared.waiters === 0) {
          if (jobs.get(key) === shared) jobs.delete(key);
          stats.powActive = jobs.size;
          stats.powCancelled++;
          shared.controller.abort();
        }
        reject(abortError(signal?.reason));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      shared.promise.then(
        (nonce) => {
          signal?.removeEventListener("abort", onAbort);
          if (settled) return;
          settled = true;
          shared.waiters--;
          resolve(nonce);
        },
        (error: unknown) => {
          signal?.removeEventListener("abort", onAbort);
          if (settled) return;
          settled = true;
          shared.waiters--;
          reject(error);
        },
      );
    });
  }

  // The miner's own failures are the node's trouble, not the submitter's: 503 naming the nonce, never a 400.
  function minerFailure(error: unknown): never {
    if (isAbortError(error)) throw error;
    const code = error instanceof ProtocolError ? error.code : "";
    if (code === "POW_QUEUE_FULL") throw new NodeError("POW_QUEUE_FULL", "the node is busy: its PoW queue is full, try again later", { cause: error });
    throw new NodeError("POW_FAILED", `the node could not mine this message: ${(error as Error).message}`, { path: "nonce", cause: error });
  }

  function checkNetwork(id: bigint): void {
    if (id !== ownNetworkId) {
      throw new NodeError("WRONG_NETWORK_ID", `networkId ${id} is not this node's network (${network}, ${ownNetworkId})`, { path: "networkId" });
    }
  }

  // The accept/refuse decision runs one nonce through the WASM kernel (searchNonce with count 1: "does this nonce reach
  // the target number of trailing zeros"), about 7× cheaper than the scalar powScore; the score is computed only to
  // word the refusal.
  function checkPow(bytes: Uint8Array): void {
    const nonce = new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getBigUint64(bytes.length - NONCE_LENGTH, true);
    if (searchNonce(powDigest(bytes), targetZeros(bytes.length, minPoWScore), nonce, 1n) !== undefined) return;
    const score = powScore(bytes);
    if (score < minPoWScore) {
      throw new NodeError("INSUFFICIENT_POW", `the PoW score ${Math.floor(score)} is below the node's minimum ${minPoWScore}`, { path: "nonce" });
    }
  }

  async function checkSemantics(message: Message): Promise<void> {
    if (ledger !== undefined && message.payload?.type === 0) await checkTransaction(message.payload, ledger);
  }

  async function commit(message: Message, bytes: Uint8Array, signal: AbortSignal | undefined): Promise<SubmitResult> {
    if (signal?.aborted) throw abortError(signal.reason);
    const id = messageId(bytes);
    if (await store.has(id)) return { messageId: id, message, bytes, stored: false };
    // The ledger's atomic re-check (no input spent meanwhile) comes before storing, so a double spend racing this one
    // is refused whole; a store that then fails (an upstream down) leaves the ledger ahead of it, which only a ledger
    // and store sharing one transaction could avoid.
    if (ledger?.apply !== undefined && message.payload?.type === 0) await ledger.apply(transactionId(message.payload), message.payload);
    const stored = await store.put({ id, bytes, message });
    return { messageId: id, message, bytes, stored };
  }

  async function fromPartial(partial: PartialMessage, signal: AbortSignal | undefined): Promise<SubmitResult> {
    if (closed) throw new NodeError("SHUTTING_DOWN", "the node is shutting down");
    const filler = { networkId: () => ownNetworkId, checkNetworkId: checkNetwork, tips: () => store.tips(MAX_PARENTS), canMine: powOptions !== undefined };
    const { message, bytes, needsNonce } = await completeMessage(partial, filler, (code, text, path) => new NodeError(code, text, { path }));
    const hasNonce = !needsNonce;
    if (hasNonce) checkPow(bytes);
    await checkSemantics(message);
    if (!hasNonce) {
      const nonce = await mine(bytes, signal);
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - NONCE_LENGTH, nonce, true);
      message.nonce = nonce;
      checkPow(bytes);
    }
    return commit(message, bytes, signal);
  }

  async function fromBytes(input: Uint8Array, signal: AbortSignal | undefined): Promise<SubmitResult> {
    if (closed) throw new NodeError("SHUTTING_DOWN", "the node is shutting down");
    const message = decodeMessage(input);
    checkNetwork(message.networkId);
    const bytes = input.slice();
    checkPow(bytes);
    await checkSemantics(message);
    return commit(message, bytes, signal);
  }

  async function counted(work: Promise<SubmitResult>): Promise<SubmitResult> {
    try {
      const result = await work;
      if (result.stored) stats.accepted++;
      return result;
    } catch (error) {
      stats.rejected++;
      throw error;
    }
  }

  return {
    info,
    networkId: ownNetworkId,
    store,
    submitMessage(input: Uint8Array | unknown, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      if (input instanceof Uint8Array) return counted(fromBytes(input, submitOptions.signal));
      return counted((async () => fromPartial(partialMessageFromJson(input), submitOptions.signal))());
    },
    submitModel(partial: PartialMessage, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      return counted(fromPartial(partial, submitOptions.signal));
    },
    getMessage: (id: string) => store.get(id),
    async tips(): Promise<string[]> {
      return store.tips(MAX_PARENTS);
    },
    stats: () => ({ ...stats, powActive: jobs.size }),
    async close(): Promise<void> {
      closed = true;
      for (const job of jobs.values()) job.controller.abort();
      jobs.clear();
      if (ownsMiner && miner !== undefined) await miner.close();
      await store.close?.();
    },
  };
}
