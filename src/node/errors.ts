// NodeError: a ProtocolError that also carries the HTTP status the node answers with.
// The handlers turn any ProtocolError into `{"error":{"code":"<status>","message":…}}` through `statusOf`.
import { ProtocolError, type ProtocolErrorOptions } from "../bytes/errors.js";

/** Codes raised by the node layer. The core layers' codes come through unchanged as 400, among them the signature
 * check's ADDRESS_MISMATCH, INVALID_SIGNATURE, INVALID_REFERENCE and DUPLICATE (verifyTransactionSignatures). */
export type NodeErrorCode =
  | "NONCE_WITHOUT_NETWORK_ID" // a nonce the PoW could not have covered
  | "WRONG_NETWORK_ID"
  | "INSUFFICIENT_POW"
  | "CANNOT_FILL" // the node cannot fill a missing field (no tips, PoW disabled): 503
  | "POW_QUEUE_FULL" // the miner's queue is full: 503
  | "POW_FAILED" // the node's miner failed (a worker died, the miner closed): 503
  | "INPUT_NOT_FOUND"
  | "INPUT_SPENT"
  | "AMOUNTS_DIFFER"
  | "DUST_RULE"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "BODY_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "UNAUTHORIZED"
  | "UPSTREAM_FAILED"
  | "SHUTTING_DOWN"
  | "PARENT_NOT_SOLID" // a parent the node does not know (it has no gossip to fetch it): 400 as Hornet
  | "BELOW_MAX_DEPTH" // a parent whose cone was confirmed too many milestones ago: 400 as Hornet
  | "STORE_UNAVAILABLE" // the store cannot be reached or is out of space; nothing was half-written: 503
  | "STORE_WRONG_NETWORK" // the store was made for another network
  | "STORE_TOO_NEW" // the store was written by a newer schema version
  | "STORE_CORRUPT" // the store cannot be read
  | "MILESTONE_CONFLICT" // a milestone index that is not the next one (another instance issued it)
  | "NOT_SUPPORTED" // the store cannot answer this (a gateway's upstream store has no ledger)
  | "RATE_LIMITED"; // the client spent its budget for this kind of request: 429 with Retry-After

export interface NodeErrorOptions extends ProtocolErrorOptions {
  readonly status?: number;
  /** Seconds after which a retry may succeed (sent as Retry-After with 429 and 503). */
  readonly retryAfter?: number;
}

const DEFAULT_STATUS: Record<NodeErrorCode, number> = {
  NONCE_WITHOUT_NETWORK_ID: 400,
  WRONG_NETWORK_ID: 400,
  INSUFFICIENT_POW: 400,
  CANNOT_FILL: 503,
  POW_QUEUE_FULL: 503,
  POW_FAILED: 503,
  INPUT_NOT_FOUND: 400,
  INPUT_SPENT: 400,
  AMOUNTS_DIFFER: 400,
  DUST_RULE: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHORIZED: 401,
  UPSTREAM_FAILED: 502,
  SHUTTING_DOWN: 503,
  PARENT_NOT_SOLID: 400,
  BELOW_MAX_DEPTH: 400,
  STORE_UNAVAILABLE: 503,
  STORE_WRONG_NETWORK: 500,
  STORE_TOO_NEW: 500,
  STORE_CORRUPT: 500,
  MILESTONE_CONFLICT: 409,
  NOT_SUPPORTED: 501,
  RATE_LIMITED: 429,
};

export class NodeError extends ProtocolError {
  readonly status: number;
  readonly retryAfter: number | undefined;

  constructor(code: NodeErrorCode, message: string, options: NodeErrorOptions = {}) {
    super(code, message, options);
    this.name = "NodeError";
    this.status = options.status ?? DEFAULT_STATUS[code];
    this.retryAfter = options.retryAfter;
  }
}

/**
 * The HTTP status for an error: a `status` carried by the error (NodeError, AuthError), 400 for any other
 * ProtocolError (bad input), 503 for a queue that is full, and 500 for everything else (a bug, never echoed).
 */
export function statusOf(error: unknown): number {
  if (error instanceof ProtocolError) {
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599) return status;
    if (error.code === "POW_QUEUE_FULL") return 503;
    return 400;
  }
  return 500;
}

/** True for the rejection an aborted AbortSignal produces (DOMException "AbortError" or our own). */
export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

/** A DOMException named AbortError, as fetch and the miner raise. */
export function abortError(reason?: unknown): Error {
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("the operation was aborted", "AbortError");
}
