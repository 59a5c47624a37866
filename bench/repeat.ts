// Repeats a side-by-side comparison and keeps the round with the median ratio: on a shared machine the load shifts
// between the tasks of one round, and a single round can favour either side by 10-20%.
import type { Row } from "./harness.js";

/** Rounds of the suites that also compare this build with a previous one (codec, json), where two builds of the same
 * code must read about 1× of each other: with five rounds they read 0.89–1.03× on the 2-core VM. */
export const ROUNDS = 5;

/** The round of median ratio, its case naming the rounds and, for a ratio, the range they spanned. */
function median(rows: Row[], rounds: number): Row {
  const sorted = [...rows].sort((a, b) => (a.ratio ?? a.ours) - (b.ratio ?? b.ours));
  const m = sorted[sorted.length >> 1]!;
  const range = m.ratio === undefined ? "" : `, ${sorted[0]!.ratio!.toFixed(2)}–${sorted[sorted.length - 1]!.ratio!.toFixed(2)}×`;
  return { ...m, case: `${m.case} (median of ${rounds} rounds${range})` };
}

export async function medianRound(rounds: number, run: () => Promise<Row>): Promise<Row> {
  const rows: Row[] = [];
  for (let i = 0; i < rounds; i++) rows.push(await run());
  return median(rows, rounds);
}

/** medianRound for a run that gives one row per competitor (compareEach): each competitor's row is its own median
 * round, since the round that favours one side against one competitor need not against another. */
export async function medianRoundEach(rounds: number, run: () => Promise<Row[]>): Promise<Row[]> {
  const runs: Row[][] = [];
  for (let i = 0; i < rounds; i++) runs.push(await run());
  return runs[0]!.map((_, column) => median(runs.map((r) => r[column]!), rounds));
}
