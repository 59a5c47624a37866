// The node among nodes, in one process (the multi-process suite is network.test.ts): nodes peering over real
// libp2p on 127.0.0.1, each with its own store. Messages and milestones relayed through the middle of a line, a
// follower's ledger the same as the coordinator's, conflicting spends decided alike everywhere, a late follower
// catching up by warp sync, a follower with the wrong coordinator key confirming nothing, a follower started again on
// its store (a milestone it had stored but not confirmed is confirmed; it is not healthy before a peer is heard), and a
// node fresh from a snapshot announcing the snapshot's index as pruned.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { encodeMessage } from "../src/model/codec.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { messageId, outputId, transactionId } from "../src/model/ids.js";
import { payloadToJson } from "../src/model/json.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import { startNode, type NodeSetup } from "../src/cli/setup.js";
import { LmdbStore, MemoryLedger, MemoryStore, type LedgerSnapshot, type NodeStore } from "../src/node/index.js";
import { milestonePublicKey } from "../src/model/milestone.js";
import { wallet, type Wallet } from "./node-helpers.js";
import { spawnPeer } from "./gossip-helpers.js";
import { tempDir } from "./store-helpers.js";

const NETWORK = "chrysalis-network-node";
const GENESIS = outputId("0".repeat(64), 0);
const running: NodeSetup[] = [];

afterEach(async () => {
  for (const n of running.splice(0).reverse()) await n.close().catch(() => undefined);
});

function genesis(owner: Wallet): MemoryLedger {
  const l = new MemoryLedger();
  l.add(GENESIS, { type: 0, address: { type: 0, address: owner.address }, amount: TOTAL_SUPPLY });
  return l;
}

/** A node on 127.0.0.1 with gossip on a free port: a coordinator when given `coordinator`, else a follower trusting `keys`;
 * its peers are nodes or gossip addresses; a new store starts from `owner`'s genesis, or from `snapshot`. */
