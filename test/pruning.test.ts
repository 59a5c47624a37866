// The pruning part over the memory store, with milestones issued as fast as the coordinator can: the pruning index
// follows latest − keep after each milestone, pruned messages and milestones answer 404 with the stable code while
// recent ones stay whole, the ledger stays exact, the metrics count what was pruned, and a keep below the max-depth
// rule is refused.
import { describe, expect, it } from "vitest";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { outputId, transactionId } from "../src/model/ids.js";
import { payloadToJson } from "../src/model/json.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import { createCoordinator, createHandler, createMetrics, createNode, createPruner, MemoryStore, MIN_PRUNE_KEEP, pruneKeepProblem, type NodeStore, type PruneStep } from "../src/node/index.js";
import { genesisLedger, GENESIS_TX, indexationJson, until, wallet } from "./node-helpers.js";

const KEEP = MIN_PRUNE_KEEP;
const seed = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(32));

/** The node's own store with some of its methods answered otherwise (every other call goes to the store itself). */
function storeWith(store: NodeStore, overrides: Partial<NodeStore>): NodeStore {
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof NodeStore];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("the pruner", () => {
  it("keeps latest − keep after each milestone; pruned messages and milestones 404, recent ones and the ledger stay", async () => {
    const owner = wallet();
    const other = wallet();
    const node = createNode({ network: "chrysalis-prune", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore(), ledger: genesisLedger(owner) });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const metrics = createMetrics();
    const steps: PruneStep[] = [];
    const pruner = createPruner(node.store, {
      keep: KEEP,
      batch: 2,
      events: node,
      onStep: (step) => {
        steps.push(step);
        metrics.pruned(step);
      },
      onError: (error) => {
        throw error;
      },
    });
    metrics.watchStore(node.store);
    const handler = createHandler(node);
    const get = async (path: string): Promise<{ status: number; json: any }> => {
      const response = await handler(new Request(`http://node${path}`));
      const text = await response.text();
      return { status: response.status, json: text === "" ? undefined : JSON.parse(text) };
    };
    pruner.start();
    try {
      await coordinator.issue();
      // Early: a spend from genesis (its output is consumed, then pruned with its milestone) and some messages.
      const payload = buildTransactionPayload({
        inputs: [{ transactionId: GENESIS_TX, transactionOutputIndex: 0, seed: owner.seed }],
        outputs: [
          { type: 0, address: { type: 0, address: other.address }, amount: 1_000_000 },
          { type: 0, address: { type: 0, address: owner.address }, amount: TOTAL_SUPPLY - 1_000_000 },
        ],
      });
      const { messageId: spend } = await node.submitMessage({ payload: payloadToJson(payload) });
      const early: string[] = [spend];
      for (let i = 0; i < 3; i++) early.push((await node.submitMessage(indexationJson(`early ${i}`))).messageId);
      await coordinator.issue();
      const total = KEEP + 12;
      let recent = "";
      for (let index = 3; index <= total; index++) {
        recent = (await node.submitMessage(indexationJson(`message before milestone ${index}`))).messageId;
        await coordinator.issue();
        // The pruner follows each milestone: after a pass settles, the index is latest − keep (0 until then).
        await pruner.runOnce();
        expect(await node.store.pruningIndex()).toBe(Math.max(0, index - KEEP));
      }
      const latest = (await node.store.latestMilestone())!.index;
      expect(latest).toBe(total);
      const pruningIndex = latest - KEEP;
      expect((await node.nodeInfo()).pruningIndex).toBe(pruningIndex);
      // Batches of 2: pruning went in several steps.
      expect(steps.filter((s) => s.messages > 0).length).toBeGreaterThan(1);
      expect(steps.every((s) => s.messages <= 2)).toBe(true);

      for (const id of early) {
        for (const view of ["", "/metadata", "/raw"]) {
          const r = await get(`/api/v1/messages/${id}${view}`);
          expect(r.status, `${id}${view}`).toBe(404);
          expect(r.json.error).toMatchObject({ code: "404", reason: "NOT_FOUND" });
        }
      }
      for (const path of [`/api/v1/milestones/1`, `/api/v1/milestones/${pruningIndex}`, `/api/v1/milestones/${pruningIndex}/utxo-changes`]) {
        const r = await get(path);
        expect(r.status, path).toBe(404);
        expect(r.json.error).toMatchObject({ code: "404", reason: "NOT_FOUND" });
      }
      expect((await get(`/api/v1/milestones/${pruningIndex + 1}`)).status).toBe(200);
      expect((await get(`/api/v1/messages/${recent}/metadata`)).json.data.referencedByMilestoneIndex).toBe(latest);
      expect((await node.getMessage(recent))?.id).toBe(recent);

      // The ledger is never pruned: the spend's outputs stay, balances are exact, the spent genesis output is gone.
      const txId = transactionId(payload);
      const created = await Promise.all([0, 1].map(async (i) => (await node.store.output(outputId(txId, i)))?.output.amount));
      expect(created.sort()).toEqual([1_000_000, TOTAL_SUPPLY - 1_000_000].sort());
      expect((await node.store.addressBalance(other.address)).balance).toBe(1_000_000);
      expect((await node.store.addressBalance(owner.address)).balance).toBe(TOTAL_SUPPLY - 1_000_000);
      expect(await node.store.output(outputId(GENESIS_TX, 0))).toBeUndefined();
      // A new message still attaches at the boundary and the next milestone confirms it.
      const after = (await node.submitMessage(indexationJson("after pruning"))).messageId;
      await coordinator.issue();
      await pruner.runOnce();
      expect((await node.getMetadata(after))?.referencedByMilestoneIndex).toBe(latest + 1);
      expect(await node.store.pruningIndex()).toBe(pruningIndex + 1);

      const text = (await metrics.render()).body;
      const pruned = steps.reduce((sum, s) => sum + s.messages, 0);
      expect(pruned).toBeGreaterThanOrEqual(early.length + pruningIndex);
      expect(text).toContain(`chrysalis_messages_pruned_total ${pruned}`);
      expect(text).toContain(`chrysalis_pruning_index ${pruningIndex + 1}`);
      expect(text).toMatch(/chrysalis_store_bytes \d+/);
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("a pass runs after each milestone event without runOnce, and stop() waits for the step in flight", async () => {
    const node = createNode({ network: "chrysalis-prune-events", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const pruner = createPruner(node.store, { keep: KEEP, events: node });
    pruner.start();
    try {
      for (let i = 0; i < KEEP + 5; i++) {
        await node.submitMessage(indexationJson(`m${i}`));
        await coordinator.issue();
      }
      await until(async () => (await node.store.pruningIndex()) === 5);
      await pruner.stop();

      // A slow store: stop() returns only once the step in flight is done, and no step starts after it.
      for (let i = 0; i < 5; i++) {
        await node.submitMessage(indexationJson(`later ${i}`));
        await coordinator.issue();
      }
      let calls = 0;
      let inFlight = 0;
      const store = node.store;
      const slow = storeWith(store, {
        async prune(target: number, batch: number) {
          calls++;
          inFlight++;
          await new Promise((r) => setTimeout(r, 30));
          try {
            return await store.prune(target, batch);
          } finally {
            inFlight--;
          }
        },
      });
      const slowPruner = createPruner(slow, { keep: KEEP, batch: 1 });
      const pass = slowPruner.runOnce();
      await until(() => calls > 0);
      await slowPruner.stop();
      expect(inFlight).toBe(0);
      const made = calls;
      await pass;
      await new Promise((r) => setTimeout(r, 100));
      expect(calls).toBe(made);
      expect(await node.store.pruningIndex()).toBeLessThan(10);
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("without an event stream (a node following another instance's milestones) it looks every second", async () => {
    const node = createNode({ network: "chrysalis-prune-timer", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const pruner = createPruner(node.store, { keep: KEEP });
    try {
      for (let i = 0; i < KEEP + 2; i++) await coordinator.issue();
      pruner.start();
      await until(async () => (await node.store.pruningIndex()) === 2);
      for (let i = 0; i < 3; i++) await coordinator.issue();
      await until(async () => (await node.store.pruningIndex()) === 5, 3000);
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("above the size target it prunes 10% of the kept milestones per pass, never keeping fewer than the minimum", async () => {
    const node = createNode({ network: "chrysalis-prune-size", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    // keep 0: nothing by depth; a 1-byte target: always above it.
    const pruner = createPruner(node.store, { keep: 0, sizeTarget: 1 });
    try {
      for (let i = 0; i < 40; i++) {
        await node.submitMessage(indexationJson(`m${i}`));
        await coordinator.issue();
      }
      expect((await pruner.runOnce()).pruningIndex).toBe(4);
      expect((await pruner.runOnce()).pruningIndex).toBe(8);
      for (let i = 0; i < 10; i++) await pruner.runOnce();
      expect(await node.store.pruningIndex()).toBe(40 - MIN_PRUNE_KEEP);
      expect(await node.store.milestone(40 - MIN_PRUNE_KEEP + 1)).toBeDefined();
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("a store whose size stays put when rows are deleted (PostgreSQL's relation sizes) is pruned for size once, and again only once it has grown", async () => {
    const node = createNode({ network: "chrysalis-prune-flat", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    let size = 1000;
    // The node's own store, answering bytes() as a database whose freed space is kept for reuse would.
    const flat = storeWith(node.store, { bytes: async () => size });
    const pruner = createPruner(flat, { keep: 0, sizeTarget: 500 });
    try {
      for (let i = 0; i < 60; i++) await coordinator.issue();
      expect((await pruner.runOnce()).pruningIndex).toBe(6);
      for (let i = 0; i < 5; i++) expect((await pruner.runOnce()).pruningIndex).toBe(6);
      size = 1005; // within 1%: the same size
      expect((await pruner.runOnce()).pruningIndex).toBe(6);
      size = 1100; // grown: pruned again
      expect((await pruner.runOnce()).pruningIndex).toBe(12);
      size = 400; // below the target: nothing more for size
      expect((await pruner.runOnce()).pruningIndex).toBe(12);
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("the store reclaims freed space each time pruning has moved on by a tenth of the kept milestones", async () => {
    const node = createNode({ network: "chrysalis-prune-reclaim", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const reclaimedAt: number[] = [];
    // The memory engine needs no reclaim; this one counts when the pruner would have PostgreSQL vacuum.
    const counting = storeWith(node.store, { reclaim: async () => void reclaimedAt.push(await node.store.pruningIndex()) });
    const pruner = createPruner(counting, { keep: KEEP });
    try {
      for (let i = 0; i < KEEP; i++) await coordinator.issue();
      for (let i = 0; i < 12; i++) {
        await coordinator.issue();
        await pruner.runOnce();
      }
      // 20 kept: a reclaim every 2 milestones pruned, counted from where this process started pruning (0).
      expect(await node.store.pruningIndex()).toBe(12);
      expect(reclaimedAt).toEqual([2, 4, 6, 8, 10, 12]);
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);

  it("keep 0 prunes nothing; a keep below max depth + margin is refused", async () => {
    expect(pruneKeepProblem(0)).toBeUndefined();
    expect(pruneKeepProblem(KEEP)).toBeUndefined();
    expect(pruneKeepProblem(KEEP - 1)).toContain(`at least ${MIN_PRUNE_KEEP}`);
    expect(pruneKeepProblem(-1)).toBeDefined();
    expect(() => createPruner(new MemoryStore(), { keep: 5 })).toThrow(/at least 20/);
    const node = createNode({ network: "chrysalis-prune-none", minPoWScore: 1, pow: { workers: 1 }, store: new MemoryStore() });
    const coordinator = createCoordinator(node, { keys: [seed()] });
    const pruner = createPruner(node.store, { keep: 0, events: node });
    pruner.start();
    try {
      for (let i = 0; i < KEEP + 3; i++) await coordinator.issue();
      expect(await pruner.runOnce()).toEqual({ pruningIndex: 0, messages: 0 });
      expect(await node.store.milestone(1)).toBeDefined();
    } finally {
      await coordinator.stop();
      await pruner.stop();
      await node.close();
    }
  }, 120_000);
});
