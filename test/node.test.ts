// The node without HTTP: auto-fill (from tip selection, or the entry points before the first milestone), the rules it
// adds (network id, PoW, nonce without networkId), the semantic checks and claims against the ledger, and "nothing stored on rejection".
import { describe, expect, it } from "vitest";
import { compareBytes } from "../src/bytes/bytes.js";
import { toHex } from "../src/bytes/hex.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { messageId, networkId, outputId, transactionId } from "../src/model/ids.js";
import { payloadToJson } from "../src/model/json.js";
import { buildTransactionPayload } from "../src/model/transaction.js";
import type { Message, TransactionPayload } from "../src/model/types.js";
import { createMiner, powScore } from "../src/pow/index.js";
import { createCoordinator, createNode, MemoryLedger, MemoryStore, NodeError, ZERO_MESSAGE_ID, type ChrysalisNode } from "../src/node/index.js";
import { GENESIS_TX, genesisLedger, wallet, type Wallet } from "./node-helpers.js";

const NETWORK = "chrysalis-test";
const id32 = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);
const stored = (parents: Uint8Array[], tag: string): { id: string; bytes: Uint8Array; message: Message } => {
  const message: Message = { networkId: 1n, parents, payload: { type: 2, index: new TextEncoder().encode(tag), data: new Uint8Array(0) }, nonce: 0n };
  return { id: toHex(id32(tag.charCodeAt(0))), bytes: new Uint8Array(0), message };
};

async function rejects(work: Promise<unknown>, code: string, path?: string): Promise<ProtocolError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a rejection").toBeInstanceOf(ProtocolError);
  expect((error as ProtocolError).code).toBe(code);
  if (path !== undefined) expect((error as ProtocolError).path).toBe(path);
  return error as ProtocolError;
}

describe("the memory store", () => {
  it("the store is bounded: past maxMessages the oldest go, from the index lookups too", async () => {
    const store = new MemoryStore({ maxMessages: 3 });
    const entries = ["a", "b", "c", "d", "e"].map((tag) => stored([id32(0)], tag));
    for (const e of entries) await store.put(e);
    expect(store.size).toBe(3);
    expect(store.ids()).toEqual(entries.slice(2).map((e) => e.id));
    expect(await store.findByIndex(new TextEncoder().encode("a"))).toEqual([]);
    expect(await store.findByIndex(new TextEncoder().encode("e"))).toEqual([entries[4]!.id]);
  });

  it("past both bounds, children and index lists hold what pushing and removing by search would leave", async () => {
    // Eviction takes a message off the front of its lists, or skips lists it was already pushed out of: the same
    // lists as searching each one, over messages with shared parents and indexes and bounds of 5 messages, 3 per list.
    const parents = [1, 2, 3].map(id32);
    const tags = ["p", "q"];
    const lists = new Map<string, string[]>();
    const push = (key: string, id: string): void => {
      const ids = lists.get(key) ?? [];
      ids.push(id);
      if (ids.length > 3) ids.shift();
      lists.set(key, ids);
    };
    const remove = (key: string, id: string): void => {
      const ids = lists.get(key) ?? [];
      if (ids.includes(id)) ids.splice(ids.indexOf(id), 1);
    };
    const store = new MemoryStore({ maxMessages: 5, maxPerIndex: 3 });
    const held: { id: string; parents: Uint8Array[]; tag: string }[] = [];
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >>> 8) % n;
    for (let i = 0; i < 300; i++) {
      const picked = parents.filter(() => next(2) === 0);
      const mine = picked.length > 0 ? picked : [parents[next(3)]!];
      const tag = tags[next(2)]!;
      const id = toHex(Uint8Array.from({ length: 32 }, (_, k) => (k < 4 ? (i >> (8 * k)) & 255 : 0xee)));
      const message: Message = { networkId: 1n, parents: mine, payload: { type: 2, index: new TextEncoder().encode(tag), data: new Uint8Array(0) }, nonce: 0n };
      await store.put({ id, bytes: new Uint8Array(0), message });
      held.push({ id, parents: mine, tag });
      for (const p of mine) push(toHex(p), id);
      push(tag, id);
      if (held.length > 5) {
        const gone = held.shift()!;
        for (const p of gone.parents) remove(toHex(p), gone.id);
        remove(gone.tag, gone.id);
      }
      for (const p of parents) expect(await store.children(toHex(p), 10)).toEqual(lists.get(toHex(p)) ?? []);
      for (const t of tags) expect(await store.findByIndex(new TextEncoder().encode(t))).toEqual(lists.get(t) ?? []);
    }
  });

  it("storing the same id twice is a no-op", async () => {
    const store = new MemoryStore();
    const a = stored([id32(0)], "a");
    expect(await store.put(a)).toBe(true);
    expect(await store.put(a)).toBe(false);
    expect(store.size).toBe(1);
  });
});

