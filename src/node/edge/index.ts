// The server edge: one object holding every limit (rates, connections, sizes, timeouts, trusted proxies), the access
// log and the metrics, which serve() applies to each connection and request. Rate classes are picked by route name, so
// the routes themselves know nothing of limits.
import type { Logger } from "pino";
import { secretMatcher } from "../../crypto/sha256.js";
import { NodeError } from "../errors.js";
import type { EdgeGate } from "../http/router.js";
import { addressBlocks, clientKey, normalizeAddress, TrustedProxies, type ForwardedFor } from "./address.js";
import { resolveLimits, type EdgeLimits, type EdgeLimitsInput, type RateClass } from "./limits.js";
import { createLogger, logAccess, type AccessRecord, type LogOptions } from "./log.js";
import { createMetrics, type EdgeMetrics, type MetricsSource } from "./metrics.js";
import { RateLimiter } from "./rate.js";

/** The limits, log and metrics an edge is made with; every field has the public-node default. */
export interface EdgeOptions {
  /** Limits; what is not given keeps its public-node default (limits.ts). */
  limits?: EdgeLimitsInput;
  /** The log: a pino logger, options for a new one, or false for none (the default of the library's serve()). */
  log?: Logger | LogOptions | false;
  /** Serve Prometheus metrics at GET /metrics (default false); with `token`, only to `Authorization: Bearer <token>`. */
  metrics?:
    | boolean
    | {
        /** The bearer token a scrape must send; compared in constant time. */
        token?: string;
      };
  /** Extra route-name → rate-class entries ("METHOD name"), e.g. for routes added by another module. */
  routeClasses?: Readonly<Record<string, RateClass>>;
}

/** Connections open, in all and per key (a client's address or /64, and an IPv6 client's wider blocks). */
class ConnectionCount {
  #total = 0;
  readonly #perKey = new Map<string, number>();

  get total(): number {
    return this.#total;
  }

  add(keys: readonly string[]): void {
    this.#total++;
    for (const key of keys) this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1);
  }

  remove(keys: readonly string[]): void {
    this.#total--;
    for (const key of keys) {
      const left = (this.#perKey.get(key) ?? 1) - 1;
      if (left > 0) this.#perKey.set(key, left);
      else this.#perKey.delete(key);
    }
  }

  of(key: string): number {
    return this.#perKey.get(key) ?? 0;
  }
}

/** Which connection cap refused a connection: the total, the client's own, or its IPv6 /56 or /48 block's. */
export type ConnectionCap = "total" | "per-address" | "per-prefix";

/** Every limit, the access log and the metrics of one server, as serve() applies them to each connection and request. */
export interface Edge {
  /** The limits in force, every default filled in. */
  readonly limits: EdgeLimits;
  /** The pino logger answered requests are recorded on; undefined when logging is off. */
  readonly logger: Logger | undefined;
  /** The Prometheus metrics; undefined unless EdgeOptions.metrics enabled them (GET /metrics then answers 404). */
  readonly metrics: EdgeMetrics | undefined;
  /** The client address of a request from `peer` with this X-Forwarded-For (honoured only from a trusted proxy; given
   * as a function, it is read only then). */
  clientAddress(peer: string | undefined, forwardedFor: ForwardedFor | (() => ForwardedFor)): string;
  /** The key limits count an address under (an IPv6 address's /64). */
  clientKey(address: string): string;
  /**
   * Whether a new connection from `peer` may stay; when it may, `release` must be called once it closes. A trusted
   * proxy's connections count against the total only.
   */
  admitConnection(peer: string | undefined):
    | {
        /** The connection may stay. */
        readonly admitted: true;
        /** Gives the connection's place back once it closed; calls after the first do nothing. */
        release(): void;
      }
    | {
        /** The connection is refused: serve() answers 503 and closes it. */
        readonly admitted: false;
        /** The cap it met, named in the answer and counted in the metrics. */
        readonly reason: ConnectionCap;
      };
  /** Takes a `request` token for the client: undefined when allowed, else the 429 error to answer. */
  admitRequest(key: string): NodeError | undefined;
  /** The gate the router and the node call for this client's request. */
  gate(key: string): EdgeGate;
  /** Whether `authorization` (a header value) may read the metrics. */
  metricsAllowed(authorization: string | null): boolean;
  /** Logs and counts an answered request. */
  record(record: AccessRecord): void;
}

/** One request's gate: a plain object whose methods live on the class, made on every request. */
class Gate implements EdgeGate {
  constructor(
    private readonly key: string,
    private readonly classOf: (route: string, method: string) => RateClass | undefined,
    private readonly take: (key: string, rateClass: RateClass) => NodeError | undefined,
  ) {}

  route(name: string, method: string): void {
    const rateClass = this.classOf(name, method);
    const refused = rateClass === undefined ? undefined : this.take(this.key, rateClass);
    if (refused !== undefined) throw refused;
  }

  pow(): void {
    const refused = this.take(this.key, "pow");
    if (refused !== undefined) throw refused;
  }
}

