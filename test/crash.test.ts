// kill -9 at any moment loses nothing acknowledged. `chrysalis serve` runs as a child process on the embedded store and
// on PostgreSQL. A bounded concurrent load (a split of the ledger's funds, then transactions each spending one split
// output, spread among indexation messages: 601 submissions a cycle, 16 at a time) is cut by SIGKILL at a random point
// after 300 to 480 acknowledgements, and the node is started again on the same store. Then every acknowledged message
// reads back byte for byte, every acknowledged spend is still spent (a different transaction spending the same output
// is refused with 4xx), and no message is partial: one whose answer was lost is either wholly there, its spend
// included, or wholly absent, its input still spendable. Three cycles per engine; after the last, the store is opened
// directly and checked record by record.
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { bech32Address } from "../src/crypto/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { messageToJson } from "../src/model/json.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, Output } from "../src/model/types.js";
import { LmdbStore, PostgresStore, type NodeStore } from "../src/node/index.js";
import { killAll, startServe, type ServeProcess } from "./serve-process.js";
import { createTestDatabase, postgresUrl, tempDir, wallet, type TestDatabase, type Wallet } from "./store-helpers.js";

const NETWORK = "chrysalis-crash";
const NETWORK_ID = networkId(NETWORK);
const TOTAL = 2_779_530_283_277_761;
const HOLDERS = 120;
const INDEXATIONS = 480;
const CONCURRENCY = 16;
const CYCLES = 3;
const utf8 = new TextEncoder();

afterAll(killAll);

type Kind = "split" | "transaction" | "indexation";

interface Submission {
  readonly kind: Kind;
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly message: Message;
  /** For transactions: the output it spends, who owns it, and the outputs it creates. */
  readonly spends?: { outputId: string; owner: Wallet; amount: number };
  readonly created?: string[];
  /** "acked": 201 received; "lost": no answer (the node died first). */
  outcome?: "acked" | "lost" | "refused";
}

function submission(kind: Kind, message: Message, extra: Partial<Submission> = {}): Submission {
  const bytes = encodeMessage(message);
  return { kind, id: messageId(bytes), bytes, message, ...extra };
}

function transfer(from: Wallet, input: string, outputs: Output[], parents: Uint8Array[], index?: string): { message: Message; created: string[] } {
  const payload = buildTransactionPayload({
    inputs: [{ transactionId: input.slice(0, 64), transactionOutputIndex: Number.parseInt(input.slice(66, 68) + input.slice(64, 66), 16), seed: from.seed }],
    outputs,
    ...(index !== undefined ? { indexation: { type: 2, index: utf8.encode(index), data: new Uint8Array(0) } } : {}),
  });
  const txId = transactionId(payload);
  return { message: { networkId: NETWORK_ID, parents, payload, nonce: 1n }, created: payload.essence.outputs.map((_, i) => outputId(txId, i)) };
}

async function post(url: string, s: Submission, asJson: boolean): Promise<Response> {
  return asJson
    ? fetch(`${url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(messageToJson(s.message)) })
    : fetch(`${url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: s.bytes as Uint8Array<ArrayBuffer> });
}

async function raw(url: string, id: string): Promise<{ status: number; bytes: Uint8Array }> {
  const response = await fetch(`${url}/api/v1/messages/${id}/raw`);
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
}

interface Ledger {
  genesis: Wallet;
  /** The output the next cycle's split spends, and its amount. */
  remainder: { outputId: string; amount: number };
}

/**
 * One cycle: the split (awaited), then the load with `CONCURRENCY` clients, SIGKILL once `killAfter` submissions were
 * acknowledged. Returns every submission with its outcome.
 */
