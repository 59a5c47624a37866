// The options the arbitraries take, checked at the door and turned into caps on the schema's nodes: each option names
// a bound of objects.ts (its range is the schema's) and lowers it.
import { ProtocolError } from "../bytes/errors.js";
import { DUST_ALLOWANCE_MINIMUM, INDEXATION_PAYLOAD_TYPE, MAX_MESSAGE_LENGTH, MILESTONE_PAYLOAD_TYPE, TOTAL_SUPPLY, TRANSACTION_PAYLOAD_TYPE } from "../bytes/limits.js";
import * as objects from "../model/objects.js";
import type { Node, PayloadNode } from "../model/schema.js";
import { type Caps, fieldAt, maxCost } from "./derive.js";

/** Options every arbitrary of a message or a payload takes; each lowers one of the schema's upper bounds. */
export interface ArbitraryOptions {
  /**
   * The most bytes a value may encode to: a message's whole encoding (53 .. 32768, the default 32768); a payload's
   * from its type tag on (the default leaves room for it in a message with 8 parents). Values are drawn up to it.
   */
  readonly maxBytes?: number | undefined;
  /** Most parents of a message and of a milestone, 1 .. 8 (the default). */
  readonly maxParents?: number | undefined;
  /** Most inputs of a transaction, 1 .. 127 (the default). */
  readonly maxInputs?: number | undefined;
  /** Most outputs of a transaction, 1 .. 127 (the default). */
  readonly maxOutputs?: number | undefined;
  /** Most bytes of indexation data; the default is whatever fits. */
  readonly maxDataLength?: number | undefined;
  /** Most public keys (and signatures) of a milestone, 1 .. 255 (the default). */
  readonly maxMilestoneKeys?: number | undefined;
  /** Most migrated funds entries of a receipt, 1 .. 127 (the default). */
  readonly maxMigratedFunds?: number | undefined;
  /** Most tokens one output holds, 1,000,000 (a dust allowance's least) .. the total supply (the default). */
  readonly maxAmount?: number | undefined;
  /** Whether a milestone may carry a receipt (default true). */
  readonly receipts?: boolean | undefined;
  /** Whether a transaction essence may carry an indexation payload (default true). */
  readonly essencePayloads?: boolean | undefined;
}

/** The top-level payloads of a message, and "none" for a message without one. */
export type MessagePayloadKind = "none" | "transaction" | "milestone" | "indexation";

/** Options of `message()`, `messageBytes()` and `messageJson()`. */
export interface MessageOptions extends ArbitraryOptions {
  /** Which payloads messages carry; the default is all four kinds, each as often. */
  readonly payloads?: readonly MessagePayloadKind[] | undefined;
}

const PAYLOAD_TYPES: Readonly<Record<Exclude<MessagePayloadKind, "none">, number>> = {
  transaction: TRANSACTION_PAYLOAD_TYPE,
  milestone: MILESTONE_PAYLOAD_TYPE,
  indexation: INDEXATION_PAYLOAD_TYPE,
};

/** The node each count option lowers the bound of. */
const COUNT_OPTIONS = {
  maxParents: fieldAt(objects.message, ["parents"]),
  maxInputs: fieldAt(objects.transactionEssence, ["inputs"]),
  maxOutputs: fieldAt(objects.transactionEssence, ["outputs"]),
  maxDataLength: fieldAt(objects.indexationPayload, ["data"]),
  maxMilestoneKeys: fieldAt(objects.milestonePayload, ["publicKeys"]),
  maxMigratedFunds: fieldAt(objects.receiptPayload, ["funds"]),
} as const;

/** The amounts `maxAmount` lowers the bound of: those of outputs. */
const AMOUNTS = objects.output.variants.map((v) => fieldAt(v, ["amount"]));

const MESSAGE_PAYLOAD = fieldAt(objects.message, ["payload"]) as PayloadNode;
const RECEIPT = fieldAt(objects.milestonePayload, ["receipt"]) as PayloadNode;
const ESSENCE_PAYLOAD = fieldAt(objects.transactionEssence, ["payload"]) as PayloadNode;

/** The most bytes a top-level payload takes in a message of 32768 bytes with the most parents. */
export const MAX_PAYLOAD_BYTES = MAX_MESSAGE_LENGTH - objects.message.fields.reduce((sum, f) => sum + (f.key === "payload" ? 4 : maxCost(f.node)), 0);

/** The refusal of an option (INVALID_ARGUMENT at `options.<name>`). */
export function invalidOption(name: string, message: string): ProtocolError {
  return new ProtocolError("INVALID_ARGUMENT", message, { path: `options.${name}` });
}

/** An integer option within the bound it lowers. */
function integer(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw invalidOption(name, `expected an integer ${min} .. ${max}, got ${String(value)}`);
  return value;
}

function flag(value: unknown, name: string): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw invalidOption(name, "expected a boolean");
}

/** Checks options and turns them into caps; `maxBytes` is at most `most`, and defaults to it. */
export function capsOf(options: unknown, most: number, message = false): { caps: Caps; budget: number } {
  if (options === null || typeof options !== "object") throw new ProtocolError("INVALID_ARGUMENT", "expected an options object", { path: "options" });
  const o = options as Record<string, unknown>;
  const max = new Map<Node, number>();
  for (const [name, node] of Object.entries(COUNT_OPTIONS)) {
    const bound = node.kind === "array" || node.kind === "varBytes" ? node : undefined;
    if (bound === undefined) throw new Error(`${name} names no bound`);
    const value = integer(o[name], name, Math.max(bound.min, name === "maxDataLength" ? 0 : 1), bound.max);
    if (value !== undefined) max.set(node, value);
  }
  const amount = integer(o["maxAmount"], "maxAmount", DUST_ALLOWANCE_MINIMUM, TOTAL_SUPPLY);
  if (amount !== undefined) for (const node of AMOUNTS) max.set(node, amount);
  const absent = new Set<PayloadNode>();
  const present = new Set<PayloadNode>();
  const variants = new Map<Node, ReadonlySet<number>>();
  if (flag(o["receipts"], "receipts") === false) absent.add(RECEIPT);
  if (flag(o["essencePayloads"], "essencePayloads") === false) absent.add(ESSENCE_PAYLOAD);
  if (message && o["payloads"] !== undefined) {
    const kinds = o["payloads"];
    if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((k) => k === "none" || Object.hasOwn(PAYLOAD_TYPES, k as string))) {
      throw invalidOption("payloads", `expected a non-empty list of ${["none", ...Object.keys(PAYLOAD_TYPES)].join(", ")}`);
    }
    const types = new Set(kinds.flatMap((k) => (k === "none" ? [] : [PAYLOAD_TYPES[k as keyof typeof PAYLOAD_TYPES]])));
    if (types.size === 0) absent.add(MESSAGE_PAYLOAD);
    else variants.set(MESSAGE_PAYLOAD.of, types);
    if (!kinds.includes("none")) present.add(MESSAGE_PAYLOAD);
  }
  const budget = integer(o["maxBytes"], "maxBytes", 1, most) ?? most;
  return { caps: { max, variants, absent, present }, budget };
}
