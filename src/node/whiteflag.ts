// White-flag (TIP-2, PROTOCOL.md §3): what confirming a milestone does, decided the same way on every node whatever
// order its messages arrived in. The milestone's unreferenced past cone is walked depth first, parents in their order,
// post-order; each transaction met is checked against the confirmed ledger as the walk has left it so far, in Hornet's
// order (pkg/whiteflag, iota.go v2 SemanticallyValidate), and either applied or marked conflicting with its reason.
import { equalBytes, concatBytes } from "../bytes/bytes.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { DUST_ALLOWANCE_DIVISOR, DUST_THRESHOLD, MAX_DUST_OUTPUTS_PER_ADDRESS } from "../bytes/limits.js";
import { blake2b256 } from "../crypto/blake2b.js";
import { ed25519Address } from "../crypto/address.js";
import { verifyEd25519 } from "../crypto/ed25519.js";
import { essenceHash, outputId, transactionId } from "../model/ids.js";
import type { Output, TransactionPayload, UnlockBlock } from "../model/types.js";
import { consumedOutputIds } from "./ledger.js";
import { metadataWithLatest } from "./store/common.js";
import type { AddressBalance, ConsumedOutput, CreatedOutput, MessageMetadata, NodeStore, OutputRecord, ReferencedMessage, ReleasedClaim, StoredMessage } from "./store/contract.js";

/** Hornet's conflict reasons (pkg/model/storage, `NODE-API.md` §1.7). */
export const CONFLICT = {
  /** An input's output was spent by an earlier milestone. */
  INPUT_ALREADY_SPENT: 1,
  /** An input's output was spent by a transaction earlier in this milestone's walk. */
  INPUT_SPENT_IN_THIS_MILESTONE: 2,
  /** An input's output is not in the confirmed ledger, nor created earlier in the walk. */
  INPUT_NOT_FOUND: 3,
  /** The inputs' amounts do not sum to the outputs'. */
  AMOUNTS_DIFFER: 4,
  /** A signature does not verify, or its public key is not the input address's. */
  INVALID_SIGNATURE: 5,
  /** An address would hold more dust outputs than its dust allowance permits. */
  DUST_RULE: 6,
  /** Any other semantic rule: an input with no signature unlock block of its own or by reference, or one address
   * unlocked by two different signature blocks. */
  SEMANTIC_VALIDATION_FAILED: 255,
} as const;

/** A message of the walked cone: what is stored, its metadata before the milestone, and the state it gets. */
export interface WalkedMessage extends ReferencedMessage {
  /** The message as stored. */
  readonly stored: StoredMessage;
  /** Its metadata before the milestone (not referenced yet). */
  readonly metadata: MessageMetadata;
}

/** What a milestone with these parents would confirm. */
export interface WhiteFlagResult {
  /** The unreferenced past cone, in walk order (the milestone's own message not among them). */
  readonly cone: readonly WalkedMessage[];
  /** Outputs the included transactions create, in walk order (MilestoneApplication.created). */
  readonly created: readonly CreatedOutput[];
  /** Outputs the included transactions spend, in walk order (MilestoneApplication.consumed). */
  readonly consumed: readonly ConsumedOutput[];
  /** Claims of the transactions found conflicting, to release (MilestoneApplication.released). */
  readonly released: readonly ReleasedClaim[];
  /** The outputs the conflicting transactions would have created (their pending outputs go). */
  readonly discarded: readonly string[];
  /** The inclusion Merkle root (TIP-4) over the included transactions' message ids, in walk order. */
  readonly merkleRoot: Uint8Array;
}

/** What the walk knows besides the store. */
export interface WhiteFlagOptions {
  /** Whether the store keeps a ledger; without one every transaction is included and nothing is booked. */
  readonly ledger: boolean;
  /** Message ids whose signatures the node verified already against the same outputs (an output's contents never
   * change): their Ed25519 checks are not made again. */
  readonly verified?: ((messageId: string) => boolean) | undefined;
  /** Ids known to be referenced already (the Tangle's memory), so that the walk stops there without a read. */
  readonly referenced?: ((messageId: string) => boolean) | undefined;
}

/**
 * The white-flag walk of a milestone with these parents, against the ledger the store holds now (the previous
 * milestone's): the store's confirm write (index = latest + 1) makes sure no other milestone came in between.
 */
