// The dashboard part (Hornet's dashboard plugin, one job): serves the dashboard's built files (dist/dashboard, made by
// scripts/build-dashboard.mjs from src/dashboard) at /dashboard/ from the node's own origin. The page itself is a client
// of the node like any other (REST and MQTT); nothing here reads the node or its store.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Answer, errorAnswer, type Route } from "./http/router.js";

export interface DashboardOptions {
  /** The folder holding the built files (index.html and its hashed assets). Default: dist/dashboard beside this module. */
  directory?: string | URL;
}

/**
 * What the page may do: its own scripts (and WebAssembly: the library's BLAKE2b runs as WebAssembly where allowed), its
 * own styles, fetch and WebSocket to the node's origin; no inline script or style, no eval, no frames, no forms, no
 * other origin.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  json: "application/json; charset=utf-8",
};

// Only these are worth compressing; the page's files are all small text, compressed once at start.
const COMPRESSIBLE = new Set(["html", "js", "css", "svg", "json"]);

interface Asset {
  readonly type: string;
  readonly body: Uint8Array;
  readonly gzip: Uint8Array | undefined;
  readonly etag: string;
  /** index.html is revalidated each load (it names the current assets); the assets' names carry their content hash. */
  readonly cacheControl: string;
}

/** The folder the build writes to, as seen from this module (dist/node/dashboard.js → dist/dashboard/). */
export function defaultDashboardDirectory(): string {
  return fileURLToPath(new URL("../dashboard/", import.meta.url));
}

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
} as const;

function loadAssets(directory: string): Map<string, Asset> {
  if (!existsSync(join(directory, "index.html"))) {
    throw new Error(`the dashboard's files are missing in ${directory} (built by npm run build); start with --no-dashboard to serve without it`);
  }
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(directory)) {
    const extension = name.slice(name.lastIndexOf(".") + 1);
    const type = TYPES[extension];
    if (type === undefined) continue;
    const body = new Uint8Array(readFileSync(join(directory, name)));
    const gzip = COMPRESSIBLE.has(extension) ? new Uint8Array(gzipSync(body, { level: 9 })) : undefined;
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    const cacheControl = name === "index.html" ? "no-cache" : "public, max-age=31536000, immutable";
    assets.set(name, { type, body, gzip: gzip !== undefined && gzip.length < body.length ? gzip : undefined, etag, cacheControl });
  }
  return assets;
}

/** Whether an If-None-Match header names this ETag (or is "*"). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

/** Whether the client takes gzip (Accept-Encoding names it with a q above 0). */
function acceptsGzip(acceptEncoding: string | null): boolean {
  if (acceptEncoding === null) return false;
  return acceptEncoding.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * The dashboard's route: GET/HEAD /dashboard/ (index.html) and /dashboard/<file>, with the page's policy, its content
 * type, ETag (304 on If-None-Match), caching (no-cache for index.html, a year for the hashed assets) and gzip when the
 * client takes it. The files are read and compressed once, at start: a folder without index.html is a start-up error.
 */
export function dashboardRoutes(options: DashboardOptions = {}): Route[] {
  const given = options.directory;
  const directory = given === undefined ? defaultDashboardDirectory() : given instanceof URL ? fileURLToPath(given) : given;
  const assets = loadAssets(directory);
  return [
    {
      name: "dashboard",
      // The router has taken any trailing slash off: "/dashboard/" arrives as "/dashboard".
      pattern: /^\/dashboard(?:\/([A-Za-z0-9._-]+))?$/,
      headers: SECURITY_HEADERS,
      methods: {
        GET: async ({ params: [file], request, url }) => {
          // Without the slash, the page's relative links would resolve against "/": send the browser to /dashboard/.
          if (file === undefined && url.pathname === "/dashboard") return new Answer(308, { location: "/dashboard/", "content-length": "0" }, null);
          const asset = assets.get(file ?? "index.html");
          if (asset === undefined) return errorAnswer(404, `no dashboard file ${String(file).slice(0, 100)}`, { reason: "NOT_FOUND" });
          const headers: Record<string, string> = { "content-type": asset.type, "cache-control": asset.cacheControl, etag: asset.etag, vary: "accept-encoding" };
          if (matches(request.headers.get("if-none-match"), asset.etag)) return new Answer(304, headers, null);
          if (asset.gzip !== undefined && acceptsGzip(request.headers.get("accept-encoding"))) {
            return new Answer(200, { ...headers, "content-encoding": "gzip" }, asset.gzip);
          }
          return new Answer(200, headers, asset.body);
        },
      },
    },
  ];
}
