// chrysalis-core/node: the submission pipeline, storage (memory and upstream), the semantic checks,
// web-standard HTTP handlers and a node:http server with graceful shutdown.
export { NodeError, statusOf, isAbortError, type NodeErrorCode, type NodeErrorOptions } from "./errors.js";
export { MemoryStore, ZERO_MESSAGE_ID, type MessageStore, type MemoryStoreOptions, type StoredMessage } from "./storage.js";
export { UpstreamStore, type UpstreamOptions } from "./upstream.js";
export { MemoryLedger, checkTransaction, dustCapacity, type UtxoResolver, type LedgerOutput, type DustState } from "./ledger.js";
export {
  createNode,
  NODE_VERSION,
  type ChrysalisNode,
  type NodeOptions,
  type NodeInfo,
  type NodeStats,
  type PowOptions,
  type SubmitOptions,
  type SubmitResult,
} from "./pipeline.js";
export { createGatewayNode, type GatewayOptions } from "./gateway.js";
export { createHandler, errorResponse, readBody, DEFAULT_MAX_JSON_BYTES, type Handler, type HandlerOptions, type ProveOwnershipService } from "./http.js";
export { serve, type ServeOptions, type RunningServer } from "./server.js";
