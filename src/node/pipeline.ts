// The submission pipeline of a node: take a message as JSON (partial allowed), a model or raw bytes, fill what is
// missing (networkId, parents from the tips, nonce by PoW), run every rule, and store it with its ledger effects in one
// atomic write of the store (store/contract.ts). Nothing is stored on rejection; what is stored is announced as an event.
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { BELOW_MAX_DEPTH, DEVNET_MIN_POW_SCORE, DEVNET_NAME, MAINNET_HRP, MAINNET_MIN_POW_SCORE, MAINNET_NAME, MAX_PARENTS, NONCE_LENGTH, TESTNET_HRP } from "../bytes/limits.js";
import { decodeMessage, encodeMessage } from "../model/codec.js";
import { completeMessage } from "../model/complete.js";
import { messageId, networkId as networkIdOf, transactionId } from "../model/ids.js";
import { partialMessageFromJsonWithBytes, type NodeInfoJson, type PartialMessage } from "../model/json.js";
import { malformedJson, partialMessageFromJsonTextWithBytes } from "../model/json-text.js";
import type { Message, MilestonePayload } from "../model/types.js";
import { isBelowMaxDepth, isLazy, liveRoots, standingRoots } from "./cone.js";
import { createMiner, powDigest, targetZeros, type Miner } from "../pow/index.js";
import { messageTrailingZeros } from "../pow/hash.js";
import { abortError, isAbortError, NodeError, shuttingDown } from "./errors.js";
import { checkLedgerState, checkSpend, ledgerMutation, ledgerOutput, EMPTY_BALANCE, type MemoryLedger } from "./ledger.js";
import type {
  ConeRoots,
  GenesisOutput,
  LedgerMutation,
  LedgerSnapshot,
  MessageMetadata,
  MilestoneApplication,
  MilestoneRecord,
  NodeStore,
  OutputRecord,
  ReferencedMessage,
  StoredMessage,
  StoreOpenResult,
} from "./store/contract.js";
import { metadataWithLatest } from "./store/common.js";
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
  /** A new store starts from this snapshot instead of genesis (StoreOpenOptions.snapshot); an existing store ignores
   * it (the caller checks StoreOpenResult.created). */
  snapshot?: LedgerSnapshot;
  /** Whether parents must be known and above max depth (Hornet's solidity check). Default true; a gateway whose
   * upstream checks them passes false. */
  checkSolidity?: boolean;
  /** `false` disables PoW for submitters: a submission that leaves parents or a nonce to the node then answers 400, as
   * Hornet does (the coordinator still mines its milestones on the node's miner). */
  pow?: false | PowOptions;
  /** Node name reported by /api/v1/info. */
  name?: string;
}

/** What GET /api/v1/info reports: the base shape (model/json.ts) plus Hornet's milestone and rate fields. */
export interface NodeInfo extends NodeInfoJson {
  /** Messages stored per second over the last milestone interval this process issued (0 before two milestones). */
  messagesPerSecond?: number;
  /** Messages referenced per second over that interval. */
  referencedMessagesPerSecond?: number;
  /** referencedMessagesPerSecond / messagesPerSecond × 100. */
  referencedRate?: number;
  /** Unix seconds of the latest milestone, 0 when there is none. */
  latestMilestoneTimestamp?: number;
  latestMilestoneIndex?: number;
  /** The same as latestMilestoneIndex: the node issues or reads its milestones, it never lags behind them. */
  confirmedMilestoneIndex?: number;
  /** Nothing is pruned: 0. */
  pruningIndex?: number;
}

/** Hornet's maxAllowedMilestoneAge: a node whose latest milestone is older is not healthy. */
export const MAX_MILESTONE_AGE_SECONDS = 5 * 60;

/** A milestone the coordinator built: its message (nonce left for the node to mine) and what confirming it does. */
export interface MilestoneDraft {
  /** The milestone message: networkId, parents and the signed milestone payload; the nonce is mined by the node. */
  readonly message: Message & { payload: MilestonePayload };
  /** Unix seconds, the payload's timestamp. */
  readonly timestamp: number;
  /** The past cone it references, in confirmation order (the milestone message itself is added by the node). */
  readonly cone: readonly ConfirmedMessage[];
  readonly createdOutputs: readonly string[];
  readonly consumedOutputs: readonly string[];
}

