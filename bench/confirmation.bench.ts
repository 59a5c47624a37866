// Confirmation under load (issue 33 item 3): the share of acknowledged messages referenced within three milestones,
// and the orphans, for wallets that pick parents from GET /tips (at 1 s and 10 s milestones) and for clients that
// leave parents to the node; the same runs as test/confirmation-load.test.ts, longer.
import { confirmationLoad, type ConfirmationLoadOptions } from "./confirmation-load.js";
import type { Row } from "./harness.js";

const SECONDS = Number(process.env.CHRYSALIS_BENCH_CONFIRMATION_SECONDS ?? "30");

const cases: [string, ConfirmationLoadOptions][] = [
  ["32 clients, parents from /tips, 0–200 ms PoW, 1 s milestones", { milestoneMs: 1000, clients: 32, durationMs: SECONDS * 1000, mode: "tips", powMs: [0, 200] }],
  ["16 clients, parents from /tips, 0–1.5 s PoW, 10 s milestones", { milestoneMs: 10_000, clients: 16, durationMs: SECONDS * 1000, mode: "tips", powMs: [0, 1500] }],
  ["32 clients, parents left to the node, 1 s milestones", { milestoneMs: 1000, clients: 32, durationMs: SECONDS * 1000, mode: "node" }],
];

export default async function confirmation(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, options] of cases) {
    const r = await confirmationLoad(options);
    const refused = Object.values(r.refused).reduce((a, b) => a + b, 0);
    const orphanShare = r.acknowledged === 0 ? 0 : (r.orphans / r.acknowledged) * 100;
    rows.push({
      suite: "confirmation",
      case: `referenced within 3 milestones, ${name}, ${SECONDS} s (${r.acknowledged} acknowledged, ${refused} refused, ${r.late} late, ${r.orphans} orphans = ${orphanShare.toFixed(3)}%)`,
      ours: r.share * 100,
      target: 99.9,
      unit: "%",
    });
  }
  return rows;
}
