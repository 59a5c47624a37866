// Snapshot round trips through the real CLI (`node dist/cli/main.js`, built by npm test), with an iota.js 1.8.6 wallet
// used unmodified: a node on LMDB with a genesis ledger and a coordinator key file; the wallet sends funds to a second
// address and waits for the milestone; `chrysalis snapshot create` while that node serves; `serve --snapshot` on a new
// PostgreSQL database with the same key file: the coordinator continues at the next index, the balances are exact, the
// wallet spends an output that came from the snapshot, and a re-spend of an output spent before the snapshot is
// refused; then the same from that PostgreSQL node back to a new LMDB directory. Without a PostgreSQL server the
// middle hop is LMDB → LMDB (the global setup prints the one line saying PostgreSQL tests are skipped). And the refusals
// of `serve --snapshot`: an existing store, a snapshot of another network, another coordinator key (exit 1, one line).
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bip32Path } from "@iota/crypto.js";
import { Bech32Helper, generateBip44Address, SingleNodeClient, send, sendAdvanced, type Ed25519Seed, type MessageJson } from "@iota/iota.js";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { outputId } from "../src/model/ids.js";
import { decodeMessage } from "../src/model/codec.js";
import { milestonePublicKey, verifyMilestoneSignatures } from "../src/model/milestone.js";
import { decodeSnapshot, type LedgerSnapshot } from "../src/node/index.js";
import { randomSeed, walletAddress, within } from "./clients-helpers.js";
import { failingServe, killAll, runCli, startServe, type ServeProcess } from "./serve-process.js";
import { createTestDatabase, postgresUrl, tempDir, type TestDatabase } from "./store-helpers.js";

// iota.js 1.8.6's sendAdvanced (its typings are not reachable under NodeNext: see test/client-drivers.d.ts).
declare module "@iota/iota.js" {
  export function sendAdvanced(
    client: SingleNodeClient,
    inputsAndSignatureKeyPairs: { input: { type: 0; transactionId: string; transactionOutputIndex: number }; addressKeyPair: { publicKey: Uint8Array; privateKey: Uint8Array } }[],
    outputs: { address: string; addressType: number; amount: number }[],
  ): Promise<{ messageId: string; message: MessageJson }>;
}

const NETWORK = "chrysalis-snapshot-trip";
const HRP = "atoi";
const GENESIS_OUTPUT = outputId("0".repeat(64), 0);
const serverUrl = postgresUrl();

afterAll(killAll);

// What every node of the round trip is started with: the same network, the same coordinator key file, milestones
// every 200 ms, mining for iota.js (which leaves the nonce to the node) at a score that takes no time.
function nodeArgs(keyFile: string): string[] {
  return ["--network", NETWORK, "--coordinator-key-file", keyFile, "--milestone-interval", "200ms", "--min-pow-score", "10", "--workers", "1", "--no-rate-limits", "--no-mqtt", "--log-level", "warn"];
}


function oneLine(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines, `expected one line on stderr, got: ${stderr}`).toHaveLength(1);
  return lines[0]!;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until `probe` returns a value (not undefined), at most `ms`. */
function until<T>(ms: number, what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return within(ms, (async () => {
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      await pause(50);
    }
  })(), what);
}

/** The milestone that confirmed `messageId`, once one has; the message must be included (a transfer). */
async function confirmed(client: SingleNodeClient, messageId: string): Promise<number> {
  const meta = await until(15_000, `the milestone of ${messageId}`, async () => {
    const m = await client.messageMetadata(messageId);
    return m.referencedByMilestoneIndex === undefined ? undefined : m;
  });
  expect(meta.ledgerInclusionState).toBe("included");
  return meta.referencedByMilestoneIndex!;
}

