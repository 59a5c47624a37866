// The store latency histogram wraps a store in a proxy: every method is timed, and the store behaves as itself (its
// getters and private state work through the wrapper).
import { describe, expect, it } from "vitest";
import { createMetrics, MemoryStore, ZERO_MESSAGE_ID } from "../src/node/index.js";

describe("instrumentStore times the store's calls and keeps the store whole", () => {
  it("getters over private state, methods and their results pass through; each call is counted by operation", async () => {
    const metrics = createMetrics();
    const store = metrics.instrumentStore(new MemoryStore());
    expect(store.size).toBe(0);
    expect(store.entryPoints.get(ZERO_MESSAGE_ID)).toBe(0);
    await store.open({ network: "chrysalis-metrics" });
    expect(await store.put({ id: ZERO_MESSAGE_ID.replace(/^0/, "1"), bytes: new Uint8Array(0), message: { networkId: 1n, parents: [new Uint8Array(32)], nonce: 0n } })).toBe(true);
    expect(store.ids()).toEqual([ZERO_MESSAGE_ID.replace(/^0/, "1")]);
    expect(await store.unreferenced(8)).toEqual(store.ids());
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/chrysalis_store_operation_seconds_count\{operation="unreferenced"\} 1/);
    expect(text).toMatch(/chrysalis_store_operation_seconds_count\{operation="open"\} 1/);
  });
});

describe("the per-request series are written out as prom-client writes its own metrics", () => {
  it("requests, latency and logins: the same exposition as prom-client's Counter and Histogram fed the same answers", async () => {
    const { Counter, Histogram, Registry } = await import("prom-client");
    const metrics = createMetrics();
    const reference = new Registry();
    const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
    const requests = new Counter({ name: "chrysalis_http_requests_total", help: "x", labelNames: ["route", "method", "status"], registers: [reference] });
    const latency = new Histogram({ name: "chrysalis_http_request_duration_seconds", help: "x", labelNames: ["route", "method"], buckets, registers: [reference] });
    const logins = new Counter({ name: "chrysalis_logins_total", help: "x", labelNames: ["result"], registers: [reference] });
    const answers: [string, string, number, number][] = [
      ["message-raw", "GET", 200, 0.0004],
      ["message-raw", "GET", 200, 0.0005],
      ["message-raw", "GET", 404, 0.02],
      ["prove-ownership", "POST", 200, 0.003],
      ["prove-ownership", "POST", 401, 31],
      ["-", "PATCH", 404, 1],
    ];
    for (const [route, method, status, seconds] of answers) {
      metrics.request(method, route, status, seconds);
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
      if (route === "prove-ownership" && method === "POST") logins.inc({ result: status === 200 ? "success" : "failure" });
    }
    const ours = (await metrics.registry.metrics()).split("\n");
    const theirs = (await reference.metrics()).split("\n").filter((line) => !line.startsWith("#"));
    expect(theirs.length).toBeGreaterThan(40);
    for (const line of theirs) if (line !== "") expect(ours).toContain(line);
    // And nothing more of those metrics than prom-client writes.
    const named = (lines: string[]) => lines.filter((l) => /^chrysalis_(http_request|logins)/.test(l)).sort();
    expect(named(ours)).toEqual(named(theirs));
  });
});