async function node(owner: Wallet, options: { coordinator?: Uint8Array; keys?: Uint8Array[]; peers?: (NodeSetup | string)[]; intervalMs?: number; limits?: object; store?: NodeStore; snapshot?: LedgerSnapshot }): Promise<NodeSetup> {
  const setup = await startNode({
    network: NETWORK,
    minPoWScore: 1,
    ...(options.snapshot !== undefined ? { snapshot: options.snapshot } : { ledger: genesis(owner) }),
    store: options.store ?? new MemoryStore(),
    host: "127.0.0.1",
    port: 0,
    pow: { workers: 1 },
    coordinator: options.coordinator === undefined ? false : { keys: [options.coordinator], intervalMs: options.intervalMs ?? 400 },
    gossip: {
      bind: ["/ip4/127.0.0.1/tcp/0"],
      peers: (options.peers ?? []).map((p) => ({ multiAddress: typeof p === "string" ? p : p.gossip!.listenAddresses()[0]! })),
      milestoneKeys: options.keys ?? [],
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
    },
  });
  running.push(setup);
  return setup;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const confirmed = (n: NodeSetup): number => n.node.parts.confirmation.confirmedIndex;

/** What a node's ledger says of these addresses and outputs, and its milestones' records up to `upTo`. */
async function ledgerOf(n: NodeSetup, wallets: Wallet[], outputs: string[], upTo: number): Promise<unknown> {
  return {
    balances: await Promise.all(wallets.map((w) => n.node.store.addressBalance(w.address))),
    outputs: await Promise.all(outputs.map(async (id) => (await n.node.store.output(id)) ?? null)),
    milestones: await Promise.all(Array.from({ length: upTo }, (_, i) => n.node.store.milestone(i + 1))),
  };
}

describe("a line of three nodes: messages and milestones relayed through the middle one", () => {
  it("every node stores what any was given and confirms the coordinator's milestones with the same ledger", async () => {
    const owner = wallet();
    const to = wallet();
    const seed = new Uint8Array(32).fill(11);
    const keys = [milestonePublicKey(seed)];
    const a = await node(owner, { coordinator: seed });
    const b = await node(owner, { keys, peers: [a] });
    const c = await node(owner, { keys, peers: [b] });
    await until("the line connects", () => a.gossip!.peers().some((p) => p.connected) && c.gossip!.peers().some((p) => p.connected));
    // A message to the far end (C) reaches the coordinator (A) through B, and is confirmed by A's milestones.
    const atC = await c.node.submitMessage({ payload: { type: 2, index: toHex(new TextEncoder().encode("from C")), data: "" } });
    await until("A stores C's message", async () => (await a.node.store.has(atC.messageId)));
    // A spend given to A moves every node's ledger once confirmed.
    const payload = buildTransactionPayload({ inputs: [{ transactionId: "0".repeat(64), transactionOutputIndex: 0, seed: owner.seed }], outputs: [{ type: 0, address: { type: 0, address: to.address }, amount: TOTAL_SUPPLY }] });
    const spent = await a.node.submitMessage({ payload: payloadToJson(payload) });
    await until("C confirms the spend", async () => (await c.node.getMetadata(spent.messageId))?.ledgerInclusionState === "included");
    await until("C confirms C's message", async () => (await c.node.getMetadata(atC.messageId))?.referencedByMilestoneIndex !== undefined);
    const upTo = Math.min(confirmed(a), confirmed(b), confirmed(c));
    expect(upTo).toBeGreaterThanOrEqual(2);
    const created = outputId(transactionId(payload), 0);
    const reference = await ledgerOf(a, [owner, to], [GENESIS, created], upTo);
    expect(await ledgerOf(b, [owner, to], [GENESIS, created], upTo)).toEqual(reference);
    expect(await ledgerOf(c, [owner, to], [GENESIS, created], upTo)).toEqual(reference);
    expect((await c.node.store.addressBalance(to.address)).balance).toBe(TOTAL_SUPPLY);
    // Each message's metadata is the same on every node.
    for (const id of [atC.messageId, spent.messageId]) {
      const m = await a.node.getMetadata(id);
      for (const other of [b, c]) expect((await other.node.getMetadata(id))?.referencedByMilestoneIndex).toBe(m?.referencedByMilestoneIndex);
    }
  }, 60_000);
});

describe("conflicting spends given to two nodes at once are decided alike on every node", () => {
  it("one winner included everywhere, the other conflicting with the same reason, the same balances", async () => {
    const owner = wallet();
    const [x, y] = [wallet(), wallet()];
    const seed = new Uint8Array(32).fill(12);
    const keys = [milestonePublicKey(seed)];
    // The coordinator waits until both spends are in before its next milestone.
    const a = await node(owner, { coordinator: seed, intervalMs: 1500 });
    const b = await node(owner, { keys, peers: [a] });
    await until("connected", () => b.gossip!.peers().some((p) => p.connected));
    const spend = (w: Wallet) => buildTransactionPayload({ inputs: [{ transactionId: "0".repeat(64), transactionOutputIndex: 0, seed: owner.seed }], outputs: [{ type: 0, address: { type: 0, address: w.address }, amount: TOTAL_SUPPLY }] });
    const [toX, toY] = await Promise.all([a.node.submitMessage({ payload: payloadToJson(spend(x)) }), b.node.submitMessage({ payload: payloadToJson(spend(y)) })]);
    for (const n of [a, b]) {
      await until("both spends referenced", async () => (await n.node.getMetadata(toX.messageId))?.referencedByMilestoneIndex !== undefined && (await n.node.getMetadata(toY.messageId))?.referencedByMilestoneIndex !== undefined);
    }
    const states = async (n: NodeSetup) => [await n.node.getMetadata(toX.messageId), await n.node.getMetadata(toY.messageId)].map((m) => [m?.referencedByMilestoneIndex, m?.ledgerInclusionState, m?.conflictReason]);
    const onA = await states(a);
    expect(await states(b)).toEqual(onA);
    expect(onA.map((s) => s[1]).sort()).toEqual(["conflicting", "included"]);
    const [bx, by] = [await b.node.store.addressBalance(x.address), await b.node.store.addressBalance(y.address)];
    expect([bx.balance, by.balance].sort()).toEqual([0, TOTAL_SUPPLY]);
    expect(await a.node.store.addressBalance(x.address)).toEqual(bx);
    expect(await a.node.store.addressBalance(y.address)).toEqual(by);
  }, 60_000);
});

describe("a follower that joins late catches up (warp sync), and one with the wrong key confirms nothing", () => {
  it("a node started after 15 milestones requests them and their cones, confirms them in order, and is healthy once caught up", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(13);
    const a = await node(owner, { coordinator: seed, intervalMs: 100 });
    for (let i = 0; i < 10; i++) await a.node.submitMessage({ payload: { type: 2, index: "6c617465", data: toHex(new TextEncoder().encode(String(i))) } });
    await until("15 milestones", () => confirmed(a) >= 15);
    const b = await node(owner, { keys: [milestonePublicKey(seed)], peers: [a] });
    await until("B catches up", () => confirmed(b) >= 15 && confirmed(b) >= confirmed(a) - 1, 30_000);
    await until("B healthy", () => b.node.health());
    const upTo = confirmed(b);
    expect(await ledgerOf(b, [owner], [GENESIS], upTo)).toEqual(await ledgerOf(a, [owner], [GENESIS], upTo));
  }, 60_000);

  it("milestones signed by another key are plain messages to it (Hornet: no penalty): it confirms none and keeps the peer that sent them", async () => {
    const owner = wallet();
    const a = await node(owner, { coordinator: new Uint8Array(32).fill(14), intervalMs: 200 });
    const b = await node(owner, { keys: [milestonePublicKey(new Uint8Array(32).fill(15))], peers: [a] });
    await until("B hears A's milestones", () => b.gossip!.stats().framesIn.message >= 3 && confirmed(a) >= 3);
    await new Promise((r) => setTimeout(r, 1000)); // a bounded wait for anything B would do with them
    expect(confirmed(b)).toBe(0);
    expect((await b.node.nodeInfo()).confirmedMilestoneIndex).toBe(0);
    expect(Object.values(b.gossip!.stats().peersDropped).every((n) => n === 0)).toBe(true);
    expect(b.gossip!.stats().peers.streams).toBe(1);
  }, 60_000);

  it("a real milestone payload wrapped in a message with other parents is no milestone (TIP-8: the payload's parents are the message's): the follower confirms the real one", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(17);
    const a = await node(owner, { coordinator: seed, intervalMs: 200 });
    await until("A issues 2 milestones", () => confirmed(a) >= 2);
    const first = (await a.node.store.get((await a.node.store.milestone(1))!.messageId))!;
    // The same signed payload under one parent, the real milestone's own message: what anyone can build and gossip.
    const forged = encodeMessage({ ...first.message, parents: [fromHex(first.id, "id", 32)] });
    const b = await node(owner, { keys: [milestonePublicKey(seed)] });
    expect(await b.network!.receive(forged, fromHex(messageId(forged), "id", 32), "a-peer", true)).toBe("new");
    await b.gossip!.addPeer(a.gossip!.listenAddresses()[0]!);
    await until("B confirms past milestone 1", () => confirmed(b) >= 2, 20_000);
    expect((await b.node.store.milestone(1))?.messageId).toBe(first.id);
    expect(Object.values(b.gossip!.stats().peersDropped).every((n) => n === 0)).toBe(true);
  }, 60_000);
});

