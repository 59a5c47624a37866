// Issue #11 over real loopback, attackers on 127.0.0.2 … and the victim on 127.0.0.1: prove-ownership that anonymous
// traffic cannot break, rate limits per client address (X-Forwarded-For only from trusted proxies), and the HTTP
// hygiene of the auth routes. Every loop is bounded in count and time; every server is closed by its test.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signNonce } from "../src/auth/index.js";
import { RateLimiter } from "../src/node/index.js";
import { agentFrom, call, postJson, sleep } from "./adversarial-helpers.js";
import { indexationJson, startNode, type Running } from "./node-helpers.js";

const PROVE = "/authentication/prove-ownership/";

async function victimLogin(run: Running, from = "127.0.0.1"): Promise<number> {
  const id = encodeURIComponent(run.identity.id);
  const got = await call(`${run.url}${PROVE}${id}`, { from });
  if (got.status !== 200) return got.status;
  const posted = await postJson(`${run.url}${PROVE}${id}`, { signedNonce: signNonce(got.json.nonce, run.identity.secretKey) }, { from });
  return posted.status;
}

async function floodDuringVictimLogins(run: Running): Promise<{ victim: number[]; attacker: Map<number, number>; requests: number }> {
  // Real time for the nonces: the flood lasts seconds.
  const realClock = setInterval(() => (run.clock.now = Date.now()), 20);
  run.clock.now = Date.now();
  const id = encodeURIComponent(run.identity.id);
  const attacker = new Map<number, number>();
  const count = (status: number): void => void attacker.set(status, (attacker.get(status) ?? 0) + 1);
  let victimDone = false;
  const deadline = Date.now() + 20_000;
  let requests = 0;
  const loop = async (from: string, lane: number): Promise<void> => {
    const agent = agentFrom(from, 4);
    try {
      for (let i = 0; !victimDone && Date.now() < deadline && i < 20_000; i++) {
        requests++;
        const kind = (i + lane) % 3;
        try {
          if (kind === 0) count((await call(`${run.url}${PROVE}${id}`, { from, agent })).status);
          else if (kind === 1) count((await postJson(`${run.url}${PROVE}${id}`, { signedNonce: "ab".repeat(64) }, { from, agent })).status);
          else count((await call(`${run.url}${PROVE}did:iota:random${i}x${lane}`, { from, agent })).status);
        } catch {
          count(0);
        }
      }
    } finally {
      agent.destroy();
    }
  };
  const flood = Promise.all(["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"].flatMap((from) => [0, 1, 2, 3].map((lane) => loop(from, lane))));
  const victim: number[] = [];
  try {
    await sleep(300); // the flood is on before the victim starts
    for (let i = 0; i < 10 && Date.now() < deadline; i++) {
      victim.push(await victimLogin(run));
      await sleep(300);
    }
  } finally {
    victimDone = true;
    await flood;
    clearInterval(realClock);
  }
  return { victim, attacker, requests };
}

describe("a flood of GETs and bad POSTs for a victim's id, from other addresses, never makes the victim's login fail", () => {
  it("with the default limits: 10 of 10 victim logins succeed while four attacker addresses flood; the flood is throttled", async () => {
    const run = await startNode({ auth: true, minPoWScore: 1 });
    try {
      const { victim, attacker, requests } = await floodDuringVictimLogins(run);
      console.log(`[figures] default limits: victim logins under flood ${victim.filter((s) => s === 200).length}/${victim.length}; attacker requests ${requests}, statuses ${JSON.stringify(Object.fromEntries(attacker))}`);
      expect(victim).toEqual(Array(10).fill(200));
      expect(attacker.get(429) ?? 0).toBeGreaterThan(0);
      expect(attacker.get(0) ?? 0).toBe(0);
    } finally {
      await run.close();
    }
  });

  it("without rate limits (the nonce design alone): still 10 of 10, though every attacker request reaches the service", async () => {
    const run = await startNode({ auth: true, minPoWScore: 1, limits: { rates: false } });
    try {
      const { victim, attacker, requests } = await floodDuringVictimLogins(run);
      console.log(`[figures] no rate limits: victim logins under flood ${victim.filter((s) => s === 200).length}/${victim.length}; attacker requests ${requests}, statuses ${JSON.stringify(Object.fromEntries(attacker))}`);
      expect(victim).toEqual(Array(10).fill(200));
      expect(attacker.get(429) ?? 0).toBe(0);
      expect((attacker.get(200) ?? 0) + (attacker.get(401) ?? 0)).toBeGreaterThan(100);
    } finally {
      await run.close();
    }
  });
});