const DEFAULT_ROUTE_CLASSES: Readonly<Record<string, RateClass>> = {
  "GET prove-ownership": "nonce",
  "POST prove-ownership": "proof",
  "POST messages": "submit",
};
// Prove-ownership routes added elsewhere (the Integration Services paths) count as the same work.
const PROVE_OWNERSHIP = /(?:^|[./:-])prove-ownership$/;

/** The edge of `options`: limits resolved over the public-node defaults, a logger unless `log` is false or absent, and
 * metrics when asked. */
export function createEdge(options: EdgeOptions = {}): Edge {
  const limits = resolveLimits(options.limits);
  const trusted = new TrustedProxies(limits.trustProxy);
  const limiter = limits.rates === false ? undefined : new RateLimiter(limits.rates, limits.maxTrackedClients);
  const logger = options.log === false || options.log === undefined ? undefined : "info" in options.log && typeof options.log.info === "function" ? (options.log as Logger) : createLogger(options.log as LogOptions);
  const metricsOption = options.metrics ?? false;
  const metrics = metricsOption === false ? undefined : createMetrics();
  const tokenMatches = typeof metricsOption === "object" && metricsOption.token !== undefined ? secretMatcher(metricsOption.token) : undefined;
  const classes = { ...DEFAULT_ROUTE_CLASSES, ...options.routeClasses };
  const connections = new ConnectionCount();

  // Asked before every routed request: each (route, method) is classified once (both come from finite sets, the route
  // table's names and the methods node:http parses).
  const classified = new Map<string, Map<string, RateClass | undefined>>();
  function classOf(route: string, method: string): RateClass | undefined {
    let byMethod = classified.get(route);
    if (byMethod === undefined) classified.set(route, (byMethod = new Map()));
    if (byMethod.has(method)) return byMethod.get(method);
    const rateClass = classes[`${method} ${route}`] ?? (PROVE_OWNERSHIP.test(route) ? (method === "GET" ? "nonce" : method === "POST" ? "proof" : undefined) : undefined);
    byMethod.set(method, rateClass);
    return rateClass;
  }

  function take(key: string, rateClass: RateClass): NodeError | undefined {
    if (limiter === undefined) return undefined;
    const decision = limiter.take(key, rateClass);
    if (decision.allowed) return undefined;
    metrics?.rateLimited(rateClass);
    return new NodeError("RATE_LIMITED", `too many ${rateClass === "request" ? "requests" : `${rateClass} requests`} from your address: try again in ${decision.retryAfterSeconds} s`, { retryAfter: decision.retryAfterSeconds });
  }

  return {
    limits,
    logger,
    metrics,
    clientAddress: (peer, forwardedFor) => trusted.clientAddress(normalizeAddress(peer), forwardedFor),
    clientKey,
    admitConnection(peer) {
      const address = normalizeAddress(peer);
      // A trusted proxy carries many clients: only the total bounds it. An IPv6 client also counts in its /56 and /48,
      // each allowed a multiple of one client's share.
      const blocks = trusted.has(address) ? [] : addressBlocks(address);
      const refuse = (reason: ConnectionCap) => {
        metrics?.connectionRefused(reason);
        return { admitted: false, reason } as const;
      };
      if (connections.total >= limits.maxConnections) return refuse("total");
      for (const { key, share } of blocks) if (connections.of(key) >= limits.maxConnectionsPerAddress * share) return refuse(share === 1 ? "per-address" : "per-prefix");
      const keys = blocks.map((b) => b.key);
      connections.add(keys);
      metrics?.connections(connections.total);
      let released = false;
      return {
        admitted: true,
        release() {
          if (released) return;
          released = true;
          connections.remove(keys);
          metrics?.connections(connections.total);
        },
      };
    },
    admitRequest: (key) => take(key, "request"),
    gate: (key) => new Gate(key, classOf, take),
    metricsAllowed(authorization) {
      if (tokenMatches === undefined) return true;
      return authorization?.startsWith("Bearer ") === true && tokenMatches(authorization.slice(7).trim());
    },
    record(record) {
      metrics?.request(record.method, record.route, record.status, record.ms / 1000);
      if (logger !== undefined && logger.isLevelEnabled(record.status >= 500 ? "warn" : "info")) logAccess(logger, record);
    },
  };
}

/** Wires a node's counters into the edge's metrics (and its store's latency, when the store was instrumented). */
export function watchNode(edge: Edge, node: MetricsSource): void {
  edge.metrics?.watch(node);
}

export { resolveLimits, DEFAULT_LIMITS, DEFAULT_RATES, RATE_CLASSES, type EdgeLimits, type EdgeLimitsInput, type RateClass, type RateLimit } from "./limits.js";
export { TrustedProxies, addressBlocks, clientKey, normalizeAddress, type ForwardedFor } from "./address.js";
export { RateLimiter, type RateDecision } from "./rate.js";
export { createLogger, prettyDestination, LOG_LEVELS, type LogLevel, type LogOptions, type AccessRecord } from "./log.js";
export { createMetrics, type EdgeMetrics, type MetricsSource } from "./metrics.js";
