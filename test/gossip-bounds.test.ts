// Every table and queue of the gossip part has a bound whatever peers send (ARCHITECTURE.md: bounded as it ages):
// the duplicate filter, the ban table, the requester, the per-peer rate buckets, a peer's send and answer queues, and
// the read and write timeouts of a peer that stops reading or writing.
import { describe, expect, it } from "vitest";
import { encodeHeartbeat, encodeMessageRequest } from "../src/node/gossip/frames.js";
import { BanList, SeenFilter, TokenBucket } from "../src/node/gossip/filters.js";
import { Requester } from "../src/node/gossip/requester.js";
import { PeerSession, type ByteStream, type SessionHost, type SessionLimits } from "../src/node/gossip/session.js";
import type { DropReason } from "../src/node/gossip/types.js";

describe("the duplicate filter holds at most its limit, and forgets after the window", () => {
  it("10 000 ids through a filter of 100 leave at most 100", () => {
    const filter = new SeenFilter(5000, 100, 8, 0);
    for (let i = 0; i < 10_000; i++) filter.add(`id${i}`, "peer", i);
    expect(filter.size).toBeLessThanOrEqual(100);
    expect(filter.get("id9999", 10_000)).toBeDefined();
  });

  it("an id is a duplicate within the window and not after it; its senders are kept up to the bound", () => {
    const filter = new SeenFilter(5000, 1000, 2, 0);
    const entry = filter.add("m", "a", 0);
    for (const peer of ["b", "c", "d"]) filter.addSender(entry, peer);
    expect(entry.senders).toEqual(["a", "b"]);
    expect(filter.get("m", 4999)).toBe(entry);
    expect(filter.get("m", 5000)).toBeUndefined();
  });
});

describe("the ban table holds at most its limit", () => {
  it("2000 bans in a table of 1024: the soonest to end go first, expired ones are purged", () => {
    const bans = new BanList(1024);
    for (let i = 0; i < 2000; i++) bans.ban(`p${i}`, 10_000 + i, 0);
    expect(bans.count(0)).toBe(1024);
    expect(bans.isBanned("p1999", 0)).toBe(true);
    expect(bans.isBanned("p0", 0)).toBe(false);
    expect(bans.count(20_000)).toBe(0);
  });
});

describe("the requester holds at most its limit", () => {
  it("refuses a request past the limit and counts it", () => {
    const requester = new Requester({ limit: 3, retryMs: 5000, discardMs: 15_000 }, () => 1);
    for (let i = 0; i < 3; i++) expect(requester.request("message", `k${i}`, new Uint8Array(32), 1, false, 0)).toBe(true);
    expect(requester.request("message", "k3", new Uint8Array(32), 1, false, 0)).toBe(false);
    // The same id again is no new entry.
    expect(requester.request("message", "k0", new Uint8Array(32), 0, true, 0)).toBe(true);
    expect(requester.counts).toMatchObject({ sent: 3, refused: 1 });
    expect(requester.pending).toBe(3);
  });

  it("re-sends lowest milestone index first", () => {
    const order: number[] = [];
    const requester = new Requester({ limit: 10, retryMs: 100, discardMs: 1000 }, (r) => (order.push(r.index), 1));
    for (const index of [9, 3, 7]) requester.request("message", `i${index}`, new Uint8Array(32), index, false, 0);
    order.length = 0;
    requester.tick(100);
    expect(order).toEqual([3, 7, 9]);
  });
});

describe("per-peer rates: a token bucket of one second's worth", () => {
  it("lets 100 through at once at 100 a second, then one per 10 ms", () => {
    const bucket = new TokenBucket(100, 0);
    for (let i = 0; i < 100; i++) expect(bucket.take(0)).toBe(true);
    expect(bucket.take(0)).toBe(false);
    expect(bucket.take(10)).toBe(true);
    expect(bucket.take(10)).toBe(false);
  });
});

/** A peer's stream as libp2p hands it over, where the peer neither reads nor writes: the source never yields. */
function stuckStream(): ByteStream & { aborted: Error | undefined } {
  const stream = {
    aborted: undefined as Error | undefined,
    source: { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Uint8Array>>(() => undefined) }) },
    // Takes the first frame and then never asks for another, as a sink whose peer stopped reading.
    async sink(source: AsyncIterable<Uint8Array>) {
      const iterator = source[Symbol.asyncIterator]();
      await iterator.next();
      await new Promise(() => undefined);
    },
    abort(error: Error) {
      stream.aborted = error;
    },
    async close() {},
  };
  return stream;
}