describe("a follower started again on its store: a milestone stored but not confirmed is confirmed, and it is not healthy before a peer is heard", () => {
  const dir = tempDir("network-node-resume");
  afterAll(() => dir.remove());

  it("the follower's store holds milestone 1 unconfirmed (as after a kill between its store and its confirmation); started again on it, the follower confirms it and goes on", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(16);
    const keys = [milestonePublicKey(seed)];
    const a = await node(owner, { coordinator: seed, intervalMs: 200 });
    await until("A issues 3 milestones", () => confirmed(a) >= 3);
    const first = (await a.node.store.milestone(1))!;
    const stored = (await a.node.store.get(first.messageId))!;
    // A follower with no peer stores milestone 1's message as a peer's message is stored, and stops there: what a
    // process killed before its confirmation leaves in its store.
    const before = await node(owner, { keys, store: new LmdbStore(dir.path) });
    expect(await before.node.parts.processor.fromPeer(stored.message, stored.bytes, stored.id, a.gossip!.peerId, false)).toEqual({ stored: true });
    expect(confirmed(before)).toBe(0);
    await before.close();
    running.splice(running.indexOf(before), 1);
    // Peers will not send milestone 1 again (the follower knows its message): it confirms it from its store.
    const b = await node(owner, { keys, peers: [a], store: new LmdbStore(dir.path) });
    await until("B confirms past milestone 1", () => confirmed(b) >= 3, 15_000);
    expect((await b.node.store.milestone(1))?.messageId).toBe(first.messageId);
  }, 60_000);

  it("started again on its store while its peer is gone, a follower is not healthy: until a peer's heartbeat says how far the network is, it cannot know it has caught up", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(17);
    const keys = [milestonePublicKey(seed)];
    const a = await node(owner, { coordinator: seed, intervalMs: 200 });
    const path = `${dir.path}/silent-peer`;
    const before = await node(owner, { keys, peers: [a], store: new LmdbStore(path) });
    await until("B confirms 2 milestones and is healthy", async () => confirmed(before) >= 2 && (await before.node.health()));
    const address = a.gossip!.listenAddresses()[0]!;
    for (const n of [before, a]) {
      await n.close();
      running.splice(running.indexOf(n), 1);
    }
    // Its latest milestone is a second old (well within the 5 minutes), and its only peer does not answer.
    const b = await node(owner, { keys, peers: [address], store: new LmdbStore(path) });
    expect(confirmed(b)).toBeGreaterThanOrEqual(2);
    expect(await b.node.health()).toBe(false);
    expect((await b.node.nodeInfo()).isHealthy).toBe(false);
  }, 60_000);
});