/** One message a milestone references: what is stored, its metadata before, and the state the milestone gives it. */
export interface ConfirmedMessage extends ReferencedMessage {
  readonly stored: StoredMessage;
  readonly metadata: MessageMetadata;
}

export interface SubmitOptions {
  /** Aborting (the client went away) cancels the PoW job when nobody else waits for it, and a message the node mined
   * for this submission is then not stored. Read only when the node mines (a complete message is checked and stored
   * without it), so a getter that makes the signal on first read costs nothing otherwise. */
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

/**
 * What the node announces after the store accepted it (the MQTT bridge, metrics and tests listen). A milestone's events
 * come after its one atomic write, in this order: its message, every message it references, every output it books or
 * spends, every transaction it includes, then the milestone itself.
 */
export type NodeEvent =
  /** A message was stored (solid). */
  | { readonly type: "message"; readonly stored: StoredMessage; readonly metadata: MessageMetadata }
  /** A milestone referenced a message: its metadata now carries the milestone index and inclusion state. */
  | { readonly type: "referenced"; readonly stored: StoredMessage; readonly metadata: MessageMetadata }
  /** A milestone confirmed the transaction that created this output, or the one that spent it (`output.spent`). */
  | { readonly type: "output"; readonly output: OutputRecord; readonly milestoneIndex: number }
  /** A milestone included this transaction (in the message `stored`). */
  | { readonly type: "transaction"; readonly transactionId: string; readonly stored: StoredMessage; readonly milestoneIndex: number }
  /** A milestone was stored and confirmed; `payload` carries its receipt, if any. */
  | { readonly type: "milestone"; readonly milestone: MilestoneRecord; readonly payload: MilestonePayload };

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
  /** The REST JSON form as text, partial allowed: what submitMessage does with JSON.parse(text), reading the text
   * directly (partialMessageFromJsonTextWithBytes); malformed JSON is refused with INVALID_JSON. */
  submitJsonText(text: string, options?: SubmitOptions): Promise<SubmitResult>;
  /** A partial model (networkId, parents, nonce may be missing; 0 counts as missing for networkId and nonce). */
  submitModel(partial: PartialMessage, options?: SubmitOptions): Promise<SubmitResult>;
  getMessage(id: string): Promise<StoredMessage | undefined>;
  getMetadata(id: string): Promise<MessageMetadata | undefined>;
  /** Up to `max` (default 8) tips that are not below max depth, sorted and unique: what parents are filled with. */
  tips(max?: number): Promise<string[]>;
  /** /api/v1/info with the milestone fields read from the store now. */
  nodeInfo(): Promise<NodeInfo>;
  /** Hornet's health rule for a node without peers: a latest milestone under MAX_MILESTONE_AGE_SECONDS old. */
  health(): Promise<boolean>;
  /** Mines, stores and confirms the coordinator's milestone in one atomic write, then announces it. Rejects with the
   * store's MILESTONE_CONFLICT when another instance issued this index first (nothing is written then). */
  issueMilestone(draft: MilestoneDraft, options?: SubmitOptions): Promise<MilestoneRecord>;
  stats(): NodeStats;
  /** Refuses new submissions and answers every one waiting for PoW with 503 SHUTTING_DOWN (Retry-After); a graceful
   * shutdown calls it once the grace period is over, so that work which cannot finish is still answered. */
  shutdown(): void;
  /** Stops the miner's workers (if the node created them) and closes the store; queued and running jobs reject. */
  close(): Promise<void>;
}

export const NODE_VERSION = "0.1.0";

