// `npm run bench`: runs every suite in one process and prints (and saves) the table.
// A suite is a module under bench/ whose default export returns rows; add it to SUITES.
// `npm run bench -- --update auth …` re-runs the named suites and puts their rows into the last full report in place of
// the old ones, saying in the report which suites were re-run and when.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
  ageing: () => import("./ageing.bench.js"),
  confirmation: () => import("./confirmation.bench.js"),
  network: () => import("./network.bench.js"),
};

const update = process.argv.includes("--update");
const only = process.argv.slice(2).filter((a) => a !== "--update");
if (update && only.length === 0) throw new Error("--update needs the suites to re-run");
const rows: Row[] = [];
for (const [name, load] of Object.entries(SUITES)) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stdout.write(`running ${name} …\n`);
  const suite = (await load()).default;
  const suiteRows = await suite();
  rows.push(...suiteRows);
  console.log(toMarkdown(suiteRows));
}
mkdirSync("bench/results", { recursive: true });
const machine = `Node ${process.version}, ${os.cpus()[0]?.model ?? "unknown CPU"} × ${os.cpus().length}`;
if (update) {
  const last = JSON.parse(readFileSync("bench/results/latest.json", "utf8")) as { date: string; rows: Row[]; updated?: string[] };
  // Each re-run suite's rows take the place of its old ones; the other suites keep their rows and order.
  const fresh = new Map(only.map((suite) => [suite, rows.filter((r) => r.suite === suite)]));
  const kept: Row[] = [];
  for (const r of last.rows) {
    if (!fresh.has(r.suite)) kept.push(r);
    else if (fresh.get(r.suite)!.length > 0) kept.push(...fresh.get(r.suite)!.splice(0));
  }
  for (const left of fresh.values()) kept.push(...left);
  const updated = [...(last.updated ?? []), `${only.join(", ")} re-run ${new Date().toISOString()}`];
  writeReport("latest", kept, `${machine}, ${last.date}; ${updated.join("; ")}`, { date: last.date, updated });
} else {
  // A partial run (`npm run bench -- pow`) writes its own files so that it does not overwrite the full report.
  const date = new Date().toISOString();
  writeReport(only.length > 0 ? `latest-${only.join("-")}` : "latest", rows, `${machine}, ${date}`, { date });
}

function writeReport(stem: string, table: Row[], title: string, meta: { date: string; updated?: string[] }): void {
  const svg = toSvg(table, `chrysalis-core benchmarks (Node ${process.version}, ${os.cpus().length} cores)`);
  if (svg !== undefined) writeFileSync(`bench/results/${stem}.svg`, svg);
  // The raw rows too, so the table and chart can be redrawn or compared with a later run.
  writeFileSync(`bench/results/${stem}.json`, `${JSON.stringify({ node: process.version, cpus: os.cpus().length, ...meta, rows: table }, null, 2)}\n`);
  const chart = svg === undefined ? "" : `\n\n![hash rate by worker count; codec against iota.js](${stem}.svg)\n`;
  const markdown = toMarkdown(table);
  writeFileSync(`bench/results/${stem}.md`, `# Benchmark results\n\n${title}\n\n${markdown}\n${chart}`);
  console.log(`\n${markdown}\n\nwritten to bench/results/${stem}.md${svg === undefined ? "" : ` and bench/results/${stem}.svg`}`);
}
