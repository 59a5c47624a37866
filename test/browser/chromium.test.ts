// The package in a real browser: Debian's Chromium driven by playwright-core, pages bundled by esbuild from dist
// (plain and minified) and served on loopback under chosen headers. Results are compared with Node's own.
// Without Chromium (CHROMIUM_PATH or /usr/bin/chromium) the suite is skipped with one printed line; .ci/run installs it.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bech32Address, blake2b256, decodeMessage, ed25519PublicKey, encodeMessage, messageId, messageToJson, networkId, signEd25519 } from "../../src/index.js";
import { toHex } from "../../src/bytes/hex.js";
import { malformedMessageBytes, messageBytes, signedTransaction } from "../../src/arbitraries/index.js";
import { encodeMessage as encode, encodeTransactionPayload } from "../../src/model/codec.js";
import { verifyTransactionSignatures } from "../../src/model/transaction.js";
import { powScore } from "../../src/pow/index.js";
import { startNode, type Running } from "../node-helpers.js";
import { loadVectors } from "../helpers.js";
import type { ChrysalisTestApi, VectorInput } from "./app.js";
import { bundleApp, CHROMIUM_ARGS, findChromium, startPageServer, type PageServer, type PolicyName } from "./harness.js";

const executable = findChromium();
if (executable === undefined) console.log("browser suite skipped: no Chromium (set CHROMIUM_PATH or apt-get install -y chromium)");

const root = fileURLToPath(new URL("../..", import.meta.url));
const vectors = loadVectors();

interface Violation {
  directive: string;
  blocked: string;
  sample: string;
  source: string;
  line: number;
}

/** A page open on the test server, its uncaught errors and console errors collected. */
interface OpenPage {
  page: Page;
  errors: string[];
  call<K extends keyof ChrysalisTestApi>(name: K, ...args: Parameters<ChrysalisTestApi[K]>): Promise<Awaited<ReturnType<ChrysalisTestApi[K]>>>;
  violations(): Promise<Violation[]>;
}

/** A message with zero nonce (the miner replaces it): 2 parents, an indexation payload. */
function messageToMine(text: string): string {
  return toHex(
    encode({
      networkId: networkId("chrysalis-browser"),
      parents: [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)],
      payload: { type: 2, index: new TextEncoder().encode(text), data: new Uint8Array(0) },
      nonce: 0n,
    }),
  );
}

