// The submission pipeline of a node: take a message as JSON (partial allowed), a model or raw bytes, fill what is
// missing (networkId, parents from the tips, nonce by PoW), run every rule, and store it with its ledger effects in one
// atomic write of the store (store/contract.ts). Nothing is stored on rejection; what is stored is announced as an event.
import { compareBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { BELOW_MAX_DEPTH, MAX_PARENTS } from "../bytes/limits.js";
import { decodeMessage, encodeMessage } from "../model/codec.js";
import { messageId, networkId as networkIdOf, transactionId } from "../model/ids.js";
import { jsonPath, partialMessageFromJson, type NodeInfoJson, type PartialMessage } from "../model/json.js";
import type { Message } from "../model/types.js";
import { createMiner, powDigest, powScore, searchNonce, targetZeros, type Miner } from "../pow/index.js";
import { abortError, isAbortError, NodeError } from "./errors.js";
import { checkLedgerState, checkSpend, ledgerMutation, ledgerOutput, EMPTY_BALANCE, type MemoryLedger } from "./ledger.js";
import type { ConeRoots, GenesisOutput, LedgerMutation, MessageMetadata, NodeStore, StoredMessage, StoreOpenResult } from "./store/contract.js";
import { MemoryStore } from "./store/memory.js";
import { PowQueue } from "./pow-queue.js";

export interface PowOptions {
  /** Worker threads of the node's miner pool. Default: the pow module's default. */
  workers?: number;
  /** Most PoW jobs in flight (mining or queued); one more answers 503 POW_QUEUE_FULL. Default 32. */
  maxPending?: number;
  /** Most PoW jobs in flight for one requester (SubmitOptions.requester); one more answers 503. Default 4. Requesters
   * are served round-robin. */
  maxPerRequester?: number;
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
  /** Where accepted messages and the ledger live. Default: a new MemoryStore. */
  store?: NodeStore;
  /**
   * The outputs a new store starts its UTXO ledger with; then every transaction is checked against the ledger (the
   * semantic rules) and applied to it. Applied only when the store is new; a store made without genesis keeps no ledger.
   */
  genesis?: readonly GenesisOutput[];
  /** The same as `genesis`, given as a MemoryLedger's unspent outputs. */
  ledger?: MemoryLedger;
  /** Whether parents must be known and above max depth (Hornet's solidity check). Default true; a gateway whose
   * upstream checks them passes false. */
  checkSolidity?: boolean;
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
  /** Who asks, for the PoW queue's round-robin and per-requester bound (an identity, else a client address). */
  requester?: string | undefined;
  /** Called before the node mines for this submission; throwing refuses it (the edge's PoW rate limit). */
  admitPow?: (() => void) | undefined;
}

export interface SubmitResult {
  messageId: string;
  message: Message;
  bytes: Uint8Array;
  /** False when the same message was already stored. */
  stored: boolean;
}

/** What the node announces after the store accepted it (the MQTT bridge, metrics and tests listen). */
export type NodeEvent = { readonly type: "message"; readonly stored: StoredMessage; readonly metadata: MessageMetadata };

export type NodeEventListener = (event: NodeEvent) => void;

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
  /** PoW jobs waiting for the miner (powActive counts them too). */
  powQueued: number;
  /** Nonces tried by the node's miner since it started. */
  powHashes: number;
}

export interface ChrysalisNode {
  readonly info: NodeInfo;
  readonly networkId: bigint;
  readonly store: NodeStore;
  /** Opens the store (creating it and applying genesis when new); every other call waits for it. Rejects with the
   * store's error (STORE_WRONG_NETWORK, STORE_UNAVAILABLE, …) and keeps rejecting: a node never runs on no store. */
  ready(): Promise<StoreOpenResult>;
  /** Calls `listener` for every event until the returned function is called. A throwing listener is ignored. */
  subscribe(listener: NodeEventListener): () => void;
  /** Raw bytes (Uint8Array) or the REST JSON form, partial allowed. */
  submitMessage(input: Uint8Array | unknown, options?: SubmitOptions): Promise<SubmitResult>;
  /** A partial model (networkId, parents, nonce may be missing; 0 counts as missing for networkId and nonce). */
  submitModel(partial: PartialMessage, options?: SubmitOptions): Promise<SubmitResult>;
  getMessage(id: string): Promise<StoredMessage | undefined>;
  getMetadata(id: string): Promise<MessageMetadata | undefined>;
  tips(): Promise<string[]>;
  stats(): NodeStats;
  /** Refuses new submissions and answers every one waiting for PoW with 503 SHUTTING_DOWN (Retry-After); a graceful
   * shutdown calls it once the grace period is over, so that work which cannot finish is still answered. */
  shutdown(): void;
  /** Stops the miner's workers (if the node created them) and closes the store; queued and running jobs reject. */
  close(): Promise<void>;
}

