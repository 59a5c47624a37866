// Issue #11 over real loopback: connection caps per address and in total, slow heads and bodies cut off with 408,
// oversized heads 431 and bodies 413, idle keep-alive connections kept, and the memory of a server holding 5,000 idle
// connections (measured in a child process through its own /metrics). Bounded in count and time.
import { describe, expect, it } from "vitest";
import type { Socket } from "node:net";
import { call, rawConnection, sleep, startServe } from "./adversarial-helpers.js";
import { startNode } from "./node-helpers.js";

const INFO = "GET /api/v1/info HTTP/1.1\r\nhost: x\r\n\r\n";

describe("connections are capped per client address and in total", () => {
  it("the 9th connection of one address gets 503 and is closed; other addresses are served", async () => {
    const run = await startNode({ limits: { maxConnectionsPerAddress: 8 } });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 8; i++) sockets.push((await rawConnection(run.server.port, "127.0.0.2")).socket);
      const ninth = await rawConnection(run.server.port, "127.0.0.2");
      sockets.push(ninth.socket);
      expect(await ninth.ended).toBe("end");
      expect(ninth.received()).toMatch(/^HTTP\/1\.1 503 /);
      expect(ninth.received()).toContain("TOO_MANY_CONNECTIONS");
      expect((await call(`${run.url}/api/v1/info`, { from: "127.0.0.1" })).status).toBe(200);
      // A held connection is still usable.
      const first = sockets[0]!;
      const answer = new Promise<string>((resolve) => first.once("data", (d: Buffer) => resolve(d.toString())));
      first.write(INFO);
      expect(await answer).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const s of sockets) s.destroy();
      await run.close();
    }
  });

  it("past the total cap every address is refused until connections close", async () => {
    const run = await startNode({ limits: { maxConnections: 12, maxConnectionsPerAddress: 64 } });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 12; i++) sockets.push((await rawConnection(run.server.port, `127.0.0.${10 + (i % 4)}`)).socket);
      const refused = await rawConnection(run.server.port, "127.0.0.1");
      expect(await refused.ended).toBe("end");
      expect(refused.received()).toMatch(/^HTTP\/1\.1 503 /);
      for (const s of sockets.splice(0, 4)) s.destroy();
      await sleep(100);
      expect((await call(`${run.url}/api/v1/info`, { from: "127.0.0.1" })).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await run.close();
    }
  });
});

describe("slow requests are cut off with 408; large heads get 431, large bodies 413", () => {
  it("a head sent a byte at a time is answered 408 at the header deadline, long before the client is done", async () => {
    const run = await startNode({ limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000 } });
    try {
      const { socket, received, ended } = await rawConnection(run.server.port, "127.0.0.2");
      const head = "GET /api/v1/info HTTP/1.1\r\nhost: x\r\nx-slow: " + "a".repeat(60) + "\r\n\r\n";
      let sent = 0;
      // At 5 bytes a second this head would take 16 s.
      for (; sent < head.length && socket.writable && !received(); sent++) {
        socket.write(head[sent]!);
        await sleep(200);
      }
      expect(await ended).toBe("end");
      expect(received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(sent).toBeLessThan(head.length / 2);
    } finally {
      await run.close();
    }
  });

  it("a body sent a byte at a time is answered 408 at the request deadline", async () => {
    const run = await startNode({ limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, rates: false } });
    try {
      const { socket, received, ended } = await rawConnection(run.server.port, "127.0.0.2");
      socket.write("POST /api/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n");
      let sent = 0;
      for (; sent < 200 && socket.writable && !received(); sent++) {
        socket.write(" ");
        await sleep(100);
      }
      expect(await ended).toBe("end");
      expect(received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(sent).toBeLessThan(100);
    } finally {
      await run.close();
    }
  });

  it("a head over 16 KiB gets 431; a JSON body over the limit gets 413", async () => {
    const run = await startNode({ limits: { maxJsonBytes: 4096, rates: false } });
    try {
      const big = await call(`${run.url}/api/v1/info`, { headers: { "x-big": "a".repeat(17 * 1024) } });
      expect(big.status).toBe(431);
      expect(big.json.error.reason).toBe("HEADERS_TOO_LARGE");
      const body = await call(`${run.url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ payload: { type: 2, index: "00", data: "00".repeat(4096) } }) });
      expect(body.status).toBe(413);
    } finally {
      await run.close();
    }
  });

  it("an idle keep-alive connection outlives the header deadline and stays open at least 60 s", async () => {
    const run = await startNode({ limits: { headersTimeoutMs: 1000, requestTimeoutMs: 1000 } });
    try {
      expect(run.server.server.keepAliveTimeout).toBeGreaterThanOrEqual(60_000);
      const { socket, received, ended } = await rawConnection(run.server.port, "127.0.0.2");
      socket.write(INFO);
      await sleep(200);
      expect(received()).toMatch(/^HTTP\/1\.1 200 /);
      // Idle three header deadlines long (a client mining locally), then a second request on the same socket.
      await sleep(3000);
      const before = received().length;
      socket.write(INFO);
      await sleep(300);
      expect(received().slice(before)).toMatch(/^HTTP\/1\.1 200 /);
      socket.destroy();
      await ended;
    } finally {
      await run.close();
    }
  });
});

describe("memory stays bounded with 5,000 idle connections", () => {
  it("a serve process holds 5,000 idle keep-alive connections from 100 addresses and still answers", async () => {
    const server = await startServe(["--no-pow", "--log-level", "warn", "--max-connections", "6000"]);
    const sockets: Socket[] = [];
    try {
      const memory = async (): Promise<{ rss: number; heap: number }> => {
        const text = (await call(`${server.url}/metrics`)).text;
        const read = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN);
        return { rss: read("chrysalis_process_resident_memory_bytes"), heap: read("chrysalis_nodejs_heap_size_used_bytes") };
      };
      const before = await memory();
      for (let i = 0; i < 5000; i++) {
        const { socket } = await rawConnection(server.port, `127.0.1.${1 + (i % 100)}`);
        // One request each, so every connection is a real keep-alive connection with its parser, then idle.
        socket.write(INFO);
        sockets.push(socket);
      }
      await sleep(1000);
      const after = await memory();
      const perConnection = (after.rss - before.rss) / 5000;
      console.log(`[figures] 5,000 idle connections: RSS ${(before.rss / 2 ** 20).toFixed(1)} → ${(after.rss / 2 ** 20).toFixed(1)} MiB (${(perConnection / 1024).toFixed(1)} KiB each), heap used ${(before.heap / 2 ** 20).toFixed(1)} → ${(after.heap / 2 ** 20).toFixed(1)} MiB`);
      const open = Number(/^chrysalis_connections_open (\S+)/m.exec((await call(`${server.url}/metrics`)).text)?.[1]);
      expect(open).toBeGreaterThanOrEqual(5000);
      expect(after.rss - before.rss).toBeLessThan(250 * 2 ** 20);
      expect((await call(`${server.url}/api/v1/info`, { from: "127.0.0.1" })).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await server.kill();
    }
  });
});
