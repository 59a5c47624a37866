// The gossip part: a libp2p host speaking Hornet's gossip protocol to static (known) and inbound (unknown) peers, with
// the peer manager (dials, back-off, bans, the unknown-peer limit), the requester, answers from the node, and relays.
import { ProtocolError } from "../../bytes/errors.js";
import { toHex } from "../../bytes/hex.js";
import { MAX_U32, MESSAGE_ID_LENGTH } from "../../bytes/limits.js";
import { blake2b256 } from "../../crypto/blake2b.js";
import { NodeError } from "../errors.js";
import * as K from "./constants.js";
import { encodeHeartbeat, encodeMessageFrame, encodeMessageRequest, encodeMilestoneRequest, type Heartbeat } from "./frames.js";
import { BanList, SeenFilter } from "./filters.js";
import { isPeerId, type P2pIdentity } from "./identity.js";
import { loadStack, type Host, type HostConnection, type HostPeerId, type HostStream, type Stack } from "./libp2p.js";
import { milestoneKey, Requester, type PendingRequest } from "./requester.js";
import { PeerSession, type SessionHost, type SessionLimits, type Wanted } from "./session.js";
import type { DropReason, FrameCounts, GossipNode, GossipStats, PeerHeartbeat, PeerJson, RequestOptions } from "./types.js";

/**
 * Timings (milliseconds) and bounds. Each defaults to Hornet 1.x's value (its gossip and p2p parameters) or, where
 * Hornet has none (it sets no per-peer limits), to this part's own; each must be a finite number ≥ 0 (INVALID_ARGUMENT
 * from createGossip otherwise).
 */
export interface GossipLimits {
  /** Peers that are not static holding a gossip stream at once; one more has its stream reset and its connection
   * closed. Default 4 (Hornet's `p2p.gossip.unknownPeersLimit`). */
  unknownPeersLimit?: number;
  /** Frames waiting to be written to one peer; past it frames are dropped and counted in its `droppedPackets`. Default
   * 1000 (Hornet's per-peer send queue). */
  sendQueueSize?: number;
  /** A peer from which nothing is read for this long is dropped ("timeout", no ban): its stream is reset and its
   * connections closed. A live Hornet sends a heartbeat at least every 30 s. Default 60,000, Hornet's read timeout. */
  readTimeoutMs?: number;
  /** A peer to which one frame's write takes longer is dropped the same way. Default 10,000, Hornet's write timeout. */
  writeTimeoutMs?: number;
  /** Opening the gossip stream on an outbound connection, multistream-select included, gives up after this. When it
   * fails (another network's node refuses the protocol), the connection is closed. Default 4000, as Hornet. */
  streamOpenTimeoutMs?: number;
  /** One dial of a static peer; addPeer waits at most this for it. Default 5000, as Hornet dials its known peers. */
  dialTimeoutMs?: number;
  /** How often peers' heartbeats are checked (`firstHeartbeatMs`, `heartbeatTimeoutMs`) and ours sent to the peers
   * that need one. At least 1; default 5000, as Hornet. */
  heartbeatCheckMs?: number;
  /** A peer not sent a heartbeat for this long is sent one at the next check (every peer gets one whenever the node's
   * status changes). Default 30,000, as Hornet. */
  heartbeatMaxSilenceMs?: number;
  /** A peer whose stream is this old and that has sent no heartbeat is dropped ("liveness"): Hornet drops it at its
   * first check after 5 s, so the default is 5000. */
  firstHeartbeatMs?: number;
  /** After its first, a peer silent for longer is dropped the same way. Default 100,000, as Hornet. */
  heartbeatTimeoutMs?: number;
  /** Identical message bytes are handed to the node once within this window: a copy counts in `knownMessages`, its
   * sender is not relayed to, and shares the first sender's fate if the node finds the message invalid. Default 5000
   * (Hornet's `incomingMessagesFilter`). */
  dedupWindowMs?: number;
  /** Message ids the duplicate filter holds at most (two generations of half each), so a flood of distinct messages
   * costs bounded memory and only shortens the window. At least 2; default 50,000. */
  dedupSize?: number;
  /** A pending request is re-sent this often until answered. At least 1; default 5000, as Hornet. */
  requestRetryMs?: number;
  /** A pending request not answered for this long is given up (counted in `discarded`), unless made with
   * `preventDiscard`. Default 15,000, as Hornet. */
  requestDiscardMs?: number;
  /** Requests pending at most, messages and milestones together; one more is refused (request() answers false). At
   * least 1; default 10,000. */
  requestQueueSize?: number;
  /** A static peer whose connection is lost or whose dial failed is dialled again after this, doubled after each
   * failure up to `backoffMaxMs`, with up to 25 % more at random, and back to this after a heartbeat from it. Default
   * 1000 (Hornet redials every 30 s). */
  backoffStartMs?: number;
  /** The longest back-off. Default 30,000: the interval Hornet redials at (`p2p.reconnectInterval`). */
  backoffMaxMs?: number;
  /** A peer dropped for a malformed frame, an invalid message or a flood is refused at the handshake and not dialled
   * for this long (addPeer lifts it). Default 10 minutes; Hornet bans nobody, it only forgets the peer. */
  banMs?: number;
  /** Bans held at most; when full, expired ones go first, then the one ending soonest. Default 1024. */
  banTableSize?: number;
  /** Frames one peer may send per second, no-op frames included (a bucket of one second's worth); one more drops it
   * as a flood. At least 1; default 50,000, far above an honest Hornet's, a warp sync's re-sends included. */
  maxFramesPerSecond?: number;
  /** Message and milestone requests one peer may send per second, likewise. At least 1; default 20,000. */
  maxRequestsPerSecond?: number;
  /** One peer's requests waiting for a store read (four run at once); past it they are dropped and counted in its
   * `droppedPackets`. Default 256. */
  answerQueueSize?: number;
  /** One peer's messages in the node's hands at once; past it that peer's stream is not read until one is done, so
   * TCP slows the peer down instead of memory filling up. At least 1; default 32. */
  maxReceiving?: number;
  /** Static peers at most; addPeer past it fails (COUNT_OUT_OF_RANGE). Default 256. */
  maxKnownPeers?: number;
  /** Connections libp2p holds at most, all peers together. At least 1; default 64 (unknown peers hold few: the
   * stream slots, and a connection without a stream closes after `streamWaitMs`). */
  maxConnections?: number;
  /** A connection with no gossip stream this long after it opened is closed: it only holds a slot. Default 10,000. */
  streamWaitMs?: number;
  /** New inbound connections accepted per second from one IP address (libp2p's `inboundConnectionThreshold`). At
   * least 1; default 5. */
  inboundConnectionsPerSecond?: number;
}

