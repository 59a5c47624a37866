// Completing a partial message (PROTOCOL.md §6) is one function, model/complete.ts, used by the node's pipeline and by
// the client's local PoW: both fill the same way and refuse the same things with the same codes and paths.
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { toHex } from "../src/bytes/hex.js";
import { createClient } from "../src/client/index.js";
import { decodeMessage } from "../src/model/codec.js";
import { completeMessage, type MessageFiller } from "../src/model/complete.js";
import { networkId } from "../src/model/ids.js";
import type { PartialMessage } from "../src/model/types.js";
import { MemoryStore } from "../src/node/index.js";
import { startNode } from "./node-helpers.js";

const NETWORK = "chrysalis-devnet";
const id = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);
const payload = { type: 2 as const, index: Uint8Array.of(1), data: new Uint8Array(0) };

function filler(tips: string[]): MessageFiller {
  return { networkId: () => 7n, tips: () => tips };
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; path: string | undefined }> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return { code: (error as ProtocolError).code, path: (error as ProtocolError).path };
}

describe("completeMessage fills what is missing", () => {
  it("a missing or 0 networkId becomes the filler's; missing or empty parents are the first 8 tips, sorted, each once", async () => {
    const tips = [9, 3, 3, 1, 7, 5, 2, 8, 6, 4].map((b) => toHex(id(b)));
    for (const partial of [{ payload }, { networkId: 0n, parents: [], payload }] as PartialMessage[]) {
      const { message, bytes, needsNonce } = await completeMessage(partial, filler(tips));
      expect(message.networkId).toBe(7n);
      // The first 8 tips are 9 3 3 1 7 5 2 8: sorted and once each.
      expect(message.parents.map((p) => p[0])).toEqual([1, 2, 3, 5, 7, 8, 9]);
      expect(needsNonce).toBe(true);
      expect(decodeMessage(bytes)).toEqual({ ...message, nonce: 0n });
    }
  });

  it("keeps what is given and leaves nothing to mine when the nonce is there", async () => {
    const partial = { networkId: 5n, parents: [id(1)], payload, nonce: 11n };
    const { message, needsNonce } = await completeMessage(partial, filler([]));
    expect(message).toEqual(partial);
    expect(needsNonce).toBe(false);
  });
});

describe("completeMessage refuses", () => {
  it("what is not a partial message or a filler: INVALID_ARGUMENT, never a TypeError", async () => {
    for (const partial of [null, undefined, 5, "message"]) {
      expect(await refusal(completeMessage(partial as unknown as PartialMessage, filler([toHex(id(1))])))).toEqual({ code: "INVALID_ARGUMENT", path: "" });
    }
    expect(await refusal(completeMessage({ payload }, null as unknown as MessageFiller))).toEqual({ code: "INVALID_ARGUMENT", path: "filler" });
  });

  it("a nonce without a networkId: NONCE_WITHOUT_NETWORK_ID at networkId", async () => {
    expect(await refusal(completeMessage({ payload, nonce: 5n }, filler([toHex(id(1))])))).toEqual({ code: "NONCE_WITHOUT_NETWORK_ID", path: "networkId" });
  });
  it("missing parents with no tips: CANNOT_FILL at parentMessageIds", async () => {
    expect(await refusal(completeMessage({ payload }, filler([])))).toEqual({ code: "CANNOT_FILL", path: "parentMessageIds" });
  });
});

describe("the node and the client refuse alike", () => {
  it("a nonce without a networkId", async () => {
    const run = await startNode({ network: NETWORK, pow: false });
    try {
      const fromNode = await refusal(run.node.submitModel({ payload, nonce: 5n }));
      const fromClient = await refusal(createClient(run.url).submitMessage({ payload, nonce: 5n }, { localPow: true }));
      expect(fromClient).toEqual(fromNode);
      expect(fromNode).toEqual({ code: "NONCE_WITHOUT_NETWORK_ID", path: "networkId" });
    } finally {
      await run.close();
    }
  });

  it("no tips to take parents from", async () => {
    // A store without entry points has no tip until a message is stored.
    const run = await startNode({ network: NETWORK, store: new MemoryStore({ entryPoints: [] }), pow: { workers: 1 } });
    try {
      const fromNode = await refusal(run.node.submitModel({ networkId: networkId(NETWORK), payload, nonce: 5n }));
      const fromClient = await refusal(createClient(run.url).submitMessage({ networkId: networkId(NETWORK), payload, nonce: 5n }, { localPow: true }));
      expect(fromClient).toEqual(fromNode);
      expect(fromNode).toEqual({ code: "CANNOT_FILL", path: "parentMessageIds" });
    } finally {
      await run.close();
    }
  });
});
