// The upstream-forwarding store: a gateway node (fills, mines, checks locally) in front of a second instance of our
// own handler on 127.0.0.1 playing the upstream: raw bytes go to its POST /api/v1/messages, tips and info come from it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { messageId } from "../src/model/ids.js";
import { createClient } from "../src/client/index.js";
import { authHeaders } from "../src/auth/index.js";
import { createGatewayNode, createHandler, MemoryStore, serve, UpstreamStore, type ChrysalisNode, type RunningServer } from "../src/node/index.js";
import { indexationJson, postJson, startNode, type Running } from "./node-helpers.js";

describe("UpstreamStore forwards to an upstream node", () => {
  let upstream: Running;
  let gateway: ChrysalisNode;
  let gatewayServer: RunningServer;
  beforeAll(async () => {
    upstream = await startNode({ network: "chrysalis-upstream", minPoWScore: 30, pow: false });
    gateway = await createGatewayNode(upstream.url, { pow: { workers: 1 } });
    gatewayServer = await serve(createHandler(gateway), { onClose: () => gateway.close() });
  });
  afterAll(async () => {
    await gatewayServer.close();
    await upstream.close();
  });

  it("the gateway takes network and minimum score from the upstream's info", () => {
    expect(gateway.info.networkId).toBe("chrysalis-upstream");
    expect(gateway.info.minPoWScore).toBe(30);
  });

  it("a submission to the gateway is mined there and stored upstream (which refuses to mine itself)", async () => {
    const res = await postJson(`${gatewayServer.url}/api/v1/messages`, indexationJson("via gateway"));
    expect(res.status).toBe(201);
    const id = res.json.data.messageId as string;
    const upstreamStore = upstream.node.store as MemoryStore;
    expect(await upstreamStore.has(id)).toBe(true);
    expect(messageId((await upstreamStore.get(id))!.bytes)).toBe(id);
    // Reads through the gateway come from the upstream.
    const viaGateway = await createClient(gatewayServer.url).getMessageRaw(id);
    expect(messageId(viaGateway)).toBe(id);
  });

  it("the gateway's parents are the upstream's tips", async () => {
    // What the upstream hands out: its tips, or with none (no milestone yet) its entry points.
    const before = [...upstream.node.parts.tips!.tips(), ...upstream.node.store.entryPoints.keys()];
    const res = await postJson(`${gatewayServer.url}/api/v1/messages`, indexationJson("parents from upstream"));
    expect(res.status).toBe(201);
    const stored = await (upstream.node.store as MemoryStore).get(res.json.data.messageId);
    for (const p of stored!.message.parents) expect(before).toContain(toHex(p));
  });

  it("the upstream's refusal comes back with its status and message", async () => {
    const store = new UpstreamStore(upstream.url);
    const error = await store.put({ id: "00".repeat(32), bytes: new Uint8Array(60), message: { networkId: 0n, parents: [], nonce: 0n } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "UPSTREAM_FAILED", status: 400 });
    expect(await store.get("ab".repeat(32))).toBeUndefined();
    expect((await store.tips(8)).length).toBeGreaterThan(0);
  });

  it("an upstream that wants a JWT gets it from the store's headers; without it the gateway answers 502 (its own credentials), not 401", async () => {
    const guarded = await startNode({ auth: true, network: "chrysalis-guarded", minPoWScore: 10, pow: false });
    try {
      const jwt = await createClient(guarded.url).proveOwnership(guarded.identity.id, guarded.identity.secretKey);
      const withToken = await createGatewayNode(guarded.url, { pow: { workers: 1 }, headers: authHeaders(jwt) });
      const without = await createGatewayNode(guarded.url, { pow: { workers: 1 } });
      try {
        const ok = await withToken.submitMessage(indexationJson("with a token"));
        expect(await (guarded.node.store as MemoryStore).has(ok.messageId)).toBe(true);
        await expect(without.submitMessage(indexationJson("without a token"))).rejects.toMatchObject({ code: "UPSTREAM_FAILED", status: 502 });
      } finally {
        await withToken.close();
        await without.close();
      }
    } finally {
      await guarded.close();
    }
  });

  it("an upstream that does not answer is a 502", async () => {
    const dead = new UpstreamStore("http://127.0.0.1:9", { timeoutMs: 2000 });
    await expect(dead.tips(8)).rejects.toMatchObject({ code: "UPSTREAM_FAILED", status: 502 });
  });
});
