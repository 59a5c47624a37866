// Every ```ts block of README.md and of the guides in docs/, as a user would copy it: in a folder of its own where
// `chrysalis-core` resolves to this checkout's build (node_modules/chrysalis-core is a symlink to the repository, so the
// package's exports map and dist/ are what the examples import; `npm run build` first), and `fast-check` to the
// checkout's, as a user installs it beside the package for chrysalis-core/arbitraries. The blocks type-check under
// strict settings with moduleResolution nodenext, and each runs with node (types stripped by esbuild) to exit 0 on its
// own, with nothing on stderr. An example that needs a node starts one in-process, so none depends on a server outside it.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
/** README.md and every guide in docs/, repository-relative. */
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((file) => file.endsWith(".md")).sort().map((file) => `docs/${file}`)];

/** Each ```ts block with the document and the line its code starts on. */
const examples = documents.flatMap((document) => {
  const text = readFileSync(join(root, document), "utf8");
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => ({
    document,
    line: text.slice(0, match.index).split("\n").length + 1,
    code: match[1]!,
  }));
});
const name = (example: { document: string; line: number }): string => `${example.document.replace(/\W+/g, "-")}-line-${example.line}`;

const work = mkdtempSync(join(tmpdir(), "chrysalis-readme-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "readme-examples", version: "1.0.0", private: true, type: "module" }));
  mkdirSync(join(work, "node_modules"));
  symlinkSync(root, join(work, "node_modules/chrysalis-core"), "dir");
  symlinkSync(join(root, "node_modules/fast-check"), join(work, "node_modules/fast-check"), "dir");
  for (const example of examples) {
    writeFileSync(join(work, `${name(example)}.ts`), example.code);
    writeFileSync(join(work, `${name(example)}.mjs`), transformSync(example.code, { loader: "ts", format: "esm", target: "node20" }).code);
  }
});

describe("the TypeScript examples of README.md and the guides", () => {
  it("are there (README has ```ts blocks, and so do the library and node guides)", () => {
    expect(examples.filter((example) => example.document === "README.md").length).toBeGreaterThanOrEqual(2);
    expect(examples.filter((example) => example.document === "docs/LIBRARY.md").length).toBeGreaterThanOrEqual(2);
    expect(examples.filter((example) => example.document === "docs/NODE.md").length).toBeGreaterThanOrEqual(1);
  });

  it("type-check as written (strict, moduleResolution nodenext)", () => {
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022"], module: "nodenext", moduleResolution: "nodenext", skipLibCheck: true, typeRoots: [join(root, "node_modules/@types")], types: ["node"] },
        files: examples.map((example) => `${name(example)}.ts`),
      }),
    );
    const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: work, encoding: "utf8", timeout: 120_000, killSignal: "SIGKILL" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 150_000);

  for (const example of examples) {
    it(`the block at ${example.document} line ${example.line} runs with node and exits 0`, () => {
      const r = spawnSync(process.execPath, [`${name(example)}.mjs`], { cwd: work, encoding: "utf8", timeout: 120_000, killSignal: "SIGKILL", env: { ...process.env, NODE_OPTIONS: "" } });
      if (r.status !== 0) console.log(r.stdout);
      expect(r.stderr).toBe("");
      expect(r.signal).toBe(null);
      expect(r.status).toBe(0);
    }, 150_000);
  }
});