/** A static peer as peering.json lists one. */
export interface StaticPeer {
  /** Where to dial it, ending in its peer id: `/ip4/10.0.0.2/tcp/15600/p2p/12D3KooW…`. */
  multiAddress: string;
  /** A name for the operator, shown in the REST peer (left out when empty). */
  alias?: string | undefined;
}

/** What the gossip part reports for the log. */
export type GossipEvent =
  | {
      /** A gossip stream started. */
      type: "connected";
      /** The peer it is with. */
      peerId: string;
      /** Whether that peer is static. */
      relation: "known" | "unknown";
      /** True when this side opened the stream (as in Hornet, the side whose connection is outbound opens it). */
      opener: boolean;
    }
  | {
      /** Gossip ended a peer's stream and closed its connections (a fault, a timeout), or refused its stream. */
      type: "dropped";
      /** The peer dropped. */
      peerId: string;
      /** Why; "malformed", "invalid" and "flood" also ban it for `banMs`. */
      reason: DropReason;
      /** What happened, in words. */
      error: string | undefined;
      /** When its ban ends (ms since the epoch, on the `now` clock); undefined when it is not banned. */
      bannedUntil: number | undefined;
    }
  | {
      /** A gossip stream ended and gossip did not blame the peer: either side closed it, its connection was lost, a
       * stream opened at the same time replaced it, or gossip stopped. */
      type: "closed";
      /** The peer it was with. */
      peerId: string;
    }
  | {
      /** A dial, or opening the stream on a new connection, failed. */
      type: "dial-failed";
      /** The peer dialled. */
      peerId: string;
      /** The back-off before a static peer is dialled again (plus up to 25 %, or longer while it is banned); 0 for a
       * peer that is not static, which is not dialled again. */
      retryInMs: number;
      /** The error's message. */
      error: string;
    }
  | {
      /** The node's receive() or a heartbeat listener threw; gossip goes on (the message counts as ignored). */
      type: "error";
      /** What was thrown. */
      error: unknown;
    };