export const NODE_VERSION = "0.1.0";

/** Seconds a client is told to wait after a submission refused by a node that is stopping (a restart, typically). */
const SHUTDOWN_RETRY_AFTER_SECONDS = 5;

function shuttingDown(): NodeError {
  return new NodeError("SHUTTING_DOWN", "the node is shutting down; try again shortly", { retryAfter: SHUTDOWN_RETRY_AFTER_SECONDS });
}

/** Creates a node: the submission pipeline over a store, an optional ledger and a shared miner pool. */
export function createNode(options: NodeOptions = {}): ChrysalisNode {
  const network = options.network ?? "chrysalis-devnet";
  const ownNetworkId = networkIdOf(network);
  const minPoWScore = options.minPoWScore ?? (network === "chrysalis-devnet" ? 2000 : 4000);
  if (!Number.isFinite(minPoWScore) || minPoWScore < 0) throw new ProtocolError("INVALID_ARGUMENT", "minPoWScore must be a number ≥ 0", { path: "minPoWScore" });
  const store: NodeStore = options.store ?? new MemoryStore();
  const genesis = options.genesis ?? options.ledger?.genesis();
  const checkSolidity = options.checkSolidity ?? true;
  let opened: Promise<StoreOpenResult> | undefined;
  const ready = (): Promise<StoreOpenResult> => (opened ??= store.open({ network, genesis }));
  const listeners = new Set<NodeEventListener>();
  function emit(event: NodeEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the message is stored either way.
      }
    }
  }
  const powOptions = options.pow === false ? undefined : (options.pow ?? {});
  const maxPending = Math.max(1, powOptions?.maxPending ?? 32);
  const info: NodeInfo = {
    name: options.name ?? "chrysalis-core",
    version: NODE_VERSION,
    isHealthy: true,
    networkId: network,
    bech32HRP: options.bech32Hrp ?? (network === "chrysalis-mainnet" ? "iota" : "atoi"),
    minPoWScore,
    features: powOptions === undefined ? [] : ["PoW"],
  };
  const stats = { accepted: 0, rejected: 0 };
  const powQueue = new PowQueue({
    maxPending,
    maxPerRequester: Math.max(1, powOptions?.maxPerRequester ?? 4),
    run: (bytes, signal) => getMiner().mine(bytes, { minScore: minPoWScore, signal }).catch(minerFailure),
  });
  let miner: Miner | undefined = powOptions?.miner;
  const ownsMiner = miner === undefined;
  let closed = false;

  function getMiner(): Miner {
    if (miner === undefined) miner = createMiner(powOptions?.workers !== undefined ? { workers: powOptions.workers } : {});
    return miner;
  }

  // Mines `bytes` (nonce slot included) at the node's score, through the fair queue. Identical bytes in flight share
  // one job; the job is cancelled when its last waiter goes away.
  function mine(bytes: Uint8Array, options: SubmitOptions): Promise<bigint> {
    // The PoW digest covers every byte but the nonce, so equal digests (and lengths) mean identical work.
    const key = `${bytes.length}:${toHex(powDigest(bytes))}`;
    return powQueue.mine(key, bytes, options.requester ?? "anonymous", options.signal);
  }

  // The miner's own failures are the node's trouble, not the submitter's: 503 naming the nonce, never a 400.
  function minerFailure(error: unknown): never {
    if (isAbortError(error)) throw error;
    const code = error instanceof ProtocolError ? error.code : "";
    if (code === "POW_QUEUE_FULL") throw new NodeError("POW_QUEUE_FULL", "the node is busy: its PoW queue is full, try again later", { cause: error });
    throw new NodeError("POW_FAILED", `the node could not mine this message: ${(error as Error).message}`, { path: "nonce", cause: error });
  }

  async function parentsFromTips(): Promise<Uint8Array[]> {
    const ids = await store.tips(MAX_PARENTS);
    const parents = ids.map((id, i) => fromHex(id, `tips[${i}]`, 32)).sort(compareBytes);
    const unique = parents.filter((p, i) => i === 0 || compareBytes(parents[i - 1]!, p) !== 0);
    if (unique.length === 0) throw new NodeError("CANNOT_FILL", "the node has no tips to fill parentMessageIds with; send parentMessageIds", { path: "parentMessageIds" });
    return unique;
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
    const nonce = new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getBigUint64(bytes.length - 8, true);
    if (searchNonce(powDigest(bytes), targetZeros(bytes.length, minPoWScore), nonce, 1n) !== undefined) return;
    const score = powScore(bytes);
    if (score < minPoWScore) {
      throw new NodeError("INSUFFICIENT_POW", `the PoW score ${Math.floor(score)} is below the node's minimum ${minPoWScore}`, { path: "nonce" });
    }
  }

  /**
   * Hornet's solidity rule for a node without gossip: every parent is a stored message or a solid entry point, and none
   * is below max depth. Returns the cone roots the new message gets from its parents.
   */
  async function coneRootsOf(parents: readonly Uint8Array[]): Promise<ConeRoots> {
    let oldest = Infinity;
    let youngest = 0;
    const ids = parents.map(toHex);
    const metadata = await Promise.all(ids.map((id) => (store.entryPoints.has(id) ? undefined : store.metadata(id))));
    for (let i = 0; i < ids.length; i++) {
      const entryPoint = store.entryPoints.get(ids[i]!);
      const m = metadata[i];
      let roots: ConeRoots;
      if (entryPoint !== undefined) roots = { oldest: entryPoint, youngest: entryPoint };
      else if (m === undefined) throw new NodeError("PARENT_NOT_SOLID", `parent ${ids[i]} is unknown to this node`, { path: `parentMessageIds[${i}]` });
      else if (m.referencedByMilestoneIndex !== undefined) roots = { oldest: m.referencedByMilestoneIndex, youngest: m.referencedByMilestoneIndex };
      else roots = m.coneRoots;
      oldest = Math.min(oldest, roots.oldest);
      youngest = Math.max(youngest, roots.youngest);
    }
    const confirmed = (await store.latestMilestone())?.index ?? 0;
    if (confirmed - oldest > BELOW_MAX_DEPTH) {
      throw new NodeError("BELOW_MAX_DEPTH", `a parent's past cone was confirmed ${confirmed - oldest} milestones ago (at most ${BELOW_MAX_DEPTH}): attach to newer tips`, { path: "parentMessageIds" });
    }
    return { oldest: oldest === Infinity ? 0 : oldest, youngest };
  }

  /**
   * The semantic rules before any PoW is spent: the state part is checked on a snapshot here to refuse early, and
   * again by the store inside its atomic write, which alone decides.
   */
  async function checkSemantics(message: Message, ledgerOn: boolean): Promise<LedgerMutation | undefined> {
    if (!ledgerOn || message.payload?.type !== 0) return undefined;
    const payload = message.payload;
    const mutation = ledgerMutation(transactionId(payload), payload);
    const records = await Promise.all(mutation.consumed.map((id) => store.output(id)));
    const addresses = new Map<string, Uint8Array>();
    for (const o of payload.essence.outputs) addresses.set(toHex(o.address.address), o.address.address);
    for (const r of records) if (r !== undefined) addresses.set(toHex(r.output.address.address), r.output.address.address);
    const balances = new Map(await Promise.all([...addresses].map(async ([key, address]) => [key, await store.addressBalance(address)] as const)));
    const { consumed } = checkLedgerState(mutation, records.map(ledgerOutput), (key) => balances.get(key) ?? EMPTY_BALANCE);
    checkSpend(payload, consumed);
    return mutation;
  }

  /** Every rule but the PoW; then mines when asked, and stores. */
  async function process(message: Message, bytes: Uint8Array, mineNonce: boolean, options: SubmitOptions): Promise<SubmitResult> {
    const { signal } = options;
    const { ledger: ledgerOn } = await ready();
    // A message submitted again (its nonce given, so the same bytes) is answered with its id, as Hornet does, before
    // the rules that its own first acceptance changed (its inputs are spent now) could refuse it.
    if (!mineNonce) {
      const known = messageId(bytes);
      if (await store.has(known)) return { messageId: known, message, bytes, stored: false };
    }
    const coneRoots = checkSolidity ? await coneRootsOf(message.parents) : { oldest: 0, youngest: 0 };
    const mutation = await checkSemantics(message, ledgerOn);
    if (mineNonce) {
      options.admitPow?.();
      const nonce = await mine(bytes, options);
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - 8, nonce, true);
      message.nonce = nonce;
      checkPow(bytes);
    }
    if (signal?.aborted) throw abortError(signal.reason);
    const id = messageId(bytes);
    const arrivalTime = Date.now();
    const { stored } = await store.accept({ id, bytes, message, arrivalTime, coneRoots, ledger: mutation });
    if (stored) emit({ type: "message", stored: { id, bytes, message }, metadata: { arrivalTime, solid: true, coneRoots } });
    return { messageId: id, message, bytes, stored };
  }

  async function fromPartial(partial: PartialMessage, options: SubmitOptions): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    const hasNonce = partial.nonce !== undefined && partial.nonce !== 0n;
    const hasNetwork = partial.networkId !== undefined && partial.networkId !== 0n;
    if (hasNonce && !hasNetwork) {
      throw new NodeError("NONCE_WITHOUT_NETWORK_ID", "a message with a nonce must carry its networkId: the PoW could not have covered the right bytes", { path: "networkId" });
    }
    if (hasNetwork) checkNetwork(partial.networkId!);
    if (!hasNonce && powOptions === undefined) throw new NodeError("CANNOT_FILL", "PoW is disabled on this node; send a nonce", { path: "nonce" });
    await ready();
    const parents = partial.parents !== undefined && partial.parents.length > 0 ? partial.parents : await parentsFromTips();
    const message: Message = { networkId: ownNetworkId, parents, nonce: hasNonce ? partial.nonce! : 0n };
    if (partial.payload !== undefined) message.payload = partial.payload;
    let bytes: Uint8Array;
    try {
      bytes = encodeMessage(message);
    } catch (error) {
      // The codec names model fields (`parents`); a submitter wrote JSON (`parentMessageIds`).
      if (error instanceof ProtocolError && error.path !== undefined && jsonPath(error.path) !== error.path) {
        throw new ProtocolError(error.code, error.message.replace(/ \(at [^)]*\)$/, ""), { path: jsonPath(error.path), cause: error });
      }
      throw error;
    }
    if (hasNonce) checkPow(bytes);
    return process(message, bytes, !hasNonce, options);
  }

  async function fromBytes(input: Uint8Array, options: SubmitOptions): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    const message = decodeMessage(input);
    checkNetwork(message.networkId);
    const bytes = input.slice();
    checkPow(bytes);
    return process(message, bytes, false, options);
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
    ready,
    subscribe(listener: NodeEventListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    submitMessage(input: Uint8Array | unknown, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      if (input instanceof Uint8Array) return counted(fromBytes(input, submitOptions));
      return counted((async () => fromPartial(partialMessageFromJson(input), submitOptions))());
    },
    submitModel(partial: PartialMessage, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      return counted(fromPartial(partial, submitOptions));
    },
    async getMessage(id: string): Promise<StoredMessage | undefined> {
      await ready();
      return store.get(id);
    },
    async getMetadata(id: string): Promise<MessageMetadata | undefined> {
      await ready();
      return store.metadata(id);
    },
    async tips(): Promise<string[]> {
      await ready();
      return store.tips(MAX_PARENTS);
    },
    stats(): NodeStats {
      const q = powQueue.stats();
      return { ...stats, powJobs: q.jobs, powActive: q.pending, powShared: q.shared, powCancelled: q.cancelled, powQueued: q.queued, powHashes: miner?.stats().hashes ?? 0 };
    },
    shutdown(): void {
      closed = true;
      powQueue.close(shuttingDown());
    },
    async close(): Promise<void> {
      closed = true;
      powQueue.close(shuttingDown());
      if (ownsMiner && miner !== undefined) await miner.close();
      await store.close();
    },
  };
}
