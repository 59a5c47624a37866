// The PostgreSQL engine on a real server, beyond the contract suite: two instances (two connection pools) sharing one
// database, where the database alone decides between them and each is told what the other wrote (watch); an
// unreachable server at start; and the database lost while the node runs (connections refused and cut), answered with
// 503 + Retry-After and recovered from without a restart.
import { connect, createServer, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { createHandler, createNode, PostgresStore, serve, ZERO_MESSAGE_ID, type PostgresStoreOptions, type StoreChange } from "../src/node/index.js";
import {
  createTestDatabase,
  emptyMilestone,
  GENESIS_OUTPUT,
  genesisOf,
  indexation,
  issue,
  milestoneApplication,
  NETWORK,
  postgresUrl,
  single,
  spend,
  wallet,
  type Spend,
  type TestDatabase,
  type Wallet,
  refusal,
} from "./store-helpers.js";

const MI = 1_000_000;
const serverUrl = postgresUrl();

/** A database of its own with two instances (two pools) on it, not opened yet; `b` made with `options`. */
async function twoInstances(label: string, options: Partial<PostgresStoreOptions> = {}): Promise<{ db: TestDatabase; a: PostgresStore; b: PostgresStore }> {
  const db = await createTestDatabase(serverUrl!, label);
  return { db, a: new PostgresStore({ connectionString: db.url, maxConnections: 6 }), b: new PostgresStore({ connectionString: db.url, maxConnections: 6, ...options }) };
}

/** twoInstances, opened: `a` makes the store with a genesis of 100 Mi to `owner`, `b` opens it. */
async function openedPair(label: string, owner: Wallet, options: Partial<PostgresStoreOptions> = {}): Promise<{ db: TestDatabase; a: PostgresStore; b: PostgresStore }> {
  const pair = await twoInstances(label, options);
  await pair.a.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI) });
  await pair.b.open({ network: NETWORK });
  return pair;
}

async function closeAll(db: TestDatabase | undefined, ...stores: (PostgresStore | undefined)[]): Promise<void> {
  for (const store of stores) await store?.close();
  await db?.drop();
}

/**
 * Submits each pair's two transactions at the same instant, the first at `a`, the second at `b`: exactly one of each
 * is accepted and stored, the other refused INPUT_SPENT and not stored. Returns the winners, in pair order.
 */
async function oneOfEachPair(a: PostgresStore, b: PostgresStore, pairs: readonly (readonly [Spend, Spend])[]): Promise<Spend[]> {
  const results = await Promise.all(pairs.map(([x, y]) => Promise.allSettled([a.accept(x.acceptance), b.accept(y.acceptance)])));
  const winners: Spend[] = [];
  for (const [i, [rx, ry]] of results.entries()) {
    const wins = [rx, ry].filter((r) => r.status === "fulfilled" && r.value.stored);
    expect(wins, `pair ${i}`).toHaveLength(1);
    const loser = rx.status === "rejected" ? rx : ry;
    expect(loser.status).toBe("rejected");
    expect(((loser as PromiseRejectedResult).reason as ProtocolError).code).toBe("INPUT_SPENT");
    const winner = rx.status === "fulfilled" ? pairs[i]![0] : pairs[i]![1];
    const other = winner === pairs[i]![0] ? pairs[i]![1] : pairs[i]![0];
    expect(await a.has(winner.acceptance.id)).toBe(true);
    expect(await b.has(other.acceptance.id)).toBe(false);
    winners.push(winner);
  }
  return winners;
}

