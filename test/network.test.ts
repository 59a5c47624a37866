// A network of nodes, each `chrysalis serve` in a process of its own with its own store (issue 34 item 8): peering
// over real libp2p on 127.0.0.1 (--p2p-bind on a free port, --peer from the other's "gossip on" line), driven over
// HTTP with the library's client. A line of three relays messages and milestones through its middle node with the same
// ledger everywhere; conflicting spends given to two nodes at once are decided alike on every node; a peer sending
// garbage is dropped while the others are served; a follower with the wrong coordinator key confirms nothing (and
// keeps its peer); a follower killed with SIGKILL under load carries on from its store and catches up (unhealthy until
// it has); a node started from another's snapshot joins; followers prune under load and answer no request for what
// they pruned.
// Milestones come every 200–300 ms, so that the whole file runs in about two minutes.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { bech32Address } from "../src/crypto/index.js";
import { createClient, ClientError, type ChrysalisClient } from "../src/client/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { networkId, outputId, transactionId } from "../src/model/ids.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Payload, TransactionPayload } from "../src/model/types.js";
import { decodeSnapshot, gossipProtocolId } from "../src/node/index.js";
import { killAll as killPeers, spawnPeer, type PeerProcess } from "./gossip-helpers.js";
import { wallet, type Wallet } from "./node-helpers.js";
import { killAll, runCli, startServe, type ServeProcess } from "./serve-process.js";
import { tempDir } from "./store-helpers.js";

const NETWORK = "chrysalis-network-test";
const NETWORK_ID = networkId(NETWORK);
const PROTOCOL = gossipProtocolId(NETWORK_ID);
const GENESIS = outputId("0".repeat(64), 0);
const utf8 = new TextEncoder();
const dir = tempDir("network");
const owner = wallet();

afterAll(async () => {
  await Promise.all([killAll(), killPeers()]);
  dir.remove();
});

// --- Nodes ---------------------------------------------------------------------------------------------------------

interface NetNode {
  readonly name: string;
  readonly process: ServeProcess;
  readonly url: string;
  /** Its gossip address with /p2p/<peer id>, from its "gossip on" line. */
  readonly address: string;
  readonly peerId: string;
  readonly client: ChrysalisClient;
  readonly args: readonly string[];
}

/** What every node here is started with: one network, no PoW to wait for, a quiet log, no MQTT or dashboard. */
const COMMON = ["--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-rate-limits", "--no-mqtt", "--no-dashboard", "--log-level", "warn"];
const withGenesis = ["--genesis", bech32Address("atoi", owner.address)];

async function start(name: string, args: readonly string[]): Promise<NetNode> {
  const all = [...COMMON, ...args];
  const process = await startServe(all);
  const address = await within(10_000, `${name}'s gossip line`, () => /gossip on (\/\S+\/p2p\/(\w+))/.exec(process.stdout())?.[1]);
  return { name, process, url: process.url, address, peerId: address.slice(address.lastIndexOf("/") + 1), client: createClient(process.url, { infoCacheMs: 0 }), args: all };
}

/** A coordinator issuing a milestone every `interval`, signed with the key in `keyFile`. */
const coordinator = (name: string, keyFile: string, interval: string, storage: readonly string[], extra: readonly string[] = []): Promise<NetNode> =>
  start(name, [...storage, ...withGenesis, "--coordinator-key-file", keyFile, "--milestone-interval", interval, ...extra]);

/** A follower of `publicKey`'s milestones, peering with `peers`. */
const follower = (name: string, publicKey: string, peers: readonly NetNode[], storage: readonly string[], extra: readonly string[] = []): Promise<NetNode> =>
  start(name, [...storage, ...(extra.includes("--snapshot") ? [] : withGenesis), "--no-coordinator", "--coordinator-public-key", publicKey, ...peers.flatMap((p) => ["--peer", p.address]), ...extra]);

/** The same node again on its store, after it was killed. */
async function restart(node: NetNode): Promise<NetNode> {
  const process = await startServe(node.args);
  const address = await within(10_000, `${node.name}'s gossip line`, () => /gossip on (\/\S+\/p2p\/(\w+))/.exec(process.stdout())?.[1]);
  return { ...node, process, url: process.url, address, client: createClient(process.url, { infoCacheMs: 0 }) };
}

