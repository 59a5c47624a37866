// The node's HTTP handler: the REST API v1 and, when configured, prove-ownership and verify-jwt, over one router.
// Routes and shapes are listed in README.md; errors are {"error":{"code":"<status>","message","reason","path"}}.
import { DEFAULT_MAX_JSON_BYTES } from "../edge/limits.js";
import { ProtocolError } from "../../bytes/errors.js";
import { bearerToken, type JwtService } from "../../auth/index.js";
import type { ChrysalisNode } from "../pipeline.js";
import { apiRoutes } from "./api.js";
import { authRoutes, type ProveOwnershipService } from "./auth.js";
import { peerRoutes, type PeerRouteOptions } from "./peers.js";
import { createRouter, type Handler, type Route } from "./router.js";

/** What createHandler serves besides the REST API v1: authentication, a gateway's upstream, CORS, peers, more routes. */
export interface HandlerOptions {
  /** Enables the prove-ownership routes (at /authentication/… and, as IS clients address them, /api/v0.1/… and /api/v1/…). */
  proveOwnership?: ProveOwnershipService;
  /** Verifies the JWT on protected routes (and on verify-jwt). */
  jwt?: JwtService;
  /** When set, the authentication routes need `?api-key=<this>` (IS's API_KEY); otherwise the parameter is ignored. */
  apiKey?: string;
  /** A gateway's upstream: reads (GET /health, /api/v1/…) are forwarded to it; /info merges its answer with ours. */
  forward?: (request: Request) => Promise<Response>;
  /** Whether POST /api/v1/messages needs a valid JWT. Default: true when `jwt` is given. */
  requireJwtForSubmit?: boolean;
  /** Largest JSON body accepted, in bytes. Default 256 KiB (a 32 KiB message is about 65 KiB of hex and keys). */
  maxJsonBytes?: number;
  /**
   * Allowed browser origin for CORS ("*" or one origin); unset sends no CORS headers. Preflights (OPTIONS) on known
   * routes then answer 204, and every answer carries Access-Control-Allow-Origin and exposes Location.
   */
  cors?: string;
  /** Called with errors that are bugs (answered 500 without details). Default: console.error. */
  onInternalError?: (error: unknown) => void;
  /** Called with the node's own trouble answered 5xx, whose detail (a path, a database, a driver's words) the client
   * does not get. Default: console.warn. */
  onServiceError?: (error: ProtocolError) => void;
  /**
   * Enables Hornet's peers routes (GET/POST /api/v1/peers, GET/DELETE /api/v1/peers/{peerId}) over the gossip part,
   * answered to loopback clients and to holders of `adminToken`; others get 403 FORBIDDEN.
   */
  peers?: PeerRouteOptions;
  /** More routes, asked after the node's own (parts with a route of their own: the dashboard). */
  routes?: readonly Route[];
}

export { DEFAULT_MAX_JSON_BYTES };

/** Builds the handler for a node (and, when configured, the prove-ownership service and JWT check). */
export function createHandler(node: ChrysalisNode, options: HandlerOptions = {}): Handler {
  const requireJwt = options.requireJwtForSubmit ?? options.jwt !== undefined;
  const jwt = options.jwt;
  if (requireJwt && jwt === undefined) throw new ProtocolError("INVALID_ARGUMENT", "requireJwtForSubmit needs a JwtService", { path: "jwt" });
  const routes = apiRoutes(node, {
    authorize: requireJwt && jwt !== undefined ? (request) => jwt.verify(bearerToken(request.headers)) : undefined,
    maxJsonBytes: options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES,
    forward: options.forward,
  });
  routes.push(...authRoutes({ proveOwnership: options.proveOwnership, jwt: options.jwt, apiKey: options.apiKey }));
  if (options.peers !== undefined) routes.push(...peerRoutes(options.peers, options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES));
  if (options.routes !== undefined) routes.push(...options.routes);
  return createRouter(routes, { cors: options.cors, onInternalError: options.onInternalError, onServiceError: options.onServiceError });
}

export { errorResponse, readBody, type EdgeGate, type Handler, type RequestContext, type Route, type RouteCall } from "./router.js";
export type { ProveOwnershipService, AuthRouteOptions } from "./auth.js";
export { isLoopback, type PeerAdmin, type PeerRouteOptions } from "./peers.js";
export { MAX_RESULTS, TIPS_ANSWERED } from "./api.js";