/** What createGossip needs: the node it serves and its identity; the rest have defaults. */
export interface GossipOptions extends GossipLimits {
  /** The node gossip serves (NetworkNode is one): what heartbeats announce, what requests are answered from, and where
   * messages from peers go. */
  node: GossipNode;
  /** The node's libp2p identity: its key secures every connection, its peer id is what peers dial. */
  identity: P2pIdentity;
  /** Where to listen (default `/ip4/127.0.0.1/tcp/15600`, Hornet's flag default). */
  listen?: readonly string[];
  /** Static peers, dialled at start and whenever their connection is lost. */
  peers?: readonly StaticPeer[];
  /** Called with each stream started and ended, peer dropped, dial failed and error, for the log. Default: nothing. */
  onEvent?: (event: GossipEvent) => void;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

/** The gossip part as the node and the REST routes use it. */
export interface Gossip {
  /** This node's peer id, its identity's. */
  readonly peerId: string;
  /** `/iota-gossip/<networkId>/1.0.0`. */
  readonly protocol: string;
  /** Loads libp2p, listens and dials every static peer; resolves once listening (a failed dial is retried with
   * back-off, not an error), and does nothing while running. Rejects when libp2p cannot load, a static peer's address
   * is not a multiaddr, or the host cannot listen. */
  start(): Promise<void>;
  /** Ends every stream, forgets the pending requests and stops the host; start() may be called again. */
  stop(): Promise<void>;
  /** Where the host listens, each ending in /p2p/<peerId> (empty until started). */
  listenAddresses(): string[];
  /** Queues a message frame to every peer with a stream but those named and those that sent it; returns how many. */
  broadcast(bytes: Uint8Array, id: Uint8Array, exceptPeerIds?: Iterable<string>): number;
  /** Asks peers for a message needed for milestone `milestoneIndex`; false when the request queue is full. */
  request(id: Uint8Array, milestoneIndex: number, options?: RequestOptions): boolean;
  /** Asks peers for the milestone of this index (0: each peer's latest, sent once, not kept pending). */
  requestMilestone(index: number): boolean;
  /** The message arrived by another way (the API): its request is done. */
  received(id: Uint8Array): void;
  /** The milestone of this index is stored: its request is done. */
  milestoneReceived(index: number): void;
  /** The node's solid, pruned or latest index changed: heartbeats go to every peer. */
  statusChanged(): void;
  /** Every peer static, connected or with a stream, as GET /api/v1/peers lists them. */
  peers(): PeerJson[];
  /** One peer as GET /api/v1/peers/{id} shows it; undefined when it is neither static nor connected (REST's 404). */
  peer(peerId: string): PeerJson | undefined;
  /** Adds (or updates) a known peer and waits for one dial (at most the dial timeout); a failed dial is not an error. */
  addPeer(multiAddress: string, alias?: string): Promise<PeerJson>;
  /** Forgets a known peer and disconnects it; nothing happens for a peer never added. */
  removePeer(peerId: string): Promise<void>;
  /** Called with each heartbeat a peer sends (warp sync reads the highest solid index). Returns the unsubscribe. */
  onHeartbeat(listener: (heartbeat: PeerHeartbeat) => void): () => void;
  /** The totals and counts the metrics endpoint exports. */
  stats(): GossipStats;
}

interface Known {
  readonly peerId: string;
  /** The address without /p2p/ (as REST shows it) and the one dialled. */
  address: string;
  full: string;
  alias: string | undefined;
  backoffMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Live {
  readonly session: PeerSession;
  readonly connection: HostConnection;
}

const P2P_CODE = 421;
const PENALTIES: ReadonlySet<DropReason> = new Set(["malformed", "invalid", "flood"]);
const emptyFrames = (): FrameCounts => ({ milestoneRequest: 0, message: 0, messageRequest: 0, heartbeat: 0 });
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function positive(value: number | undefined, fallback: number, path: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0) throw new ProtocolError("INVALID_ARGUMENT", `${path} must be a non-negative number`, { path });
  return v;
}

/**
 * The gossip part for `options.node`, not started (libp2p loads at start()). Limits and static peers are checked here:
 * INVALID_ARGUMENT for a limit, INVALID_MULTIADDR or INVALID_PEER_ID for a peer's address.
 */
export function createGossip(options: GossipOptions): Gossip {
  const node = options.node;
  const identity = options.identity;
  const selfId = identity.peerId;
  const now = options.now ?? Date.now;
  const onEvent = options.onEvent ?? (() => undefined);
  const protocol = K.gossipProtocolId(node.networkId);
  const o = (key: keyof GossipLimits, fallback: number): number => positive(options[key], fallback, key);
  const limits = {
    unknownPeersLimit: o("unknownPeersLimit", K.DEFAULT_UNKNOWN_PEERS_LIMIT),
    streamOpenTimeoutMs: o("streamOpenTimeoutMs", K.DEFAULT_STREAM_OPEN_TIMEOUT_MS),
    dialTimeoutMs: o("dialTimeoutMs", K.DEFAULT_DIAL_TIMEOUT_MS),
    heartbeatCheckMs: Math.max(1, o("heartbeatCheckMs", K.DEFAULT_HEARTBEAT_CHECK_MS)),
    heartbeatMaxSilenceMs: o("heartbeatMaxSilenceMs", K.DEFAULT_HEARTBEAT_MAX_SILENCE_MS),
    firstHeartbeatMs: o("firstHeartbeatMs", K.DEFAULT_FIRST_HEARTBEAT_MS),
    heartbeatTimeoutMs: o("heartbeatTimeoutMs", K.DEFAULT_HEARTBEAT_TIMEOUT_MS),
    requestRetryMs: Math.max(1, o("requestRetryMs", K.DEFAULT_REQUEST_RETRY_MS)),
    backoffStartMs: o("backoffStartMs", K.DEFAULT_BACKOFF_START_MS),
    backoffMaxMs: o("backoffMaxMs", K.DEFAULT_BACKOFF_MAX_MS),
    banMs: o("banMs", K.DEFAULT_BAN_MS),
    maxKnownPeers: o("maxKnownPeers", K.DEFAULT_MAX_KNOWN_PEERS),
    maxConnections: Math.max(1, o("maxConnections", K.DEFAULT_MAX_CONNECTIONS)),
    streamWaitMs: o("streamWaitMs", K.DEFAULT_STREAM_WAIT_MS),
    inboundConnectionsPerSecond: Math.max(1, o("inboundConnectionsPerSecond", K.DEFAULT_INBOUND_CONNECTIONS_PER_SECOND)),
  };
  const sessionLimits: SessionLimits = {
    sendQueueSize: o("sendQueueSize", K.DEFAULT_SEND_QUEUE_SIZE),
    answerQueueSize: o("answerQueueSize", K.DEFAULT_ANSWER_QUEUE_SIZE),
    maxReceiving: Math.max(1, o("maxReceiving", K.DEFAULT_MAX_RECEIVING)),
    maxFramesPerSecond: Math.max(1, o("maxFramesPerSecond", K.DEFAULT_MAX_FRAMES_PER_SECOND)),
    maxRequestsPerSecond: Math.max(1, o("maxRequestsPerSecond", K.DEFAULT_MAX_REQUESTS_PER_SECOND)),
    readTimeoutMs: o("readTimeoutMs", K.DEFAULT_READ_TIMEOUT_MS),
    writeTimeoutMs: o("writeTimeoutMs", K.DEFAULT_WRITE_TIMEOUT_MS),
  };

  const known = new Map<string, Known>();
  const live = new Map<string, Live>();
  /** The connection each session runs on (a session outlives its place in `live` when a stream replaces it). */
  const connectionOf = new WeakMap<PeerSession, HostConnection>();
  /** Peers whose outbound stream is being opened. */
  const opening = new Set<string>();
  const bans = new BanList(o("banTableSize", K.DEFAULT_BAN_TABLE_SIZE));
  const seen = new SeenFilter(o("dedupWindowMs", K.DEFAULT_DEDUP_WINDOW_MS), Math.max(2, o("dedupSize", K.DEFAULT_DEDUP_SIZE)), K.MAX_SENDERS_PER_MESSAGE, now());
  const heartbeatListeners = new Set<(heartbeat: PeerHeartbeat) => void>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const intervals: ReturnType<typeof setInterval>[] = [];
  const totals = {
    framesIn: emptyFrames(),
    framesOut: emptyFrames(),
    peersDropped: { malformed: 0, invalid: 0, flood: 0, liveness: 0, timeout: 0, refused: 0 } satisfies Record<DropReason, number>,
    droppedPackets: 0,
    duplicateMessages: 0,
  };
  let stack: Stack | undefined;
  let host: Host | undefined;
  let running = false;
  let heartbeatsQueued = false;

  const requester = new Requester(
    { limit: Math.max(1, o("requestQueueSize", K.DEFAULT_REQUEST_QUEUE_SIZE)), retryMs: limits.requestRetryMs, discardMs: o("requestDiscardMs", K.DEFAULT_REQUEST_DISCARD_MS) },
    sendRequest,
  );

  for (const peer of options.peers ?? []) {
    const parsed = parseStatic(peer.multiAddress, (text) => syntaxOnly(text));
    addKnown(parsed.peerId, parsed.address, peer.multiAddress, peer.alias);
  }

  // --- The session host: what every peer's stream calls back.

  const sessionHost: SessionHost = {
    now,
    framesIn: totals.framesIn,
    framesOut: totals.framesOut,
    droppedPacket: () => void totals.droppedPackets++,
    message: receiveMessage,
    answer: (wanted: Wanted) => (wanted.kind === "message" ? node.messageBytes(wanted.id) : node.milestoneBytes(wanted.index)),
    heartbeat(session, heartbeat) {
      const k = known.get(session.peerId);
      if (k !== undefined) k.backoffMs = limits.backoffStartMs;
      const event: PeerHeartbeat = { peerId: session.peerId, ...heartbeat };
      for (const listener of heartbeatListeners) {
        try {
          listener(event);
        } catch (error) {
          onEvent({ type: "error", error });
        }
      }
    },
    ended(session, reason, error) {
      const connection = connectionOf.get(session);
      if (live.get(session.peerId)?.session === session) live.delete(session.peerId);
      if (reason === undefined) {
        onEvent({ type: "closed", peerId: session.peerId });
      } else {
        totals.peersDropped[reason]++;
        const banned = PENALTIES.has(reason) && running;
        if (banned) bans.ban(session.peerId, now() + limits.banMs, now());
        onEvent({ type: "dropped", peerId: session.peerId, reason, error: error === undefined ? undefined : message(error), bannedUntil: banned ? now() + limits.banMs : undefined });
      }
      if (host === undefined || connection === undefined) return;
      // A dropped peer loses every connection (known ones reconnect when the ban allows); a stream that ended loses
      // its connection, which holds nothing else, unless a stream that replaced it runs there.
      if (reason !== undefined) void host.hangUp(connection.remotePeer).catch(() => undefined);
      else if (live.get(session.peerId)?.connection !== connection) void connection.close().catch(() => undefined);
    },
  };

  async function receiveMessage(session: PeerSession, bytes: Uint8Array): Promise<void> {
    const id = blake2b256(bytes);
    const key = toHex(id);
    const at = now();
    const earlier = seen.get(key, at);
    // A copy the node ignored (it came unasked while the node was not synced) is no answer to the request made since:
    // this one is, and goes to the node (Hornet hands a cached message to the node again when a request names it).
    if (earlier !== undefined && !(earlier.verdict === "ignored" && requester.has(key))) {
      totals.duplicateMessages++;
      session.metrics.knownMessages++;
      seen.addSender(earlier, session.peerId);
      if (earlier.verdict === "invalid") session.end("invalid", new Error("sent the bytes of a message found invalid"));
      return;
    }
    if (earlier !== undefined) seen.addSender(earlier, session.peerId);
    const entry = earlier ?? seen.add(key, session.peerId, at);
    const requested = requester.answered(key);
    if (node.knows(id)) {
      entry.verdict = "known";
      session.metrics.knownMessages++;
      return;
    }
    let verdict: "new" | "known" | "invalid" | "ignored";
    try {
      verdict = await node.receive(bytes, id, session.peerId, requested);
    } catch (error) {
      onEvent({ type: "error", error });
      verdict = "ignored";
    }
    entry.verdict = verdict;
    if (verdict === "new") session.metrics.newMessages++;
    else if (verdict === "known") session.metrics.knownMessages++;
    else if (verdict === "invalid") {
      // Hornet's rule: every peer that sent the same bytes within the window is at fault too.
      for (const sender of entry.senders) {
        const other = live.get(sender)?.session;
        if (other !== undefined) other.end("invalid", new Error("sent a message the node found invalid"));
        else if (running) bans.ban(sender, now() + limits.banMs, now());
      }
    }
  }

  // --- Requests.

  /** The peers to ask for something needed at `index` (`GOSSIP.md` §4 Requests). */
  function requestTargets(index: number): PeerSession[] {
    const withHeartbeat: PeerSession[] = [];
    for (const { session } of live.values()) {
      const h = session.heartbeat;
      if (h === undefined || session.ended) continue;
      if (h.prunedMilestoneIndex < index && index <= h.solidMilestoneIndex) return [session];
      withHeartbeat.push(session);
    }
    return withHeartbeat.filter((s) => s.heartbeat!.prunedMilestoneIndex < index && index <= s.heartbeat!.latestMilestoneIndex);
  }

  function sendRequest(request: PendingRequest): number {
    const targets = requestTargets(request.index);
    if (targets.length === 0) return 0;
    const frame = request.kind === "message" ? encodeMessageRequest(request.id!) : encodeMilestoneRequest(request.index);
    const type = request.kind === "message" ? K.MESSAGE_REQUEST_FRAME_TYPE : K.MILESTONE_REQUEST_FRAME_TYPE;
    let sent = 0;
    for (const target of targets) if (target.send(frame, type)) sent++;
    return sent;
  }

  // --- Heartbeats and liveness.

  function heartbeatFrame(): Uint8Array {
    const status = node.status();
    let synced = 0;
    for (const { session } of live.values()) {
      const h = session.heartbeat;
      if (h !== undefined && h.solidMilestoneIndex >= Math.max(h.latestMilestoneIndex, status.latest) - K.SYNCED_NEIGHBOR_SLACK) synced++;
    }
    const clamp = (n: number): number => Math.min(Math.max(0, Math.floor(n)), MAX_U32);
    const heartbeat: Heartbeat = { solidMilestoneIndex: clamp(status.solid), prunedMilestoneIndex: clamp(status.pruned), latestMilestoneIndex: clamp(status.latest), connectedNeighbors: live.size, syncedNeighbors: synced };
    return encodeHeartbeat(heartbeat);
  }

  function heartbeatsToAll(): void {
    heartbeatsQueued = false;
    if (!running || live.size === 0) return;
    const frame = heartbeatFrame();
    for (const { session } of live.values()) session.send(frame, K.HEARTBEAT_FRAME_TYPE);
  }

  function heartbeatCheck(): void {
    const at = now();
    let frame: Uint8Array | undefined;
    for (const { session } of [...live.values()]) {
      const age = at - session.startedAt;
      if (age >= limits.firstHeartbeatMs && (session.heartbeatAt === undefined || at - session.heartbeatAt > limits.heartbeatTimeoutMs)) {
        session.end("liveness", new Error(session.heartbeatAt === undefined ? "no heartbeat since the stream started" : `no heartbeat for ${at - session.heartbeatAt} ms`));
        continue;
      }
      if (at - session.heartbeatSentAt >= limits.heartbeatMaxSilenceMs) session.send((frame ??= heartbeatFrame()), K.HEARTBEAT_FRAME_TYPE);
    }
  }

  // --- Streams.

  function accept(peerId: string, stream: HostStream, connection: HostConnection, opener: boolean): void {
    const session = new PeerSession(peerId, opener, stream, sessionHost, sessionLimits);
    connectionOf.set(session, connection);
    live.set(peerId, { session, connection });
    onEvent({ type: "connected", peerId, relation: known.has(peerId) ? "known" : "unknown", opener });
    session.start([
      { frame: heartbeatFrame(), type: K.HEARTBEAT_FRAME_TYPE },
      { frame: encodeMilestoneRequest(K.LATEST_MILESTONE_INDEX), type: K.MILESTONE_REQUEST_FRAME_TYPE },
    ]);
  }

  function refuse(peerId: string, stream: HostStream, connection: HostConnection, why: string): void {
    totals.peersDropped.refused++;
    onEvent({ type: "dropped", peerId, reason: "refused", error: why, bannedUntil: bans.until(peerId, now()) });
    stream.abort(new Error(why));
    void connection.close().catch(() => undefined);
  }

  function unknownStreams(): number {
    let n = 0;
    for (const peerId of live.keys()) if (!known.has(peerId)) n++;
    return n;
  }

  function inbound(stream: HostStream, connection: HostConnection): void {
    const peerId = connection.remotePeer.toString();
    if (!running) return void stream.abort(new Error("gossip is stopping"));
    if (bans.isBanned(peerId, now())) return refuse(peerId, stream, connection, "banned");
    const existing = live.get(peerId);
    if (existing !== undefined || opening.has(peerId)) {
      // Both sides dialled at once: the stream opened by the lower peer id stays, on both sides alike.
      const ours = existing === undefined ? true : existing.session.opener;
      if (!(ours && peerId < selfId)) return refuse(peerId, stream, connection, "duplicated stream");
      // Theirs replaces ours: accepted first, so that closing ours spares the connection if both run on it.
      accept(peerId, stream, connection, false);
      existing?.session.end(undefined, undefined);
      return;
    }
    if (!known.has(peerId) && unknownStreams() >= limits.unknownPeersLimit) return refuse(peerId, stream, connection, "no free slot for an unknown peer");
    accept(peerId, stream, connection, false);
  }

  async function open(connection: HostConnection): Promise<void> {
    const peerId = connection.remotePeer.toString();
    if (live.has(peerId) || opening.has(peerId) || !running) return;
    opening.add(peerId);
    let stream: HostStream;
    try {
      stream = await connection.newStream(protocol, { signal: AbortSignal.timeout(limits.streamOpenTimeoutMs) });
    } catch (error) {
      opening.delete(peerId);
      // Another network's node (no such protocol) or a peer that did not answer in time: the connection is of no use.
      onEvent({ type: "dial-failed", peerId, retryInMs: known.get(peerId)?.backoffMs ?? 0, error: message(error) });
      void connection.close().catch(() => undefined);
      return;
    }
    opening.delete(peerId);
    if (!running || live.has(peerId) || bans.isBanned(peerId, now())) return void stream.abort(new Error("not needed"));
    accept(peerId, stream, connection, true);
  }

  function later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  }

