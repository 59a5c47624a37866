// The browser suite's parts: Debian's Chromium (never a browser downloaded by npm), the test page bundled by esbuild
// (plain and minified) from the built package, and a loopback server that serves it under a chosen
// Content-Security-Policy, with or without cross-origin isolation.
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

// The repository root: the nearest folder above this file with a package.json (the suite runs from test/browser/, the
// browser bench from its compiled copy in .bench/test/browser/).
const root = ((): string => {
  let url = new URL(".", import.meta.url);
  while (!existsSync(fileURLToPath(new URL("package.json", url))) && url.pathname !== "/") url = new URL("..", url);
  return fileURLToPath(url);
})();

/** CHROMIUM_PATH, else Debian's package (`apt-get install -y chromium`); undefined when neither is there. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium"].filter((p): p is string => p !== undefined && p !== "");
  return candidates.find((path) => existsSync(path));
}

/** How this machine's Chromium runs headless (see the machine notes): no sandbox as root, no background traffic. */
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** The page policies: (a) strict but complete, (b) no WebAssembly, (c) no blob: workers; "none" sends no CSP. */
export const POLICIES = {
  a: "script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:",
  b: "script-src 'self'; worker-src 'self' blob:",
  c: "script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'",
  none: undefined,
} as const;
export type PolicyName = keyof typeof POLICIES;

export interface Bundles {
  plain: string;
  minified: string;
}

/** test/browser/app.ts and what it imports from dist, as one ES module each way, with esbuild's warnings. */
export async function bundleApp(): Promise<Bundles & { warnings: string[] }> {
  const warnings: string[] = [];
  const one = async (minify: boolean): Promise<string> => {
    const result = await build({
      entryPoints: [`${root}test/browser/app.ts`],
      bundle: true,
      minify,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      logLevel: "silent",
    });
    warnings.push(...result.warnings.map((w) => w.text));
    return result.outputFiles[0]!.text;
  };
  return { plain: await one(false), minified: await one(true), warnings };
}

// Registered by a classic script before the module runs, so that what the library does while it loads is heard too.
const LISTEN = `window.violations = [];
addEventListener("securitypolicyviolation", (e) => {
  violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile, line: e.lineNumber });
});`;

export interface PageServer {
  /** http://127.0.0.1:PORT/<policy>/<iso|plain>/<page>.html: `page` "index" (plain bundle) or "min" (minified). */
  url(policy: PolicyName, isolated: boolean, page?: "index" | "min"): string;
  close(): Promise<void>;
}

/**
 * Serves the pages and scripts on 127.0.0.1 (an ephemeral port). Every answer under /<policy>/<iso|plain>/ carries
 * that policy, and with iso the COOP/COEP pair that makes the page cross-origin isolated: a worker script loaded
 * from a URL takes its policy from its own answer, so the worker file gets the same headers as the page.
 */
export async function startPageServer(bundles: Bundles): Promise<PageServer> {
  const worker = readFileSync(`${root}dist/pow/worker.js`, "utf8");
  const files: Record<string, { type: string; body: string }> = {
    "index.html": { type: "text/html", body: `<!doctype html><meta charset="utf-8"><title>chrysalis-core</title><script src="listen.js"></script><script type="module" src="app.js"></script>` },
    "min.html": { type: "text/html", body: `<!doctype html><meta charset="utf-8"><title>chrysalis-core (minified)</title><script src="listen.js"></script><script type="module" src="app.min.js"></script>` },
    "listen.js": { type: "text/javascript", body: LISTEN },
    "app.js": { type: "text/javascript", body: bundles.plain },
    "app.min.js": { type: "text/javascript", body: bundles.minified },
    "worker.js": { type: "text/javascript", body: worker },
  };
  const server: Server = createServer((request, response) => {
    const [, policy, mode, name] = /^\/([a-z]+)\/(iso|plain)\/([\w.-]+)$/.exec(new URL(request.url ?? "/", "http://x").pathname) ?? [];
    const file = name !== undefined ? files[name] : undefined;
    if (file === undefined || policy === undefined || !(policy in POLICIES)) {
      response.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = { "content-type": `${file.type}; charset=utf-8`, "cache-control": "no-store" };
    const csp = POLICIES[policy as PolicyName];
    if (csp !== undefined) headers["content-security-policy"] = csp;
    if (mode === "iso") {
      headers["cross-origin-opener-policy"] = "same-origin";
      headers["cross-origin-embedder-policy"] = "require-corp";
    }
    response.writeHead(200, headers).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (policy, isolated, page = "index") => `http://127.0.0.1:${port}/${policy}/${isolated ? "iso" : "plain"}/${page}.html`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
