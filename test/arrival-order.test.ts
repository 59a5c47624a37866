// ArrivalOrder: the oldest value still held in a Map, as the Map's own insertion order says, in O(1) amortized time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrivalOrder } from "../src/bytes/bounded-map.js";

interface Item {
  readonly key: number;
}

function owner(): { map: Map<number, Item>; order: ArrivalOrder<Item>; put(key: number): void } {
  const map = new Map<number, Item>();
  const order = new ArrivalOrder<Item>((item) => map.get(item.key) === item);
  return {
    map,
    order,
    put(key: number) {
      if (map.has(key)) return;
      const item = { key };
      map.set(key, item);
      order.push(item, map.size);
    },
  };
}

describe("ArrivalOrder", () => {
  it("its oldest is always the Map's first entry, under puts, deletions anywhere, keys put again and evictions (by oldest or takeOldest)", () => {
    const op = fc.oneof(
      fc.record({ put: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ del: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ evict: fc.constant(true) }),
      fc.record({ take: fc.constant(true) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const o = owner();
        for (const step of ops) {
          if ("put" in step) o.put(step.put);
          else if ("del" in step) o.map.delete(step.del);
          else if ("take" in step) {
            const first = o.map.values().next();
            const taken = o.order.takeOldest();
            expect(taken).toBe(first.done === true ? undefined : first.value);
            if (taken !== undefined) o.map.delete(taken.key);
          } else {
            const oldest = o.order.oldest();
            if (oldest !== undefined) o.map.delete(oldest.key);
          }
          const first = o.map.values().next();
          expect(o.order.oldest()).toBe(first.done === true ? undefined : first.value);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("stays bounded: a million values through a Map of 1000, a third of them deleted out of turn, never queue past 2 × held + 1024", () => {
    const o = owner();
    let most = 0;
    let largest = 0;
    for (let key = 0; key < 1_000_000; key++) {
      o.put(key);
      if (key % 3 === 0) o.map.delete(key - 500);
      if (o.map.size > 1000) o.map.delete(o.order.oldest()!.key);
      most = Math.max(most, o.order.queued);
      largest = Math.max(largest, o.map.size);
    }
    expect(largest).toBe(1000);
    expect(most).toBeLessThanOrEqual(2 * 1000 + 1024 + 1);
    expect(o.order.oldest()).toBe(o.map.values().next().value);
  });
});
