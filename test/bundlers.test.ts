// The built package in the bundlers users run: every entry point builds with esbuild (browser entries for the
// browser, chrysalis-core/node and the CLI for Node), with Vite and with webpack 5 without a warning; a minified browser bundle has no
// Node built-in left in it for a later bundler to trip on; only chrysalis-core/arbitraries bundles fast-check (an
// optional peer dependency); and the bundles of test/bundle-budgets.json stay inside their size budgets.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { build, type Message } from "esbuild";
import { build as viteBuild, createLogger } from "vite";
import { describe, expect, it } from "vitest";
import webpack, { type Stats } from "webpack";

const root = fileURLToPath(new URL("..", import.meta.url));
const BROWSER_ENTRIES = {
  "chrysalis-core": "dist/index.js",
  "chrysalis-core/pow": "dist/pow/index.js",
  "chrysalis-core/auth": "dist/auth/index.js",
  "chrysalis-core/client": "dist/client/index.js",
  "chrysalis-core/arbitraries": "dist/arbitraries/index.js",
};
const NODE_ENTRIES = { "chrysalis-core/node": "dist/node/index.js", chrysalis: "dist/cli/main.js" };
const text = (messages: Message[]): string[] => messages.map((m) => `${m.text} (${m.location?.file ?? "?"}:${m.location?.line ?? "?"})`);

async function esbuild(entry: string, platform: "browser" | "node", minify: boolean): Promise<{ code: string; warnings: string[] }> {
  const result = await build({ entryPoints: [`${root}${entry}`], bundle: true, minify, format: "esm", platform, target: "es2022", write: false, logLevel: "silent" });
  return { code: result.outputFiles[0]!.text, warnings: text(result.warnings) };
}