/** The key pair iota.js signs with for a seed's BIP-44 address (account 0, external, index 0). */
function keyPairOf(seed: Ed25519Seed): { publicKey: Uint8Array; privateKey: Uint8Array } {
  const path = generateBip44Address({ accountIndex: 0, addressIndex: 0, isInternal: false });
  return seed.generateSeedFromPath(new Bip32Path(path)).keyPair();
}

/** iota.js's sendAdvanced spending `spentOutputId` (of `amount`, owned by `owner`) once more: the node's status. */
async function respend(client: SingleNodeClient, owner: Ed25519Seed, spentOutputId: string, amount: number, to: Uint8Array): Promise<number> {
  const input = { type: 0 as const, transactionId: spentOutputId.slice(0, 64), transactionOutputIndex: Number.parseInt(spentOutputId.slice(66, 68) + spentOutputId.slice(64, 66), 16) };
  const outcome = await sendAdvanced(client, [{ input, addressKeyPair: keyPairOf(owner) }], [{ address: toHex(to), addressType: 0, amount }]).then(
    () => 201,
    (error: unknown) => (error as { httpStatus?: number }).httpStatus ?? -1,
  );
  return outcome;
}

interface Wallets {
  genesis: Ed25519Seed;
  alice: Ed25519Seed;
  bob: Ed25519Seed;
  carol: Ed25519Seed;
}

const bech32 = (seed: Ed25519Seed): string => Bech32Helper.toBech32(0, walletAddress(seed), HRP);

async function balanceOf(client: SingleNodeClient, seed: Ed25519Seed): Promise<number> {
  return (await client.address(bech32(seed))).balance;
}

async function unspentOf(client: SingleNodeClient, seed: Ed25519Seed): Promise<string[]> {
  return (await client.addressEd25519Outputs(toHex(walletAddress(seed)))).outputIds;
}

/** `chrysalis snapshot create` on a store a node serves; the decoded snapshot. */
async function createSnapshot(file: string, storage: string[]): Promise<LedgerSnapshot> {
  const r = await runCli(["snapshot", "create", file, ...storage]);
  expect(r.stderr, `snapshot create failed: ${r.stderr}`).toBe("");
  expect(r.code).toBe(0);
  expect(statSync(file).size).toBeGreaterThan(0);
  return decodeSnapshot(readFileSync(file));
}

/** The node's output once it matches `pattern` (the notes after the "listening" line come a moment later). */
function printed(node: ServeProcess, pattern: RegExp): Promise<string> {
  return until(5000, `serve printing ${pattern}`, async () => (pattern.test(node.output()) ? node.output() : undefined));
}

/** After `serve --snapshot`: the coordinator continues at the snapshot's index + 1, signed by the same key, and the
 * snapshot's milestone record is there (its message is not). */
async function checkContinues(node: ServeProcess, client: SingleNodeClient, snapshot: LedgerSnapshot, publicKey: string): Promise<void> {
  const m = snapshot.milestone!;
  await printed(node, new RegExp(`milestone ${m.index}\\b`));
  const info = await until(10_000, `milestone ${m.index + 1}`, async () => {
    const i = await client.info();
    return i.latestMilestoneIndex >= m.index + 1 ? i : undefined;
  });
  expect(info.networkId).toBe(NETWORK);
  const record = await client.milestone(m.index);
  expect(record).toMatchObject({ index: m.index, messageId: m.messageId, timestamp: m.timestamp });
  await expect(client.message(m.messageId)).rejects.toMatchObject({ httpStatus: 404 });
  const next = await client.milestone(m.index + 1);
  const message = decodeMessage(await client.messageRaw(next.messageId));
  if (message.payload?.type !== 1) throw new Error("not a milestone message");
  expect(message.payload.index).toBe(m.index + 1);
  expect(message.payload.publicKeys.map(toHex)).toEqual([publicKey]);
  expect(verifyMilestoneSignatures(message.payload, { publicKeys: [fromHex(publicKey, "key", 32)] })).toEqual({ valid: true });
  // The snapshot's milestone message is an entry point: the first milestone after it names it as a parent.
  expect(message.parents.map(toHex)).toContain(m.messageId);
}