describe("a node fresh from a snapshot announces solid = pruned = the snapshot's index", () => {
  it("its heartbeat's pruned index is the snapshot's milestone, so that no peer asks it for that milestone or its cone (it holds neither, only their ids as entry points)", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(18);
    const a = await node(owner, { coordinator: seed, intervalMs: 300 });
    await until("A issues 4 milestones", () => confirmed(a) >= 4);
    await a.coordinator!.stop();
    const snapshot = await a.node.store.readSnapshot();
    const at = snapshot.milestone!.index;
    const n = await node(owner, { keys: [milestonePublicKey(seed)], peers: [a], snapshot });
    await until("A hears N's heartbeat", () => a.gossip!.peer(n.gossip!.peerId)?.gossip?.heartbeat != null);
    const heartbeat = a.gossip!.peer(n.gossip!.peerId)!.gossip!.heartbeat!;
    expect(heartbeat.solidMilestoneIndex).toBe(at);
    expect(heartbeat.prunedMilestoneIndex).toBe(at);
    // Asked for milestone `at` all the same, it has nothing to send.
    expect(await n.network!.milestoneBytes(at)).toBeUndefined();
  }, 60_000);
});

describe("a peer announcing a latest milestone that does not exist", () => {
  it("holds a follower's health down only while its claim is fresh: unproven for 10 s, it no longer counts", async () => {
    const owner = wallet();
    const seed = new Uint8Array(32).fill(23);
    const a = await node(owner, { coordinator: seed, intervalMs: 200 });
    // A gossip peer of its own process whose every heartbeat says latest = 4,000,000,000; it has no such milestone.
    const liar = await spawnPeer({ network: NETWORK, status: { solid: 0, pruned: 0, latest: 4_000_000_000 } });
    try {
      const b = await node(owner, { keys: [milestonePublicKey(seed)], peers: [a, liar.address] });
      const heardLiar = (): boolean => b.gossip!.peers().some((p) => p.id === liar.peerId && p.gossip?.heartbeat?.latestMilestoneIndex === 4_000_000_000);
      await until("B has the liar's heartbeat and confirms A's milestones", () => heardLiar() && confirmed(b) >= 2);
      // Fresh, the claim counts: B cannot yet tell it from a network that is ahead of it.
      expect(await b.node.health()).toBe(false);
      const heardAt = Date.now();
      await until("B healthy though the liar is still there", () => b.node.health(), 30_000);
      expect(Date.now() - heardAt).toBeGreaterThan(5_000);
      expect(b.gossip!.peers().find((p) => p.id === liar.peerId)?.connected).toBe(true);
      expect((await b.node.nodeInfo()).latestMilestoneIndex).toBeLessThan(1000);
    } finally {
      await liar.stop();
    }
  }, 60_000);
});