  function connectionOpened(connection: HostConnection): void {
    const peerId = connection.remotePeer.toString();
    if (bans.isBanned(peerId, now())) return void connection.close().catch(() => undefined);
    if (connection.direction === "outbound") void open(connection);
    // A connection that carries no gossip stream after a while only holds a slot.
    later(limits.streamWaitMs, () => {
      if (running && live.get(peerId)?.connection !== connection && connection.status === "open" && !opening.has(peerId)) void connection.close().catch(() => undefined);
    });
  }

  function peerDisconnected(peer: HostPeerId): void {
    const peerId = peer.toString();
    live.get(peerId)?.session.end(undefined, undefined);
    const k = known.get(peerId);
    if (k !== undefined) return scheduleDial(k);
    // libp2p's peer store keeps every peer that ever connected; only known ones are worth remembering.
    void host?.peerStore.delete(peer).catch(() => undefined);
  }

  // --- Known peers and dialling.

  function syntaxOnly(text: string): { peerId: string; address: string } {
    // Before the stack is loaded (options.peers at construction): /…/p2p/<id> checked by hand, fully once started.
    const match = /^(\/.+)\/p2p\/([^/]+)$/.exec(text);
    if (match === null) throw new ProtocolError("INVALID_MULTIADDR", "a static peer's address ends in /p2p/<peer id>", { path: "multiAddress" });
    return { address: match[1]!, peerId: match[2]! };
  }