describe("auto-fill: missing or zero networkId, missing parents, missing or zero nonce", () => {
  it("fills all three; parents are sorted, unique tips (before the first milestone, the entry points); the nonce reaches the node's score", async () => {
    const store = new MemoryStore({ entryPoints: [toHex(id32(9)), toHex(id32(3)), toHex(id32(7))] });
    const node = createNode({ network: NETWORK, minPoWScore: 50, store, pow: { workers: 1 } });
    try {
      const result = await node.submitMessage({ networkId: "0", nonce: "0", payload: { type: 2, index: "6869", data: "" } });
      expect(result.stored).toBe(true);
      expect(result.message.networkId).toBe(networkId(NETWORK));
      expect(result.message.parents.map(toHex)).toEqual([id32(3), id32(7), id32(9)].map(toHex));
      expect(powScore(result.bytes)).toBeGreaterThanOrEqual(50);
      expect(messageId(result.bytes)).toBe(result.messageId);
      // Now a tip of tip selection: the next message is filled with it.
      expect(node.parts.tips!.tips()).toEqual([result.messageId]);
      const next = await node.submitMessage({ payload: null });
      expect(next.message.parents.map(toHex)).toEqual([result.messageId]);
    } finally {
      await node.close();
    }
  });

  it("more than 4 tips: 4 are taken (Hornet's count), sorted and distinct", async () => {
    const store = new MemoryStore({ entryPoints: Array.from({ length: 12 }, (_, i) => toHex(id32(i + 1))) });
    const node = createNode({ network: NETWORK, minPoWScore: 1, store, pow: { workers: 1 } });
    try {
      const { message } = await node.submitMessage({ payload: null });
      expect(message.parents).toHaveLength(4);
      for (let i = 1; i < 4; i++) expect(compareBytes(message.parents[i - 1]!, message.parents[i]!)).toBeLessThan(0);
    } finally {
      await node.close();
    }
  });

  it("at score 0 nothing is mined: the nonce 0 meets it, and no PoW job is queued", async () => {
    const node = createNode({ network: NETWORK, minPoWScore: 0, pow: { workers: 1 } });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => node.submitMessage({ payload: { type: 2, index: toHex(new TextEncoder().encode(`zero ${i}`)), data: "" } })));
      for (const r of results) {
        expect(r.stored).toBe(true);
        expect(r.message.nonce).toBe(0n);
      }
      expect(node.stats()).toMatchObject({ accepted: 40, powJobs: 0, powHashes: 0 });
    } finally {
      await node.close();
    }
  });

  it("a model submission (submitModel) is filled the same way", async () => {
    const node = createNode({ network: NETWORK, minPoWScore: 1, pow: { workers: 1 } });
    try {
      const result = await node.submitModel({ payload: { type: 2, index: new Uint8Array([1]), data: new Uint8Array([2]) } });
      expect(result.message.parents.map(toHex)).toEqual([ZERO_MESSAGE_ID]);
    } finally {
      await node.close();
    }
  });
});