describe.skipIf(serverUrl === undefined)("PostgreSQL: two instances on one database", () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  const owner = wallet();
  beforeAll(async () => ({ db, a, b } = await twoInstances("pair")));
  afterAll(() => closeAll(db, a, b));

  it("opened at the same instant on a new database: created once, genesis applied once", async () => {
    const [ra, rb] = await Promise.all([a.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI) }), b.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI) })]);
    expect([ra.created, rb.created].filter(Boolean)).toHaveLength(1);
    expect(ra.ledger && rb.ledger).toBe(true);
    expect(await b.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
  });

  it("a message stored by one is read, found by its index and unreferenced at the other", async () => {
    const m = indexation([ZERO_MESSAGE_ID], "shared between instances", "hello from a");
    expect(await a.accept(m)).toEqual({ stored: true });
    expect(Buffer.from((await b.get(m.id))!.bytes).equals(Buffer.from(m.bytes))).toBe(true);
    expect(await b.findByIndex(new TextEncoder().encode("shared between instances"), 10)).toEqual([m.id]);
    expect(await b.unreferenced(100)).toContain(m.id);
    expect(await b.accept(m)).toEqual({ stored: false });
  });

  it("the same messages stored at both instances at once, in opposite orders: each stored once, no deadlock", async () => {
    // Each instance writes the messages that arrive while a write is under way as one group: overlapping groups, of
    // more messages than one statement takes.
    const messages = Array.from({ length: 600 }, (_, i) => indexation([ZERO_MESSAGE_ID], "gossiped to both", `message ${i}`));
    const [atA, atB] = await Promise.all([Promise.allSettled(messages.map((m) => a.accept(m))), Promise.allSettled([...messages].reverse().map((m) => b.accept(m)))]);
    const failed = [...atA, ...atB].filter((r) => r.status === "rejected");
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const storedAtA = atA.map((r) => (r as PromiseFulfilledResult<{ stored: boolean }>).value.stored);
    const storedAtB = atB.map((r) => (r as PromiseFulfilledResult<{ stored: boolean }>).value.stored).reverse();
    expect(messages.filter((_, i) => storedAtA[i] === storedAtB[i]), "stored by both or by neither").toEqual([]);
    expect(await b.findByIndex(new TextEncoder().encode("gossiped to both"), 1000)).toHaveLength(messages.length);
  });

  it("50 outputs, each claimed by two different transactions at the same instant, one at each instance: exactly one of each pair is accepted", async () => {
    const holders = Array.from({ length: 50 }, () => wallet());
    const split = spend(owner, [GENESIS_OUTPUT], holders.map((h) => single(h, 2 * MI)));
    expect(await a.accept(split.acceptance)).toEqual({ stored: true });
    // The outputs the pairs fight over are in the confirmed ledger from milestone 1 on.
    await issue(a, { index: 1, timestamp: 1, message: indexation([split.acceptance.id], "milestone 1"), referenced: [{ messageId: split.acceptance.id, ledgerInclusionState: "included" }], included: [split] });
    const outputOf = (h: (typeof holders)[number]): string => split.created[split.payload.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(h.address)))]!;
    const pairs = holders.map((h) => [spend(h, [outputOf(h)], [single(wallet(), 2 * MI)]), spend(h, [outputOf(h)], [single(wallet(), 2 * MI)])] as const);
    const winners = await oneOfEachPair(a, b, pairs);
    for (const [i, winner] of winners.entries()) {
      expect(await b.claim(outputOf(holders[i]!))).toEqual({ transactionId: winner.transactionId, messageId: winner.acceptance.id, index: 1 });
      // A claim is no spend: the ledger moves when a milestone confirms the winner.
      expect((await b.output(outputOf(holders[i]!)))?.spent).toBeUndefined();
      expect(await b.output(winner.created[0]!)).toBeUndefined();
    }
    expect(await a.verify()).toMatch(/^ledger: the unspent outputs sum to 100000000, not the total supply/);
  });

  it("a nonce redeemed at both instances at once is redeemed exactly once; a revocation at one holds at the other", async () => {
    const expires = Date.now() + 60_000;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).redeemNonce("shared-nonce", expires)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await a.redeemNonce("shared-nonce", expires)).toBe(false);
    await a.revokeToken("shared-jti", expires);
    expect(await b.isTokenRevoked("shared-jti")).toBe(true);
  });

  it("overlapping groups of nonces redeemed at both instances in opposite orders: no deadlock, each nonce once", async () => {
    const now = Date.now();
    for (let round = 0; round < 6; round++) {
      const nonces = Array.from({ length: 600 }, (_, i) => `overlap ${round} ${i}`);
      // The first call of each instance goes alone; the rest wait for it and go as one group, in call order.
      const atA = nonces.map((n) => a.redeemNonce(n, now + 60_000));
      const atB = [...nonces].reverse().map((n) => b.redeemNonce(n, now + 60_000));
      const [ra, rb] = await Promise.all([Promise.allSettled(atA), Promise.allSettled(atB)]);
      const failed = [...ra, ...rb].filter((r) => r.status === "rejected");
      expect(failed.map((r) => String((r as PromiseRejectedResult).reason)), `round ${round}`).toEqual([]);
      const wonAtA = ra.map((r) => (r as PromiseFulfilledResult<boolean>).value);
      const wonAtB = rb.map((r) => (r as PromiseFulfilledResult<boolean>).value).reverse();
      expect(nonces.filter((_, i) => wonAtA[i] === wonAtB[i]), `round ${round}: redeemed at both or at neither`).toEqual([]);
    }
  });

  it("a nonce or token id PostgreSQL text cannot hold (NUL) is refused alone; the calls grouped beside it are answered", async () => {
    const now = Date.now();
    const first = a.redeemNonce("beside nul 0", now + 60_000);
    const [r1, bad, r2] = await Promise.allSettled(["beside nul 1", "bad\u0000nonce", "beside nul 2"].map((n) => a.redeemNonce(n, now + 60_000)));
    expect(await first).toBe(true);
    expect([r1, r2]).toEqual([{ status: "fulfilled", value: true }, { status: "fulfilled", value: true }]);
    expect(((bad as PromiseRejectedResult).reason as ProtocolError).code).toBe("INVALID_ARGUMENT");
    const checks = await Promise.allSettled(["jti beside 0", "bad\u0000jti", "jti beside 1"].map((j) => b.isTokenRevoked(j)));
    expect(checks.map((c) => (c.status === "fulfilled" ? c.value : (c.reason as ProtocolError).code))).toEqual([false, "INVALID_ARGUMENT", false]);
  });

  it("a secret asked for at both instances at once is one secret", async () => {
    const random = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(32));
    const values = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).secret("nonce-mac-key", random)));
    for (const v of values) expect(Buffer.from(v).toString("hex")).toBe(Buffer.from(values[0]!).toString("hex"));
  });

  it("the same milestone index confirmed at both instances at once: exactly one lands", async () => {
    const next = ((await a.latestMilestone())?.index ?? 0) + 1;
    const candidates = [a, b].map((s, i) => ({ store: s, message: indexation([ZERO_MESSAGE_ID], `milestone candidate ${i}`) }));
    const results = await Promise.allSettled(candidates.map((c) => c.store.accept({ ...c.message, milestone: emptyMilestone(c.message, next, 1) })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason as ProtocolError).code).toBe("MILESTONE_CONFLICT");
    expect((await a.latestMilestone())?.messageId).toBe((await b.latestMilestone())?.messageId);
  });
});

