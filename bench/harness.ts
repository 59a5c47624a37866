// The benchmark harness: every suite measures ours against the library a user would pick instead,
// side by side in one run, and reports medians and the ratio.
import { Bench } from "tinybench";

export interface Row {
  /** The suite (codec, hashing, signatures, pow, auth, node). */
  suite: string;
  case: string;
  /** Median operations (or hashes) a second. */
  ours: number;
  /** The competitor's median, or undefined where the row is an absolute figure. */
  theirs?: number | undefined;
  theirName?: string | undefined;
  /** ours / theirs. */
  ratio?: number | undefined;
  /** The issue's target: a ratio when `theirs` is set, otherwise an absolute figure in `unit`. */
  target?: number | undefined;
  /** The target is a ceiling (a cost such as CPU per operation): met when the figure is at most the target. */
  atMost?: boolean | undefined;
  unit: string;
}

export interface CompareOptions {
  /** Milliseconds each task runs (after warm-up). */
  time?: number;
  target?: number;
  unit?: string;
}

// A sample (one timed call of a task) lasts at least this long: tinybench times every sample, and reading the clock
// costs about 0.1 µs here, so a sub-microsecond operation timed call by call has its median decided by the clock (two
// builds of the same encoder read 0.6× and 1.9× of each other, and medians fell on the same few values).
const SAMPLE_MS = 0.02;

/** How many calls of `fn` make one sample of about SAMPLE_MS: 1 for anything slower, and for an asynchronous `fn`
 * (tinybench awaits each sample's promise; calls in a loop would only time how fast promises are made). */
async function callsPerSample(fn: () => unknown): Promise<number> {
  const first = fn();
  if (typeof (first as PromiseLike<unknown> | undefined)?.then === "function") {
    await first;
    return 1;
  }
  let calls = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < 5) {
    fn();
    calls++;
    elapsed = performance.now() - started;
  }
  return Math.max(1, Math.ceil(SAMPLE_MS / (elapsed / calls)));
}

// Each call of medians() starts its tasks one further along: a task pays for the garbage and the cache state the one
// before it left, so over a suite's rounds (bench/repeat.ts) every contender runs after each of the others.
let rotation = 0;

/** Median throughput (ops/s) of each function, measured in one tinybench run. */
export async function medians(fns: Record<string, () => unknown>, time = 800): Promise<Record<string, number>> {
  const bench = new Bench({ time, warmupTime: 200 });
  const calls = new Map<string, number>();
  const entries = Object.entries(fns);
  const start = rotation++ % entries.length;
  for (const [name, fn] of [...entries.slice(start), ...entries.slice(0, start)]) {
    const n = await callsPerSample(fn);
    calls.set(name, n);
    bench.add(
      name,
      n === 1
        ? fn
        : () => {
            for (let i = 0; i < n; i++) fn();
          },
    );
  }
  await bench.run();
  const out: Record<string, number> = {};
  for (const task of bench.tasks) {
    const result = task.result as { state: string; throughput?: { p50: number }; error?: unknown };
    if (result.state !== "completed" || result.throughput === undefined) throw new Error(`bench task ${task.name} did not complete: ${String(result.error ?? result.state)}`);
    out[task.name] = result.throughput.p50 * calls.get(task.name)!;
  }
  return out;
}

/**
 * Measures `ours` against each competitor in one run; the ratio is taken against the fastest competitor.
 */
export async function compare(suite: string, name: string, ours: () => unknown, theirs: Record<string, () => unknown>, options: CompareOptions = {}): Promise<Row> {
  const results = await medians({ ours, ...theirs }, options.time);
  let best = "";
  let bestValue = 0;
  for (const key of Object.keys(theirs)) {
    const value = results[key]!;
    if (value > bestValue) {
      best = key;
      bestValue = value;
    }
  }
  const oursValue = results.ours!;
  return { suite, case: name, ours: oursValue, theirs: bestValue, theirName: best, ratio: oursValue / bestValue, target: options.target, unit: options.unit ?? "ops/s" };
}

/**
 * Measures `ours` and every competitor in one run and gives one row per competitor (all from the same medians), so
 * that a row against iota.js and a row against the previous build of this library can be read side by side.
 */
export async function compareEach(suite: string, name: string, ours: () => unknown, theirs: Record<string, () => unknown>, targets: Record<string, number | undefined> = {}): Promise<Row[]> {
  const results = await medians({ ours, ...theirs });
  const oursValue = results.ours!;
  return Object.keys(theirs).map((key) => {
    const value = results[key]!;
    return { suite, case: name, ours: oursValue, theirs: value, theirName: key, ratio: oursValue / value, target: targets[key], unit: "ops/s" };
  });
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined) return "";
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)} M`;
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)} k`;
  return value.toFixed(digits);
}

/** The table as Markdown: case, ours, theirs, ratio, target, met. */
export function toMarkdown(rows: Row[]): string {
  const lines = ["| suite | case | ours | theirs | ratio | target | met |", "|---|---|---:|---:|---:|---:|:---:|"];
  for (const r of rows) {
    const figure = r.ratio ?? r.ours;
    const met = r.target === undefined ? "" : (r.atMost === true ? figure <= r.target : figure >= r.target) ? "yes" : "NO";
    const theirs = r.theirs === undefined ? "" : `${fmt(r.theirs, 1)} (${r.theirName})`;
    const sign = r.atMost === true ? "≤" : "≥";
    const target = r.target === undefined ? "" : r.ratio !== undefined ? `${sign} ${r.target}×` : `${sign} ${fmt(r.target)} ${r.unit}`;
    lines.push(`| ${r.suite} | ${r.case} | ${fmt(r.ours, 1)} ${r.unit} | ${theirs} | ${r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`} | ${target} | ${met} |`);
  }
  return lines.join("\n");
}
