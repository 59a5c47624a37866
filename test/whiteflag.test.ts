// White-flag (TIP-2, PROTOCOL.md §3) as Hornet applies it: the walk's order, where it stops, every conflict reason in
// iota.go's order, outputs created and spent by one milestone, the inclusion Merkle root, and the same result on every
// node whatever order the messages arrived in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/bytes/hex.js";
import { encodeMessage } from "../src/model/codec.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, Output, TransactionPayload } from "../src/model/types.js";
import { MemoryStore, ZERO_MESSAGE_ID, type StoredMessage } from "../src/node/index.js";
import { applicationOf, type MilestoneMessage } from "../src/node/confirmation.js";
import { CONFLICT, merkleRoot, whiteFlag } from "../src/node/whiteflag.js";
import { wallet, type Wallet } from "./node-helpers.js";

const NETWORK = "chrysalis-whiteflag";
const NETWORK_ID = networkId(NETWORK);
const MI = 1_000_000;
const utf8 = new TextEncoder();
const GENESIS = (n: number): string => outputId("0".repeat(64), n);

const single = (w: Wallet, amount: number): Output => ({ type: 0, address: { type: 0, address: w.address }, amount });
const allowance = (w: Wallet, amount: number): Output => ({ type: 1, address: { type: 0, address: w.address }, amount });

function message(parents: readonly string[], payload?: Message["payload"]): StoredMessage {
  const sorted = [...new Set(parents)].sort().map((p) => Uint8Array.from(Buffer.from(p, "hex")));
  const m: Message = { networkId: NETWORK_ID, parents: sorted, nonce: 1n, ...(payload !== undefined ? { payload } : {}) };
  const bytes = encodeMessage(m);
  return { id: messageId(bytes), bytes, message: m };
}

const note = (parents: readonly string[], text: string): StoredMessage => message(parents, { type: 2, index: utf8.encode(text), data: new Uint8Array(0) });

function tx(inputs: { id: string; seed: Uint8Array }[], outputs: Output[]): TransactionPayload {
  return buildTransactionPayload({
    inputs: inputs.map(({ id, seed }) => ({ transactionId: id.slice(0, 64), transactionOutputIndex: Number.parseInt(id.slice(66, 68) + id.slice(64, 66), 16), seed })),
    outputs,
  });
}

/** A store whose genesis gives each wallet its amounts, one output each (GENESIS(0), GENESIS(1), …). */
async function ledger(outputs: Output[]): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.open({ network: NETWORK, genesis: outputs.map((output, i) => ({ outputId: GENESIS(i), output })) });
  return store;
}

async function put(store: MemoryStore, ...messages: StoredMessage[]): Promise<void> {
  for (const m of messages) expect(await store.put(m)).toBe(true);
}

const states = (walk: Awaited<ReturnType<typeof whiteFlag>>) => walk.cone.map((c) => [c.messageId, c.ledgerInclusionState, c.conflictReason]);

describe("the walk: the unreferenced past cone, depth first, parents in their order, each message after its parents", () => {
  it("visits every parent before its child, the first parent's cone first, each message once, and stops at entry points and referenced messages", async () => {
    const store = await ledger([]);
    const a = note([ZERO_MESSAGE_ID], "a");
    const b = note([ZERO_MESSAGE_ID], "b");
    const c = note([a.id, b.id], "c");
    const d = note([a.id], "d");
    await put(store, a, b, c, d);
    const parents = [c.id, d.id].sort();
    const walk = await whiteFlag(store, parents, { ledger: true });
    // c's parents in their (sorted) order, then c; d's only parent is a, seen already.
    const order: string[] = [];
    const visit = (m: StoredMessage): void => {
      for (const p of m.message.parents.map(toHex)) {
        const parent = [a, b, c, d].find((x) => x.id === p);
        if (parent !== undefined && !order.includes(parent.id)) visit(parent);
      }
      if (!order.includes(m.id)) order.push(m.id);
    };
    for (const p of parents) visit([c, d].find((x) => x.id === p)!);
    expect(walk.cone.map((x) => x.messageId)).toEqual(order);
    expect(walk.cone).toHaveLength(4);
    for (const x of walk.cone) expect(x.ledgerInclusionState).toBe("noTransaction");
    // Once a milestone references a, a later walk stops there.
    const ms = note([a.id], "milestone 1");
    await store.accept({ ...ms, arrivalTime: 0, coneRoots: { oldest: 0, youngest: 0 }, milestone: applicationOf({ ...ms, message: { ...ms.message, payload: milestonePayload(1, [a.id]) } } as MilestoneMessage, await whiteFlag(store, [a.id], { ledger: true })) });
    expect((await whiteFlag(store, [d.id], { ledger: true })).cone.map((x) => x.messageId)).toEqual([d.id]);
    expect(walk.merkleRoot).toEqual(merkleRoot([]));
  });
});

