// The benchmark report: the Markdown table and an SVG chart (hash rate by worker count from the pow rows; our codec
// against iota.js from the codec rows), written to bench/results/ and linked from docs/BENCHMARKS.md. No dependencies.
import type { Row } from "./harness.js";

interface Bar {
  label: string;
  value: number;
  /** A second bar beside the first (the competitor), when there is one. */
  other?: number | undefined;
}

const esc = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function short(value: number): string {
  if (value >= 1e9) return `${(value / 1e9).toFixed(2)} G`;
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)} M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)} k`;
  return value.toFixed(value < 10 ? 2 : 0);
}

/** Horizontal bars, one panel; returns the SVG fragment and its height. */
function panel(title: string, unit: string, bars: Bar[], y0: number, width: number, legend: [string, string] | undefined): { svg: string; height: number } {
  const rowHeight = legend === undefined ? 24 : 36;
  const labelWidth = 300;
  const plot = width - labelWidth - 130;
  const max = Math.max(1e-9, ...bars.map((b) => Math.max(b.value, b.other ?? 0)));
  const parts = [`<text x="10" y="${y0 + 18}" class="title">${esc(title)}</text>`];
  let y = y0 + 32;
  if (legend !== undefined) {
    parts.push(`<rect x="${labelWidth}" y="${y - 10}" width="12" height="10" class="ours"/><text x="${labelWidth + 16}" y="${y}" class="small">${esc(legend[0])}</text>`);
    parts.push(`<rect x="${labelWidth + 140}" y="${y - 10}" width="12" height="10" class="theirs"/><text x="${labelWidth + 156}" y="${y}" class="small">${esc(legend[1])}</text>`);
    y += 10;
  }
  for (const bar of bars) {
    const w = Math.max(1, (bar.value / max) * plot);
    parts.push(`<text x="${labelWidth - 8}" y="${y + 13}" class="label" text-anchor="end">${esc(bar.label)}</text>`);
    parts.push(`<rect x="${labelWidth}" y="${y + 2}" width="${w.toFixed(1)}" height="14" class="ours"/>`);
    parts.push(`<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 13}" class="small">${esc(`${short(bar.value)} ${unit}`)}</text>`);
    if (bar.other !== undefined) {
      const w2 = Math.max(1, (bar.other / max) * plot);
      parts.push(`<rect x="${labelWidth}" y="${y + 18}" width="${w2.toFixed(1)}" height="12" class="theirs"/>`);
      parts.push(`<text x="${(labelWidth + w2 + 6).toFixed(1)}" y="${y + 28}" class="small">${esc(`${short(bar.other)} (ours ${(bar.value / bar.other).toFixed(1)}×)`)}</text>`);
    }
    y += rowHeight;
  }
  return { svg: parts.join("\n"), height: y - y0 + 10 };
}

/** The worker count a pow row measures, from its case name ("… workers: 2", "2 workers", "workers=2"). */
export function workerCount(row: Row): number | undefined {
  const m = /workers?\s*[:=]?\s*(\d+)|(\d+)\s*workers?/i.exec(row.case);
  if (m === null) return undefined;
  return Number(m[1] ?? m[2]);
}

/** The SVG chart of a run, or undefined when it has neither pow-by-workers nor codec rows. */
export function toSvg(rows: Row[], title = "chrysalis-core benchmarks"): string | undefined {
  const width = 900;
  const panels: { svg: string; height: number }[] = [];
  let y = 40;
  const pow = rows
    .filter((r) => r.suite === "pow" && /hash rate/i.test(r.case) && workerCount(r) !== undefined && r.theirs === undefined)
    .map((r) => {
      const n = workerCount(r)!;
      // The pow suite may also report the rate per CPU second (what the workers reach when not sharing the cores).
      const perCpu = /per cpu/i.test(r.case);
      return { label: `${n} worker${n === 1 ? "" : "s"}${perCpu ? ", per CPU second" : ", wall clock"}`, value: r.ours, unit: r.unit, n, perCpu };
    })
    .sort((a, b) => a.n - b.n || Number(a.perCpu) - Number(b.perCpu));
  if (pow.length > 0) {
    const p = panel("Proof of work: hash rate by worker count", pow[0]!.unit, pow, y, width, undefined);
    panels.push(p);
    y += p.height;
  }
  const codec = rows.filter((r) => r.suite === "codec" && r.theirs !== undefined);
  if (codec.length > 0) {
    const p = panel("Codec: chrysalis-core against iota.js 1.8", codec[0]!.unit, codec.map((r) => ({ label: r.case, value: r.ours, other: r.theirs })), y, width, ["chrysalis-core", [...new Set(codec.map((r) => r.theirName ?? "iota.js"))].join(" / ")]);
    panels.push(p);
    y += p.height;
  }
  if (panels.length === 0) return undefined;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 10}" viewBox="0 0 ${width} ${y + 10}" font-family="system-ui, sans-serif">`,
    "<style>.title{font-size:15px;font-weight:600}.label{font-size:12px}.small{font-size:11px;fill:#333}.ours{fill:#2b7bb9}.theirs{fill:#c9c9c9}</style>",
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" class="title" font-size="17">${esc(title)}</text>`,
    ...panels.map((p) => p.svg),
    "</svg>",
  ].join("\n");
}
