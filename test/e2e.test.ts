// End to end over real HTTP on 127.0.0.1 (ephemeral ports): the node API v1 and prove-ownership routes served by
// node:http from the web handlers, called with fetch and with the client. Each rule of the interface has a describe.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { encodeMessage, decodeMessage } from "../src/model/codec.js";
import { messageId, networkId } from "../src/model/ids.js";
import { messageToJson } from "../src/model/json.js";
import { authHeaders, signNonce } from "../src/auth/index.js";
import { createMiner, mineNonce, powScore } from "../src/pow/index.js";
import { createClient, ClientError } from "../src/client/index.js";
import { MemoryStore } from "../src/node/index.js";
import { call, indexationJson, postJson, startNode, until, type Running } from "./node-helpers.js";

const MESSAGES = "/api/v1/messages";

async function jwtFor(run: Running): Promise<string> {
  const client = createClient(run.url);
  return client.proveOwnership(run.identity.id, run.identity.secretKey);
}

describe("the whole flow: prove ownership, submit without networkId/parents/nonce, read back", () => {
  let run: Running;
  beforeAll(async () => {
    run = await startNode({ auth: true, minPoWScore: 100 });
  });
  afterAll(() => run.close());

  it("GET prove-ownership answers a 40-hex nonce; POST with the signed nonce answers a JWT", async () => {
    const got = await call(`${run.url}/authentication/prove-ownership/${encodeURIComponent(run.identity.id)}`);
    expect(got.status).toBe(200);
    expect(got.json.nonce).toMatch(/^[0-9a-f]{40}$/);
    expect(got.json.data.nonce).toBe(got.json.nonce);
    const signedNonce = signNonce(got.json.nonce, run.identity.secretKey);
    const posted = await postJson(`${run.url}/authentication/prove-ownership/${encodeURIComponent(run.identity.id)}`, { signedNonce });
    expect(posted.status).toBe(200);
    expect(posted.json.jwt.split(".")).toHaveLength(3);
    expect(posted.json.data.jwt).toBe(posted.json.jwt);
    expect((await run.jwt!.verify(posted.json.jwt)).sub).toBe(run.identity.id);
  });

  it("a bare indexation message gets the node's networkId, parents from the tips and a nonce reaching the score; 201 with Location", async () => {
    const jwt = await jwtFor(run);
    const tipsBefore = (await call(`${run.url}/api/v1/tips`)).json.data.tipMessageIds as string[];
    const res = await postJson(`${run.url}${MESSAGES}`, indexationJson("e2e", "whole flow"), authHeaders(jwt));
    expect(res.status).toBe(201);
    const id = res.json.data.messageId as string;
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(res.headers.get("location")).toBe(id);

    const raw = await call(`${run.url}${MESSAGES}/${id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("application/octet-stream");
    expect(messageId(raw.bytes)).toBe(id);
    expect(powScore(raw.bytes)).toBeGreaterThanOrEqual(100);
    const message = decodeMessage(raw.bytes);
    expect(message.networkId).toBe(networkId("chrysalis-test"));
    for (const p of message.parents) expect(tipsBefore).toContain(toHex(p));

    const json = await call(`${run.url}${MESSAGES}/${id.toUpperCase()}`);
    expect(json.status).toBe(200);
    expect(json.json.data).toEqual(messageToJson(message));

    const tips = (await call(`${run.url}/api/v1/tips`)).json.data.tipMessageIds as string[];
    expect(tips).toContain(id);
    for (const p of message.parents) expect(tips).not.toContain(toHex(p));

    const byIndex = await call(`${run.url}${MESSAGES}?index=${toHex(new TextEncoder().encode("e2e"))}`);
    expect(byIndex.status).toBe(200);
    expect(byIndex.json.data).toMatchObject({ index: "653265", count: 1, messageIds: [id] });
    expect((await call(`${run.url}${MESSAGES}?index=${"00".repeat(65)}`)).json.error).toMatchObject({ code: "400", path: "index" });
  });

  it("the client does the same: proveOwnership keeps the JWT, submitMessage, getMessage, getInfo", async () => {
    const client = createClient(run.url);
    await client.proveOwnership(run.identity.id, run.identity.secretKey);
    expect(client.jwt).toBeDefined();
    const id = await client.submitMessage(indexationJson("client", "hello"));
    const message = await client.getMessage(id);
    expect(messageId(encodeMessage(message))).toBe(id);
    const info = await client.getInfo();
    // No coordinator runs here, so there is no milestone: unhealthy by Hornet's rule.
    expect(info).toMatchObject({ networkId: "chrysalis-test", bech32HRP: "atoi", minPoWScore: 100, isHealthy: false, latestMilestoneIndex: 0 });
  });

  it("raw bytes (application/octet-stream) mined by the submitter are accepted as they are, in one piece or streamed a byte a chunk", async () => {
    const jwt = await jwtFor(run);
    const oneByteChunks = (bytes: Uint8Array): ReadableStream<Uint8Array> =>
      new ReadableStream({
        start(controller) {
          for (const b of bytes) controller.enqueue(Uint8Array.of(b));
          controller.close();
        },
      });
    for (const [label, body] of [["whole", (b: Uint8Array) => b as Uint8Array<ArrayBuffer>], ["streamed", oneByteChunks]] as const) {
      const tips = (await call(`${run.url}/api/v1/tips`)).json.data.tipMessageIds as string[];
      const parents = tips.map((t) => Uint8Array.from(Buffer.from(t, "hex"))).sort(Buffer.compare);
      const bytes = encodeMessage({ networkId: networkId("chrysalis-test"), parents, payload: { type: 2, index: new TextEncoder().encode(`raw ${label}`), data: new Uint8Array(3) }, nonce: 0n });
      const nonce = await mineNonce(bytes, { minScore: 100, workers: 1 });
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - 8, nonce, true);
      const res = await call(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/octet-stream", ...authHeaders(jwt) }, body: body(bytes), duplex: "half" } as RequestInit);
      expect(res.status, `${label}: ${JSON.stringify(res.json)}`).toBe(201);
      expect(res.json.data.messageId).toBe(messageId(bytes));
    }
  });
});

describe("error answers: status and {error:{code,message}} body", () => {
  let run: Running;
  let jwt: string;
  beforeAll(async () => {
    run = await startNode({ auth: true, minPoWScore: 100 });
    jwt = await jwtFor(run);
  });
  afterAll(() => run.close());

  const expectError = (res: { status: number; json: any }, status: number, reason?: string, path?: string): void => {
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(String(status));
    expect(typeof res.json.error.message).toBe("string");
    expect(res.json.error.message.length).toBeGreaterThan(0);
    if (reason !== undefined) expect(res.json.error.reason).toBe(reason);
    if (path !== undefined) expect(res.json.error.path).toBe(path);
  };

  it("400 malformed JSON", async () => {
    expectError(await postJson(`${run.url}${MESSAGES}`, "{\"payload\": ", authHeaders(jwt)), 400, "INVALID_JSON");
  });

  it("400 names the field path of a bad field", async () => {
    const body = { parentMessageIds: ["zz".repeat(32)], ...indexationJson("x") };
    const res = await postJson(`${run.url}${MESSAGES}`, body, authHeaders(jwt));
    expectError(res, 400, "INVALID_HEX", "parentMessageIds[0]");
    const res2 = await postJson(`${run.url}${MESSAGES}`, { payload: { type: 2, index: "", data: "" } }, authHeaders(jwt));
    expect(res2.status).toBe(400);
    expect(res2.json.error.path).toBe("payload.index");
  });

  it("400 wrong network id", async () => {
    const body = { networkId: networkId("chrysalis-mainnet").toString(), ...indexationJson("x") };
    expectError(await postJson(`${run.url}${MESSAGES}`, body, authHeaders(jwt)), 400, "WRONG_NETWORK_ID", "networkId");
  });

  it("400 a nonce without a networkId", async () => {
    expectError(await postJson(`${run.url}${MESSAGES}`, { nonce: "12345", ...indexationJson("x") }, authHeaders(jwt)), 400, "NONCE_WITHOUT_NETWORK_ID", "networkId");
  });

  it("400 too little PoW, and nothing is stored", async () => {
    const tips = (await call(`${run.url}/api/v1/tips`)).json.data.tipMessageIds as string[];
    const parents = tips.map((t) => Uint8Array.from(Buffer.from(t, "hex"))).sort(Buffer.compare);
    // Nonce 1 with a score of 100 000 000 required on a fresh node would be a miracle; use this node's 100 and pick a failing nonce.
    const base = { networkId: networkId("chrysalis-test"), parents, payload: { type: 2 as const, index: new TextEncoder().encode("weak"), data: new Uint8Array(0) }, nonce: 0n };
    let bytes = encodeMessage(base);
    for (let n = 1n; ; n++) {
      bytes = encodeMessage({ ...base, nonce: n });
      if (powScore(bytes) < 100) break;
    }
    const before = (run.node.store as MemoryStore).size;
    const res = await call(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/octet-stream", ...authHeaders(jwt) }, body: bytes as Uint8Array<ArrayBuffer> });
    expectError(res, 400, "INSUFFICIENT_POW", "nonce");
    expect((run.node.store as MemoryStore).size).toBe(before);
    expect((await call(`${run.url}${MESSAGES}/${messageId(bytes)}`)).status).toBe(404);
    const asJson = await postJson(`${run.url}${MESSAGES}`, messageToJson(decodeMessage(bytes)), authHeaders(jwt));
    expectError(asJson, 400, "INSUFFICIENT_POW", "nonce");
  });

  it("401 without a JWT, with a bad one, and with WWW-Authenticate", async () => {
    const none = await postJson(`${run.url}${MESSAGES}`, indexationJson("x"));
    expectError(none, 401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const forged = jwt.slice(0, -4) + (jwt.endsWith("AAAA") ? "BBBB" : "AAAA");
    expectError(await postJson(`${run.url}${MESSAGES}`, indexationJson("x"), { authorization: `Bearer ${forged}` }), 401);
    // The interface document's header name works too.
    const viaAuthentication = await postJson(`${run.url}${MESSAGES}`, indexationJson("authentication header"), { authentication: `Bearer ${jwt}` });
    expect(viaAuthentication.status).toBe(201);
  });

  it("401 for an expired JWT", async () => {
    const token = await jwtFor(run);
    run.clock.now += 3_600_000;
    try {
      expectError(await postJson(`${run.url}${MESSAGES}`, indexationJson("late"), authHeaders(token)), 401, "TOKEN_EXPIRED");
    } finally {
      run.clock.now -= 3_600_000;
    }
  });

  it("401 for a replayed signed nonce", async () => {
    const path = `${run.url}/authentication/prove-ownership/${encodeURIComponent(run.identity.id)}`;
    const { json } = await call(path);
    const signedNonce = signNonce(json.nonce, run.identity.secretKey);
    expect((await postJson(path, { signedNonce })).status).toBe(200);
    const replay = await postJson(path, { signedNonce });
    expectError(replay, 401);
    expect(replay.json.error.message).not.toContain(run.identity.secretKey);
  });

  it("404 for an unknown message id and an unknown route; 400 for a malformed id", async () => {
    expectError(await call(`${run.url}${MESSAGES}/${"ab".repeat(32)}`), 404, "NOT_FOUND");
    expectError(await call(`${run.url}${MESSAGES}/${"ab".repeat(32)}/raw`), 404, "NOT_FOUND");
    expectError(await call(`${run.url}/api/v2/nothing`), 404);
    expectError(await call(`${run.url}${MESSAGES}/xyz`), 400, "INVALID_HEX", "messageId");
  });

  it("405 for a method a route does not take, with Allow", async () => {
    const res = await call(`${run.url}/api/v1/info`, { method: "DELETE" });
    expectError(res, 405);
    expect(res.headers.get("allow")).toBe("GET");
  });

  it("413 for a raw message over 32 KiB and a JSON body over the limit", async () => {
    const big = new Uint8Array(32 * 1024 + 1);
    expectError(await call(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/octet-stream", ...authHeaders(jwt) }, body: big }), 413, "BODY_TOO_LARGE");
    const hugeJson = JSON.stringify({ payload: { type: 2, index: "00", data: "00".repeat(200 * 1024) } });
    expectError(await postJson(`${run.url}${MESSAGES}`, hugeJson, authHeaders(jwt)), 413, "BODY_TOO_LARGE");
    // Without Content-Length (a stream), the limit is enforced while reading.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new Uint8Array(1024));
        controller.close();
      },
    });
    const streamed = await call(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/octet-stream", ...authHeaders(jwt) }, body: stream, duplex: "half" } as RequestInit);
    expectError(streamed, 413, "BODY_TOO_LARGE");
  });

  it("a body of any other content type is read as the raw message, as Hornet reads it (so text is a 400, not a 415)", async () => {
    expectError(await call(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "text/plain", ...authHeaders(jwt) }, body: "hello" }), 400, "LENGTH_OUT_OF_RANGE");
  });

  it("404 for a nonce or a proof of an identity the registry does not know, and no-store on both", async () => {
    const got = await call(`${run.url}/authentication/prove-ownership/someone-unknown`);
    expectError(got, 404, "UNKNOWN_IDENTITY");
    expect(got.headers.get("cache-control")).toBe("no-store");
    const posted = await postJson(`${run.url}/authentication/prove-ownership/someone-unknown`, { signedNonce: "ab".repeat(64) });
    expectError(posted, 404, "UNKNOWN_IDENTITY");
    expect(posted.headers.get("cache-control")).toBe("no-store");
  });

  it("the client turns each error into a ClientError with status, code, reason and path", async () => {
    const client = createClient(run.url, { jwt });
    const error = await client.submitMessage({ networkId: "1", ...indexationJson("x") }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ status: 400, code: "400", reason: "WRONG_NETWORK_ID", path: "networkId" });
    const missing = await client.getMessage("cd".repeat(32)).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: "404" });
  });
});

describe("503 when the node cannot fill a field or is busy; 400 when its PoW is disabled (Hornet)", () => {
  it("no tips: 503 naming parentMessageIds; PoW disabled: 400 naming parentMessageIds; nothing stored", async () => {
    const run = await startNode({ store: new MemoryStore({ entryPoints: [] }) });
    try {
      const res = await postJson(`${run.url}${MESSAGES}`, indexationJson("x"));
      expect(res.status).toBe(503);
      expect(res.json.error).toMatchObject({ code: "503", reason: "CANNOT_FILL", path: "parentMessageIds" });
    } finally {
      await run.close();
    }
    const noPow = await startNode({ pow: false });
    try {
      const res = await postJson(`${noPow.url}${MESSAGES}`, indexationJson("x"));
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "400", reason: "POW_DISABLED", path: "parentMessageIds" });
      expect((noPow.node.store as MemoryStore).size).toBe(0);
    } finally {
      await noPow.close();
    }
  });

  it("a full PoW queue answers 503 with a clear message", async () => {
    const run = await startNode({ minPoWScore: 1e15, pow: { maxPending: 1, workers: 1 } });
    const controller = new AbortController();
    try {
      const first = fetch(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(indexationJson("slow")), signal: controller.signal }).catch((e: unknown) => e);
      await until(() => run.node.stats().powActive === 1);
      const second = await postJson(`${run.url}${MESSAGES}`, indexationJson("another"));
      expect(second.status).toBe(503);
      expect(second.json.error).toMatchObject({ code: "503", reason: "POW_QUEUE_FULL" });
      expect(second.json.error.message).toMatch(/busy/);
      // Work that needs no mining is not held up by the job: reads are answered while it is still mining.
      expect((await call(`${run.url}/api/v1/tips`)).status).toBe(200);
      expect((await call(`${run.url}/api/v1/info`)).status).toBe(200);
      expect(run.node.stats().powActive).toBe(1);
      controller.abort();
      await first;
      await until(() => run.node.stats().powActive === 0);
    } finally {
      await run.close();
    }
  });
});

describe("a client that disconnects mid-PoW cancels the job", () => {
  it("aborting the fetch aborts the miner job and stores nothing", async () => {
    const miner = createMiner({ workers: 1 });
    const run = await startNode({ minPoWScore: 1e15, pow: { miner } });
    try {
      const controller = new AbortController();
      const pending = fetch(`${run.url}${MESSAGES}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(indexationJson("abandoned")), signal: controller.signal }).catch((e: unknown) => e);
      await until(() => run.node.stats().powActive === 1);
      const tipsBefore = run.node.parts.tips!.tips();
      controller.abort();
      expect(((await pending) as Error).name).toBe("AbortError");
      await until(() => run.node.stats().powActive === 0);
      // The miner itself stopped working on it: no job running, none queued.
      await until(() => !miner.busy && miner.queueLength === 0);
      expect(run.node.stats()).toMatchObject({ powJobs: 1, powCancelled: 1, accepted: 0 });
      expect((run.node.store as MemoryStore).size).toBe(0);
      expect(run.node.parts.tips!.tips()).toEqual(tipsBefore);
    } finally {
      await run.close();
      await miner.close();
    }
  });
});

