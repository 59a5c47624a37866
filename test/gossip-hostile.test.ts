// Hostile and broken peers (issue 34 §6, GOSSIP.md §5): a bare libp2p host (TCP, Noise, Yamux, multistream-select) in
// its own process writes bad frames, an invalid message or a flood on a gossip stream; the node drops and bans it
// (refused on its next connection) while a good peer connected all along keeps being served. Also: the stream's first
// frames, the unknown-peer limit, and liveness.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { fromHex } from "../src/bytes/hex.js";
import { networkId } from "../src/model/ids.js";
import { gossipProtocolId, type GossipStats } from "../src/node/gossip/index.js";
import { eventually, killAll, messageHex, NETWORK, spawnPeer, type PeerProcess } from "./gossip-helpers.js";

const PROTOCOL = gossipProtocolId(networkId(NETWORK));
const HEARTBEAT = "040e00" + "0a000000" + "00000000" + "0a000000" + "0000";
type RawState = { open: boolean; closed: string | undefined; readBytes: number; head: string; connections: number };

afterAll(killAll);

describe("a peer breaking the protocol is dropped and banned; a good peer notices nothing", () => {
  let node: PeerProcess;
  let good: PeerProcess;
  const stored = messageHex("kept by the node");
  const storedId = toHex(blake2b256(fromHex(stored)));

  beforeAll(async () => {
    node = await spawnPeer({ status: { solid: 10, pruned: 0, latest: 10 }, limits: { maxFramesPerSecond: 200, maxRequestsPerSecond: 100, banMs: 60_000 } });
    good = await spawnPeer({ status: { solid: 10, pruned: 0, latest: 10 } });
    await node.call("add", stored);
    await good.call("addPeer", node.address);
    await good.waitFor((e) => e.event === "heartbeat" && e.peerId === node.peerId, 10_000, "the node's heartbeat at the good peer");
    await node.waitFor((e) => e.event === "heartbeat" && e.peerId === good.peerId, 10_000, "the good peer's heartbeat at the node");
  });
  afterAll(async () => {
    await Promise.all([node?.stop(), good?.stop()]);
  });

  async function hostile(bytes: string, times: number, reason: string): Promise<PeerProcess> {
    const raw = await spawnPeer({ mode: "raw" });
    await raw.call("open", node.address, PROTOCOL);
    await raw.call("write", bytes, times);
    const dropped = await node.waitFor((e) => e.event === "gossip" && e.type === "dropped" && e.peerId === raw.peerId, 10_000, `the node dropping the peer (${reason})`);
    expect(dropped.reason).toBe(reason);
    expect(dropped.bannedUntil).toBeGreaterThan(Date.now());
    await eventually(async () => (await raw.call<RawState>("state")).open === false, 5000, "the hostile stream closed");
    // Kept out: its next connection is refused, and no frame reaches it.
    let reopened = true;
    try {
      await raw.call("open", node.address, PROTOCOL);
      await eventually(async () => (await raw.call<RawState>("state")).open === false, 5000, "the banned peer's new stream closed");
    } catch {
      reopened = false;
    }
    const state = await raw.call<RawState>("state");
    expect(reopened ? state.readBytes : 0).toBe(0);
    return raw;
  }

  const cases: [string, string, number, string][] = [
    ["an unknown type (5)", "050000", 1, "malformed"],
    ["an oversized length (a message of 65535 bytes)", "02ffff", 1, "malformed"],
    ["a fixed type at the wrong length (a heartbeat of 13 bytes)", "040d00", 1, "malformed"],
    ["a message the node calls invalid", "020400ff000000", 1, "invalid"],
    ["a flood of heartbeats (1000 at once, the limit is 200 a second)", HEARTBEAT, 1000, "flood"],
    ["a flood of message requests (500 at once, the limit is 100 a second)", "032000" + "ab".repeat(32), 500, "flood"],
    ["a flood of no-op frames (00 03 00, 1000 at once)", "000300", 1000, "flood"],
  ];
  for (const [what, bytes, times, reason] of cases) {
    it(`${what}: dropped (${reason}) and refused when it comes back`, async () => {
      const raw = await hostile(bytes, times, reason);
      await raw.stop();
    });
  }

  it("after all of them the good peer is still connected and served: its request is answered", async () => {
    expect(good.events.filter((e) => e.event === "gossip" && (e.type === "closed" || e.type === "dropped"))).toEqual([]);
    expect(await good.call("request", storedId, 5, false)).toBe(true);
    const received = await good.waitFor((e) => e.event === "received" && e.id === storedId, 10_000, "the requested message");
    expect(received).toMatchObject({ from: node.peerId, requested: true, verdict: "new" });
    const stats = await node.call<GossipStats>("stats");
    expect(stats.peersDropped).toMatchObject({ malformed: 3, invalid: 1, flood: 3 });
    expect(stats.peers.banned).toBe(7);
    expect(stats.peers.streams).toBe(1);
  });
});

