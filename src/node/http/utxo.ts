// The REST API v1 reads of the UTXO ledger and the milestones (NODE-API.md §1.2, §1.8–§1.10): outputs, addresses and
// their outputs, the message that included a transaction, milestones and their UTXO changes, receipts and treasury.
import type { AddressBalanceJson, AddressOutputsJson } from "../../model/rest.js";
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex, isLowerHex, toHex } from "../../bytes/hex.js";
import { MAX_U32 } from "../../bytes/limits.js";
import { parseBech32Address } from "../../crypto/address.js";
import { outputId } from "../../model/ids.js";
import { NodeError } from "../errors.js";
import { dustCapacity } from "../ledger.js";
import type { ChrysalisNode } from "../pipeline.js";
import { milestoneJson, outputResponseJson, utxoChangesJson } from "../shapes.js";
import { ZERO_MESSAGE_ID } from "../store/contract.js";
import { decodeParam, idParam, json, type Reply, type Route } from "./router.js";

/** The id of the message whose transaction created output `<transactionId>:0`, or 404. */
export async function includedMessageId(node: ChrysalisNode, raw: string): Promise<string> {
  const txId = idParam(raw, "transactionId");
  await node.ready();
  const record = await node.store.output(outputId(txId, 0));
  if (record === undefined || record.messageId === ZERO_MESSAGE_ID) throw new NodeError("NOT_FOUND", "output for transaction not found", { path: "transactionId" });
  return record.messageId;
}

/** A decimal u32 path parameter (a milestone index), as Hornet parses it. */
function indexParam(raw: string, path: string): number {
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > MAX_U32) throw new ProtocolError("INVALID_ARGUMENT", `${path} is a decimal milestone index`, { path });
  return Number(raw);
}

/** Go's strconv.ParseBool, as Hornet reads `include-spent`; anything else counts as false. */
function parseBool(text: string | null): boolean {
  return text !== null && ["1", "t", "T", "TRUE", "true", "True"].includes(text);
}

export function utxoRoutes(node: ChrysalisNode, maxResults: number): Route[] {
  const hrp = node.info.bech32HRP;

  async function ledgerIndex(): Promise<number> {
    await node.ready();
    return (await node.store.latestMilestone())?.index ?? 0;
  }

  function bech32Param(raw: string): Uint8Array {
    const { hrp: given, address } = parseBech32Address(decodeParam(raw, "address"));
    if (given !== hrp) throw new ProtocolError("INVALID_BECH32", `the address is for network prefix ${given}, not ${hrp}`, { path: "address" });
    return address;
  }

  function ed25519Param(raw: string): Uint8Array {
    const hex = raw.toLowerCase();
    if (!isLowerHex(hex, 32)) throw new ProtocolError("INVALID_HEX", "an Ed25519 address is 64 hex characters", { path: "address" });
    return fromHex(hex, "address", 32);
  }

  async function balance(address: Uint8Array): Promise<Reply> {
    const index = await ledgerIndex();
    const b = await node.store.addressBalance(address);
    const data: AddressBalanceJson = { addressType: 0, address: toHex(address), balance: b.balance, dustAllowed: dustCapacity(b.dustAllowance) > b.dustOutputs, ledgerIndex: index };
    return json(200, { data });
  }

  async function outputs(address: Uint8Array, url: URL): Promise<Reply> {
    const typeText = url.searchParams.get("type");
    let type: 0 | 1 | undefined;
    if (typeText !== null) {
      if (typeText !== "0" && typeText !== "1") throw new ProtocolError("INVALID_ARGUMENT", "invalid type: 0 (SigLockedSingleOutput) or 1 (SigLockedDustAllowanceOutput)", { path: "type" });
      type = typeText === "0" ? 0 : 1;
    }
    const index = await ledgerIndex();
    const outputIds = await node.store.addressOutputs(address, { type, includeSpent: parseBool(url.searchParams.get("include-spent")), max: maxResults });
    const data: AddressOutputsJson = { addressType: 0, address: toHex(address), maxResults, count: outputIds.length, outputIds, ledgerIndex: index };
    return json(200, { data });
  }

  return [
    {
      name: "output",
      pattern: /^\/api\/v1\/outputs\/([^/]+)$/,
      methods: {
        GET: async ({ params: [raw] }) => {
          const text = raw!.toLowerCase();
          // Any 34 bytes are an output id to look up (Hornet does not check the index's range): unknown ones are 404.
          if (!isLowerHex(text, 34)) throw new ProtocolError("INVALID_HEX", "an output id is 68 hex characters", { path: "outputId" });
          const index = await ledgerIndex();
          const record = await node.store.output(text);
          if (record === undefined) throw new NodeError("NOT_FOUND", "output not found", { path: "outputId" });
          return json(200, { data: outputResponseJson(record, index) });
        },
      },
    },
    { name: "address.ed25519", pattern: /^\/api\/v1\/addresses\/ed25519\/([^/]+)$/, methods: { GET: async ({ params: [raw] }) => balance(ed25519Param(raw!)) } },
    { name: "address.ed25519.outputs", pattern: /^\/api\/v1\/addresses\/ed25519\/([^/]+)\/outputs$/, methods: { GET: async ({ params: [raw], url }) => outputs(ed25519Param(raw!), url) } },
    { name: "address", pattern: /^\/api\/v1\/addresses\/([^/]+)$/, methods: { GET: async ({ params: [raw] }) => balance(bech32Param(raw!)) } },
    { name: "address.outputs", pattern: /^\/api\/v1\/addresses\/([^/]+)\/outputs$/, methods: { GET: async ({ params: [raw], url }) => outputs(bech32Param(raw!), url) } },
    {
      name: "milestone",
      pattern: /^\/api\/v1\/milestones\/([^/]+)$/,
      methods: {
        GET: async ({ params: [raw] }) => {
          const index = indexParam(raw!, "index");
          await node.ready();
          const record = await node.store.milestone(index);
          if (record === undefined) throw new NodeError("NOT_FOUND", "milestone not found", { path: "index" });
          return json(200, { data: milestoneJson(record) });
        },
      },
    },
    {
      name: "milestone.utxo-changes",
      pattern: /^\/api\/v1\/milestones\/([^/]+)\/utxo-changes$/,
      methods: {
        GET: async ({ params: [raw] }) => {
          const index = indexParam(raw!, "index");
          await node.ready();
          const changes = await node.store.utxoChanges(index);
          if (changes === undefined) throw new NodeError("NOT_FOUND", "milestone diff not found", { path: "index" });
          return json(200, { data: utxoChangesJson(changes) });
        },
      },
    },
    // This network has no legacy migration: its coordinator issues no receipts and milestones come from it alone
    // (submitted milestone payloads are refused), so the list of receipts is empty by construction.
    { name: "receipts", pattern: /^\/api\/v1\/receipts$/, methods: { GET: async () => json(200, { data: { receipts: [] } }) } },
    {
      name: "receipts.migrated-at",
      pattern: /^\/api\/v1\/receipts\/([^/]+)$/,
      methods: {
        GET: async ({ params: [raw] }) => {
          indexParam(raw!, "migratedAt");
          return json(200, { data: { receipts: [] } });
        },
      },
    },
    // No treasury was ever funded here: the treasury output of a network without migration, as a private Hornet
    // network's genesis snapshot has it (zero milestone id, amount 0).
    { name: "treasury", pattern: /^\/api\/v1\/treasury$/, methods: { GET: async () => json(200, { data: { milestoneId: ZERO_MESSAGE_ID, amount: 0 } }) } },
  ];
}