describe.skipIf(serverUrl === undefined)("PostgreSQL: two instances, chained spends of a pending transaction's outputs", () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  const owner = wallet();
  beforeAll(async () => ({ db, a, b } = await openedPair("chained", owner)));
  afterAll(() => closeAll(db, a, b));

  it("50 pending outputs, each spent by two chained transactions at the same instant, one at each instance: exactly one of each pair is accepted, and a milestone books both in walk order", async () => {
    const holders = Array.from({ length: 50 }, () => wallet());
    const split = spend(owner, [GENESIS_OUTPUT], holders.map((h) => single(h, 2 * MI)));
    expect(await a.accept(split.acceptance)).toEqual({ stored: true });
    // No milestone confirmed split: the outputs the pairs fight over are pending outputs.
    const outputOf = (i: number): string => split.created[split.payload.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(holders[i]!.address)))]!;
    const payees = new Map<Spend, Wallet>();
    const pairs = holders.map((h, i) => {
      const pay = (): Spend => {
        const to = wallet();
        const s = spend(h, [outputOf(i)], [single(to, 2 * MI)], [split.acceptance.id]);
        payees.set(s, to);
        return s;
      };
      return [pay(), pay()] as const;
    });
    const winners = await oneOfEachPair(a, b, pairs);
    for (const [i, winner] of winners.entries()) {
      expect(await b.output(outputOf(i))).toBeUndefined();
      expect(await b.pendingOutput(outputOf(i))).toMatchObject({ transactionId: split.transactionId, index: 0 });
      expect(await b.claim(outputOf(i))).toEqual({ transactionId: winner.transactionId, messageId: winner.acceptance.id, index: 0 });
      expect(await a.pendingOutput(winner.created[0]!)).toMatchObject({ transactionId: winner.transactionId, messageId: winner.acceptance.id });
    }
    expect(await a.verify()).toMatch(/^ledger: the unspent outputs sum to 100000000, not the total supply/);

    // One more, alone: a chained spend is the five round trips of any claim (BEGIN, the locks and the message, the
    // read, the claims and pending outputs, COMMIT).
    const queries = vi.spyOn(pg.Client.prototype, "query");
    let trips: number;
    try {
      expect(await a.accept(spend(payees.get(winners[0]!)!, [winners[0]!.created[0]!], [single(wallet(), 2 * MI)], [winners[0]!.acceptance.id]).acceptance)).toEqual({ stored: true });
      trips = queries.mock.calls.length;
    } finally {
      queries.mockRestore();
    }
    expect(trips).toBe(5);

    const included = [split, ...winners];
    await issue(b, {
      index: 1,
      timestamp: 1,
      message: indexation(winners.map((w) => w.acceptance.id).slice(0, 8), "milestone 1"),
      referenced: included.map((s) => ({ messageId: s.acceptance.id, ledgerInclusionState: "included" as const })),
      included,
    });
    for (const [i, winner] of winners.entries()) {
      expect(await a.output(outputOf(i))).toMatchObject({ milestoneIndexBooked: 1, spent: { transactionId: winner.transactionId, milestoneIndex: 1 } });
      for (const id of [outputOf(i), winner.created[0]!]) expect(await a.pendingOutput(id)).toBeUndefined();
      expect(await a.claim(outputOf(i))).toBeUndefined();
    }
    expect(await a.verify()).toMatch(/^ledger: the unspent outputs sum to 100000000, not the total supply/);
  });
});

