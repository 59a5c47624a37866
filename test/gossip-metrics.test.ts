// Gossip in GET /metrics, read from real nodes peering over libp2p on 127.0.0.1 in one process: the peers by state,
// frames in and out by type, requests sent and answered, peers dropped. The exposition is parsed whole (every line a
// HELP, a TYPE or a sample of a declared family) and the two sides of one stream are held to the same counts.
import { afterEach, describe, expect, it } from "vitest";
import { startNode, type NodeSetup } from "../src/cli/setup.js";
import { toHex } from "../src/bytes/hex.js";
import { milestonePublicKey } from "../src/model/milestone.js";
import { genesisLedger, until, wallet, type Wallet } from "./node-helpers.js";

const NETWORK = "chrysalis-gossip-metrics";
const FRAME_TYPES = ["message", "messageRequest", "milestoneRequest", "heartbeat"] as const;
const running: NodeSetup[] = [];

afterEach(async () => {
  for (const n of running.splice(0).reverse()) await n.close().catch(() => undefined);
});

interface Family {
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (-?[0-9.e+-]+|[Nn]a[Nn]|[+-]Inf)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const SUFFIXES = ["", "_bucket", "_sum", "_count", "_total", "_created"];

/**
 * The Prometheus text format (0.0.4), every line accounted for: a line that is none of HELP, TYPE or a sample of a
 * family declared above it fails. NaN in any case: prom-client writes "Nan" (String(NaN) capitalised), which
 * Prometheus reads as Go's ParseFloat does, ignoring case.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) {
      families.set(type[1]!, { type: type[2]!, samples: [] });
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (sample === null) throw new Error(`not a line of the exposition format: ${JSON.stringify(line)}`);
    const name = sample[1]!;
    const family = SUFFIXES.map((s) => (s === "" || name.endsWith(s) ? families.get(name.slice(0, name.length - s.length)) : undefined)).find((f) => f !== undefined);
    if (family === undefined) throw new Error(`a sample of no declared family: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (sample[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!;
    family.samples.push({ name, labels, value: Number(sample[3]) });
  }
  return families;
}

/** One node's gossip series, as its GET /metrics says them. */
async function scrape(n: NodeSetup) {
  const response = await fetch(`${n.server.url}/metrics`);
  expect(response.status).toBe(200);
  const families = parseExposition(await response.text());
  const family = (name: string, type: string): Family => {
    const f = families.get(name);
    expect(f?.type, name).toBe(type);
    return f!;
  };
  const value = (name: string, type: string, where: Record<string, string> = {}): number => {
    const found = family(name, type).samples.filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v));
    expect(found.length, `${name} ${JSON.stringify(where)}`).toBeLessThanOrEqual(1);
    // A labelled counter has no series until its first increment: none yet is zero.
    return found[0]?.value ?? 0;
  };
  const frames = (direction: "in" | "out") => Object.fromEntries(FRAME_TYPES.map((type) => [type, value("chrysalis_gossip_frames_total", "counter", { direction, type })])) as Record<(typeof FRAME_TYPES)[number], number>;
  return {
    peers: Object.fromEntries(["known", "connected", "streams", "unknownStreams", "banned"].map((state) => [state, value("chrysalis_peers", "gauge", { state })])),
    in: frames("in"),
    out: frames("out"),
    requests: { sent: value("chrysalis_gossip_requests_total", "counter", { result: "sent" }), answered: value("chrysalis_gossip_requests_total", "counter", { result: "answered" }) },
    pending: value("chrysalis_gossip_requests_pending", "gauge"),
    dropped: (reason: string) => value("chrysalis_peers_dropped_total", "counter", { reason }),
    droppedFrames: value("chrysalis_gossip_frames_dropped_total", "counter"),
    waiting: value("chrysalis_messages_waiting_for_parents", "gauge"),
    untrustedMilestones: value("chrysalis_gossip_milestones_untrusted_total", "counter"),
  };
}

/** A node with metrics and gossip on a free port: the coordinator when `seed` is given, else a follower of `keys`. */
async function node(owner: Wallet, options: { seed?: Uint8Array; keys?: Uint8Array[]; peers?: NodeSetup[] }): Promise<NodeSetup> {
  const setup = await startNode({
    network: NETWORK,
    minPoWScore: 1,
    ledger: genesisLedger(owner),
    host: "127.0.0.1",
    port: 0,
    pow: { workers: 1 },
    metrics: true,
    coordinator: options.seed === undefined ? false : { keys: [options.seed], intervalMs: 100 },
    gossip: {
      bind: ["/ip4/127.0.0.1/tcp/0"],
      peers: (options.peers ?? []).map((p) => ({ multiAddress: p.gossip!.listenAddresses()[0]! })),
      milestoneKeys: options.keys ?? [],
    },
  });
  running.push(setup);
  return setup;
}

