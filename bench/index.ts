// `npm run bench`: runs every suite in one process and prints (and saves) the table.
// A suite is a module under bench/ whose default export returns rows; add it to SUITES.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { type Row, toMarkdown } from "./harness.js";
import { toSvg } from "./report.js";

type Suite = () => Promise<Row[]>;

const SUITES: Record<string, () => Promise<{ default: Suite }>> = {
  codec: () => import("./codec.bench.js"),
  hashing: () => import("./hashing.bench.js"),
  signatures: () => import("./signatures.bench.js"),
  json: () => import("./json.bench.js"),
  node: () => import("./node.bench.js"),
  auth: () => import("./auth.bench.js"),
  pow: () => import("./pow.bench.js"),
  browser: () => import("./browser.bench.js"),
  edge: () => import("./edge.bench.js"),
  store: () => import("./store.bench.js"),
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
// A partial run (`npm run bench -- pow`) writes its own files so that it does not overwrite the full report.
const stem = only.length > 0 ? `latest-${only.join("-")}` : "latest";
const svg = toSvg(rows, `chrysalis-core benchmarks (Node ${process.version}, ${os.cpus().length} cores)`);
if (svg !== undefined) writeFileSync(`bench/results/${stem}.svg`, svg);
// The raw rows too, so the table and chart can be redrawn or compared with a later run.
writeFileSync(`bench/results/${stem}.json`, `${JSON.stringify({ node: process.version, cpus: os.cpus().length, date: new Date().toISOString(), rows }, null, 2)}\n`);
const chart = svg === undefined ? "" : `\n\n![hash rate by worker count; codec against iota.js](${stem}.svg)\n`;
writeFileSync(`bench/results/${stem}.md`, `# Benchmark results\n\nNode ${process.version}, ${os.cpus()[0]?.model ?? "unknown CPU"} × ${os.cpus().length}, ${new Date().toISOString()}\n\n${table}\n${chart}`);
console.log(`\n${table}\n\nwritten to bench/results/${stem}.md${svg === undefined ? "" : ` and bench/results/${stem}.svg`}`);