async function cycle(node: ServeProcess, ledger: Ledger, cycleNo: number, killAfter: number): Promise<Submission[]> {
  const holders = Array.from({ length: HOLDERS }, () => wallet());
  const perHolder = 1_000_000 + cycleNo;
  const rest = ledger.remainder.amount - HOLDERS * perHolder;
  const zero = [new Uint8Array(32)];
  const tips = ((await (await fetch(`${node.url}/api/v1/tips`)).json()) as { data: { tipMessageIds: string[] } }).data.tipMessageIds;
  const splitTx = transfer(ledger.genesis, ledger.remainder.outputId, [...holders.map((h) => ({ type: 0 as const, address: { type: 0 as const, address: h.address }, amount: perHolder })), { type: 0, address: { type: 0, address: ledger.genesis.address }, amount: rest }], tips.length > 0 ? tips.sort().map((t) => Uint8Array.from(Buffer.from(t, "hex"))) : zero);
  const split = submission("split", splitTx.message, { created: splitTx.created });
  const answer = await post(node.url, split, false);
  expect(answer.status, await answer.clone().text()).toBe(201);
  split.outcome = "acked";
  const outputs = (splitTx.message.payload as { essence: { outputs: Output[] } }).essence.outputs;
  const splitParent = [Uint8Array.from(Buffer.from(split.id, "hex"))];
  ledger.remainder = { outputId: splitTx.created[outputs.findIndex((o) => o.amount === rest)]!, amount: rest };

  // The transactions are spread through the load (one in five), so that the kill lands among transactions in flight.
  const transactions = holders.map((h) => {
    const input = splitTx.created[outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(h.address)))]!;
    const t = transfer(h, input, [{ type: 0, address: { type: 0, address: wallet().address }, amount: perHolder }], splitParent, `crash-${cycleNo}-tx`);
    return submission("transaction", t.message, { spends: { outputId: input, owner: h, amount: perHolder }, created: t.created });
  });
  const load: Submission[] = [];
  for (let i = 0, t = 0; i < HOLDERS + INDEXATIONS; i++) {
    if (i % 5 === 2 && t < transactions.length) load.push(transactions[t++]!);
    else load.push(submission("indexation", { networkId: NETWORK_ID, parents: splitParent, payload: { type: 2, index: utf8.encode(`crash-${cycleNo}`), data: utf8.encode(`cycle ${cycleNo} message ${i}`) }, nonce: 1n }));
  }

  let next = 0;
  let acked = 0;
  let killed: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < load.length && killed === undefined) {
        const s = load[next++]!;
        try {
          const response = await post(node.url, s, next % 3 === 0);
          await response.arrayBuffer();
          if (response.status === 201) {
            s.outcome = "acked";
            if (++acked === killAfter) killed = node.kill();
          } else s.outcome = "refused";
        } catch {
          s.outcome = "lost";
        }
      }
    }),
  );
  await (killed ?? node.kill());
  return [split, ...load.filter((s) => s.outcome !== undefined)];
}

/** Checks a restarted node against what the killed one acknowledged; returns counts for the log. */
async function verify(url: string, submitted: readonly Submission[]): Promise<{ acked: number; lost: number; lostStored: number }> {
  let lostStored = 0;
  for (const s of submitted) {
    expect(s.outcome, `submission ${s.id} was refused by the node`).not.toBe("refused");
    const got = await raw(url, s.id);
    if (s.outcome === "acked") {
      expect(got.status, `acknowledged ${s.kind} ${s.id} is gone`).toBe(200);
    } else expect([200, 404]).toContain(got.status);
    if (got.status === 200) {
      expect(Buffer.from(got.bytes).equals(Buffer.from(s.bytes)), `${s.id} differs`).toBe(true);
      if (s.outcome === "lost") lostStored++;
    }
    if (s.spends !== undefined) {
      // Another transaction spending the same output: refused when the spend was stored, accepted when it was not.
      const other = transfer(s.spends.owner, s.spends.outputId, [{ type: 0, address: { type: 0, address: wallet().address }, amount: s.spends.amount }], s.message.parents);
      const response = await post(url, submission("transaction", other.message), false);
      const body = (await response.json()) as { error?: { reason?: string } };
      if (got.status === 200) {
        expect(response.status, `the spend of ${s.spends.outputId} by acknowledged ${s.id} was undone`).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(body.error?.reason).toBe("INPUT_SPENT");
      } else {
        expect(response.status, `${s.spends.outputId} is spent though the message ${s.id} that spent it is absent`).toBe(201);
      }
    }
  }
  return { acked: submitted.filter((s) => s.outcome === "acked").length, lost: submitted.filter((s) => s.outcome === "lost").length, lostStored };
}