const confirmed = (n: NodeSetup): number => n.node.parts.confirmation.confirmedIndex;

describe("GET /metrics on nodes that peer: gossip's series follow the frames that flow", () => {
  it("a follower joining late: the peers by state, its requests sent and answered, frames by type; each frame one side counts out the other counts in", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(21);
    const a = await node(owner, { seed });
    for (let i = 0; i < 5; i++) await a.node.submitMessage({ payload: { type: 2, index: toHex(new TextEncoder().encode("metrics")), data: toHex(new TextEncoder().encode(String(i))) } });
    await until(() => confirmed(a) >= 8, 20_000);
    // Alone, the coordinator has sent and received nothing.
    const alone = await scrape(a);
    expect(alone.peers).toEqual({ known: 0, connected: 0, streams: 0, unknownStreams: 0, banned: 0 });
    expect(Object.values(alone.in).concat(Object.values(alone.out))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);

    const b = await node(owner, { keys: [milestonePublicKey(seed)], peers: [a] });
    await until(() => confirmed(b) >= 8 && confirmed(b) >= confirmed(a) - 1, 30_000);
    // Quiet: no more milestones, every request answered, every frame written read by the other side.
    await a.coordinator!.stop();
    await until(() => confirmed(b) === confirmed(a) && b.gossip!.stats().requests.pending === 0, 20_000);
    let [atA, atB] = [await scrape(a), await scrape(b)];
    await until(async () => {
      [atA, atB] = [await scrape(a), await scrape(b)];
      return FRAME_TYPES.every((t) => atA.out[t] === atB.in[t] && atB.out[t] === atA.in[t]);
    }, 20_000);
    console.log(`once quiet: A out ${JSON.stringify(atA.out)}, in ${JSON.stringify(atA.in)}; B requests ${JSON.stringify(atB.requests)}`);
    expect(atB.in).toEqual(atA.out);
    expect(atA.in).toEqual(atB.out);
    // B is A's static peer's other end: known to B, an unknown (inbound) stream to A.
    expect(atA.peers).toEqual({ known: 0, connected: 1, streams: 1, unknownStreams: 1, banned: 0 });
    expect(atB.peers).toEqual({ known: 1, connected: 1, streams: 1, unknownStreams: 0, banned: 0 });
    // The late follower asked for the milestones and their cones, and was answered with message frames.
    expect(atB.requests.sent).toBeGreaterThan(0);
    expect(atB.requests.answered).toBeGreaterThan(0);
    expect(atB.out.milestoneRequest + atB.out.messageRequest).toBeGreaterThanOrEqual(atB.requests.sent);
    expect(atB.in.message).toBeGreaterThanOrEqual(atB.requests.answered);
    expect(atB.in.message).toBeGreaterThanOrEqual(5 + 8);
    expect(atB.in.heartbeat).toBeGreaterThan(0);
    expect(atA.in.heartbeat).toBeGreaterThan(0);
    for (const at of [atA, atB]) {
      expect(at.pending).toBe(0);
      expect(at.waiting).toBe(0);
      expect(at.droppedFrames).toBe(0);
      for (const reason of ["malformed", "invalid", "flood", "liveness", "timeout", "refused"]) expect(at.dropped(reason), reason).toBe(0);
    }

    // One more message at A: one message frame out of A, one into B.
    const stored = await a.node.submitMessage({ payload: { type: 2, index: toHex(new TextEncoder().encode("metrics")), data: "" } });
    await until(async () => await b.node.store.has(stored.messageId), 10_000);
    await until(async () => (await scrape(b)).in.message === atB.in.message + 1, 10_000);
    const [nextA, nextB] = [await scrape(a), await scrape(b)];
    expect(nextA.out.message).toBe(atA.out.message + 1);
    expect(nextB.in.message).toBe(atB.in.message + 1);
  }, 90_000);

  it("a peer sending milestones signed by another key is not dropped (Hornet: plain messages, no penalty): messages counted in, each counted untrusted, no drop, no ban", async () => {
    const owner = wallet();
    const a = await node(owner, { seed: new Uint8Array(32).fill(22) });
    await until(() => confirmed(a) >= 1, 20_000);
    const c = await node(owner, { keys: [milestonePublicKey(new Uint8Array(32).fill(23))], peers: [a] });
    await until(async () => (await scrape(c)).in.message >= 2, 20_000);
    const atC = await scrape(c);
    expect(atC.dropped("invalid")).toBe(0);
    expect(atC.peers.banned).toBe(0);
    expect(atC.peers.streams).toBe(1);
    expect(confirmed(c)).toBe(0);
    // Every message A sent C is one of A's milestones (C submits nothing): each is counted, on C alone.
    await until(async () => (await scrape(c)).untrustedMilestones >= 2, 10_000);
    expect((await scrape(a)).untrustedMilestones).toBe(0);
    expect(c.network!.untrustedMilestones).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
