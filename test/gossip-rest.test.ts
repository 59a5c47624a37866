// Hornet's REST v1 peers routes (GOSSIP.md §6) over a real gossip part and a real server on loopback, driven by
// iota.js 1.8.6's SingleNodeClient unchanged (peers, peer, peerAdd, peerDelete), and the access rule: loopback
// clients, or the admin token compared in constant time; anyone else 403 FORBIDDEN.
import { ClientError, SingleNodeClient } from "@iota/iota.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGossip, createHandler, createP2pIdentity, type Gossip } from "../src/node/index.js";
import { killAll, NETWORK, spawnPeer, type PeerProcess } from "./gossip-helpers.js";
import { MemoryGossipNode } from "./gossip-memory-node.js";
import { startNode, type Running } from "./node-helpers.js";

const TOKEN = "an admin token for the peers routes";
let gossip: Gossip;
let run: Running;
let other: PeerProcess;
let client: SingleNodeClient;

beforeAll(async () => {
  const node = new MemoryGossipNode(NETWORK);
  gossip = createGossip({ node, identity: createP2pIdentity(), listen: ["/ip4/127.0.0.1/tcp/0"], dialTimeoutMs: 2000 });
  node.gossip = gossip;
  await gossip.start();
  run = await startNode({ handler: { peers: { admin: gossip, adminToken: TOKEN } } });
  other = await spawnPeer({ status: { solid: 5, pruned: 1, latest: 6 } });
  client = new SingleNodeClient(run.url);
});
afterAll(async () => {
  await Promise.all([gossip?.stop(), run?.close(), other?.stop()]);
  await killAll();
});

async function clientError(promise: Promise<unknown>): Promise<ClientError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ClientError);
    return error as ClientError;
  }
  throw new Error("expected a ClientError");
}

describe("iota.js SingleNodeClient against the peers routes", () => {
  it("peers() is [] before any peer", async () => {
    expect(await client.peers()).toEqual([]);
  });

  it("peerAdd(multiAddress, alias) answers 200 with the peer: known, connected, its address without /p2p/", async () => {
    const peer = await client.peerAdd(other.address, "friend");
    expect(peer).toMatchObject({ id: other.peerId, multiAddresses: [other.address.replace(/\/p2p\/.*$/, "")], alias: "friend", relation: "known", connected: true });
  });

  it("peers() and peer(id) show it, with its heartbeat and Hornet's eleven metrics once its stream runs", async () => {
    const deadline = Date.now() + 10_000;
    let peer = await client.peer(other.peerId);
    while ((peer.gossip?.heartbeat ?? null) === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      peer = await client.peer(other.peerId);
    }
    expect(peer.gossip!.heartbeat).toEqual({ solidMilestoneIndex: 5, prunedMilestoneIndex: 1, latestMilestoneIndex: 6, connectedNeighbors: 1, syncedNeighbors: 0 });
    expect(Object.keys(peer.gossip!.metrics).sort()).toEqual(
      ["newMessages", "knownMessages", "receivedMessages", "receivedMessageRequests", "receivedMilestoneRequests", "receivedHeartbeats", "sentMessages", "sentMessageRequests", "sentMilestoneRequests", "sentHeartbeats", "droppedPackets"].sort(),
    );
    for (const value of Object.values(peer.gossip!.metrics)) expect(typeof value).toBe("number");
    expect(await client.peers()).toEqual([peer]);
  });

  it("peer(id) answers 400 for a malformed id and 404 for one not in the manager", async () => {
    expect((await clientError(client.peer("not-a-peer-id"))).httpStatus).toBe(400);
    expect((await clientError(client.peer(createP2pIdentity().peerId))).httpStatus).toBe(404);
  });

  it("peerAdd answers 400 for a bad address or one without /p2p/, 404 for the node's own id; a failed dial is still 200", async () => {
    expect((await clientError(client.peerAdd("/not/a/multiaddr"))).httpStatus).toBe(400);
    expect((await clientError(client.peerAdd("/ip4/127.0.0.1/tcp/15600"))).httpStatus).toBe(400);
    expect((await clientError(client.peerAdd(`/ip4/127.0.0.1/tcp/15600/p2p/${gossip.peerId}`))).httpStatus).toBe(404);
    const nobody = createP2pIdentity().peerId;
    // Port 9 (discard) on loopback: nothing listens, the dial fails at once.
    const peer = await client.peerAdd(`/ip4/127.0.0.1/tcp/9/p2p/${nobody}`);
    expect(peer).toMatchObject({ id: nobody, relation: "known", connected: false });
    expect(peer.alias).toBeUndefined();
    expect(peer.gossip).toBeUndefined();
    await client.peerDelete(nobody);
  });

  it("peerDelete(id) answers 204 (iota.js gives {}) and the peer is gone; 204 too for a peer never added", async () => {
    expect(await client.peerDelete(other.peerId)).toEqual({});
    const deadline = Date.now() + 5000;
    while ((await client.peers()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await client.peers()).toEqual([]);
    expect(await client.peerDelete(createP2pIdentity().peerId)).toEqual({});
    expect((await clientError(client.peerDelete("bad id"))).httpStatus).toBe(400);
  });
});

describe("access: loopback clients, or the admin token; anyone else 403 FORBIDDEN", () => {
  // The server answers loopback only: a client elsewhere is what the handler sees in the context the server gives it.
  const handler = () => (request: Request, address: string): Promise<Response> => createHandler(run.node, { peers: { admin: gossip, adminToken: TOKEN } })(request, { clientAddress: address });

  it("a client off loopback without the token gets 403 with the stable code", async () => {
    const response = await handler()(new Request("http://node/api/v1/peers"), "203.0.113.7");
    expect(response.status).toBe(403);
    expect((await response.json()).error).toMatchObject({ code: "403", reason: "FORBIDDEN" });
    const wrong = await handler()(new Request("http://node/api/v1/peers", { headers: { authorization: "Bearer not the token" } }), "203.0.113.7");
    expect(wrong.status).toBe(403);
    const remove = await handler()(new Request(`http://node/api/v1/peers/${other.peerId}`, { method: "DELETE" }), "2001:db8::1");
    expect(remove.status).toBe(403);
  });

  it("the admin token opens them from anywhere; loopback (IPv4, IPv6, IPv4-mapped) needs none", async () => {
    const withToken = await handler()(new Request("http://node/api/v1/peers", { headers: { authorization: `Bearer ${TOKEN}` } }), "203.0.113.7");
    expect(withToken.status).toBe(200);
    expect(await withToken.json()).toEqual({ data: [] });
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) expect((await handler()(new Request("http://node/api/v1/peers"), address)).status).toBe(200);
  });

  it("a loopback client that came through a proxy (a forwarding header) needs the token: a reverse proxy on the same host makes every remote client look local", async () => {
    for (const header of [{ "x-forwarded-for": "198.51.100.7" }, { forwarded: "for=198.51.100.7" }, { "x-real-ip": "198.51.100.7" }]) {
      const proxied = await handler()(new Request("http://node/api/v1/peers", { headers: header }), "127.0.0.1");
      expect(proxied.status, JSON.stringify(header)).toBe(403);
      const withToken = await handler()(new Request("http://node/api/v1/peers", { headers: { ...header, authorization: `Bearer ${TOKEN}` } }), "127.0.0.1");
      expect(withToken.status).toBe(200);
    }
  });

  it("iota.js with the token in its headers works too (over the real server)", async () => {
    const withHeaders = new SingleNodeClient(run.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(await withHeaders.peers()).toEqual([]);
  });
});
