// createNode: wires the node's parts together, each with one job (ARCHITECTURE.md "The node, as a service"): the
// store, the recent Tangle in memory, tip selection (URTS), the message processor every complete message goes
// through, the filler that completes API submissions, and confirmation (white-flag), plus the PoW queue and the
// node's events. The coordinator, gossip, pruning, MQTT and the HTTP edge are built around the node it returns.
import { copyBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { DEVNET_MIN_POW_SCORE, DEVNET_NAME, MAINNET_HRP, MAINNET_MIN_POW_SCORE, MAINNET_NAME, MESSAGE_ID_LENGTH, NONCE_LENGTH, TESTNET_HRP } from "../bytes/limits.js";
import { decodeMessage, encodeMessage } from "../model/codec.js";
import { messageId, networkId as networkIdOf } from "../model/ids.js";
import { partialMessageFromJsonWithBytes, type NodeInfoJson, type PartialMessage } from "../model/json.js";
import { malformedJson, partialMessageFromJsonTextWithBytes } from "../model/json-text.js";
import type { Message, MilestonePayload } from "../model/types.js";
import { createMiner, powDigest, type Miner } from "../pow/index.js";
import { Confirmation, type MilestoneMessage } from "./confirmation.js";
import { isAbortError, NodeError, shuttingDown } from "./errors.js";
import { NodeEvents, type NodeEventListener } from "./events.js";
import { Filler, refuseMilestone, type FillOptions } from "./filler.js";
import type { MemoryLedger } from "./ledger.js";
import { PowQueue } from "./pow-queue.js";
import { MessageProcessor, type Checked } from "./processor.js";
import type { GenesisOutput, LedgerSnapshot, MessageMetadata, MilestoneRecord, NodeStore, StoredMessage, StoreOpenResult } from "./store/contract.js";
import { MemoryStore } from "./store/memory.js";
import { Tangle, type TangleOptions } from "./tangle.js";
import { TipSelector, TIPS_PER_SELECTION, type TipPoolRules } from "./tipselect.js";
import type { WalkedMessage, WhiteFlagResult } from "./whiteflag.js";

export type { NodeEvent, NodeEventListener } from "./events.js";

/** The node's PoW for submissions that leave the nonce to it: the miner and the fair queue's bounds. */
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

/** What createNode builds a node from. Every field has a default: createNode() is a devnet node on a memory store. */
export interface NodeOptions {
  /** Network name (`PROTOCOL.md` §4); the network id is derived from it. Default "chrysalis-devnet". */
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
  /** Tip selection's pools (Hornet's `tipsel` settings) and its random source. */
  tipSelection?:
    | {
        /** The non-lazy pool's rules. Default NON_LAZY_POOL. */
        nonLazy?: TipPoolRules;
        /** The semi-lazy pool's rules. Default SEMI_LAZY_POOL. */
        semiLazy?: TipPoolRules;
        /** Uniform in [0, 1), for the draws. Default Math.random. */
        random?: () => number;
      }
    | undefined;
  /** How many recent messages the Tangle in memory remembers (default 50,000). */
  tangle?: TangleOptions | undefined;
  /** Where parents come from instead of tip selection (a gateway: its upstream's tips). */
  tipSource?: ((count: number) => Promise<string[]>) | undefined;
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
  /** The highest milestone index the node has seen (Hornet's LMI). */
  latestMilestoneIndex?: number;
  /** The highest it has confirmed (Hornet's CMI): below latestMilestoneIndex while it catches up. */
  confirmedMilestoneIndex?: number;
  /** Every milestone at or below it is pruned. */
  pruningIndex?: number;
}

/** Hornet's maxAllowedMilestoneAge: a node whose latest milestone is older is not healthy. */
export const MAX_MILESTONE_AGE_SECONDS = 5 * 60;

/** A milestone the coordinator built: its message (nonce left for the node to mine) and what confirming it does. */
export interface MilestoneDraft {
  /** The milestone message: networkId, parents and the signed milestone payload; the nonce is mined by the node. */
  readonly message: Message & {
    /** The milestone payload: index, timestamp, parents, inclusion Merkle root and the coordinator's signatures. */
    payload: MilestonePayload;
  };
  /** The white-flag walk of its parents (Confirmation.compute), whose Merkle root the payload carries. */
  readonly walk: WhiteFlagResult;
}

/** One message a milestone references: what is stored, its metadata before, and the state the milestone gives it. */
export type ConfirmedMessage = WalkedMessage;

/** How one submission is served (the filler's options): its abort signal, its requester, the edge's PoW admission. */
export type SubmitOptions = FillOptions;

/** The parts createNode wires together, each with one job. */
export interface NodeParts {
  /** The recent Tangle in memory (parents, cone roots, milestones of the messages stored lately). */
  readonly tangle: Tangle;
  /** Undefined on a gateway, whose upstream selects tips. */
  readonly tips: TipSelector | undefined;
  /** White-flag confirmation: the latest and confirmed milestone indexes, and what confirming the next one does. */
  readonly confirmation: Confirmation;
  /** The one path every complete message takes, from the API or from a peer. */
  readonly processor: MessageProcessor;
  /** What the node announces it stored; the MQTT bridge, metrics and dashboard listen. */
  readonly events: NodeEvents;
}

/** What a submission resolves with once its message is stored. */
export interface SubmitResult {
  /** The message id (BLAKE2b-256 of `bytes`), lowercase hex: what POST /api/v1/messages answers. */
  messageId: string;
  /** The message as stored, with whatever the node filled in (network id, parents, nonce). */
  message: Message;
  /** The canonical bytes stored, nonce included. */
  bytes: Uint8Array;
  /** False when the same message was already stored. */
  stored: boolean;
}

/** Counters of this process since it started (for metrics): submissions and the PoW queue. */
export interface NodeStats {
  /** Submissions stored (one of a message stored already is neither accepted nor rejected). */
  accepted: number;
  /** Submissions refused with an error of any kind: invalid, below the PoW score, aborted, shut down, … */
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
  /** Checkpoints the node's coordinator stored (messages without payload merging tips before a milestone). */
  checkpoints: number;
}

/** A node as createNode returns it: submissions, reads, tips, milestones, and its parts for what is built around it. */
export interface ChrysalisNode {
  /** The /api/v1/info fields fixed at creation (name, version, network, HRP, minimum PoW score, features); nodeInfo()
   * adds the milestone fields. */
  readonly info: NodeInfo;
  /** The network id every message must carry: the first 8 bytes of BLAKE2b-256 of the network name, as a u64 LE. */
  readonly networkId: bigint;
  /** The store the node reads and writes; open only once ready() has resolved. */
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
  /** The stored message of this id, read once the store is open; undefined when none is stored. */
  getMessage(id: string): Promise<StoredMessage | undefined>;
  /** The stored metadata of this id, read once the store is open; undefined when no message of it is stored. */
  getMetadata(id: string): Promise<MessageMetadata | undefined>;
  /** Up to `max` (at most 4, Hornet's count) tips of tip selection's non-lazy pool, sorted and unique: what parents are
   * filled with. CANNOT_FILL (503) while the node is not synced or has no tip. `spammer`: Hornet's spammer rule. */
  tips(max?: number, options?: { spammer?: boolean }): Promise<string[]>;
  /** /api/v1/info with the milestone fields read from the store now. */
  nodeInfo(): Promise<NodeInfo>;
  /** Hornet's health rule for a node without peers: a latest milestone under MAX_MILESTONE_AGE_SECONDS old. */
  health(): Promise<boolean>;
  /** Mines, stores and confirms the coordinator's milestone in one atomic write, then announces it. Rejects with the
   * store's MILESTONE_CONFLICT when another instance issued this index first (nothing is written then). */
  issueMilestone(draft: MilestoneDraft, options?: SubmitOptions): Promise<MilestoneRecord>;
  /** The coordinator's checkpoint (Hornet's): a message without payload approving these parents, mined on the node's
   * miner whether or not submitters may use it, and stored through the message processor. Resolves with its id. */
  issueCheckpoint(parents: readonly string[], options?: SubmitOptions): Promise<string>;
  /** The node's parts, for the parts built around it (the coordinator, gossip, the dashboard). */
  readonly parts: NodeParts;
  /** This process's counters now, read synchronously (the metrics scrape calls it). */
  stats(): NodeStats;
  /** Refuses new submissions and answers every one waiting for PoW with 503 SHUTTING_DOWN (Retry-After); a graceful
   * shutdown calls it once the grace period is over, so that work which cannot finish is still answered. */
  shutdown(): void;
  /** Stops the miner's workers (if the node created them) and closes the store; queued and running jobs reject. */
  close(): Promise<void>;
}

/** The node version /api/v1/info reports (`version`), the package's version at this release. */
export const NODE_VERSION = "0.1.0";

/** Unreferenced messages read back at start to fill the Tangle and tip selection again (the newest ones). */
const REBUILD_MESSAGES = 10_000;

/** Creates a node: its parts over a store, an optional ledger and a shared miner pool. */
export function createNode(options: NodeOptions = {}): ChrysalisNode {
  const network = options.network ?? DEVNET_NAME;
  const ownNetworkId = networkIdOf(network);
  const minPoWScore = options.minPoWScore ?? (network === DEVNET_NAME ? DEVNET_MIN_POW_SCORE : MAINNET_MIN_POW_SCORE);
  if (!Number.isFinite(minPoWScore) || minPoWScore < 0) throw new ProtocolError("INVALID_ARGUMENT", "minPoWScore must be a number ≥ 0", { path: "minPoWScore" });
  const store: NodeStore = options.store ?? new MemoryStore();
  const genesis = options.genesis ?? options.ledger?.genesis();
  const checkSolidity = options.checkSolidity ?? true;
  const powOptions = options.pow === false ? undefined : (options.pow ?? {});
  const info: NodeInfo = {
    name: options.name ?? "chrysalis-core",
    version: NODE_VERSION,
    isHealthy: true,
    networkId: network,
    bech32HRP: options.bech32Hrp ?? (network === MAINNET_NAME ? MAINNET_HRP : TESTNET_HRP),
    minPoWScore,
    features: powOptions === undefined ? [] : ["PoW"],
  };

  // The parts.
  const events = new NodeEvents();
  const tangle = new Tangle(store.entryPoints, options.tangle ?? {});
  let ledgerOn = false;
  let confirmation: Confirmation;
  const tips =
    options.tipSource === undefined
      ? new TipSelector(tangle, {
          ...options.tipSelection,
          synced: () => confirmation.synced,
          // PROTOCOL.md §6 Decision: with no tip at all, the latest milestone's message (solid and referenced: never
          // lazy), or before the first milestone the solid entry points; Hornet answers 503 then.
          fallback: () => (confirmation.latest !== undefined ? [confirmation.latest.messageId] : [...store.entryPoints.keys()]),
        })
      : undefined;
  confirmation = new Confirmation({ store, tangle, tips, events, ledger: () => ledgerOn, stored: (stored, metadata) => processor.stored(stored, metadata) });
  const processor = new MessageProcessor({ store, tangle, tips, confirmation, events, network, networkId: ownNetworkId, minPoWScore, checkSolidity, ledger: () => ledgerOn });
  const powQueue = new PowQueue({
    maxPending: Math.max(1, powOptions?.maxPending ?? 32),
    maxPerRequester: Math.max(1, powOptions?.maxPerRequester ?? 4),
    run: (bytes, signal) => getMiner().mine(bytes, { minScore: minPoWScore, signal }).catch(minerFailure),
  });
  const selectTips = async (count: number, spammer = false): Promise<string[]> => {
    if (options.tipSource !== undefined) return [...new Set(await options.tipSource(count))].sort().slice(0, count);
    return spammer ? tips!.selectSpammer(count) : tips!.select(count);
  };
  const filler = new Filler({ processor, tips: () => selectTips(TIPS_PER_SELECTION), mine: powOptions === undefined ? undefined : mine });

  let miner: Miner | undefined = powOptions?.miner;
  const ownsMiner = miner === undefined;
  let closed = false;
  let unwatch: (() => void) | undefined;
  const stats = { accepted: 0, rejected: 0, checkpoints: 0 };
  // For /info's rates: messages stored and referenced since the previous milestone, and that milestone's time.
  const sinceMilestone = { stored: 0, referenced: 0, timestamp: undefined as number | undefined };
  let rates = { messagesPerSecond: 0, referencedMessagesPerSecond: 0, referencedRate: 0 };
  events.subscribe((event) => {
    if (event.type === "message") sinceMilestone.stored++;
    else if (event.type === "referenced") sinceMilestone.referenced++;
    else if (event.type === "milestone") {
      const previous = sinceMilestone.timestamp;
      const seconds = previous === undefined ? 0 : event.milestone.timestamp - previous;
      if (seconds > 0) {
        rates = {
          messagesPerSecond: sinceMilestone.stored / seconds,
          referencedMessagesPerSecond: sinceMilestone.referenced / seconds,
          referencedRate: sinceMilestone.stored > 0 ? (sinceMilestone.referenced / sinceMilestone.stored) * 100 : 0,
        };
      }
      sinceMilestone.stored = 0;
      sinceMilestone.referenced = 0;
      sinceMilestone.timestamp = event.milestone.timestamp;
    }
  });

  let opened: Promise<StoreOpenResult> | undefined;
  // Set once the store has opened: reads then go to it at once rather than after an await of the open promise.
  let isOpen = false;
  const ready = (): Promise<StoreOpenResult> =>
    (opened ??= store.open({ network, genesis, snapshot: options.snapshot }).then(async (result) => {
      ledgerOn = result.ledger;
      await rebuild();
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

  /**
   * At start: the latest milestone, then the newest unreferenced messages (oldest first) and the latest milestone's
   * message into the Tangle and tip selection, as if they had just been stored; then, on a store other instances
   * write too, their messages and milestones from now on.
   */
  async function rebuild(): Promise<void> {
    // A gateway keeps no Tangle: its upstream selects tips and confirms.
    if (options.tipSource !== undefined) return;
    const latest = await confirmation.load();
    if (latest !== undefined) {
      const [stored, metadata] = await Promise.all([store.get(latest.messageId), store.metadata(latest.messageId)]);
      if (stored !== undefined && metadata !== undefined) learn(stored, metadata, false);
    }
    const ids = await store.unreferenced(REBUILD_MESSAGES);
    for (let at = 0; at < ids.length; at += 256) {
      const batch = ids.slice(at, at + 256);
      const [messages, metadata] = await Promise.all([Promise.all(batch.map((id) => store.get(id))), Promise.all(batch.map((id) => store.metadata(id)))]);
      batch.forEach((_, i) => {
        const stored = messages[i];
        const m = metadata[i];
        if (stored !== undefined && m !== undefined) learn(stored, m, false);
      });
    }
    tangle.confirm(confirmation.confirmedIndex);
    tips?.rescore();
    tips?.start();
    unwatch = store.watch?.((change) => {
      if (change.type === "message") {
        void Promise.all([store.get(change.id), store.metadata(change.id)])
          .then(([stored, metadata]) => {
            if (stored !== undefined && metadata !== undefined) learn(stored, metadata, true);
          })
          .catch(() => undefined);
      } else void confirmation.external(change.index).catch(() => undefined);
    });
  }

  /** A message the store holds that this process did not store just now: the parts learn it (and, from another
   * instance, the events announce it). */
  function learn(stored: StoredMessage, metadata: MessageMetadata, announce: boolean): void {
    if (tangle.get(stored.id) !== undefined) return;
    if (announce) processor.stored(stored, metadata, { instance: true });
    else {
      tips?.add(stored.id, tangle.add(stored.id, tangle.parentIds(stored.message.parents), metadata.coneRoots, metadata.referencedByMilestoneIndex));
    }
  }

  function getMiner(): Miner {
    if (miner === undefined) miner = createMiner(powOptions?.workers !== undefined ? { workers: powOptions.workers } : {});
    return miner;
  }

  // Mines `bytes` (nonce slot included) at the node's score, through the fair queue. Identical bytes in flight share
  // one job; the job is cancelled when its last waiter goes away.
  function mine(bytes: Uint8Array, submit: FillOptions): Promise<bigint> {
    // The PoW digest covers every byte but the nonce, so equal digests (and lengths) mean identical work.
    const key = `${bytes.length}:${toHex(powDigest(bytes))}`;
    return powQueue.mine(key, bytes, submit.requester ?? "anonymous", submit.signal);
  }

  // The miner's own failures are the node's trouble, not the submitter's: 503 naming the nonce, never a 400.
  function minerFailure(error: unknown): never {
    if (isAbortError(error)) throw error;
    const code = error instanceof ProtocolError ? error.code : "";
    if (code === "POW_QUEUE_FULL") throw new NodeError("POW_QUEUE_FULL", "the node is busy: its PoW queue is full, try again later", { cause: error });
    throw new NodeError("POW_FAILED", `the node could not mine this message: ${(error as Error).message}`, { path: "nonce", cause: error });
  }

  async function fromPartial(partial: PartialMessage, submit: FillOptions, known?: Uint8Array): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    await ready();
    return filler.submit(partial, submit, known);
  }

  async function fromBytes(input: Uint8Array, submit: FillOptions): Promise<SubmitResult> {
    if (closed) throw shuttingDown();
    const { message, parentsMissing } = decodeSubmitted(input);
    // Hornet fills raw bodies as it fills JSON: a zero networkId, no parents or a zero nonce are left to the node.
    if (parentsMissing || message.networkId === 0n || message.nonce === 0n) {
      const partial: PartialMessage = { payload: message.payload, nonce: message.nonce };
      if (message.networkId !== 0n) partial.networkId = message.networkId;
      if (!parentsMissing) partial.parents = message.parents;
      return fromPartial(partial, submit);
    }
    processor.checkNetwork(message.networkId);
    refuseMilestone(message.payload);
    const bytes = copyBytes(input);
    await ready();
    return { message, bytes, ...(await processor.submit(message, bytes)) };
  }

  /** A message of the coordinator's own, checked and mined (the coordinator is one requester of the fair queue like
   * any other): its bytes with their nonce, and what the rules found. */
  async function coordinatorMessage(message: Message, signal: AbortSignal | undefined): Promise<{ bytes: Uint8Array; checked: Checked; nonce: bigint }> {
    if (closed) throw shuttingDown();
    await ready();
    const checked = await processor.check(message, undefined);
    const bytes = encodeMessage({ ...message, nonce: 0n });
    const nonce = processor.meetsPow(bytes) ? 0n : await mine(bytes, { signal, requester: "coordinator" });
    new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - NONCE_LENGTH, nonce, true);
    return { bytes, checked, nonce };
  }

  async function issueMilestone(draft: MilestoneDraft, signal: AbortSignal | undefined): Promise<MilestoneRecord> {
    const { bytes, checked, nonce } = await coordinatorMessage(draft.message, signal);
    const stored = { id: messageId(bytes), bytes, message: { ...draft.message, nonce } } as MilestoneMessage;
    return confirmation.issue(stored, draft.walk, Date.now(), checked.roots);
  }

  async function issueCheckpoint(parents: readonly string[], signal: AbortSignal | undefined): Promise<string> {
    const ids = [...new Set(parents.map((p) => p.toLowerCase()))].sort();
    const message: Message = { networkId: ownNetworkId, parents: ids.map((id, i) => fromHex(id, `parents[${i}]`, MESSAGE_ID_LENGTH)), nonce: 0n };
    const { bytes, checked, nonce } = await coordinatorMessage(message, signal);
    message.nonce = nonce;
    const { messageId: id, stored } = await processor.store(message, bytes, checked);
    if (stored) stats.checkpoints++;
    return id;
  }

  async function nodeInfo(): Promise<NodeInfo> {
    await ready();
    const [, pruningIndex] = await Promise.all([confirmation.load(), store.pruningIndex()]);
    const latest = confirmation.latest;
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
      latestMilestoneIndex: confirmation.latestIndex,
      confirmedMilestoneIndex: confirmation.confirmedIndex,
      pruningIndex,
    };
  }

  /** Hornet's health rule: synced and caught up with what its peers announce, with a latest milestone under
   * MAX_MILESTONE_AGE_SECONDS old. */
  function isHealthy(latest: MilestoneRecord | undefined): boolean {
    return latest !== undefined && confirmation.caughtUp && Date.now() / 1000 - latest.timestamp < MAX_MILESTONE_AGE_SECONDS;
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
    parts: { tangle, tips, confirmation, processor, events },
    ready,
    subscribe(listener: NodeEventListener): () => void {
      return events.subscribe(listener);
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
    async tips(max = TIPS_PER_SELECTION, tipOptions: { spammer?: boolean } = {}): Promise<string[]> {
      await ready();
      return selectTips(max, tipOptions.spammer === true);
    },
    nodeInfo,
    async health(): Promise<boolean> {
      await ready();
      await confirmation.load();
      return isHealthy(confirmation.latest);
    },
    issueMilestone(draft: MilestoneDraft, submitOptions: SubmitOptions = {}): Promise<MilestoneRecord> {
      return issueMilestone(draft, submitOptions.signal);
    },
    issueCheckpoint(parents: readonly string[], submitOptions: SubmitOptions = {}): Promise<string> {
      return issueCheckpoint(parents, submitOptions.signal);
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
      tips?.stop();
      unwatch?.();
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