/** Writes a coordinator key file and reads its public key back with `chrysalis coordinator public-key`. */
async function coordinatorKey(name: string, fill: number): Promise<{ file: string; publicKey: string }> {
  const file = join(dir.path, `${name}.key`);
  writeFileSync(file, `${toHex(new Uint8Array(32).fill(fill))}\n`);
  const printed = await runCli(["coordinator", "public-key", "--coordinator-key-file", file]);
  expect(printed.code, printed.stderr).toBe(0);
  return { file, publicKey: printed.stdout.trim() };
}

// --- Bounded waiting -------------------------------------------------------------------------------------------------

/** Polls `check` every 50 ms until it gives a value (not undefined or false), at most `ms`. */
async function within<T>(ms: number, what: string, check: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Status {
  isHealthy: boolean;
  latestMilestoneIndex: number;
  confirmedMilestoneIndex: number;
  pruningIndex: number;
}

/** GET /api/v1/info's milestone fields, which a node that follows milestones always sends. */
async function info(n: NetNode): Promise<Status> {
  const { isHealthy, latestMilestoneIndex, confirmedMilestoneIndex, pruningIndex } = await n.client.getInfo();
  if (latestMilestoneIndex === undefined || confirmedMilestoneIndex === undefined || pruningIndex === undefined) throw new Error(`${n.name}'s /info lacks its milestone fields`);
  return { isHealthy, latestMilestoneIndex, confirmedMilestoneIndex, pruningIndex };
}
const confirmedOf = async (n: NetNode): Promise<number> => (await info(n)).confirmedMilestoneIndex;

/** Waits until every follower has confirmed at least what `leader` has confirmed now. */
async function caughtUp(leader: NetNode, followers: readonly NetNode[], ms = 20_000): Promise<number> {
  const target = await confirmedOf(leader);
  for (const f of followers) await within(ms, `${f.name} confirms ${target}`, async () => (await confirmedOf(f)) >= target);
  return target;
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  }));
  return out;
}

// --- Messages --------------------------------------------------------------------------------------------------------

/** A complete message (parents: the node's tips, or those given) posted as bytes; its id. */
async function submit(n: NetNode, payload: Payload | undefined, parents?: readonly string[]): Promise<string> {
  const ids = [...new Set(parents ?? (await n.client.getTips()))].sort().slice(0, 8);
  const bytes = encodeMessage({ networkId: NETWORK_ID, parents: ids.map((p) => fromHex(p)), ...(payload !== undefined ? { payload } : {}), nonce: 1n });
  return n.client.submitMessage(bytes);
}

const indexation = (tag: string, data: string): Payload => ({ type: 2, index: utf8.encode(tag), data: utf8.encode(data) });

/** A transaction spending `input` (owned by `from`) to the given amounts; its payload and created output ids by address. */
function transfer(from: Wallet, input: string, to: readonly { wallet: Wallet; amount: number }[]): { payload: TransactionPayload; outputs: Map<Wallet, string> } {
  const payload = buildTransactionPayload({
    inputs: [{ transactionId: input.slice(0, 64), transactionOutputIndex: Number.parseInt(input.slice(66, 68) + input.slice(64, 66), 16), seed: from.seed }],
    outputs: to.map((t) => ({ type: 0 as const, address: { type: 0 as const, address: t.wallet.address }, amount: t.amount })),
  });
  const txId = transactionId(payload);
  const outputs = new Map<Wallet, string>();
  payload.essence.outputs.forEach((o, i) => {
    const w = to.find((t) => toHex(t.wallet.address) === toHex(o.address.address))!.wallet;
    outputs.set(w, outputId(txId, i));
  });
  return { payload, outputs };
}

