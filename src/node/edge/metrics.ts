// Prometheus metrics of a node (prom-client, one registry per edge): requests by route and status with latency
// histograms, logins, rate-limited requests and refused connections, the PoW queue and hash rate, messages accepted,
// the store's latency per operation, its size and pruning, and prom-client's process metrics (CPU, memory, event-loop
// lag).
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from "prom-client";
import type { GossipStats } from "../gossip/types.js";
import type { NodeStats } from "../pipeline.js";
import type { NodeStore, PruneStep } from "../store/contract.js";
import type { RateClass } from "./limits.js";

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STORE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/** The store's size and pruning index are read at a scrape at most this often: scrapes from several Prometheus servers
 * (or a dashboard refreshing) do not each cost the store a size query. */
export const STORE_READ_INTERVAL_MS = 5000;

// The per-request and per-store-call series are kept as plain counts, each series found once and then held (a request's
// by one Map lookup on route, method and status; a store operation's by its wrapper), and written out by prom-client's
// registry at a scrape. prom-client's own Counter.inc and Histogram.observe hash their label object on every call: with
// the store's timing, that was about a twentieth of a trivial request's CPU on every request.

type Labels = Readonly<Record<string, string>>;

/** One histogram series: counts per bucket (not cumulative; the last is +Inf), their sum and count. */
class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** One counter series. */
class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
}

/** A counter or histogram whose series are looked up by the caller once and then updated directly; registered with
 * the registry as prom-client's own metrics are (get() gives prom-client's shape, so the exposition is the same). */
class SeriesMetric<S extends HistogramSeries | CounterSeries> {
  readonly aggregator = "sum";
  readonly #series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "histogram",
    private readonly make: (labels: Labels) => S,
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these labels (made on first use). */
  series(labels: Labels): S {
    const key = Object.values(labels).join("\u0000");
    let found = this.#series.get(key);
    if (found === undefined) this.#series.set(key, (found = this.make(labels)));
    return found;
  }