describe("streams: the first frames, one stream per peer, the unknown-peer limit, liveness", () => {
  let node: PeerProcess;
  beforeAll(async () => {
    node = await spawnPeer({ status: { solid: 4, pruned: 2, latest: 6 }, limits: { unknownPeersLimit: 2, firstHeartbeatMs: 1500, heartbeatCheckMs: 250, banMs: 60_000 } });
  });
  afterAll(() => node?.stop());

  it("the node starts each stream with a heartbeat, then a milestone request for 0", async () => {
    const raw = await spawnPeer({ mode: "raw" });
    try {
      await raw.call("open", node.address, PROTOCOL);
      const state = await eventually(async () => {
        const s = await raw.call<RawState>("state");
        return s.readBytes >= 24 ? s : undefined;
      }, 5000, "the first frames");
      // 04 0e00 | solid 4 | pruned 2 | latest 6 | connected 1 | synced 0, then 01 0400 | 0.
      expect(state.head.slice(0, 48)).toBe("040e00" + "04000000" + "02000000" + "06000000" + "01" + "00" + "010400" + "00000000");
    } finally {
      await raw.stop();
    }
  });

  it("a peer that sends no heartbeat within the first-heartbeat time is disconnected, not banned", async () => {
    const raw = await spawnPeer({ mode: "raw" });
    try {
      await raw.call("open", node.address, PROTOCOL);
      const dropped = await node.waitFor((e) => e.event === "gossip" && e.type === "dropped" && e.peerId === raw.peerId, 10_000, "a liveness drop");
      expect(dropped).toMatchObject({ reason: "liveness" });
      expect(dropped.bannedUntil).toBeUndefined();
      // Not banned: it may come back (once its old connection is gone).
      await eventually(async () => (await raw.call<RawState>("state")).connections === 0, 5000, "the old connection closed");
      await raw.call("open", node.address, PROTOCOL);
      await raw.call("write", HEARTBEAT);
      await node.waitFor((e) => e.event === "heartbeat" && e.peerId === raw.peerId, 5000, "the returning peer's heartbeat");
    } finally {
      await raw.stop();
    }
  });

  it("a peer whose last heartbeat is older than the heartbeat timeout is disconnected", async () => {
    const strict = await spawnPeer({ limits: { heartbeatTimeoutMs: 800, firstHeartbeatMs: 400, heartbeatCheckMs: 200 } });
    const raw = await spawnPeer({ mode: "raw" });
    try {
      await raw.call("open", strict.address, PROTOCOL);
      await raw.call("write", HEARTBEAT);
      const hb = await strict.waitFor((e) => e.event === "heartbeat" && e.peerId === raw.peerId, 5000, "the one heartbeat");
      const dropped = await strict.waitFor((e) => e.event === "gossip" && e.type === "dropped" && e.peerId === raw.peerId, 5000, "a liveness drop");
      expect(dropped).toMatchObject({ reason: "liveness" });
      expect(String(dropped.error)).toMatch(/no heartbeat for \d+ ms/);
      expect(strict.events.indexOf(dropped)).toBeGreaterThan(strict.events.indexOf(hb));
    } finally {
      await Promise.all([raw.stop(), strict.stop()]);
    }
  });

  it("unknown peers get a stream only while fewer than the limit (2 here) hold one", async () => {
    const raws = await Promise.all([0, 1, 2].map(() => spawnPeer({ mode: "raw" })));
    try {
      for (const raw of raws.slice(0, 2)) {
        await raw.call("open", node.address, PROTOCOL);
        await raw.call("write", HEARTBEAT);
        await node.waitFor((e) => e.event === "heartbeat" && e.peerId === raw.peerId, 5000, "an unknown peer's heartbeat");
      }
      const third = raws[2]!;
      let opened = true;
      await third.call("open", node.address, PROTOCOL).catch(() => (opened = false));
      if (opened) await eventually(async () => (await third.call<RawState>("state")).open === false, 5000, "the third stream refused");
      const refused = await node.waitFor((e) => e.event === "gossip" && e.type === "dropped" && e.peerId === third.peerId, 5000, "the refusal");
      expect(refused).toMatchObject({ reason: "refused", error: "no free slot for an unknown peer" });
      // The first two keep their streams.
      for (const raw of raws.slice(0, 2)) expect((await raw.call<RawState>("state")).open).toBe(true);
    } finally {
      await Promise.all(raws.map((r) => r.stop()));
    }
  });

  it("adding a peer connected inbound without a stream opens one on that connection (the opener rule's exception)", async () => {
    const raw = await spawnPeer({ mode: "raw" });
    try {
      await raw.call("listen", PROTOCOL);
      // The raw peer connects but, being the outbound side, would have to open the stream itself: it does not.
      expect(await raw.call("dial", node.address)).toBe("connected");
      await new Promise((r) => setTimeout(r, 300));
      expect((await raw.call<RawState>("state")).readBytes).toBe(0);
      await node.call("addPeer", raw.address);
      const state = await eventually(async () => {
        const s = await raw.call<RawState>("state");
        return s.readBytes >= 24 ? s : undefined;
      }, 5000, "a stream opened by the node");
      expect(state.head.slice(0, 6)).toBe("040e00");
      expect(state.connections).toBe(1);
      await node.call("removePeer", raw.peerId);
    } finally {
      await raw.stop();
    }
  });

  it("a connection that carries no gossip stream is closed after the stream wait: it only holds a slot", async () => {
    const strict = await spawnPeer({ limits: { streamWaitMs: 500 } });
    const raw = await spawnPeer({ mode: "raw" });
    try {
      expect(await raw.call("dial", strict.address)).toBe("connected");
      expect((await raw.call<RawState>("state")).connections).toBe(1);
      await eventually(async () => (await raw.call<RawState>("state")).connections === 0, 5000, "the idle connection closed");
    } finally {
      await Promise.all([raw.stop(), strict.stop()]);
    }
  });

  it("a second stream from a peer that holds one is refused; the first stays", async () => {
    const raw = await spawnPeer({ mode: "raw" });
    const twin = await spawnPeer({ mode: "raw", seed: raw.seed });
    try {
      await raw.call("open", node.address, PROTOCOL);
      await raw.call("write", HEARTBEAT);
      await node.waitFor((e) => e.event === "heartbeat" && e.peerId === raw.peerId, 5000, "the first stream's heartbeat");
      await twin.call("open", node.address, PROTOCOL).catch(() => undefined);
      const refused = await node.waitFor((e) => e.event === "gossip" && e.type === "dropped" && e.peerId === raw.peerId && e.reason === "refused", 5000, "the refusal");
      expect(refused.error).toBe("duplicated stream");
      expect((await raw.call<RawState>("state")).open).toBe(true);
    } finally {
      await Promise.all([raw.stop(), twin.stop()]);
    }
  });
});
