// Reads the Prometheus text format that GET /metrics answers, as far as the dashboard needs: each sample's name, labels
// and value (comments, timestamps and histograms' meaning are left aside).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `where` (undefined when the metric is absent). */
export function total(samples: readonly Sample[], name: string, where: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    sum = (sum ?? 0) + s.value;
  }
  return sum;
}