function host(clock: { now: number }, ends: DropReason[]): SessionHost & { dropped: number } {
  const counts = () => ({ milestoneRequest: 0, message: 0, messageRequest: 0, heartbeat: 0 });
  const h = {
    dropped: 0,
    now: () => clock.now,
    framesIn: counts(),
    framesOut: counts(),
    droppedPacket: () => void h.dropped++,
    message: async () => undefined,
    answer: async () => undefined,
    heartbeat: () => undefined,
    ended: (_: PeerSession, reason: DropReason | undefined) => void ends.push(reason ?? ("closed" as DropReason)),
  };
  return h;
}

const LIMITS: SessionLimits = { sendQueueSize: 5, answerQueueSize: 4, maxReceiving: 2, maxFramesPerSecond: 1000, maxRequestsPerSecond: 1000, readTimeoutMs: 60_000, writeTimeoutMs: 10_000 };
const HEARTBEAT = encodeHeartbeat({ solidMilestoneIndex: 1, prunedMilestoneIndex: 0, latestMilestoneIndex: 1, connectedNeighbors: 0, syncedNeighbors: 0 });

describe("a peer that stops reading", () => {
  it("its send queue holds at most its size; the rest is dropped and counted in droppedPackets", async () => {
    const clock = { now: 0 };
    const ends: DropReason[] = [];
    const h = host(clock, ends);
    const session = new PeerSession("peer", true, stuckStream(), h, LIMITS);
    session.start([]);
    for (let i = 0; i < 20; i++) session.send(HEARTBEAT, 4);
    await new Promise((r) => setTimeout(r, 10));
    // The burst fills the queue (5) before the writer runs; fifteen are dropped; the writer then hands one to the stuck
    // sink and four wait.
    expect(session.metrics.droppedPackets).toBe(15);
    expect(h.dropped).toBe(15);
    expect(session.queued).toBe(4);
    for (let i = 0; i < 3; i++) session.send(HEARTBEAT, 4);
    expect(session.queued).toBe(5);
    expect(session.metrics.droppedPackets).toBe(17);
    session.end(undefined, undefined);
  });

  it("is dropped with 'timeout' once a write has been stuck for the write timeout; the stream is reset", async () => {
    const clock = { now: 0 };
    const ends: DropReason[] = [];
    const stream = stuckStream();
    const session = new PeerSession("peer", true, stream, host(clock, ends), LIMITS);
    session.start([{ frame: HEARTBEAT, type: 4 }]);
    await new Promise((r) => setTimeout(r, 10));
    clock.now = 9_999;
    session.tick(clock.now);
    expect(ends).toEqual([]);
    clock.now = 10_000;
    session.tick(clock.now);
    expect(ends).toEqual(["timeout"]);
    expect(stream.aborted?.message).toContain("write stuck");
    expect(session.ended).toBe(true);
  });
});

describe("a peer that stops writing", () => {
  it("is dropped with 'timeout' after the read timeout", async () => {
    const clock = { now: 0 };
    const ends: DropReason[] = [];
    const session = new PeerSession("peer", false, { ...stuckStream(), sink: async () => new Promise<void>(() => undefined) }, host(clock, ends), LIMITS);
    session.start([]);
    await new Promise((r) => setTimeout(r, 10));
    clock.now = 60_000;
    session.tick(clock.now);
    expect(ends).toEqual(["timeout"]);
  });
});

describe("a peer's requests wait in a bounded queue for the store", () => {
  it("past the answer queue's size they are dropped (droppedPackets), never answered late or piled up", async () => {
    const clock = { now: 0 };
    const ends: DropReason[] = [];
    const h = host(clock, ends);
    let asked = 0;
    // A store that never answers: every read stays pending.
    h.answer = () => (asked++, new Promise(() => undefined));
    const requests = Array.from({ length: 20 }, (_, i) => encodeMessageRequest(new Uint8Array(32).fill(i)));
    let given = false;
    const stream: ByteStream = {
      source: {
        [Symbol.asyncIterator]: () => ({
          next: () => (given ? new Promise<IteratorResult<Uint8Array>>(() => undefined) : ((given = true), Promise.resolve({ done: false, value: Buffer.concat(requests) }))),
        }),
      },
      sink: async () => new Promise<void>(() => undefined),
      abort: () => undefined,
      close: async () => undefined,
    };
    const session = new PeerSession("peer", false, stream, h, LIMITS);
    session.start([]);
    await new Promise((r) => setTimeout(r, 20));
    // Four store reads at once (ANSWER_CONCURRENCY), four more waiting (the queue's size), twelve dropped.
    expect(session.metrics.receivedMessageRequests).toBe(20);
    expect(asked).toBe(4);
    expect(session.metrics.droppedPackets).toBe(12);
    expect(ends).toEqual([]);
    session.end(undefined, undefined);
  });
});
