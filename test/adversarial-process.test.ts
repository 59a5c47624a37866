// Issue #11 with `chrysalis serve` as a child process and real signals: graceful shutdown answers every submission
// waiting for PoW (zero connection resets), SIGHUP re-reads the identities and refuses JWTs of removed identities,
// revocation through the library API, the access log (no secrets) and the metrics. PoW fairness runs in-process.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryIdentityRegistry, generateIdentityKeyPair, signNonce } from "../src/auth/index.js";
import { startNode as startSetup } from "../src/cli/setup.js";
import { PowQueue } from "../src/node/index.js";
import { agentFrom, bin, call, postJson, rawConnection, sleep, startServe } from "./adversarial-helpers.js";
import { indexationJson, startNode, until } from "./node-helpers.js";
import { tempDir as storeTempDir } from "./store-helpers.js";

const PROVE = "/authentication/prove-ownership/";
const SECRET = "a jwt secret of at least thirty-two bytes, for tests";

const dirs: { remove(): void }[] = [];
afterAll(() => dirs.forEach((d) => d.remove()));

function tempDir(): string {
  const dir = storeTempDir("adv");
  dirs.push(dir);
  return dir.path;
}

async function login(url: string, id: string, secretKey: string, from = "127.0.0.1"): Promise<string> {
  const got = await call(`${url}${PROVE}${encodeURIComponent(id)}`, { from });
  expect(got.status).toBe(200);
  const posted = await postJson(`${url}${PROVE}${encodeURIComponent(id)}`, { signedNonce: signNonce(got.json.nonce, secretKey) }, { from });
  expect(posted.status).toBe(200);
  return posted.json.jwt as string;
}

describe("graceful shutdown: SIGTERM answers every request, resets none, and exits 0", () => {
  it("32 submissions waiting for PoW from 8 addresses all get 503 with Retry-After after the grace; idle sockets close cleanly", async () => {
    const server = await startServe(["--min-pow-score", "1000000000", "--workers", "1", "--shutdown-grace", "1s", "--log-level", "warn", "--no-coordinator", "--no-mqtt"]);
    try {
      const idle = await rawConnection(server.port, "127.0.0.20");
      idle.socket.write("GET /api/v1/info HTTP/1.1\r\nhost: x\r\n\r\n");
      await until(() => idle.received().includes("\r\n\r\n"));
      const pending: Array<Promise<{ status: number; retryAfter: string | undefined; reason: string | undefined } | { error: string }>> = [];
      for (let a = 0; a < 8; a++) {
        for (let j = 0; j < 4; j++) {
          pending.push(
            postJson(`${server.url}/api/v1/messages`, indexationJson(`shutdown ${a}-${j}`), { from: `127.0.0.${2 + a}` }).then(
              (r) => ({ status: r.status, retryAfter: r.headers["retry-after"] as string | undefined, reason: r.json?.error?.reason as string | undefined }),
              (e: NodeJS.ErrnoException) => ({ error: e.code ?? e.message }),
            ),
          );
        }
      }
      // All 32 are in the node's PoW queue (32 = its bound) before the signal.
      await until(async () => /^chrysalis_pow_queue_depth 32$/m.test((await call(`${server.url}/metrics`)).text), 10_000);
      server.child.kill("SIGTERM");
      // A request arriving after the signal on a connection that was open is told to retry, not cut off.
      await sleep(200);
      const beforeLate = idle.received().length;
      idle.socket.write("GET /api/v1/info HTTP/1.1\r\nhost: x\r\n\r\n");
      const answers = await Promise.all(pending);
      const code = await server.exited;
      const statuses = answers.map((a) => ("status" in a ? a.status : a.error));
      console.log(`[figures] shutdown with 32 submissions waiting for PoW: ${JSON.stringify(statuses.reduce<Record<string, number>>((m, s) => ({ ...m, [String(s)]: (m[String(s)] ?? 0) + 1 }), {}))}, idle socket ${await idle.ended}, exit code ${code}`);
      expect(answers.filter((a) => "error" in a)).toEqual([]);
      for (const a of answers) expect(a).toMatchObject({ status: 503, reason: "SHUTTING_DOWN" });
      for (const a of answers) expect(Number((a as { retryAfter: string }).retryAfter)).toBeGreaterThanOrEqual(1);
      expect(await idle.ended).toBe("end");
      expect(idle.received().slice(beforeLate)).toMatch(/^HTTP\/1\.1 503 [^]*retry-after: 5\r\n[^]*connection: close/);
      expect(code).toBe(0);
    } finally {
      await server.kill();
    }
  });

  it("requests that finish within the grace get their real answer", async () => {
    const server = await startServe(["--min-pow-score", "2000", "--workers", "1", "--shutdown-grace", "10s", "--log-level", "warn", "--no-coordinator", "--no-mqtt"]);
    try {
      const pending = Array.from({ length: 8 }, (_, i) => postJson(`${server.url}/api/v1/messages`, indexationJson(`finish ${i}`), { from: `127.0.0.${2 + (i % 2)}` }).then((r) => r.status, (e: NodeJS.ErrnoException) => e.code ?? e.message));
      await until(async () => /^chrysalis_pow_queue_depth [1-8]$/m.test((await call(`${server.url}/metrics`)).text), 10_000);
      server.child.kill("SIGTERM");
      const statuses = await Promise.all(pending);
      // Mined within the grace: 201; any still waiting when it ended: 503 SHUTTING_DOWN. Never a reset.
      for (const s of statuses) expect([201, 503]).toContain(s);
      expect(statuses).toContain(201);
      expect(await server.exited).toBe(0);
    } finally {
      await server.kill();
    }
  });
});