  function parseStatic(text: unknown, parse: (text: string) => { peerId: string | undefined; address: string }): { peerId: string; address: string } {
    if (typeof text !== "string" || text.length === 0 || text.length > 1024) throw new ProtocolError("INVALID_MULTIADDR", "a multiaddr is a text of at most 1024 characters", { path: "multiAddress" });
    let parsed: { peerId: string | undefined; address: string };
    try {
      parsed = parse(text);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      throw new ProtocolError("INVALID_MULTIADDR", `not a multiaddr: ${message(error)}`, { path: "multiAddress" });
    }
    if (parsed.peerId === undefined) throw new ProtocolError("INVALID_MULTIADDR", "a static peer's address ends in /p2p/<peer id>", { path: "multiAddress" });
    if (!isPeerId(parsed.peerId)) throw new ProtocolError("INVALID_PEER_ID", "the address's /p2p/ part is not a peer id", { path: "multiAddress" });
    return { peerId: parsed.peerId, address: parsed.address };
  }

  function addKnown(peerId: string, address: string, full: string, alias: string | undefined): Known {
    if (peerId === selfId) throw new NodeError("NOT_FOUND", "that is this node's own peer id");
    const existing = known.get(peerId);
    if (existing !== undefined) {
      existing.address = address;
      existing.full = full;
      existing.alias = alias;
      return existing;
    }
    if (known.size >= limits.maxKnownPeers) throw new ProtocolError("COUNT_OUT_OF_RANGE", `at most ${limits.maxKnownPeers} static peers`, { path: "multiAddress" });
    const k: Known = { peerId, address, full, alias, backoffMs: limits.backoffStartMs, timer: undefined };
    known.set(peerId, k);
    return k;
  }