describe("identical in-flight work is mined once", () => {
  it("two concurrent submissions of the same message share one PoW job", async () => {
    const run = await startNode({ minPoWScore: 2000, pow: { workers: 1 } });
    try {
      const body = { parentMessageIds: ["00".repeat(32)], ...indexationJson("twice", "same bytes") };
      const [a, b] = await Promise.all([postJson(`${run.url}${MESSAGES}`, body), postJson(`${run.url}${MESSAGES}`, body)]);
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(a.json.data.messageId).toBe(b.json.data.messageId);
      expect(run.node.stats()).toMatchObject({ powJobs: 1, powShared: 1, accepted: 1 });
    } finally {
      await run.close();
    }
  });
});

describe("graceful shutdown", () => {
  it("close() lets an in-flight request finish, then refuses connections", async () => {
    const run = await startNode({ minPoWScore: 1000, pow: { workers: 1 } });
    const pending = postJson(`${run.url}${MESSAGES}`, indexationJson("in flight", "finishes during close"));
    await until(() => run.server.inFlight() === 1);
    const closing = run.close();
    const res = await pending;
    expect(res.status).toBe(201);
    await closing;
    await expect(fetch(`${run.url}/api/v1/info`)).rejects.toThrow();
    // onClose closed the node (and its miner): it takes nothing more.
    await expect(run.node.submitMessage(indexationJson("after close"))).rejects.toMatchObject({ code: "SHUTTING_DOWN", status: 503 });
  });
});

describe("CORS for browser clients, when configured", () => {
  it("preflights answer 204 with the route's methods; every answer, errors included, carries the allowed origin", async () => {
    const run = await startNode({ handler: { cors: "*" }, pow: false });
    try {
      const preflight = await call(`${run.url}${MESSAGES}`, { method: "OPTIONS", headers: { origin: "https://wallet.example", "access-control-request-method": "POST" } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
      expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
      const info = await call(`${run.url}/api/v1/info`, { headers: { origin: "https://wallet.example" } });
      expect(info.headers.get("access-control-allow-origin")).toBe("*");
      const missing = await call(`${run.url}${MESSAGES}/${"00".repeat(32)}`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("access-control-allow-origin")).toBe("*");
    } finally {
      await run.close();
    }
    const plain = await startNode({ pow: false });
    try {
      const res = await call(`${plain.url}/api/v1/info`);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect((await call(`${plain.url}/api/v1/info`, { method: "OPTIONS" })).status).toBe(405);
    } finally {
      await plain.close();
    }
  });
});
