// The PostgreSQL engine on a real server, beyond the contract suite: two instances (two connection pools) sharing one
// database, where the database alone decides between them; an unreachable server at start; and the database lost while
// the node runs (connections refused and cut), answered with 503 + Retry-After and recovered from without a restart.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { createHandler, createNode, PostgresStore, serve, ZERO_MESSAGE_ID, type MilestoneApplication } from "../src/node/index.js";
import { createTestDatabase, GENESIS_OUTPUT, genesisOf, indexation, NETWORK, postgresUrl, single, spend, wallet, type TestDatabase, refusal } from "./store-helpers.js";

const MI = 1_000_000;
const serverUrl = postgresUrl();

describe.skipIf(serverUrl === undefined)("PostgreSQL: two instances on one database", () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  const owner = wallet();
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl!, "pair");
    a = new PostgresStore({ connectionString: db.url, maxConnections: 6 });
    b = new PostgresStore({ connectionString: db.url, maxConnections: 6 });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it("opened at the same instant on a new database: created once, genesis applied once", async () => {
    const [ra, rb] = await Promise.all([a.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI) }), b.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI) })]);
    expect([ra.created, rb.created].filter(Boolean)).toHaveLength(1);
    expect(ra.ledger && rb.ledger).toBe(true);
    expect(await b.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
  });

  it("a message stored by one is read, found by its index and is a tip at the other", async () => {
    const m = indexation([ZERO_MESSAGE_ID], "shared between instances", "hello from a");
    expect(await a.accept(m)).toEqual({ stored: true });
    expect(Buffer.from((await b.get(m.id))!.bytes).equals(Buffer.from(m.bytes))).toBe(true);
    expect(await b.findByIndex(new TextEncoder().encode("shared between instances"), 10)).toEqual([m.id]);
    expect(await b.tips(8)).toContain(m.id);
    expect(await b.accept(m)).toEqual({ stored: false });
  });

  it("50 outputs, each spent by two different transactions at the same instant, one at each instance: exactly one of each pair wins", async () => {
    const holders = Array.from({ length: 50 }, () => wallet());
    const split = spend(owner, [GENESIS_OUTPUT], holders.map((h) => single(h, 2 * MI)));
    expect(await a.accept(split.acceptance)).toEqual({ stored: true });
    const outputOf = (h: (typeof holders)[number]): string => split.created[split.payload.essence.outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(h.address)))]!;
    const pairs = holders.map((h) => [spend(h, [outputOf(h)], [single(wallet(), 2 * MI)]), spend(h, [outputOf(h)], [single(wallet(), 2 * MI)])] as const);
    const results = await Promise.all(pairs.map(([x, y]) => Promise.allSettled([a.accept(x.acceptance), b.accept(y.acceptance)])));
    for (const [i, [rx, ry]] of results.entries()) {
      const wins = [rx, ry].filter((r) => r.status === "fulfilled" && r.value.stored);
      expect(wins, `pair ${i}`).toHaveLength(1);
      const loser = rx.status === "rejected" ? rx : ry;
      expect(loser.status).toBe("rejected");
      expect(((loser as PromiseRejectedResult).reason as ProtocolError).code).toBe("INPUT_SPENT");
      const winner = rx.status === "fulfilled" ? pairs[i]![0] : pairs[i]![1];
      const other = winner === pairs[i]![0] ? pairs[i]![1] : pairs[i]![0];
      expect((await b.output(outputOf(holders[i]!)))?.spent?.transactionId).toBe(winner.transactionId);
      expect(await a.has(other.acceptance.id)).toBe(false);
      expect(await b.output(other.created[0]!)).toBeUndefined();
    }
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

  it("messages on the current tips at both instances at once, with a bound of 8 tips: every one stored, no tip with a child, and the set within its bound at the next message", async () => {
    // The statement that drops the oldest tips skips rows the other instance holds (a deadlock would be retried and
    // still count as stored): this checks that the set stays sound and bounded under that contention.
    const bound = 8;
    const pair = [new PostgresStore({ connectionString: db.url, maxConnections: 6, maxTips: bound }), new PostgresStore({ connectionString: db.url, maxConnections: 6, maxTips: bound })];
    try {
      for (const s of pair) await s.open({ network: NETWORK });
      for (let round = 0; round < 10; round++) {
        // 16 at each instance, each on two of the tips as they are when it is made: the same tips, approved and dropped
        // by both at once.
        const sent = pair.flatMap((s, at) =>
          Array.from({ length: 16 }, async (_, i) => {
            const parents = [...new Set(await s.tips(2))].sort();
            return s.accept(indexation(parents, `tips ${round} ${at} ${i}`));
          }),
        );
        const results = await Promise.allSettled(sent);
        expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason)), `round ${round}`).toEqual([]);
      }
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const withChild = await client.query("SELECT t.message_id FROM chrysalis.tips t WHERE EXISTS (SELECT 1 FROM chrysalis.children c WHERE c.parent = t.message_id)");
        expect(withChild.rows).toEqual([]);
        // Writers at the same instant each see the set before the other's tip: it may hold one per writer more until
        // the next message, which drops what is past the bound.
        await pair[0]!.accept(indexation([...new Set(await pair[0]!.tips(2))].sort(), "after the storm"));
        const { rows } = await client.query<{ count: string }>("SELECT count(*) FROM chrysalis.tips");
        expect(Number(rows[0]!.count)).toBeGreaterThan(0);
        expect(Number(rows[0]!.count)).toBeLessThanOrEqual(bound);
      } finally {
        await client.end();
      }
    } finally {
      for (const s of pair) await s.close();
    }
  });

  it("a secret asked for at both instances at once is one secret", async () => {
    const random = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(32));
    const values = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).secret("nonce-mac-key", random)));
    for (const v of values) expect(Buffer.from(v).toString("hex")).toBe(Buffer.from(values[0]!).toString("hex"));
  });

  it("the same milestone index confirmed at both instances at once: exactly one lands", async () => {
    const candidates = [a, b].map((s, i) => ({ store: s, message: indexation([ZERO_MESSAGE_ID], `milestone candidate ${i}`) }));
    const application = (id: string): MilestoneApplication => ({ index: 1, messageId: id, timestamp: 1, referenced: [{ messageId: id, ledgerInclusionState: "noTransaction" }], createdOutputs: [], consumedOutputs: [] });
    const results = await Promise.allSettled(candidates.map((c) => c.store.accept({ ...c.message, milestone: application(c.message.id) })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason as ProtocolError).code).toBe("MILESTONE_CONFLICT");
    expect((await a.latestMilestone())?.messageId).toBe((await b.latestMilestone())?.messageId);
  });
});

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