export async function whiteFlag(store: NodeStore, parents: readonly string[], options: WhiteFlagOptions): Promise<WhiteFlagResult> {
  const graph = await readCone(store, parents, options.referenced);
  const order = postOrder(parents, graph);
  const ledger = new WalkLedger(store);
  if (options.ledger) await ledger.prefetch(order);
  const cone: WalkedMessage[] = [];
  const created: CreatedOutput[] = [];
  const consumed: ConsumedOutput[] = [];
  const released: ReleasedClaim[] = [];
  const discarded: string[] = [];
  const included: Uint8Array[] = [];
  for (const { stored, metadata } of order) {
    const payload = stored.message.payload;
    if (payload?.type !== 0) {
      cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "noTransaction" });
      continue;
    }
    const txId = transactionId(payload);
    const conflict = options.ledger ? ledger.check(payload, options.verified?.(stored.id) === true) : { reason: undefined, inputs: [] };
    if (conflict.reason !== undefined) {
      cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "conflicting", conflictReason: conflict.reason });
      for (const id of consumedOutputIds(payload)) released.push({ outputId: id, transactionId: txId });
      payload.essence.outputs.forEach((_, i) => discarded.push(outputId(txId, i)));
      continue;
    }
    cone.push({ messageId: stored.id, stored, metadata, ledgerInclusionState: "included" });
    included.push(fromHex(stored.id, "messageId", 32));
    if (!options.ledger) continue;
    const ids = consumedOutputIds(payload);
    ids.forEach((id, i) => consumed.push({ outputId: id, output: conflict.inputs[i]!, transactionId: txId, messageId: stored.id }));
    const made = payload.essence.outputs.map((output, index): CreatedOutput => ({ outputId: outputId(txId, index), transactionId: txId, outputIndex: index, messageId: stored.id, output }));
    created.push(...made);
    ledger.apply(ids, conflict.inputs, made);
  }
  return { cone, created, consumed, released, discarded, merkleRoot: merkleRoot(included) };
}

interface ConeNode {
  readonly stored: StoredMessage;
  readonly metadata: MessageMetadata;
}

/** The unreferenced past cone of `parents`, read level by level (each level's reads together: one round trip to a
 * store across a network), stopping at referenced messages and solid entry points. */
async function readCone(store: NodeStore, parents: readonly string[], referenced?: (id: string) => boolean): Promise<Map<string, ConeNode>> {
  const graph = new Map<string, ConeNode>();
  const seen = new Set<string>();
  let frontier = [...new Set(parents)];
  while (frontier.length > 0) {
    const ids = frontier.filter((id) => !seen.has(id) && !store.entryPoints.has(id) && referenced?.(id) !== true);
    for (const id of ids) seen.add(id);
    if (ids.length === 0) break;
    const { metadata } = await metadataWithLatest(store, ids);
    const open: { id: string; metadata: MessageMetadata }[] = [];
    ids.forEach((id, i) => {
      const m = metadata[i];
      // Not stored (a bounded memory store forgot it): the walk stops there, as at a referenced message. A follower's
      // cone is solid before it is walked, and a walk that differs from the coordinator's shows in its Merkle root.
      if (m !== undefined && m.referencedByMilestoneIndex === undefined) open.push({ id, metadata: m });
    });
    const messages = await Promise.all(open.map(({ id }) => store.get(id)));
    const next: string[] = [];
    open.forEach(({ id, metadata: m }, i) => {
      const stored = messages[i];
      if (stored === undefined) return;
      graph.set(id, { stored, metadata: m });
      for (const p of stored.message.parents) {
        const parent = toHex(p);
        if (!seen.has(parent)) next.push(parent);
      }
    });
    frontier = [...new Set(next)];
  }
  return graph;
}

/** Depth first from `parents` in their order, each message's parents in theirs, every message after its parents and once. */
function postOrder(parents: readonly string[], graph: ReadonlyMap<string, ConeNode>): ConeNode[] {
  const order: ConeNode[] = [];
  const done = new Set<string>();
  const stack: { id: string; next: number }[] = [];
  const enter = (id: string): void => {
    if (done.has(id) || !graph.has(id)) return;
    done.add(id);
    stack.push({ id, next: 0 });
  };
  for (const root of parents) {
    enter(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const node = graph.get(top.id)!;
      const ps = node.stored.message.parents;
      if (top.next < ps.length) {
        enter(toHex(ps[top.next++]!));
        continue;
      }
      stack.pop();
      order.push(node);
    }
  }
  return order;
}

