// The command line's failures, one rule each: a complete one-line message naming what failed, the exit code that
// says whose mistake it was (1 input or operation, 2 usage, 130 Ctrl-C), and the pow progress line.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { progressLine } from "../src/cli/commands.js";
import { encodeMessage } from "../src/model/codec.js";
import { networkId } from "../src/model/ids.js";
import { toHex } from "../src/bytes/hex.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(root, "dist/cli/main.js");
const dir = mkdtempSync(join(tmpdir(), "chrysalis-cli-errors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function chrysalis(args: string[], input = ""): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { input, encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The one stderr line, checked to be one line. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

const devnetMessage = toHex(encodeMessage({ networkId: networkId("chrysalis-devnet"), parents: [new Uint8Array(32)], nonce: 0n }));

describe("a message names what it expected and what it got", () => {
  it("a missing field is 'nothing', never 'a undefined'", () => {
    const r = chrysalis(["message", "encode"], "{}");
    expect(r.code).toBe(1);
    const line = oneLine(r.stderr);
    expect(line).not.toContain("a undefined");
    expect(line).toBe("chrysalis message: expected a decimal string, got nothing (the field is missing) (at networkId)");
  });

  it("a JSON syntax error is the whole sentence on one line, the quoted input's newlines escaped", () => {
    const r = chrysalis(["message", "encode"], '{"networkId":\n  x}');
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(`chrysalis message: malformed JSON: Unexpected token 'x', "{"networkId":\\n x}" is not valid JSON`);
  });
});

describe("a file that cannot be read is named, and that is a failure (exit 1), not a usage mistake (exit 2)", () => {
  it("the input file", () => {
    const missing = join(dir, "no-such-message.json");
    const r = chrysalis(["message", "id", missing]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(`chrysalis message: cannot read the input file ${JSON.stringify(missing)}: no such file (ENOENT)`);
  });

  it("the secret key file, and a directory given as a file", () => {
    const missing = join(dir, "no-such-key");
    const r = chrysalis(["auth", "sign-nonce", "0123456789abcdef0123456789abcdef01234567", "--secret-key-file", missing]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain(`cannot read the secret key file ${JSON.stringify(missing)}: no such file (ENOENT)`);
    const folder = chrysalis(["message", "decode", dir]);
    expect(folder.code).toBe(1);
    expect(oneLine(folder.stderr)).toContain(`${JSON.stringify(dir)}: it is a directory (EISDIR)`);
  });
});

describe("keygen --hrp takes only the Chrysalis human-readable parts", () => {
  it("iota and atoi are accepted; anything else is a usage mistake", () => {
    expect(JSON.parse(chrysalis(["keygen", "--json", "--hrp", "atoi"]).stdout).bech32).toMatch(/^atoi1/);
    const r = chrysalis(["keygen", "--hrp", "foo"]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain('--hrp is iota (mainnet) or atoi (test networks), not "foo"');
    expect(r.stdout).toBe("");
  });
});

describe("serve's limit flags are checked before anything starts", () => {
  it("a --trust-proxy that is not an address or a CIDR block is a usage mistake naming it", () => {
    for (const bad of ["foo", "10.0.0.0/33", "::1/129"]) {
      const r = chrysalis(["serve", "--in-memory", "--port", "0", "--trust-proxy", `127.0.0.1,${bad}`]);
      expect(r.code).toBe(2);
      expect(oneLine(r.stderr)).toContain(`trusted proxy ${JSON.stringify(bad)} is not an address or a CIDR block`);
    }
  });
});

describe("message --network and --min-score check the message in every action", () => {
  it("decode, id and encode refuse another network's message; the right network passes", () => {
    for (const action of ["decode", "id", "validate"]) {
      const r = chrysalis(["message", action, "--network", "chrysalis-mainnet"], devnetMessage);
      expect(r.code, action).toBe(1);
      expect(oneLine(r.stderr)).toContain("is not chrysalis-mainnet's");
      expect(r.stdout).toBe("");
      expect(chrysalis(["message", action, "--network", "chrysalis-devnet"], devnetMessage).code).toBe(0);
    }
    const json = chrysalis(["message", "decode"], devnetMessage).stdout;
    expect(chrysalis(["message", "encode", "--network", "chrysalis-mainnet"], json).code).toBe(1);
    expect(chrysalis(["message", "decode", "--min-score", "1e12"], devnetMessage).code).toBe(1);
    expect(chrysalis(["message", "decode", "--min-score", "lots"], devnetMessage).code).toBe(2);
  });
});

describe("pow: the progress line", () => {
  it("the remaining time counts down as hashes are done at a steady rate, then says any moment", () => {
    const rate = 1e6; // hashes per second
    const remaining = [1, 2, 3, 4].map((s) => progressLine(rate * s, 1000 * s, 15)); // 3^15 ≈ 14.3 M expected
    const seconds = remaining.map((line) => Number(/~([\d.]+) s remaining/.exec(line)?.[1]));
    expect(seconds).toEqual([13.3, 12.3, 11.3, 10.3]);
    expect(progressLine(2e7, 20_000, 15)).toContain("past the expected count: any moment now");
    expect(progressLine(0, 0, 15)).toContain("remaining time not known yet");
  });

  it("Ctrl-C in a terminal clears the progress line, prints one line and exits 130", async () => {
    // A real terminal: script(1) runs the command on a pseudo-terminal, and a 0x03 byte written to it is Ctrl-C.
    const file = join(dir, "unminable.hex");
    writeFileSync(file, devnetMessage);
    const child = spawn("script", ["-qefc", `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} pow ${JSON.stringify(file)} --min-score 1e15 --workers 1`, "/dev/null"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    try {
      await new Promise<void>((resolve) => {
        child.stdout.on("data", (chunk: Buffer) => {
          screen += chunk.toString();
          if (screen.includes("mining:")) resolve();
        });
      });
      child.stdin.write("\x03");
      expect(await exited).toBe(130);
    } finally {
      clearTimeout(timer);
    }
    // What the terminal shows: each line's text after its last carriage return, with "clear to end of line" applied.
    const shown = screen.split("\n").map((line) => line.split("\r").filter((part) => part !== "").at(-1) ?? "").map((line) => line.replace(/\x1b\[K/g, ""));
    const last = shown.filter((line) => line.trim() !== "").at(-1)!;
    expect(last).toMatch(/^chrysalis pow: interrupted \(Ctrl-C\) after [\d.]+ [kMG]? ?hashes; nothing was mined$/);
  });
});