const inputs: VectorInput = {
  messages: (vectors.messages as { hex: string }[]).map((m) => m.hex),
  hashInputs: ["", "616263", "00".repeat(32), "ab".repeat(300), "5a".repeat(32 * 1024)],
  seeds: ["00".repeat(32), "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "ff".repeat(32)],
  networks: ["chrysalis-mainnet", "testnet", ""],
};

/** What Node computes for the same inputs: the page's answers must equal these. */
function nodeResults(): ReturnType<ChrysalisTestApi["vectors"]> {
  return {
    messages: inputs.messages.map((hex) => {
      const bytes = Uint8Array.from(Buffer.from(hex, "hex"));
      return { json: messageToJson(decodeMessage(bytes)), reencoded: toHex(encodeMessage(decodeMessage(bytes))), id: messageId(bytes) };
    }),
    hashes: inputs.hashInputs.map((hex) => toHex(blake2b256(Uint8Array.from(Buffer.from(hex, "hex"))))),
    signatures: inputs.seeds.map((seedHex) => {
      const seed = Uint8Array.from(Buffer.from(seedHex, "hex"));
      const publicKey = ed25519PublicKey(seed);
      const signature = signEd25519(seed, new TextEncoder().encode("chrysalis in a browser"));
      return { publicKey: toHex(publicKey), signature: toHex(signature), valid: true, tamperedValid: false, bech32: bech32Address("iota", publicKey) };
    }),
    networkIds: inputs.networks.map((name) => networkId(name).toString()),
  };
}

/** What the page's `arbitraries` call must answer: the same draws from the same seed, refused and verified alike. */
function nodeArbitraries(seed: number, runs: number): ReturnType<ChrysalisTestApi["arbitraries"]> {
  const codeOf = (bytes: Uint8Array): string => {
    try {
      decodeMessage(bytes);
      return "accepted";
    } catch (error) {
      return (error as { code: string }).code;
    }
  };
  return {
    messages: fc.sample(messageBytes(), { numRuns: runs, seed }).map((bytes) => ({ hex: toHex(bytes), code: "accepted" })),
    malformed: fc.sample(malformedMessageBytes(), { numRuns: runs, seed }).map(({ bytes, rule }) => ({ hex: toHex(bytes), rule: rule.name, expected: rule.code, code: codeOf(bytes) })),
    signed: fc.sample(signedTransaction({ maxInputs: 8 }), { numRuns: 5, seed }).map((t) => ({ hex: toHex(encodeTransactionPayload(t.payload)), valid: verifyTransactionSignatures(t.payload, (input) => t.addressOf(input)).valid })),
  };
}

const fmt = (rate: number): string => `${(rate / 1e6).toFixed(2)} M H/s`;

describe.skipIf(executable === undefined)("in Chromium", () => {
  let browser: Browser;
  let server: PageServer;
  let node: Running;
  let bundleWarnings: string[];
  const open: Page[] = [];

  beforeAll(async () => {
    const bundles = await bundleApp();
    bundleWarnings = bundles.warnings;
    server = await startPageServer(bundles);
    // A node with prove-ownership and CORS for the page's origin (another port: a cross-origin client).
    node = await startNode({ network: "chrysalis-browser", minPoWScore: 100, pow: { workers: 1 }, auth: true, handler: { cors: "*" } });
    browser = await chromium.launch({ executablePath: executable!, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    for (const page of open) await page.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await node?.close();
  });

  async function openPage(policy: PolicyName, isolated: boolean, page: "index" | "min" = "index"): Promise<OpenPage> {
    const p = await browser.newPage();
    open.push(p);
    const errors: string[] = [];
    p.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
    await p.goto(server.url(policy, isolated, page));
    await p.waitForFunction(() => "chrysalisTest" in globalThis, undefined, { timeout: 30_000 });
    return {
      page: p,
      errors,
      call: (name, ...args) => p.evaluate(([n, a]) => (globalThis as unknown as { chrysalisTest: Record<string, (...x: unknown[]) => unknown> }).chrysalisTest[n as string]!(...(a as unknown[])), [name, args] as const) as never,
      violations: () => p.evaluate(() => (globalThis as unknown as { violations: Violation[] }).violations),
    };
  }

  it("esbuild bundles the page from dist without warnings, plain and minified", () => {
    expect(bundleWarnings).toEqual([]);
  });

  describe("results equal Node's", () => {
    for (const page of ["index", "min"] as const) {
      it(`codec, ids, BLAKE2b-256, Ed25519 and Bech32 (${page === "index" ? "plain" : "minified"} bundle)`, async () => {
        const p = await openPage("a", false, page);
        const env = await p.call("environment");
        expect(env.blake2bBackend).toBe("wasm");
        expect(await p.call("vectors", inputs)).toEqual(nodeResults());
        expect(p.errors).toEqual([]);
      });
    }
  });

  describe("chrysalis-core/arbitraries in a page", () => {
    it("draws from a seed exactly what Node draws; the page decodes the valid messages, refuses each malformed one with its rule's code and verifies the signed transactions", async () => {
      const p = await openPage("a", true, "min");
      const page = await p.call("arbitraries", 9, 40);
      expect(page).toEqual(nodeArbitraries(9, 40));
      expect(page.malformed.every((m) => m.code === m.expected)).toBe(true);
      expect(page.signed.every((t) => t.valid)).toBe(true);
      expect(p.errors).toEqual([]);
    });
  });

  describe("mining in a cross-origin isolated and a non-isolated page", () => {
    it("both mine a valid nonce with the SIMD kernel, and both report a hash rate (their ratio is measured by npm run bench)", async () => {
      const isolated = await openPage("none", true, "min");
      const plain = await openPage("none", false, "min");
      expect((await isolated.call("environment")).crossOriginIsolated).toBe(true);
      const env = await plain.call("environment");
      expect(env).toMatchObject({ crossOriginIsolated: false, sharedArrayBuffer: false });
      const message = messageToMine("isolation");
      for (const p of [isolated, plain]) {
        const mined = await p.call("mine", message, 1000, { workers: 2 });
        const bytes = Uint8Array.from(Buffer.from(message, "hex"));
        new DataView(bytes.buffer).setBigUint64(bytes.length - 8, BigInt(mined.nonce), true);
        expect(powScore(bytes)).toBeGreaterThanOrEqual(1000);
        expect(mined.score).toBe(powScore(bytes));
        expect(mined.kernel).toBe("simd");
        // A rate is reported after the warm-up; how fast is the bench's question (bench/browser.bench.ts), not a test's.
        const { rate, kernel } = await p.call("hashRate", 1, 500, 200);
        expect(rate).toBeGreaterThan(0);
        expect(kernel).toBe("simd");
      }
      expect(isolated.errors.concat(plain.errors)).toEqual([]);
    }, 120_000);

    for (const isolated of [true, false]) {
      it(`an abort rejects within 2 s and leaves no worker hashing (${isolated ? "isolated" : "not isolated"})`, async () => {
        const p = await openPage("none", isolated);
        const r = await p.call("abort", 2, 500);
        expect(r.busyBefore).toBe(true);
        expect(r.hashesBefore).toBeGreaterThan(0);
        expect(r.error.name).toBe("AbortError");
        expect(r.ms).toBeLessThan(2000);
        expect(r.busyAfter).toBe(false);
        expect(r.hashesLater).toBe(r.hashesAtStop);
        expect(r.workers).toBe(2);
        expect(BigInt(r.next) >= 0n).toBe(true);
      });
    }
  });

  describe("the client against a node with CORS: prove ownership, submit, read back", () => {
    it("works from a page (node-side and local PoW), and a bad key is the client's error", async () => {
      const p = await openPage("a", false);
      const r = await p.call("client", node.url, node.identity.id, node.identity.secretKey);
      expect(r.jwt.split(".")).toHaveLength(3);
      expect(await node.node.store.get(r.remote)).toBeDefined();
      const stored = await node.node.store.get(r.local);
      expect(stored).toBeDefined();
      expect(r.rawId).toBe(r.local);
      expect(r.rawScore).toBeGreaterThanOrEqual(100);
      expect(r.json.payload).toEqual({ type: 2, index: toHex(new TextEncoder().encode("from a browser")), data: "6c6f63616c" });
      expect(r.badKey).toMatchObject({ name: "ClientError", code: "INVALID_SECRET_KEY" });
      expect(p.errors).toEqual([]);
    });
  });

  describe("Content-Security-Policy", () => {
    it("(a) script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob: — everything works, with zero violation reports", async () => {
      const p = await openPage("a", false, "min");
      expect((await p.call("environment")).blake2bBackend).toBe("wasm");
      expect(await p.call("vectors", inputs)).toEqual(nodeResults());
      const mined = await p.call("mine", messageToMine("csp a"), 1000, { workers: 2 });
      expect(mined.kernel).toBe("simd");
      expect(mined.score).toBeGreaterThanOrEqual(1000);
      await p.call("client", node.url, node.identity.id, node.identity.secretKey);
      expect(await p.call("warnings")).toEqual([]);
      const violations = await p.violations();
      expect(violations).toEqual([]);
      expect(p.errors).toEqual([]);
    });

    it("(b) no 'wasm-unsafe-eval' — hashing and PoW run on the JavaScript fallback, slower, with warning events and no error", async () => {
      const p = await openPage("b", false);
      expect((await p.call("environment")).blake2bBackend).toBe("js");
      expect(await p.call("vectors", inputs)).toEqual(nodeResults());
      const mined = await p.call("mine", messageToMine("csp b"), 100, { workers: 2 });
      expect(mined.kernel).toBe("js");
      expect(mined.score).toBeGreaterThanOrEqual(100);
      const fallback = await p.call("hashRate", 1, 1500, 300);
      const wasm = await (await openPage("a", false)).call("hashRate", 1, 1500, 300);
      console.log(`hash rate, 1 worker: JavaScript fallback ${fmt(fallback.rate)} (CSP without 'wasm-unsafe-eval'), WASM ${fmt(wasm.rate)} (${(wasm.rate / fallback.rate).toFixed(1)}× faster)`);
      expect(fallback.kernel).toBe("js");
      expect(fallback.rate).toBeLessThan(wasm.rate);
      const heard = await p.call("warnings");
      expect(heard.map((w) => w.component).sort()).toEqual(["blake2b", "pow"]);
      expect(heard.every((w) => w.code === "WASM_UNAVAILABLE")).toBe(true);
      expect(p.errors).toEqual([]);
    }, 60_000);

    it("(c) no blob: workers — mining fails naming the directive to add, and works from the shipped worker.js on 'self'", async () => {
      const p = await openPage("c", false);
      const failure = await p.call("mineFailure", messageToMine("csp c"), 100, { workers: 2 });
      expect(failure.code).toBe("POW_WORKER_FAILED");
      expect(failure.message).toContain("worker-src");
      expect(failure.message).toContain("blob:");
      expect(failure.message).toContain("workerUrl");
      const mined = await p.call("mine", messageToMine("csp c"), 1000, { workers: 2, workerUrl: "worker.js" });
      expect(mined.kernel).toBe("simd");
      expect(mined.score).toBeGreaterThanOrEqual(1000);
      expect(p.errors).toEqual([]);
    });
  });
});
