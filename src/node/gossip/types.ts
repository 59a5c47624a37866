// The gossip part's contract with the node it serves (GossipNode) and the shapes it hands out: peers as Hornet's REST
// API shows them, heartbeats, per-peer metrics and the totals the metrics endpoint exports.
import type { Heartbeat } from "./frames.js";

/** What the gossip part asks of the node it serves. */
export interface GossipNode {
  /** The node's network id (the first 8 bytes of BLAKE2b-256 of the network's name, a u64 little-endian): it names the
   * gossip protocol, `/iota-gossip/<networkId>/1.0.0`, so another network's node fails negotiation before any frame. */
  readonly networkId: bigint;
  /** What every heartbeat sent announces, read afresh for each. */
  status(): {
    /** The confirmed milestone index, sent as solid (Hornet does not tell the two apart). */
    solid: number;
    /** The pruning index: peers ask this node for nothing at or below it. */
    pruned: number;
    /** The latest milestone index known. */
    latest: number;
  };
  /** A stored message's bytes (undefined: silence). */
  messageBytes(id: Uint8Array): Promise<Uint8Array | undefined>;
  /** The stored milestone message of this index (0: the latest), undefined when not stored. */
  milestoneBytes(index: number): Promise<Uint8Array | undefined>;
  /** True when the id is stored or a solid entry point: cheap and synchronous, so known messages are filtered before any decoding. */
  knows(id: Uint8Array): boolean;
  /**
   * A message frame from a peer (its id = BLAKE2b-256 of the bytes, computed once by gossip). "invalid" means the sender
   * is at fault (malformed, foreign network, low PoW, bad milestone signature): disconnect and ban it. `requested`: we
   * had asked for this id.
   */
  receive(bytes: Uint8Array, id: Uint8Array, from: string, requested: boolean): Promise<"new" | "known" | "invalid" | "ignored">;
}

export type { Heartbeat };

/** Hornet's per-peer gossip counters (H pkg/protocol/gossip/protocol.go, REST `gossip.metrics`). */
export interface PeerGossipMetrics {
  /** Messages the peer sent that the node did not know and took (stored, or held until their parents come). */
  newMessages: number;
  /** Messages the peer sent that the node knew already, or the same bytes again within the duplicate window. */
  knownMessages: number;
  /** Message frames read from the peer, whatever became of them. */
  receivedMessages: number;
  /** Message request frames read from the peer. */
  receivedMessageRequests: number;
  /** Milestone request frames read from the peer. */
  receivedMilestoneRequests: number;
  /** Heartbeat frames read from the peer. */
  receivedHeartbeats: number;
  /** Message frames written to the peer: relays and answers to its requests. */
  sentMessages: number;
  /** Message request frames written to the peer. */
  sentMessageRequests: number;
  /** Milestone request frames written to the peer. */
  sentMilestoneRequests: number;
  /** Heartbeat frames written to the peer. */
  sentHeartbeats: number;
  /** Frames not sent to this peer: its send queue was full, or its requests outran the answers queued for it. */
  droppedPackets: number;
}

/**
 * How the node knows a peer: "known" is a static peer (given at start or added through REST), dialled and redialled
 * by this node; "unknown" is any other peer connected to it, of which only a few may hold a gossip stream. Hornet's
 * third relation, "autopeered", never occurs: there is no autopeering here.
 */
export type PeerRelation = "known" | "unknown";

/** A peer as GET /api/v1/peers shows it (Hornet's shape). */
export interface PeerJson {
  /** The peer id, base58 ("12D3KooW…"). */
  id: string;
  /** A known peer's address as it was added, without /p2p/; an unknown peer's remote addresses. */
  multiAddresses: string[];
  /** A known peer's alias; left out when it has none. */
  alias?: string;
  /** Whether it is a static peer of this node. */
  relation: PeerRelation;
  /** True while a libp2p connection to it is open. */
  connected: boolean;
  /** The gossip stream with it; left out while there is none. */
  gossip?: {
    /** Its latest heartbeat; null until its first. */
    heartbeat: Heartbeat | null;
    /** This stream's counters: a new stream starts them at 0. */
    metrics: PeerGossipMetrics;
  };
}

/** Frame counts by type. */
export interface FrameCounts {
  /** Frames of type {@link MILESTONE_REQUEST_FRAME_TYPE}. */
  milestoneRequest: number;
  /** Frames of type {@link MESSAGE_FRAME_TYPE}. */
  message: number;
  /** Frames of type {@link MESSAGE_REQUEST_FRAME_TYPE}. */
  messageRequest: number;
  /** Frames of type {@link HEARTBEAT_FRAME_TYPE}. */
  heartbeat: number;
}

/** Why the gossip part dropped a peer. */
export type DropReason =
  | "malformed" // a bad frame header (unknown type, bad or oversized length)
  | "invalid" // a message the node called invalid (or the same bytes another peer was dropped for)
  | "flood" // more frames or requests per second than its limit
  | "liveness" // no heartbeat soon enough after the stream started, or none for too long
  | "timeout" // nothing read for the read timeout, or a write stuck for the write timeout
  | "refused"; // a second stream, no free unknown slot, or a banned peer connecting

/** Totals since the gossip part was made, and a few counts of now (peers, pending requests), for Prometheus
 * (src/node/edge/metrics.ts). */
export interface GossipStats {
  /** Peers now. */
  peers: {
    /** Static peers. */
    known: number;
    /** Peers with at least one open connection. */
    connected: number;
    /** Peers with a gossip stream. */
    streams: number;
    /** Of those, the ones not static (at most {@link GossipLimits.unknownPeersLimit}). */
    unknownStreams: number;
    /** Bans in force. */
    banned: number;
  };
  /** Frames read from all peers, by type. */
  framesIn: FrameCounts;
  /** Frames written to all peers, by type. */
  framesOut: FrameCounts;
  /** What became of the node's requests to peers. */
  requests: {
    /** Message and milestone requests written to peers (a request sent to two peers counts twice). */
    sent: number;
    /** Pending requests whose message (or milestone) arrived. */
    answered: number;
    /** Pending requests given up after the discard time. */
    discarded: number;
    /** Requests refused because the queue was full. */
    refused: number;
    /** Requests waiting for an answer now. */
    pending: number;
  };
  /** Peers dropped, by reason. */
  peersDropped: Record<DropReason, number>;
  /** Frames dropped for a full send or answer queue, all peers together. */
  droppedPackets: number;
  /** Message frames handled once within the duplicate window (identical bytes seen again). */
  duplicateMessages: number;
}

/** What a heartbeat listener gets. */
export interface PeerHeartbeat extends Heartbeat {
  /** The peer that sent it. */
  readonly peerId: string;
}

/** How long a request is kept pending. */
export interface RequestOptions {
  /** Keep re-sending until answered (milestone cones), instead of giving up after the discard time. */
  readonly preventDiscard?: boolean;
}
