// The `chrysalis` command, run as users run it: `node dist/cli/main.js …` (npm test builds dist first).
// Output formats, the vectors, --help on each command, and one-line errors with non-zero exit codes.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadVectors } from "./helpers.js";
import { startServe } from "./serve-process.js";
import { generateIdentityKeyPair } from "../src/auth/index.js";
import { createClient } from "../src/client/index.js";
import { toHex } from "../src/bytes/hex.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(root, "dist/cli/main.js");
const vectors = loadVectors();

function chrysalis(args: string[], input?: string, env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { input: input ?? "", encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL", env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("chrysalis (dist/cli/main.js)", () => {
  it("is built (npm test runs npm run build first)", () => {
    expect(existsSync(bin), `${bin} is missing: run npm run build`).toBe(true);
  });

  it("starts with a #!/usr/bin/env node line", async () => {
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(bin, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  });

  it("--help lists every command; each command has its own --help", () => {
    const top = chrysalis(["--help"]);
    expect(top.code).toBe(0);
    for (const name of ["serve", "demo", "keygen", "auth", "message", "pow", "network-id", "p2p"]) {
      expect(top.stdout).toContain(name);
      const help = chrysalis([name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`chrysalis ${name}`);
    }
  });

  it("network-id gives the vectors' ids", () => {
    for (const v of vectors.networkIds) {
      const r = chrysalis(["network-id", v.name]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(String(v.id));
    }
  });

  it("message decode | encode | id round-trip the vector messages (stdin and file)", () => {
    const dir = mkdtempSync(join(tmpdir(), "chrysalis-cli-"));
    for (const v of vectors.messages) {
      const decoded = chrysalis(["message", "decode"], v.hex);
      expect(decoded.code, decoded.stderr).toBe(0);
      const file = join(dir, "m.json");
      writeFileSync(file, decoded.stdout);
      const encoded = chrysalis(["message", "encode", file]);
      expect(encoded.stdout.trim()).toBe(v.hex.toLowerCase());
      expect(chrysalis(["message", "id"], v.hex).stdout.trim()).toBe(v.messageId);
      expect(chrysalis(["message", "id", file]).stdout.trim()).toBe(v.messageId);
      const valid = chrysalis(["message", "validate"], v.hex);
      expect(valid.code).toBe(0);
      expect(valid.stdout).toContain(`valid ${v.messageId}`);
    }
  });

  it("keygen prints a Base58 seed, a public key, an address and its Bech32; auth sign-nonce signs with it", () => {
    const r = chrysalis(["keygen", "--json", "--hrp", "iota"]);
    expect(r.code).toBe(0);
    const key = JSON.parse(r.stdout);
    expect(key.publicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(key.address).toMatch(/^[0-9a-f]{64}$/);
    expect(key.bech32.startsWith("iota1")).toBe(true);
    const nonce = "0123456789abcdef0123456789abcdef01234567";
    const signed = chrysalis(["auth", "sign-nonce", nonce], undefined, { CHRYSALIS_SECRET_KEY: key.secretKey });
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stdout.trim()).toMatch(/^[0-9a-f]{128}$/);
    expect(signed.stdout).not.toContain(key.secretKey);
  });

  it("pow mines a message and prints it with a score reaching the target", () => {
    const r = chrysalis(["pow", "--min-score", "100", "--workers", "1"], vectors.messages[0].hex);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/mined nonce \d+ in .* score \d+/);
    const validated = chrysalis(["message", "validate", "--min-score", "100"], r.stdout);
    expect(validated.code, validated.stderr).toBe(0);
  });

  it("errors are one line on stderr: exit 1 for rejected input, 2 for usage mistakes", () => {
    const bad = chrysalis(["message", "decode"], "00ff");
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/^chrysalis message: /);
    const trailing = vectors.messages[0].hex + "00";
    expect(chrysalis(["message", "validate"], trailing).code).toBe(1);
    const weak = chrysalis(["message", "validate", "--min-score", "1e12"], vectors.messages[0].hex);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/PoW score \d+ is below/);
    expect(chrysalis(["message", "validate", "--network", "no-such-network"], vectors.messages[0].hex).code).toBe(1);
    expect(chrysalis(["message", "encode"], vectors.messages[0].hex).code).toBe(2);
    expect(chrysalis(["frobnicate"]).code).toBe(2);
    expect(chrysalis(["keygen", "--bogus"]).code).toBe(2);
    expect(chrysalis(["network-id"]).code).toBe(2);
    const badKey = chrysalis(["auth", "sign-nonce", "0123456789abcdef0123456789abcdef01234567"], undefined, { CHRYSALIS_SECRET_KEY: "0OIl-not-base58" });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).not.toContain("0OIl-not-base58");
  });

  it("serve: a node with JWT secret and identity files; prove ownership, submit, stop on SIGTERM (exit 0)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chrysalis-serve-"));
    const keys = generateIdentityKeyPair();
    writeFileSync(join(dir, "ids.json"), JSON.stringify({ "did:iota:cli-test": toHex(keys.publicKey) }));
    writeFileSync(join(dir, "secret"), "a jwt secret for the cli test, 32 bytes or more\n");
    const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--p2p-bind", "/ip4/127.0.0.1/tcp/0", "--network", "chrysalis-cli", "--min-pow-score", "50", "--workers", "1", "--jwt-secret-file", join(dir, "secret"), "--identities", join(dir, "ids.json"), "--data-dir", join(dir, "data")], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      let out = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const m = /listening on (http:\/\/[^ ]+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`serve exited early (${code}): ${out}`)));
      });
      const client = createClient(url);
      expect((await client.getInfo()).networkId).toBe("chrysalis-cli");
      await expect(client.submitMessage({ payload: null })).rejects.toMatchObject({ status: 401 });
      await client.proveOwnership("did:iota:cli-test", keys.secretKey);
      const id = await client.submitMessage({ payload: { type: 2, index: "636c69", data: "" } });
      expect((await client.getMessageRaw(id)).length).toBeGreaterThan(0);
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(out).toContain("stopped");
      expect(out).toContain(`storage: LMDB in ${join(dir, "data")} (new store, no ledger)`);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("chrysalis serve stops gracefully on a signal sent the moment it says it listens", () => {
  it("SIGTERM right after the listening line, 30 times: every run ends with exit 0, never killed by Node's default", async () => {
    const codes: (number | null)[] = [];
    for (let i = 0; i < 30; i++) {
      const node = await startServe(["--in-memory", "--no-p2p", "--no-coordinator", "--no-dashboard"]);
      codes.push(await node.stop());
    }
    expect(codes).toEqual(new Array(30).fill(0));
  }, 120_000);
});
