// Confirmation under load (issue 33 item 3), over real HTTP on 127.0.0.1: wallets that pick parents from GET /tips and
// wait while they mine, at 1 s and at 10 s milestones, and clients that leave parents to the node. No submission is
// refused, and at least 99.9% of the acknowledged messages are referenced within three milestones (the bench's
// `confirmation` rows report the same runs, longer, with the orphan share).
import { describe, expect, it } from "vitest";
import { confirmationLoad, type ConfirmationLoadOptions } from "../bench/confirmation-load.js";

const cases: [string, ConfirmationLoadOptions][] = [
  ["32 clients picking parents from /tips, 0–200 ms of PoW, milestones every 1 s", { milestoneMs: 1000, clients: 32, durationMs: 10_000, mode: "tips", powMs: [0, 200] }],
  ["16 clients picking parents from /tips, 0–1.5 s of PoW, milestones every 10 s", { milestoneMs: 10_000, clients: 16, durationMs: 15_000, mode: "tips", powMs: [0, 1500] }],
  ["32 clients leaving parents to the node, milestones every 1 s", { milestoneMs: 1000, clients: 32, durationMs: 8_000, mode: "node" }],
];

describe("confirmation under load: no submission refused, ≥ 99.9% of acknowledged messages referenced within three milestones", () => {
  it.each(cases)("%s", async (_, options) => {
    const result = await confirmationLoad(options);
    expect(result.refused).toEqual({});
    expect(result.acknowledged).toBeGreaterThan(100);
    expect(result.share, JSON.stringify(result)).toBeGreaterThanOrEqual(0.999);
    expect(result.orphans).toBeLessThanOrEqual(result.acknowledged * 0.001);
  }, 120_000);
});