function milestonePayload(index: number, parents: string[]): MilestoneMessage["message"]["payload"] {
  return {
    type: 1,
    index,
    timestamp: BigInt(1_700_000_000 + index),
    parents: parents.map((p) => Uint8Array.from(Buffer.from(p, "hex"))),
    inclusionMerkleProof: new Uint8Array(32),
    nextPoWScore: 0,
    nextPoWScoreMilestoneIndex: 0,
    publicKeys: [new Uint8Array(32).fill(1)],
    signatures: [new Uint8Array(64)],
  };
}

describe("each transaction against the ledger as the walk left it, with Hornet's conflict reasons", () => {
  const owner = wallet();
  const other = wallet();

  it("of two spends of one output, the first in walk order is included and the second conflicts (2, spent in this milestone); the Merkle root covers the included one", async () => {
    const store = await ledger([single(owner, 10 * MI)]);
    const one = message([ZERO_MESSAGE_ID], tx([{ id: GENESIS(0), seed: owner.seed }], [single(other, 10 * MI)]));
    const two = message([one.id], tx([{ id: GENESIS(0), seed: owner.seed }], [single(owner, 10 * MI)]));
    await put(store, one, two);
    const walk = await whiteFlag(store, [two.id], { ledger: true });
    expect(states(walk)).toEqual([
      [one.id, "included", undefined],
      [two.id, "conflicting", CONFLICT.INPUT_SPENT_IN_THIS_MILESTONE],
    ]);
    expect(walk.merkleRoot).toEqual(merkleRoot([Uint8Array.from(Buffer.from(one.id, "hex"))]));
    expect(walk.consumed.map((c) => c.outputId)).toEqual([GENESIS(0)]);
    expect(walk.released).toEqual([{ outputId: GENESIS(0), transactionId: transactionId(two.message.payload as TransactionPayload) }]);
  });

  it("an output created earlier in the same walk can be spent; unknown outputs conflict (3); spent ones, after their milestone, conflict (1)", async () => {
    const store = await ledger([single(owner, 10 * MI)]);
    const first = tx([{ id: GENESIS(0), seed: owner.seed }], [single(other, 10 * MI)]);
    const m1 = message([ZERO_MESSAGE_ID], first);
    const m2 = message([m1.id], tx([{ id: outputId(transactionId(first), 0), seed: other.seed }], [single(owner, 10 * MI)]));
    const unknown = message([ZERO_MESSAGE_ID], tx([{ id: outputId("ab".repeat(32), 0), seed: owner.seed }], [single(owner, 10 * MI)]));
    await put(store, m1, m2, unknown);
    const walk = await whiteFlag(store, [m2.id, unknown.id].sort(), { ledger: true });
    const byId = new Map(walk.cone.map((c) => [c.messageId, c]));
    expect(byId.get(m1.id)?.ledgerInclusionState).toBe("included");
    expect(byId.get(m2.id)?.ledgerInclusionState).toBe("included");
    expect(byId.get(unknown.id)).toMatchObject({ ledgerInclusionState: "conflicting", conflictReason: CONFLICT.INPUT_NOT_FOUND });
    // Created and spent by this milestone: in both lists.
    expect(walk.created.map((o) => o.outputId)).toContain(outputId(transactionId(first), 0));
    expect(walk.consumed.map((o) => o.outputId)).toEqual([GENESIS(0), outputId(transactionId(first), 0)]);
    // Confirmed: a later spend of the genesis output conflicts as already spent.
    const ms = note([m2.id, unknown.id], "milestone 1");
    const application = applicationOf({ ...ms, message: { ...ms.message, payload: milestonePayload(1, [m2.id, unknown.id].sort()) } } as MilestoneMessage, walk);
    await store.accept({ ...ms, arrivalTime: 0, coneRoots: { oldest: 0, youngest: 0 }, milestone: application });
    const late = message([ms.id], tx([{ id: GENESIS(0), seed: owner.seed }], [single(owner, 10 * MI)]));
    await put(store, late);
    expect(states(await whiteFlag(store, [late.id], { ledger: true }))).toEqual([[late.id, "conflicting", CONFLICT.INPUT_ALREADY_SPENT]]);
  });

  it("amounts that differ conflict (4), a dust output past the allowance (6), a bad signature or another key (5), and an address unlocked by two blocks (255), checked in that order", async () => {
    const third = wallet();
    const store = await ledger([single(owner, 10 * MI), single(owner, 10 * MI), single(other, 10 * MI), single(third, 10 * MI)]);
    const sum = message([ZERO_MESSAGE_ID], tx([{ id: GENESIS(0), seed: owner.seed }], [single(other, 9 * MI)]));
    const dust = message([ZERO_MESSAGE_ID], tx([{ id: GENESIS(0), seed: owner.seed }], [single(other, 500_000), single(owner, 9_500_000)]));
    const badSig = tx([{ id: GENESIS(0), seed: owner.seed }], [single(other, 10 * MI)]);
    const forged = structuredClone(badSig);
    (forged.unlockBlocks[0] as Extract<TransactionPayload["unlockBlocks"][number], { type: 0 }>).signature.signature[0]! ^= 1;
    const wrongKey = structuredClone(badSig);
    (wrongKey.unlockBlocks[0] as Extract<TransactionPayload["unlockBlocks"][number], { type: 0 }>).signature.publicKey = third.publicKey;
    // Inputs (sorted by output id) of x, y, x: blocks x's signature, y's signature, a reference to x's. Pointed at
    // y's block instead, the third input's address is unlocked by another block than the first's.
    const [x, y] = [wallet(), wallet()];
    const mixed = tx(
      [
        { id: GENESIS(0), seed: x.seed },
        { id: GENESIS(1), seed: y.seed },
        { id: GENESIS(2), seed: x.seed },
      ],
      [single(x, 30 * MI)],
    );
    expect(mixed.unlockBlocks.map((b) => b.type)).toEqual([0, 0, 1]);
    const payload = structuredClone(mixed);
    payload.unlockBlocks[2] = { type: 1, reference: 1 };
    const crossed = { payload, store: await ledger([single(x, 10 * MI), single(y, 10 * MI), single(x, 10 * MI)]) };
    const m255 = message([ZERO_MESSAGE_ID], crossed.payload);
    await put(crossed.store, m255);
    expect(states(await whiteFlag(crossed.store, [m255.id], { ledger: true }))).toEqual([[m255.id, "conflicting", CONFLICT.SEMANTIC_VALIDATION_FAILED]]);
    const cases: [StoredMessage, number][] = [
      [sum, CONFLICT.AMOUNTS_DIFFER],
      [dust, CONFLICT.DUST_RULE],
      [message([ZERO_MESSAGE_ID], forged), CONFLICT.INVALID_SIGNATURE],
      [message([ZERO_MESSAGE_ID], wrongKey), CONFLICT.INVALID_SIGNATURE],
    ];
    for (const [m, reason] of cases) {
      await put(store, m);
      expect(states(await whiteFlag(store, [m.id], { ledger: true }))).toEqual([[m.id, "conflicting", reason]]);
    }
    // The honest one is included; so is the same transaction once the node verified its signatures elsewhere.
    const honest = message([ZERO_MESSAGE_ID], badSig);
    await put(store, honest);
    expect(states(await whiteFlag(store, [honest.id], { ledger: true }))).toEqual([[honest.id, "included", undefined]]);
    // A transaction with sums that differ and a bad signature is refused for its sums: they are checked first.
    const both = structuredClone(forged);
    both.essence.outputs[0] = single(other, 9 * MI);
    const m = message([ZERO_MESSAGE_ID], both);
    await put(store, m);
    expect(states(await whiteFlag(store, [m.id], { ledger: true }))).toEqual([[m.id, "conflicting", CONFLICT.AMOUNTS_DIFFER]]);
  });

  it("the dust rule sees the allowance an earlier transaction of the same walk created", async () => {
    const store = await ledger([single(owner, 10 * MI)]);
    const funded = tx([{ id: GENESIS(0), seed: owner.seed }], [allowance(other, MI), single(owner, 9 * MI)]);
    const m1 = message([ZERO_MESSAGE_ID], funded);
    const rest = outputId(transactionId(funded), funded.essence.outputs.findIndex((o) => o.amount === 9 * MI));
    const m2 = message([m1.id], tx([{ id: rest, seed: owner.seed }], [single(other, 100_000), single(owner, 8_900_000)]));
    await put(store, m1, m2);
    expect(states(await whiteFlag(store, [m2.id], { ledger: true })).map((s) => s[1])).toEqual(["included", "included"]);
  });
});