describe("the node's own rules", () => {
  const node = createNode({ network: NETWORK, minPoWScore: 1e9, pow: false });

  it("a nonce without a networkId is refused", async () => {
    await rejects(node.submitMessage({ nonce: "5", payload: null }), "NONCE_WITHOUT_NETWORK_ID", "networkId");
  });

  it("another network's id is refused", async () => {
    await rejects(node.submitMessage({ networkId: networkId("other").toString(), payload: null }), "WRONG_NETWORK_ID", "networkId");
  });

  it("a nonce below the minimum score is refused (400); with PoW disabled, parents or a nonce left to the node are 400 as Hornet", async () => {
    const weak = await rejects(node.submitMessage({ networkId: networkId(NETWORK).toString(), parentMessageIds: [ZERO_MESSAGE_ID], payload: null, nonce: "1" }), "INSUFFICIENT_POW", "nonce");
    expect((weak as NodeError).status).toBe(400);
    const noParents = await rejects(node.submitMessage({ payload: null }), "POW_DISABLED", "parentMessageIds");
    expect((noParents as NodeError).status).toBe(400);
    const noNonce = await rejects(node.submitMessage({ parentMessageIds: [ZERO_MESSAGE_ID], payload: null }), "POW_DISABLED", "nonce");
    expect((noNonce as NodeError).status).toBe(400);
  });

  it("syntactic rules run with JSON paths (unsorted parents)", async () => {
    await rejects(node.submitMessage({ networkId: networkId(NETWORK).toString(), parentMessageIds: [toHex(id32(2)), toHex(id32(1))], payload: null, nonce: "1" }), "NOT_SORTED", "parentMessageIds[1]");
  });

  it("raw bytes that do not decode are refused with the offset of what is wrong", async () => {
    const short = await rejects(node.submitMessage(new Uint8Array(10)), "LENGTH_OUT_OF_RANGE", "");
    expect(short.offset).toBe(0);
    // networkId (8 bytes), a parent count of 0 (left for the node to fill, as Hornet reads raw bodies), no payload (4)
    // and the nonce (8): the 39 bytes after byte 21 are trailing.
    const trailing = await rejects(node.submitMessage(new Uint8Array(60)), "TRAILING_BYTES");
    expect(trailing.offset).toBe(21);
  });

  it("a message submitted again (its bytes, nonce and all) is answered with its id, even once its parent is gone", async () => {
    // A store (and a Tangle in memory) of two messages: the parent is forgotten when the third arrives.
    const node = createNode({ network: NETWORK, minPoWScore: 1, store: new MemoryStore({ maxMessages: 2 }), tangle: { maxMessages: 2 }, pow: { workers: 1 } });
    try {
      const parent = await node.submitMessage({ parentMessageIds: [ZERO_MESSAGE_ID], payload: { type: 2, index: "70", data: "" } });
      // Beside an entry point (the zero id, which is not read): the parent's answer is the second of the read.
      const child = await node.submitMessage({ parentMessageIds: [ZERO_MESSAGE_ID, parent.messageId], payload: { type: 2, index: "63", data: "" } });
      await node.submitMessage({ parentMessageIds: [ZERO_MESSAGE_ID], payload: { type: 2, index: "6e", data: "" } });
      expect(await node.store.has(parent.messageId)).toBe(false);
      expect(await node.submitMessage(child.bytes)).toMatchObject({ messageId: child.messageId, stored: false });
      // A message not stored on that parent is refused as not solid, the path naming the parent.
      await rejects(node.submitMessage({ parentMessageIds: [ZERO_MESSAGE_ID, parent.messageId], payload: { type: 2, index: "6f", data: "" } }), "PARENT_NOT_SOLID", "parentMessageIds[1]");
      await rejects(node.submitMessage({ parentMessageIds: [parent.messageId], payload: { type: 2, index: "6f", data: "" } }), "PARENT_NOT_SOLID", "parentMessageIds[0]");
    } finally {
      await node.close();
    }
  });

  it("nothing was stored by any of these, and each was counted as rejected", async () => {
    expect((node.store as MemoryStore).size).toBe(0);
    expect(node.stats()).toMatchObject({ accepted: 0, rejected: 8 });
  });
});

function spend(owner: Wallet, outputs: { address: Uint8Array; amount: number; type?: 0 | 1 }[], input = { tx: GENESIS_TX, index: 0 }): TransactionPayload {
  return buildTransactionPayload({
    inputs: [{ transactionId: input.tx, transactionOutputIndex: input.index, seed: owner.seed }],
    outputs: outputs.map((o) => ({ type: o.type ?? 0, address: { type: 0, address: o.address }, amount: o.amount })),
  });
}

