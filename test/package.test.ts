// The package as users get it: `npm pack`'s tarball holds exactly what an import, the CLI or README reaches, its
// documents link only inside it, it ships no picture (screenshots and charts stay in the repository, where README and
// the guides link them), and installed into a fresh folder it imports from every entry point (without fast-check, an
// optional peer dependency, every one but chrysalis-core/arbitraries; with it, that one too), runs `chrysalis --help`
// and type-checks a consumer under moduleResolution node16, nodenext and bundler. npm installs from its cache
// (--prefer-offline).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "chrysalis-package-"));
const consumer = join(work, "consumer");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
let tarball: string;
let files: string[];

afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Files the package's code reads at run time by a path the walk below cannot see (it follows import specifiers and
 * `new URL("<literal>", import.meta.url)` by itself): package-relative paths, one ending in "/" standing for every
 * file under it. Assets served by the CLI (a dashboard under dist/, say) belong here unless their code names them
 * with such a URL.
 */
const RUNTIME_ASSETS: string[] = [];

// Module specifiers in emitted JavaScript and declarations: static imports and re-exports (`import type` included),
// side-effect imports, dynamic imports and `import("…")` types, triple-slash references.
const SPECIFIERS = [
  /\b(?:import|export)\s[^;'"`]*?\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\/\/\/\s*<reference\s+path=["']([^"']+)["']/g,
];
const RUNTIME_URL = /\bnew URL\(\s*["'`]([^"'`$]+)["'`]\s*,\s*import\.meta\.url\s*\)/g;
/** A picture, by its name: what README and the guides show from the repository, never shipped. */
const IMAGE = /\.(png|svg|jpe?g|gif|webp)$/i;
/** The relative links of a Markdown document (web and mail links and anchors aside), as written. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(([, link]) => link!).filter((link) => !/^(https?:|mailto:|#)/.test(link));
}

/** Every string in an exports / bin value (conditions nest). */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(targets);
  return [];
}

/** Every file under a package-relative folder, package-relative. */
function under(folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [folder];
  return (readdirSync(dir, { recursive: true }) as string[]).map((f) => posix.join(folder, f.split("\\").join("/"))).filter((f) => statSync(join(root, f)).isFile());
}

/**
 * What a user of the package can reach: package.json, README.md, LICENSE; from package.json's exports, main, types
 * and bin, the JavaScript they import transitively (relative specifiers; packages are dependencies) and the files it
 * reads by `new URL(…, import.meta.url)`; the declarations the exports' types import transitively (a .js a user
 * reaches only at run time, the CLI's say, needs none); RUNTIME_ASSETS; every file the shipped Markdown links to,
 * starting from README.md, but pictures (they stay in the repository).
 */
function reachable(): Set<string> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports?: unknown; bin?: unknown; main?: string; types?: string };
  const clean = (path: string): string => posix.normalize(path).replace(/^\.\//, "");
  const reached = new Set<string>();
  const queue = ["package.json", "README.md", "LICENSE", ...[...targets(pkg.exports), ...targets(pkg.bin), pkg.main ?? "", pkg.types ?? ""].filter((t) => t !== "").map(clean)];
  for (const asset of RUNTIME_ASSETS) queue.push(...(asset.endsWith("/") ? under(clean(asset)) : [clean(asset)]));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reached.has(file)) continue;
    reached.add(file);
    if (!existsSync(join(root, file))) continue;
    const here = posix.dirname(file);
    if (/\.(c|m)?js$|\.d\.ts$/.test(file)) {
      const text = readFileSync(join(root, file), "utf8");
      for (const pattern of SPECIFIERS) {
        for (const [, specifier] of text.matchAll(pattern)) {
          if (!specifier!.startsWith(".")) continue;
          const target = clean(posix.join(here, specifier!));
          // A declaration's "./x.js" names the module whose types are ./x.d.ts.
          queue.push(file.endsWith(".d.ts") ? target.replace(/\.js$/, ".d.ts") : target);
        }
      }
      if (!file.endsWith(".d.ts")) {
        for (const [, path] of text.matchAll(RUNTIME_URL)) {
          const target = clean(posix.join(here, path!));
          queue.push(...(path!.endsWith("/") ? under(target) : [target]));
        }
      }
    } else if (file.endsWith(".md")) {
      for (const link of relativeLinks(readFileSync(join(root, file), "utf8"))) {
        const target = clean(posix.join(here, decodeURIComponent(link.split("#")[0]!)));
        if (!IMAGE.test(target)) queue.push(target);
      }
    }
  }
  return reached;
}

beforeAll(() => {
  // npm test has built dist; pack what `files` selects, as `npm publish` would.
  const packed = JSON.parse(execFileSync(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000, killSignal: "SIGKILL" })) as { filename: string; size: number; files: { path: string }[] }[];
  tarball = join(work, packed[0]!.filename);
  files = packed[0]!.files.map((f) => f.path).sort();
  console.log(`${packed[0]!.filename}: ${files.length} files, ${packed[0]!.size} bytes packed`);
}, 120_000);

describe("the tarball ships only what users need", () => {
  it("dist, the dashboard's built assets, the guides and the benchmark report README links to, README, LICENSE and package.json; no maps, .wat, build/ or sources", () => {
    const allowed = /^(dist\/.+\.(js|d\.ts)|dist\/dashboard\/[\w.-]+\.(html|css|svg)|docs\/[\w-]+\.md|bench\/results\/latest\.md|README\.md|LICENSE|package\.json)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    expect(files).toContain("LICENSE");
    expect(files).toContain("dist/pow/worker.js");
    expect(files.some((f) => f.endsWith(".map") || f.endsWith(".wat") || f.startsWith("build/") || f.startsWith("src/"))).toBe(false);
  });

  it("ships no picture: the screenshots and the benchmark chart stay in the repository (the dashboard's icon is code's asset)", () => {
    expect(files.filter((f) => IMAGE.test(f) && !f.startsWith("dist/dashboard/"))).toEqual([]);
    for (const picture of ["docs/dashboard-overview.png", "docs/dashboard-message.png", "bench/results/latest.svg"]) {
      expect(existsSync(join(root, picture)), `${picture} is in the repository`).toBe(true);
      expect(files).not.toContain(picture);
    }
  });

  it("holds exactly what an import, the CLI or README reaches: nothing else, and all of it", () => {
    const reached = reachable();
    expect(files.filter((f) => !reached.has(f)), "packed, but nothing reaches it: exclude it in package.json's files (or add it to RUNTIME_ASSETS if code reads it)").toEqual([]);
    expect([...reached].filter((f) => !files.includes(f)).sort(), "reached, but not in the tarball (or not built)").toEqual([]);
  });

  it("every anchor a shipped document links to is a heading of the document it names", () => {
    // GitHub's anchors: the heading in lower case, without punctuation but hyphens, spaces as hyphens; repeats get -1, -2.
    const anchors = (doc: string): Set<string> => {
      const seen = new Map<string, number>();
      const found = new Set<string>();
      for (const [, heading] of readFileSync(join(root, doc), "utf8").matchAll(/^#{1,6} (.+)$/gm)) {
        const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, "").replace(/ /g, "-");
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        found.add(count === 0 ? slug : `${slug}-${count}`);
      }
      return found;
    };
    const broken: string[] = [];
    for (const doc of files.filter((f) => f.endsWith(".md"))) {
      const base = doc.includes("/") ? doc.slice(0, doc.lastIndexOf("/") + 1) : "";
      for (const [, link] of readFileSync(join(root, doc), "utf8").matchAll(/\]\(([^)\s]*#[^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(link!)) continue;
        const [path, anchor] = link!.split("#") as [string, string];
        const target = path === "" ? doc : decodeURIComponent(new URL(path, `file:///${base}`).pathname.slice(1));
        if (!target.endsWith(".md") || !files.includes(target) || !anchors(target).has(anchor)) broken.push(`${doc} → ${link}`);
      }
    }
    expect(broken).toEqual([]);
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

  it("every relative link in the shipped documents points at a shipped file, and every picture at one in the repository", () => {
    const broken: string[] = [];
    for (const doc of files.filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(join(root, doc), "utf8");
      const base = doc.includes("/") ? doc.slice(0, doc.lastIndexOf("/") + 1) : "";
      for (const target of relativeLinks(text)) {
        const path = decodeURIComponent(new URL(target.split("#")[0]!, `file:///${base}`).pathname.slice(1));
        if (IMAGE.test(path) ? !existsSync(join(root, path)) : !files.includes(path)) broken.push(`${doc} → ${target}`);
      }
      // Nothing outside the package either (the old README pointed at ../shared/PROTOCOL.md).
      if (text.includes("../shared/")) broken.push(`${doc} mentions ../shared/`);
    }
    expect(broken).toEqual([]);
  });
});