/** The store itself, after the last node stopped: every submission wholly there or wholly absent. */
async function verifyStore(store: NodeStore, submitted: readonly Submission[]): Promise<void> {
  await store.open({ network: NETWORK });
  try {
    for (const s of submitted) {
      const has = await store.has(s.id);
      if (s.outcome === "acked") expect(has).toBe(true);
      expect((await store.metadata(s.id)) !== undefined).toBe(has);
      const parent = toHex(s.message.parents[0]!);
      expect((await store.children(parent, 100_000)).includes(s.id)).toBe(has);
      if (s.message.payload?.type === 2) expect((await store.findByIndex(s.message.payload.index, 1000)).includes(s.id)).toBe(has);
      // The ledger moves at confirmation: a stored spend is confirmed (its input spent by it, its outputs booked) or
      // still pending (its input claimed by it, its outputs pending ones).
      if (s.spends !== undefined && has) {
        const [spent, claim] = [(await store.output(s.spends.outputId))?.spent?.messageId, (await store.claim(s.spends.outputId))?.messageId];
        expect(spent ?? claim, `the spend of ${s.spends.outputId} by ${s.id}`).toBe(s.id);
        for (const o of s.created!) expect((await store.output(o))?.messageId ?? (await store.pendingOutput(o))?.messageId).toBe(s.id);
      }
      if (s.spends !== undefined && !has) {
        for (const o of s.created!) {
          expect(await store.output(o)).toBeUndefined();
          expect(await store.pendingOutput(o)).toBeUndefined();
        }
      }
    }
  } finally {
    await store.close();
  }
}

interface CrashEngine {
  name: string;
  args(): string[];
  directStore(): NodeStore;
}

async function crashCycles(engine: CrashEngine): Promise<void> {
  const genesis = wallet();
  // No rate limits: the load comes from one address, far faster than the edge lets one client submit.
  const args = [...engine.args(), "--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-rate-limits", "--genesis", bech32Address("atoi", genesis.address)];
  const ledger: Ledger = { genesis, remainder: { outputId: outputId("0".repeat(64), 0), amount: TOTAL } };
  const all: Submission[] = [];
  let node = await startServe(args);
  try {
    for (let c = 1; c <= CYCLES; c++) {
      const killAfter = 300 + Math.floor(Math.random() * 180);
      const submitted = await cycle(node, ledger, c, killAfter);
      all.push(...submitted);
      node = await startServe(args);
      const counts = await verify(node.url, submitted);
      console.log(`${engine.name} crash cycle ${c}: killed after ${killAfter} acknowledgements; ${submitted.length} submitted, ${counts.acked} acknowledged, ${counts.lost} unanswered (${counts.lostStored} of them stored, the rest absent), restart in ${node.startMs.toFixed(0)} ms`);
      expect(counts.acked).toBeGreaterThanOrEqual(killAfter);
    }
    expect(all.filter((s) => s.outcome === "acked").length).toBeGreaterThanOrEqual(CYCLES * 300);
  } finally {
    await node.kill();
  }
  await verifyStore(engine.directStore(), all);
}

describe("kill -9 at any moment loses nothing acknowledged: serve on the embedded store", () => {
  const dir = tempDir("crash-lmdb");
  afterAll(() => dir.remove());

  it("three cycles of load, SIGKILL and restart", async () => {
    await crashCycles({ name: "lmdb", args: () => ["--data-dir", dir.path], directStore: () => new LmdbStore(dir.path) });
  }, 180_000);
});

const serverUrl = postgresUrl();

describe.skipIf(serverUrl === undefined)("kill -9 at any moment loses nothing acknowledged: serve on PostgreSQL", () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await killAll();
    await db?.drop();
  });

  it("three cycles of load, SIGKILL and restart", async () => {
    db = await createTestDatabase(serverUrl!, "crash");
    const url = db.url;
    await crashCycles({ name: "postgres", args: () => ["--database", url], directStore: () => new PostgresStore(url) });
  }, 180_000);
});