  function connectionsOf(peerId: string): HostConnection[] {
    if (host === undefined) return [];
    return host.getConnections().filter((c) => c.remotePeer.toString() === peerId && c.status === "open");
  }

  function scheduleDial(k: Known): void {
    if (!running || k.timer !== undefined || known.get(k.peerId) !== k) return;
    const banEnds = bans.until(k.peerId, now());
    const wait = Math.max(Math.round(k.backoffMs * (1 + Math.random() * K.BACKOFF_JITTER)), banEnds === undefined ? 0 : banEnds - now());
    k.backoffMs = Math.min(limits.backoffMaxMs, Math.max(1, k.backoffMs * 2));
    k.timer = setTimeout(() => {
      k.timer = undefined;
      void dial(k);
    }, wait);
  }

  /** One dial of a known peer; on failure the next is scheduled with back-off. */
  async function dial(k: Known): Promise<void> {
    if (!running || host === undefined || stack === undefined || known.get(k.peerId) !== k) return;
    if (connectionsOf(k.peerId).length > 0) return;
    if (bans.isBanned(k.peerId, now())) return scheduleDial(k);
    try {
      await host.dial(stack.multiaddr(k.full), { signal: AbortSignal.timeout(limits.dialTimeoutMs) });
    } catch (error) {
      onEvent({ type: "dial-failed", peerId: k.peerId, retryInMs: k.backoffMs, error: message(error) });
      if (connectionsOf(k.peerId).length === 0) scheduleDial(k);
    }
  }

