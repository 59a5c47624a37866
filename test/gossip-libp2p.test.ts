// The libp2p stack under gossip (GOSSIP.md §1-§2), between two real processes on 127.0.0.1: TCP, Noise and Yamux on
// Node 20 without any global patched (js-libp2p 3.x needs Promise.withResolvers), both directions of connection, the
// start of every stream (a heartbeat, then a milestone request for 0, answered), and another network refused.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { fromHex } from "../src/bytes/hex.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { toHex } from "../src/bytes/hex.js";
import { networkId } from "../src/model/ids.js";
import { gossipProtocolId } from "../src/node/gossip/index.js";
import { killAll, messageHex, NETWORK, spawnPeer } from "./gossip-helpers.js";

afterAll(killAll);

describe("two hosts in two processes connect both ways", () => {
  for (const direction of ["A dials B", "B dials A"] as const) {
    it(`${direction}: the inbound side accepts, and each side sends a heartbeat and then a milestone request for 0`, async () => {
      const milestone = messageHex(`milestone 7 of ${direction}`);
      const a = await spawnPeer({ status: { solid: 7, pruned: 0, latest: 7 } });
      const b = await spawnPeer({ status: { solid: 3, pruned: 1, latest: 9 } });
      try {
        await a.call("addMilestone", 7, milestone);
        const [dialler, listener] = direction === "A dials B" ? [a, b] : [b, a];
        expect(await dialler.call("withResolvers")).toBe(process.versions.node.startsWith("20.") ? "undefined" : "function");
        await dialler.call("addPeer", listener.address);
        // Each side hears the other's heartbeat: its status as the other one set it.
        const atA = await a.waitFor((e) => e.event === "heartbeat" && e.peerId === b.peerId, 10_000, "B's heartbeat at A");
        expect(atA).toMatchObject({ solidMilestoneIndex: 3, prunedMilestoneIndex: 1, latestMilestoneIndex: 9 });
        const atB = await b.waitFor((e) => e.event === "heartbeat" && e.peerId === a.peerId, 10_000, "A's heartbeat at B");
        expect(atB).toMatchObject({ solidMilestoneIndex: 7, prunedMilestoneIndex: 0, latestMilestoneIndex: 7, connectedNeighbors: 1 });
        // B's milestone request for 0 is answered with A's latest milestone; A's to B (which has none) gets silence.
        const id = toHex(blake2b256(fromHex(milestone)));
        await b.waitFor((e) => e.event === "received" && e.id === id, 10_000, "A's latest milestone at B");
        const peersAtA = await a.call<{ id: string; relation: string; connected: boolean; gossip?: { metrics: Record<string, number> } }[]>("peers");
        const bAtA = peersAtA.find((p) => p.id === b.peerId)!;
        expect(bAtA.connected).toBe(true);
        expect(bAtA.relation).toBe(dialler === a ? "known" : "unknown");
        expect(bAtA.gossip!.metrics).toMatchObject({ receivedMilestoneRequests: 1, sentMessages: 1, sentMilestoneRequests: 1 });
        expect(bAtA.gossip!.metrics.sentHeartbeats).toBeGreaterThanOrEqual(1);
        expect(bAtA.gossip!.metrics.receivedHeartbeats).toBeGreaterThanOrEqual(1);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
      // Neither process died of an unhandled rejection: both stopped when asked.
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
    });
  }
});

describe("the protocol id is /iota-gossip/<networkId>/1.0.0: another network fails negotiation", () => {
  it("names the network id in decimal (chrysalis-mainnet: 1454675179895816119)", () => {
    expect(gossipProtocolId(networkId("chrysalis-mainnet"))).toBe("/iota-gossip/1454675179895816119/1.0.0");
    expect(gossipProtocolId(networkId("testnet7"))).toBe("/iota-gossip/14379272398717627559/1.0.0");
  });

  it("a node of another network connects but no stream opens; no heartbeat crosses", async () => {
    const a = await spawnPeer();
    const b = await spawnPeer({ network: "another-network" });
    try {
      await a.call("addPeer", b.address);
      await a.waitFor((e) => e.event === "gossip" && e.type === "dial-failed" && e.peerId === b.peerId, 10_000, "a failed stream");
      expect(a.events.some((e) => e.event === "heartbeat")).toBe(false);
      expect(b.events.some((e) => e.event === "heartbeat")).toBe(false);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("libp2p loads when gossip starts, not when chrysalis-core/node is imported (dist, built by npm test)", () => {
  const entry = join(fileURLToPath(new URL("..", import.meta.url)), "dist/node/index.js");
  // A resolve hook prints every package specifier the process asks for, so the test sees what loads.
  const hooks = `export async function resolve(specifier, context, next) { if (/^(libp2p|@libp2p\\/|@chainsafe\\/|@multiformats\\/)/.test(specifier)) console.log("LOADED " + specifier); return next(specifier, context); }`;
  const run = (body: string): string[] => {
    const script = `import { register } from "node:module"; register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hooks)})); const m = await import(${JSON.stringify(entry)}); ${body}`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.split("\n").filter((line) => line.startsWith("LOADED "));
  };

  it("importing it asks for no libp2p package", () => {
    expect(run(`console.log(typeof m.createGossip);`)).toEqual([]);
  });

  it("starting a Gossip loads TCP, Noise, Yamux and libp2p", () => {
    const loaded = run(`const g = m.createGossip({ node: { networkId: 1n, status: () => ({ solid: 0, pruned: 0, latest: 0 }), messageBytes: async () => undefined, milestoneBytes: async () => undefined, knows: () => false, receive: async () => "ignored" }, identity: m.createP2pIdentity(), listen: ["/ip4/127.0.0.1/tcp/0"] }); await g.start(); await g.stop();`);
    for (const name of ["libp2p", "@libp2p/tcp", "@chainsafe/libp2p-noise", "@chainsafe/libp2p-yamux"]) expect(loaded).toContain(`LOADED ${name}`);
  });
});