describe("semantic checks against the ledger", () => {
  const owner = wallet();
  const other = wallet();
  const make = (ledger: MemoryLedger): ChrysalisNode => createNode({ network: NETWORK, minPoWScore: 1, ledger, pow: { workers: 1 } });

  it("a valid spend is stored with its claim, refuses a second spend at once, and moves the ledger when a milestone confirms it", async () => {
    const ledger = genesisLedger(owner);
    const node = make(ledger);
    try {
      const payload = spend(owner, [
        { address: other.address, amount: 1_000_000 },
        { address: owner.address, amount: TOTAL_SUPPLY - 1_000_000 },
      ]);
      const { messageId: spender } = await node.submitMessage({ payload: payloadToJson(payload) });
      expect(await node.store.claim(outputId(GENESIS_TX, 0))).toMatchObject({ transactionId: transactionId(payload), messageId: spender });
      expect((await node.store.output(outputId(GENESIS_TX, 0)))?.spent).toBeUndefined();
      expect((await node.store.addressBalance(other.address)).balance).toBe(0);
      // The same output again while the first is pending: refused, the claim named.
      const held = await rejects(node.submitMessage({ payload: payloadToJson(spend(owner, [{ address: other.address, amount: TOTAL_SUPPLY }])) }), "INPUT_SPENT", "payload.essence.inputs[0]");
      expect(held.message).toContain(transactionId(payload));
      const milestone = await createCoordinator(node, { keys: [new Uint8Array(32).fill(1)] }).issue();
      expect(milestone?.index).toBe(1);
      expect(await node.getMetadata(spender)).toMatchObject({ referencedByMilestoneIndex: 1, ledgerInclusionState: "included" });
      expect((await node.store.output(outputId(GENESIS_TX, 0)))?.spent).toEqual({ transactionId: transactionId(payload), messageId: spender, milestoneIndex: 1 });
      // Outputs are sorted by their bytes, so where `other`'s lands depends on the random addresses.
      const otherIndex = payload.essence.outputs.findIndex((o) => compareBytes(o.address.address, other.address) === 0);
      expect(await node.store.addressOutputs(other.address, { max: 10 })).toEqual([outputId(transactionId(payload), otherIndex)]);
      expect(await node.store.addressBalance(other.address)).toEqual({ balance: 1_000_000, dustAllowance: 0, dustOutputs: 0 });
      expect((await node.store.addressBalance(owner.address)).balance).toBe(TOTAL_SUPPLY - 1_000_000);
      // The same output again: a double spend.
      await rejects(node.submitMessage({ payload: payloadToJson(spend(owner, [{ address: other.address, amount: TOTAL_SUPPLY }])) }), "INPUT_SPENT", "payload.essence.inputs[0]");
    } finally {
      await node.close();
    }
  });

  it("an unknown input is refused", async () => {
    const node = make(genesisLedger(owner));
    try {
      await rejects(node.submitMessage({ payload: payloadToJson(spend(owner, [{ address: other.address, amount: 5 }], { tx: "11".repeat(32), index: 0 })) }), "INPUT_NOT_FOUND", "payload.essence.inputs[0]");
    } finally {
      await node.close();
    }
  });

  it("inputs and outputs must sum to the same amount", async () => {
    const node = make(genesisLedger(owner));
    try {
      await rejects(node.submitMessage({ payload: payloadToJson(spend(owner, [{ address: other.address, amount: 1_000_000 }])) }), "AMOUNTS_DIFFER", "payload.essence.outputs");
    } finally {
      await node.close();
    }
  });

  it("a key that does not own the address is refused (ADDRESS_MISMATCH), nothing stored, ledger unchanged", async () => {
    const ledger = genesisLedger(owner);
    const node = make(ledger);
    try {
      await rejects(node.submitMessage({ payload: payloadToJson(spend(other, [{ address: other.address, amount: TOTAL_SUPPLY }])) }), "ADDRESS_MISMATCH", "payload.unlockBlocks[0].signature.publicKey");
      expect((node.store as MemoryStore).size).toBe(0);
      expect((await node.store.output(outputId(GENESIS_TX, 0)))?.spent).toBeUndefined();
    } finally {
      await node.close();
    }
  });

  it("a signature that does not verify is refused", async () => {
    const node = make(genesisLedger(owner));
    try {
      const payload = spend(owner, [{ address: other.address, amount: TOTAL_SUPPLY }]);
      const block = payload.unlockBlocks[0]!;
      if (block.type !== 0) throw new Error("expected a signature unlock block");
      block.signature.signature[0]! ^= 1;
      await rejects(node.submitMessage({ payload: payloadToJson(payload) }), "INVALID_SIGNATURE", "payload.unlockBlocks[0].signature.signature");
    } finally {
      await node.close();
    }
  });

  it("dust rule: a dust output needs an address's dust allowance (one per 100 000, at most 100)", async () => {
    const node = make(genesisLedger(owner));
    try {
      await rejects(
        node.submitMessage({ payload: payloadToJson(spend(owner, [{ address: other.address, amount: 999_999 }, { address: owner.address, amount: TOTAL_SUPPLY - 999_999 }])) }),
        "DUST_RULE",
      );
      // With a dust allowance of 1 Mi at the same address in the same transaction, ten dust outputs are allowed; send one.
      const ok = spend(owner, [
        { address: other.address, amount: 1_000_000, type: 1 },
        { address: other.address, amount: 999_999 },
        { address: owner.address, amount: TOTAL_SUPPLY - 1_999_999 },
      ]);
      const result = await node.submitMessage({ payload: payloadToJson(ok) });
      expect(result.stored).toBe(true);
    } finally {
      await node.close();
    }
  });
});

