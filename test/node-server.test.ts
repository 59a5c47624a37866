// The node:http adapter on its own: requests become web Requests and answers go back whole, malformed HTTP gets a
// 400 without reaching the handler, HEAD has no body, and a client that goes away aborts the Request's signal.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { serve } from "../src/node/index.js";
import { NodeRequest } from "../src/node/node-request.js";
import type { IncomingMessage } from "node:http";
import { until } from "./node-helpers.js";

function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    let answer = "";
    socket.on("data", (d) => (answer += d.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.setTimeout(5000, () => socket.destroy(new Error("timeout")));
  });
}

describe("a server request reads one header as Headers.get does, without building the Headers", () => {
  it("any case of the name, copies joined with a comma, absent as null, before and after the Headers exist", () => {
    const rawHeaders = ["Host", "x", "Content-Type", "application/json", "X-Dup", "1", "x-dup", "2", "Content-Length", "17", "AUTHORIZATION", "Bearer a.b.c"];
    const request = new NodeRequest({ method: "POST", url: "/p?q=1", rawHeaders } as unknown as IncomingMessage, "http://x");
    const names = ["content-type", "Content-Type", "CONTENT-LENGTH", "x-dup", "X-DUP", "authorization", "missing", "x-du"];
    const cheap = names.map((n) => request.header(n));
    expect(cheap).toEqual(["application/json", "application/json", "17", "1, 2", "1, 2", "Bearer a.b.c", null, null]);
    expect(names.map((n) => request.headers.get(n))).toEqual(cheap);
    // Once the Headers exist, they answer.
    expect(names.map((n) => request.header(n))).toEqual(cheap);
  });
});

describe("requests and answers cross the adapter intact", () => {
  it("method, path, query, headers and body arrive; status, headers and body return", async () => {
    const server = await serve(async (request) => {
      const body = new Uint8Array(await request.arrayBuffer());
      const url = new URL(request.url);
      return new Response(JSON.stringify({ method: request.method, path: url.pathname, q: url.searchParams.get("q"), h: request.headers.get("x-test"), n: body.length }), {
        status: 207,
        headers: { "x-answer": "yes", "content-type": "application/json" },
      });
    });
    try {
      const res = await fetch(`${server.url}/some/path?q=1`, { method: "PUT", headers: { "x-test": "hello" }, body: new Uint8Array(1000) });
      expect(res.status).toBe(207);
      expect(res.headers.get("x-answer")).toBe("yes");
      expect(await res.json()).toEqual({ method: "PUT", path: "/some/path", q: "1", h: "hello", n: 1000 });
      const head = await fetch(`${server.url}/x`, { method: "HEAD" });
      expect(head.status).toBe(207);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("malformed HTTP is answered 400 by the adapter, the handler never sees it", async () => {
    let calls = 0;
    const server = await serve(async () => {
      calls++;
      return new Response("ok");
    });
    try {
      const answer = await rawExchange(server.port, "NOT HTTP AT ALL\r\n\r\n");
      expect(answer.startsWith("HTTP/1.1 400")).toBe(true);
      expect(calls).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("a handler that throws becomes a 500 with the error body, and the server keeps serving", async () => {
    const server = await serve(async (request) => {
      if (new URL(request.url).pathname === "/boom") throw new Error("a bug");
      return new Response("fine");
    });
    try {
      const res = await fetch(`${server.url}/boom`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: { code: "500", message: "internal error", reason: "INTERNAL" } });
      expect(await (await fetch(`${server.url}/ok`)).text()).toBe("fine");
    } finally {
      await server.close();
    }
  });

  it("a client going away before the answer aborts the Request's signal", async () => {
    let aborted = false;
    let started = false;
    const server = await serve(
      (request) =>
        new Promise<Response>((resolve) => {
          started = true;
          request.signal.addEventListener("abort", () => {
            aborted = true;
            resolve(new Response("late"));
          });
        }),
    );
    try {
      const controller = new AbortController();
      const pending = fetch(`${server.url}/wait`, { signal: controller.signal }).catch((e: unknown) => e);
      await until(() => started);
      controller.abort();
      await pending;
      await until(() => aborted);
      expect(aborted).toBe(true);
    } finally {
      await server.close();
    }
  });
});