/** Polls `done` every 20 ms until it holds, failing the test after `ms`. */
async function until(done: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  for (const start = Date.now(); !(await done()); ) {
    if (Date.now() - start > ms) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What a listener was told, in order. */
function recorder(): { changes: StoreChange[]; listener: (change: StoreChange) => void; messages: () => string[]; milestones: () => number[] } {
  const changes: StoreChange[] = [];
  return {
    changes,
    listener: (change) => changes.push(change),
    messages: () => changes.flatMap((c) => (c.type === "message" ? [c.id] : [])),
    milestones: () => changes.flatMap((c) => (c.type === "milestone" ? [c.index] : [])),
  };
}

describe.skipIf(serverUrl === undefined)("PostgreSQL: watch() tells each instance what the others stored and confirmed", () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  const owner = wallet();
  beforeAll(async () => ({ db, a, b } = await openedPair("watch", owner, { watchRetryMillis: 50 })));
  afterAll(() => closeAll(db, a, b));

  it("each message and milestone one instance writes is reported to the other exactly once, after its commit, and never to itself; a write refused reports nothing", async () => {
    // Every notice on the channel, as a plain listener sees them: each well under NOTIFY's 8000 bytes.
    const raw = new pg.Client({ connectionString: db.url });
    await raw.connect();
    const notices: string[] = [];
    raw.on("notification", (n) => notices.push(n.payload ?? ""));
    await raw.query("LISTEN chrysalis_changes");
    const atA = recorder();
    const atB = recorder();
    const stopA = a.watch(atA.listener);
    const stopB = b.watch(atB.listener);
    try {
      // Once listening, each reports the latest milestone (none yet): what was written before is in the store.
      await until(() => atA.changes.length > 0 && atB.changes.length > 0, "both to listen");
      expect(atA.changes).toEqual([{ type: "milestone", index: 0 }]);
      expect(atB.changes).toEqual([{ type: "milestone", index: 0 }]);

      // At A: 250 messages at once (written in groups, more than one notice's worth), a transaction with its claim,
      // a claim refused and a milestone refused (rolled back: no notice), and a milestone confirmed with its message.
      const many = Array.from({ length: 250 }, (_, i) => indexation([ZERO_MESSAGE_ID], "watched", `message ${i}`));
      expect((await Promise.all(many.map((m) => a.accept(m)))).every((r) => r.stored)).toBe(true);
      expect(await a.accept(many[0]!)).toEqual({ stored: false });
      const tx = spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)], [many[1]!.id]);
      expect(await a.accept(tx.acceptance)).toEqual({ stored: true });
      const refusedClaim = spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)], [many[2]!.id]);
      expect((await refusal(a.accept(refusedClaim.acceptance))).code).toBe("INPUT_SPENT");
      const early = indexation([many[3]!.id], "milestone 2 too early");
      expect((await refusal(a.accept({ ...early, milestone: emptyMilestone(early, 2, 2) }))).code).toBe("MILESTONE_CONFLICT");
      const ms1 = indexation([tx.acceptance.id], "milestone 1");
      await issue(a, { index: 1, timestamp: 1, message: ms1, referenced: [{ messageId: tx.acceptance.id, ledgerInclusionState: "included" }], included: [tx] });
      // At B, as a follower: A stores milestone 2's message, B confirms it.
      const ms2 = indexation([ms1.id], "milestone 2");
      expect(await a.accept(ms2)).toEqual({ stored: true });
      await until(() => atB.messages().includes(ms2.id), "B to hear of milestone 2's message");
      await b.confirmMilestone(await milestoneApplication(b, { index: 2, timestamp: 2, message: ms2, referenced: [] }));
      const own = indexation([ms2.id], "stored at b");
      expect(await b.accept(own)).toEqual({ stored: true });

      const fromA = [...many.map((m) => m.id), tx.acceptance.id, ms1.id, ms2.id];
      await until(() => atB.messages().length >= fromA.length && atB.milestones().includes(1) && atA.milestones().includes(2) && atA.messages().includes(own.id), "every change to be heard");
      // A short wait for anything that should not come.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([...atB.messages()].sort()).toEqual([...fromA].sort());
      expect(atB.milestones()).toEqual([0, 1]);
      // The notice of a write comes after its commit: what B was told of, B can read.
      for (const id of atB.messages()) expect(await b.has(id)).toBe(true);
      expect(atA.changes).toEqual([{ type: "milestone", index: 0 }, { type: "milestone", index: 2 }, { type: "message", id: own.id }]);
      expect(atA.messages()).not.toContain(refusedClaim.acceptance.id);
      expect(atB.messages()).not.toContain(refusedClaim.acceptance.id);
      expect(atB.messages()).not.toContain(early.id);
      for (const n of notices) expect(n.length).toBeLessThan(8000);
      // Grouped: fewer notices than messages.
      expect(notices.length).toBeLessThan(fromA.length);
    } finally {
      stopA();
      stopB();
      await raw.end();
    }
    // After the last listener, the listening connection is closed.
    await until(async () => (await sqlRows(db.url, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'chrysalis-watch'"))[0]!.n === 0, "the listening connections to close");
  });

  it("a lost listening connection is opened again with a back-off; what was written meanwhile is not reported, the latest milestone then is, and later writes are reported again", async () => {
    const atB = recorder();
    const stop = b.watch(atB.listener);
    const admin = new pg.Client({ connectionString: serverUrl! });
    await admin.connect();
    try {
      await until(() => atB.changes.length > 0, "B to listen");
      const latest = (await a.latestMilestone())!.index;
      expect(atB.changes).toEqual([{ type: "milestone", index: latest }]);
      // A keeps connections open to write on while the database takes no new ones; B's listening connection is cut.
      await Promise.all(Array.from({ length: 4 }, () => a.has(ZERO_MESSAGE_ID)));
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
      const cut = await admin.query<{ n: number }>("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'chrysalis-watch'", [db.name]);
      expect(cut.rows[0]!.n).toBe(1);
      const missed = indexation([ZERO_MESSAGE_ID], "written while b does not listen");
      expect(await a.accept(missed)).toEqual({ stored: true });
      const ms = indexation([missed.id], "a milestone while b does not listen");
      expect(await a.accept({ ...ms, milestone: emptyMilestone(ms, latest + 1, 3) })).toEqual({ stored: true });
      // Several tries at 50, 100, 200 ms … all refused meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(atB.changes).toHaveLength(1);
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
      await until(() => atB.changes.length > 1, "B to listen again");
      // Told of the latest milestone, which the missed messages are in the store under; not of the messages.
      expect(atB.changes).toEqual([{ type: "milestone", index: latest }, { type: "milestone", index: latest + 1 }]);
      const after = indexation([ms.id], "written once b listens again");
      expect(await a.accept(after)).toEqual({ stored: true });
      await until(() => atB.changes.length > 2, "B to hear of the next message");
      expect(atB.changes.at(-1)).toEqual({ type: "message", id: after.id });
      expect(await b.unreferenced(10)).toContain(after.id);
    } finally {
      stop();
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
    }
  });

  it("a listening connection dropped in silence (no error, no close: a NAT's or firewall's) is found by its heartbeat and opened again", async () => {
    const relay = await silentRelay(new URL(serverUrl!));
    const url = new URL(db.url);
    url.host = `127.0.0.1:${relay.port}`;
    // Only watch() goes through the relay: a store that is not opened has no pool, and its listener needs none.
    const c = new PostgresStore({ connectionString: url.toString(), watchRetryMillis: 50, watchHeartbeatMillis: 200 });
    const atC = recorder();
    const stop = c.watch(atC.listener);
    try {
      await until(() => atC.changes.length > 0, "C to listen");
      const latest = (await a.latestMilestone())?.index ?? 0;
      relay.silence();
      const unheard = indexation([ZERO_MESSAGE_ID], "sent to a connection that went silent");
      expect(await a.accept(unheard)).toEqual({ stored: true });
      await until(() => atC.changes.length > 1, "C to find its connection dead and listen again");
      expect(atC.changes).toEqual([{ type: "milestone", index: latest }, { type: "milestone", index: latest }]);
      const heard = indexation([ZERO_MESSAGE_ID], "sent once C listens again");
      expect(await a.accept(heard)).toEqual({ stored: true });
      await until(() => atC.changes.length > 2, "C to hear the next message");
      expect(atC.changes.at(-1)).toEqual({ type: "message", id: heard.id });
    } finally {
      stop();
      await c.close();
      await relay.close();
    }
  });

  it("a closed store's listener hears nothing more, and watch() after close() is refused", async () => {
    const c = new PostgresStore({ connectionString: db.url, maxConnections: 2 });
    await c.open({ network: NETWORK });
    const atC = recorder();
    c.watch(atC.listener);
    await until(() => atC.changes.length > 0, "C to listen");
    await c.close();
    expect(await a.accept(indexation([ZERO_MESSAGE_ID], "after c closed"))).toEqual({ stored: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(atC.changes).toHaveLength(1);
    expect(() => c.watch(() => undefined)).toThrow(/closed/);
  });
});

/**
 * A TCP relay to the test server whose silence() stops carrying bytes on every connection it relays then, closing none
 * (as a NAT that forgot the flow would): neither side hears an error. Connections made after go through.
 */
async function silentRelay(target: URL): Promise<{ port: number; silence(): void; close(): Promise<void> }> {
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    socket.pipe(upstream);
    upstream.pipe(socket);
    const pair: [Socket, Socket] = [socket, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      socket.destroy();
      upstream.destroy();
    };
    socket.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    silence() {
      for (const [socket, upstream] of pairs) {
        socket.unpipe(upstream);
        upstream.unpipe(socket);
        socket.pause();
        upstream.pause();
      }
    },
    async close() {
      for (const [socket, upstream] of pairs) {
        socket.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function sqlRows<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(serverUrl === undefined)("PostgreSQL faults: unreachable at start, lost while running", () => {
  it("an unreachable server at start: STORE_UNAVAILABLE naming host and port, and the store does not open", async () => {
    const store = new PostgresStore({ connectionString: "postgres://postgres@127.0.0.1:1/nowhere", connectionTimeoutMillis: 2000 });
    const error = await refusal(store.open({ network: NETWORK }));
    expect(error.code).toBe("STORE_UNAVAILABLE");
    expect(error.message).toContain("127.0.0.1:1/nowhere");
    expect((await refusal(store.get(ZERO_MESSAGE_ID))).code).toBe("STORE_UNAVAILABLE");
    await store.close();
  });

  it("a database that does not exist: STORE_UNAVAILABLE naming it", async () => {
    const url = new URL(serverUrl!);
    url.pathname = "/chrysalis_no_such_database";
    const store = new PostgresStore(url.toString());
    const error = await refusal(store.open({ network: NETWORK }));
    expect(error.code).toBe("STORE_UNAVAILABLE");
    expect(error.message).toContain("chrysalis_no_such_database");
    await store.close();
  });

  it("the database lost while the node runs: 503 with Retry-After and no database named to the client, the process stays up, and it recovers by itself", async () => {
    const db = await createTestDatabase(serverUrl!, "lost");
    const admin = new pg.Client({ connectionString: serverUrl! });
    await admin.connect();
    const store = new PostgresStore({ connectionString: db.url, maxConnections: 4, connectionTimeoutMillis: 2000 });
    const node = createNode({ network: NETWORK, minPoWScore: 0, store, pow: false });
    const logged: string[] = [];
    const server = await serve(createHandler(node, { onServiceError: (error) => logged.push(error.message) }), { host: "127.0.0.1", port: 0, onClose: () => node.close() });
    const post = (tag: string): Promise<Response> => {
      const m = indexation([ZERO_MESSAGE_ID], tag);
      return fetch(`${server.url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: m.bytes as Uint8Array<ArrayBuffer> });
    };
    try {
      const before = await post("before the outage");
      expect(before.status).toBe(201);
      const id = ((await before.json()) as { data: { messageId: string } }).data.messageId;
      // The outage: no new connections to this database, and every open one cut.
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [db.name]);
      for (const response of [await post("during the outage"), await fetch(`${server.url}/api/v1/messages/${id}`)]) {
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("1");
        const body = (await response.json()) as { error: { reason: string; message: string } };
        expect(body.error.reason).toBe("STORE_UNAVAILABLE");
        // The client is told what to do, never which database the node uses; the operator's log names it.
        expect(body.error.message).toBe("the node's store cannot be used right now; nothing was written, try again later");
        expect(JSON.stringify(body)).not.toContain(db.name);
      }
      expect(logged.length).toBeGreaterThanOrEqual(2);
      expect(logged.every((line) => line.includes(db.name))).toBe(true);
      // The database comes back: the next requests succeed on new connections, with no restart.
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
      const after = await post("after the outage");
      expect(after.status).toBe(201);
      expect((await fetch(`${server.url}/api/v1/messages/${id}`)).status).toBe(200);
      expect(await store.has(((await after.json()) as { data: { messageId: string } }).data.messageId)).toBe(true);
    } finally {
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
      await server.close();
      await admin.end();
      await db.drop();
    }
  });
});
