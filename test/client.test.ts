// The client: built on an injectable fetch, sends the JWT in both headers, accepts JSON, models and bytes, mines
// locally when asked, and turns every failure into a ClientError (status, code, reason, path) — never anything else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage } from "../src/model/codec.js";
import { messageId, networkId } from "../src/model/ids.js";
import { powScore } from "../src/pow/index.js";
import { ClientError, createClient } from "../src/client/index.js";
import { MemoryStore } from "../src/node/index.js";
import { indexationJson, startNode, type Running } from "./node-helpers.js";

describe("the client sends what the server expects", () => {
  it("the JWT goes in Authorization and Authentication; the fetch is injectable", async () => {
    const seen: { url: string; headers: Headers }[] = [];
    const fakeNetwork: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), headers: new Headers(init?.headers) });
      return new Response(JSON.stringify({ data: { tipMessageIds: ["ab".repeat(32)] } }), { status: 200, headers: { "content-type": "application/json" } });
    };
    const client = createClient("http://node.example:14265/", { fetch: fakeNetwork, jwt: "a.b.c" });
    expect(await client.getTips()).toEqual(["ab".repeat(32)]);
    expect(seen[0]!.url).toBe("http://node.example:14265/api/v1/tips");
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer a.b.c");
    expect(seen[0]!.headers.get("authentication")).toBe("Bearer a.b.c");
  });

  it("a network failure is a ClientError with status 0 and code NETWORK_ERROR", async () => {
    const client = createClient("http://127.0.0.1:9");
    const error = await client.getInfo().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ status: 0, code: "NETWORK_ERROR" });
  });

  it("an answer that is not the API's shape is a ClientError BAD_RESPONSE", async () => {
    const client = createClient("http://x.example", { fetch: async () => new Response("<html>", { status: 200 }) });
    await expect(client.getTips()).rejects.toMatchObject({ name: "ClientError", code: "BAD_RESPONSE" });
    const client2 = createClient("http://x.example", { fetch: async () => new Response("oops", { status: 502 }) });
    await expect(client2.getInfo()).rejects.toMatchObject({ status: 502, code: "502" });
  });

  it("bad arguments are refused before any request, as ClientErrors (which are ProtocolErrors)", async () => {
    const client = createClient("http://x.example", { fetch: async () => new Response("{}") });
    await expect(client.getMessage("not-an-id")).rejects.toMatchObject({ code: "INVALID_HEX", path: "messageId" });
    expect(() => createClient("not a url")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });
});

describe("submitMessage takes JSON, models and bytes, with node-side or local PoW", () => {
  let run: Running;
  beforeAll(async () => {
    run = await startNode({ network: "chrysalis-client", minPoWScore: 20, pow: { workers: 1 } });
  });
  afterAll(() => run.close());

  it("partial JSON and a partial model are completed by the node", async () => {
    const client = createClient(run.url);
    const a = await client.submitMessage(indexationJson("json"));
    const b = await client.submitMessage({ payload: { type: 2, index: new Uint8Array([7]), data: new Uint8Array([8]) } });
    const message = await client.getMessage(b);
    expect(message.payload).toEqual({ type: 2, index: new Uint8Array([7]), data: new Uint8Array([8]) });
    expect(await (run.node.store as MemoryStore).has(a)).toBe(true);
  });

  it("localPow reads info and tips, mines at the node's score and posts raw bytes or JSON; the node mines nothing", async () => {
    const client = createClient(run.url);
    const jobsBefore = run.node.stats().powJobs;
    const raw = await client.submitMessage(indexationJson("local raw"), { localPow: true });
    const json = await client.submitMessage(indexationJson("local json"), { localPow: true, format: "json" });
    expect(run.node.stats().powJobs).toBe(jobsBefore);
    for (const id of [raw, json]) {
      const bytes = await client.getMessageRaw(id);
      expect(messageId(bytes)).toBe(id);
      expect(powScore(bytes)).toBeGreaterThanOrEqual(20);
      expect(decodeMessage(bytes).networkId).toBe(networkId("chrysalis-client"));
    }
  });

  it("local PoW reuses the node's info, and reads it again when the node refuses the PoW it was mined for", async () => {
    const strict = await startNode({ minPoWScore: 500, pow: false });
    try {
      let infoReads = 0;
      // The first info answer is stale: it claims a minimum score of 1.
      const stale: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (!String(input).endsWith("/api/v1/info")) return response;
        const body = (await response.json()) as { data: { minPoWScore: number } };
        if (infoReads++ === 0) body.data.minPoWScore = 1;
        return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
      };
      const client = createClient(strict.url, { fetch: stale, powWorkers: 1 });
      const id = await client.submitMessage(indexationJson("stale info"), { localPow: true });
      expect(infoReads).toBe(2);
      expect(powScore(await client.getMessageRaw(id))).toBeGreaterThanOrEqual(500);
      await client.submitMessage(indexationJson("cached info"), { localPow: true });
      expect(infoReads).toBe(2);
    } finally {
      await strict.close();
    }
  });

  it("an aborted local PoW rejects with AbortError and posts nothing", async () => {
    const slow = await startNode({ minPoWScore: 1e15, pow: false });
    try {
      const client = createClient(slow.url, { powWorkers: 1 });
      const controller = new AbortController();
      const pending = client.submitMessage(indexationJson("never"), { localPow: true, signal: controller.signal });
      setTimeout(() => controller.abort(), 200);
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
      expect((slow.node.store as MemoryStore).size).toBe(0);
    } finally {
      await slow.close();
    }
  });
});