describe("snapshot round trip LMDB → PostgreSQL → LMDB with an iota.js wallet, through the CLI", () => {
  const dir = tempDir("snapshot-trip");
  const keyFile = join(dir.path, "coordinator.key");
  const otherKeyFile = join(dir.path, "other.key");
  const coordinatorSeed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const publicKey = toHex(milestonePublicKey(coordinatorSeed));
  const w: Wallets = { genesis: randomSeed(), alice: randomSeed(), bob: randomSeed(), carol: randomSeed() };
  const databases: TestDatabase[] = [];
  let source: ServeProcess | undefined;
  // Filled by the tests in order.
  const state: { first?: LedgerSnapshot; firstFile?: string; aliceFirstOutput?: string; middle?: ServeProcess | undefined } = {};

  beforeAll(() => {
    writeFileSync(keyFile, `${toHex(coordinatorSeed)}\n`);
    writeFileSync(otherKeyFile, `${toHex(globalThis.crypto.getRandomValues(new Uint8Array(32)))}\n`);
  });
  afterAll(async () => {
    await source?.kill();
    await state.middle?.kill();
    await killAll();
    for (const db of databases) await db.drop();
    dir.remove();
  });

  it("LMDB: the wallet sends from genesis to Alice, the milestone confirms it, and snapshot create runs while the node serves", async () => {
    const data = join(dir.path, "lmdb-source");
    source = await startServe(["--data-dir", data, "--genesis", bech32(w.genesis), ...nodeArgs(keyFile)]);
    const client = new SingleNodeClient(source.url);
    await until(10_000, "the first milestone", async () => ((await client.info()).latestMilestoneIndex >= 1 ? true : undefined));
    const fund = await send(client, w.genesis, 0, bech32(w.alice), 5_000_000);
    const fundIndex = await confirmed(client, fund.messageId);
    expect(await balanceOf(client, w.alice)).toBe(5_000_000);
    expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
    expect((await client.output(GENESIS_OUTPUT)).isSpent).toBe(true);
    const [aliceOutput] = await unspentOf(client, w.alice);
    state.aliceFirstOutput = aliceOutput!;

    // The node keeps serving (and issuing milestones) while the snapshot is read.
    const file = join(dir.path, "first.snapshot");
    const snapshot = await createSnapshot(file, ["--data-dir", data]);
    expect(snapshot.network).toBe(NETWORK);
    expect(snapshot.ledger).toBe(true);
    expect(snapshot.milestone!.index).toBeGreaterThanOrEqual(fundIndex);
    expect(snapshot.coordinatorPublicKeys).toEqual([publicKey]);
    expect(snapshot.entryPoints.map((e) => e.messageId)).toContain(snapshot.milestone!.messageId);
    // The unspent outputs: the genesis remainder and Alice's, nothing else, and the genesis output is not among them.
    expect(snapshot.outputs.map((o) => o.outputId).sort()).toEqual([...(await unspentOf(client, w.genesis)), aliceOutput!].sort());
    expect(snapshot.outputs.reduce((sum, o) => sum + o.output.amount, 0)).toBe(TOTAL_SUPPLY);
    const alices = snapshot.outputs.find((o) => o.outputId === aliceOutput)!;
    expect(alices).toMatchObject({ messageId: fund.messageId, milestoneIndexBooked: fundIndex });
    // The node is still healthy and still issuing milestones after the snapshot.
    const after = (await client.info()).latestMilestoneIndex;
    await until(5000, "a milestone after the snapshot", async () => ((await client.info()).latestMilestoneIndex > after ? true : undefined));
    state.first = snapshot;
    state.firstFile = file;
    await source.stop();
    source = undefined;
  });

  it("serve --snapshot on a store that exists: exit 1, one line", async () => {
    const r = await failingServe(["--snapshot", state.firstFile!, "--data-dir", join(dir.path, "lmdb-source"), ...nodeArgs(keyFile)], {}, 20_000);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^chrysalis serve: .*exists/);
    expect(r.stdout).not.toContain("listening");
  });

  it("serve --snapshot of another network: exit 1, one line, nothing created (the right network then starts there)", async () => {
    const data = join(dir.path, "lmdb-wrong-network");
    const args = nodeArgs(keyFile);
    args[args.indexOf("--network") + 1] = "chrysalis-elsewhere";
    const r = await failingServe(["--snapshot", state.firstFile!, "--data-dir", data, ...args], {}, 20_000);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`^chrysalis serve: .*${NETWORK}.*chrysalis-elsewhere|^chrysalis serve: .*chrysalis-elsewhere.*${NETWORK}`));
    expect(r.stdout).not.toContain("listening");
    const node = await startServe(["--snapshot", state.firstFile!, "--data-dir", data, ...nodeArgs(keyFile)]);
    await printed(node, /new store/);
    expect(await node.stop()).toBe(0);
  });

  it("serve --snapshot with another coordinator key (or none): exit 1, one line, nothing created", async () => {
    const data = join(dir.path, "lmdb-wrong-key");
    const r = await failingServe(["--snapshot", state.firstFile!, "--data-dir", data, ...nodeArgs(otherKeyFile)], {}, 20_000);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`^chrysalis serve: .*${publicKey}`));
    expect(r.stdout).not.toContain("listening");
    const args = nodeArgs(keyFile).filter((a, i, all) => a !== "--coordinator-key-file" && all[i - 1] !== "--coordinator-key-file");
    const none = await failingServe(["--snapshot", state.firstFile!, "--data-dir", data, ...args], {}, 20_000);
    expect(none.code).toBe(1);
    expect(oneLine(none.stderr)).toMatch(new RegExp(`^chrysalis serve: .*${publicKey}`));
    if (existsSync(join(data, "data.mdb"))) {
      // Whatever the engine left there, it is not a store: the snapshot still starts on it.
      const node = await startServe(["--snapshot", state.firstFile!, "--data-dir", data, ...nodeArgs(keyFile)]);
      await printed(node, /new store/);
      expect(await node.stop()).toBe(0);
    }
  });

  it(`${serverUrl === undefined ? "LMDB (no PostgreSQL server)" : "PostgreSQL"} from the snapshot: the coordinator continues, balances exact, the wallet spends a snapshot output, a re-spend is refused`, async () => {
    const first = state.first!;
    let storage: string[];
    if (serverUrl !== undefined) {
      const db = await createTestDatabase(serverUrl, "snapshot_trip");
      databases.push(db);
      storage = ["--database", db.url];
    } else storage = ["--data-dir", join(dir.path, "lmdb-middle")];
    const node = await startServe(["--snapshot", state.firstFile!, ...storage, ...nodeArgs(keyFile)]);
    state.middle = node;
    await printed(node, /new store/);
    const client = new SingleNodeClient(node.url);
    await checkContinues(node, client, first, publicKey);
    expect(await balanceOf(client, w.alice)).toBe(5_000_000);
    expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
    expect(await balanceOf(client, w.bob)).toBe(0);
    // Alice's output came from the snapshot: its creating message is not on this node.
    const alices = await client.output(state.aliceFirstOutput!);
    expect(alices).toMatchObject({ isSpent: false, output: { amount: 5_000_000 } });
    await expect(client.message(alices.messageId)).rejects.toMatchObject({ httpStatus: 404 });

    // The wallet spends it: 2 Mi to Bob, the remainder back to Alice.
    const spend = await send(client, w.alice, 0, bech32(w.bob), 2_000_000);
    const tx = spend.message.payload as { essence: { inputs: { transactionId: string; transactionOutputIndex: number }[] } };
    expect(tx.essence.inputs.map((i) => outputId(i.transactionId, i.transactionOutputIndex))).toEqual([state.aliceFirstOutput]);
    const index = await confirmed(client, spend.messageId);
    expect(index).toBeGreaterThan(first.milestone!.index);
    expect(await balanceOf(client, w.alice)).toBe(3_000_000);
    expect(await balanceOf(client, w.bob)).toBe(2_000_000);
    expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
    expect((await client.output(state.aliceFirstOutput!)).isSpent).toBe(true);

    // The genesis output was spent before the snapshot: refused, and nothing changes.
    const status = await respend(client, w.genesis, GENESIS_OUTPUT, TOTAL_SUPPLY, walletAddress(w.carol));
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(await balanceOf(client, w.carol)).toBe(0);
    expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
  });

  it("and from that node to a new LMDB directory: the coordinator continues, balances exact, a snapshot output spent, re-spends refused", async () => {
    const middle = state.middle!;
    const middleArgs = serverUrl !== undefined ? ["--database", databases[0]!.url] : ["--data-dir", join(dir.path, "lmdb-middle")];
    const file = join(dir.path, "second.snapshot");
    const second = await createSnapshot(file, middleArgs);
    expect(second.milestone!.index).toBeGreaterThan(state.first!.milestone!.index);
    expect(second.coordinatorPublicKeys).toEqual([publicKey]);
    expect(second.outputs.reduce((sum, o) => sum + o.output.amount, 0)).toBe(TOTAL_SUPPLY);
    expect(second.outputs.map((o) => o.outputId)).not.toContain(state.aliceFirstOutput);
    await middle.stop();
    state.middle = undefined;

    const node = await startServe(["--snapshot", file, "--data-dir", join(dir.path, "lmdb-back"), ...nodeArgs(keyFile)]);
    try {
      const client = new SingleNodeClient(node.url);
      await checkContinues(node, client, second, publicKey);
      expect(await balanceOf(client, w.alice)).toBe(3_000_000);
      expect(await balanceOf(client, w.bob)).toBe(2_000_000);
      expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
      const [aliceRemainder] = await unspentOf(client, w.alice);
      const [bobOutput] = await unspentOf(client, w.bob);

      // Bob spends what he got on PostgreSQL (an output from the second snapshot): 1 Mi to Carol, 1 Mi back to him.
      const spend = await send(client, w.bob, 0, bech32(w.carol), 1_000_000);
      const tx = spend.message.payload as { essence: { inputs: { transactionId: string; transactionOutputIndex: number }[] } };
      expect(tx.essence.inputs.map((i) => outputId(i.transactionId, i.transactionOutputIndex))).toEqual([bobOutput]);
      expect(await confirmed(client, spend.messageId)).toBeGreaterThan(second.milestone!.index);
      expect(await balanceOf(client, w.carol)).toBe(1_000_000);
      expect(await balanceOf(client, w.bob)).toBe(1_000_000);
      expect(await balanceOf(client, w.alice)).toBe(3_000_000);
      expect((await unspentOf(client, w.alice))).toEqual([aliceRemainder]);

      // Alice's first output was spent on PostgreSQL, the genesis output on the first LMDB node: both refused.
      for (const [owner, spent, amount] of [[w.alice, state.aliceFirstOutput!, 5_000_000], [w.genesis, GENESIS_OUTPUT, TOTAL_SUPPLY]] as const) {
        const status = await respend(client, owner, spent, amount, walletAddress(w.carol));
        expect(status, `re-spend of ${spent}`).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(500);
      }
      expect(await balanceOf(client, w.carol)).toBe(1_000_000);
      expect(await balanceOf(client, w.alice)).toBe(3_000_000);
      expect(await balanceOf(client, w.genesis)).toBe(TOTAL_SUPPLY - 5_000_000);
    } finally {
      await node.stop();
    }
  });
});