/** Indexation messages posted to `n` at about `perSecond`, 4 at a time, until stop() or `max` (or 60 s). */
function load(n: () => NetNode, tag: string, perSecond: number, max = 5000): { stop(): Promise<string[]>; readonly acked: string[]; readonly failed: number } {
  const acked: string[] = [];
  let failed = 0;
  let stopped = false;
  const started = Date.now();
  let tips: { ids: string[]; at: number } | undefined;
  const run = (async () => {
    let sent = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (!stopped && sent < max && Date.now() - started < 60_000) {
        // Paced: the i-th message not before i / perSecond seconds from the start.
        const due = started + (sent / perSecond) * 1000;
        if (Date.now() < due) {
          await new Promise((r) => setTimeout(r, due - Date.now()));
          continue;
        }
        const i = sent++;
        try {
          const node = n();
          if (tips === undefined || Date.now() - tips.at > 150) tips = { ids: await node.client.getTips(), at: Date.now() };
          acked.push(await submit(node, indexation(tag, `${tag} ${i}`), tips.ids));
        } catch {
          failed++;
          tips = undefined;
        }
      }
    }));
  })();
  return {
    acked,
    get failed() {
      return failed;
    },
    async stop() {
      stopped = true;
      await run;
      return acked;
    },
  };
}

// --- The same ledger everywhere --------------------------------------------------------------------------------------

const orNull = <T>(work: Promise<T>): Promise<T | null> => work.catch((error: unknown) => (error instanceof ClientError && error.status === 404 ? null : Promise.reject(error)));

/** What a node's ledger says of these wallets and outputs, its milestones from..upTo, and these messages' metadata, as
 * its HTTP API answers (the ledger index each answer carries left out: it moves on as the node confirms). */
async function ledgerOf(n: NetNode, view: { wallets: readonly Wallet[]; outputs: readonly string[]; from?: number; upTo: number; messages: readonly string[] }): Promise<unknown> {
  const { client } = n;
  const balances = await Promise.all(view.wallets.map(async (w) => {
    const { ledgerIndex: _, ...balance } = await client.getAddress(toHex(w.address));
    return balance;
  }));
  const outputs = await Promise.all(view.outputs.map(async (id) => {
    const answer = await orNull(client.getOutput(id));
    if (answer === null) return null;
    const { ledgerIndex: _, ...output } = answer;
    return output;
  }));
  const from = view.from ?? 1;
  const milestones = await pool(Array.from({ length: view.upTo - from + 1 }, (_, i) => from + i), 8, (i) => client.getMilestone(i));
  const metadata = await pool(view.messages, 16, async (id) => {
    const m = await client.getMessageMetadata(id);
    return [id, m.referencedByMilestoneIndex, m.ledgerInclusionState, m.conflictReason, m.milestoneIndex];
  });
  return { balances, outputs, milestones, metadata };
}

/** Expects every node's ledger view to be the first's, and returns it. */
async function sameLedger(nodes: readonly NetNode[], view: Parameters<typeof ledgerOf>[1]): Promise<unknown> {
  const reference = await ledgerOf(nodes[0]!, view);
  for (const n of nodes.slice(1)) expect(await ledgerOf(n, view), `${n.name}'s ledger against ${nodes[0]!.name}'s`).toEqual(reference);
  return reference;
}

