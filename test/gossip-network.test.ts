// Gossip between peers in processes of their own (GOSSIP.md §4): messages relayed to every other peer and never back
// to the sender, requests sent to the peer the heartbeats choose, re-sent and given up on schedule, answered (or not)
// from the store, and a known peer redialled with back-off until it is back after a restart.
import { afterAll, describe, expect, it } from "vitest";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import type { GossipStats, PeerJson } from "../src/node/gossip/index.js";
import { eventually, killAll, messageHex, spawnPeer, type PeerProcess } from "./gossip-helpers.js";

afterAll(killAll);

const idOf = (hex: string): string => toHex(blake2b256(fromHex(hex)));
const heartbeatFrom = (at: PeerProcess, from: PeerProcess) => at.waitFor((e) => e.event === "heartbeat" && e.peerId === from.peerId, 10_000, `${from.peerId}'s heartbeat`);
async function metricsAt(at: PeerProcess, of: PeerProcess): Promise<PeerJson["gossip"]> {
  const peers = await at.call<PeerJson[]>("peers");
  return peers.find((p) => p.id === of.peerId)?.gossip;
}
async function link(from: PeerProcess, to: PeerProcess): Promise<void> {
  await from.call("addPeer", to.address);
  await Promise.all([heartbeatFrom(from, to), heartbeatFrom(to, from)]);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("relay: to every other peer, never back to the sender", () => {
  it("three peers in a triangle: A's message reaches B and C, each relays it to the peer it did not get it from, never back to the sender", async () => {
    const [a, b, c] = await Promise.all([spawnPeer(), spawnPeer(), spawnPeer()]);
    try {
      await link(a, b);
      await link(a, c);
      await link(b, c);
      const m = messageHex("triangle");
      expect(await a.call("broadcast", m)).toBe(2);
      const firstCopy = await Promise.all([b, c].map((p) => p.waitFor((e) => e.event === "received" && e.id === idOf(m) && e.verdict === "new", 5000, "the message")));
      // Which copy reaches B or C first is a race: A's own, or the other's relay of it when that one outran A's. Either
      // way each relays it to its one other peer, and never to the one it got its first copy from.
      const peers = [a, b, c];
      const relays = [b, c].map((p, i) => ({ p, sender: peers.find((q) => q.peerId === firstCopy[i]!.from)!, others: peers.filter((q) => q !== p && q.peerId !== firstCopy[i]!.from) }));
      for (const { sender, others } of relays) {
        expect(sender).toBeDefined();
        expect(others).toHaveLength(1);
      }
      await eventually(async () => {
        for (const { p, others } of relays) for (const o of others) if ((await metricsAt(o, p))!.metrics.receivedMessages < 1) return false;
        return true;
      }, 5000, "each relay to the other peer");
      await sleep(500);
      for (const { p, sender, others } of relays) {
        expect((await metricsAt(sender, p))!.metrics.receivedMessages).toBe(0);
        for (const o of others) expect((await metricsAt(o, p))!.metrics.receivedMessages).toBe(1);
      }
      // Every duplicate was filtered before any work: each node was handed the message once, A never.
      const stats = await Promise.all([b, c].map((p) => p.call<GossipStats>("stats")));
      expect(stats[0]!.duplicateMessages + stats[1]!.duplicateMessages).toBeGreaterThanOrEqual(1);
      for (const p of [b, c]) expect(p.events.filter((e) => e.event === "received" && e.id === idOf(m))).toHaveLength(1);
      expect(a.events.filter((e) => e.event === "received")).toEqual([]);
    } finally {
      await Promise.all([a, b, c].map((p) => p.stop()));
    }
  });

  it("a line A - B - C: B relays A's message to C only", async () => {
    const [a, b, c] = await Promise.all([spawnPeer(), spawnPeer(), spawnPeer()]);
    try {
      await link(a, b);
      await link(c, b);
      const m = messageHex("line");
      expect(await a.call("broadcast", m)).toBe(1);
      const atC = await c.waitFor((e) => e.event === "received" && e.id === idOf(m), 5000, "the message at C");
      expect(atC).toMatchObject({ from: b.peerId, requested: false, verdict: "new" });
      await sleep(300);
      expect((await metricsAt(a, b))!.metrics.receivedMessages).toBe(0);
      expect((await metricsAt(b, a))!.metrics).toMatchObject({ receivedMessages: 1, newMessages: 1 });
      expect((await metricsAt(b, c))!.metrics.sentMessages).toBe(1);
    } finally {
      await Promise.all([a, b, c].map((p) => p.stop()));
    }
  });
});

describe("requests: to the peer whose heartbeat says it has the data, re-sent, given up, answered", () => {
  it("asks the first peer with pruned < index <= solid only; else every peer with pruned < index <= latest; never one without data", async () => {
    const a = await spawnPeer({ limits: { requestRetryMs: 60_000 } });
    const b = await spawnPeer({ status: { solid: 10, pruned: 0, latest: 15 } });
    const c = await spawnPeer({ status: { solid: 10, pruned: 5, latest: 15 } });
    try {
      await link(a, b);
      await link(a, c);
      const asked = async (): Promise<[number, number]> => [(await metricsAt(b, a))!.metrics.receivedMessageRequests, (await metricsAt(c, a))!.metrics.receivedMessageRequests];
      const x = messageHex("held by C");
      await c.call("add", x);
      // Index 3: B holds it (0 < 3 <= 10); C pruned it (5 >= 3). B alone is asked, and stays silent.
      expect(await a.call("request", idOf(messageHex("nobody has this")), 3, false)).toBe(true);
      await eventually(async () => (await asked())[0] === 1, 5000, "B asked");
      // Index 12: above both solids, within both latests: both asked; C answers.
      expect(await a.call("request", idOf(x), 12, false)).toBe(true);
      const got = await a.waitFor((e) => e.event === "received" && e.id === idOf(x), 5000, "C's answer");
      expect(got).toMatchObject({ from: c.peerId, requested: true, verdict: "new" });
      expect(await asked()).toEqual([2, 1]);
      // Index 20: above every latest: nobody is asked.
      await a.call("request", idOf(messageHex("from the future")), 20, false);
      await sleep(300);
      expect(await asked()).toEqual([2, 1]);
      const stats = await a.call<GossipStats>("stats");
      expect(stats.requests).toMatchObject({ sent: 3, answered: 1, pending: 2 });
    } finally {
      await Promise.all([a, b, c].map((p) => p.stop()));
    }
  });

  it("re-sent every retry interval and given up after the discard time, unless preventDiscard", async () => {
    const a = await spawnPeer({ limits: { requestRetryMs: 300, requestDiscardMs: 1000 } });
    const b = await spawnPeer({ status: { solid: 10, pruned: 0, latest: 10 } });
    try {
      await link(a, b);
      const count = async (): Promise<number> => (await metricsAt(b, a))!.metrics.receivedMessageRequests;
      await a.call("request", idOf(messageHex("never answered")), 5, false);
      await sleep(1600);
      // Sent at 0, 300, 600 and 900 ms (the tick may slip a little): three or four times, then dropped.
      const sent = await count();
      expect(sent).toBeGreaterThanOrEqual(3);
      expect(sent).toBeLessThanOrEqual(4);
      expect((await a.call<GossipStats>("stats")).requests).toMatchObject({ discarded: 1, pending: 0 });
      await sleep(700);
      expect(await count()).toBe(sent);
      // preventDiscard: still asked past the discard time.
      await a.call("request", idOf(messageHex("milestone cone")), 5, true);
      await sleep(1700);
      expect((await count()) - sent).toBeGreaterThanOrEqual(5);
      expect((await a.call<GossipStats>("stats")).requests).toMatchObject({ discarded: 1, pending: 1 });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("a message ignored when it came unasked (a node not synced) is taken when it comes again answering a request, within the duplicate window", async () => {
    // A takes only what it asked for, as a node catching up does; B relays a new message to it, then is asked for it.
    const a = await spawnPeer({ ignoreUnrequested: true, limits: { requestRetryMs: 60_000 } });
    const b = await spawnPeer({ status: { solid: 10, pruned: 0, latest: 10 } });
    try {
      await link(a, b);
      const m = messageHex("relayed, then asked for");
      expect(await b.call("broadcast", m)).toBe(1);
      await a.waitFor((e) => e.event === "received" && e.id === idOf(m) && e.verdict === "ignored", 5000, "the relayed copy, ignored");
      // Well within the 5 s duplicate window: the answer is the same bytes, and it is what A asked for.
      expect(await a.call("request", idOf(m), 5, true)).toBe(true);
      const answer = await a.waitFor((e) => e.event === "received" && e.id === idOf(m) && e.requested === true, 3000, "the answer handed to the node");
      expect(answer).toMatchObject({ from: b.peerId, verdict: "new" });
      expect(await a.call("has", idOf(m))).toBe(true);
      expect((await a.call<GossipStats>("stats")).requests).toMatchObject({ answered: 1, pending: 0 });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("answers: a stored id gets one message frame; an unknown or pruned one, silence; a stored milestone by index its message", async () => {
    const a = await spawnPeer({ limits: { requestRetryMs: 60_000 } });
    const b = await spawnPeer({ status: { solid: 8, pruned: 0, latest: 8 } });
    try {
      const kept = messageHex("kept");
      const pruned = messageHex("pruned");
      const milestone = messageHex("milestone 8");
      await b.call("add", kept);
      await b.call("add", pruned);
      await b.call("addMilestone", 8, milestone);
      await b.call("forget", idOf(pruned));
      await link(a, b);
      await a.call("request", idOf(kept), 5, false);
      await a.call("request", idOf(pruned), 5, false);
      await a.call("requestMilestone", 8);
      await a.waitFor((e) => e.event === "received" && e.id === idOf(kept), 5000, "the stored message");
      await a.waitFor((e) => e.event === "received" && e.id === idOf(milestone), 5000, "milestone 8");
      await sleep(500);
      const atB = (await metricsAt(b, a))!.metrics;
      expect(atB).toMatchObject({ receivedMessageRequests: 2, receivedMilestoneRequests: 2 });
      // Milestone 8 twice: once answering the request for 0 (the latest is 8), once for 8; the pruned id: nothing.
      expect(atB.sentMessages).toBe(3);
      expect(a.events.filter((e) => e.event === "received" && e.id === idOf(pruned))).toEqual([]);
      // No error spread: both still connected, nobody dropped.
      for (const p of [a, b]) expect(p.events.filter((e) => e.event === "gossip" && (e.type === "dropped" || e.type === "closed" || e.type === "error"))).toEqual([]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("heartbeats: at the start, when the node's status changes, and to each peer not sent one for a while", () => {
  it("a status change reaches the peer at once; silence past the limit brings one every check", async () => {
    const a = await spawnPeer({ limits: { heartbeatCheckMs: 100, heartbeatMaxSilenceMs: 400 } });
    const b = await spawnPeer();
    try {
      await link(b, a);
      const started = Date.now();
      await a.call("setStatus", 12, 3, 14);
      const changed = await b.waitFor((e) => e.event === "heartbeat" && e.peerId === a.peerId && e.solidMilestoneIndex === 12, 2000, "the changed status");
      expect(changed).toMatchObject({ prunedMilestoneIndex: 3, latestMilestoneIndex: 14 });
      expect(Date.now() - started).toBeLessThan(1000);
      const before = b.events.filter((e) => e.event === "heartbeat" && e.peerId === a.peerId).length;
      await sleep(2000);
      const after = b.events.filter((e) => e.event === "heartbeat" && e.peerId === a.peerId).length;
      // One about every 400-500 ms: four or five in two seconds.
      expect(after - before).toBeGreaterThanOrEqual(3);
      expect(after - before).toBeLessThanOrEqual(6);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("one stream per peer, even when both sides dial at once", () => {
  it("two peers adding each other at the same moment end with one stream each way, and it stays", async () => {
    const [a, b] = await Promise.all([spawnPeer(), spawnPeer()]);
    try {
      await Promise.all([a.call("addPeer", b.address), b.call("addPeer", a.address)]);
      await Promise.all([heartbeatFrom(a, b), heartbeatFrom(b, a)]);
      await sleep(1500);
      for (const [at, of] of [[a, b], [b, a]] as const) {
        const peers = await at.call<PeerJson[]>("peers");
        expect(peers).toHaveLength(1);
        expect(peers[0]).toMatchObject({ id: of.peerId, relation: "known", connected: true });
        expect((await at.call<GossipStats>("stats")).peers.streams).toBe(1);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("known peers are redialled with back-off whenever the connection is lost", () => {
  it("after the other side is killed, dials back off (doubling, capped) and reconnect when it restarts on the same address", async () => {
    const a = await spawnPeer({ limits: { backoffStartMs: 200, backoffMaxMs: 800, dialTimeoutMs: 1000 } });
    let b = await spawnPeer();
    try {
      await link(a, b);
      const port = /\/tcp\/(\d+)\//.exec(b.address)![1]!;
      await b.kill();
      await a.waitFor((e) => e.event === "gossip" && e.type === "closed" && e.peerId === b.peerId, 5000, "the lost stream");
      await eventually(() => a.events.filter((e) => e.type === "dial-failed").length >= 4 || undefined, 10_000, "four failed dials");
      const waits = a.events.filter((e) => e.type === "dial-failed").map((e) => e.retryInMs as number);
      // 400, 800, 800, …: doubled after each failure, never past the cap.
      for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
      expect(Math.max(...waits)).toBe(800);
      const before = a.events.length;
      b = await spawnPeer({ seed: b.seed, listen: [`/ip4/127.0.0.1/tcp/${port}`] });
      const again = await a.waitFor((e) => a.events.indexOf(e) >= before && e.event === "heartbeat" && e.peerId === b.peerId, 10_000, "the restarted peer's heartbeat");
      expect(again.peerId).toBe(b.peerId);
      const peers = await a.call<PeerJson[]>("peers");
      expect(peers.find((p) => p.id === b.peerId)).toMatchObject({ relation: "known", connected: true, multiAddresses: [`/ip4/127.0.0.1/tcp/${port}`] });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
