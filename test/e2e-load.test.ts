// A bounded load test over real HTTP: 500 submissions with client-side PoW at a low score, 20 at a time, through one
// node. All are stored, ids are unique, none fails, and the tip set is consistent afterwards. Prints the throughput.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { createMiner, type Miner } from "../src/pow/index.js";
import { createClient } from "../src/client/index.js";
import { MemoryStore, ZERO_MESSAGE_ID } from "../src/node/index.js";
import { indexationJson, startNode, type Running } from "./node-helpers.js";

const TOTAL = 500;
const CONCURRENCY = 20;

describe("load: 500 submissions with client-side PoW, 20 at a time", () => {
  let run: Running;
  let miner: Miner;
  beforeAll(async () => {
    // One client address sends all 500: the per-address rate limits would (rightly) refuse most of them.
    run = await startNode({ minPoWScore: 10, pow: false, limits: { rates: false } });
    miner = createMiner({ workers: 1 });
  });
  afterAll(async () => {
    await miner.close();
    await run.close();
  });

  it("all stored, ids unique, no error, tips consistent", async () => {
    const client = createClient(run.url, { miner });
    const ids: string[] = [];
    const errors: unknown[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TOTAL) {
          const i = next++;
          try {
            const format = i % 2 === 0 ? "raw" : "json";
            ids.push(await client.submitMessage(indexationJson(`load-${i}`, `message ${i}`), { localPow: true, format }));
          } catch (error) {
            errors.push(error);
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`load: ${TOTAL} submissions (client-side PoW at score 10, ${CONCURRENCY} concurrent) in ${seconds.toFixed(2)} s = ${(TOTAL / seconds).toFixed(0)} submissions/s`);
    expect(errors).toEqual([]);
    expect(ids).toHaveLength(TOTAL);
    expect(new Set(ids).size).toBe(TOTAL);
    const store = run.node.store as MemoryStore;
    expect(store.size).toBe(TOTAL);
    for (const id of ids) expect(await store.has(id)).toBe(true);
    // Tips: every tip is a stored message (or the unreferenced entry point), and no tip is a parent of a stored message.
    const tips = store.allTips();
    expect(tips.length).toBeGreaterThan(0);
    const parents = new Set<string>();
    for (const id of ids) for (const p of (await store.get(id))!.message.parents) parents.add(toHex(p));
    for (const tip of tips) {
      expect(tip === ZERO_MESSAGE_ID || (await store.has(tip))).toBe(true);
      expect(parents.has(tip)).toBe(false);
    }
    // And every stored message that no other message references is a tip (the bound of 1000 is not reached here).
    for (const id of ids) if (!parents.has(id)) expect(tips).toContain(id);
    expect(run.node.stats()).toMatchObject({ accepted: TOTAL, rejected: 0 });
  });
});
