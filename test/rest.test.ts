// The REST API v1 as Hornet answers it (NODE-API.md §1), over real HTTP on loopback: statuses and shapes the client tests
// do not reach (bad parameters, empty answers, content types, raw auto-fill), a gateway's forwarded reads, keep-alive.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatBytes } from "../src/bytes/bytes.js";
import { toHex } from "../src/bytes/hex.js";
import { bech32Address } from "../src/crypto/address.js";
import { decodeMessage, encodePayload } from "../src/model/codec.js";
import { messageId, networkId, outputId } from "../src/model/ids.js";
import { GENESIS_TRANSACTION_ID } from "../src/cli/serve.js";
import { createGatewayNode, createHandler, serve, UpstreamStore } from "../src/node/index.js";
import { NETWORK, startFullNode, within } from "./clients-helpers.js";
import { call, postJson, wallet } from "./node-helpers.js";

describe("REST API v1: what a Hornet client sees besides the happy paths", () => {
  const owner = wallet();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  let api: string;
  beforeAll(async () => {
    run = await startFullNode({ genesisAddress: owner.address, coordinator: { intervalMs: 300 } });
    api = `${run.url}/api/v1`;
    await within(5000, (async () => {
      while ((await call(`${run.url}/health`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
    })(), "healthy");
  });
  afterAll(() => run.close());

  it("/health answers 200 with an empty body; /api/routes lists the v1 group", async () => {
    const health = await call(`${run.url}/health`);
    expect(health.status).toBe(200);
    expect(health.bytes.length).toBe(0);
    expect((await call(`${run.url}/api/routes`)).json).toEqual({ data: { routes: ["v1"] } });
  });

  it("POST /messages: application/json with parameters is JSON; no content type is raw; raw bodies are filled like JSON", async () => {
    const json = await call(`${api}/messages`, { method: "POST", headers: { "content-type": "application/json; charset=utf-8" }, body: JSON.stringify({ payload: { type: 2, index: "6a736f6e", data: "" } }) });
    expect(json.status).toBe(201);
    // networkId 0, no parents, nonce 0, a payload: the bytes a client leaves for the node to fill.
    const payload = encodePayload({ type: 2, index: new TextEncoder().encode("raw fill"), data: new Uint8Array(0) });
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, payload.length, true);
    const bare = concatBytes([new Uint8Array(8), Uint8Array.of(0), length, payload, new Uint8Array(8)]);
    const raw = await call(`${api}/messages`, { method: "POST", body: bare as Uint8Array<ArrayBuffer> });
    expect(raw.status).toBe(201);
    const id = raw.json.data.messageId as string;
    expect(raw.headers.get("location")).toBe(id);
    const stored = decodeMessage((await call(`${api}/messages/${id}/raw`)).bytes);
    expect(stored.networkId).toBe(networkId(NETWORK));
    expect(stored.parents.length).toBeGreaterThanOrEqual(1);
    expect(stored.payload).toEqual({ type: 2, index: new TextEncoder().encode("raw fill"), data: new Uint8Array(0) });
    // A nonce without a networkId cannot have been mined for this network.
    const mined = concatBytes([bare.subarray(0, bare.length - 8), Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]);
    const refused = await call(`${api}/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: mined as Uint8Array<ArrayBuffer> });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: "400", reason: "NONCE_WITHOUT_NETWORK_ID" });
    // A JSON body sent as text is read as bytes and does not decode: 400, as Hornet.
    expect((await call(`${api}/messages`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })).status).toBe(400);
  });

  it("messages?index= echoes the index as given; a missing, empty or non-hex index is 400; an unknown message has no children", async () => {
    await postJson(`${api}/messages`, { payload: { type: 2, index: "abcd", data: "" } });
    const found = await call(`${api}/messages?index=ABCD`);
    expect(found.json.data).toMatchObject({ index: "ABCD", maxResults: 1000, count: 1 });
    for (const q of ["", "?index=", "?index=xyz"]) expect((await call(`${api}/messages${q}`)).status).toBe(400);
    const unknown = "12".repeat(32);
    expect((await call(`${api}/messages/${unknown}/children`)).json).toEqual({ data: { messageId: unknown, maxResults: 1000, count: 0, childrenMessageIds: [] } });
    expect((await call(`${api}/messages/${unknown}/metadata`)).status).toBe(404);
    expect((await call(`${api}/messages/not-hex/metadata`)).status).toBe(400);
  });

  it("milestones: a non-decimal index is 400, an unknown one 404; utxo-changes the same", async () => {
    expect((await call(`${api}/milestones/1`)).json.data).toMatchObject({ index: 1 });
    expect((await call(`${api}/milestones/1/utxo-changes`)).json.data).toEqual({ index: 1, createdOutputs: [], consumedOutputs: [] });
    for (const bad of ["abc", "-1", "4294967296"]) expect((await call(`${api}/milestones/${bad}`)).status).toBe(400);
    expect((await call(`${api}/milestones/4000000000`)).status).toBe(404);
    expect((await call(`${api}/milestones/4000000000/utxo-changes`)).status).toBe(404);
  });

  it("outputs and addresses: ids and addresses are checked (400), unknown outputs are 404, type must be 0 or 1", async () => {
    const genesis = outputId(GENESIS_TRANSACTION_ID, 0);
    const out = await call(`${api}/outputs/${genesis.toUpperCase()}`);
    expect(out.json.data).toMatchObject({ messageId: "0".repeat(64), transactionId: GENESIS_TRANSACTION_ID, outputIndex: 0, isSpent: false, output: { type: 0, address: { type: 0, address: toHex(owner.address) } } });
    expect(out.json.data.ledgerIndex).toBeGreaterThanOrEqual(1);
    expect((await call(`${api}/outputs/${"ab".repeat(34)}`)).status).toBe(404);
    expect((await call(`${api}/outputs/abcd`)).status).toBe(400);
    const bech32 = bech32Address("atoi", owner.address);
    expect((await call(`${api}/addresses/${bech32}`)).json.data).toMatchObject({ addressType: 0, address: toHex(owner.address), dustAllowed: false });
    expect((await call(`${api}/addresses/${bech32Address("iota", owner.address)}`)).status).toBe(400);
    expect((await call(`${api}/addresses/ed25519/zz`)).status).toBe(400);
    expect((await call(`${api}/addresses/${bech32}/outputs?type=2`)).status).toBe(400);
    expect((await call(`${api}/addresses/${bech32}/outputs?type=1`)).json.data).toMatchObject({ count: 0, outputIds: [] });
    expect((await call(`${api}/addresses/ed25519/${toHex(owner.address)}/outputs?include-spent=t`)).json.data.outputIds).toEqual([genesis]);
    expect((await call(`${api}/transactions/${"cd".repeat(32)}/included-message`)).status).toBe(404);
    expect((await call(`${api}/transactions/${GENESIS_TRANSACTION_ID}/included-message`)).status).toBe(404);
  });

  it("tips: up to 4, sorted; an unknown method is 405 with Allow", async () => {
    const tips = (await call(`${api}/tips?spammerTips=true`)).json.data.tipMessageIds as string[];
    expect(tips.length).toBeLessThanOrEqual(4);
    expect([...tips].sort()).toEqual(tips);
    const res = await call(`${api}/tips`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
  });
});

describe("a node without milestones is not healthy (Hornet's rule)", () => {
  it("/health is 503 with an empty body, /info says isHealthy false and index 0", async () => {
    const run = await startFullNode({ coordinator: false, mqtt: false });
    try {
      const health = await call(`${run.url}/health`);
      expect(health.status).toBe(503);
      expect(health.bytes.length).toBe(0);
      expect((await call(`${run.url}/api/v1/info`)).json.data).toMatchObject({ isHealthy: false, latestMilestoneIndex: 0, confirmedMilestoneIndex: 0, latestMilestoneTimestamp: 0 });
    } finally {
      await run.close();
    }
  });
});

describe("a gateway forwards the reads it cannot answer to its upstream", () => {
  it("health, milestones, addresses and metadata come from the upstream; /info is the upstream's with the gateway's name", async () => {
    const owner = wallet();
    const upstream = await startFullNode({ genesisAddress: owner.address, coordinator: { intervalMs: 300 } });
    const gatewayNode = await createGatewayNode(upstream.url, { pow: { workers: 1 }, name: "my-gateway" });
    const store = gatewayNode.store as UpstreamStore;
    const gateway = await serve(createHandler(gatewayNode, { forward: (r) => store.forward(r) }), { host: "127.0.0.1", port: 0, onClose: () => gatewayNode.close() });
    try {
      await within(5000, (async () => {
        while ((await call(`${gateway.url}/health`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
      })(), "upstream healthy through the gateway");
      const info = (await call(`${gateway.url}/api/v1/info`)).json.data;
      expect(info).toMatchObject({ name: "my-gateway", networkId: NETWORK, isHealthy: true });
      expect(info.latestMilestoneIndex).toBeGreaterThanOrEqual(1);
      for (const path of ["/api/v1/milestones/1", `/api/v1/addresses/ed25519/${toHex(owner.address)}`, `/api/v1/outputs/${outputId(GENESIS_TRANSACTION_ID, 0)}`, "/api/v1/treasury"]) {
        const [a, b] = await Promise.all([call(`${gateway.url}${path}`), call(`${upstream.url}${path}`)]);
        expect(a.status).toBe(200);
        expect(a.json).toEqual(b.json);
      }
      const posted = await postJson(`${gateway.url}/api/v1/messages`, { payload: { type: 2, index: "6777", data: "" } });
      expect(posted.status).toBe(201);
      const metadata = await call(`${gateway.url}/api/v1/messages/${posted.json.data.messageId}/metadata`);
      expect(metadata.json.data).toMatchObject({ messageId: posted.json.data.messageId, isSolid: true });
      expect(messageId((await call(`${gateway.url}/api/v1/messages/${posted.json.data.messageId}/raw`)).bytes)).toBe(posted.json.data.messageId);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});

describe("keep-alive for clients that mine locally", () => {
  it("the server advertises a 65 s idle timeout and serves a second request on a connection left idle past Node's 5 s default", async () => {
    const run = await startFullNode({ coordinator: false, mqtt: false });
    const socket = connect(Number(new URL(run.url).port), "127.0.0.1");
    try {
      // Answers are told apart by their status lines; each is complete once its JSON body (or chunked end) arrived.
      let received = "";
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      const statusLines = (): string[] => received.match(/HTTP\/1\.1 \d{3}[^\r]*\r\n/g) ?? [];
      const ask = async (n: number): Promise<void> => {
        socket.write(`GET /api/v1/info HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
        await within(5000, (async () => {
          while (statusLines().length < n || !(received.endsWith("}") || received.endsWith("0\r\n\r\n"))) await new Promise((r) => setTimeout(r, 10));
        })(), `answer ${n}`);
      };
      await within(5000, new Promise<void>((resolve) => socket.once("connect", () => resolve())), "connect");
      await ask(1);
      expect(received).toMatch(/keep-alive: timeout=65/i);
      await new Promise((r) => setTimeout(r, 6000));
      expect(socket.destroyed).toBe(false);
      await ask(2);
      expect(statusLines()).toEqual(["HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\n"]);
    } finally {
      socket.destroy();
      await run.close();
    }
  }, 20_000);
});