describe("esbuild builds every entry point without warnings", () => {
  for (const [name, entry] of Object.entries(BROWSER_ENTRIES)) {
    it(`${name} for browsers, plain and minified; the minified bundle bundles again for browsers`, async () => {
      expect((await esbuild(entry, "browser", false)).warnings).toEqual([]);
      const minified = await esbuild(entry, "browser", true);
      expect(minified.warnings).toEqual([]);
      // A Node built-in folded into a literal import("node:…") would fail here: esbuild cannot resolve it for browsers.
      const again = await build({ stdin: { contents: minified.code, loader: "js", resolveDir: root }, bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
      expect(text(again.warnings)).toEqual([]);
    });
  }
  for (const [name, entry] of Object.entries(NODE_ENTRIES)) {
    it(`${name} for Node`, async () => {
      expect((await esbuild(entry, "node", true)).warnings).toEqual([]);
    });
  }
});

describe("fast-check, an optional peer dependency, is bundled only by the entry point that needs it", () => {
  for (const [name, entry] of [...Object.entries(BROWSER_ENTRIES), ...Object.entries(NODE_ENTRIES)]) {
    const wanted = name === "chrysalis-core/arbitraries";
    it(`${name} ${wanted ? "imports" : "does not import"} fast-check`, async () => {
      const result = await build({ entryPoints: [`${root}${entry}`], bundle: true, format: "esm", platform: entry.startsWith("dist/node") || entry.startsWith("dist/cli") ? "node" : "browser", write: false, logLevel: "silent", metafile: true });
      expect(Object.keys(result.metafile.inputs).some((input) => input.includes("node_modules/fast-check/"))).toBe(wanted);
    });
  }
});

describe("Vite (Rollup's interface) builds every browser entry point without warnings", () => {
  it("one library build of chrysalis-core, /pow, /auth, /client and /arbitraries", async () => {
    const warnings: string[] = [];
    const logger = createLogger("warn", { allowClearScreen: false });
    logger.warn = (message) => void warnings.push(message);
    logger.warnOnce = (message) => void warnings.push(message);
    const output = await viteBuild({
      configFile: false,
      root,
      logLevel: "warn",
      customLogger: logger,
      build: {
        write: false,
        minify: true,
        target: "es2022",
        lib: { entry: Object.fromEntries(Object.entries(BROWSER_ENTRIES).map(([name, entry]) => [name.replace(/\W/g, "_"), `${root}${entry}`])), formats: ["es"] },
        rollupOptions: { onwarn: (warning) => void warnings.push(warning.message) },
      },
    });
    expect(warnings).toEqual([]);
    const chunks = (Array.isArray(output) ? output : [output]).flatMap((o) => ("output" in o ? o.output : []));
    const entries = chunks.filter((c) => c.type === "chunk" && c.isEntry);
    expect(entries.map((c) => c.name).sort()).toEqual(["chrysalis_core", "chrysalis_core_arbitraries", "chrysalis_core_auth", "chrysalis_core_client", "chrysalis_core_pow"]);
  }, 120_000);
});

describe("webpack 5 builds every browser entry point without warnings", () => {
  it("one production build of chrysalis-core, /pow, /auth, /client and /arbitraries, each entry using every export", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chrysalis-webpack-"));
    try {
      const entry: Record<string, string> = {};
      for (const [name, file] of Object.entries(BROWSER_ENTRIES)) {
        const key = name.replace(/\W/g, "_");
        // Each entry keeps every export alive, so that tree shaking cannot hide a module webpack would trip on.
        writeFileSync(join(dir, `${key}.mjs`), `import * as m from ${JSON.stringify(`${root}${file}`)};\nglobalThis.m = m;\n`);
        entry[key] = `./${key}.mjs`;
      }
      const stats = await new Promise<Stats>((resolve, reject) =>
        webpack(
          {
            context: dir,
            mode: "production",
            target: "web",
            entry,
            output: { path: join(dir, "out"), filename: "[name].js" },
            // The arbitraries are for tests, not pages: fast-check alone passes the size webpack hints at for a page.
            performance: { assetFilter: (name: string) => !name.startsWith("chrysalis_core_arbitraries") },
          },
          (error, result) => (error ? reject(error) : resolve(result!)),
        ),
      );
      const info = stats.toJson({ all: false, errors: true, warnings: true, assets: true });
      expect(info.errors?.map((e) => e.message) ?? []).toEqual([]);
      expect(info.warnings?.map((w) => w.message) ?? []).toEqual([]);
      const assets = new Map((info.assets ?? []).map((a) => [a.name, a.size]));
      // Whole entries, not tree-shaken stubs: the root entry alone is tens of kilobytes.
      for (const key of Object.keys(entry)) expect(assets.get(`${key}.js`) ?? 0).toBeGreaterThan(20_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

interface Budgets {
  allowedGrowth: number;
  bundles: Record<string, { entry: string; imports: string[]; baseline: number; maxGzip?: number }>;
}

describe("bundle-size budgets (test/bundle-budgets.json): a bundle may grow 10 % past its baseline, not more", () => {
  const budgets = JSON.parse(readFileSync(`${root}test/bundle-budgets.json`, "utf8")) as Budgets;
  for (const [name, budget] of Object.entries(budgets.bundles)) {
    it(name, async () => {
      const result = await build({
        stdin: { contents: `export ${budget.imports[0] === "*" ? "*" : `{ ${budget.imports.join(", ")} }`} from ${JSON.stringify(`${root}${budget.entry}`)};`, loader: "js", resolveDir: root },
        bundle: true,
        minify: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        write: false,
        logLevel: "silent",
      });
      const bytes = result.outputFiles[0]!.contents.length;
      const gzip = gzipSync(result.outputFiles[0]!.contents, { level: 9 }).length;
      const limit = Math.floor(budget.baseline * (1 + budgets.allowedGrowth));
      console.log(`${name}: ${bytes} B minified (${gzip} B gzip); baseline ${budget.baseline}, limit ${limit}${budget.maxGzip === undefined ? "" : `, gzip limit ${budget.maxGzip}`}`);
      expect(bytes).toBeLessThanOrEqual(limit);
      if (budget.maxGzip !== undefined) expect(gzip).toBeLessThanOrEqual(budget.maxGzip);
    });
  }
});
