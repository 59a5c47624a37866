// chrysalis-core/node: the submission pipeline, storage contract and engines, semantic checks, web-standard HTTP handlers,
// the server edge (limits, log, metrics), a node:http server, and gossip with Hornet 1.x peers (libp2p loads on start).
export { NodeError, statusOf, isAbortError, type NodeErrorCode, type NodeErrorOptions } from "./errors.js";
export * from "./store/contract.js";
export { MemoryStore, type MemoryStoreOptions } from "./store/memory.js";
export { LmdbStore, type LmdbStoreOptions } from "./store/lmdb.js";
export { PostgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions } from "./store/postgres.js";
export { createStore, isDatabaseUrl, type CreateStoreOptions } from "./store/open.js";
/** The name of the storage contract before it held the ledger and milestones. */
export type { NodeStore as MessageStore } from "./store/contract.js";
export { UpstreamStore, type UpstreamOptions } from "./upstream.js";
export {
  MemoryLedger,
  checkTransaction,
  checkSpend,
  checkLedgerState,
  checkClaim,
  claimLapsed,
  balanceDeltas,
  dustCapacity,
  type UtxoResolver,
  type LedgerOutput,
  type DustState,
  type BalanceDelta,
} from "./ledger.js";
export { NodeEvents } from "./events.js";
export { Tangle, DEFAULT_TANGLE_MESSAGES, type RecentMessage, type TangleOptions } from "./tangle.js";
export { TipSelector, tipScore, NON_LAZY_POOL, SEMI_LAZY_POOL, TIPS_PER_SELECTION, type TipPoolRules, type TipScore, type TipSelectorOptions, type TipPoolSizes } from "./tipselect.js";
export { whiteFlag, CONFLICT, type WhiteFlagResult, type WhiteFlagOptions, type WalkedMessage } from "./whiteflag.js";
export { Confirmation, applicationOf, type ConfirmationOptions, type MilestoneMessage } from "./confirmation.js";
export { MessageProcessor, type ProcessorOptions, type Checked, type Processed } from "./processor.js";
export { Filler, type FillerOptions, type FillOptions, type Filled } from "./filler.js";
export { NetworkNode, DEFAULT_WARP_RANGE, type NetworkOptions, type GossipTransport } from "./network.js";
export {
  createNode,
  NODE_VERSION,
  MAX_MILESTONE_AGE_SECONDS,
  type MilestoneDraft,
  type ConfirmedMessage,
  type NodeParts,
  type ChrysalisNode,
  type NodeOptions,
  type NodeInfo,
  type NodeStats,
  type NodeEvent,
  type NodeEventListener,
  type PowOptions,
  type SubmitOptions,
  type SubmitResult,
} from "./pipeline.js";
export { createGatewayNode, type GatewayOptions } from "./gateway.js";
export { createCoordinator, merkleRoot, DEFAULT_MILESTONE_INTERVAL_MS, type Coordinator, type CoordinatorOptions } from "./coordinator.js";
export { encodeSnapshot, decodeSnapshot } from "./snapshot.js";
export { createPruner, pruneKeepProblem, DEFAULT_PRUNE_KEEP, DEFAULT_PRUNE_BATCH, DEFAULT_PRUNE_INTERVAL_MS, type Pruner, type PrunerOptions, type PruneResult } from "./pruning.js";
export { createMqttBridge, MQTT_PATH, DEFAULT_MQTT_HEARTBEAT_MS, type MqttBridge, type MqttBridgeOptions } from "./mqtt.js";
export { promotionAdvice, isBelowMaxDepth, currentConeRoots, type PromotionAdvice } from "./cone.js";
export { messageMetadataJson, outputResponseJson, milestoneJson } from "./shapes.js";
export type { MessageMetadataJson, OutputResponseJson, MilestoneJson, AddressBalanceJson, AddressOutputsJson, UtxoChangesJson } from "../model/rest.js";
export { createHandler, errorResponse, readBody, DEFAULT_MAX_JSON_BYTES, MAX_RESULTS, TIPS_ANSWERED, type Handler, type HandlerOptions, type ProveOwnershipService, type RequestContext, type EdgeGate, type PeerAdmin, type PeerRouteOptions } from "./http/index.js";
// The gossip part: createGossip, its identity helpers, frames, and the GossipNode contract the node implements.
export * from "./gossip/index.js";
export { serve, type ServeOptions, type RunningServer } from "./server.js";
export { PowQueue, type PowQueueOptions, type PowQueueStats } from "./pow-queue.js";
export {
  createEdge,
  watchNode,
  resolveLimits,
  DEFAULT_LIMITS,
  DEFAULT_RATES,
  RATE_CLASSES,
  TrustedProxies,
  RateLimiter,
  clientKey,
  addressBlocks,
  normalizeAddress,
  createLogger,
  prettyDestination,
  createMetrics,
  LOG_LEVELS,
  type Edge,
  type ConnectionCap,
  type EdgeOptions,
  type EdgeLimits,
  type EdgeLimitsInput,
  type RateClass,
  type RateLimit,
  type RateDecision,
  type LogLevel,
  type LogOptions,
  type AccessRecord,
  type EdgeMetrics,
  type MetricsSource,
} from "./edge/index.js";
