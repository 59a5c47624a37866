// A node that runs for months, through the built CLI (dist/cli/main.js) as an operator runs it: serve's pruning and
// snapshot flags and their usage errors, `db stats --json`, `db verify`, `db compact`, and `snapshot create` on a store
// a node is serving from, then `serve --snapshot` starting a new store whose coordinator continues at the next index.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { bech32Address } from "../src/crypto/index.js";
import { MIN_PRUNE_KEEP } from "../src/node/index.js";
import { call, indexationJson, postJson, wallet } from "./node-helpers.js";
import { CLI, failingServe, killAll, startServe, type ServeProcess } from "./serve-process.js";
import { createTestDatabase, postgresUrl, tempDir, type TestDatabase } from "./store-helpers.js";

const NETWORK = "chrysalis-ageing";

afterAll(killAll);

function chrysalis(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function oneLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  expect(lines, `expected one line, got: ${text}`).toHaveLength(1);
  return lines[0]!;
}

/** Waits until the node has printed `text` (its notes follow the "listening on" line that startServe waits for). */
async function printed(node: ServeProcess, text: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!node.output().includes(text)) {
    if (Date.now() > end) throw new Error(`"${text}" not printed in ${ms} ms: ${node.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls the node's /api/v1/info until `check` holds. */
async function infoWhen(url: string, check: (info: any) => boolean, ms = 30_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const info = (await call(`${url}/api/v1/info`)).json?.data;
    if (info !== undefined && check(info)) return info;
    if (Date.now() > end) throw new Error(`not reached in ${ms} ms; last /info: ${JSON.stringify(info)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("usage errors (exit 2, one line)", () => {
  const dir = tempDir("ageing-usage");
  afterAll(() => dir.remove());

  it("--prune-milestones below max depth + margin names the minimum", async () => {
    const r = await failingServe(["--in-memory", "--prune-milestones", "5"]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`--prune-milestones: .*at least ${MIN_PRUNE_KEEP} \\(15 of max depth`));
  });

  it("--prune-size without a size, --snapshot with --genesis, db compact on PostgreSQL", async () => {
    const size = await failingServe(["--in-memory", "--prune-size", "lots"]);
    expect(size.code).toBe(2);
    expect(oneLine(size.stderr)).toContain("--prune-size");
    const genesis = bech32Address("atoi", wallet().address);
    const both = await failingServe(["--data-dir", join(dir.path, "both"), "--snapshot", join(dir.path, "none.snapshot"), "--genesis", genesis]);
    expect(both.code).toBe(2);
    expect(oneLine(both.stderr)).toContain("--snapshot and --genesis cannot be used together");
    expect(existsSync(join(dir.path, "both"))).toBe(false);
    const compact = chrysalis(["db", "compact", "--database", "postgres://nobody@127.0.0.1:1/none"]);
    expect(compact.code).toBe(2);
    expect(oneLine(compact.stderr)).toContain("VACUUM");
  });

  it("snapshot and db have their own --help", () => {
    for (const name of ["snapshot", "db"]) {
      const help = chrysalis([name, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`chrysalis ${name}`);
    }
    expect(chrysalis(["--help"]).stdout).toMatch(/snapshot[\s\S]*db/);
  });
});

describe("a store through its life: pruned while serving, counted, verified, snapshotted, restarted from the snapshot", () => {
  const dir = tempDir("ageing");
  afterAll(() => dir.remove());
  const owner = wallet();
  const keyFile = join(dir.path, "coordinator.keys");
  writeFileSync(keyFile, `${toHex(globalThis.crypto.getRandomValues(new Uint8Array(32)))}\n`);
  const first = join(dir.path, "first");
  const second = join(dir.path, "second");
  const snapshotFile = join(dir.path, "first.snapshot");
  const common = ["--network", NETWORK, "--min-pow-score", "1", "--workers", "1", "--no-rate-limits", "--milestone-interval", "150ms", "--coordinator-key-file", keyFile, "--prune-milestones", String(MIN_PRUNE_KEEP)];
  let node: ServeProcess | undefined;
  let snapshotIndex = 0;
  afterAll(async () => node?.kill());

  it("serve prunes to latest − keep; /info and /metrics show it; db stats --json and db verify work beside it", async () => {
    node = await startServe([...common, "--data-dir", first, "--genesis", bech32Address("atoi", owner.address)]);
    await printed(node, `pruning: keeping the last ${MIN_PRUNE_KEEP} milestones`);
    const early: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await postJson(`${node.url}/api/v1/messages`, indexationJson(`early ${i}`));
      expect(r.status).toBe(201);
      early.push(r.json.data.messageId);
    }
    // The milestone that referenced the last of them: once pruned past it, all three are gone.
    let referencedBy = 0;
    for (const id of early) {
      for (;;) {
        const index = (await call(`${node.url}/api/v1/messages/${id}/metadata`)).json.data.referencedByMilestoneIndex;
        if (typeof index === "number") {
          referencedBy = Math.max(referencedBy, index);
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const info = await infoWhen(node.url, (i) => i.pruningIndex >= referencedBy && i.pruningIndex >= i.latestMilestoneIndex - MIN_PRUNE_KEEP - 1);
    expect(info.pruningIndex).toBeLessThanOrEqual(info.latestMilestoneIndex - MIN_PRUNE_KEEP);
    for (const id of early) expect((await call(`${node.url}/api/v1/messages/${id}/metadata`)).status).toBe(404);
    const metrics = (await call(`${node.url}/metrics`)).bytes;
    const text = new TextDecoder().decode(metrics);
    expect(text).toMatch(/^chrysalis_pruning_index [1-9]\d*$/m);
    expect(text).toMatch(/^chrysalis_messages_pruned_total [1-9]\d*$/m);
    expect(text).toMatch(/^chrysalis_store_bytes [1-9]\d*$/m);

    const stats = chrysalis(["db", "stats", "--data-dir", first, "--json"]);
    expect(stats.code, stats.stderr).toBe(0);
    const json = JSON.parse(oneLine(stats.stdout));
    expect(json).toMatchObject({ engine: "lmdb", network: NETWORK, unspentOutputs: 1 });
    for (const field of ["messages", "latestMilestoneIndex", "pruningIndex", "bytes", "fileBytes"]) expect(typeof json[field], field).toBe("number");
    expect(json.latestMilestoneIndex).toBeGreaterThanOrEqual(info.latestMilestoneIndex);
    expect(json.pruningIndex).toBeGreaterThanOrEqual(3);
    expect(json.bytes).toBeGreaterThan(0);
    expect(json.fileBytes).toBeGreaterThanOrEqual(json.bytes);

    const verify = chrysalis(["db", "verify", "--data-dir", first]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(oneLine(verify.stdout)).toMatch(/^consistent: lmdb store of chrysalis-ageing/);
  }, 90_000);

  it("snapshot create writes a whole file while the node serves", async () => {
    const r = chrysalis(["snapshot", "create", snapshotFile, "--data-dir", first]);
    expect(r.code, r.stderr).toBe(0);
    const line = oneLine(r.stdout);
    const m = /^snapshot of chrysalis-ageing at milestone (\d+): 1 unspent outputs, \d+ entry points, \d+ bytes written to .* in \d+\.\d+ s$/.exec(line);
    expect(m, line).not.toBeNull();
    snapshotIndex = Number(m![1]);
    expect(snapshotIndex).toBeGreaterThan(MIN_PRUNE_KEEP);
    expect(existsSync(snapshotFile)).toBe(true);
    expect(existsSync(`${snapshotFile}.tmp`)).toBe(false);
    expect(await node!.stop()).toBe(0);
    node = undefined;
  }, 60_000);

  it("db compact shrinks the stopped store's file, which stays consistent", () => {
    const r = chrysalis(["db", "compact", "--data-dir", first]);
    expect(r.code, r.stderr).toBe(0);
    const m = /^compacted .*: (\d+) → (\d+) bytes on disk/.exec(oneLine(r.stdout));
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBeLessThanOrEqual(Number(m![1]));
    expect(chrysalis(["db", "verify", "--data-dir", first]).code).toBe(0);
  }, 60_000);

  it("a snapshot needs the coordinator's key file: exit 1, one line, no store left behind", async () => {
    const other = join(dir.path, "other-key");
    const r = await failingServe(["--network", NETWORK, "--snapshot", snapshotFile, "--data-dir", other]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain("pass the same --coordinator-key-file");
    expect(existsSync(join(other, "data.mdb"))).toBe(false);
  });

  it("a snapshot of another network: exit 1, one line", async () => {
    const r = await failingServe([...common, "--network", "chrysalis-elsewhere", "--snapshot", snapshotFile, "--data-dir", join(dir.path, "elsewhere")]);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
  });

  it("serve --snapshot on a new data dir continues the milestones and the ledger", async () => {
    node = await startServe([...common, "--snapshot", snapshotFile, "--data-dir", second]);
    await printed(node, `snapshot: the store starts at milestone ${snapshotIndex}`);
    const info = await infoWhen(node.url, (i) => i.latestMilestoneIndex >= snapshotIndex + 2);
    expect(info.networkId).toBe(NETWORK);
    expect(info.pruningIndex).toBeGreaterThanOrEqual(snapshotIndex - 1);
    const milestone = (await call(`${node.url}/api/v1/milestones/${snapshotIndex + 1}`)).json.data;
    expect(milestone.index).toBe(snapshotIndex + 1);
    const balance = (await call(`${node.url}/api/v1/addresses/ed25519/${toHex(owner.address)}`)).json.data;
    expect(balance.balance).toBe(TOTAL_SUPPLY);
    const r = await postJson(`${node.url}/api/v1/messages`, indexationJson("after the snapshot"));
    expect(r.status).toBe(201);
    expect(await node.stop()).toBe(0);
    node = undefined;
  }, 90_000);

  it("serve --snapshot on a store that exists: exit 1, one line", async () => {
    const r = await failingServe([...common, "--snapshot", snapshotFile, "--data-dir", second]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain("--snapshot starts a new store only");
  });

  // From LMDB to PostgreSQL and back, with the tools on --database.
  const serverUrl = postgresUrl();
  let database: TestDatabase | undefined;
  afterAll(async () => database?.drop());
  it.skipIf(serverUrl === undefined)("the snapshot moves the store to PostgreSQL; db stats, verify and snapshot create work on --database", async () => {
    database = await createTestDatabase(serverUrl!, "ageing");
    node = await startServe([...common, "--snapshot", snapshotFile, "--database", database.url]);
    await infoWhen(node.url, (i) => i.latestMilestoneIndex >= snapshotIndex + 2);
    const stats = chrysalis(["db", "stats", "--database", database.url, "--json"]);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(oneLine(stats.stdout))).toMatchObject({ engine: "postgres", network: NETWORK, unspentOutputs: 1 });
    const verify = chrysalis(["db", "verify", "--database", database.url]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(oneLine(verify.stdout)).toMatch(/^consistent: postgres store of chrysalis-ageing/);
    const back = join(dir.path, "from-postgres.snapshot");
    const created = chrysalis(["snapshot", "create", back, "--database", database.url]);
    expect(created.code, created.stderr).toBe(0);
    const index = Number(/at milestone (\d+)/.exec(oneLine(created.stdout))![1]);
    expect(await node.stop()).toBe(0);
    node = await startServe([...common, "--snapshot", back, "--data-dir", join(dir.path, "third")]);
    const info = await infoWhen(node.url, (i) => i.latestMilestoneIndex > index);
    expect(info.networkId).toBe(NETWORK);
    expect((await call(`${node.url}/api/v1/addresses/ed25519/${toHex(owner.address)}`)).json.data.balance).toBe(TOTAL_SUPPLY);
    expect(await node.stop()).toBe(0);
    node = undefined;
  }, 90_000);
});
