// The gossip part (issue 34): Hornet 1.x's peering and gossip over js-libp2p, its frames, identity and REST shapes.
// libp2p itself loads only when a Gossip starts; everything exported here is light.
export { createGossip, type Gossip, type GossipOptions, type GossipLimits, type GossipEvent, type StaticPeer } from "./service.js";
export type { GossipNode, GossipStats, PeerJson, PeerRelation, PeerGossipMetrics, PeerHeartbeat, FrameCounts, DropReason, RequestOptions, Heartbeat } from "./types.js";
export {
  createP2pIdentity,
  p2pIdentityFromSeed,
  p2pIdentityFromPem,
  p2pIdentityToPem,
  readP2pIdentityFile,
  writeP2pIdentityFile,
  peerIdOf,
  isPeerId,
  parsePeerId,
  type P2pIdentity,
} from "./identity.js";
export { FrameParser, encodeFrame, encodeHeartbeat, decodeHeartbeat, encodeMessageFrame, encodeMessageRequest, encodeMilestoneRequest, decodeMilestoneRequest, checkHeader, type Frame, type FrameType } from "./frames.js";
// The four frame types FrameType names are Hornet's wire numbers, public so that a caller of encodeFrame can name one.
export {
  gossipProtocolId,
  MILESTONE_REQUEST_FRAME_TYPE,
  MESSAGE_FRAME_TYPE,
  MESSAGE_REQUEST_FRAME_TYPE,
  HEARTBEAT_FRAME_TYPE,
} from "./constants.js";
