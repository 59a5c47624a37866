// Every ```ts block of README.md, as a user would copy it: in a folder of its own where `chrysalis-core` resolves to
// this checkout's build (node_modules/chrysalis-core is a symlink to the repository, so the package's exports map and
// dist/ are what the examples import; `npm run build` first). The blocks type-check under strict settings with
// moduleResolution nodenext, and each runs with node (types stripped by esbuild) to exit 0 on its own, with nothing on
// stderr. An example that needs a node starts one in-process, so none depends on a server outside it.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");

/** Each ```ts block with the README line its code starts on. */
const examples = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => ({
  line: readme.slice(0, match.index).split("\n").length + 1,
  code: match[1]!,
}));
const name = (example: { line: number }): string => `example-line-${example.line}`;

const work = mkdtempSync(join(tmpdir(), "chrysalis-readme-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "readme-examples", version: "1.0.0", private: true, type: "module" }));
  mkdirSync(join(work, "node_modules"));
  symlinkSync(root, join(work, "node_modules/chrysalis-core"), "dir");
  for (const example of examples) {
    writeFileSync(join(work, `${name(example)}.ts`), example.code);
    writeFileSync(join(work, `${name(example)}.mjs`), transformSync(example.code, { loader: "ts", format: "esm", target: "node20" }).code);
  }
});

describe("README.md's TypeScript examples", () => {
  it("are there (the README has ```ts blocks)", () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });

  it("type-check as written (strict, moduleResolution nodenext)", () => {
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022"], module: "nodenext", moduleResolution: "nodenext", skipLibCheck: true, typeRoots: [join(root, "node_modules/@types")], types: ["node"] },
        files: examples.map((example) => `${name(example)}.ts`),
      }),
    );
    const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: work, encoding: "utf8", timeout: 120_000 });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 150_000);

  for (const example of examples) {
    it(`the block at README.md line ${example.line} runs with node and exits 0`, () => {
      const r = spawnSync(process.execPath, [`${name(example)}.mjs`], { cwd: work, encoding: "utf8", timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "" } });
      if (r.status !== 0) console.log(r.stdout);
      expect(r.stderr).toBe("");
      expect(r.signal).toBe(null);
      expect(r.status).toBe(0);
    }, 150_000);
  }
});