  reset(): void {
    this.#series.clear();
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName?: string }[] }> {
    const values: { labels: Record<string, string | number>; value: number; metricName?: string }[] = [];
    for (const s of this.#series.values()) {
      if (s instanceof CounterSeries) {
        values.push({ labels: { ...s.labels }, value: s.value });
        continue;
      }
      const bounds = s.bounds;
      let cumulative = 0;
      for (let i = 0; i <= bounds.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ labels: { le: i < bounds.length ? bounds[i]! : "+Inf", ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

const counter = (name: string, help: string, registry: Registry) => new SeriesMetric(name, help, "counter", (labels) => new CounterSeries(labels), registry);
const histogram = (name: string, help: string, buckets: readonly number[], registry: Registry) => new SeriesMetric(name, help, "histogram", (labels) => new HistogramSeries(labels, buckets), registry);

/** Where the node's own counters come from at scrape time. */
export interface MetricsSource {
  /** The node's counters now (ChrysalisNode.stats), read synchronously at each scrape. */
  stats(): NodeStats;
}

/** Where gossip's counters come from at scrape time (gossip/service.ts's Gossip is one). */
export interface GossipSource {
  /** Gossip's counters now, read synchronously at each scrape. */
  stats(): GossipStats;
}

/** Where the network part's counters come from at scrape time (network.ts's NetworkNode is one). */
export interface NetworkSource {
  /** What waits for its parents now. */
  readonly waiting: { readonly messages: number; readonly bytes: number };
  /** Messages from peers whose milestone payload was not a milestone here, since start. */
  readonly untrustedMilestones: number;
}

/** The Prometheus metrics of one edge, all prefixed chrysalis_: the edge and the node's parts write them, a scrape
 * renders them. */
export interface EdgeMetrics {
  /** The prom-client registry they live in: a caller may register metrics of its own on it. */
  readonly registry: Registry;
  /** One answered request. */
  request(method: string, route: string, status: number, seconds: number): void;
  /** One request refused 429 in this rate class (chrysalis_rate_limited_total). */
  rateLimited(rateClass: RateClass): void;
  /** One connection refused at this cap (chrysalis_connections_refused_total). */
  connectionRefused(reason: "total" | "per-address" | "per-prefix"): void;
  /** The connections open now (chrysalis_connections_open). */
  connections(open: number): void;
  /** The store with every operation timed into chrysalis_store_operation_seconds. */
  instrumentStore<S extends NodeStore>(store: S): S;
  /** The node whose stats are read at each scrape. */
  watch(source: MetricsSource): void;
  /** The store whose size (chrysalis_store_bytes) and pruning index are read at scrapes, at most every
   * STORE_READ_INTERVAL_MS (a gateway, which stores nothing, is not watched). */
  watchStore(store: Pick<NodeStore, "bytes" | "pruningIndex">): void;
  /** One pruning step this process did (the pruner's onStep). */
  pruned(step: PruneStep): void;
  /** The gossip part (and the node's side of it) whose counters are read at each scrape. */
  watchGossip(gossip: GossipSource, network?: NetworkSource): void;
  /** The exposition text and its content type. */
  render(): Promise<{
    /** The Prometheus text exposition of every metric. */
    body: string;
    /** Its Content-Type header value (the registry's: Prometheus's text format). */
    contentType: string;
  }>;
}

/** A new set of the node's metrics in a registry of their own, with prom-client's process metrics (CPU, memory,
 * event-loop lag); nothing is read until watched. */
export function createMetrics(): EdgeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "chrysalis_" });
  let source: MetricsSource | undefined;

  const requests = counter("chrysalis_http_requests_total", "HTTP requests answered, by route, method and status", registry);
  const latency = histogram("chrysalis_http_request_duration_seconds", "Time from a request's arrival to its answer, by route and method", LATENCY_BUCKETS, registry);
  const logins = counter("chrysalis_logins_total", "Prove-ownership proofs, by result (success: a JWT was issued)", registry);
  // The series one answered request updates, by route, method and status (finite sets: the route table's names,
  // the methods node:http parses, the statuses the node answers).
  const perAnswer = new Map<string, { requests: CounterSeries; latency: HistogramSeries; login: CounterSeries | undefined }>();
  const limited = new Counter({ name: "chrysalis_rate_limited_total", help: "Requests refused with 429, by rate class", labelNames: ["class"] as const, registers: [registry] });
  const refused = new Counter({ name: "chrysalis_connections_refused_total", help: "Connections refused at a cap, by which cap", labelNames: ["cap"] as const, registers: [registry] });
  const open = new Gauge({ name: "chrysalis_connections_open", help: "Connections open now", registers: [registry] });
  const storeLatency = histogram("chrysalis_store_operation_seconds", "Time a store operation took, by operation", STORE_BUCKETS, registry);

  // Node counters are read at scrape time; counters only grow, so each scrape adds what changed since the last one.
  const last = { accepted: 0, rejected: 0, hashes: 0, checkpoints: 0, at: performance.now() };
  const accepted = new Counter({ name: "chrysalis_messages_accepted_total", help: "Messages the node accepted and stored", registers: [registry] });
  const rejected = new Counter({ name: "chrysalis_messages_rejected_total", help: "Submissions the node refused", registers: [registry] });
  const hashes = new Counter({ name: "chrysalis_pow_hashes_total", help: "Nonces tried by the node's PoW workers", registers: [registry] });
  const hashRate = new Gauge({ name: "chrysalis_pow_hash_rate", help: "Nonces tried per second by the node's PoW workers since the previous scrape", registers: [registry] });
  const powDepth = new Gauge({ name: "chrysalis_pow_queue_depth", help: "PoW jobs in flight (mining or queued)", registers: [registry] });
  const checkpoints = new Counter({ name: "chrysalis_checkpoints_total", help: "Checkpoints the coordinator stored (messages without payload merging tips before a milestone)", registers: [registry] });
  const powQueued = new Gauge({ name: "chrysalis_pow_queue_waiting", help: "PoW jobs waiting for the miner", registers: [registry] });
  const prunedMessages = new Counter({ name: "chrysalis_messages_pruned_total", help: "Messages this process deleted by pruning", registers: [registry] });
  const pruningIndex = new Gauge({ name: "chrysalis_pruning_index", help: "Every milestone at or below this index, and its messages, has been pruned", registers: [registry] });
  const storeBytes = new Gauge({ name: "chrysalis_store_bytes", help: "Bytes the store's data takes (LMDB: pages in use; PostgreSQL: tables and indexes)", registers: [registry] });
  let watchedStore: Pick<NodeStore, "bytes" | "pruningIndex"> | undefined;
  // Gossip: the peers now, and what went through since start (each scrape adds what changed since the last one).
  const peers = new Gauge({ name: "chrysalis_peers", help: "Peers: known (static), connected, with a gossip stream, unknown ones with a stream, banned", labelNames: ["state"] as const, registers: [registry] });
  const frames = new Counter({ name: "chrysalis_gossip_frames_total", help: "Gossip frames received and sent, by direction and type", labelNames: ["direction", "type"] as const, registers: [registry] });
  const gossipRequests = new Counter({ name: "chrysalis_gossip_requests_total", help: "Message and milestone requests: sent to peers, answered, discarded unanswered, refused for a full queue", labelNames: ["result"] as const, registers: [registry] });
  const pendingRequests = new Gauge({ name: "chrysalis_gossip_requests_pending", help: "Requests waiting for their answer", registers: [registry] });
  const dropped = new Counter({ name: "chrysalis_peers_dropped_total", help: "Peers dropped, by reason", labelNames: ["reason"] as const, registers: [registry] });
  const droppedFrames = new Counter({ name: "chrysalis_gossip_frames_dropped_total", help: "Frames not sent because a peer's send or answer queue was full", registers: [registry] });
  const waiting = new Gauge({ name: "chrysalis_messages_waiting_for_parents", help: "Messages from peers held until their parents arrive", registers: [registry] });
  const untrusted = new Counter({ name: "chrysalis_gossip_milestones_untrusted_total", help: "Messages from peers with a milestone payload that is not a milestone here (signatures that do not verify against the trusted keys, or parents not the message's): stored as plain messages, their senders kept", registers: [registry] });
  let gossipSource: GossipSource | undefined;
  let networkSource: NetworkSource | undefined;
  const lastGossip = new Map<string, number>();
  /** Adds to `metric` what `value` grew by since the last scrape (`key` names the series). */
  const grow = (metric: Counter<string>, key: string, value: number, labels: Record<string, string> = {}): void => {
    const delta = value - (lastGossip.get(key) ?? 0);
    if (delta > 0) metric.inc(labels, delta);
    lastGossip.set(key, value);
  };
  const updateGossip = (): void => {
    if (networkSource !== undefined) {
      waiting.set(networkSource.waiting.messages);
      grow(untrusted, "untrusted milestones", networkSource.untrustedMilestones);
    }
    if (gossipSource === undefined) return;
    const stats = gossipSource.stats();
    for (const [state, count] of Object.entries(stats.peers)) peers.set({ state }, count);
    for (const [direction, counts] of [["in", stats.framesIn], ["out", stats.framesOut]] as const) {
      for (const [type, count] of Object.entries(counts)) grow(frames, `frames ${direction} ${type}`, count, { direction, type });
    }
    for (const result of ["sent", "answered", "discarded", "refused"] as const) grow(gossipRequests, `requests ${result}`, stats.requests[result], { result });
    pendingRequests.set(stats.requests.pending);
    for (const [reason, count] of Object.entries(stats.peersDropped)) grow(dropped, `dropped ${reason}`, count, { reason });
    grow(droppedFrames, "frames dropped", stats.droppedPackets);
  };
  let storeReadAt = -Infinity;
  // A store that cannot answer now (a database restarting) leaves the gauges at their last values for this scrape.
  const readStore = async (): Promise<void> => {
    if (watchedStore === undefined || performance.now() - storeReadAt < STORE_READ_INTERVAL_MS) return;
    storeReadAt = performance.now();
    const [bytes, index] = await Promise.all([watchedStore.bytes(), watchedStore.pruningIndex()]).catch(() => [undefined, undefined]);
    if (bytes !== undefined) storeBytes.set(bytes);
    if (index !== undefined) pruningIndex.set(index);
  };
  const update = (): void => {
    if (source === undefined) return;
    const stats = source.stats();
    const now = performance.now();
    accepted.inc(Math.max(0, stats.accepted - last.accepted));
    rejected.inc(Math.max(0, stats.rejected - last.rejected));
    const delta = Math.max(0, stats.powHashes - last.hashes);
    hashes.inc(delta);
    hashRate.set(now > last.at ? delta / ((now - last.at) / 1000) : 0);
    powDepth.set(stats.powActive);
    powQueued.set(stats.powQueued);
    checkpoints.inc(Math.max(0, stats.checkpoints - last.checkpoints));
    last.checkpoints = stats.checkpoints;
    last.accepted = stats.accepted;
    last.rejected = stats.rejected;
    last.hashes = stats.powHashes;
    last.at = now;
  };

  return {
    registry,
    request(method, route, status, seconds) {
      const key = `${route} ${method} ${status}`;
      let series = perAnswer.get(key);
      if (series === undefined) {
        const login = route === "prove-ownership" && method === "POST" ? logins.series({ result: status === 200 ? "success" : "failure" }) : undefined;
        series = { requests: requests.series({ route, method, status: String(status) }), latency: latency.series({ route, method }), login };
        perAnswer.set(key, series);
      }
      series.requests.value++;
      series.latency.observe(seconds);
      if (series.login !== undefined) series.login.value++;
    },
    rateLimited: (rateClass) => limited.inc({ class: rateClass }),
    connectionRefused: (reason) => refused.inc({ cap: reason }),
    connections: (count) => open.set(count),
    instrumentStore<S extends NodeStore>(store: S): S {
      // One wrapper per operation, made on first use: the proxy is read on every store call of every request.
      const wrappers = new Map<string, { method: unknown; wrapper: (...args: unknown[]) => unknown }>();
      return new Proxy(store, {
        get(target, property) {
          // The store itself as the receiver: its getters read private (#) state, which the proxy does not have.
          const value = Reflect.get(target, property, target) as unknown;
          if (typeof value !== "function" || typeof property !== "string") return value;
          const known = wrappers.get(property);
          if (known !== undefined && known.method === value) return known.wrapper;
          const series = storeLatency.series({ operation: property });
          // Called on the store itself, not the proxy: engines keep private (#) state.
          const wrapper = (...args: unknown[]): unknown => {
            const started = performance.now();
            const end = (): void => series.observe((performance.now() - started) / 1000);
            const result = (value as (...a: unknown[]) => unknown).apply(target, args);
            // The caller gets the store's own promise, and the time is read beside it: a promise chained in between
            // (then() or finally()) cost every store call of every request another promise and microtask.
            if (result instanceof Promise) {
              result.then(end, end);
              return result;
            }
            end();
            return result;
          };
          wrappers.set(property, { method: value, wrapper });
          return wrapper;
        },
      });
    },
    watch(node) {
      source = node;
    },
    watchStore(store) {
      watchedStore = store;
      storeReadAt = -Infinity;
    },
    pruned(step) {
      prunedMessages.inc(step.messages);
      pruningIndex.set(step.pruningIndex);
    },
    watchGossip(gossip, network) {
      gossipSource = gossip;
      networkSource = network;
    },
    async render() {
      update();
      updateGossip();
      await readStore();
      return { body: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
