// `npm run bench`: runs every suite in one process and prints (and saves) the table.
// A suite is a module under bench/ whose default export returns rows; add it to SUITES.
import { mkdirSync, writeFileSync } from "node:fs";
import { type Row, toMarkdown } from "./harness.js";

type Suite = () => Promise<Row[]>;

const SUITES: Record<string, () => Promise<{ default: Suite }>> = {
  // codec: () => import("./codec.bench.js"),
  hashing: () => import("./hashing.bench.js"),
};

const only = process.argv.slice(2);
const rows: Row[] = [];
for (const [name, load] of Object.entries(SUITES)) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stdout.write(`running ${name} …\n`);
  const suite = (await load()).default;
  const suiteRows = await suite();
  rows.push(...suiteRows);
  console.log(toMarkdown(suiteRows));
}
const table = toMarkdown(rows);
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/latest.md", `# Benchmark results\n\nNode ${process.version}, ${new Date().toISOString()}\n\n${table}\n`);
console.log(`\n${table}\n\nwritten to bench/results/latest.md`);
