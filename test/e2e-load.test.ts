// A bounded load test over real HTTP: 500 submissions with client-side PoW at a low score, 20 at a time, through one
// node. All are stored, ids are unique, none fails, and the tip set is consistent afterwards. Prints the throughput.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { createMiner, type Miner } from "../src/pow/index.js";
import { createClient } from "../src/client/index.js";
import { MemoryStore, NON_LAZY_POOL } from "../src/node/index.js";
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
    // Tip selection's pool: stored messages only, within its bound. The Tangle's childless messages are exactly the
    // stored messages no other names as a parent: what the next milestone must reach.
    const tips = run.node.parts.tips!.tips();
    expect(tips.length).toBeGreaterThan(0);
    expect(tips.length).toBeLessThanOrEqual(NON_LAZY_POOL.limit);
    for (const tip of tips) expect(await store.has(tip)).toBe(true);
    const parents = new Set<string>();
    for (const id of ids) for (const p of (await store.get(id))!.message.parents) parents.add(toHex(p));
    expect(run.node.parts.tangle.childless().map((m) => m.id).sort()).toEqual(ids.filter((id) => !parents.has(id)).sort());
    expect(run.node.stats()).toMatchObject({ accepted: TOTAL, rejected: 0 });
  });
});
