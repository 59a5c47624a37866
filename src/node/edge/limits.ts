// Every limit the server edge applies, in one place: request rates per client, connections, header and body sizes,
// timeouts, and which proxies may name the client. Defaults fit a node on the public internet; resolveLimits checks a
// partial configuration against the bounds below and fills in the rest.
import { ProtocolError } from "../../bytes/errors.js";
import { TrustedProxies } from "./address.js";

/**
 * The kinds of work a client's requests are counted against, each with its own token bucket per client:
 * `request` every request; `nonce` GET prove-ownership; `proof` POST prove-ownership; `submit` POST /api/v1/messages;
 * `pow` submissions the node has to mine for.
 */
export type RateClass = "request" | "nonce" | "proof" | "submit" | "pow";

/** Every rate class, in the order the limits list them (a configuration naming another class is refused). */
export const RATE_CLASSES: readonly RateClass[] = ["request", "nonce", "proof", "submit", "pow"];

/** A token bucket: `burst` requests at once, refilled at `perSecond`. */
export interface RateLimit {
  /** Tokens added per second (above 0, at most 1,000,000; fractions allowed): the sustained rate. */
  readonly perSecond: number;
  /** The bucket's size, a whole number from 1 to 1,000,000: how many requests a quiet client may make at once. */
  readonly burst: number;
}

/** Every limit the server edge applies, resolved (resolveLimits); each field's bounds are checked there. */
export interface EdgeLimits {
  /** Token buckets per client and class; `false` lifts every rate limit (benchmarks, private networks). */
  readonly rates: Readonly<Record<RateClass, RateLimit>> | false;
  /** Clients whose buckets are kept at once; beyond it those not seen lately are forgotten (bounds the memory). */
  readonly maxTrackedClients: number;
  /** Open connections in all (a trusted proxy's count against this only); one more is answered 503 and closed. */
  readonly maxConnections: number;
  /** Open connections from one client address or IPv6 /64; an IPv6 client's /56 may hold 4 times it and its /48 16
   * times. */
  readonly maxConnectionsPerAddress: number;
  /** Milliseconds to receive a request's headers (408 after), 1 s to 10 s. */
  readonly headersTimeoutMs: number;
  /** Milliseconds to receive the whole request with its body (408 after), from headersTimeoutMs to 30 s. */
  readonly requestTimeoutMs: number;
  /** Milliseconds an idle keep-alive connection stays open. At least 60 s: clients that mine locally (iota.js's
   * LocalPowProvider) leave their socket idle while they mine. */
  readonly keepAliveTimeoutMs: number;
  /** Largest request head (request line and headers); beyond it 431. */
  readonly maxHeaderBytes: number;
  /** Largest JSON body; beyond it 413 (a raw message is bounded by the protocol's 32 KiB). */
  readonly maxJsonBytes: number;
  /** Proxies (CIDRs or addresses) whose X-Forwarded-For names the client; empty: the socket's peer is the client. */
  readonly trustProxy: readonly string[];
  /** Milliseconds in-flight requests get to finish on shutdown before what is left is answered 503. */
  readonly shutdownGraceMs: number;
}

/** The rates of a node on the public internet: generous for requests in general, tight for those that cost the node
 * work (a nonce, a signature check, a stored message, a PoW job). */
export const DEFAULT_RATES: Readonly<Record<RateClass, RateLimit>> = {
  request: { perSecond: 100, burst: 200 },
  nonce: { perSecond: 2, burst: 20 },
  proof: { perSecond: 2, burst: 20 },
  submit: { perSecond: 10, burst: 50 },
  pow: { perSecond: 1, burst: 10 },
};

/** The largest JSON request body by default (the handler's default too). */
export const DEFAULT_MAX_JSON_BYTES = 256 * 1024;

/** The limits of a node on the public internet, what every field a configuration leaves out keeps. */
export const DEFAULT_LIMITS: EdgeLimits = {
  rates: DEFAULT_RATES,
  maxTrackedClients: 100_000,
  maxConnections: 8192,
  maxConnectionsPerAddress: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxHeaderBytes: 16 * 1024,
  maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
  trustProxy: [],
  shutdownGraceMs: 10_000,
};

/** A partial configuration: rates may be given per class (the rest keep their defaults). */
export type EdgeLimitsInput = Partial<Omit<EdgeLimits, "rates">> & {
  /** Buckets for some classes (the others keep DEFAULT_RATES'), or false to lift every rate limit. */
  rates?: Partial<Record<RateClass, RateLimit>> | false;
};

function bad(path: string, why: string): never {
  throw new ProtocolError("INVALID_ARGUMENT", `${path} ${why}`, { path });
}

function integer(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) bad(path, `must be a whole number from ${min} to ${max}`);
  return value;
}

function rate(value: unknown, path: string): RateLimit {
  if (typeof value !== "object" || value === null) bad(path, "must be { perSecond, burst }");
  const { perSecond, burst } = value as Partial<RateLimit>;
  if (typeof perSecond !== "number" || !Number.isFinite(perSecond) || perSecond <= 0 || perSecond > 1e6) bad(`${path}.perSecond`, "must be a number above 0 and at most 1,000,000");
  return { perSecond, burst: integer(burst, `${path}.burst`, 1, 1e6) };
}

/** The limits with defaults filled in; anything out of range raises ProtocolError INVALID_ARGUMENT naming the field. */
export function resolveLimits(input: EdgeLimitsInput = {}): EdgeLimits {
  let rates: EdgeLimits["rates"];
  if (input.rates === false) rates = false;
  else {
    const given = input.rates ?? {};
    const out = {} as Record<RateClass, RateLimit>;
    for (const c of RATE_CLASSES) out[c] = given[c] === undefined ? DEFAULT_RATES[c] : rate(given[c], `rates.${c}`);
    for (const name of Object.keys(given)) if (!RATE_CLASSES.includes(name as RateClass)) bad(`rates.${name}`, `is not a rate class (${RATE_CLASSES.join(", ")})`);
    rates = out;
  }
  const pick = <K extends keyof EdgeLimits>(key: K): EdgeLimits[K] => (input[key] === undefined ? DEFAULT_LIMITS[key] : (input[key] as EdgeLimits[K]));
  const headersTimeoutMs = integer(pick("headersTimeoutMs"), "headersTimeoutMs", 1000, 10_000);
  const limits: EdgeLimits = {
    rates,
    maxTrackedClients: integer(pick("maxTrackedClients"), "maxTrackedClients", 16, 10_000_000),
    maxConnections: integer(pick("maxConnections"), "maxConnections", 1, 1_000_000),
    maxConnectionsPerAddress: integer(pick("maxConnectionsPerAddress"), "maxConnectionsPerAddress", 1, 1_000_000),
    headersTimeoutMs,
    requestTimeoutMs: integer(pick("requestTimeoutMs"), "requestTimeoutMs", headersTimeoutMs, 30_000),
    keepAliveTimeoutMs: integer(pick("keepAliveTimeoutMs"), "keepAliveTimeoutMs", 60_000, 3_600_000),
    maxHeaderBytes: integer(pick("maxHeaderBytes"), "maxHeaderBytes", 1024, 16 * 1024),
    maxJsonBytes: integer(pick("maxJsonBytes"), "maxJsonBytes", 1024, 64 * 1024 * 1024),
    // TrustedProxies refuses what is not an address or a CIDR block, naming it.
    trustProxy: new TrustedProxies(pick("trustProxy")).entries,
    shutdownGraceMs: integer(pick("shutdownGraceMs"), "shutdownGraceMs", 0, 3_600_000),
  };
  return limits;
}
