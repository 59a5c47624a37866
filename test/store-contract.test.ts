// The storage contract (src/node/store/contract.ts), one suite run against every engine: the memory store, the
// embedded LMDB store in a temporary directory, and PostgreSQL in a database of its own (skipped, with one line from
// the global setup, when no server answers). Each rule of the contract's header is a describe block here.
import { afterEach, describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { MemoryStore, PENDING_CLAIM_MILESTONES, STORE_SCHEMA_VERSION, ZERO_MESSAGE_ID, type LedgerSnapshot, type MilestoneApplication, type NodeStore, type PruneStep, type StoreOpenOptions } from "../src/node/index.js";
import { GENESIS_OUTPUT,
  NETWORK,
  acceptance,
  emptyMilestone,
  issue,
  milestoneApplication,
  parentsOf,
  dag,
  hexOf,
  milestoneMessage,
  type Spend,
  dustAllowance,
  genesisOf,
  indexation,
  lmdbEngine,
  memoryEngine,
  postgresEngine,
  postgresUrl,
  single,
  spend,
  wallet,
  type Engine,
  type EngineOptions,
  type Storage,
  type Wallet,
  refusal,
} from "./store-helpers.js";
import type { Output } from "../src/model/types.js";
import { metadataWithLatest } from "../src/node/store/common.js";

const MI = 1_000_000;
const utf8 = new TextEncoder();
const serverUrl = postgresUrl();
const engines: { engine: Engine | undefined; name: string }[] = [
  { engine: memoryEngine, name: "memory" },
  { engine: lmdbEngine, name: "lmdb" },
  { engine: serverUrl === undefined ? undefined : postgresEngine(serverUrl), name: "postgres" },
];

function sorted(ids: readonly string[]): string[] {
  return [...ids].sort();
}

describe.each(engines)("the storage contract: $name", ({ engine: maybeEngine, name }) => {
  const engine = maybeEngine!;
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /** Every check of verify() passes but the last: the unspent outputs sum to the tests' 100 Mi genesis, not the supply. */
  async function consistentButSmall(store: NodeStore): Promise<void> {
    expect(await store.verify()).toMatch(new RegExp(`^(ledger: )?the unspent outputs sum to ${100 * MI}, not the total supply`));
  }

  /** Fresh storage with one store on it, opened (with `open` options, by default a genesis of 100 Mi to `owner`). */
  async function fresh(open: Partial<StoreOpenOptions> = {}, options: EngineOptions = {}): Promise<{ store: NodeStore; storage: Storage; owner: ReturnType<typeof wallet> }> {
    const storage = await engine.storage();
    cleanup.push(() => storage.remove());
    const owner = wallet();
    const store = storage.store(options);
    cleanup.push(() => store.close());
    await store.open({ network: NETWORK, genesis: genesisOf(owner, 100 * MI), ...open });
    return { store, storage, owner };
  }

  // Reopening and schema versions are rules of engines that keep their data across opens; the memory engine has none.
  const onDisk = maybeEngine?.persistent === true ? { it, describe } : { it: (..._: unknown[]) => undefined, describe: (..._: unknown[]) => undefined };

  describe.skipIf(maybeEngine === undefined)(`(${name})`, () => {
    describe("opening: created once, genesis only when new, the network and schema checked", () => {
      it("a new store applies genesis and keeps a ledger; the genesis output is unspent, booked at milestone 0", async () => {
        const { store, owner } = await fresh();
        const genesis = await store.output(GENESIS_OUTPUT);
        expect(genesis).toMatchObject({ outputId: GENESIS_OUTPUT, transactionId: "0".repeat(64), outputIndex: 0, messageId: ZERO_MESSAGE_ID, milestoneIndexBooked: 0 });
        expect(genesis?.spent).toBeUndefined();
        expect(genesis?.output).toEqual(single(owner, 100 * MI));
        expect(await store.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressOutputs(owner.address, { max: 10 })).toEqual([GENESIS_OUTPUT]);
        expect(await store.unreferenced(8)).toEqual([]);
      });

      it("a store made without genesis keeps no ledger", async () => {
        const storage = await engine.storage();
        cleanup.push(() => storage.remove());
        const store = storage.store();
        cleanup.push(() => store.close());
        expect(await store.open({ network: NETWORK })).toEqual({ created: true, ledger: false });
        expect(await store.output(GENESIS_OUTPUT)).toBeUndefined();
      });

      it("opening again finds the store (created: false) and does not apply genesis a second time", async () => {
        const { store, storage, owner } = await fresh();
        const other = wallet();
        if (engine.persistent) {
          await store.close();
          const again = storage.store();
          cleanup.push(() => again.close());
          expect(await again.open({ network: NETWORK, genesis: genesisOf(other, 5 * MI) })).toEqual({ created: false, ledger: true });
          expect(await again.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
          expect(await again.addressBalance(other.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
        } else {
          expect(await store.open({ network: NETWORK, genesis: genesisOf(other, 5 * MI) })).toEqual({ created: false, ledger: true });
          expect(await store.addressBalance(other.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
        }
      });

      it("a store made for another network refuses to open (STORE_WRONG_NETWORK)", async () => {
        const { store, storage } = await fresh();
        let target = store;
        if (engine.persistent) {
          await store.close();
          target = storage.store();
          cleanup.push(() => target.close());
        }
        const error = await refusal(target.open({ network: "chrysalis-other" }));
        expect(error.code).toBe("STORE_WRONG_NETWORK");
        expect(error.message).toContain(NETWORK);
      });

      onDisk.it("a store written by a newer schema version refuses to open (STORE_TOO_NEW), and says so", async () => {
        const { store, storage } = await fresh();
        await store.close();
        await storage.bumpSchema();
        const again = storage.store();
        cleanup.push(() => again.close());
        const error = await refusal(again.open({ network: NETWORK }));
        expect(error.code).toBe("STORE_TOO_NEW");
        expect(error.message).toMatch(/upgrade/);
        expect(STORE_SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
      });

      it("a closed store answers STORE_UNAVAILABLE (503)", async () => {
        const { store } = await fresh();
        await store.close();
        const read = await refusal(store.get(ZERO_MESSAGE_ID));
        expect(read.code).toBe("STORE_UNAVAILABLE");
        const write = await refusal(store.accept(indexation([ZERO_MESSAGE_ID], "late")));
        expect(write.code).toBe("STORE_UNAVAILABLE");
        expect((write as ProtocolError & { status: number }).status).toBe(503);
      });
    });

    describe("messages: stored with their metadata, children, index and unreferenced entries", () => {
      it("a stored message reads back byte for byte, decoded, with its metadata", async () => {
        const { store } = await fresh();
        const a = indexation([ZERO_MESSAGE_ID], "hello", "world");
        const arrival = { ...a, arrivalTime: 1_700_000_000_123, coneRoots: { oldest: 3, youngest: 5 } };
        expect(await store.accept(arrival)).toEqual({ stored: true });
        const got = await store.get(a.id.toUpperCase());
        expect(got?.id).toBe(a.id);
        expect(Buffer.from(got!.bytes).equals(Buffer.from(a.bytes))).toBe(true);
        expect(got?.message).toEqual(a.message);
        expect(await store.has(a.id)).toBe(true);
        expect(await store.metadata(a.id)).toEqual({ arrivalTime: 1_700_000_000_123, solid: true, coneRoots: { oldest: 3, youngest: 5 } });
        expect(await store.get("ab".repeat(32))).toBeUndefined();
        expect(await store.metadata("ab".repeat(32))).toBeUndefined();
        expect(await store.has("ab".repeat(32))).toBe(false);
      });

      it("messages read together, some while another is read: each caller its own message (or none), as its own bytes", async () => {
        const { store } = await fresh();
        const messages = Array.from({ length: 12 }, (_, i) => indexation([ZERO_MESSAGE_ID], "together", `message ${i}`));
        for (const m of messages) await store.accept(m);
        const unknown = "cd".repeat(32);
        const first = store.get(messages[0]!.id);
        const ids = [messages[1]!.id, unknown, messages[2]!.id.toUpperCase(), messages[1]!.id, ...messages.slice(3).map((m) => m.id), messages[1]!.id];
        const got = await Promise.all(ids.map((id) => store.get(id)));
        expect((await first)?.id).toBe(messages[0]!.id);
        expect(got.map((g) => g?.id)).toEqual(ids.map((id) => (id === unknown ? undefined : id.toLowerCase())));
        for (const g of got) {
          if (g === undefined) continue;
          expect(Buffer.from(g.bytes).equals(Buffer.from(messages.find((m) => m.id === g.id)!.bytes))).toBe(true);
        }
        // The three answers for one message are three: changing one leaves the others as stored.
        const copies = got.filter((g) => g?.id === messages[1]!.id);
        expect(copies).toHaveLength(3);
        copies[0]!.bytes.fill(0xff);
        expect(Buffer.from(copies[1]!.bytes).equals(Buffer.from(messages[1]!.bytes))).toBe(true);
        expect(Buffer.from(copies[2]!.bytes).equals(Buffer.from(messages[1]!.bytes))).toBe(true);
      });

      it("storing the same id again writes nothing (stored: false)", async () => {
        const { store } = await fresh();
        const a = indexation([ZERO_MESSAGE_ID], "twice");
        expect(await store.accept(a)).toEqual({ stored: true });
        const b = indexation([a.id], "child");
        await store.accept(b);
        expect(await store.accept({ ...a, arrivalTime: 1 })).toEqual({ stored: false });
        expect((await store.metadata(a.id))?.arrivalTime).toBe(a.arrivalTime);
        expect(await store.children(ZERO_MESSAGE_ID, 10)).toEqual([a.id]);
        expect(await store.unreferenced(10)).toEqual([a.id, b.id]);
      });

      it("children: the messages naming a parent, oldest first, at most max", async () => {
        const { store } = await fresh();
        const kids = [];
        for (let i = 0; i < 5; i++) {
          const kid = indexation([ZERO_MESSAGE_ID], `kid ${i}`);
          await store.accept(kid);
          kids.push(kid.id);
        }
        expect(await store.children(ZERO_MESSAGE_ID, 10)).toEqual(kids);
        expect(await store.children(ZERO_MESSAGE_ID, 2)).toEqual(kids.slice(0, 2));
        expect(await store.children(kids[0]!, 10)).toEqual([]);
      });

      it("the index lookup: the newest max ids with that index, oldest first; an essence's index counts too", async () => {
        const { store, owner } = await fresh();
        const ids = [];
        for (let i = 0; i < 4; i++) {
          const m = indexation([ZERO_MESSAGE_ID], "topic", `message ${i}`);
          await store.accept(m);
          ids.push(m.id);
        }
        await store.accept(indexation([ZERO_MESSAGE_ID], "topic2"));
        await store.accept(indexation([ZERO_MESSAGE_ID], "topi"));
        const tx = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)], [ZERO_MESSAGE_ID], "topic");
        await store.accept(tx.acceptance);
        ids.push(tx.acceptance.id);
        expect(await store.findByIndex(utf8.encode("topic"), 1000)).toEqual(ids);
        expect(await store.findByIndex(utf8.encode("topic"), 2)).toEqual(ids.slice(-2));
        expect(await store.findByIndex(utf8.encode("nothing"), 10)).toEqual([]);
      });

      it("unreferenced: every stored message until a milestone references it, oldest first, the newest max of them", async () => {
        const { store } = await fresh();
        const a = indexation([ZERO_MESSAGE_ID], "a");
        const b = indexation([a.id], "b");
        const c = indexation([ZERO_MESSAGE_ID], "c");
        for (const m of [a, b, c]) await store.accept(m);
        expect(await store.unreferenced(10)).toEqual([a.id, b.id, c.id]);
        expect(await store.unreferenced(2)).toEqual([b.id, c.id]);
        expect(await store.unreferenced(0)).toEqual([]);
        const ms = indexation([b.id], "milestone 1");
        await issue(store, { index: 1, timestamp: 1_700_000_001, message: ms, referenced: [a, b].map((m) => ({ messageId: m.id, ledgerInclusionState: "noTransaction" as const })) });
        expect(await store.unreferenced(10)).toEqual([c.id]);
        // A message whose child came first is unreferenced all the same.
        const parent = indexation([ZERO_MESSAGE_ID], "parent after its child");
        const child = indexation([parent.id], "child before its parent");
        await store.accept(child);
        await store.accept(parent);
        expect(await store.unreferenced(10)).toEqual([c.id, child.id, parent.id]);
      });

      it("a DAG of 300 messages, some children before their parents: children, index and unreferenced the same as the memory engine's", async () => {
        const messages = dag(300, 8);
        const reference = new MemoryStore();
        await reference.open({ network: NETWORK });
        const { store } = await fresh();
        for (const m of messages) {
          expect((await reference.accept(m)).stored).toBe(true);
          expect((await store.accept(m)).stored).toBe(true);
        }
        // Children oldest first, as the contract has them, all of them or the first two.
        for (const m of [...messages, { id: ZERO_MESSAGE_ID }]) {
          for (const max of [1000, 2]) expect(await store.children(m.id, max), `${m.id} (at most ${max})`).toEqual(await reference.children(m.id, max));
        }
        for (let i = 0; i < 5; i++) {
          const index = utf8.encode(`dag 8 ${i}`);
          for (const max of [1000, 3]) expect(await store.findByIndex(index, max), `index ${i} (at most ${max})`).toEqual(await reference.findByIndex(index, max));
        }
        for (const max of [1000, 7]) expect(await store.unreferenced(max)).toEqual(await reference.unreferenced(max));
      });
    });

    describe("claims: a submitted transaction holds the outputs it spends, the ledger moves only at confirmation", () => {
      it("accepting a transaction stores it with its claim and moves no output, balance or address list", async () => {
        const { store, owner } = await fresh();
        const to = wallet();
        const tx = spend(owner, [GENESIS_OUTPUT], [single(to, 30 * MI), single(owner, 70 * MI)]);
        expect(await store.accept(tx.acceptance)).toEqual({ stored: true });
        expect(await store.claim(GENESIS_OUTPUT.toUpperCase())).toEqual({ transactionId: tx.transactionId, messageId: tx.acceptance.id, index: 0 });
        expect((await store.output(GENESIS_OUTPUT))?.spent).toBeUndefined();
        for (const id of tx.created) expect(await store.output(id)).toBeUndefined();
        expect(await store.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressBalance(to.address)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressOutputs(owner.address, { max: 10, includeSpent: true })).toEqual([GENESIS_OUTPUT]);
        expect(await store.addressOutputs(to.address, { max: 10, includeSpent: true })).toEqual([]);
        await consistentButSmall(store);
      });

      it("an input neither the confirmed ledger nor a pending transaction holds is refused (INPUT_NOT_FOUND naming the input), and nothing is written", async () => {
        const { store, owner } = await fresh();
        const tx = spend(owner, ["ab".repeat(32) + "0000"], [single(owner, 100 * MI)]);
        const error = await refusal(store.accept(tx.acceptance));
        expect(error.code).toBe("INPUT_NOT_FOUND");
        expect(error.path).toBe("payload.essence.inputs[0]");
        expect(await store.has(tx.acceptance.id)).toBe(false);
        expect(await store.pendingOutput(tx.created[0]!)).toBeUndefined();
      });

      it("a pending transaction's outputs are pending outputs: a chained spend claims one, a second spend of it is refused, and confirmation books them and drops them", async () => {
        const { store, owner } = await fresh();
        const to = wallet();
        const first = spend(owner, [GENESIS_OUTPUT], [single(to, 60 * MI), single(owner, 40 * MI)]);
        await store.accept(first.acceptance);
        const toOutput = first.created[first.payload.essence.outputs.findIndex((o) => o.amount === 60 * MI)]!;
        expect(await store.pendingOutput(toOutput.toUpperCase())).toEqual({ outputId: toOutput, transactionId: first.transactionId, messageId: first.acceptance.id, output: single(to, 60 * MI), index: 0 });
        expect(await store.output(toOutput)).toBeUndefined();
        const chained = spend(to, [toOutput], [single(wallet(), 60 * MI)], [first.acceptance.id]);
        expect(await store.accept(chained.acceptance)).toEqual({ stored: true });
        expect((await store.claim(toOutput))?.transactionId).toBe(chained.transactionId);
        const again = spend(to, [toOutput], [single(to, 60 * MI)], [first.acceptance.id]);
        expect((await refusal(store.accept(again.acceptance))).code).toBe("INPUT_SPENT");
        // Confirmed in walk order: both included; the pending outputs become the ledger's and go.
        await issue(store, {
          index: 1,
          timestamp: 1_700_000_001,
          message: indexation([chained.acceptance.id], "milestone 1"),
          referenced: [first, chained].map((s) => ({ messageId: s.acceptance.id, ledgerInclusionState: "included" as const })),
          included: [first, chained],
        });
        for (const id of [...first.created, ...chained.created]) expect(await store.pendingOutput(id)).toBeUndefined();
        expect(await store.output(toOutput)).toMatchObject({ milestoneIndexBooked: 1, spent: { transactionId: chained.transactionId, milestoneIndex: 1 } });
        expect(await store.claim(toOutput)).toBeUndefined();
        await consistentButSmall(store);
      });

      it("a conflicting transaction's pending outputs are discarded: a chained spend of them is refused from then on", async () => {
        const { store, owner } = await fresh();
        const loser = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept(loser.acceptance);
        expect(await store.pendingOutput(loser.created[0]!)).toBeDefined();
        const ms = indexation([loser.acceptance.id], "milestone 1");
        await issue(store, { index: 1, timestamp: 1_700_000_001, message: ms, referenced: [{ messageId: loser.acceptance.id, ledgerInclusionState: "conflicting", conflictReason: 6 }], released: [{ outputId: GENESIS_OUTPUT, transactionId: loser.transactionId }], discarded: loser.created });
        expect(await store.pendingOutput(loser.created[0]!)).toBeUndefined();
        expect((await refusal(store.accept(spend(owner, [loser.created[0]!], [single(owner, 100 * MI)], [ms.id]).acceptance))).code).toBe("INPUT_NOT_FOUND");
        await consistentButSmall(store);
      });

      it("an input another pending transaction holds is refused (INPUT_SPENT), and the refused write leaves nothing: message, children, index, unreferenced, claim", async () => {
        const { store, owner } = await fresh();
        const first = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept(first.acceptance);
        const parent = indexation([first.acceptance.id], "parent");
        await store.accept(parent);
        const thief = wallet();
        const again = spend(owner, [GENESIS_OUTPUT], [single(thief, 100 * MI)], [parent.id], "refused");
        const error = await refusal(store.accept(again.acceptance));
        expect(error.code).toBe("INPUT_SPENT");
        expect(error.path).toBe("payload.essence.inputs[0]");
        expect(error.message).toContain(first.transactionId);
        expect(await store.has(again.acceptance.id)).toBe(false);
        expect(await store.metadata(again.acceptance.id)).toBeUndefined();
        expect(await store.children(parent.id, 10)).toEqual([]);
        expect(await store.findByIndex(utf8.encode("refused"), 10)).toEqual([]);
        expect(await store.unreferenced(10)).toEqual([first.acceptance.id, parent.id]);
        expect((await store.claim(GENESIS_OUTPUT))?.transactionId).toBe(first.transactionId);
      });

      it("the same transaction in a new message (a reattachment) is accepted, pending or confirmed", async () => {
        const { store, owner } = await fresh();
        const first = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept(first.acceptance);
        const reattached = acceptance({ ...first.acceptance.message, parents: parentsOf([first.acceptance.id]) }, { claim: first.acceptance.claim });
        expect(await store.accept(reattached)).toEqual({ stored: true });
        // The claim follows the newest message carrying the transaction, and lapses from there.
        expect(await store.claim(GENESIS_OUTPUT)).toEqual({ transactionId: first.transactionId, messageId: reattached.id, index: 0 });
        await issue(store, {
          index: 1,
          timestamp: 1_700_000_001,
          message: indexation([reattached.id], "milestone 1"),
          referenced: [
            { messageId: first.acceptance.id, ledgerInclusionState: "included" },
            { messageId: reattached.id, ledgerInclusionState: "conflicting", conflictReason: 2 },
          ],
          included: [first],
        });
        const late = acceptance({ ...first.acceptance.message, parents: parentsOf([ZERO_MESSAGE_ID, reattached.id]) }, { claim: first.acceptance.claim });
        expect(await store.accept(late)).toEqual({ stored: true });
        expect(await store.claim(GENESIS_OUTPUT)).toBeUndefined();
        await consistentButSmall(store);
      });

      it("a message without a claim (a peer's) is stored whatever the claims and the ledger say", async () => {
        const { store, owner } = await fresh();
        const first = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept(first.acceptance);
        const rival = spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)]);
        const unknown = spend(owner, ["ef".repeat(32) + "0000"], [single(owner, 100 * MI)]);
        for (const s of [rival, unknown]) expect(await store.accept({ ...s.acceptance, claim: undefined })).toEqual({ stored: true });
        expect((await store.claim(GENESIS_OUTPUT))?.transactionId).toBe(first.transactionId);
        expect(await store.claim(unknown.consumed[0]!)).toBeUndefined();
      });

      it(`a claim and a pending output lapse ${PENDING_CLAIM_MILESTONES} milestones after they were made, and then another transaction may claim the output`, async () => {
        const { store, owner } = await fresh();
        const first = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept(first.acceptance);
        let parent = first.acceptance.id;
        const next = (): Spend => spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)], [parent]);
        for (let index = 1; index <= PENDING_CLAIM_MILESTONES; index++) {
          if (index === PENDING_CLAIM_MILESTONES) expect((await refusal(store.accept(next().acceptance))).code).toBe("INPUT_SPENT");
          const ms = indexation([parent], `milestone ${index}`);
          expect(await store.accept({ ...ms, milestone: emptyMilestone(ms, index, 1_700_000_000 + index) })).toEqual({ stored: true });
          parent = ms.id;
        }
        const second = next();
        expect(await store.accept(second.acceptance)).toEqual({ stored: true });
        expect(await store.claim(GENESIS_OUTPUT)).toEqual({ transactionId: second.transactionId, messageId: second.acceptance.id, index: PENDING_CLAIM_MILESTONES });
        // The first one's pending output lapsed with it: a chained spend of it is refused.
        expect((await refusal(store.accept(spend(owner, [first.created[0]!], [single(owner, 100 * MI)], [parent]).acceptance))).code).toBe("INPUT_NOT_FOUND");
      });

      it("of transactions spending one output at the same instant, exactly one is accepted", async () => {
        const { store, owner } = await fresh();
        const takers = Array.from({ length: 8 }, () => wallet());
        const txs = takers.map((w) => spend(owner, [GENESIS_OUTPUT], [single(w, 100 * MI)]));
        const results = await Promise.allSettled(txs.map((t) => store.accept(t.acceptance)));
        const won = results.flatMap((r, i) => (r.status === "fulfilled" && r.value.stored ? [i] : []));
        expect(won).toHaveLength(1);
        for (const [i, r] of results.entries()) {
          if (i === won[0]) continue;
          expect(r.status).toBe("rejected");
          expect(((r as PromiseRejectedResult).reason as ProtocolError).code).toBe("INPUT_SPENT");
          expect(await store.has(txs[i]!.acceptance.id)).toBe(false);
        }
        expect((await store.claim(GENESIS_OUTPUT))?.transactionId).toBe(txs[won[0]!]!.transactionId);
      });
    });

    describe("confirmation: a milestone's walk lands in one write, and only there does the ledger move", () => {
      async function confirmedOnce(): Promise<{ store: NodeStore; owner: Wallet; to: Wallet; tx: Spend; rival: Spend; milestone: MilestoneApplication; note: string; ms: ReturnType<typeof indexation> }> {
        const { store, owner } = await fresh();
        const to = wallet();
        const tx = spend(owner, [GENESIS_OUTPUT], [single(to, 60 * MI), single(owner, 40 * MI)]);
        await store.accept(tx.acceptance);
        // A double spend from a peer (no claim), and an API one whose claim the milestone releases.
        const rival = spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)], [tx.acceptance.id]);
        await store.accept({ ...rival.acceptance, claim: undefined });
        const note = indexation([ZERO_MESSAGE_ID], "no transaction");
        await store.accept(note);
        const ms = indexation([rival.acceptance.id, note.id], "milestone 1");
        const milestone = await issue(store, {
          index: 1,
          timestamp: 1_700_000_000,
          message: ms,
          referenced: [
            { messageId: tx.acceptance.id, ledgerInclusionState: "included" },
            { messageId: rival.acceptance.id, ledgerInclusionState: "conflicting", conflictReason: 2 },
            { messageId: note.id, ledgerInclusionState: "noTransaction" },
          ],
          included: [tx],
        });
        return { store, owner, to, tx, rival, milestone, note: note.id, ms };
      }

      it("the milestone, its UTXO changes and the metadata it confirms; the outputs, spends, balances and address lists it books; the claims it settles", async () => {
        const { store, owner, to, tx, rival, milestone, note, ms } = await confirmedOnce();
        expect(await store.milestone(1)).toEqual({ index: 1, messageId: ms.id, timestamp: 1_700_000_000 });
        expect(await store.latestMilestone()).toEqual({ index: 1, messageId: ms.id, timestamp: 1_700_000_000 });
        expect(await store.milestone(2)).toBeUndefined();
        expect(await store.utxoChanges(1)).toEqual({ index: 1, createdOutputs: milestone.created.map((o) => o.outputId), consumedOutputs: [GENESIS_OUTPUT] });
        expect(await store.utxoChanges(2)).toBeUndefined();
        expect(await store.metadata(tx.acceptance.id)).toMatchObject({ referencedByMilestoneIndex: 1, ledgerInclusionState: "included" });
        expect((await store.metadata(tx.acceptance.id))?.milestoneIndex).toBeUndefined();
        expect(await store.metadata(rival.acceptance.id)).toMatchObject({ referencedByMilestoneIndex: 1, ledgerInclusionState: "conflicting", conflictReason: 2 });
        expect(await store.metadata(note)).toMatchObject({ referencedByMilestoneIndex: 1, ledgerInclusionState: "noTransaction" });
        expect(await store.metadata(ms.id)).toMatchObject({ referencedByMilestoneIndex: 1, milestoneIndex: 1, ledgerInclusionState: "noTransaction" });
        for (const [i, id] of tx.created.entries()) {
          expect(await store.output(id.toUpperCase())).toEqual({ outputId: id, transactionId: tx.transactionId, outputIndex: i, messageId: tx.acceptance.id, output: tx.payload.essence.outputs[i], milestoneIndexBooked: 1 });
        }
        expect((await store.output(GENESIS_OUTPUT))?.spent).toEqual({ transactionId: tx.transactionId, messageId: tx.acceptance.id, milestoneIndex: 1 });
        expect(await store.claim(GENESIS_OUTPUT)).toBeUndefined();
        expect(await store.addressBalance(owner.address)).toEqual({ balance: 40 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressBalance(to.address)).toEqual({ balance: 60 * MI, dustAllowance: 0, dustOutputs: 0 });
        const ownerOutput = tx.created[tx.payload.essence.outputs.findIndex((o) => o.amount === 40 * MI)]!;
        const toOutput = tx.created[tx.payload.essence.outputs.findIndex((o) => o.amount === 60 * MI)]!;
        expect(await store.addressOutputs(owner.address, { max: 10 })).toEqual([ownerOutput]);
        expect(await store.addressOutputs(owner.address, { max: 10, includeSpent: true })).toEqual([ownerOutput, GENESIS_OUTPUT]);
        expect(await store.addressOutputs(owner.address, { max: 1, includeSpent: true })).toEqual([ownerOutput]);
        expect(await store.addressOutputs(to.address, { max: 10 })).toEqual([toOutput]);
        expect(await store.addressOutputs(to.address, { max: 10, type: 1 })).toEqual([]);
        expect(await store.addressOutputs(to.address, { max: 10, type: 0 })).toEqual([toOutput]);
        expect(await store.unreferenced(10)).toEqual([]);
        await consistentButSmall(store);
      });

      it("a conflicting transaction's claim is released; then another transaction may claim its output", async () => {
        const { store, owner } = await fresh();
        const loser = spend(owner, [GENESIS_OUTPUT], [single(wallet(), 100 * MI)]);
        await store.accept(loser.acceptance);
        const ms = indexation([loser.acceptance.id], "milestone 1");
        await issue(store, {
          index: 1,
          timestamp: 1_700_000_001,
          message: ms,
          referenced: [{ messageId: loser.acceptance.id, ledgerInclusionState: "conflicting", conflictReason: 6 }],
          released: [{ outputId: GENESIS_OUTPUT, transactionId: loser.transactionId }, { outputId: GENESIS_OUTPUT.replace(/^0/, "1"), transactionId: loser.transactionId }],
        });
        expect(await store.claim(GENESIS_OUTPUT)).toBeUndefined();
        expect((await store.output(GENESIS_OUTPUT))?.spent).toBeUndefined();
        const next = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)], [ms.id]);
        expect(await store.accept(next.acceptance)).toEqual({ stored: true });
        // A release names the transaction: another transaction's claim on the output stays.
        const ms2 = indexation([next.acceptance.id], "milestone 2");
        await issue(store, { index: 2, timestamp: 1_700_000_002, message: ms2, referenced: [], released: [{ outputId: GENESIS_OUTPUT, transactionId: loser.transactionId }] });
        expect((await store.claim(GENESIS_OUTPUT))?.transactionId).toBe(next.transactionId);
      });

      it("unspent outputs of an address come oldest first, across milestones; an output created and spent by one milestone is booked and spent by it", async () => {
        const { store, owner } = await fresh();
        const to = wallet();
        const first = spend(owner, [GENESIS_OUTPUT], [single(to, 10 * MI), single(owner, 90 * MI)]);
        await store.accept(first.acceptance);
        const rest = first.created[first.payload.essence.outputs.findIndex((o) => o.amount === 90 * MI)]!;
        const second = spend(owner, [rest], [single(to, 20 * MI), single(owner, 70 * MI)], [first.acceptance.id]);
        await store.accept({ ...second.acceptance, claim: undefined });
        await issue(store, {
          index: 1,
          timestamp: 1_700_000_001,
          message: indexation([second.acceptance.id], "milestone 1"),
          referenced: [first, second].map((s) => ({ messageId: s.acceptance.id, ledgerInclusionState: "included" as const })),
          included: [first, second],
        });
        const ofTo = (s: Spend, amount: number): string => s.created[s.payload.essence.outputs.findIndex((o) => o.amount === amount)]!;
        expect(await store.addressOutputs(to.address, { max: 10 })).toEqual([ofTo(first, 10 * MI), ofTo(second, 20 * MI)]);
        expect(await store.output(rest)).toMatchObject({ milestoneIndexBooked: 1, spent: { transactionId: second.transactionId, messageId: second.acceptance.id, milestoneIndex: 1 } });
        expect(await store.addressBalance(owner.address)).toEqual({ balance: 70 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressBalance(to.address)).toEqual({ balance: 30 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.utxoChanges(1)).toEqual({ index: 1, createdOutputs: [...first.created, ...second.created], consumedOutputs: [GENESIS_OUTPUT, rest] });
        await consistentButSmall(store);
      });

      it("a chain of spends of the whole supply inside one milestone leaves every balance exact (no sum past 2^53)", async () => {
        const owner = wallet();
        const { store } = await fresh({ genesis: genesisOf(owner, TOTAL_SUPPLY) });
        // Each spends the one before's output, from peers (the API claims confirmed outputs only), paying an iota to another
        // wallet: 20 × the supply moves through the owner's address inside milestone 1.
        const chain: Spend[] = [];
        let input = GENESIS_OUTPUT;
        let left = TOTAL_SUPPLY;
        let parent = ZERO_MESSAGE_ID;
        for (let i = 0; i < 20; i++) {
          const s = spend(owner, [input], [single(owner, left - 1), single(wallet(), 1)], [parent]);
          expect(await store.accept({ ...s.acceptance, claim: undefined })).toEqual({ stored: true });
          chain.push(s);
          left -= 1;
          input = s.created[s.payload.essence.outputs.findIndex((o) => o.amount === left)]!;
          parent = s.acceptance.id;
        }
        await issue(store, { index: 1, timestamp: 1_700_000_001, message: indexation([parent], "milestone 1"), referenced: chain.map((s) => ({ messageId: s.acceptance.id, ledgerInclusionState: "included" as const })), included: chain });
        expect(await store.addressBalance(owner.address)).toEqual({ balance: TOTAL_SUPPLY - 20, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.addressOutputs(owner.address, { max: 10 })).toEqual([input]);
        expect(await store.verify()).toBeUndefined();
      });

      it("the balances count dust outputs and dust allowances", async () => {
        const { store, owner } = await fresh();
        const dusty = wallet();
        const funded = spend(owner, [GENESIS_OUTPUT], [dustAllowance(dusty, MI), single(dusty, 100_000), single(owner, 100 * MI - MI - 100_000)]);
        await store.accept(funded.acceptance);
        await issue(store, { index: 1, timestamp: 1_700_000_001, message: indexation([funded.acceptance.id], "milestone 1"), referenced: [{ messageId: funded.acceptance.id, ledgerInclusionState: "included" }], included: [funded] });
        expect(await store.addressBalance(dusty.address)).toEqual({ balance: MI + 100_000, dustAllowance: MI, dustOutputs: 1 });
        expect(await store.addressOutputs(dusty.address, { max: 20, type: 1 })).toHaveLength(1);
        expect(await store.addressOutputs(dusty.address, { max: 20, type: 0 })).toHaveLength(1);
      });

      it("metadataWithLatest reads what metadata and latestMilestone read, in the order asked, before and after a milestone", async () => {
        const { store } = await fresh();
        const unknown = "ab".repeat(32);
        const first = indexation([ZERO_MESSAGE_ID], "read together");
        await store.accept(first);
        const separate = async (ids: string[]) => ({ metadata: await Promise.all(ids.map((id) => store.metadata(id))), latest: await store.latestMilestone() });
        const cases = [[], [unknown], [first.id, unknown, first.id.toUpperCase(), ZERO_MESSAGE_ID, first.id]];
        for (const ids of cases) expect(await metadataWithLatest(store, ids)).toEqual(await separate(ids));
        const read = await metadataWithLatest(store, [unknown, first.id]);
        expect(read.metadata[0]).toBeUndefined();
        expect(read.metadata[1]).toMatchObject({ solid: true, arrivalTime: first.arrivalTime });
        expect(read.latest).toBeUndefined();
        const ms = indexation([first.id], "milestone 1");
        await issue(store, { index: 1, timestamp: 1_700_000_000, message: ms, referenced: [{ messageId: first.id, ledgerInclusionState: "noTransaction" }] });
        for (const after of [[ms.id, first.id, unknown], [], [ZERO_MESSAGE_ID]]) expect(await metadataWithLatest(store, after)).toEqual(await separate(after));
        // Asked together (an engine may answer them in one read): each gets its own list's answer.
        const lists = [[ms.id], [], [unknown, first.id], [first.id, first.id, ms.id], [ZERO_MESSAGE_ID, unknown], ...Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? [first.id] : [ms.id, unknown, first.id]))];
        const together = await Promise.all(lists.map((ids) => metadataWithLatest(store, ids)));
        for (const [i, ids] of lists.entries()) expect(together[i]).toEqual(await separate(ids));
        const after = [ms.id, first.id, unknown];
        expect((await metadataWithLatest(store, after)).latest).toEqual({ index: 1, messageId: ms.id, timestamp: 1_700_000_000 });
        expect((await metadataWithLatest(store, [first.id])).metadata[0]).toMatchObject({ referencedByMilestoneIndex: 1 });
      });

      it("an index that is not the next one is refused (MILESTONE_CONFLICT) and nothing is written", async () => {
        const { store, ms } = await confirmedOnce();
        for (const index of [1, 3]) {
          const m = indexation([ms.id], `milestone ${index} again`);
          const error = await refusal(store.accept({ ...m, milestone: emptyMilestone(m, index, 1) }));
          expect(error.code).toBe("MILESTONE_CONFLICT");
          expect(await store.has(m.id)).toBe(false);
        }
        expect((await store.latestMilestone())?.index).toBe(1);
      });

      it("a milestone that spends an output the ledger does not hold unspent is refused (STORE_CORRUPT) and nothing is written", async () => {
        const { store, owner, tx, ms } = await confirmedOnce();
        const again = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)], [ms.id]);
        await store.accept({ ...again.acceptance, claim: undefined });
        const m = indexation([again.acceptance.id], "milestone 2 spends a spent output");
        const milestone: MilestoneApplication = {
          ...emptyMilestone(m, 2, 2),
          referenced: [{ messageId: again.acceptance.id, ledgerInclusionState: "included" }, { messageId: m.id, ledgerInclusionState: "noTransaction" }],
          consumed: [{ outputId: GENESIS_OUTPUT, output: single(owner, 100 * MI), transactionId: again.transactionId, messageId: again.acceptance.id }],
          created: [{ outputId: again.created[0]!, transactionId: again.transactionId, outputIndex: 0, messageId: again.acceptance.id, output: single(owner, 100 * MI) }],
        };
        expect((await refusal(store.accept({ ...m, milestone }))).code).toBe("STORE_CORRUPT");
        expect(await store.has(m.id)).toBe(false);
        expect(await store.output(again.created[0]!)).toBeUndefined();
        expect((await store.output(GENESIS_OUTPUT))?.spent?.transactionId).toBe(tx.transactionId);
        expect((await store.latestMilestone())?.index).toBe(1);
        await consistentButSmall(store);
      });

      it("of two milestones with the next index written at the same instant, exactly one lands", async () => {
        const { store, ms } = await confirmedOnce();
        const candidates = ["a", "b"].map((tag) => indexation([ms.id], `milestone 2 ${tag}`));
        const results = await Promise.allSettled(candidates.map((m) => store.accept({ ...m, milestone: emptyMilestone(m, 2, 2) })));
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        expect(((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason as ProtocolError).code).toBe("MILESTONE_CONFLICT");
        const latest = await store.latestMilestone();
        expect(latest?.index).toBe(2);
        expect(candidates.map((c) => c.id)).toContain(latest?.messageId);
      });

      it("confirmMilestone confirms a milestone whose message is stored already (a follower's), once: the next index only, of two at once exactly one", async () => {
        const { store, owner } = await fresh();
        const tx = spend(owner, [GENESIS_OUTPUT], [single(owner, 100 * MI)]);
        await store.accept({ ...tx.acceptance, claim: undefined });
        const ms = indexation([tx.acceptance.id], "milestone 1 from a peer");
        expect(await store.accept(ms)).toEqual({ stored: true });
        const application = await milestoneApplication(store, { index: 1, timestamp: 1_700_000_001, message: ms, referenced: [{ messageId: tx.acceptance.id, ledgerInclusionState: "included" }], included: [tx] });
        expect((await refusal(store.confirmMilestone({ ...application, index: 2 }))).code).toBe("MILESTONE_CONFLICT");
        const results = await Promise.allSettled([store.confirmMilestone(application), store.confirmMilestone(application)]);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        expect(((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason as ProtocolError).code).toBe("MILESTONE_CONFLICT");
        expect(await store.latestMilestone()).toEqual({ index: 1, messageId: ms.id, timestamp: 1_700_000_001 });
        expect(await store.metadata(ms.id)).toMatchObject({ referencedByMilestoneIndex: 1, milestoneIndex: 1, ledgerInclusionState: "noTransaction" });
        expect(await store.metadata(tx.acceptance.id)).toMatchObject({ referencedByMilestoneIndex: 1, ledgerInclusionState: "included" });
        expect((await store.output(tx.created[0]!))?.milestoneIndexBooked).toBe(1);
        expect(await store.addressBalance(owner.address)).toEqual({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 });
        expect(await store.unreferenced(10)).toEqual([]);
        await consistentButSmall(store);
      });
    });

    describe("prove-ownership nonces, revoked JWT ids and shared secrets", () => {
      it("a nonce is redeemed exactly once, also when redeemed many times at the same instant", async () => {
        const { store } = await fresh();
        const now = Date.now();
        expect(await store.redeemNonce("nonce-1", now + 60_000)).toBe(true);
        expect(await store.redeemNonce("nonce-1", now + 60_000)).toBe(false);
        const results = await Promise.all(Array.from({ length: 16 }, () => store.redeemNonce("nonce-2", now + 60_000)));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it("redemptions made while another is being written: each nonce once, by its first caller, the repeats refused", async () => {
        const { store } = await fresh();
        const now = Date.now();
        const inFlight = store.redeemNonce("in flight", now + 60_000);
        const calls = ["x", "y", "x", "in flight", "z", "y", "x"];
        const results = await Promise.all(calls.map((nonce) => store.redeemNonce(nonce, now + 60_000)));
        expect(await inFlight).toBe(true);
        expect(results).toEqual([true, true, false, false, true, false, false]);
        expect(await Promise.all(["x", "y", "z"].map((nonce) => store.redeemNonce(nonce, now + 60_000)))).toEqual([false, false, false]);
      });

      it("revocation checks made together, some while another is read: each answered for its own id, a revocation seen at once", async () => {
        const { store } = await fresh();
        const now = Date.now();
        await store.revokeToken("jti-a", now + 60_000);
        await store.revokeToken("jti-c", now + 60_000);
        const first = store.isTokenRevoked("jti-b");
        const ids = ["jti-a", "jti-b", "jti-c", "jti-a", "jti-d", "jti-c", "jti-b", "jti-e", "jti-f", "jti-g", "jti-h", "jti-a"];
        const answers = await Promise.all(ids.map((jti) => store.isTokenRevoked(jti)));
        expect(await first).toBe(false);
        expect(answers).toEqual(ids.map((jti) => jti === "jti-a" || jti === "jti-c"));
        await store.revokeToken("jti-b", now + 60_000);
        expect(await Promise.all(["jti-b", "jti-d", "jti-b"].map((jti) => store.isTokenRevoked(jti)))).toEqual([true, false, true]);
      });

      it("sweep forgets expired nonces and revocations and keeps live ones; a revocation keeps its latest expiry", async () => {
        const { store } = await fresh();
        const now = 1_000_000;
        await store.redeemNonce("old", now - 1);
        await store.redeemNonce("live", now + 10_000);
        await store.revokeToken("jti-old", now - 1);
        await store.revokeToken("jti-live", now + 10_000);
        await store.revokeToken("jti-extended", now + 20_000);
        await store.revokeToken("jti-extended", now - 5);
        expect(await store.isTokenRevoked("jti-old")).toBe(true);
        expect(await store.isTokenRevoked("jti-never")).toBe(false);
        await store.sweep(now);
        expect(await store.isTokenRevoked("jti-old")).toBe(false);
        expect(await store.isTokenRevoked("jti-live")).toBe(true);
        expect(await store.isTokenRevoked("jti-extended")).toBe(true);
        expect(await store.redeemNonce("live", now + 10_000)).toBe(false);
        expect(await store.redeemNonce("old", now + 10_000)).toBe(true);
      });

      it("a secret is created once and then always the same, also when asked for many times at the same instant", async () => {
        const { store } = await fresh();
        let created = 0;
        const make = (): Uint8Array => {
          created++;
          return globalThis.crypto.getRandomValues(new Uint8Array(32));
        };
        const values = await Promise.all(Array.from({ length: 8 }, () => store.secret("nonce-mac", make)));
        for (const v of values) expect(Buffer.from(v).equals(Buffer.from(values[0]!))).toBe(true);
        const later = await store.secret("nonce-mac", make);
        expect(Buffer.from(later).equals(Buffer.from(values[0]!))).toBe(true);
        expect(created).toBeGreaterThanOrEqual(1);
        const other = await store.secret("another", make);
        expect(Buffer.from(other).equals(Buffer.from(values[0]!))).toBe(false);
      });
    });

    describe("ageing: pruning drops old cones and keeps the ledger", () => {
      const KEYS = [new Uint8Array(32).fill(7), new Uint8Array(32).fill(3)];
      const KEYS_HEX = KEYS.map((k) => hexOf(k)).sort();

      interface Round {
        readonly index: number;
        readonly timestamp: number;
        /** The round's note, transaction and milestone message (and orphan, when it has one), in arrival order. */
        readonly messages: string[];
        readonly milestone: string;
        readonly orphan?: string | undefined;
        readonly tx: Spend;
        /** The owner's output the round's transaction spent, and the one it made. */
        readonly consumed: string;
        readonly rest: string;
        readonly recipient: Wallet;
      }

      interface Chain {
        readonly store: NodeStore;
        readonly storage: Storage;
        readonly owner: Wallet;
        readonly rounds: Round[];
        /** A transaction after the last milestone: unreferenced, its outputs not created, its input claimed. */
        readonly pending: Spend;
        readonly pendingRecipient: Wallet;
        /** The owner's unspent output (made by the last round; `pending` claims it). */
        readonly rest: string;
      }

      const outputOf = (s: Spend, amount: number): string => s.created[s.payload.essence.outputs.findIndex((o) => o.amount === amount)]!;

      /**
       * A store with the total supply at genesis and `count` milestones. Round i: a note and a transaction (1 Mi to a new
       * wallet, the rest back to the owner) under milestone i − 1, then milestone i's own message (a milestone payload
       * signed by KEYS) referencing both. At round `orphanAt`, one more message arrives before the milestone and is
       * never referenced. After the last milestone, one more transaction arrives (pending).
       */
      async function chain(count: number, orphanAt?: number): Promise<Chain> {
        const owner = wallet();
        const { store, storage } = await fresh({ genesis: genesisOf(owner, TOTAL_SUPPLY) });
        const rounds: Round[] = [];
        let parent = ZERO_MESSAGE_ID;
        let rest = GENESIS_OUTPUT;
        let left = TOTAL_SUPPLY;
        for (let index = 1; index <= count; index++) {
          const recipient = wallet();
          const note = indexation([parent], "ageing", `note ${index}`);
          const tx = spend(owner, [rest], [single(recipient, MI), single(owner, left - MI)], [parent], "ageing");
          expect(await store.accept(note)).toEqual({ stored: true });
          expect(await store.accept(tx.acceptance)).toEqual({ stored: true });
          let orphan: string | undefined;
          if (index === orphanAt) {
            const o = indexation([parent], "ageing", `orphan ${index}`);
            expect(await store.accept(o)).toEqual({ stored: true });
            orphan = o.id;
          }
          const timestamp = 1_700_000_000 + index;
          const ms = milestoneMessage([note.id, tx.acceptance.id], index, timestamp, KEYS);
          await issue(store, {
            index,
            timestamp,
            message: ms,
            referenced: [
              { messageId: note.id, ledgerInclusionState: "noTransaction" },
              { messageId: tx.acceptance.id, ledgerInclusionState: "included" },
            ],
            included: [tx],
          });
          left -= MI;
          const made = outputOf(tx, left);
          rounds.push({ index, timestamp, messages: [note.id, tx.acceptance.id, ...(orphan !== undefined ? [orphan] : []), ms.id], milestone: ms.id, orphan, tx, consumed: rest, rest: made, recipient });
          rest = made;
          parent = ms.id;
        }
        const pendingRecipient = wallet();
        const pending = spend(owner, [rest], [single(pendingRecipient, MI), single(owner, left - MI)], [parent], "ageing");
        expect(await store.accept(pending.acceptance)).toEqual({ stored: true });
        return { store, storage, owner, rounds, pending, pendingRecipient, rest };
      }

      /** prune(target, batch) until it says done; every step returned. */
      async function pruneTo(store: NodeStore, target: number, batch = 1000, between?: (step: PruneStep) => Promise<void>): Promise<PruneStep[]> {
        const steps: PruneStep[] = [];
        for (let i = 0; i < 1000; i++) {
          const step = await store.prune(target, batch);
          steps.push(step);
          if (between !== undefined) await between(step);
          if (step.done) return steps;
        }
        throw new Error(`pruning towards ${target} did not finish in 1000 steps`);
      }

      /** What a reader sees of a message: its bytes, metadata and children. */
      async function seen(store: NodeStore, id: string): Promise<unknown> {
        const stored = await store.get(id);
        return { bytes: stored === undefined ? undefined : hexOf(stored.bytes), metadata: await store.metadata(id), children: await store.children(id, 100) };
      }

      it("the latest milestone is the highest stored, whoever wrote it: after this instance's milestone, another instance's milestones and pruning past the one read before, and a reopen", async () => {
        const { store, storage, rounds } = await chain(3);
        const record = (index: number, messageId: string, timestamp: number) => ({ index, messageId, timestamp });
        expect(await store.latestMilestone()).toEqual(record(3, rounds[2]!.milestone, rounds[2]!.timestamp));
        // Another instance on the same storage (the same one for the memory engine) issues 4, then 5 to 7, and prunes 1
        // to 5: the milestone this instance read last (4) and the one after it (5) are both gone by then.
        const other = storage.store();
        cleanup.push(() => other.close());
        await other.open({ network: NETWORK });
        let parent = rounds[2]!.milestone;
        const issue = async (on: NodeStore, index: number): Promise<ReturnType<typeof record>> => {
          const timestamp = 1_700_000_000 + index;
          const ms = milestoneMessage([parent], index, timestamp, KEYS);
          expect(await on.accept({ ...ms, milestone: emptyMilestone(ms, index, timestamp) })).toEqual({ stored: true });
          parent = ms.id;
          return record(index, ms.id, timestamp);
        };
        const fourth = await issue(other, 4);
        expect(await store.latestMilestone()).toEqual(fourth);
        await issue(other, 5);
        await issue(other, 6);
        const seventh = await issue(other, 7);
        expect((await pruneTo(other, 5)).at(-1)).toMatchObject({ pruningIndex: 5, done: true });
        expect(await store.latestMilestone()).toEqual(seventh);
        // This instance's own milestone, seen by both.
        const eighth = await issue(store, 8);
        expect(await store.latestMilestone()).toEqual(eighth);
        expect(await other.latestMilestone()).toEqual(eighth);
        // A milestone that is not the next one is refused by the write, whatever either instance read before.
        const stale = milestoneMessage([parent], 8, 1_700_000_100, KEYS);
        const refused = await refusal(other.accept({ ...stale, milestone: emptyMilestone(stale, 8, 1_700_000_100) }));
        expect(refused.code).toBe("MILESTONE_CONFLICT");
        if (engine.persistent) {
          await store.close();
          await other.close();
          const again = storage.store();
          cleanup.push(() => again.close());
          await again.open({ network: NETWORK });
          expect(await again.latestMilestone()).toEqual(eighth);
        }
      });

      it("a store with no milestone to spare prunes nothing: the pruning index stays 0", async () => {
        const { store } = await fresh();
        expect(await store.pruningIndex()).toBe(0);
        expect(await store.prune(10, 100)).toEqual({ pruningIndex: 0, messages: 0, done: true });
        expect(await store.pruningIndex()).toBe(0);
      });

      it("the messages of milestones at or below the pruning index go with their metadata, children, index and unreferenced entries; recent ones stay byte for byte", async () => {
        const { store, rounds, pending } = await chain(6, 2);
        const pruned = rounds.slice(0, 3).flatMap((r) => r.messages);
        const kept = [...rounds.slice(3).flatMap((r) => r.messages), pending.acceptance.id];
        const before = new Map<string, unknown>();
        for (const id of kept) before.set(id, await seen(store, id));
        const indexBefore = await store.findByIndex(utf8.encode("ageing"), 1000);
        const milestonesBefore = await Promise.all([4, 5, 6].map(async (i) => [await store.milestone(i), await store.utxoChanges(i)]));
        expect(await store.unreferenced(100)).toEqual([rounds[1]!.orphan!, pending.acceptance.id]);

        const steps = await pruneTo(store, 3);
        expect(steps.at(-1)).toMatchObject({ pruningIndex: 3, done: true });
        expect(steps.reduce((n, s) => n + s.messages, 0)).toBe(pruned.length);
        expect(await store.pruningIndex()).toBe(3);

        for (const id of pruned) {
          expect(await store.get(id)).toBeUndefined();
          expect(await store.has(id)).toBe(false);
          expect(await store.metadata(id)).toBeUndefined();
          expect(await store.children(id, 100)).toEqual([]);
        }
        // As a child too: the zero id's children were all in milestone 1's cone.
        expect(await store.children(ZERO_MESSAGE_ID, 100)).toEqual([]);
        expect(await store.findByIndex(utf8.encode("ageing"), 1000)).toEqual(indexBefore.filter((id) => kept.includes(id)));
        expect(await store.unreferenced(100)).toEqual([pending.acceptance.id]);
        for (const i of [1, 2, 3]) {
          expect(await store.milestone(i)).toBeUndefined();
          expect(await store.utxoChanges(i)).toBeUndefined();
        }
        for (const id of kept) expect(await seen(store, id)).toEqual(before.get(id));
        expect(await Promise.all([4, 5, 6].map(async (i) => [await store.milestone(i), await store.utxoChanges(i)]))).toEqual(milestonesBefore);
        expect((await store.latestMilestone())?.index).toBe(6);
        expect(await store.verify()).toBeUndefined();
      });

      it("the ledger is never pruned: unspent outputs, balances and address outputs stay exact, and a spent output of a pruned milestone is refused (INPUT_NOT_FOUND)", async () => {
        const { store, owner, rounds, pending, pendingRecipient, rest } = await chain(6);
        const wallets = [owner, pendingRecipient, ...rounds.map((r) => r.recipient)];
        const unspent = [rest, ...rounds.map((r) => outputOf(r.tx, MI))];
        const ledger = async (): Promise<unknown> => ({
          outputs: await Promise.all(unspent.map((id) => store.output(id))),
          balances: await Promise.all(wallets.map((w) => store.addressBalance(w.address))),
          addressOutputs: await Promise.all(wallets.map((w) => store.addressOutputs(w.address, { max: 100 }))),
        });
        const before = await ledger();
        await pruneTo(store, 3);
        expect(await ledger()).toEqual(before);

        // Spent and confirmed by milestones 1–3: gone, and refused as unknown.
        for (const r of rounds.slice(0, 3)) expect(await store.output(r.consumed)).toBeUndefined();
        expect((await store.claim(rest))?.transactionId).toBe(pending.transactionId);
        const again = spend(owner, [GENESIS_OUTPUT], [single(owner, TOTAL_SUPPLY)], [pending.acceptance.id]);
        const refused = await refusal(store.accept(again.acceptance));
        expect(refused.code).toBe("INPUT_NOT_FOUND");
        expect(await store.has(again.acceptance.id)).toBe(false);
        // Spent and confirmed by a milestone not pruned yet: kept, and refused as spent.
        expect((await store.output(rounds[3]!.consumed))?.spent?.milestoneIndex).toBe(4);
        expect((await refusal(store.accept(spend(owner, [rounds[3]!.consumed], [single(owner, TOTAL_SUPPLY - 3 * MI)], [pending.acceptance.id]).acceptance))).code).toBe("INPUT_SPENT");
        const withSpent = await store.addressOutputs(owner.address, { max: 100, includeSpent: true });
        for (const r of rounds.slice(0, 3)) expect(withSpent).not.toContain(r.consumed);
        for (const r of rounds.slice(3)) expect(withSpent).toContain(r.consumed);
        expect(await store.verify()).toBeUndefined();
      });

      it("pruning deletes the claims and pending outputs made at or below the milestones it prunes (lapsed for good), and none made later", async () => {
        const { store, rounds } = await chain(3);
        const early = spend(rounds[0]!.recipient, [outputOf(rounds[0]!.tx, MI)], [single(wallet(), MI)], [rounds[2]!.milestone]);
        expect(await store.accept(early.acceptance)).toEqual({ stored: true });
        let parent = rounds[2]!.milestone;
        for (let index = 4; index <= 30; index++) {
          const ms = milestoneMessage([parent], index, 1_700_000_000 + index, KEYS);
          expect(await store.accept({ ...ms, milestone: emptyMilestone(ms, index, 1_700_000_000 + index) })).toEqual({ stored: true });
          parent = ms.id;
        }
        const late = spend(rounds[1]!.recipient, [outputOf(rounds[1]!.tx, MI)], [single(wallet(), MI)], [parent]);
        expect(await store.accept(late.acceptance)).toEqual({ stored: true });
        expect(await store.claim(early.consumed[0]!)).toMatchObject({ index: 3 });
        const steps = await pruneTo(store, 10, 1);
        expect(steps.at(-1)).toMatchObject({ pruningIndex: 10, done: true });
        expect(steps.reduce((n, s) => n + (s.entries ?? 0), 0)).toBeGreaterThanOrEqual(2);
        expect(await store.claim(early.consumed[0]!)).toBeUndefined();
        expect(await store.pendingOutput(early.created[0]!)).toBeUndefined();
        expect(await store.claim(late.consumed[0]!)).toMatchObject({ transactionId: late.transactionId, index: 30 });
        expect(await store.pendingOutput(late.created[0]!)).toMatchObject({ transactionId: late.transactionId });
        expect(await store.verify()).toBeUndefined();
      });

      it("pruning never passes the target, and never reaches the latest milestone", async () => {
        const { store, rounds } = await chain(5);
        await pruneTo(store, 2);
        expect(await store.pruningIndex()).toBe(2);
        expect(await store.prune(2, 1000)).toEqual({ pruningIndex: 2, messages: 0, done: true });
        expect(await store.milestone(3)).toEqual({ index: 3, messageId: rounds[2]!.milestone, timestamp: rounds[2]!.timestamp });
        expect(await store.has(rounds[2]!.milestone)).toBe(true);

        const steps = await pruneTo(store, 99);
        expect(steps.at(-1)).toMatchObject({ pruningIndex: 4, done: true });
        expect(await store.pruningIndex()).toBe(4);
        expect(await store.latestMilestone()).toEqual({ index: 5, messageId: rounds[4]!.milestone, timestamp: rounds[4]!.timestamp });
        expect(await store.milestone(5)).toBeDefined();
        for (const id of rounds[4]!.messages) expect(await store.has(id)).toBe(true);
        expect(await store.verify()).toBeUndefined();
      });

      it("a NaN target prunes nothing, and a fractional one prunes up to its integer part (never everything)", async () => {
        const { store, rounds } = await chain(5);
        expect(await store.prune(Number.NaN, 1000)).toEqual({ pruningIndex: 0, messages: 0, done: true });
        expect(await store.prune(Number.NaN, Number.NaN)).toEqual({ pruningIndex: 0, messages: 0, done: true });
        expect(await store.pruningIndex()).toBe(0);
        for (const id of rounds.flatMap((r) => r.messages)) expect(await store.has(id)).toBe(true);

        const steps = await pruneTo(store, 2.5);
        expect(steps.at(-1)).toMatchObject({ pruningIndex: 2, done: true });
        expect(await store.pruningIndex()).toBe(2);
        expect(await store.milestone(3)).toEqual({ index: 3, messageId: rounds[2]!.milestone, timestamp: rounds[2]!.timestamp });
        for (const id of rounds.slice(2).flatMap((r) => r.messages)) expect(await store.has(id)).toBe(true);
        // A batch that is no finite number still prunes, a message at a time.
        const step = await store.prune(3, Number.NaN);
        expect(step.messages).toBeLessThanOrEqual(1);
        expect((await pruneTo(store, 3, Number.POSITIVE_INFINITY)).at(-1)).toMatchObject({ pruningIndex: 3, done: true });
        expect(await store.verify()).toBeUndefined();
      });

      it("a small batch needs several steps; each deletes at most batch messages and leaves a consistent store, also across a reopening", async () => {
        const chained = await chain(5, 2);
        let store = chained.store;
        const { storage, rounds } = chained;
        const total = rounds.slice(0, 3).reduce((n, r) => n + r.messages.length, 0);
        const steps: PruneStep[] = [];
        let last = 0;
        for (let i = 0; i < 100; i++) {
          const step = await store.prune(3, 2);
          steps.push(step);
          expect(step.messages).toBeLessThanOrEqual(2);
          expect(step.pruningIndex).toBeGreaterThanOrEqual(last);
          expect(step.pruningIndex).toBeLessThanOrEqual(3);
          last = step.pruningIndex;
          expect(await store.pruningIndex()).toBe(step.pruningIndex);
          expect(await store.verify()).toBeUndefined();
          if (step.done) break;
          // Halfway, as after a crash between steps: a store opened again carries on.
          if (i === 2 && engine.persistent) {
            await store.close();
            store = storage.store();
            const reopened = store;
            cleanup.push(() => reopened.close());
            expect(await store.open({ network: NETWORK })).toMatchObject({ created: false, ledger: true });
            expect(await store.pruningIndex()).toBe(step.pruningIndex);
          }
        }
        expect(steps.at(-1)).toMatchObject({ pruningIndex: 3, done: true });
        expect(steps.length).toBeGreaterThanOrEqual(Math.ceil(total / 2));
        expect(steps.reduce((n, s) => n + s.messages, 0)).toBe(total);
        for (const id of rounds.slice(0, 3).flatMap((r) => r.messages)) expect(await store.has(id)).toBe(false);
        for (const id of rounds.slice(3).flatMap((r) => r.messages)) expect(await store.has(id)).toBe(true);
      });

      describe("snapshots: readSnapshot, and open({ snapshot }) on a new store", () => {
        /** A new, unopened store of this engine on storage of its own. */
        async function empty(): Promise<{ store: NodeStore; storage: Storage }> {
          const storage = await engine.storage();
          cleanup.push(() => storage.remove());
          const store = storage.store();
          cleanup.push(() => store.close());
          return { store, storage };
        }

        /** Entry points in id order, so snapshots of engines that list them in another order compare equal. */
        const normal = (s: LedgerSnapshot): LedgerSnapshot => ({ ...s, entryPoints: [...s.entryPoints].sort((a, b) => (a.messageId < b.messageId ? -1 : 1)) });

        it("a snapshot holds the network, the latest milestone, its signers, the entry points and every unspent output in id order", async () => {
          const { store, rounds, rest } = await chain(4);
          const snapshot = normal(await store.readSnapshot());
          const latest = rounds[3]!;
          expect(snapshot.network).toBe(NETWORK);
          expect(snapshot.ledger).toBe(true);
          expect(snapshot.milestone).toEqual({ index: 4, messageId: latest.milestone, timestamp: latest.timestamp });
          expect(snapshot.coordinatorPublicKeys).toEqual(KEYS_HEX);
          // Every message the last 15 milestones referenced (here all four), with the index that referenced it; the
          // pending transaction is not one: it is not referenced yet.
          // The zero id the store began with is within reach too.
          const expected = [{ messageId: ZERO_MESSAGE_ID, index: 0 }, ...rounds.flatMap((r) => r.messages.map((messageId) => ({ messageId, index: r.index })))];
          expect(snapshot.entryPoints).toEqual(normal({ ...snapshot, entryPoints: expected }).entryPoints);
          const unspent = sorted([rest, ...rounds.map((r) => outputOf(r.tx, MI))]);
          expect(snapshot.outputs.map((o) => o.outputId)).toEqual(unspent);
          for (const o of snapshot.outputs) {
            const record = (await store.output(o.outputId))!;
            expect(o).toEqual({ outputId: record.outputId, messageId: record.messageId, output: record.output, milestoneIndexBooked: record.milestoneIndexBooked });
          }
          // Booked by the milestone that confirmed it.
          expect(snapshot.outputs.find((o) => o.outputId === outputOf(rounds[1]!.tx, MI))?.milestoneIndexBooked).toBe(2);
          expect(snapshot.outputs.find((o) => o.outputId === rest)?.milestoneIndexBooked).toBe(4);
          expect(snapshot.outputs.reduce((n, o) => n + o.output.amount, 0)).toBe(TOTAL_SUPPLY);
        });

        it("a new store made from it has the same outputs, balances, latest milestone, entry points, coordinator keys, and the pruning index below the milestone", async () => {
          const { store, owner, rounds, pending, pendingRecipient, rest } = await chain(4);
          const snapshot = await store.readSnapshot();
          const { store: copy, storage } = await empty();
          expect(await copy.open({ network: NETWORK, snapshot })).toEqual({ created: true, ledger: true, coordinatorPublicKeys: KEYS_HEX });

          for (const o of snapshot.outputs) {
            const { spent: _, ...record } = (await store.output(o.outputId))!;
            expect(await copy.output(o.outputId)).toEqual(record);
          }
          for (const w of [owner, pendingRecipient, ...rounds.map((r) => r.recipient)]) {
            expect(await copy.addressBalance(w.address)).toEqual(await store.addressBalance(w.address));
            expect(sorted(await copy.addressOutputs(w.address, { max: 100 }))).toEqual(sorted(await store.addressOutputs(w.address, { max: 100 })));
          }
          expect(await copy.latestMilestone()).toEqual(await store.latestMilestone());
          expect(await copy.milestone(4)).toEqual(await store.milestone(4));
          expect(await copy.pruningIndex()).toBe(3);
          expect(await copy.unreferenced(100)).toEqual([]);
          for (const e of snapshot.entryPoints) expect(copy.entryPoints.get(e.messageId)).toBe(e.index);
          expect(await copy.has(pending.acceptance.id)).toBe(false);
          // Read again, it gives the same snapshot: the keys persisted, the entry points kept their indexes.
          expect(normal(await copy.readSnapshot())).toEqual(normal(snapshot));
          expect(await copy.verify()).toBeUndefined();

          // It goes on: messages under its entry points, the coordinator at the next index, the ledger as it was.
          const next = indexation([rounds[2]!.messages[0]!, rounds[3]!.milestone], "after the snapshot");
          expect(await copy.accept(next)).toEqual({ stored: true });
          const onward = spend(owner, [rest], [single(wallet(), TOTAL_SUPPLY - 4 * MI)], [next.id]);
          expect(await copy.accept(onward.acceptance)).toEqual({ stored: true });
          expect((await refusal(copy.accept(spend(owner, [rest], [single(owner, TOTAL_SUPPLY - 4 * MI)], [next.id]).acceptance))).code).toBe("INPUT_SPENT");
          const ms = milestoneMessage([onward.acceptance.id], 5, 1_700_000_005, KEYS);
          await issue(copy, {
            index: 5,
            timestamp: 1_700_000_005,
            message: ms,
            referenced: [
              { messageId: next.id, ledgerInclusionState: "noTransaction" },
              { messageId: onward.acceptance.id, ledgerInclusionState: "included" },
            ],
            included: [onward],
          });
          expect((await copy.latestMilestone())?.index).toBe(5);
          expect((await refusal(copy.accept(spend(owner, [rest], [single(owner, TOTAL_SUPPLY - 4 * MI)], [ms.id]).acceptance))).code).toBe("INPUT_SPENT");
          expect((await refusal(copy.accept(spend(owner, [GENESIS_OUTPUT], [single(owner, TOTAL_SUPPLY)], [ms.id]).acceptance))).code).toBe("INPUT_NOT_FOUND");
          // The snapshot's milestone prunes like any other (it has no message here).
          expect((await pruneTo(copy, 4)).at(-1)).toMatchObject({ pruningIndex: 4, done: true });
          expect(await copy.milestone(4)).toBeUndefined();
          expect(await copy.has(ms.id)).toBe(true);
          expect(await copy.verify()).toBeUndefined();

          // Every later open names the coordinator keys, and applies no snapshot again.
          let again = copy;
          if (engine.persistent) {
            await copy.close();
            again = storage.store();
            cleanup.push(() => again.close());
          }
          expect(await again.open({ network: NETWORK, snapshot })).toEqual({ created: false, ledger: true, coordinatorPublicKeys: KEYS_HEX });
          expect((await again.latestMilestone())?.index).toBe(5);
          expect((await again.output(rest))?.spent?.transactionId).toBe(onward.transactionId);
          expect(pending.consumed).toEqual([rest]);
        });

        it("a snapshot of another network is refused (STORE_WRONG_NETWORK) and nothing is created", async () => {
          const { store } = await fresh();
          const snapshot = await store.readSnapshot();
          const { store: copy } = await empty();
          const error = await refusal(copy.open({ network: "chrysalis-other", snapshot }));
          expect(error.code).toBe("STORE_WRONG_NETWORK");
          expect(error.message).toContain(NETWORK);
          expect(await copy.open({ network: "chrysalis-other" })).toEqual({ created: true, ledger: false });
        });

        it("a store without a ledger gives a snapshot without outputs, and a store made from it keeps no ledger", async () => {
          const { store } = await empty();
          await store.open({ network: NETWORK });
          const m = indexation([ZERO_MESSAGE_ID], "no ledger");
          await store.accept(m);
          const snapshot = await store.readSnapshot();
          // No milestone referenced anything: the entry point the store began with is the snapshot's.
          expect(snapshot).toEqual({ network: NETWORK, ledger: false, coordinatorPublicKeys: [], entryPoints: [{ messageId: ZERO_MESSAGE_ID, index: 0 }], outputs: [] });
          const { store: copy } = await empty();
          expect(await copy.open({ network: NETWORK, snapshot })).toMatchObject({ created: true, ledger: false });
          expect([...copy.entryPoints]).toEqual([[ZERO_MESSAGE_ID, 0]]);
          expect(await copy.unreferenced(10)).toEqual([]);
          expect(await copy.latestMilestone()).toBeUndefined();
          expect(await copy.pruningIndex()).toBe(0);
        });

        it("a snapshot that names an entry point twice (in two letter cases) makes one entry point of it", async () => {
          const m = indexation([ZERO_MESSAGE_ID], "named twice");
          const snapshot: LedgerSnapshot = { network: NETWORK, ledger: false, coordinatorPublicKeys: [], entryPoints: [{ messageId: m.id, index: 0 }, { messageId: m.id.toUpperCase(), index: 0 }], outputs: [] };
          const { store: copy } = await empty();
          await copy.open({ network: NETWORK, snapshot });
          expect([...copy.entryPoints]).toEqual([[m.id, 0]]);
          expect(await copy.verify()).toBeUndefined();
          const child = indexation([m.id], "under it");
          await copy.accept(child);
          expect((await copy.readSnapshot()).entryPoints).toEqual([{ messageId: m.id, index: 0 }]);
          expect(await copy.verify()).toBeUndefined();
        });

        it("an entry point's own message, stored later, is a message like any other and the entry point stays", async () => {
          // A client sending again a message the snapshot's node had.
          const { store } = await empty();
          await store.open({ network: NETWORK });
          const m = indexation([ZERO_MESSAGE_ID], "an entry point");
          await store.accept(m);
          const ms = milestoneMessage([m.id], 1, 1_700_000_001, [new Uint8Array(32).fill(1)]);
          await issue(store, { index: 1, timestamp: 1_700_000_001, message: ms, referenced: [{ messageId: m.id, ledgerInclusionState: "noTransaction" }] });
          const snapshot = await store.readSnapshot();
          expect(normal(snapshot).entryPoints).toEqual(normal({ ...snapshot, entryPoints: [{ messageId: m.id, index: 1 }, { messageId: ms.id, index: 1 }, { messageId: ZERO_MESSAGE_ID, index: 0 }] }).entryPoints);
          const { store: copy } = await empty();
          await copy.open({ network: NETWORK, snapshot });
          expect(await copy.accept(m)).toEqual({ stored: true });
          expect(copy.entryPoints.get(m.id)).toBe(1);
          expect(await copy.unreferenced(10)).toEqual([m.id]);
          expect(await copy.verify()).toBeUndefined();
          const child = indexation([m.id], "under the entry point's message");
          expect(await copy.accept(child)).toEqual({ stored: true });
          expect(await copy.verify()).toBeUndefined();
        });
      });

      describe("verification and statistics", () => {
        it("verify() finds nothing wrong in a healthy store: new, written to, confirmed and pruned", async () => {
          const owner = wallet();
          const { store: fresh1 } = await fresh({ genesis: genesisOf(owner, TOTAL_SUPPLY) });
          expect(await fresh1.verify()).toBeUndefined();
          const { store } = await chain(4, 1);
          expect(await store.verify()).toBeUndefined();
          await pruneTo(store, 2);
          expect(await store.verify()).toBeUndefined();
        });

        it("verify() on a ledger store names unspent outputs that do not sum to the total supply", async () => {
          const { store } = await fresh();
          expect(await store.verify()).toMatch(/total supply/);
        });

        it("stats() counts the messages, unspent outputs, latest milestone and pruning index, and the bytes they take", async () => {
          const { store, rounds } = await chain(4);
          const messages = rounds.reduce((n, r) => n + r.messages.length, 0) + 1;
          const stats = await store.stats();
          expect(stats).toMatchObject({ engine: name, network: NETWORK, messages, unspentOutputs: 4 + 1, latestMilestoneIndex: 4, pruningIndex: 0 });
          expect(stats.bytes).toBeGreaterThan(0);
          expect(stats.fileBytes).toBeGreaterThanOrEqual(stats.bytes);
          expect(await store.bytes()).toBeGreaterThan(0);
          await pruneTo(store, 2);
          expect(await store.stats()).toMatchObject({ messages: messages - 6, unspentOutputs: 5, latestMilestoneIndex: 4, pruningIndex: 2 });
        });
      });
    });

    onDisk.describe("durability: a store opened again holds everything written before", () => {
      it("messages, metadata, children, index, unreferenced entries, claims, outputs, balances, milestones, nonces, revocations and secrets", async () => {
        const { store, storage, owner } = await fresh();
        const to = wallet();
        const tx = spend(owner, [GENESIS_OUTPUT], [single(to, 25 * MI), single(owner, 75 * MI)], [ZERO_MESSAGE_ID], "kept");
        await store.accept(tx.acceptance);
        const note = indexation([tx.acceptance.id], "kept", "a note");
        await store.accept(note);
        const ms = indexation([note.id], "milestone");
        await issue(store, { index: 1, timestamp: 42, message: ms, referenced: [{ messageId: tx.acceptance.id, ledgerInclusionState: "included" }, { messageId: note.id, ledgerInclusionState: "noTransaction" }], included: [tx] });
        const rest = tx.created[tx.payload.essence.outputs.findIndex((o) => o.amount === 75 * MI)]!;
        const pending = spend(owner, [rest], [single(to, 75 * MI)], [ms.id]);
        await store.accept(pending.acceptance);
        await store.redeemNonce("kept-nonce", Date.now() + 60_000);
        await store.revokeToken("kept-jti", Date.now() + 60_000);
        const secret = await store.secret("kept-secret", () => globalThis.crypto.getRandomValues(new Uint8Array(32)));

        const snapshot = async (s: NodeStore): Promise<unknown> => ({
          messages: await Promise.all([tx.acceptance.id, note.id, ms.id].map(async (id) => ({ bytes: Buffer.from((await s.get(id))!.bytes).toString("hex"), metadata: await s.metadata(id), children: await s.children(id, 10) }))),
          index: await s.findByIndex(utf8.encode("kept"), 10),
          unreferenced: await s.unreferenced(100),
          claim: await s.claim(rest),
          outputs: await Promise.all([GENESIS_OUTPUT, ...tx.created].map((id) => s.output(id))),
          balances: await Promise.all([owner, to].map((w) => s.addressBalance(w.address))),
          addressOutputs: await s.addressOutputs(owner.address, { max: 10, includeSpent: true }),
          milestone: await s.milestone(1),
          latest: await s.latestMilestone(),
          changes: await s.utxoChanges(1),
          revoked: await s.isTokenRevoked("kept-jti"),
        });
        const before = await snapshot(store);
        await store.close();

        const again = storage.store();
        cleanup.push(() => again.close());
        expect(await again.open({ network: NETWORK, genesis: genesisOf(wallet(), MI) })).toEqual({ created: false, ledger: true });
        expect(await snapshot(again)).toEqual(before);
        expect(await again.redeemNonce("kept-nonce", Date.now() + 60_000)).toBe(false);
        const kept = await again.secret("kept-secret", () => new Uint8Array(32));
        expect(Buffer.from(kept).equals(Buffer.from(secret))).toBe(true);
        // And it goes on: the next write sees the ledger and the claims as they were.
        expect((await refusal(again.accept(spend(owner, [rest], [single(owner, 75 * MI)], [ms.id]).acceptance))).code).toBe("INPUT_SPENT");
        expect((await refusal(again.accept(spend(owner, [GENESIS_OUTPUT], [single(to, 100 * MI)]).acceptance))).code).toBe("INPUT_SPENT");
        await issue(again, { index: 2, timestamp: 43, message: indexation([pending.acceptance.id], "milestone 2"), referenced: [{ messageId: pending.acceptance.id, ledgerInclusionState: "included" }], included: [pending] });
        expect((await again.addressBalance(to.address)).balance).toBe(100 * MI);
      });

      it("a close while redemptions are in flight and waiting for their group: none hangs, each true is kept, each failure wrote nothing", async () => {
        const { store, storage } = await fresh();
        const expires = Date.now() + 60_000;
        const nonces = Array.from({ length: 40 }, (_, i) => `closing-${i}`);
        // The first goes at once; the rest arrive while it is in flight and wait for the next group (grouped.ts).
        const outcomes = nonces.map((nonce) => store.redeemNonce(nonce, expires).then((redeemed) => ({ redeemed }), (error: unknown) => ({ error })));
        const closed = store.close();
        const settled = await Promise.all(outcomes);
        await closed;
        for (const outcome of settled) {
          if ("error" in outcome) expect((outcome.error as { code?: string }).code).toBe("STORE_UNAVAILABLE");
          else expect(outcome.redeemed).toBe(true);
        }

        const again = storage.store();
        cleanup.push(() => again.close());
        await again.open({ network: NETWORK, genesis: genesisOf(wallet(), MI) });
        // Redeemed before the close: refused now. Failed: never written, so redeemable now.
        const now = await Promise.all(nonces.map((nonce) => again.redeemNonce(nonce, expires)));
        expect(now).toEqual(settled.map((outcome) => !("redeemed" in outcome)));
      });

      it("a close with calls of every kind under way, more than a pool has connections: each answers as it would have and before close() resolves, a write that answered is kept, a call after it is refused", async () => {
        const { store, storage, owner } = await fresh();
        const messages = Array.from({ length: 8 }, (_, i) => indexation([ZERO_MESSAGE_ID], `closing ${i}`));
        const many = <T>(count: number, call: (i: number) => Promise<T>): Promise<T>[] => Array.from({ length: count }, (_, i) => call(i));
        // The order in which the calls and the closes settle.
        const order: string[] = [];
        const seen = <T>(name: string, call: Promise<T>): Promise<T> => call.finally(() => order.push(name));
        const calls = {
          accepts: messages.map((m) => seen("call", store.accept(m))),
          has: many(30, () => seen("call", store.has("ab".repeat(32)))),
          gets: many(30, () => seen("call", store.get(messages[0]!.id))),
          balances: many(30, () => seen("call", store.addressBalance(owner.address))),
          revoked: many(10, (i) => seen("call", store.isTokenRevoked(`closing-${i}`))),
          secret: seen("call", store.secret("closing-secret", () => new Uint8Array(32).fill(7))),
          sweep: seen("call", store.sweep(Date.now())),
        };
        const closed = seen("close", store.close());
        // A second close() waits for the same.
        const closedAgain = seen("close", store.close());
        const late = refusal(store.has(ZERO_MESSAGE_ID));
        const all = Promise.all([Promise.all(calls.accepts), Promise.all(calls.has), Promise.all(calls.gets), Promise.all(calls.balances), Promise.all(calls.revoked), calls.secret, calls.sweep]);
        // A call left waiting would never settle: a deadline tells it from a slow one.
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const deadline = new Promise<"left waiting">((resolve) => (timer = setTimeout(() => resolve("left waiting"), 20_000)));
          expect(await Promise.race([Promise.all([all, closed, closedAgain]), deadline])).not.toBe("left waiting");
        } finally {
          clearTimeout(timer);
        }
        const [accepted, has, gets, balances, revoked, secret] = await all;
        expect(accepted).toEqual(messages.map(() => ({ stored: true })));
        expect(has).toEqual(has.map(() => false));
        // Read while its write was under way: stored or not yet, never a failure.
        for (const got of gets) if (got !== undefined) expect(got.id).toBe(messages[0]!.id);
        expect(balances).toEqual(balances.map(() => ({ balance: 100 * MI, dustAllowance: 0, dustOutputs: 0 })));
        expect(revoked).toEqual(revoked.map(() => false));
        expect([...secret]).toEqual(new Array(32).fill(7));
        expect(order.slice(-2)).toEqual(["close", "close"]);
        expect((await late).code).toBe("STORE_UNAVAILABLE");

        if (engine.persistent) {
          const again = storage.store();
          cleanup.push(() => again.close());
          await again.open({ network: NETWORK });
          for (const m of messages) expect(await again.has(m.id)).toBe(true);
          expect([...(await again.secret("closing-secret", () => new Uint8Array(32)))]).toEqual(new Array(32).fill(7));
        }
      });

      it("a close right after a call of several statements (a new secret: read, insert, read again) lets all of them run", async () => {
        const { store, storage } = await fresh();
        const secret = store.secret("made-while-closing", () => new Uint8Array(32).fill(9));
        await store.close();
        expect([...(await secret)]).toEqual(new Array(32).fill(9));
        if (engine.persistent) {
          const again = storage.store();
          cleanup.push(() => again.close());
          await again.open({ network: NETWORK });
          expect([...(await again.secret("made-while-closing", () => new Uint8Array(32)))]).toEqual(new Array(32).fill(9));
        }
      });
    });
  });
});
