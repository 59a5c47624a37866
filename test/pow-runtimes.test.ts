// PoW wherever Node code runs: `node -e` (CommonJS), `--input-type=module`, CommonJS reaching the package through
// import(), one esbuild-bundled file, and `node --jitless` (no WebAssembly: the JavaScript kernel, with a warning).
// The child processes run the built package (npm test builds dist first); the JavaScript kernel is also checked
// here, in-process, against the WASM kernel's first nonce.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import fc from "fast-check";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { JS_KERNEL_SOURCE } from "../src/pow/kernel-js-source.generated.js";
import { createJsKernel, createMiner, mineNonceSync, powScore, referenceTrailingZeros, searchNonce } from "../src/pow/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = (path: string): string => join(root, "dist", path);
const work = mkdtempSync(join(tmpdir(), "chrysalis-runtimes-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The same job in every runtime: a 100-byte message mined at score 30 (target 8 trits, ~6.6 k hashes expected) on
// two workers, then its score printed from the mined bytes.
const JOB = `const message = new Uint8Array(100).fill(3);
const nonce = await pow.mineNonce(message, { minScore: 30, workers: 2 });
new DataView(message.buffer).setBigUint64(92, nonce, true);
console.log(JSON.stringify({ nonce: String(nonce), score: pow.powScore(message), kernel: pow.createMiner({ workers: 1 }).stats().kernel }));`;

function node(args: string[], cwd = work): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectMined(r: { code: number | null; stdout: string; stderr: string }): { nonce: string; score: number; kernel: string } {
  expect(r.stderr).not.toMatch(/is not defined|Error/);
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { nonce: string; score: number; kernel: string };
  expect(out.score).toBeGreaterThanOrEqual(30);
  return out;
}

describe("mineNonce runs from every way Node runs code", () => {
  it("node --input-type=module -e (the worker has no self and no require there)", () => {
    expectMined(node(["--input-type=module", "-e", `import * as pow from ${JSON.stringify(dist("pow/index.js"))};\n${JOB}`]));
  });

  it("node -e, CommonJS, through import()", () => {
    expectMined(node(["-e", `(async () => { const pow = await import(${JSON.stringify(dist("pow/index.js"))});\n${JOB}\n})();`]));
  });

  it("a CommonJS file (.cjs) through import()", () => {
    const file = join(work, "miner.cjs");
    writeFileSync(file, `(async () => { const pow = await import(${JSON.stringify(dist("pow/index.js"))});\n${JOB}\n})();`);
    expectMined(node([file]));
  });

  it("one esbuild-bundled file, minified, with no node_modules beside it", async () => {
    const entry = join(work, "entry.mjs");
    writeFileSync(entry, `import * as pow from ${JSON.stringify(dist("pow/index.js"))};\n${JOB}`);
    const result = await build({ entryPoints: [entry], bundle: true, minify: true, platform: "node", format: "esm", outfile: join(work, "bundle/miner.mjs"), logLevel: "silent" });
    expect(result.warnings).toEqual([]);
    expectMined(node([join(work, "bundle/miner.mjs")], join(work, "bundle")));
  });

  it("node --jitless (no WebAssembly): the JavaScript kernel mines, and a warning says so", () => {
    const r = node(["--jitless", "--input-type=module", "-e", `import * as pow from ${JSON.stringify(dist("pow/index.js"))};\n${JOB}`]);
    const out = expectMined({ ...r, stderr: r.stderr.replace(/.*--expose_wasm.*\n/, "") });
    expect(out.kernel).toBe("js");
    expect(r.stderr).toContain("CHRYSALIS_WASM_UNAVAILABLE");
  });
});

describe("the JavaScript kernel finds what the WASM kernel finds", () => {
  it("the same first nonce from any start, for targets 0 .. 9", () => {
    const kernel = createJsKernel();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 0, max: 9 }), (digest, start, target) => {
        const count = 20_000n;
        const last = start + count - 1n > (1n << 64n) - 1n ? (1n << 64n) - 1n : start + count - 1n;
        kernel.setDigest(digest);
        const found = kernel.search(target, start, last);
        const expected = searchNonce(digest, target, start, last - start + 1n);
        expect(found).toBe(expected ?? -1n);
        if (found >= 0n) expect(referenceTrailingZeros(digest, found)).toBeGreaterThanOrEqual(target);
      }),
      { numRuns: 25 },
    );
  });

  it("a pool forced onto it mines, and mineNonceSync gives the first nonce", async () => {
    const message = new Uint8Array(80).fill(9);
    const miner = createMiner({ workers: 2, flavor: "js" });
    try {
      expect(miner.stats().kernel).toBe("js");
      const nonce = await miner.mine(message, { minScore: 20 });
      new DataView(message.buffer).setBigUint64(72, nonce, true);
      expect(powScore(message)).toBeGreaterThanOrEqual(20);
    } finally {
      await miner.close();
    }
    const zero = message.slice();
    new DataView(zero.buffer).setBigUint64(72, 0n, true);
    expect(mineNonceSync(zero, 20, 0n, "js")).toBe(mineNonceSync(zero, 20, 0n, "simd"));
  });

  it("the workers' copy is src/pow/kernel-js.ts itself, transpiled (rebuild after editing it)", () => {
    const fresh = ts.transpileModule(readFileSync(join(root, "src/pow/kernel-js.ts"), "utf8"), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, removeComments: true },
    }).outputText.replace(/^export /gm, "");
    expect(JS_KERNEL_SOURCE).toBe(fresh.trim());
  });
});
