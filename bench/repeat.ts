// Repeats a side-by-side comparison and keeps the round with the median ratio: on a shared machine the load shifts
// between the tasks of one round, and a single round can favour either side by 10-20%.
import type { Row } from "./harness.js";

export async function medianRound(rounds: number, run: () => Promise<Row>): Promise<Row> {
  const rows: Row[] = [];
  for (let i = 0; i < rounds; i++) rows.push(await run());
  rows.sort((a, b) => (a.ratio ?? a.ours) - (b.ratio ?? b.ours));
  const median = rows[rows.length >> 1]!;
  return { ...median, case: `${median.case} (median of ${rounds} rounds)` };
}