/** fast-check beside the package in the consumer, as a user of chrysalis-core/arbitraries installs it (the version this checkout tests with). */
function installFastCheck(): void {
  if (existsSync(join(consumer, "node_modules/fast-check"))) return;
  const version = (JSON.parse(readFileSync(join(root, "node_modules/fast-check/package.json"), "utf8")) as { version: string }).version;
  execFileSync(npm, ["install", `fast-check@${version}`, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: consumer, stdio: ["ignore", "pipe", "pipe"], timeout: 180_000, killSignal: "SIGKILL" });
}

describe("installed into a fresh folder", () => {
  beforeAll(() => {
    execFileSync("mkdir", ["-p", consumer]);
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
    execFileSync(npm, ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: consumer, stdio: ["ignore", "pipe", "pipe"], timeout: 180_000, killSignal: "SIGKILL" });
  }, 200_000);

  it("imports every entry point but chrysalis-core/arbitraries without fast-check, which npm did not install (an optional peer dependency)", () => {
    expect(existsSync(join(consumer, "node_modules/fast-check"))).toBe(false);
    const script = `
      try { await import("chrysalis-core/arbitraries"); console.log("imported"); } catch (error) { console.log(error.code, error.message); }`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: consumer, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^ERR_MODULE_NOT_FOUND .*'fast-check'/);
  });

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
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: consumer, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as Record<string, number | string>;
    for (const entry of ["chrysalis-core", "chrysalis-core/pow", "chrysalis-core/auth", "chrysalis-core/node", "chrysalis-core/client"]) expect(out[entry]).toBeGreaterThanOrEqual(2);
    expect(out.id).toMatch(/^[0-9a-f]{64}$/);
    expect(String(out.worker)).toMatch(/node_modules\/chrysalis-core\/dist\/pow\/worker\.js$/);
  });

  it("with fast-check installed beside it, chrysalis-core/arbitraries draws messages the package decodes", () => {
    installFastCheck();
    const script = `
      const fc = (await import("fast-check")).default;
      const { messageBytes, malformedMessageBytes } = await import("chrysalis-core/arbitraries");
      const { decodeMessage } = await import("chrysalis-core");
      const decoded = fc.sample(messageBytes(), { numRuns: 50, seed: 1 }).map((bytes) => decodeMessage(bytes).parents.length);
      const refused = fc.sample(malformedMessageBytes(), { numRuns: 50, seed: 1 }).filter(({ bytes, rule }) => { try { decodeMessage(bytes); return false; } catch (e) { return e.code === rule.code; } });
      console.log(JSON.stringify({ decoded: decoded.length, refused: refused.length }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: consumer, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ decoded: 50, refused: 50 });
  }, 200_000);

  it("chrysalis --help runs from node_modules/.bin", () => {
    const r = spawnSync(join(consumer, "node_modules/.bin/chrysalis"), ["--help"], { cwd: consumer, encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Usage: chrysalis <command>");
  });

  for (const resolution of ["node16", "nodenext", "bundler"] as const) {
    it(`a consumer type-checks under moduleResolution ${resolution}`, () => {
      installFastCheck();
      writeFileSync(
        join(consumer, "consumer.ts"),
        `import { decodeMessage, messageId, ProtocolError, warnings, type Message } from "chrysalis-core";
import { createMiner, type MinerOptions } from "chrysalis-core/pow";
import { createNonce, signNonce } from "chrysalis-core/auth";
import { createNode, serve } from "chrysalis-core/node";
import { ClientError, createClient } from "chrysalis-core/client";
import { message as messages, signedTransaction, type MalformedMessage } from "chrysalis-core/arbitraries";
import type { Arbitrary } from "fast-check";

const drawn: Arbitrary<Message> = messages({ maxParents: 2, payloads: ["none", "transaction"] });
const signed = signedTransaction().map((t) => t.addressOf(t.payload.essence.inputs[0]!));
const malformed: MalformedMessage | undefined = undefined;
const options: MinerOptions = { workers: 1, workerUrl: "/worker.js" };
const message: Message = decodeMessage(new Uint8Array(60));
const id: string = messageId(message);
const client = createClient("http://127.0.0.1:14265");
const submitted: Promise<string> = client.submitMessage({ payload: null });
const failure: unknown = new ClientError(0, "BAD_RESPONSE", "y");
export const all = [options, id, submitted, failure instanceof ProtocolError, createMiner, createNonce, signNonce, createNode, serve, warnings, drawn, signed, malformed];
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
      const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${resolution}.json`], { cwd: consumer, encoding: "utf8", timeout: 120_000, killSignal: "SIGKILL" });
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
    const r = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.root-only.json"], { cwd: consumer, encoding: "utf8", timeout: 120_000, killSignal: "SIGKILL" });
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