describe("revocation: SIGHUP re-reads the identities; removed identities' JWTs are refused; JWTs revoked by id", () => {
  it("after SIGHUP without bob in the file, bob's JWT is refused and alice's works; a broken file changes nothing", async () => {
    const dir = tempDir();
    const alice = { id: "did:iota:alice", ...generateIdentityKeyPair() };
    const bob = { id: "did:iota:bob", ...generateIdentityKeyPair() };
    const ids = join(dir, "ids.json");
    writeFileSync(join(dir, "secret"), SECRET);
    writeFileSync(ids, JSON.stringify({ [alice.id]: Buffer.from(alice.publicKey).toString("hex"), [bob.id]: Buffer.from(bob.publicKey).toString("hex") }));
    const server = await startServe(["--min-pow-score", "1", "--workers", "1", "--jwt-secret-file", join(dir, "secret"), "--identities", ids]);
    try {
      const aliceJwt = await login(server.url, alice.id, alice.secretKey);
      const bobJwt = await login(server.url, bob.id, bob.secretKey);
      const submit = (jwt: string, text: string) => postJson(`${server.url}/api/v1/messages`, indexationJson(text), { headers: { authorization: `Bearer ${jwt}` } });
      expect((await submit(bobJwt, "bob before")).status).toBe(201);

      writeFileSync(ids, JSON.stringify({ [alice.id]: Buffer.from(alice.publicKey).toString("hex") }));
      server.child.kill("SIGHUP");
      await until(() => server.stdout().includes("identities reloaded"), 5000);
      const refused = await submit(bobJwt, "bob after");
      expect(refused.status).toBe(401);
      expect(refused.json.error.reason).toBe("TOKEN_SUBJECT_UNKNOWN");
      expect(refused.headers["www-authenticate"]).toMatch(/^Bearer /);
      expect((await call(`${server.url}${PROVE}${encodeURIComponent(bob.id)}`)).status).toBe(404);
      expect((await submit(aliceJwt, "alice after")).status).toBe(201);

      writeFileSync(ids, "{ not json");
      server.child.kill("SIGHUP");
      await until(() => server.stdout().includes("identities not reloaded"), 5000);
      expect((await submit(aliceJwt, "alice still")).status).toBe(201);
      expect(server.child.exitCode).toBe(null);
    } finally {
      await server.kill();
    }
  });

  it("a JWT revoked by its id through the library API is refused at once", async () => {
    const alice = { id: "did:iota:alice", ...generateIdentityKeyPair() };
    const setup = await startSetup({ host: "127.0.0.1", port: 0, network: "chrysalis-test", minPoWScore: 1, pow: { workers: 1 }, jwtSecret: SECRET, registry: new MemoryIdentityRegistry().add(alice.id, alice.publicKey) });
    try {
      const jwt = await login(setup.server.url, alice.id, alice.secretKey);
      const other = await login(setup.server.url, alice.id, alice.secretKey);
      const submit = (token: string, text: string) => postJson(`${setup.server.url}/api/v1/messages`, indexationJson(text), { headers: { authorization: `Bearer ${token}` } });
      expect((await submit(jwt, "before")).status).toBe(201);
      await setup.jwt!.revoke(jwt);
      const refused = await submit(jwt, "after");
      expect(refused.status).toBe(401);
      expect(refused.json.error.reason).toBe("TOKEN_REVOKED");
      expect((await submit(other, "the other token")).status).toBe(201);
    } finally {
      await setup.close();
    }
  });

  it("chrysalis auth revoke needs the store the node uses, and names what to give", async () => {
    const { spawnSync } = await import("node:child_process");
    const env = { ...process.env };
    delete env.CHRYSALIS_DATABASE_URL;
    const bare = spawnSync(process.execPath, [bin, "auth", "revoke", "some-jti"], { encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL", env });
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/--data-dir <dir> or --database/);
    const extra = spawnSync(process.execPath, [bin, "auth", "revoke"], { encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL", env });
    expect(extra.status).toBe(2);
    expect(extra.stderr).toMatch(/exactly one JWT or jti/);
  });

  it("--identities without a JWT key is a start-up error naming what is missing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "ids.json"), "{}");
    const { spawnSync } = await import("node:child_process");
    const env = { ...process.env };
    delete env.CHRYSALIS_JWT_SECRET;
    const r = spawnSync(process.execPath, [bin, "serve", "--port", "0", "--p2p-bind", "/ip4/127.0.0.1/tcp/0", "--identities", join(dir, "ids.json")], { encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL", env });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--identities needs a JWT key/);
  });
});

describe("an operator can see it: a JSON access log without secrets, and Prometheus metrics behind their own token", () => {
  it("one JSON line per request with method, route, status, duration and client; no token, signature, nonce or api key", async () => {
    const dir = tempDir();
    const alice = { id: "did:iota:alice", ...generateIdentityKeyPair() };
    writeFileSync(join(dir, "secret"), SECRET);
    writeFileSync(join(dir, "metrics-token"), "metrics-token-0123456789");
    writeFileSync(join(dir, "ids.json"), JSON.stringify({ [alice.id]: Buffer.from(alice.publicKey).toString("hex") }));
    const server = await startServe(["--min-pow-score", "1", "--workers", "1", "--jwt-secret-file", join(dir, "secret"), "--identities", join(dir, "ids.json"), "--metrics-token-file", join(dir, "metrics-token"), "--rate", "nonce=1/3", "--no-coordinator"]);
    try {
      const got = await call(`${server.url}${PROVE}${encodeURIComponent(alice.id)}?api-key=SECRET-API-KEY-123`);
      const signedNonce = signNonce(got.json.nonce, alice.secretKey);
      const jwt = (await postJson(`${server.url}${PROVE}${encodeURIComponent(alice.id)}?api-key=SECRET-API-KEY-123`, { signedNonce })).json.jwt as string;
      expect((await postJson(`${server.url}/api/v1/messages`, indexationJson("logged"), { headers: { authorization: `Bearer ${jwt}` } })).status).toBe(201);
      for (let i = 0; i < 4; i++) await call(`${server.url}${PROVE}${encodeURIComponent(alice.id)}`, { from: "127.0.0.3" });
      expect((await call(`${server.url}/no/such/route`)).status).toBe(404);

      const open = await call(`${server.url}/metrics`);
      expect(open.status).toBe(401);
      expect(open.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
      const metrics = await call(`${server.url}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } });
      expect(metrics.status).toBe(200);
      for (const name of [
        'chrysalis_http_requests_total{route="prove-ownership",method="POST",status="200"} 1',
        "chrysalis_http_request_duration_seconds_bucket",
        'chrysalis_logins_total{result="success"} 1',
        'chrysalis_rate_limited_total{class="nonce"}',
        "chrysalis_pow_queue_depth 0",
        "chrysalis_pow_hash_rate",
        "chrysalis_pow_hashes_total",
        "chrysalis_messages_accepted_total 1",
        'chrysalis_store_operation_seconds_count{operation="accept"} 1',
        "chrysalis_process_resident_memory_bytes",
      ]) {
        expect(metrics.text).toContain(name);
      }

      await until(() => server.stdout().includes('"path":"/no/such/route"'), 5000);
      const lines = server.stdout().trim().split("\n");
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(records[0]!.msg).toMatch(/^chrysalis node listening on http:\/\/127\.0\.0\.1:\d+ /);
      const requests = records.filter((r) => r.msg === "request");
      expect(requests.find((r) => r.route === "prove-ownership" && r.method === "POST")).toMatchObject({ status: 200, client: "127.0.0.1", path: `${PROVE}${encodeURIComponent(alice.id)}` });
      expect(requests.find((r) => r.route === "messages")).toMatchObject({ method: "POST", status: 201 });
      expect(requests.filter((r) => r.status === 429 && r.client === "127.0.0.3").length).toBeGreaterThan(0);
      for (const r of requests) expect(typeof r.ms).toBe("number");
      const all = server.stdout() + server.stderr();
      for (const secret of [jwt, jwt.split(".")[2]!, signedNonce, got.json.nonce as string, "SECRET-API-KEY-123", "metrics-token-0123456789", SECRET]) {
        expect(all).not.toContain(secret);
      }
    } finally {
      await server.kill();
    }
  });
});

describe("PoW fairness: requesters are served round-robin with a bound each", () => {
  it("the queue interleaves requesters, bounds each, and says when to retry", async () => {
    const started: string[] = [];
    const running: Array<() => void> = [];
    const queue = new PowQueue({
      maxPending: 8,
      maxPerRequester: 3,
      run: (bytes) =>
        new Promise<bigint>((resolve) => {
          started.push(new TextDecoder().decode(bytes));
          running.push(() => resolve(1n));
        }),
    });
    const mined: Array<Promise<bigint>> = [];
    const submit = (who: string, n: number): Promise<bigint> => queue.mine(`${who}${n}`, new TextEncoder().encode(`${who}${n}`), who, undefined);
    for (let i = 0; i < 3; i++) mined.push(submit("hog", i));
    const refused = await submit("hog", 3).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "POW_QUEUE_FULL", status: 503 });
    expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(1);
    mined.push(submit("alice", 0), submit("bob", 0), submit("alice", 1));
    for (let step = 0; step < 6; step++) {
      await until(() => running.length > 0, 1000);
      running.shift()!();
      await sleep(0);
    }
    await Promise.all(mined);
    // hog0 was mining before the others came; then nobody waits behind the hog twice in a row.
    expect(started).toEqual(["hog0", "hog1", "alice0", "bob0", "hog2", "alice1"]);
  });

  it("a queue full of a few requesters' jobs makes room for a new requester by pushing back the heaviest's newest", async () => {
    const queue = new PowQueue({ maxPending: 32, maxPerRequester: 4, run: (_bytes, signal) => new Promise<bigint>((_, reject) => signal.addEventListener("abort", () => reject(new DOMException("stopped", "AbortError")))) });
    const submit = (who: string, n: number): Promise<bigint> => queue.mine(`${who}/${n}`, new TextEncoder().encode(`${who}/${n}`), who, undefined);
    const outcome = (p: Promise<bigint>): Promise<string> => p.then(() => "mined", (e: { code?: string }) => e.code ?? "other");
    // Eight requesters at their own bound fill all 32 slots.
    const flood = Array.from({ length: 8 }, (_, r) => Array.from({ length: 4 }, (_, n) => outcome(submit(`r${r}`, n))));
    expect(queue.stats().pending).toBe(32);
    // A ninth, with nothing in flight, is served: one of the eight loses its newest queued job, with a 503 to retry.
    const victim = submit("victim", 0);
    expect(queue.stats()).toMatchObject({ pending: 32, requesters: 9 });
    const pushedBack = flood.flat();
    await sleep(0);
    const settled = await Promise.race([Promise.all(pushedBack.map((p) => Promise.race([p, sleep(50).then(() => "waiting")]))), sleep(1000)]);
    expect((settled as string[]).filter((o) => o === "POW_QUEUE_FULL")).toHaveLength(1);
    queue.close(new Error("closed"));
    expect(await outcome(victim)).toBe("other");

    // With every requester at an equal share, nobody is pushed back for anyone: a full queue refuses.
    const even = new PowQueue({ maxPending: 4, maxPerRequester: 4, run: (_bytes, signal) => new Promise<bigint>((_, reject) => signal.addEventListener("abort", () => reject(new DOMException("stopped", "AbortError")))) });
    const evenly = ["a", "b", "c", "d"].map((who) => outcome(even.mine(who, new TextEncoder().encode(who), who, undefined)));
    expect(await outcome(even.mine("a2", new TextEncoder().encode("a2"), "a", undefined))).toBe("POW_QUEUE_FULL");
    expect(await outcome(even.mine("e", new TextEncoder().encode("e"), "e", undefined))).toBe("POW_QUEUE_FULL");
    expect(even.stats()).toMatchObject({ pending: 4, requesters: 4 });
    even.close(new Error("closed"));
    expect(await Promise.all(evenly)).toEqual(["other", "other", "other", "other"]);
  });

  it("over HTTP: one address's flood is bounded (503 + Retry-After) and a victim's job overtakes the flood's later jobs", async () => {
    const run = await startNode({ minPoWScore: 4000, pow: { workers: 1, maxPerRequester: 4 }, limits: { rates: false } });
    try {
      const order: string[] = [];
      const hog = Array.from({ length: 6 }, (_, i) =>
        postJson(`${run.url}/api/v1/messages`, indexationJson(`hog ${i}`), { from: "127.0.0.2" }).then((r) => {
          if (r.status === 201) order.push(`hog${i}`);
          return r;
        }),
      );
      await until(() => run.node.stats().powActive >= 4, 5000);
      const finishedBefore = order.length;
      const victim = postJson(`${run.url}/api/v1/messages`, indexationJson("victim"), { from: "127.0.0.1" }).then((r) => {
        order.push("victim");
        return r;
      });
      const answers = await Promise.all(hog);
      expect((await victim).status).toBe(201);
      const refused = answers.filter((a) => a.status === 503);
      expect(refused).toHaveLength(2);
      for (const a of refused) {
        expect(a.json.error.reason).toBe("POW_QUEUE_FULL");
        expect(Number(a.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      }
      // Of the flood's jobs still queued when the victim came, at most the one mining (and, should it finish while the
      // victim's request is on its way, the next) finish before it; the flood's later jobs finish after it.
      expect(order.indexOf("victim")).toBeLessThanOrEqual(finishedBefore + 2);
      expect(order.indexOf("victim")).toBeLessThan(order.length - 1);
    } finally {
      await run.close();
    }
  });
});
