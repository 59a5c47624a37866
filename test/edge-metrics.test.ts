// The store latency histogram wraps a store in a proxy: every method is timed, and the store behaves as itself (its
// getters and private state work through the wrapper).
import { describe, expect, it } from "vitest";
import { createMetrics, MemoryStore, ZERO_MESSAGE_ID } from "../src/node/index.js";

describe("instrumentStore times the store's calls and keeps the store whole", () => {
  it("getters over private state, methods and their results pass through; each call is counted by operation", async () => {
    const metrics = createMetrics();
    const store = metrics.instrumentStore(new MemoryStore());
    expect(store.size).toBe(0);
    expect(store.allTips()).toEqual([ZERO_MESSAGE_ID]);
    await store.open({ network: "chrysalis-metrics" });
    expect(await store.tips(8)).toEqual([ZERO_MESSAGE_ID]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/chrysalis_store_operation_seconds_count\{operation="tips"\} 1/);
    expect(text).toMatch(/chrysalis_store_operation_seconds_count\{operation="open"\} 1/);
  });
});
