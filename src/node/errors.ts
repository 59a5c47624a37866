// NodeError: a ProtocolError that also carries the HTTP status the node answers with.
// The handlers turn any ProtocolError into `{"error":{"code":"<status>","message":…}}` through `statusOf`.
import { type ErrorCode, ProtocolError, type ProtocolErrorOptions } from "../bytes/errors.js";

/**
 * Each code the node layer raises and the HTTP status it answers with: adding a code is adding a line here. The lower
 * layers' codes come through as 400 (LOWER_LAYER_STATUS says which not), among them the signature check's
 * INPUT_NOT_FOUND, ADDRESS_MISMATCH, INVALID_SIGNATURE, INVALID_REFERENCE and DUPLICATE.
 */
export const NODE_ERROR_STATUS = {
  WRONG_NETWORK_ID: 400,
  INSUFFICIENT_POW: 400,
  POW_DISABLED: 400, // parents or a nonce left for the node to fill while its PoW is off, as Hornet
  MILESTONE_REFUSED: 400, // a milestone payload from a submitter: only the node's coordinator issues milestones
  POW_FAILED: 503, // the node's miner failed (a worker died, the miner closed)
  INPUT_SPENT: 400,
  AMOUNTS_DIFFER: 400,
  DUST_RULE: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHORIZED: 401,
  INVALID_API_KEY: 401,
  UPSTREAM_FAILED: 502,
  SHUTTING_DOWN: 503,
  PARENT_NOT_SOLID: 400, // a parent the node does not know (it has no gossip to fetch it), as Hornet
  BELOW_MAX_DEPTH: 400, // a parent whose cone was confirmed too many milestones ago, as Hornet
  STORE_UNAVAILABLE: 503, // the store cannot be reached or is out of space; nothing was half-written
  STORE_WRONG_NETWORK: 500, // the store was made for another network
  STORE_TOO_NEW: 500, // the store was written by a newer schema version
  STORE_CORRUPT: 500, // the store cannot be read
  MILESTONE_CONFLICT: 409, // a milestone index that is not the next one (another instance issued it)
  NOT_SUPPORTED: 501, // the store cannot answer this (a gateway's upstream store has no ledger)
  RATE_LIMITED: 429, // the client spent its budget for this kind of request (Retry-After says when it is back)
  FORBIDDEN: 403, // an admin route (peers) asked by a client that is neither on loopback nor holds the admin token
  INVALID_PEER_ID: 400, // not a libp2p peer id (Base58 multihash of a public key)
  INVALID_MULTIADDR: 400, // not a multiaddr, or one without the /p2p/<peer id> a static peer needs
  FRAME_UNKNOWN_TYPE: 400, // a gossip frame header naming a type above 4 (Hornet: "message type unknown")
  FRAME_INVALID_LENGTH: 400, // a gossip frame header whose length is over its type's maximum or not its fixed size
} as const satisfies Record<string, number>;

/** Every code the node layer raises itself (WRONG_NETWORK_ID, INPUT_SPENT, STORE_UNAVAILABLE, …); each answers with
 * one HTTP status. */
export type NodeErrorCode = keyof typeof NODE_ERROR_STATUS;

declare module "../bytes/errors.js" {
  interface ErrorCodeRegistry {
    node: NodeErrorCode;
  }
}

/** The lower layers' codes the node answers with something else than 400: what the node cannot do now. */
const LOWER_LAYER_STATUS: Partial<Record<ErrorCode, number>> = {
  CANNOT_FILL: 503, // no tips, PoW disabled
  POW_QUEUE_FULL: 503,
};

/** A ProtocolError's options (path, cause) and what the node answers with. */
export interface NodeErrorOptions extends ProtocolErrorOptions {
  /** The HTTP status to answer with instead of the code's own (an upstream's 4xx passed on). */
  readonly status?: number;
  /** Seconds after which a retry may succeed (sent as Retry-After with 429 and 503). */
  readonly retryAfter?: number;
}

const statusOfCode = (code: ErrorCode): number => (NODE_ERROR_STATUS as Partial<Record<ErrorCode, number>>)[code] ?? LOWER_LAYER_STATUS[code] ?? 400;

/** A ProtocolError with the HTTP status the node answers it with: a caller matches on `code`, the edge sends `status`. */
export class NodeError extends ProtocolError {
  /** The HTTP status of the answer: the options' status, else the code's (NodeErrorCode's table; 400 for a lower
   * layer's code but CANNOT_FILL and POW_QUEUE_FULL, 503). */
  readonly status: number;
  /** Seconds after which a retry may succeed, sent as Retry-After with 429 and 503; undefined when no time is known. */
  readonly retryAfter: number | undefined;

  /** A node code, or a lower layer's the node raises with its status (CANNOT_FILL answers 503). */
  constructor(code: ErrorCode, message: string, options: NodeErrorOptions = {}) {
    super(code, message, options);
    this.name = "NodeError";
    this.status = options.status ?? statusOfCode(code);
    this.retryAfter = options.retryAfter;
  }
}

/**
 * The HTTP status for an error: a `status` carried by the error (NodeError, AuthError), that of its code for any other
 * ProtocolError (400 for bad input, 503 for what the node cannot do now), and 500 for everything else (a bug, never echoed).
 */
export function statusOf(error: unknown): number {
  if (error instanceof ProtocolError) {
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599) return status;
    return statusOfCode(error.code);
  }
  return 500;
}

/**
 * What a remote client is told for the node's own trouble (a 5xx): a fixed text per code. The error's own message may
 * name server internals (a data directory, a database and its URL, a driver's or worker's words); it goes to the log,
 * never to the client. A 5xx code not listed here is answered with its HTTP status text.
 */
const PUBLIC_MESSAGES: Partial<Record<ErrorCode, string>> = {
  STORE_UNAVAILABLE: "the node's store cannot be used right now; nothing was written, try again later",
  STORE_CORRUPT: "the node's store cannot be read",
  STORE_WRONG_NETWORK: "the node's store belongs to another network",
  STORE_TOO_NEW: "the node's store was written by a newer version",
  NONCE_STORE_FAILED: "the node's nonce store cannot be used right now; try again later",
  POW_FAILED: "the node could not mine this message; try again later",
  UPSTREAM_FAILED: "the upstream node did not give a usable answer",
  IDENTITY_RESOLUTION_FAILED: "the identity could not be resolved right now; try again later",
};

/**
 * The 5xx codes whose messages the node words from nothing but the request and its own counts (a full PoW queue and
 * the requester's share of it, no tips, shutting down, what a gateway cannot answer): the client gets them as they are.
 */
const OWN_WORDS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["POW_QUEUE_FULL", "CANNOT_FILL", "SHUTTING_DOWN", "NOT_SUPPORTED"]);

/** The message a client gets for `error` answered with `status`: its own below 500, a fixed text from 500 on. */
export function publicMessage(error: ProtocolError, status: number, fallback: string): string {
  if (status < 500 || OWN_WORDS.has(error.code)) return error.message || fallback;
  return PUBLIC_MESSAGES[error.code] ?? fallback;
}

export { abortError, isAbortError } from "../bytes/errors.js";

/** Seconds a client is told to wait after a request refused by a node that is stopping (a restart, typically). */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 5;

/** The answer to anything that arrives while the node stops: 503 SHUTTING_DOWN with a Retry-After. */
export function shuttingDown(): NodeError {
  return new NodeError("SHUTTING_DOWN", "the node is shutting down; try again shortly", { retryAfter: SHUTDOWN_RETRY_AFTER_SECONDS });
}
