// Hornet 1.x's gossip constants (GOSSIP.md §1-§4) and this part's defaults, in one place: frame types and sizes, the
// protocol id, the stream and peer timings and every bound a queue or table of the gossip part is held to.
import { MAX_MESSAGE_LENGTH, MESSAGE_ID_LENGTH } from "../../bytes/limits.js";

// Frames (HG protocol/tlv): type u8, length u16 little-endian, payload.
export const FRAME_HEADER_LENGTH = 3;
/** Type 0 is the TLV header's own slot: a frame `00 03 00` makes the next three bytes be read as a header again. */
export const HEADER_FRAME_TYPE = 0;
/** Frame type 1 (types 1-4 are Hornet's, H sting.go), a milestone request: a u32 LE index, 0 for the peer's latest. */
export const MILESTONE_REQUEST_FRAME_TYPE = 1;
/** Frame type 2, a message: its full serialized bytes, nonce included. */
export const MESSAGE_FRAME_TYPE = 2;
/** Frame type 3, a message request: the 32-byte message id. */
export const MESSAGE_REQUEST_FRAME_TYPE = 3;
/** Frame type 4, a heartbeat: what its sender has confirmed, pruned and heard of, and how many peers it has. */
export const HEARTBEAT_FRAME_TYPE = 4;
/** The highest type Hornet registers; a header naming a higher one is "message type unknown". */
export const MAX_FRAME_TYPE = HEARTBEAT_FRAME_TYPE;
export const MILESTONE_REQUEST_LENGTH = 4;
export const MESSAGE_REQUEST_LENGTH = MESSAGE_ID_LENGTH;
/** solid u32, pruned u32, latest u32, connected u8, synced u8. */
export const HEARTBEAT_LENGTH = 14;
/** A message frame carries 0 … 32768 bytes (iota.go v2 MessageBinSerializedMaxSize). */
export const MAX_MESSAGE_FRAME_LENGTH = MAX_MESSAGE_LENGTH;
/** The largest frame on the wire: a header and the largest message. */
export const MAX_FRAME_LENGTH = FRAME_HEADER_LENGTH + MAX_MESSAGE_FRAME_LENGTH;
/** A milestone request for this index asks for the peer's latest milestone. */
export const LATEST_MILESTONE_INDEX = 0;

/** The protocol id gossip negotiates over multistream-select: another network's id fails negotiation. */
export function gossipProtocolId(networkId: bigint): string {
  return `/iota-gossip/${networkId.toString(10)}/1.0.0`;
}

// Hornet's defaults (H core/gossip/params.go, core/p2p/params.go, protocol.go, requester.go), in milliseconds.
export const DEFAULT_UNKNOWN_PEERS_LIMIT = 4;
export const DEFAULT_SEND_QUEUE_SIZE = 1000;
export const DEFAULT_READ_TIMEOUT_MS = 60_000;
export const DEFAULT_WRITE_TIMEOUT_MS = 10_000;
/** Opening a stream (multistream-select included) on a connection gives up after this (H: 4 s). */
export const DEFAULT_STREAM_OPEN_TIMEOUT_MS = 4_000;
export const DEFAULT_DIAL_TIMEOUT_MS = 5_000;
/** How often heartbeats are checked: each peer not sent one for DEFAULT_HEARTBEAT_MAX_SILENCE_MS gets one. */
export const DEFAULT_HEARTBEAT_CHECK_MS = 5_000;
export const DEFAULT_HEARTBEAT_MAX_SILENCE_MS = 30_000;
/** A peer must send its first heartbeat this soon after the stream starts (checked every DEFAULT_HEARTBEAT_CHECK_MS) … */
export const DEFAULT_FIRST_HEARTBEAT_MS = 5_000;
/** … and then one at least this often, or it is disconnected. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 100_000;
/** Identical message bytes are handled once within this window (H profile incomingMessagesFilter). */
export const DEFAULT_DEDUP_WINDOW_MS = 5_000;
export const DEFAULT_REQUEST_RETRY_MS = 5_000;
export const DEFAULT_REQUEST_DISCARD_MS = 15_000;
/** Heartbeat counts are one byte on the wire. */
export const MAX_HEARTBEAT_COUNT = 0xff;
/** A peer is "synced" when its solid index is at most this far below max(its latest, ours). */
export const SYNCED_NEIGHBOR_SLACK = 2;

// This part's own defaults, where Hornet has none (GOSSIP.md §5: no per-peer limits).
/** Reconnect back-off for known peers: first wait, doubled after each failure up to the cap, with up to 25 % jitter. */
export const DEFAULT_BACKOFF_START_MS = 1_000;
export const DEFAULT_BACKOFF_MAX_MS = 30_000;
export const BACKOFF_JITTER = 0.25;
/** A peer that broke the protocol is refused and not dialled for this long. */
export const DEFAULT_BAN_MS = 10 * 60_000;
export const DEFAULT_BAN_TABLE_SIZE = 1024;
/**
 * Frames and requests a peer may send per second (token buckets of one second's worth). Far above what an honest Hornet
 * sends, re-sends of a warp sync's pending requests included, and low enough that a flood costs a parse per frame and
 * then the peer.
 */
export const DEFAULT_MAX_FRAMES_PER_SECOND = 50_000;
export const DEFAULT_MAX_REQUESTS_PER_SECOND = 20_000;
/** Requests of one peer waiting for a store read; more are dropped (counted in its droppedPackets). */
export const DEFAULT_ANSWER_QUEUE_SIZE = 256;
/** Store reads running at once for one peer's requests. */
export const ANSWER_CONCURRENCY = 4;
/** Messages of one peer in the node's hands at once; past this the peer's stream is not read (TCP pushes back). */
export const DEFAULT_MAX_RECEIVING = 32;
/** Ids the duplicate filter holds (two generations of half each). */
export const DEFAULT_DEDUP_SIZE = 50_000;
/** Peers remembered as senders of one message (for relay exclusion and Hornet's punish-every-sender rule). */
export const MAX_SENDERS_PER_MESSAGE = 8;
/** Pending requests (messages and milestones) at most. */
export const DEFAULT_REQUEST_QUEUE_SIZE = 10_000;
export const DEFAULT_MAX_KNOWN_PEERS = 256;
/** Connections libp2p holds at most (unknown peers hold few: 4 stream slots, and connections without a stream close). */
export const DEFAULT_MAX_CONNECTIONS = 64;
/** A connection with no gossip stream this long after it opened is closed: it only holds a slot. */
export const DEFAULT_STREAM_WAIT_MS = 10_000;
/** New inbound connections accepted per second from one IP address (libp2p's inboundConnectionThreshold). */
export const DEFAULT_INBOUND_CONNECTIONS_PER_SECOND = 5;