describe("rate limits per client address: 429 with Retry-After", () => {
  it("nonce requests beyond the bucket are refused with Retry-After, for that address only", async () => {
    const run = await startNode({ auth: true, minPoWScore: 1, limits: { rates: { nonce: { perSecond: 0.2, burst: 3 } } } });
    try {
      const id = encodeURIComponent(run.identity.id);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await call(`${run.url}${PROVE}${id}`, { from: "127.0.0.2" })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const refused = await call(`${run.url}${PROVE}${id}`, { from: "127.0.0.2" });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(refused.json.error.reason).toBe("RATE_LIMITED");
      // Another address has its own bucket.
      expect((await call(`${run.url}${PROVE}${id}`, { from: "127.0.0.3" })).status).toBe(200);
    } finally {
      await run.close();
    }
  });

  it("proofs and submissions have their own buckets", async () => {
    const run = await startNode({ auth: true, minPoWScore: 1, limits: { rates: { proof: { perSecond: 0.1, burst: 2 }, submit: { perSecond: 0.1, burst: 2 } } } });
    try {
      const id = encodeURIComponent(run.identity.id);
      const proofs: number[] = [];
      for (let i = 0; i < 3; i++) proofs.push((await postJson(`${run.url}${PROVE}${id}`, { signedNonce: "ab".repeat(64) }, { from: "127.0.0.2" })).status);
      expect(proofs).toEqual([401, 401, 429]);
      const submits: number[] = [];
      for (let i = 0; i < 3; i++) submits.push((await postJson(`${run.url}/api/v1/messages`, indexationJson(`s${i}`), { from: "127.0.0.2" })).status);
      expect(submits).toEqual([401, 401, 429]);
      // Reads are not submissions.
      expect((await call(`${run.url}/api/v1/info`, { from: "127.0.0.2" })).status).toBe(200);
    } finally {
      await run.close();
    }
  });

  it("X-Forwarded-For is ignored unless the peer is a trusted proxy; from one it names the client", async () => {
    const plain = await startNode({ auth: true, minPoWScore: 1, limits: { rates: { nonce: { perSecond: 0.1, burst: 1 } } } });
    try {
      const id = encodeURIComponent(plain.identity.id);
      expect((await call(`${plain.url}${PROVE}${id}`, { from: "127.0.0.2", headers: { "x-forwarded-for": "10.0.0.1" } })).status).toBe(200);
      // A spoofed header does not buy a fresh bucket.
      expect((await call(`${plain.url}${PROVE}${id}`, { from: "127.0.0.2", headers: { "x-forwarded-for": "10.0.0.2" } })).status).toBe(429);
    } finally {
      await plain.close();
    }
    const proxied = await startNode({ auth: true, minPoWScore: 1, limits: { trustProxy: ["127.0.0.9/32"], rates: { nonce: { perSecond: 0.1, burst: 1 } } } });
    try {
      const id = encodeURIComponent(proxied.identity.id);
      const via = (client: string): Promise<number> => call(`${proxied.url}${PROVE}${id}`, { from: "127.0.0.9", headers: { "x-forwarded-for": `${client}, 127.0.0.9` } }).then((a) => a.status);
      expect(await via("198.51.100.7")).toBe(200);
      expect(await via("198.51.100.8")).toBe(200);
      expect(await via("198.51.100.7")).toBe(429);
      // Clients of one IPv6 /64 share a bucket.
      expect(await via("2001:db8:1:2::1")).toBe(200);
      expect(await via("2001:db8:1:2:ffff::9")).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  it("rates: false (serve --no-rate-limits) lifts them", async () => {
    const run = await startNode({ auth: true, minPoWScore: 1, limits: { rates: false } });
    try {
      const id = encodeURIComponent(run.identity.id);
      const statuses = new Set<number>();
      for (let i = 0; i < 60; i++) statuses.add((await call(`${run.url}${PROVE}${id}`, { from: "127.0.0.2" })).status);
      expect([...statuses]).toEqual([200]);
    } finally {
      await run.close();
    }
  });

  const oneEach = { request: { perSecond: 1, burst: 1 }, nonce: { perSecond: 1, burst: 1 }, proof: { perSecond: 1, burst: 1 }, submit: { perSecond: 1, burst: 1 }, pow: { perSecond: 1, burst: 1 } };

  it("the bucket table is bounded: clients not seen lately are forgotten, at most 100 held, the latest 50 always kept", () => {
    const limiter = new RateLimiter(oneEach, 100, () => 0);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      limiter.take(`client-${i}`, "request");
      most = Math.max(most, limiter.size);
    }
    expect(most).toBe(100);
    for (let i = 9950; i < 10_000; i++) expect(limiter.take(`client-${i}`, "request")).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    // Long gone: a fresh bucket.
    expect(limiter.take("client-0", "request")).toEqual({ allowed: true });
  });

  it("a client that keeps coming is never forgotten while 100,000 others pass through a table of 100: its empty bucket stays empty", () => {
    const limiter = new RateLimiter(oneEach, 100, () => 0);
    expect(limiter.take("flooder", "request")).toEqual({ allowed: true });
    let refused = 0;
    for (let i = 0; i < 100_000; i++) {
      limiter.take(`passer-by-${i}`, "request");
      if (i % 40 === 0 && !limiter.take("flooder", "request").allowed) refused++;
    }
    expect(refused).toBe(100_000 / 40);
    expect(limiter.size).toBeLessThanOrEqual(100);
  });
});

describe("HTTP hygiene of the auth routes", () => {
  let run: Running;
  beforeAll(async () => {
    run = await startNode({ auth: true, minPoWScore: 1 });
  });
  afterAll(() => run.close());

  it("HEAD never issues a nonce: 405 with Allow", async () => {
    const head = await call(`${run.url}${PROVE}${encodeURIComponent(run.identity.id)}`, { method: "HEAD" });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe("GET, POST");
    expect(head.text).toBe("");
  });

  it("every auth answer, errors included, carries Cache-Control: no-store", async () => {
    const id = encodeURIComponent(run.identity.id);
    const answers = [
      await call(`${run.url}${PROVE}${id}`),
      await postJson(`${run.url}${PROVE}${id}`, { signedNonce: "ab".repeat(64) }),
      await postJson(`${run.url}${PROVE}${id}`, { signedNonce: "short" }),
      await call(`${run.url}${PROVE}did:iota:nobody`),
      await call(`${run.url}${PROVE}${id}`, { method: "HEAD" }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 400, 404, 405]);
    for (const a of answers) expect(a.headers["cache-control"]).toBe("no-store");
  });

  it("every 401 carries WWW-Authenticate", async () => {
    const answers = [
      await postJson(`${run.url}${PROVE}${encodeURIComponent(run.identity.id)}`, { signedNonce: "ab".repeat(64) }),
      await postJson(`${run.url}/api/v1/messages`, indexationJson("no jwt")),
      await postJson(`${run.url}/api/v1/messages`, indexationJson("bad jwt"), { headers: { authorization: "Bearer abc.def.ghi" } }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.headers["www-authenticate"]).toMatch(/^Bearer realm="chrysalis"/);
    }
  });
});
