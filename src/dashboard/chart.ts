// A small canvas chart of per-second series (messages/s, referenced messages/s): the last `span` seconds, each series a
// line, the y axis from 0 to a rounded maximum. Drawn only when data arrives or the size changes; colours come from the
// page's CSS variables, so it follows the light or dark theme.

export interface Series {
  label: string;
  /** The CSS variable holding its colour. */
  colour: string;
  values: number[];
}

function niceMax(value: number): number {
  if (value <= 5) return 5;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

export class RateChart {
  readonly canvas: HTMLCanvasElement;
  readonly #series: Series[];
  readonly #span: number;

  constructor(series: Series[], span: number, label: string) {
    this.#series = series;
    this.#span = span;
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", label);
    // The canvas follows its box's width; its pixel size follows the device's pixel ratio.
    new ResizeObserver(() => this.draw()).observe(this.canvas);
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => this.draw());
  }

  draw(): void {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) return;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const g = canvas.getContext("2d");
    if (g === null) return;
    const style = getComputedStyle(canvas);
    const colour = (name: string): string => style.getPropertyValue(name).trim() || "#888";
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const left = 34;
    const bottom = height - 16;
    const top = 6;
    const max = niceMax(Math.max(0, ...this.#series.flatMap((s) => s.values)));
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = colour("--muted");
    g.strokeStyle = colour("--grid");
    g.lineWidth = 1;
    g.textBaseline = "middle";
    g.textAlign = "right";
    for (const fraction of [0, 0.5, 1]) {
      const y = bottom - (bottom - top) * fraction;
      g.beginPath();
      g.moveTo(left, Math.round(y) + 0.5);
      g.lineTo(width, Math.round(y) + 0.5);
      g.stroke();
      g.fillText(String(Math.round(max * fraction * 10) / 10), left - 4, y);
    }
    g.textAlign = "left";
    g.textBaseline = "alphabetic";
    g.fillText(`${this.#span} s`, left, height - 2);
    g.textAlign = "right";
    g.fillText("now", width, height - 2);
    const step = (width - left) / Math.max(1, this.#span - 1);
    for (const series of this.#series) {
      const values = series.values.slice(-this.#span);
      g.strokeStyle = colour(series.colour);
      g.lineWidth = 1.5;
      g.beginPath();
      values.forEach((v, i) => {
        const x = width - (values.length - 1 - i) * step;
        const y = bottom - (bottom - top) * (v / max);
        if (i === 0) g.moveTo(x, y);
        else g.lineTo(x, y);
      });
      g.stroke();
    }
  }
}