/** Creates a node: the submission pipeline over a store, an optional ledger and a shared miner pool. */
export function createNode(options: NodeOptions = {}): ChrysalisNode {
  const network = options.network ?? DEVNET_NAME;
  const ownNetworkId = networkIdOf(network);
  const minPoWScore = options.minPoWScore ?? (network === DEVNET_NAME ? DEVNET_MIN_POW_SCORE : MAINNET_MIN_POW_SCORE);
  if (!Number.isFinite(minPoWScore) || minPoWScore < 0) throw new ProtocolError("INVALID_ARGUMENT", "minPoWScore must be a number ≥ 0", { path: "minPoWScore" });
  const store: NodeStore = options.store ?? new MemoryStore();
  const genesis = options.genesis ?? options.ledger?.genesis();
  const checkSolidity = options.checkSolidity ?? true;
  let opened: Promise<StoreOpenResult> | undefined;
  // Set once the store has opened: reads then go to it at once rather than after an await of the open promise.
  let isOpen = false;
  const ready = (): Promise<StoreOpenResult> =>
    (opened ??= store.open({ network, genesis, snapshot: options.snapshot }).then((result) => {
      isOpen = true;
      return result;
    }));
  /** `read` once the store is open. */
  const whenOpen = <T>(read: () => Promise<T>): Promise<T> => {
    if (!isOpen) return ready().then(read);
    try {
      return read();
    } catch (error) {
      // A store whose method throws rather than rejects: the caller still gets a rejection, as from an async method.
      return Promise.reject(error);
    }
  };
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
    bech32HRP: options.bech32Hrp ?? (network === MAINNET_NAME ? MAINNET_HRP : TESTNET_HRP),
    minPoWScore,
    features: powOptions === undefined ? [] : ["PoW"],
  };
  const stats = { accepted: 0, rejected: 0 };
  const powQueue = new PowQueue({
    maxPending,
    maxPerRequester: Math.max(1, powOptions?.maxPerRequester ?? 4),
    run: (bytes, signal) => getMiner().mine(bytes, { minScore: minPoWScore, signal }).catch(minerFailure),
  });
  // For /info's rates: messages this process stored since the milestone it issued last, and that milestone's figures.
  let storedSinceMilestone = 0;
  let rates = { messagesPerSecond: 0, referencedMessagesPerSecond: 0, referencedRate: 0 };
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

  // Tips whose cone is too old are passed over (Hornet's tip selection drops lazy tips too): those past max depth would
  // be refused, and those within two milestones of it could be by the time the message arrives. Those are handed out
  // only when nothing younger is left. A few more than wanted are drawn so that some old ones do not starve the choice.
  async function selectTips(max: number): Promise<string[]> {
    // A gateway's upstream checks solidity and depth itself, and its own tip selection already dropped lazy tips.
    if (!checkSolidity) return [...new Set(await store.tips(max))].sort();
    const drawn = [...new Set(await store.tips(max * 4))];
    const fresh: string[] = [];
    const lastResort: string[] = [];
    let confirmed: number | undefined;
    // `max` tips a read, the next ones only while too few were fresh.
    for (let start = 0; start < drawn.length && fresh.length < max; start += max) {
      const batch = drawn.slice(start, start + max);
      const read = await readMessages(batch);
      confirmed ??= read.confirmed;
      for (let i = 0; i < batch.length && fresh.length < max; i++) {
        const metadata = read.metadata[i];
        const oldest = read.entryPoints[i] ?? (metadata === undefined ? undefined : (await liveRoots(store, batch[i]!, metadata, confirmed)).oldest);
        if (oldest === undefined || isBelowMaxDepth(oldest, confirmed)) continue;
        (isLazy(oldest, confirmed) ? lastResort : fresh).push(batch[i]!);
      }
    }
    return (fresh.length > 0 ? fresh : lastResort.slice(0, max)).sort();
  }

  /**
   * What solidity and tip selection know of `ids`, each at its place: its milestone index if it is a solid entry point
   * (known without a read), else its stored metadata (undefined: neither); with `also`, its metadata besides; and the
   * confirmed milestone index. The reads are one (metadataWithLatest: one round trip to a store across a network).
   */
  async function readMessages(ids: readonly string[], also?: string): Promise<{ entryPoints: (number | undefined)[]; metadata: (MessageMetadata | undefined)[]; also: MessageMetadata | undefined; confirmed: number }> {
    const entryPoints = ids.map((id) => store.entryPoints.get(id));
    const asked = ids.filter((_, i) => entryPoints[i] === undefined);
    if (also !== undefined) asked.push(also);
    const read = await metadataWithLatest(store, asked);
    let next = 0;
    const metadata = entryPoints.map((entryPoint) => (entryPoint === undefined ? read.metadata[next++] : undefined));
    return { entryPoints, metadata, also: also === undefined ? undefined : read.metadata[next], confirmed: read.latest?.index ?? 0 };
  }

  function checkNetwork(id: bigint): void {
    if (id !== ownNetworkId) {
      throw new NodeError("WRONG_NETWORK_ID", `networkId ${id} is not this node's network (${network}, ${ownNetworkId})`, { path: "networkId" });
    }
  }

  // The accept/refuse decision hashes the message's own nonce once on the kernel's one-state path (a few µs; a nonce
  // search of one nonce costs a whole 128-lane batch) and compares its trailing zeros with the exact target for this
  // length; the score, from the same zeros, only words the refusal.
  function checkPow(bytes: Uint8Array): void {
    const zeros = messageTrailingZeros(bytes);
    if (zeros >= targetZeros(bytes.length, minPoWScore)) return;
    const score = 3 ** zeros / bytes.length;
    if (score < minPoWScore) {
      throw new NodeError("INSUFFICIENT_POW", `the PoW score ${Math.floor(score)} is below the node's minimum ${minPoWScore}`, { path: "nonce" });
    }
  }

  /**
   * Hornet's solidity rule for a node without gossip: every parent is a stored message or a solid entry point, and none
   * is below max depth. Returns the cone roots the new message gets from its parents; with `id`, undefined instead when
   * a message of that id is stored already (asked in the same read: one round trip to a store across a network).
   */
  async function coneRootsOf(parents: readonly Uint8Array[]): Promise<ConeRoots>;
  async function coneRootsOf(parents: readonly Uint8Array[], id: string | undefined): Promise<ConeRoots | undefined>;
  async function coneRootsOf(parents: readonly Uint8Array[], id?: string): Promise<ConeRoots | undefined> {
    let oldest = Infinity;
    let youngest = 0;
    const ids = parents.map(toHex);
    const read = await readMessages(ids, id);
    if (read.also !== undefined) return undefined;
    const confirmed = read.confirmed;
    for (let i = 0; i < ids.length; i++) {
      const entryPoint = read.entryPoints[i];
      const m = read.metadata[i];
      let roots: ConeRoots;
      if (entryPoint !== undefined) roots = { oldest: entryPoint, youngest: entryPoint };
      else if (m === undefined) throw new NodeError("PARENT_NOT_SOLID", `parent ${ids[i]} is unknown to this node`, { path: `parentMessageIds[${i}]` });
      else roots = standingRoots(m, confirmed) ?? (await liveRoots(store, ids[i]!, m, confirmed));
      oldest = Math.min(oldest, roots.oldest);
      youngest = Math.max(youngest, roots.youngest);
    }
    if (isBelowMaxDepth(oldest, confirmed)) {
      throw new NodeError("BELOW_MAX_DEPTH", `a parent's past cone was confirmed ${confirmed - oldest} milestones ago: attach to newer tips`, { path: "parentMessageIds" });
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
    // The same transaction in a new message (iota.js `reattach` of an unreferenced one): its effects are in the ledger
    // already, so the message is stored without a second mutation and the coordinator includes the transaction once.
    if (records.length > 0 && records.every((r) => r?.spent?.transactionId === mutation.transactionId)) return undefined;
    const { consumed } = checkLedgerState(mutation, records.map(ledgerOutput), (key) => balances.get(key) ?? EMPTY_BALANCE);
    checkSpend(payload, consumed);
    return mutation;
  }

  /** Every rule but the PoW; then mines when asked, and stores. */
  async function process(message: Message, bytes: Uint8Array, mineNonce: boolean, options: SubmitOptions): Promise<SubmitResult> {
    const { ledger: ledgerOn } = await ready();
    // A message submitted again (its nonce given, so the same bytes) is answered with its id, as Hornet does, before
    // the rules that its own first acceptance changed (its inputs are spent now) could refuse it.
    // The id of bytes that already carry their nonce: hashed once here, and kept for the write below.
    const known = mineNonce ? undefined : messageId(bytes);
    // Undefined: stored already (where solidity is checked, asked in the parents' read).
    let coneRoots: ConeRoots | undefined = { oldest: 0, youngest: 0 };
    if (checkSolidity) coneRoots = await coneRootsOf(message.parents, known);
    else if (known !== undefined && (await store.has(known))) coneRoots = undefined;
    if (coneRoots === undefined) return { messageId: known!, message, bytes, stored: false };
    const mutation = await checkSemantics(message, ledgerOn);
    if (mineNonce) {
      options.admitPow?.();
      const nonce = await mine(bytes, options);
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - NONCE_LENGTH, nonce, true);
      message.nonce = nonce;
      checkPow(bytes);
    }
    // A client gone while the node mined for it gets nothing stored. The signal is read only here and by the miner:
    // a server's request makes it on first read, which a submission that needs no mining never pays for.
    if (mineNonce && options.signal?.aborted) throw abortError(options.signal.reason);
    const id = known ?? messageId(bytes);
    const arrivalTime = Date.now();
    const { stored } = await store.accept({ id, bytes, message, arrivalTime, coneRoots, ledger: mutation });
    if (stored) {
      storedSinceMilestone++;
      emit({ type: "message", stored: { id, bytes, message }, metadata: { arrivalTime, solid: true, coneRoots } });
    }
    return { messageId: id, message, bytes, stored };
  }

  // Only the node's coordinator issues milestones (issueMilestone); one from a submitter is refused before any work.
  function refuseMilestone(payload: Message["payload"]): void {
    if (payload?.type === 1) throw new NodeError("MILESTONE_REFUSED", "this node takes milestones from its own coordinator only", { path: "payload" });
  }

  // The PoW score of the message as it stands, nonce included (Hornet keeps a nonce of 0 that already meets it).
  function meetsPow(bytes: Uint8Array): boolean {
    try {
      checkPow(bytes);
      return true;
    } catch {
      return false;
    }
  }

  async function fromPartial(partial: PartialMessage, options: SubmitOptions, known?: Uint8Array): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    refuseMilestone(partial.payload);
    await ready();
    // Filled by the rules the client shares (model/complete.ts), which check the network and nonce first, as Hornet does.
    const tips = (): Promise<string[]> => {
      // Hornet (since 1.2.2) refuses to pick parents it could not then mine for.
      if (powOptions === undefined) throw new NodeError("POW_DISABLED", "no parents given and the node's PoW is disabled", { path: "parentMessageIds" });
      return selectTips(MAX_PARENTS);
    };
    const filler = { networkId: () => ownNetworkId, checkNetworkId: checkNetwork, tips };
    const { message, bytes, needsNonce } = await completeMessage(partial, filler, (code, text, path) => new NodeError(code, text, { path }), known);
    const hasNonce = !needsNonce;
    if (hasNonce) checkPow(bytes);
    else if (powOptions === undefined && !meetsPow(bytes)) {
      throw new NodeError("POW_DISABLED", "proof of work is not enabled on this node; send a nonce", { path: "nonce" });
    }
    return process(message, bytes, !hasNonce && powOptions !== undefined, options);
  }

  async function fromBytes(input: Uint8Array, options: SubmitOptions): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    const { message, parentsMissing } = decodeSubmitted(input);
    // Hornet fills raw bodies as it fills JSON: a zero networkId, no parents or a zero nonce are left to the node.
    if (parentsMissing || message.networkId === 0n || message.nonce === 0n) {
      const partial: PartialMessage = { payload: message.payload, nonce: message.nonce };
      if (message.networkId !== 0n) partial.networkId = message.networkId;
      if (!parentsMissing) partial.parents = message.parents;
      return fromPartial(partial, options);
    }
    checkNetwork(message.networkId);
    refuseMilestone(message.payload);
    const bytes = input.slice();
    checkPow(bytes);
    return process(message, bytes, false, options);
  }

  async function issueMilestone(draft: MilestoneDraft, signal: AbortSignal | undefined): Promise<MilestoneRecord> {
    if (closed) throw shuttingDown();
    await ready();
    const { message } = draft;
    const coneRoots = checkSolidity ? await coneRootsOf(message.parents) : { oldest: 0, youngest: 0 };
    const bytes = encodeMessage({ ...message, nonce: 0n });
    // The coordinator is one requester of the fair queue like any other.
    const nonce = await mine(bytes, { signal, requester: "coordinator" });
    new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - 8, nonce, true);
    const stored: StoredMessage = { id: messageId(bytes), bytes, message: { ...message, nonce } };
    const index = message.payload.index;
    const previous = await store.latestMilestone();
    const application: MilestoneApplication = {
      index,
      messageId: stored.id,
      timestamp: draft.timestamp,
      referenced: [...draft.cone.map(({ messageId: id, ledgerInclusionState, conflictReason }) => ({ messageId: id, ledgerInclusionState, conflictReason })), { messageId: stored.id, ledgerInclusionState: "noTransaction" }],
      createdOutputs: draft.createdOutputs,
      consumedOutputs: draft.consumedOutputs,
    };
    const arrivalTime = Date.now();
    // Another instance sharing the store may have built the very same milestone (same key, tips and second): then its
    // message is stored already and this one was not written: the same outcome as losing the index.
    const { stored: written } = await store.accept({ ...stored, arrivalTime, coneRoots, milestone: application });
    if (!written) throw new NodeError("MILESTONE_CONFLICT", `milestone ${index} was issued by another instance`);
    storedSinceMilestone++;
    const record: MilestoneRecord = { index, messageId: stored.id, timestamp: draft.timestamp };
    if (previous !== undefined && draft.timestamp > previous.timestamp) {
      const seconds = draft.timestamp - previous.timestamp;
      const referenced = application.referenced.length;
      rates = {
        messagesPerSecond: storedSinceMilestone / seconds,
        referencedMessagesPerSecond: referenced / seconds,
        referencedRate: storedSinceMilestone > 0 ? (referenced / storedSinceMilestone) * 100 : 0,
      };
    }
    storedSinceMilestone = 0;
    await announceMilestone(draft, stored, { arrivalTime, solid: true, coneRoots }, record);
    return record;
  }

  // The events of a confirmed milestone, from what the write stored (outputs are read back: the store booked them).
  async function announceMilestone(draft: MilestoneDraft, stored: StoredMessage, metadata: MessageMetadata, record: MilestoneRecord): Promise<void> {
    const index = record.index;
    emit({ type: "message", stored, metadata });
    const confirmed = (m: MessageMetadata, state: ReferencedMessage): MessageMetadata => ({
      ...m,
      referencedByMilestoneIndex: index,
      ledgerInclusionState: state.ledgerInclusionState,
      conflictReason: state.conflictReason,
    });
    for (const c of draft.cone) emit({ type: "referenced", stored: c.stored, metadata: confirmed(c.metadata, c) });
    emit({ type: "referenced", stored, metadata: { ...confirmed(metadata, { messageId: stored.id, ledgerInclusionState: "noTransaction" }), milestoneIndex: index } });
    if (listeners.size === 0) return;
    const outputs = await Promise.all([...draft.createdOutputs, ...draft.consumedOutputs].map((id) => store.output(id).catch(() => undefined)));
    for (const output of outputs) if (output !== undefined) emit({ type: "output", output, milestoneIndex: index });
    for (const c of draft.cone) {
      const payload = c.stored.message.payload;
      if (c.ledgerInclusionState === "included" && payload?.type === 0) emit({ type: "transaction", transactionId: transactionId(payload), stored: c.stored, milestoneIndex: index });
    }
    emit({ type: "milestone", milestone: record, payload: draft.message.payload });
  }

  async function nodeInfo(): Promise<NodeInfo> {
    await ready();
    const [latest, pruningIndex] = await Promise.all([store.latestMilestone(), store.pruningIndex()]);
    // Field by field, not spread from `info` and `rates`: V8's copy of a spread long-lived object made every answer
    // outlive young-generation collections with what its request allocated (GET /api/v1/info, which iota.js asks before
    // each send: 1.5 MB promoted per scavenge against 9 KB this way). The order is the one the spreads gave.
    return {
      name: info.name,
      version: info.version,
      isHealthy: isHealthy(latest),
      networkId: info.networkId,
      bech32HRP: info.bech32HRP,
      minPoWScore: info.minPoWScore,
      features: [...info.features],
      messagesPerSecond: rates.messagesPerSecond,
      referencedMessagesPerSecond: rates.referencedMessagesPerSecond,
      referencedRate: rates.referencedRate,
      latestMilestoneTimestamp: latest?.timestamp ?? 0,
      latestMilestoneIndex: latest?.index ?? 0,
      confirmedMilestoneIndex: latest?.index ?? 0,
      pruningIndex,
    };
  }

  function isHealthy(latest: MilestoneRecord | undefined): boolean {
    return latest !== undefined && Date.now() / 1000 - latest.timestamp < MAX_MILESTONE_AGE_SECONDS;
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
      return counted(
        (async () => {
          const { partial, bytes } = partialMessageFromJsonWithBytes(input);
          return fromPartial(partial, submitOptions, bytes);
        })(),
      );
    },
    submitJsonText(text: string, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      return counted(
        (async () => {
          let read: ReturnType<typeof partialMessageFromJsonTextWithBytes>;
          try {
            read = partialMessageFromJsonTextWithBytes(text);
          } catch (error) {
            throw error instanceof SyntaxError ? malformedJson(error) : error;
          }
          return fromPartial(read.partial, submitOptions, read.bytes);
        })(),
      );
    },
    submitModel(partial: PartialMessage, submitOptions: SubmitOptions = {}): Promise<SubmitResult> {
      return counted(fromPartial(partial, submitOptions));
    },
    getMessage(id: string): Promise<StoredMessage | undefined> {
      return whenOpen(() => store.get(id));
    },
    getMetadata(id: string): Promise<MessageMetadata | undefined> {
      return whenOpen(() => store.metadata(id));
    },
    async tips(max = MAX_PARENTS): Promise<string[]> {
      await ready();
      return selectTips(max);
    },
    nodeInfo,
    async health(): Promise<boolean> {
      await ready();
      return isHealthy(await store.latestMilestone());
    },
    issueMilestone(draft: MilestoneDraft, submitOptions: SubmitOptions = {}): Promise<MilestoneRecord> {
      return issueMilestone(draft, submitOptions.signal);
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

/**
 * decodeMessage, except that a message with no parents (left for the node to fill, as Hornet allows in raw bodies) is
 * read too: the parent count is the byte after the 8-byte networkId, so one placeholder parent is put in for the codec to
 * check everything else with its own rules, and taken out again. Error offsets are those of the bytes given.
 */
function decodeSubmitted(bytes: Uint8Array): { message: Message; parentsMissing: boolean } {
  const COUNT_AT = 8;
  if (bytes.length <= COUNT_AT || bytes[COUNT_AT] !== 0) return { message: decodeMessage(bytes), parentsMissing: false };
  const padded = new Uint8Array(bytes.length + 32);
  padded.set(bytes.subarray(0, COUNT_AT));
  padded[COUNT_AT] = 1;
  padded.set(bytes.subarray(COUNT_AT + 1), COUNT_AT + 1 + 32);
  try {
    const message = decodeMessage(padded);
    message.parents = [];
    return { message, parentsMissing: true };
  } catch (error) {
    if (error instanceof ProtocolError && error.offset !== undefined) {
      const offset = error.offset > COUNT_AT ? Math.max(COUNT_AT + 1, error.offset - 32) : error.offset;
      throw new ProtocolError(error.code, error.message.replace(/ \([^)]*\)$/, ""), { path: error.path, offset, cause: error });
    }
    throw error;
  }
}