/** Waits until each message is referenced by a milestone on each node. */
async function referencedEverywhere(nodes: readonly NetNode[], ids: readonly string[], ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (const n of nodes) {
    let waiting = [...ids];
    while (waiting.length > 0) {
      const states = await pool(waiting, 16, (id) => orNull(n.client.getMessageMetadata(id)));
      waiting = waiting.filter((_, i) => states[i]?.referencedByMilestoneIndex === undefined);
      if (waiting.length === 0) break;
      if (Date.now() > end) throw new Error(`${n.name}: ${waiting.length} of ${ids.length} messages not referenced within ${ms} ms (first: ${waiting[0]})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// --- Peers and metrics over HTTP ------------------------------------------------------------------------------------

interface PeerAnswer {
  id: string;
  relation: string;
  connected: boolean;
  gossip?: { heartbeat: { solidMilestoneIndex: number; prunedMilestoneIndex: number } | null; metrics: { newMessages: number; sentMessages: number } };
}

async function peersOf(n: NetNode): Promise<PeerAnswer[]> {
  const response = await fetch(`${n.url}/api/v1/peers`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: PeerAnswer[] }).data;
}

async function droppedPeers(n: NetNode, reason: string): Promise<number> {
  const text = await (await fetch(`${n.url}/metrics`)).text();
  const m = new RegExp(`^chrysalis_peers_dropped_total\\{reason="${reason}"\\} (\\d+)`, "m").exec(text);
  return m === null ? 0 : Number(m[1]);
}

const connectedTo = async (n: NetNode, other: { peerId: string }): Promise<boolean> => (await peersOf(n)).some((p) => p.id === other.peerId && p.connected && p.gossip?.heartbeat != null);

// --- A bare peer writing raw frames (test/gossip-peer.ts) ------------------------------------------------------------

const u32 = (n: number): string => Buffer.from(new Uint32Array([n]).buffer).toString("hex");
/** A heartbeat announcing nothing (solid, pruned and latest 0): the node never asks this peer for anything. */
const EMPTY_HEARTBEAT = `040e00${u32(0)}${u32(0)}${u32(0)}0000`;
const messageRequest = (id: string): string => `032000${id}`;
const milestoneRequest = (index: number): string => `010400${u32(index)}`;

/** A raw peer with a gossip stream open to `n` and its first heartbeat sent. */
async function rawPeer(n: NetNode): Promise<PeerProcess> {
  const raw = await spawnPeer({ mode: "raw", network: NETWORK });
  await raw.call("open", n.address, PROTOCOL);
  await raw.call("write", EMPTY_HEARTBEAT);
  return raw;
}

/** The ids of the messages `raw` was sent in message frames. */
async function framesReceived(raw: PeerProcess): Promise<Set<string>> {
  const { messages } = await raw.call<{ messages: string[] }>("frames");
  return new Set(messages.map((hex) => toHex(blake2b256(fromHex(hex)))));
}

// --- The cases -------------------------------------------------------------------------------------------------------

describe("a line of three nodes (A coordinator, B, C), each a process with its own store", () => {
  let a: NetNode;
  let b: NetNode;
  let c: NetNode;
  let key: { file: string; publicKey: string };
  const x = wallet();
  const y = wallet();
  let xOutput: string;

  beforeAll(async () => {
    key = await coordinatorKey("line", 21);
    a = await coordinator("A", key.file, "300ms", ["--in-memory"]);
    b = await follower("B", key.publicKey, [a], ["--in-memory"]);
    c = await follower("C", key.publicKey, [b], ["--in-memory"]);
    await within(15_000, "the line connects", async () => (await connectedTo(a, b)) && (await connectedTo(c, b)));
  }, 60_000);

  it("relays messages and milestones through the middle node: every node confirms the same ledger and the same metadata", async () => {
    // A and C are not peers: whatever passes between them passes through B.
    expect((await peersOf(a)).filter((p) => p.connected).map((p) => p.id)).toEqual([b.peerId]);
    expect((await peersOf(c)).filter((p) => p.connected).map((p) => p.id)).toEqual([b.peerId]);
    const atC = await pool(Array.from({ length: 10 }, (_, i) => i), 4, (i) => submit(c, indexation("line C", String(i))));
    const atA = await pool(Array.from({ length: 10 }, (_, i) => i), 4, (i) => submit(a, indexation("line A", String(i))));
    // A spend given to C, the far end from the coordinator; then a spend of its output given to A.
    const split = transfer(owner, GENESIS, [{ wallet: x, amount: 10_000_000 }, { wallet: owner, amount: TOTAL_SUPPLY - 10_000_000 }]);
    const splitId = await submit(c, split.payload);
    await referencedEverywhere([a, b, c], [splitId]);
    xOutput = split.outputs.get(x)!;
    const onward = transfer(x, xOutput, [{ wallet: y, amount: 4_000_000 }, { wallet: x, amount: 6_000_000 }]);
    const onwardId = await submit(a, onward.payload);
    const messages = [...atC, ...atA, splitId, onwardId];
    await referencedEverywhere([a, b, c], messages);
    const upTo = await caughtUp(a, [b, c]);
    expect(upTo).toBeGreaterThanOrEqual(3);
    const outputs = [GENESIS, ...split.outputs.values(), ...onward.outputs.values()];
    const ledger = (await sameLedger([a, b, c], { wallets: [owner, x, y], outputs, upTo, messages })) as { balances: { balance: number }[]; metadata: unknown[][] };
    expect(ledger.balances.map((bal) => bal.balance)).toEqual([TOTAL_SUPPLY - 10_000_000, 6_000_000, 4_000_000]);
    expect(ledger.metadata.filter((m) => m[2] === "included").map((m) => m[0])).toEqual([splitId, onwardId]);
    // The middle node's counts of what it passed on: C's 11 messages to A, A's 11 and every milestone to C.
    const peersOfB = await peersOf(b);
    expect(peersOfB.map((p) => p.id).sort()).toEqual([a.peerId, c.peerId].sort());
    const [fromA, fromC] = [a, c].map((n) => peersOfB.find((p) => p.id === n.peerId)!.gossip!.metrics);
    expect(fromC!.newMessages).toBeGreaterThanOrEqual(11);
    expect(fromA!.sentMessages).toBeGreaterThanOrEqual(11);
    expect(fromA!.newMessages).toBeGreaterThanOrEqual(11 + upTo);
    expect(fromC!.sentMessages).toBeGreaterThanOrEqual(11 + upTo);
    xOutput = onward.outputs.get(x)!;
  }, 60_000);

  it("conflicting spends given to two nodes at once are decided alike everywhere: one included, the other conflicting", async () => {
    const [p, q] = [wallet(), wallet()];
    const toP = transfer(x, xOutput, [{ wallet: p, amount: 6_000_000 }]);
    const toQ = transfer(x, xOutput, [{ wallet: q, amount: 6_000_000 }]);
    const [idP, idQ] = await Promise.all([submit(a, toP.payload), submit(c, toQ.payload)]);
    await referencedEverywhere([a, b, c], [idP, idQ]);
    const upTo = await caughtUp(a, [b, c]);
    const outputs = [xOutput, toP.outputs.get(p)!, toQ.outputs.get(q)!];
    const ledger = (await sameLedger([a, b, c], { wallets: [x, p, q], outputs, upTo, messages: [idP, idQ] })) as { balances: { balance: number }[]; metadata: unknown[][] };
    const states = ledger.metadata.map((m) => m[2]).sort();
    expect(states).toEqual(["conflicting", "included"]);
    // The loser's reason (TIP-2): its input spent by this very milestone (2), or by an earlier one (1); the winner's output
    // is the only one there.
    const [winner, loser] = [ledger.metadata.find((m) => m[2] === "included")!, ledger.metadata.find((m) => m[2] === "conflicting")!];
    expect(loser[3]).toBe(winner[1] === loser[1] ? 2 : 1);
    expect(ledger.balances.map((bal) => bal.balance).sort()).toEqual([0, 0, 6_000_000]);
  }, 60_000);

  it("a peer sending garbage is dropped (peers, metrics) while the other peers keep being served", async () => {
    const raw = await rawPeer(b);
    await within(5000, "B lists the raw peer", async () => (await peersOf(b)).some((p) => p.id === raw.peerId && p.connected));
    const before = await droppedPeers(b, "malformed");
    // A frame of an unknown type (5): Hornet's "message type unknown".
    await raw.call("write", "050000");
    await within(5000, "B drops the raw peer", async () => (await droppedPeers(b, "malformed")) === before + 1);
    await within(5000, "the raw peer gone from B's peers", async () => !(await peersOf(b)).some((p) => p.id === raw.peerId && p.connected));
    expect((await raw.call<{ open: boolean }>("state")).open).toBe(false);
    // Both honest peers are still there and served: a message given to A reaches C through B.
    expect(await connectedTo(b, a)).toBe(true);
    expect(await connectedTo(b, c)).toBe(true);
    const id = await submit(a, indexation("after garbage", "relayed"));
    await within(10_000, "C stores A's message", async () => (await orNull(c.client.getMessageMetadata(id))) !== null);
    await referencedEverywhere([a, b, c], [id]);
    await raw.stop();
  }, 30_000);

  it("a follower with the wrong coordinator key confirms nothing, and keeps the peer that sent the milestones (Hornet: plain messages, no penalty)", async () => {
    const other = await coordinatorKey("wrong", 22);
    const w = await follower("W", other.publicKey, [a], ["--in-memory"]);
    await within(15_000, "W connects", () => connectedTo(a, w));
    const started = await confirmedOf(a);
    await within(10_000, "A issues two more milestones", async () => (await confirmedOf(a)) >= started + 2);
    const seen = await info(w);
    expect(seen.confirmedMilestoneIndex).toBe(0);
    expect(seen.latestMilestoneIndex).toBe(0);
    expect(seen.isHealthy).toBe(false);
    expect(await orNull(w.client.getMilestone(1))).toBeNull();
    expect(await droppedPeers(w, "invalid")).toBe(0);
    expect((await peersOf(w)).find((p) => p.id === a.peerId)?.connected).toBe(true);
    // The others are not disturbed by it.
    expect((await info(b)).isHealthy).toBe(true);
    await w.process.kill();
  }, 40_000);
});

describe("a follower killed with SIGKILL under load carries on from its store (LMDB) and catches up", () => {
  it("restarted, it starts from the milestone it had, says isHealthy false until it has caught up, then has the coordinator's ledger", async () => {
    const key = await coordinatorKey("kill", 31);
    const a = await coordinator("A", key.file, "250ms", ["--in-memory"]);
    let b = await follower("B", key.publicKey, [a], ["--data-dir", join(dir.path, "kill-b")]);
    await within(15_000, "B connects", () => connectedTo(a, b));
    const traffic = load(() => a, "kill", 80);
    const z = wallet();
    const spend = transfer(owner, GENESIS, [{ wallet: z, amount: 2_000_000 }, { wallet: owner, amount: TOTAL_SUPPLY - 2_000_000 }]);
    const spendId = await submit(a, spend.payload);
    await within(15_000, "B confirms 8 milestones under load", async () => (await confirmedOf(b)) >= 8 && traffic.acked.length >= 100);
    await referencedEverywhere([b], [spendId]);
    const before = await info(b);
    const storedBefore = traffic.acked.slice(0, 50);
    await b.process.kill();
    const killedAt = traffic.acked.length;
    // The load goes on while B is down: about 3 s, a dozen milestones.
    await within(10_000, "A moves 12 milestones on", async () => (await confirmedOf(a)) >= before.confirmedMilestoneIndex + 12);
    // B starts again while A does not answer (SIGSTOP): B has a recent milestone of its own, but until a peer tells it
    // how far the network is, it cannot know it is caught up (Hornet: no gossip stream, not healthy).
    const coordinatorThen = await confirmedOf(a);
    a.process.child.kill("SIGSTOP");
    let first: Status;
    try {
      b = await restart(b);
      first = await info(b);
      // It has what it had.
      expect(first.confirmedMilestoneIndex).toBeGreaterThanOrEqual(before.confirmedMilestoneIndex);
      expect(await pool(storedBefore, 8, (id) => orNull(b.client.getMessageMetadata(id)).then((m) => m !== null))).not.toContain(false);
      for (let i = 0; i < 10; i++) {
        expect((await info(b)).isHealthy, "healthy while its peer is silent").toBe(false);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      a.process.child.kill("SIGCONT");
    }
    // From then on it never says healthy while 3 or more behind.
    const samples: { healthy: boolean; confirmed: number; coordinator: number }[] = [{ healthy: first.isHealthy, confirmed: first.confirmedMilestoneIndex, coordinator: coordinatorThen }];
    await within(30_000, "B healthy and caught up", async () => {
      const coordinatorNow = await confirmedOf(a);
      const seen = await info(b);
      samples.push({ healthy: seen.isHealthy, confirmed: seen.confirmedMilestoneIndex, coordinator: coordinatorNow });
      return seen.isHealthy && seen.confirmedMilestoneIndex >= coordinatorNow - 1;
    });
    const claimedHealthyBehind = samples.filter((s) => s.healthy && s.confirmed < s.coordinator - 2);
    expect(claimedHealthyBehind, JSON.stringify(samples.slice(0, 20))).toEqual([]);
    expect(samples.some((s) => !s.healthy && s.confirmed < s.coordinator), JSON.stringify(samples.slice(0, 20))).toBe(true);
    const acked = await traffic.stop();
    expect(acked.length - killedAt).toBeGreaterThan(100);
    expect(traffic.failed).toBeLessThan(acked.length / 20);
    // Every message A took, before, during and after B was down, is on B with the same metadata.
    await referencedEverywhere([a, b], acked, 30_000);
    const upTo = await caughtUp(a, [b]);
    await sameLedger([a, b], { wallets: [owner, z], outputs: [GENESIS, ...spend.outputs.values()], upTo, messages: [...acked, spendId] });
    await Promise.all([a.process.kill(), b.process.kill()]);
  }, 90_000);
});

describe("a node started from another node's snapshot joins the network (LMDB)", () => {
  it("its entry points are every message the last 15 milestones referenced: a message naming one of them is solid on it, and it confirms on with the coordinator's ledger", async () => {
    const key = await coordinatorKey("snapshot", 41);
    const coordinatorDir = join(dir.path, "snapshot-a");
    const a = await coordinator("A", key.file, "200ms", ["--data-dir", coordinatorDir]);
    const x = wallet();
    const split = transfer(owner, GENESIS, [{ wallet: x, amount: 5_000_000 }, { wallet: owner, amount: TOTAL_SUPPLY - 5_000_000 }]);
    const splitId = await submit(a, split.payload);
    await within(15_000, "A at milestone 12", async () => (await confirmedOf(a)) >= 12);
    // Messages referenced by several milestones in a row, the last ones just before the snapshot.
    const early: string[] = [];
    for (let i = 0; i < 8; i++) {
      early.push(await submit(a, indexation("before the snapshot", String(i))));
      await new Promise((r) => setTimeout(r, 150));
    }
    await referencedEverywhere([a], [splitId, ...early]);
    const file = join(dir.path, "a.snapshot");
    const made = await runCli(["snapshot", "create", file, "--data-dir", coordinatorDir]);
    expect(made.code, made.stderr).toBe(0);
    const snapshot = decodeSnapshot(new Uint8Array(readFileSync(file)));
    const at = snapshot.milestone!.index;
    const entryPoints = new Map(snapshot.entryPoints.map((e) => [e.messageId, e.index]));
    // Every message the last 15 milestones referenced, with the index that did, and nothing older.
    const recent = await pool(early, 8, async (id) => [id, (await a.client.getMessageMetadata(id)).referencedByMilestoneIndex!] as const);
    for (const [id, index] of recent) expect(entryPoints.get(id)).toBe(at - index < 15 ? index : undefined);
    const parent = recent.filter(([, index]) => at - index < 15).at(-1);
    expect(parent, "a message the last 15 milestones referenced").toBeDefined();
    for (const [, index] of entryPoints) expect(at - index).toBeLessThan(15);

    // A message given to A at once, naming a message of before the snapshot: N will not have that one, only its id
    // among the entry points.
    const naming = await submit(a, indexation("after the snapshot", "names an older one"), [parent![0]]);
    const n = await follower("N", key.publicKey, [a], ["--data-dir", join(dir.path, "snapshot-n")], ["--snapshot", file]);
    expect(n.process.stdout()).toContain(`snapshot: the store starts at milestone ${at}`);
    const y = wallet();
    const onward = transfer(x, split.outputs.get(x)!, [{ wallet: y, amount: 5_000_000 }]);
    const onwardId = await submit(a, onward.payload);
    await within(15_000, "N confirms past the snapshot", async () => (await confirmedOf(n)) >= at + 3);
    await referencedEverywhere([a, n], [naming, onwardId]);
    expect((await n.client.getMessageMetadata(naming)).isSolid).toBe(true);
    // N has none of what came before: the message it named is an entry point, not a stored message.
    expect(await orNull(n.client.getMessageMetadata(parent![0]))).toBeNull();
    const upTo = await caughtUp(a, [n]);
    await sameLedger([a, n], { wallets: [owner, x, y], outputs: [split.outputs.get(owner)!, split.outputs.get(x)!, ...onward.outputs.values()], from: at + 1, upTo, messages: [naming, onwardId] });
    const joined = await info(n);
    expect(joined.isHealthy).toBe(true);
    // It announces the snapshot's index as pruned: nobody asks it for milestone `at` or older, which it does not hold.
    const asSeenByA = (await peersOf(a)).find((p) => p.id === n.peerId)?.gossip?.heartbeat;
    expect(asSeenByA?.prunedMilestoneIndex).toBe(at);
    expect(asSeenByA?.solidMilestoneIndex).toBeGreaterThan(at);
    await Promise.all([a.process.kill(), n.process.kill()]);
  }, 60_000);
});

describe("followers pruning under load (--prune-milestones 20, LMDB) keep up and answer no request for what they pruned", () => {
  it("their pruning indexes move on with the milestones; a peer asking for a pruned message or milestone gets nothing, for a kept one it gets it", async () => {
    const key = await coordinatorKey("prune", 51);
    const a = await coordinator("A", key.file, "200ms", ["--in-memory"]);
    const prune = ["--prune-milestones", "20"];
    const f1 = await follower("F1", key.publicKey, [a], ["--data-dir", join(dir.path, "prune-f1")], prune);
    const f2 = await follower("F2", key.publicKey, [f1], ["--data-dir", join(dir.path, "prune-f2")], prune);
    await within(15_000, "the line connects", async () => (await connectedTo(a, f1)) && (await connectedTo(f2, f1)));
    const traffic = load(() => a, "prune", 60);
    try {
      const first = await within(30_000, "both followers prune", async () => {
        const indexes = await Promise.all([f1, f2].map(async (f) => (await info(f)).pruningIndex));
        return indexes.every((p) => p >= 3) && indexes;
      });
      await within(15_000, "both pruning indexes move on", async () => {
        const indexes = await Promise.all([f1, f2].map(async (f) => (await info(f)).pruningIndex));
        return indexes.every((p, i) => p >= first[i]! + 5);
      });
      // On until the first message of the load is pruned on both.
      const firstReferenced = (await a.client.getMessageMetadata(traffic.acked[0]!)).referencedByMilestoneIndex!;
      await within(15_000, "the load's first message pruned", async () => (await Promise.all([f1, f2].map(async (f) => (await info(f)).pruningIndex))).every((p) => p >= firstReferenced));
      // Under load they keep up with A, and keep 20 milestones.
      await caughtUp(a, [f1, f2], 5000);
      for (const f of [f1, f2]) {
        const now = await info(f);
        expect(now.confirmedMilestoneIndex - now.pruningIndex).toBeGreaterThanOrEqual(20);
        expect(now.confirmedMilestoneIndex - now.pruningIndex).toBeLessThanOrEqual(25);
      }
    } finally {
      await traffic.stop();
    }
    await caughtUp(a, [f1, f2], 5000);
    for (const f of [f1, f2]) expect((await info(f)).isHealthy).toBe(true);
    const pruningIndex = (await info(f1)).pruningIndex;
    const confirmed = await confirmedOf(f1);
    // A message and a milestone F1 pruned (A keeps everything), and a message and a milestone F1 keeps.
    const oldMessage = traffic.acked[0]!;
    expect((await a.client.getMessageMetadata(oldMessage)).referencedByMilestoneIndex).toBeLessThanOrEqual(pruningIndex);
    expect(await orNull(f1.client.getMessageMetadata(oldMessage))).toBeNull();
    const oldMilestone = (await a.client.getMilestone(2)).messageId;
    const keptMilestoneIndex = confirmed - 3;
    const keptMilestone = (await f1.client.getMilestone(keptMilestoneIndex)).messageId;
    const keptMessage = traffic.acked.at(-20)!;
    expect(await orNull(f1.client.getMessageMetadata(keptMessage))).not.toBeNull();
    const raw = await rawPeer(f1);
    await raw.call("write", messageRequest(oldMessage) + milestoneRequest(2) + messageRequest(keptMessage) + milestoneRequest(keptMilestoneIndex));
    await within(5000, "the kept message and milestone", async () => {
      const ids = await framesReceived(raw);
      return ids.has(keptMessage) && ids.has(keptMilestone);
    });
    await new Promise((r) => setTimeout(r, 500));
    const after = await framesReceived(raw);
    expect(after.has(oldMessage)).toBe(false);
    expect(after.has(oldMilestone)).toBe(false);
    // F1 still serves the raw peer and its honest peers: nothing was dropped for asking.
    expect((await raw.call<{ open: boolean }>("state")).open).toBe(true);
    expect(await connectedTo(f1, f2)).toBe(true);
    await raw.stop();
    await Promise.all([a, f1, f2].map((n) => n.process.kill()));
  }, 60_000);
});
