// The node's libp2p identity (GOSSIP.md §1): Ed25519 kept as Hornet's identity.key (PKCS#8 PEM), the peer id libp2p
// itself derives from it, peer id checks, and `chrysalis p2p identity --out <file> [--json]` as users run it.
import { spawnSync } from "node:child_process";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateKeyPairFromSeed } from "@libp2p/crypto/keys";
import { afterAll, describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { createP2pIdentity, isPeerId, p2pIdentityFromPem, p2pIdentityFromSeed, p2pIdentityToPem, parsePeerId, readP2pIdentityFile, writeP2pIdentityFile } from "../src/node/gossip/index.js";
import { killAll, randomSeed, spawnPeer } from "./gossip-helpers.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(root, "dist/cli/main.js");
const dir = mkdtempSync(join(tmpdir(), "chrysalis-p2p-"));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await killAll();
});

describe("the peer id is libp2p's id of the Ed25519 key", () => {
  it("matches what a libp2p host in another process derives from the same seed", async () => {
    const seed = randomSeed();
    const host = await spawnPeer({ mode: "raw", seed });
    try {
      const identity = p2pIdentityFromSeed(fromHex(seed));
      expect(host.peerId).toBe(identity.peerId);
      expect(identity.peerId).toMatch(/^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/);
    } finally {
      await host.stop();
    }
  });

  it("its public key is @libp2p/crypto's for the same seed", async () => {
    const identity = createP2pIdentity();
    const key = await generateKeyPairFromSeed("Ed25519", identity.seed);
    expect(toHex(key.publicKey.raw)).toBe(toHex(identity.publicKey));
  });
});

describe("the identity file is PKCS#8 PEM, as Hornet's identity.key", () => {
  it("is what node:crypto (and so OpenSSL, and Go's x509) writes for the same key, and reads back to the same identity", () => {
    const identity = createP2pIdentity();
    const pem = p2pIdentityToPem(identity);
    expect(pem.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
    const key = createPrivateKey(pem);
    expect(key.asymmetricKeyType).toBe("ed25519");
    expect(key.export({ format: "pem", type: "pkcs8" })).toBe(pem);
    expect(p2pIdentityFromPem(pem)).toEqual(identity);
  });

  it("reads a key node:crypto generated", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const identity = p2pIdentityFromPem(privateKey.export({ format: "pem", type: "pkcs8" }) as string);
    expect(toHex(identity.publicKey)).toBe(Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("hex"));
  });

  it("refuses another kind of key and what is no PEM, with INVALID_KEY", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    for (const text of [rsa, "not a key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "x".repeat(5000)]) {
      expect(() => p2pIdentityFromPem(text)).toThrow(ProtocolError);
      try {
        p2pIdentityFromPem(text);
      } catch (error) {
        expect((error as ProtocolError).code).toBe("INVALID_KEY");
      }
    }
  });

  it("is written readable by its owner only, and never over an existing file", async () => {
    const file = join(dir, "identity.key");
    const identity = createP2pIdentity();
    await writeP2pIdentityFile(file, identity);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await readP2pIdentityFile(file)).toEqual(identity);
    await expect(writeP2pIdentityFile(file, createP2pIdentity())).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readP2pIdentityFile(file)).toEqual(identity);
  });
});

describe("peer ids", () => {
  it("accepts Ed25519 ids (identity multihash) and hashed ones (SHA2-256, Qm…); refuses anything else", () => {
    expect(isPeerId(createP2pIdentity().peerId)).toBe(true);
    expect(isPeerId("QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N")).toBe(true);
    for (const bad of ["", "12D3KooW", "not-base58-0OIl", "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5", "1".repeat(200), 42]) expect(isPeerId(bad)).toBe(false);
    expect(() => parsePeerId("nope")).toThrow(expect.objectContaining({ code: "INVALID_PEER_ID" }));
  });
});

function chrysalis(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("chrysalis p2p identity --out <file> [--json] (dist/cli/main.js)", () => {
  it("writes a new identity file (0600) and prints its peer id", async () => {
    const file = join(dir, "cli.key");
    const r = chrysalis(["p2p", "identity", "--out", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const identity = await readP2pIdentityFile(file);
    expect(r.stdout).toBe(`${identity.peerId}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("--json prints {peerId, file}", async () => {
    const file = join(dir, "cli-json.key");
    const r = chrysalis(["p2p", "identity", "--out", file, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ peerId: (await readP2pIdentityFile(file)).peerId, file });
  });

  it("refuses to overwrite an existing file: exit 1, one line on stderr, the file untouched", () => {
    const file = join(dir, "existing.key");
    writeFileSync(file, "keep me");
    const r = chrysalis(["p2p", "identity", "--out", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("exists already");
    expect(readFileSync(file, "utf8")).toBe("keep me");
  });

  it("usage mistakes exit 2 with a hint; --help explains the command", () => {
    for (const args of [["p2p"], ["p2p", "identity"], ["p2p", "keys", "--out", "x"], ["p2p", "identity", "--out", join(dir, "y"), "--bogus"]]) {
      const r = chrysalis(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("(see chrysalis p2p --help)");
    }
    const help = chrysalis(["p2p", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("chrysalis p2p identity --out <file> [--json]");
  });
});