describe("every node decides the same, whatever order its messages arrived in", () => {
  it("two stores given the same conflicting DAG in different (solid) orders compute the same confirmation", async () => {
    const wallets = Array.from({ length: 4 }, () => wallet());
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(3), fc.nat(3), fc.nat(20), fc.boolean()), { minLength: 3, maxLength: 14 }), fc.integer(), async (plan, seed) => {
        const genesis = wallets.map((w) => single(w, 10 * MI));
        const messages: StoredMessage[] = [];
        for (const [from, to, back, spendGenesis] of plan) {
          const parents = new Set([messages.length > 0 ? messages[Math.max(0, messages.length - 1 - (back % messages.length))]!.id : ZERO_MESSAGE_ID]);
          if (messages.length > 1) parents.add(messages[back % messages.length]!.id);
          // Spends of the four genesis outputs, many of them double spends of one another.
          const payload = spendGenesis ? tx([{ id: GENESIS(from), seed: wallets[from]!.seed }], [single(wallets[to]!, 10 * MI)]) : undefined;
          messages.push(payload === undefined ? note([...parents], `n${messages.length}`) : message([...parents], payload));
        }
        const tips = messages.filter((m) => !messages.some((c) => c.message.parents.some((p) => toHex(p) === m.id))).map((m) => m.id);
        // A second arrival order: any order in which each message comes after its parents.
        const shuffled = topological(messages, seed);
        const [a, b] = [await ledger(genesis), await ledger(genesis)];
        await put(a, ...messages);
        await put(b, ...shuffled);
        const [wa, wb] = [await whiteFlag(a, tips.sort(), { ledger: true }), await whiteFlag(b, tips.sort(), { ledger: true })];
        expect(states(wb)).toEqual(states(wa));
        expect(wb.created).toEqual(wa.created);
        expect(wb.consumed).toEqual(wa.consumed);
        expect(wb.merkleRoot).toEqual(wa.merkleRoot);
      }),
      { numRuns: 60, seed: 20261202 },
    );
  });
});

/** The messages in an order where each comes after its parents, shuffled by `seed` among those that are ready. */
function topological(messages: readonly StoredMessage[], seed: number): StoredMessage[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
  const ids = new Set(messages.map((m) => m.id));
  const out: StoredMessage[] = [];
  const done = new Set<string>();
  const left = [...messages];
  while (left.length > 0) {
    const ready = left.filter((m) => m.message.parents.every((p) => !ids.has(toHex(p)) || done.has(toHex(p))));
    const pick = ready[Math.floor(next() * ready.length)]!;
    out.push(pick);
    done.add(pick.id);
    left.splice(left.indexOf(pick), 1);
  }
  return out;
}


