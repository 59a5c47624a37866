// `npm run build`, after tsc: bundles the dashboard (src/dashboard, a client of the node) with esbuild into
// dist/dashboard: index.html and its script and style sheet under content-hashed names (served with a year's caching;
// index.html is revalidated). `chrysalis serve` serves that folder at /dashboard/ (src/node/dashboard.ts).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = join(root, "src/dashboard");

/** Builds the dashboard into `outdir` (emptied first); resolves with the files written and their sizes in bytes. */
export async function buildDashboard(outdir = join(root, "dist/dashboard")) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(source, "main.ts"), style: join(source, "style.css") },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    entryNames: "[name]-[hash]",
    outdir,
    metafile: true,
    logLevel: "silent",
  });
  if (result.warnings.length > 0) throw new Error(`esbuild warned while bundling the dashboard: ${result.warnings.map((w) => w.text).join("; ")}`);
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.startsWith("app-") && name.endsWith(".js"));
  const style = outputs.find((name) => name.startsWith("style-") && name.endsWith(".css"));
  if (script === undefined || style === undefined) throw new Error(`the dashboard build wrote no script or style sheet: ${outputs.join(", ")}`);
  const html = readFileSync(join(source, "index.html"), "utf8").replace("{{script}}", script).replace("{{style}}", style);
  writeFileSync(join(outdir, "index.html"), html);
  copyFileSync(join(source, "icon.svg"), join(outdir, "icon.svg"));
  const files = {};
  for (const name of ["index.html", script, style, "icon.svg"]) files[name] = readFileSync(join(outdir, name)).length;
  return { outdir, files };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { outdir, files } = await buildDashboard(process.argv[2]);
  console.log(`dashboard: ${Object.entries(files).map(([name, size]) => `${name} ${size} B`).join(", ")} in ${outdir}`);
}