describe("the miner's failures are the node's (503), not the submitter's", () => {
  it("a closed miner answers 503 POW_FAILED naming nonce, and nothing is stored", async () => {
    const miner = createMiner({ workers: 1 });
    await miner.close();
    const node = createNode({ network: NETWORK, minPoWScore: 1, pow: { miner } });
    const error = await rejects(node.submitMessage({ payload: null }), "POW_FAILED", "nonce");
    expect((error as NodeError).status).toBe(503);
    expect((node.store as MemoryStore).size).toBe(0);
    await node.close();
  });
});

describe("errors carry an HTTP status", () => {
  it("NodeError statuses by code", () => {
    expect(new NodeError("CANNOT_FILL", "x").status).toBe(503);
    expect(new NodeError("WRONG_NETWORK_ID", "x").status).toBe(400);
    expect(new NodeError("BODY_TOO_LARGE", "x").status).toBe(413);
  });
});

describe("submitJsonText is submitMessage(JSON.parse(text))", () => {
  it("the same id and bytes for complete and partial texts, INVALID_JSON for malformed text, the same refusal for a bad field", async () => {
    const ours = createNode({ network: NETWORK, minPoWScore: 0 });
    const theirs = createNode({ network: NETWORK, minPoWScore: 0 });
    const complete = JSON.stringify({ networkId: networkId(NETWORK).toString(), parentMessageIds: [ZERO_MESSAGE_ID], payload: { type: 2, index: "6869", data: "00" }, nonce: "7" });
    // Parents missing: both nodes fill them from the same tips.
    const partial = JSON.stringify({ networkId: networkId(NETWORK).toString(), payload: { type: 2, index: "6869", data: "01" }, nonce: "9" });
    // Not the plain form the text reader takes itself: an escape makes it hand the text to JSON.parse.
    const escaped = partial.replace('"01"', '"02"').replace('"nonce"', '"non\\u0063e"');
    for (const text of [complete, partial, escaped]) {
      const a = await ours.submitJsonText(text);
      const b = await theirs.submitMessage(JSON.parse(text));
      expect(a.messageId).toBe(b.messageId);
      expect(a.bytes).toEqual(b.bytes);
    }
    const malformed = await rejects(ours.submitJsonText('{"payload": '), "INVALID_JSON");
    expect(malformed.message).toMatch(/^malformed JSON: /);
    const bad = JSON.stringify({ networkId: networkId(NETWORK).toString(), payload: { type: 2, index: "zz", data: "" }, nonce: "9" });
    const refusal = await rejects(ours.submitJsonText(bad), (await rejects(theirs.submitMessage(JSON.parse(bad)), "INVALID_HEX")).code);
    expect(refusal.path).toBe("payload.index");
    expect(ours.stats().rejected).toBe(2);
    await Promise.all([ours.close(), theirs.close()]);
  });
});
