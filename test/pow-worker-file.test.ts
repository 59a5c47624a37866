// dist/pow/worker.js (the package's chrysalis-core/pow/worker.js) loaded where it does not belong: imported in Node's
// main thread, or run by a page as a classic or module script, it throws at once an error saying how to load it,
// instead of a TypeError about a null port later. Loaded as it should be (a worker thread, a Web Worker) it still
// answers the miner's init. The page half needs Chromium (CHROMIUM_PATH or /usr/bin/chromium) and is skipped without.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker as ThreadWorker } from "node:worker_threads";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_ARGS, findChromium } from "./browser/harness.js";

const file = fileURLToPath(new URL("../dist/pow/worker.js", import.meta.url));
const HOW = /load it with new Worker\(url\).*createMiner\(\{ workerUrl \}\).*node:worker_threads/;

describe("chrysalis-core/pow/worker.js in Node", () => {
  it("is built (npm run build)", () => {
    expect(existsSync(file)).toBe(true);
  });

  it("imported in the main thread, the import rejects with how to load the file", () => {
    // A fresh process: no test runner around it, as a user's `await import(...)` would run.
    const script = `try { await import(${JSON.stringify(pathToFileURL(file).href)}); console.log("imported"); } catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const thrown = JSON.parse(r.stdout) as { name: string; message: string };
    expect(thrown.name).toBe("Error");
    expect(thrown.message).toMatch(/main thread/);
    expect(thrown.message).toMatch(HOW);
    expect(thrown.message).not.toMatch(/Cannot read properties/);
  });

  it("run as a script (node worker.js), it exits 1 with that error and nothing about null", () => {
    const r = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(HOW);
    expect(r.stderr).not.toMatch(/Cannot read properties of null/);
  });

  it("started with new Worker(url) from node:worker_threads, it answers init with ready", async () => {
    const worker = new ThreadWorker(pathToFileURL(file));
    try {
      const ready = new Promise<unknown>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
      worker.postMessage({ type: "init" });
      expect(await ready).toEqual({ type: "ready", kernel: "js" });
    } finally {
      await worker.terminate();
    }
  });
});

const executable = findChromium();
if (executable === undefined) console.log("worker.js page checks skipped: no Chromium (set CHROMIUM_PATH or apt-get install -y chromium)");

describe.skipIf(executable === undefined)("chrysalis-core/pow/worker.js in Chromium", () => {
  let browser: Browser;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    const worker = readFileSync(file, "utf8");
    const pages: Record<string, string> = {
      "/classic.html": `<!doctype html><meta charset="utf-8"><script src="worker.js"></script>`,
      "/module.html": `<!doctype html><meta charset="utf-8"><script type="module" src="worker.js"></script>`,
      "/worker.html": `<!doctype html><meta charset="utf-8"><title>worker</title>`,
    };
    server = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://x").pathname;
      if (path === "/worker.js") response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(worker);
      else if (pages[path] !== undefined) response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(pages[path]);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: executable!, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  for (const kind of ["classic", "module"] as const) {
    it(`loaded by a page as a ${kind} script, it throws how to load the file`, async () => {
      const page = await browser.newPage();
      try {
        const errors: string[] = [];
        page.on("pageerror", (error) => errors.push(error.message));
        await page.goto(`${origin}/${kind}.html`, { waitUntil: "load" });
        // Give an asynchronous failure (the old code's rejected import) the time to show up too.
        await page.waitForTimeout(200);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatch(/outside a worker/);
        expect(errors[0]).toMatch(HOW);
      } finally {
        await page.close();
      }
    });
  }

  it("started by a page with new Worker(url), it answers init with ready", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/worker.html`);
      const answer = await page.evaluate(
        () =>
          new Promise<unknown>((resolve, reject) => {
            const worker = new Worker("worker.js");
            worker.onmessage = (event) => resolve(event.data);
            worker.onerror = (event) => reject(new Error(event.message));
            worker.postMessage({ type: "init" });
          }),
      );
      expect(answer).toEqual({ type: "ready", kernel: "js" });
    } finally {
      await page.close();
    }
  });
});