/** The confirmed ledger as the walk leaves it: the store's outputs and balances, read once ahead, and what the
 * milestone has created, spent and moved so far (Hornet's NewOutputs, NewSpents and dust allowance diff). */
class WalkLedger {
  readonly #store: NodeStore;
  readonly #outputs = new Map<string, OutputRecord | undefined>();
  readonly #balances = new Map<string, AddressBalance>();
  readonly #newOutputs = new Map<string, Output>();
  readonly #newSpents = new Set<string>();
  /** Per address hex: the dust allowance and dust outputs the milestone adds so far. */
  readonly #dust = new Map<string, { allowance: number; dustOutputs: number }>();

  constructor(store: NodeStore) {
    this.#store = store;
  }

  /** Reads every output the cone's transactions spend and every address they touch, all at once. */
  async prefetch(order: readonly ConeNode[]): Promise<void> {
    const ids = new Set<string>();
    const addresses = new Map<string, Uint8Array>();
    for (const { stored } of order) {
      const payload = stored.message.payload;
      if (payload?.type !== 0) continue;
      for (const id of consumedOutputIds(payload)) ids.add(id);
      for (const o of payload.essence.outputs) addresses.set(toHex(o.address.address), o.address.address);
    }
    const records = await Promise.all([...ids].map((id) => this.#store.output(id)));
    [...ids].forEach((id, i) => this.#outputs.set(id, records[i]));
    for (const r of records) if (r !== undefined) addresses.set(toHex(r.output.address.address), r.output.address.address);
    const balances = await Promise.all([...addresses.values()].map((a) => this.#store.addressBalance(a)));
    [...addresses.keys()].forEach((key, i) => this.#balances.set(key, balances[i]!));
  }

  /** The conflict reason of a transaction against the ledger as it stands, or none with the outputs it spends. */
  check(payload: TransactionPayload, verified: boolean): { reason: number | undefined; inputs: Output[] } {
    const inputs: Output[] = [];
    for (const id of consumedOutputIds(payload)) {
      if (this.#newSpents.has(id)) return { reason: CONFLICT.INPUT_SPENT_IN_THIS_MILESTONE, inputs };
      const made = this.#newOutputs.get(id);
      if (made !== undefined) {
        inputs.push(made);
        continue;
      }
      const record = this.#outputs.get(id);
      if (record === undefined) return { reason: CONFLICT.INPUT_NOT_FOUND, inputs };
      if (record.spent !== undefined) return { reason: CONFLICT.INPUT_ALREADY_SPENT, inputs };
      inputs.push(record.output);
    }
    return { reason: semanticConflict(payload, inputs, (key) => this.#dustOf(key), verified), inputs };
  }

  #dustOf(addressHex: string): { allowance: number; dustOutputs: number } {
    const balance = this.#balances.get(addressHex);
    const diff = this.#dust.get(addressHex);
    return { allowance: (balance?.dustAllowance ?? 0) + (diff?.allowance ?? 0), dustOutputs: (balance?.dustOutputs ?? 0) + (diff?.dustOutputs ?? 0) };
  }

  /** An included transaction's effects, for the rest of the walk. */
  apply(consumed: readonly string[], spent: readonly Output[], created: readonly CreatedOutput[]): void {
    for (const id of consumed) this.#newSpents.add(id);
    for (const o of created) this.#newOutputs.set(o.outputId, o.output);
    for (const [output, sign] of [...spent.map((o) => [o, -1] as const), ...created.map((o) => [o.output, 1] as const)]) {
      const key = toHex(output.address.address);
      const d = this.#dust.get(key) ?? { allowance: 0, dustOutputs: 0 };
      if (output.type === 1) d.allowance += sign * output.amount;
      else if (output.amount < DUST_THRESHOLD) d.dustOutputs += sign;
      this.#dust.set(key, d);
    }
  }
}

/**
 * iota.go v2's SemanticallyValidate with the dust rule, in its order and with Hornet's reasons: each input's signature
 * block (an address unlocked by two different blocks: 255), the sums (4), the dust rule on every address a dust output
 * or dust allowance touches (6), then the signatures (a key that is not the address's, or a bad signature: 5).
 */
function semanticConflict(payload: TransactionPayload, inputs: readonly Output[], dustOf: (addressHex: string) => { allowance: number; dustOutputs: number }, verified: boolean): number | undefined {
  const blocks = payload.unlockBlocks;
  const seen = new Map<string, number>();
  const checks: { block: number; address: Uint8Array }[] = [];
  let inSum = 0;
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    inSum += input.amount;
    const block = signatureBlockOf(blocks, i);
    if (block === undefined) return CONFLICT.SEMANTIC_VALIDATION_FAILED;
    const key = toHex(input.address.address);
    const used = seen.get(key);
    if (used !== undefined) {
      if (used !== block) return CONFLICT.SEMANTIC_VALIDATION_FAILED;
      continue;
    }
    seen.set(key, block);
    checks.push({ block, address: input.address.address });
  }
  let outSum = 0;
  for (const o of payload.essence.outputs) outSum += o.amount;
  if (inSum !== outSum) return CONFLICT.AMOUNTS_DIFFER;
  if (!dustHolds(payload.essence.outputs, inputs, dustOf)) return CONFLICT.DUST_RULE;
  if (verified) return undefined;
  const hash = essenceHash(payload.essence);
  for (const { block, address } of checks) {
    const { publicKey, signature } = (blocks[block] as Extract<UnlockBlock, { type: 0 }>).signature;
    if (!equalBytes(ed25519Address(publicKey), address) || !verifyEd25519(publicKey, hash, signature)) return CONFLICT.INVALID_SIGNATURE;
  }
  return undefined;
}

/** The index of the signature unlock block that unlocks input i: its own, or the one its reference names. */
function signatureBlockOf(blocks: readonly UnlockBlock[], i: number): number | undefined {
  const block = blocks[i];
  if (block === undefined) return undefined;
  if (block.type === 0) return i;
  return blocks[block.reference]?.type === 0 ? block.reference : undefined;
}

/** iota.go v2's dust validation: for each address a dust output or dust allowance output is created on or spent
 * from, its dust outputs after the transaction stay within min(allowance / 100,000, 100). */
function dustHolds(outputs: readonly Output[], inputs: readonly Output[], dustOf: (addressHex: string) => { allowance: number; dustOutputs: number }): boolean {
  const changes = new Map<string, { allowance: number; dustOutputs: number }>();
  const change = (o: Output): { allowance: number; dustOutputs: number } => {
    const key = toHex(o.address.address);
    let c = changes.get(key);
    if (c === undefined) changes.set(key, (c = { allowance: 0, dustOutputs: 0 }));
    return c;
  };
  for (const o of outputs) {
    if (o.type === 1) change(o).allowance += o.amount;
    else if (o.amount < DUST_THRESHOLD) change(o).dustOutputs += 1;
  }
  for (const o of inputs) {
    if (o.amount < DUST_THRESHOLD) change(o).dustOutputs -= 1;
    else if (o.type === 1) change(o).allowance -= o.amount;
  }
  for (const [key, c] of changes) {
    const now = dustOf(key);
    const allowed = Math.min(Math.floor((now.allowance + c.allowance) / DUST_ALLOWANCE_DIVISOR), MAX_DUST_OUTPUTS_PER_ADDRESS);
    if (now.dustOutputs + c.dustOutputs > allowed) return false;
  }
  return true;
}

/**
 * The white-flag inclusion Merkle root (TIP-4) over the ids of the messages whose transactions a milestone includes:
 * BLAKE2b-256 with 0x00 before a leaf and 0x01 before two children, split at the largest power of two below the count;
 * an empty list hashes to BLAKE2b-256 of nothing.
 */
export function merkleRoot(ids: readonly Uint8Array[]): Uint8Array {
  if (ids.length === 0) return blake2b256(new Uint8Array(0));
  if (ids.length === 1) return blake2b256(concatBytes([LEAF, ids[0]!]));
  let split = 1;
  while (split * 2 < ids.length) split *= 2;
  return blake2b256(concatBytes([NODE, merkleRoot(ids.slice(0, split)), merkleRoot(ids.slice(split))]));
}

const LEAF = Uint8Array.of(0x00);
const NODE = Uint8Array.of(0x01);
