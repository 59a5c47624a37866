// browser: the PoW hash rate in Debian's Chromium, in a cross-origin isolated page (SharedArrayBuffer) and in a plain
// one, beside Node's worker thread, and the JavaScript fallback of a page whose CSP refuses WebAssembly. Target
// (issue 14): the plain page at ≥ 0.95× the isolated one. Rounds interleave the three so that load on the machine
// falls on all of them alike; the ratio is the median of each round's ratio.
import { chromium } from "playwright-core";
import { createMiner } from "../src/pow/index.js";
import { bundleApp, CHROMIUM_ARGS, findChromium, startPageServer, type PolicyName } from "../test/browser/harness.js";
import type { Row } from "./harness.js";

const ROUNDS = 5;
const WINDOW_MS = 1500;
const WARM_MS = 400;

/** Hashes a second on one worker thread over WINDOW_MS, counted after WARM_MS: the page's own measure, in Node. */
async function nodeRate(): Promise<number> {
  const miner = createMiner({ workers: 1 });
  const controller = new AbortController();
  let mark: { hashes: number; at: number } | undefined;
  let last: { hashes: number; at: number } | undefined;
  const job = miner.mineDigest(new Uint8Array(32).fill(0x5a), 40, {
    signal: controller.signal,
    onProgress: ({ hashes, elapsedMs }) => {
      if (mark === undefined && elapsedMs >= WARM_MS) mark = { hashes, at: elapsedMs };
      last = { hashes, at: elapsedMs };
    },
  });
  await new Promise((resolve) => setTimeout(resolve, WARM_MS + WINDOW_MS));
  controller.abort();
  await job.catch(() => undefined);
  await miner.close();
  if (mark === undefined || last === undefined || last.at <= mark.at) throw new Error("no progress was reported");
  return ((last.hashes - mark.hashes) * 1000) / (last.at - mark.at);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export default async function browserSuite(): Promise<Row[]> {
  const executable = findChromium();
  if (executable === undefined) {
    console.log("browser: skipped, no Chromium (apt-get install -y chromium)");
    return [];
  }
  const server = await startPageServer(await bundleApp());
  const browser = await chromium.launch({ executablePath: executable, args: CHROMIUM_ARGS, timeout: 60_000 });
  try {
    const open = async (policy: PolicyName, isolated: boolean) => {
      const page = await browser.newPage();
      await page.goto(server.url(policy, isolated, "min"));
      await page.waitForFunction(() => "chrysalisTest" in globalThis, undefined, { timeout: 30_000 });
      return async (): Promise<number> =>
        page.evaluate(
          async ([ms, warm]) => ((await (globalThis as unknown as { chrysalisTest: { hashRate(w: number, ms: number, warm: number): Promise<{ rate: number }> } }).chrysalisTest.hashRate(1, ms, warm)).rate),
          [WINDOW_MS, WARM_MS] as const,
        );
    };
    const isolated = await open("none", true);
    const plain = await open("none", false);
    const fallback = await open("b", false);
    const rates = { isolated: [] as number[], plain: [] as number[], node: [] as number[], fallback: [] as number[] };
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const i = await isolated();
      const p = await plain();
      rates.isolated.push(i);
      rates.plain.push(p);
      ratios.push(p / i);
      rates.node.push(await nodeRate());
    }
    rates.fallback.push(await fallback());
    const unit = "H/s";
    return [
      { suite: "browser", case: "PoW, 1 worker: non-isolated page vs cross-origin isolated page (median of per-round ratios)", ours: median(rates.plain), theirs: median(rates.isolated), theirName: "isolated page", ratio: median(ratios), target: 0.95, unit },
      { suite: "browser", case: "PoW, 1 worker: isolated page vs Node worker thread", ours: median(rates.isolated), theirs: median(rates.node), theirName: "Node", ratio: median(rates.isolated) / median(rates.node), unit },
      { suite: "browser", case: "PoW, 1 worker: JavaScript fallback (CSP without 'wasm-unsafe-eval') vs WASM SIMD in a page", ours: median(rates.fallback), theirs: median(rates.isolated), theirName: "WASM page", ratio: median(rates.fallback) / median(rates.isolated), unit },
    ];
  } finally {
    await browser.close();
    await server.close();
  }
}
