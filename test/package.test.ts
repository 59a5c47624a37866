// The package as users get it: `npm pack`'s tarball holds only what they need, its documents link only inside it,
// and installed into a fresh folder it imports from every entry point, runs `chrysalis --help` and type-checks a
// consumer under moduleResolution node16, nodenext and bundler. npm installs from its cache (--prefer-offline).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "chrysalis-package-"));
const consumer = join(work, "consumer");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
let tarball: string;
let files: string[];

afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  // npm test has built dist; pack what `files` selects, as `npm publish` would.
  const packed = JSON.parse(execFileSync(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as { filename: string; size: number; files: { path: string }[] }[];
  tarball = join(work, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path).sort();
  console.log(`${packed[0]!.filename}: ${files.length} files, ${packed[0]!.size} bytes packed`);
}, 120_000);

describe("the tarball ships only what users need", () => {
  it("dist, the docs the README links to, README, LICENSE and package.json; no maps, .wat, build/ or sources", () => {
    const allowed = /^(dist\/.+\.(js|d\.ts)|docs\/[\w-]+\.md|bench\/results\/latest\.(md|svg)|README\.md|LICENSE|package\.json)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    expect(files).toContain("LICENSE");
    expect(files).toContain("dist/pow/worker.js");
    expect(files.some((f) => f.endsWith(".map") || f.endsWith(".wat") || f.startsWith("build/") || f.startsWith("src/"))).toBe(false);
  });

  it("LICENSE is the Apache License 2.0 that package.json names", () => {
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).license).toBe("Apache-2.0");
    const license = readFileSync(join(root, "LICENSE"), "utf8");
    expect(license).toContain("Apache License");
    expect(license).toContain("Version 2.0, January 2004");
  });

  it("no .d.ts carries a data blob (a base64 kernel typed as its literal)", () => {
    const long = files.filter((f) => f.endsWith(".d.ts")).filter((f) => readFileSync(join(root, f), "utf8").split("\n").some((line) => /[A-Za-z0-9+/]{200,}/.test(line)));
    expect(long).toEqual([]);
  });

  it("every relative link in the shipped documents points at a shipped file", () => {
    const broken: string[] = [];
    for (const doc of files.filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(join(root, doc), "utf8");
      const base = doc.includes("/") ? doc.slice(0, doc.lastIndexOf("/") + 1) : "";
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const path = new URL(target!.split("#")[0]!, `file:///${base}`).pathname.slice(1);
        if (!files.includes(path)) broken.push(`${doc} → ${target}`);
      }
      // Nothing outside the package either (the old README pointed at ../shared/PROTOCOL.md).
      if (text.includes("../shared/")) broken.push(`${doc} mentions ../shared/`);
    }
    expect(broken).toEqual([]);
  });
});

describe("installed into a fresh folder", () => {
  beforeAll(() => {
    execFileSync("mkdir", ["-p", consumer]);
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
    execFileSync(npm, ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: consumer, stdio: ["ignore", "pipe", "pipe"], timeout: 180_000 });
  }, 200_000);

  it("imports every entry point (and resolves the worker file)", () => {
    const script = `
      const names = {};
      for (const entry of ["chrysalis-core", "chrysalis-core/pow", "chrysalis-core/auth", "chrysalis-core/node", "chrysalis-core/client"]) {
        names[entry] = Object.keys(await import(entry)).length;
      }
      const { messageId, encodeMessage } = await import("chrysalis-core");
      const { mineNonce } = await import("chrysalis-core/pow");
      const message = encodeMessage({ networkId: 1n, parents: [new Uint8Array(32)], nonce: 0n });
      names.mined = String(await mineNonce(message, { minScore: 10, workers: 1 }));
      names.id = messageId(message);
      names.worker = import.meta.resolve("chrysalis-core/pow/worker.js");
      console.log(JSON.stringify(names));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: consumer, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as Record<string, number | string>;
    for (const entry of ["chrysalis-core", "chrysalis-core/pow", "chrysalis-core/auth", "chrysalis-core/node", "chrysalis-core/client"]) expect(out[entry]).toBeGreaterThanOrEqual(2);
    expect(out.id).toMatch(/^[0-9a-f]{64}$/);
    expect(String(out.worker)).toMatch(/node_modules\/chrysalis-core\/dist\/pow\/worker\.js$/);
  });

  it("chrysalis --help runs from node_modules/.bin", () => {
    const r = spawnSync(join(consumer, "node_modules/.bin/chrysalis"), ["--help"], { cwd: consumer, encoding: "utf8", timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Usage: chrysalis <command>");
  });

  for (const resolution of ["node16", "nodenext", "bundler"] as const) {
    it(`a consumer type-checks under moduleResolution ${resolution}`, () => {
      writeFileSync(
        join(consumer, "consumer.ts"),
        `import { decodeMessage, messageId, ProtocolError, warnings, type Message } from "chrysalis-core";
import { createMiner, type MinerOptions } from "chrysalis-core/pow";
import { createNonce, signNonce } from "chrysalis-core/auth";
import { createNode, serve } from "chrysalis-core/node";
import { ClientError, createClient } from "chrysalis-core/client";

const options: MinerOptions = { workers: 1, workerUrl: "/worker.js" };
const message: Message = decodeMessage(new Uint8Array(60));
const id: string = messageId(message);
const client = createClient("http://127.0.0.1:14265");
const submitted: Promise<string> = client.submitMessage({ payload: null });
const failure: unknown = new ClientError(0, "BAD_RESPONSE", "y");
export const all = [options, id, submitted, failure instanceof ProtocolError, createMiner, createNonce, signNonce, createNode, serve, warnings];
`,
      );
      const module = resolution === "bundler" ? "esnext" : resolution;
      writeFileSync(
        join(consumer, `tsconfig.${resolution}.json`),
        JSON.stringify({
          compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022", "dom"], module, moduleResolution: resolution, skipLibCheck: false, typeRoots: [join(root, "node_modules/@types")], types: ["node"] },
          files: ["consumer.ts"],
        }),
      );
      const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${resolution}.json`], { cwd: consumer, encoding: "utf8", timeout: 120_000 });
      expect(r.stdout + r.stderr).toBe("");
      expect(r.status).toBe(0);
    });
  }

  it("a program importing only the root sees every layer's error codes in ErrorCode and ProtocolError.code", () => {
    writeFileSync(
      join(consumer, "root-only.ts"),
      `import { ProtocolError, type ErrorCode } from "chrysalis-core";

const codes: ErrorCode[] = ["NOT_SORTED", "POW_NOT_FOUND", "TOKEN_EXPIRED", "SHUTTING_DOWN", "BAD_RESPONSE"];
export const isStoreDown = (error: ProtocolError): boolean => error.code === "STORE_UNAVAILABLE";
export const all = [codes];
`,
    );
    writeFileSync(
      join(consumer, "tsconfig.root-only.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022", "dom"], module: "nodenext", moduleResolution: "nodenext", skipLibCheck: false, typeRoots: [join(root, "node_modules/@types")], types: ["node"] },
        files: ["root-only.ts"],
      }),
    );
    const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.root-only.json"], { cwd: consumer, encoding: "utf8", timeout: 120_000 });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("the install holds the package's files and nothing of the build", () => {
    const installed = join(consumer, "node_modules/chrysalis-core");
    expect(existsSync(join(installed, "LICENSE"))).toBe(true);
    expect(existsSync(join(installed, "build"))).toBe(false);
    expect(existsSync(join(installed, "src"))).toBe(false);
  });
});
