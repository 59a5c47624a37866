// Storage as an operator meets it through `chrysalis serve` (child processes on 127.0.0.1): a store that cannot be
// opened is one line on stderr naming the path or host and exit 1, with the files left as they were; a restart on a
// store of 100,000 messages is ready in under 2 s (nothing is replayed); and two instances on one store (a PostgreSQL
// database, or an LMDB directory shared by two processes) share what they store and let the store decide between
// conflicting spends sent to each at the same instant.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateIdentityKeyPair, signNonce } from "../src/auth/index.js";
import { bech32Address } from "../src/crypto/index.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, Output } from "../src/model/types.js";
import { LmdbStore, ZERO_MESSAGE_ID } from "../src/node/index.js";
import { CLI, failingServe, killAll, startServe, type ServeProcess } from "./serve-process.js";
import { createTestDatabase, postgresUrl, tempDir, wallet, type Wallet } from "./store-helpers.js";

const NETWORK = "chrysalis-serve-store";
const NETWORK_ID = networkId(NETWORK);
const utf8 = new TextEncoder();
const serverUrl = postgresUrl();

afterAll(killAll);

function oneLine(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines, `expected one line on stderr, got: ${stderr}`).toHaveLength(1);
  return lines[0]!;
}

describe("a store that cannot be opened: one line naming it, exit 1, nothing written over it", () => {
  const dir = tempDir("serve-faults");
  afterAll(() => dir.remove());

  it("a damaged data directory", async () => {
    const path = join(dir.path, "damaged");
    mkdirSync(path);
    const garbage = globalThis.crypto.getRandomValues(new Uint8Array(40_000));
    writeFileSync(join(path, "data.mdb"), garbage);
    const r = await failingServe(["--data-dir", path]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`^chrysalis serve: .*${join(path, "data.mdb")}.*cannot be read as a store`));
    expect(r.stdout).not.toContain("listening");
    expect(createHash("sha256").update(readFileSync(join(path, "data.mdb"))).digest("hex")).toBe(createHash("sha256").update(garbage).digest("hex"));
  });

  it("a data directory that is a file", async () => {
    const path = join(dir.path, "plain-file");
    writeFileSync(path, "x");
    const r = await failingServe(["--data-dir", path]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain(`the data directory ${path} is not a directory`);
  });

  it("a store made for another network", async () => {
    const path = join(dir.path, "other-network");
    const store = new LmdbStore(path);
    await store.open({ network: "chrysalis-elsewhere" });
    await store.close();
    const r = await failingServe(["--data-dir", path, "--network", NETWORK]);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain(`was made for network chrysalis-elsewhere, not ${NETWORK}`);
  });

  it("an unreachable database, by --database and by CHRYSALIS_DATABASE_URL", async () => {
    const byFlag = await failingServe(["--database", "postgres://postgres@127.0.0.1:1/chrysalis"]);
    expect(byFlag.code).toBe(1);
    expect(oneLine(byFlag.stderr)).toMatch(/^chrysalis serve: cannot open the database at 127\.0\.0\.1:1\/chrysalis: .*ECONNREFUSED/);
    const byEnv = await failingServe([], { CHRYSALIS_DATABASE_URL: "postgres://postgres@127.0.0.1:1/chrysalis" });
    expect(byEnv.code).toBe(1);
    expect(oneLine(byEnv.stderr)).toContain("127.0.0.1:1/chrysalis");
  });

  it("two storage options at once is a usage error (exit 2)", async () => {
    const r = await failingServe(["--in-memory", "--database", "postgres://postgres@127.0.0.1:1/x"]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("--database and --in-memory cannot be used together");
  });
});

describe("a restart does not replay the store", () => {
  const dir = tempDir("serve-restart");
  afterAll(() => dir.remove());

  it("serve on a store of 100,000 messages is listening in under 2 s, and serves them", async () => {
    const empty = await startServe(["--data-dir", join(dir.path, "empty"), "--network", NETWORK]);
    await empty.stop();
    const path = join(dir.path, "full");
    const store = new LmdbStore(path);
    await store.open({ network: NETWORK });
    const ids: string[] = [];
    const filled = performance.now();
    for (let batch = 0; batch < 100; batch++) {
      const accepts = [];
      for (let i = 0; i < 1000; i++) {
        const message: Message = { networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: { type: 2, index: utf8.encode(`restart ${i % 50}`), data: utf8.encode(`message ${batch}.${i}`) }, nonce: 1n };
        const bytes = encodeMessage(message);
        const id = messageId(bytes);
        ids.push(id);
        accepts.push(store.accept({ id, bytes, message, arrivalTime: Date.now(), coneRoots: { oldest: 0, youngest: 0 } }));
      }
      await Promise.all(accepts);
    }
    const fillSeconds = (performance.now() - filled) / 1000;
    await store.close();
    const node = await startServe(["--data-dir", path, "--network", NETWORK]);
    try {
      console.log(`restart: serve listening after ${node.startMs.toFixed(0)} ms on a store of ${ids.length} messages (filled in ${fillSeconds.toFixed(1)} s), ${empty.startMs.toFixed(0)} ms on an empty store`);
      expect(node.startMs).toBeLessThan(2000);
      for (const id of [ids[0]!, ids[54_321]!, ids[99_999]!]) expect((await fetch(`${node.url}/api/v1/messages/${id}/raw`)).status).toBe(200);
      const found = (await (await fetch(`${node.url}/api/v1/messages?index=${Buffer.from("restart 7").toString("hex")}`)).json()) as { data: { count: number } };
      expect(found.data.count).toBe(1000);
    } finally {
      await node.stop();
    }
  }, 120_000);
});

describe("chrysalis auth revoke on the store a running node uses", () => {
  const dir = tempDir("serve-revoke");
  afterAll(() => dir.remove());

  const engines: { name: string; skip: boolean; storage(): Promise<{ args: string[]; remove(): Promise<void> }> }[] = [
    { name: "an LMDB data directory (a second process on it)", skip: false, storage: async () => ({ args: ["--data-dir", join(dir.path, "data")], remove: async () => undefined }) },
    {
      name: "a PostgreSQL database",
      skip: serverUrl === undefined,
      storage: async () => {
        const db = await createTestDatabase(serverUrl!, "revoke");
        return { args: ["--database", db.url], remove: () => db.drop() };
      },
    },
  ];
  for (const engine of engines) {
    it.skipIf(engine.skip)(`${engine.name}: the node refuses the token from the next request on`, async () => {
      const storage = await engine.storage();
      const identity = { id: "did:iota:revoked", ...generateIdentityKeyPair() };
      writeFileSync(join(dir.path, "jwt"), "a jwt secret for the revocation test, 32+ bytes\n");
      writeFileSync(join(dir.path, "ids.json"), JSON.stringify({ [identity.id]: Buffer.from(identity.publicKey).toString("hex") }));
      const node = await startServe([...storage.args, "--network", NETWORK, "--min-pow-score", "0", "--no-coordinator", "--jwt-secret-file", join(dir.path, "jwt"), "--identities", join(dir.path, "ids.json")]);
      try {
        const prove = `${node.url}/authentication/prove-ownership/${encodeURIComponent(identity.id)}`;
        const { nonce } = (await (await fetch(prove)).json()) as { nonce: string };
        const { jwt } = (await (await fetch(prove, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ signedNonce: signNonce(nonce, identity.secretKey) }) })).json()) as { jwt: string };
        const submit = (text: string): Promise<Response> => {
          const message: Message = { networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: { type: 2, index: utf8.encode("revoke"), data: utf8.encode(text) }, nonce: 1n };
          return fetch(`${node.url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream", authorization: `Bearer ${jwt}` }, body: encodeMessage(message) as Uint8Array<ArrayBuffer> });
        };
        expect((await submit("before")).status).toBe(201);
        const revoke = spawnSync(process.execPath, [CLI, "auth", "revoke", jwt, ...storage.args], { encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
        expect(revoke.status, revoke.stderr).toBe(0);
        expect(revoke.stdout).toMatch(/^revoked /);
        const refused = await submit("after");
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: { reason: string } }).error.reason).toBe("TOKEN_REVOKED");
      } finally {
        await node.kill();
        await storage.remove();
      }
    });
  }

  it("a directory or database with no store in it: exit 1 naming it, and nothing is created", async () => {
    const empty = join(dir.path, "no-store-here");
    const r = spawnSync(process.execPath, [CLI, "auth", "revoke", "some-jti", "--data-dir", empty], { encoding: "utf8", timeout: 30_000, killSignal: "SIGKILL" });
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toContain(`there is no store in ${empty}`);
    expect(existsSync(empty)).toBe(false);
  });
});

/**
 * Two serve processes on one store: `storage()` gives the storage arguments of a new store and its removal. The store
 * is shared through the engine alone (LMDB's file locks across processes; PostgreSQL's transactions).
 */
/** `notifies`: the instances tell each other what they store (PostgreSQL's LISTEN/NOTIFY); two processes on one LMDB
 * directory share the store, but not each other's tips and events. */
function twoInstances(title: string, skip: boolean, notifies: boolean, storage: () => Promise<{ args: string[]; remove(): Promise<void> }>): void {
  describe.skipIf(skip)(title, () => {
    let removeStorage: (() => Promise<void>) | undefined;
    let a: ServeProcess | undefined;
    let b: ServeProcess | undefined;
    const genesis = wallet();
    const identity = { id: "did:iota:two-instances", ...generateIdentityKeyPair() };
    const files = tempDir("serve-pair-files");
    afterAll(async () => {
      await a?.kill();
      await b?.kill();
      await removeStorage?.();
      files.remove();
    });

    const post = (url: string, message: Message): Promise<Response> =>
      fetch(`${url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: encodeMessage(message) as Uint8Array<ArrayBuffer> });

    function transfer(from: Wallet, input: string, outputs: Output[], parents: Uint8Array[]): { message: Message; created: string[] } {
      const payload = buildTransactionPayload({ inputs: [{ transactionId: input.slice(0, 64), transactionOutputIndex: Number.parseInt(input.slice(66, 68) + input.slice(64, 66), 16), seed: from.seed }], outputs });
      const txId = transactionId(payload);
      return { message: { networkId: NETWORK_ID, parents, payload, nonce: 1n }, created: payload.essence.outputs.map((_, i) => outputId(txId, i)) };
    }

    it("both start at once on a new store; it is created once", async () => {
      const made = await storage();
      removeStorage = made.remove;
      // No coordinators: a milestone is a message too, and one issued between a submission and the tips check would make
      // the tip set a race (the coordinator on a shared store is the coordinator's own tests' subject).
      // One JWT secret and one identity registry for both, as an operator deploys instances behind a balancer.
      writeFileSync(join(files.path, "jwt-secret"), "a jwt secret shared by both instances, 32+ bytes\n");
      writeFileSync(join(files.path, "identities.json"), JSON.stringify({ [identity.id]: Buffer.from(identity.publicKey).toString("hex") }));
      // Rate limits lifted, as the other suites whose subject is not the edge run serve: this one client (127.0.0.1)
      // submits 52 messages to the first instance within a moment, past the default submit burst of 50.
      const args = [...made.args, "--network", NETWORK, "--min-pow-score", "0", "--no-pow", "--no-coordinator", "--genesis", bech32Address("atoi", genesis.address), "--jwt-secret-file", join(files.path, "jwt-secret"), "--identities", join(files.path, "identities.json"), "--open-submit", "--no-rate-limits"];
      [a, b] = await Promise.all([startServe(args), startServe(args)]);
      // The storage line follows the listening line.
      for (let i = 0; i < 100 && ![a, b].every((p) => p.output().includes("storage: ")); i++) await new Promise((r) => setTimeout(r, 50));
      const lines = [a.output(), b.output()].map((o) => /storage: .*/.exec(o)?.[0]);
      expect(lines.filter((l) => l?.includes("(new store, ledger on)"))).toHaveLength(1);
      expect(lines.filter((l) => l?.includes("(existing store, ledger on)"))).toHaveLength(1);
    });

    it(`a message submitted to one is read and found by its index at the other${notifies ? ", and is a tip there" : ""}`, async () => {
      const message: Message = { networkId: NETWORK_ID, parents: [new Uint8Array(32)], payload: { type: 2, index: utf8.encode("across instances"), data: utf8.encode("from a") }, nonce: 1n };
      const response = await post(a!.url, message);
      expect(response.status).toBe(201);
      const id = messageId(encodeMessage(message));
      const raw = await fetch(`${b!.url}/api/v1/messages/${id}/raw`);
      expect(raw.status).toBe(200);
      expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(encodeMessage(message)))).toBe(true);
      const found = (await (await fetch(`${b!.url}/api/v1/messages?index=${Buffer.from("across instances").toString("hex")}`)).json()) as { data: { messageIds: string[] } };
      expect(found.data.messageIds).toEqual([id]);
      if (!notifies) return;
      // Told by the other instance: a tip here too (the only one since both started, so selection gives it).
      for (let i = 0; i < 100; i++) {
        const tips = (await (await fetch(`${b!.url}/api/v1/tips`)).json()) as { data: { tipMessageIds: string[] } };
        if (tips.data.tipMessageIds.includes(id)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("the message never became a tip at the other instance");
    });

    it("a prove-ownership nonce issued by one is redeemed at the other exactly once", async () => {
      const prove = (url: string): string => `${url}/authentication/prove-ownership/${encodeURIComponent(identity.id)}`;
      const nonceFrom = async (url: string): Promise<string> => ((await (await fetch(prove(url))).json()) as { nonce: string }).nonce;
      const redeem = (url: string, nonce: string): Promise<Response> =>
        fetch(prove(url), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ signedNonce: signNonce(nonce, identity.secretKey) }) });
      // Issued by a, redeemed at b: a JWT; then refused at both.
      const nonce = await nonceFrom(a!.url);
      const first = await redeem(b!.url, nonce);
      expect(first.status).toBe(200);
      expect(((await first.json()) as { jwt: string }).jwt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      for (const url of [a!.url, b!.url]) {
        const again = await redeem(url, nonce);
        expect(again.status).toBe(401);
        expect(((await again.json()) as { error: { reason: string } }).error.reason).toBe("NONCE_EXPIRED_OR_USED");
      }
      // One nonce sent to both at the same instant, five times over: exactly one login each time.
      for (let round = 0; round < 5; round++) {
        const fresh = await nonceFrom(round % 2 === 0 ? a!.url : b!.url);
        const answers = await Promise.all([redeem(a!.url, fresh), redeem(b!.url, fresh)]);
        expect(answers.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 401]);
        await Promise.all(answers.map((r) => r.arrayBuffer()));
      }
    });

    it("50 outputs, each spent by two different transactions sent to the two instances at the same instant: exactly one of each pair is accepted", async () => {
      const holders = Array.from({ length: 50 }, () => wallet());
      const total = 2_779_530_283_277_761;
      const split = transfer(genesis, outputId(ZERO_MESSAGE_ID, 0), [...holders.map((h) => ({ type: 0 as const, address: { type: 0 as const, address: h.address }, amount: 1_000_000 })), { type: 0, address: { type: 0, address: genesis.address }, amount: total - 50_000_000 }], [new Uint8Array(32)]);
      expect((await post(a!.url, split.message)).status).toBe(201);
      const outputs = (split.message.payload as { essence: { outputs: Output[] } }).essence.outputs;
      const parent = [Uint8Array.from(Buffer.from(messageId(encodeMessage(split.message)), "hex"))];
      const pairs = holders.map((h) => {
        const input = split.created[outputs.findIndex((o) => Buffer.from(o.address.address).equals(Buffer.from(h.address)))]!;
        return [transfer(h, input, [{ type: 0, address: { type: 0, address: wallet().address }, amount: 1_000_000 }], parent), transfer(h, input, [{ type: 0, address: { type: 0, address: wallet().address }, amount: 1_000_000 }], parent)] as const;
      });
      const answers = await Promise.all(pairs.map(([x, y]) => Promise.all([post(a!.url, x.message), post(b!.url, y.message)])));
      let fromA = 0;
      for (const [i, [ra, rb]] of answers.entries()) {
        const statuses = [ra.status, rb.status].sort();
        expect(statuses, `pair ${i}`).toEqual([201, 400]);
        const loser = ra.status === 400 ? ra : rb;
        expect(((await loser.json()) as { error: { reason: string } }).error.reason).toBe("INPUT_SPENT");
        if (ra.status === 201) fromA++;
        // Both instances agree on the winner.
        const [winner, other] = ra.status === 201 ? [pairs[i]![0], pairs[i]![1]] : [pairs[i]![1], pairs[i]![0]];
        for (const url of [a!.url, b!.url]) {
          expect((await fetch(`${url}/api/v1/messages/${messageId(encodeMessage(winner.message))}/raw`)).status).toBe(200);
          expect((await fetch(`${url}/api/v1/messages/${messageId(encodeMessage(other.message))}/raw`)).status).toBe(404);
        }
      }
      console.log(`two instances: 50 conflicting pairs, exactly one accepted in each (${fromA} at the first instance, ${50 - fromA} at the second)`);
    });
  });
}

twoInstances("two serve instances on one PostgreSQL database", serverUrl === undefined, true, async () => {
  const db = await createTestDatabase(serverUrl!, "serve_pair");
  return { args: ["--database", db.url], remove: () => db.drop() };
});

twoInstances("two serve processes on one LMDB data directory", false, false, async () => {
  const dir = tempDir("serve-pair");
  return { args: ["--data-dir", dir.path], remove: async () => dir.remove() };
});