  // --- Peers as REST shows them.

  function peerJson(peerId: string): PeerJson | undefined {
    const k = known.get(peerId);
    const entry = live.get(peerId);
    const connections = connectionsOf(peerId);
    if (k === undefined && entry === undefined && connections.length === 0) return undefined;
    const addresses = k !== undefined ? [k.address] : [...new Set(connections.map((c) => c.remoteAddr.decapsulateCode(P2P_CODE).toString()))];
    const json: PeerJson = { id: peerId, multiAddresses: addresses, relation: k !== undefined ? "known" : "unknown", connected: connections.length > 0 || entry !== undefined };
    if (k?.alias !== undefined && k.alias !== "") json.alias = k.alias;
    if (entry !== undefined) json.gossip = { heartbeat: entry.session.heartbeat === undefined ? null : { ...entry.session.heartbeat }, metrics: { ...entry.session.metrics } };
    return json;
  }

  function peerIds(): string[] {
    const ids = new Set<string>([...known.keys(), ...live.keys()]);
    if (host !== undefined) for (const c of host.getConnections()) ids.add(c.remotePeer.toString());
    return [...ids];
  }

  function assertId(id: Uint8Array, path: string): void {
    if (!(id instanceof Uint8Array) || id.length !== MESSAGE_ID_LENGTH) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message id is ${MESSAGE_ID_LENGTH} bytes`, { path });
  }

  function assertIndex(index: number, path: string): void {
    if (!Number.isInteger(index) || index < 0 || index > MAX_U32) throw new ProtocolError("VALUE_OUT_OF_RANGE", `a milestone index is 0 .. ${MAX_U32}`, { path });
  }

  return {
    peerId: selfId,
    protocol,

    async start() {
      if (running) return;
      stack = await loadStack();
      const loaded = stack;
      // Static peers given as text before the stack was loaded are checked in full before anything listens.
      for (const k of known.values()) parseStatic(k.full, (text) => ({ peerId: loaded.multiaddr(text).getPeerId() ?? undefined, address: k.address }));
      const created = await stack.createHost({
        seed: identity.seed,
        listen: options.listen ?? ["/ip4/127.0.0.1/tcp/15600"],
        refuse: (peerId) => bans.isBanned(peerId, now()),
        maxConnections: limits.maxConnections,
        inboundConnectionsPerSecond: limits.inboundConnectionsPerSecond,
        dialTimeoutMs: limits.dialTimeoutMs,
      });
      host = created;
      created.addEventListener("connection:open", (event) => connectionOpened(event.detail));
      created.addEventListener("peer:disconnect", (event) => peerDisconnected(event.detail));
      await created.handle(protocol, ({ stream, connection }) => inbound(stream, connection), { maxInboundStreams: 2, maxOutboundStreams: 2 });
      running = true;
      try {
        await created.start();
      } catch (error) {
        running = false;
        host = undefined;
        await Promise.resolve(created.stop()).catch(() => undefined);
        throw error;
      }
      const tick = Math.max(1, Math.min(1000, limits.requestRetryMs / 5, (sessionLimits.readTimeoutMs || 1000) / 10, (sessionLimits.writeTimeoutMs || 1000) / 10));
      intervals.push(
        setInterval(heartbeatCheck, limits.heartbeatCheckMs),
        setInterval(() => {
          const at = now();
          requester.tick(at);
          for (const { session } of [...live.values()]) session.tick(at);
        }, tick),
      );
      for (const k of known.values()) void dial(k);
    },

    async stop() {
      if (!running && host === undefined) return;
      running = false;
      for (const interval of intervals.splice(0)) clearInterval(interval);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const k of known.values()) {
        if (k.timer !== undefined) clearTimeout(k.timer);
        k.timer = undefined;
        k.backoffMs = limits.backoffStartMs;
      }
      for (const { session } of [...live.values()]) session.end(undefined, undefined);
      live.clear();
      opening.clear();
      requester.clear();
      const stopping = host;
      host = undefined;
      await stopping?.stop();
    },

    listenAddresses() {
      return host === undefined ? [] : host.getMultiaddrs().map((m) => m.toString());
    },

    broadcast(bytes, id, exceptPeerIds = []) {
      assertId(id, "id");
      if (!running || live.size === 0) return 0;
      const except = new Set(exceptPeerIds);
      for (const sender of seen.get(toHex(id), now())?.senders ?? []) except.add(sender);
      const frame = encodeMessageFrame(bytes);
      let sent = 0;
      for (const [peerId, { session }] of live) if (!except.has(peerId) && session.send(frame, K.MESSAGE_FRAME_TYPE)) sent++;
      return sent;
    },

    request(id, milestoneIndex, requestOptions = {}) {
      assertId(id, "id");
      assertIndex(milestoneIndex, "milestoneIndex");
      return requester.request("message", toHex(id), Uint8Array.from(id), milestoneIndex, requestOptions.preventDiscard === true, now());
    },

    requestMilestone(index) {
      assertIndex(index, "index");
      if (index === K.LATEST_MILESTONE_INDEX) {
        const frame = encodeMilestoneRequest(index);
        let sent = 0;
        for (const { session } of live.values()) if (session.heartbeat !== undefined && session.send(frame, K.MILESTONE_REQUEST_FRAME_TYPE)) sent++;
        return sent > 0;
      }
      return requester.request("milestone", milestoneKey(index), undefined, index, false, now());
    },

    received(id) {
      assertId(id, "id");
      requester.answered(toHex(id));
    },

    milestoneReceived(index) {
      requester.answered(milestoneKey(index));
    },

    statusChanged() {
      if (heartbeatsQueued || !running) return;
      heartbeatsQueued = true;
      // Several changes in one turn (a milestone confirms and becomes the latest) make one heartbeat.
      queueMicrotask(heartbeatsToAll);
    },

    peers() {
      return peerIds()
        .map(peerJson)
        .filter((p): p is PeerJson => p !== undefined);
    },

    peer(peerId) {
      return peerJson(peerId);
    },

    async addPeer(multiAddress, alias) {
      const parseWith = stack ?? (await loadStack());
      const parsed = parseStatic(multiAddress, (text) => {
        const ma = parseWith.multiaddr(text);
        return { peerId: ma.getPeerId() ?? undefined, address: ma.decapsulateCode(P2P_CODE).toString() };
      });
      const k = addKnown(parsed.peerId, parsed.address, multiAddress, alias === undefined || alias === "" ? undefined : alias);
      // The operator asked for this peer: a ban is lifted, and its back-off starts over.
      bans.lift(k.peerId);
      k.backoffMs = limits.backoffStartMs;
      if (running && host !== undefined) {
        if (k.timer !== undefined) {
          clearTimeout(k.timer);
          k.timer = undefined;
        }
        const connections = connectionsOf(k.peerId);
        // Known now: a connected peer without a stream gets one even on an inbound connection.
        if (connections.length > 0) {
          if (!live.has(k.peerId)) await open(connections[0]!);
        } else await dial(k);
      }
      return peerJson(k.peerId) ?? { id: k.peerId, multiAddresses: [k.address], relation: "known", connected: false, ...(k.alias !== undefined ? { alias: k.alias } : {}) };
    },

    async removePeer(peerId) {
      const k = known.get(peerId);
      if (k === undefined) return;
      if (k.timer !== undefined) clearTimeout(k.timer);
      known.delete(peerId);
      if (host !== undefined) {
        const connection = connectionsOf(peerId)[0];
        if (connection !== undefined) await host.hangUp(connection.remotePeer).catch(() => undefined);
      }
    },

    onHeartbeat(listener) {
      heartbeatListeners.add(listener);
      return () => void heartbeatListeners.delete(listener);
    },

    stats() {
      const at = now();
      return {
        peers: { known: known.size, connected: new Set(host?.getConnections().map((c) => c.remotePeer.toString()) ?? []).size, streams: live.size, unknownStreams: unknownStreams(), banned: bans.count(at) },
        framesIn: { ...totals.framesIn },
        framesOut: { ...totals.framesOut },
        requests: { ...requester.counts, pending: requester.pending },
        peersDropped: { ...totals.peersDropped },
        droppedPackets: totals.droppedPackets,
        duplicateMessages: totals.duplicateMessages,
      };
    },
  };
}
