// The semantic rules of a transaction against the UTXO ledger (PROTOCOL.md §3), as the API checks a submission early
// (white-flag decides at confirmation: confirmation.ts):
// - checkSpend: what depends only on the consumed outputs' contents (amounts balance, addresses and signatures unlock).
//   An output's contents never change once created, so this may run before the store's atomic write.
// - checkLedgerState: what depends on the ledger's state (each input exists and is unspent, the dust rule).
// - checkClaim: the claim rule every store engine runs INSIDE its accept write, so that of two submissions spending
//   one output exactly one is accepted.
// Plus the per-address balance arithmetic the engines share, and MemoryLedger, a standalone in-memory UtxoResolver.
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { DUST_ALLOWANCE_DIVISOR, DUST_THRESHOLD, MAX_DUST_OUTPUTS_PER_ADDRESS } from "../bytes/limits.js";
import { outputId } from "../model/ids.js";
import { verifyTransactionSignatures } from "../model/transaction.js";
import type { Output, TransactionPayload, UtxoInput } from "../model/types.js";
import { NodeError } from "./errors.js";
import { PENDING_CLAIM_MILESTONES, type AddressBalance, type ClaimRecord, type GenesisOutput, type LedgerMutation, type OutputRecord, type PendingOutput, type SpendClaim } from "./store/contract.js";

/** An OutputRecord as checkLedgerState reads it. */
export function ledgerOutput(record: OutputRecord | undefined): LedgerOutput | undefined {
  return record === undefined ? undefined : { output: record.output, spent: record.spent !== undefined };
}

/** An output as a resolver knows it. */
export interface LedgerOutput {
  /** The output's address and amount: what an input spending it must unlock and brings to the sums. */
  readonly output: Output;
  /** True once a transaction spent it: a further spend is INPUT_SPENT. */
  readonly spent: boolean;
}

/** The dust bookkeeping of one address: the sum of its dust-allowance outputs and how many dust outputs it holds. */
export interface DustState {
  /** Sum of its unspent dust-allowance outputs' amounts: it may hold dustCapacity(allowance) dust outputs. */
  readonly allowance: number;
  /** How many unspent dust outputs (below DUST_THRESHOLD) it holds. */
  readonly dustOutputs: number;
}

/** What checkTransaction asks a ledger: `output` is required; `dust` enables the dust rule. */
export interface UtxoResolver {
  /** The output of this id (68 hex characters) and whether it is spent; undefined when the ledger has none
   * (INPUT_NOT_FOUND). */
  output(outputId: string): Promise<LedgerOutput | undefined>;
  /** The dust state of the address (its 32 Ed25519 address bytes); zeros for one that holds nothing. */
  dust?(address: Uint8Array): Promise<DustState>;
}

const INPUTS_PATH = "payload.essence.inputs";
const OUTPUTS_PATH = "payload.essence.outputs";

export function isDustOutput(output: Output): boolean {
  return output.type === 0 && output.amount < DUST_THRESHOLD;
}

/** How many dust outputs an address with dust-allowance sum `allowance` may hold. */
export function dustCapacity(allowance: number): number {
  return Math.min(Math.floor(allowance / DUST_ALLOWANCE_DIVISOR), MAX_DUST_OUTPUTS_PER_ADDRESS);
}

/** The output ids a transaction's inputs spend, in input order. */
export function consumedOutputIds(payload: TransactionPayload): string[] {
  return payload.essence.inputs.map((input) => outputId(input.transactionId, input.transactionOutputIndex));
}

/** The ledger mutation of an accepted transaction. */
export function ledgerMutation(transactionId: string, payload: TransactionPayload): LedgerMutation {
  return { transactionId, consumed: consumedOutputIds(payload), created: payload.essence.outputs };
}

/**
 * Amounts balance, and the unlock blocks unlock the consumed outputs (addresses match, signatures verify).
 * `consumed[i]` is the output input i spends. Throws NodeError/ProtocolError naming the field.
 */
export function checkSpend(payload: TransactionPayload, consumed: readonly Output[]): void {
  let inSum = 0;
  for (const o of consumed) inSum += o.amount;
  let outSum = 0;
  for (const o of payload.essence.outputs) outSum += o.amount;
  // Both sums stay below 2^53: each side is at most 127 amounts ≤ the total supply (< 2^52).
  if (inSum !== outSum) throw new NodeError("AMOUNTS_DIFFER", `inputs sum to ${inSum} but outputs to ${outSum}`, { path: OUTPUTS_PATH });
  // Paths of the result are relative to the transaction payload; in a message it sits at "payload".
  const result = verifyTransactionSignatures(payload, (_input: UtxoInput, index: number) => consumed[index]?.address.address);
  if (!result.valid) throw new ProtocolError(result.code, result.message, { path: `payload.${result.path}` });
}

/** How accepting a transaction changes one address's AddressBalance (engines add these to what they keep). */
export interface BalanceDelta {
  /** The address's 32 Ed25519 address bytes. */
  readonly address: Uint8Array;
  /** What its balance changes by (negative for a net spend). */
  balance: number;
  /** What its dust-allowance sum changes by. */
  dustAllowance: number;
  /** What its count of dust outputs changes by. */
  dustOutputs: number;
  /** The transaction adds dust to the address or lowers its allowance: only then is the dust rule checked for it. */
  tightens: boolean;
}

/** Per-address balance changes, keyed by the address's hex, of spending `consumed` and creating `created`. */
export function balanceDeltas(consumed: readonly Output[], created: readonly Output[]): Map<string, BalanceDelta> {
  const deltas = new Map<string, BalanceDelta>();
  const delta = (address: Uint8Array): BalanceDelta => {
    const key = toHex(address);
    let d = deltas.get(key);
    if (d === undefined) deltas.set(key, (d = { address, balance: 0, dustAllowance: 0, dustOutputs: 0, tightens: false }));
    return d;
  };
  for (const o of consumed) {
    const d = delta(o.address.address);
    d.balance -= o.amount;
    if (o.type === 1) {
      d.dustAllowance -= o.amount;
      d.tightens = true;
    } else if (isDustOutput(o)) d.dustOutputs -= 1;
  }
  for (const o of created) {
    const d = delta(o.address.address);
    d.balance += o.amount;
    if (o.type === 1) d.dustAllowance += o.amount;
    else if (isDustOutput(o)) {
      d.dustOutputs += 1;
      d.tightens = true;
    }
  }
  return deltas;
}

/**
 * The per-address balance changes of confirming a milestone (MilestoneApplication): balanceDeltas of the outputs it
 * spends and creates, leaving out every output it both creates and spends. Those change no balance, and leaving them
 * out keeps every sum within the total supply (the outputs left are distinct unspent ones before, or after, the
 * milestone): a chain of spends of one large output inside a milestone would otherwise add and subtract amounts past
 * 2^53, where doubles round.
 */
export function milestoneDeltas(created: readonly { outputId: string; output: Output }[], consumed: readonly { outputId: string; output: Output }[]): Map<string, BalanceDelta> {
  const made = new Set(created.map((o) => o.outputId.toLowerCase()));
  const spent = new Set(consumed.map((o) => o.outputId.toLowerCase()));
  return balanceDeltas(
    consumed.filter((o) => !made.has(o.outputId.toLowerCase())).map((o) => o.output),
    created.filter((o) => !spent.has(o.outputId.toLowerCase())).map((o) => o.output),
  );
}

export const EMPTY_BALANCE: AddressBalance = { balance: 0, dustAllowance: 0, dustOutputs: 0 };

/** `balance` with `delta` added. */
export function addBalance(balance: AddressBalance, delta: BalanceDelta): AddressBalance {
  return { balance: balance.balance + delta.balance, dustAllowance: balance.dustAllowance + delta.dustAllowance, dustOutputs: balance.dustOutputs + delta.dustOutputs };
}

/**
 * The state part of the semantic rules, run by every engine inside its atomic write: `entries[i]` is what the store
 * holds now for `mutation.consumed[i]`, `balanceOf(hex)` an address's current balance. Each input's output must exist
 * and be unspent; every address the transaction tightens must keep its dust outputs within its allowance.
 * Returns the consumed outputs and the balance deltas for the write.
 */
export function checkLedgerState(
  mutation: LedgerMutation,
  entries: readonly (LedgerOutput | undefined)[],
  balanceOf: (addressHex: string) => AddressBalance,
): {
  /** The outputs the inputs spend, in input order: checkSpend's `consumed`. */
  consumed: Output[];
  /** The per-address balance changes, keyed by the address's hex, for the engine's write. */
  deltas: Map<string, BalanceDelta>;
} {
  const consumed: Output[] = [];
  for (let i = 0; i < mutation.consumed.length; i++) {
    const record = entries[i];
    const id = mutation.consumed[i]!;
    if (record === undefined) throw new NodeError("INPUT_NOT_FOUND", `output ${id} is unknown to the ledger`, { path: `${INPUTS_PATH}[${i}]` });
    if (record.spent) throw new NodeError("INPUT_SPENT", `output ${id} is already spent`, { path: `${INPUTS_PATH}[${i}]` });
    consumed.push(record.output);
  }
  const deltas = balanceDeltas(consumed, mutation.created);
  for (const [key, d] of deltas) {
    if (!d.tightens) continue;
    const after = addBalance(balanceOf(key), d);
    if (after.dustOutputs > dustCapacity(after.dustAllowance)) {
      const at = mutation.created.findIndex((o) => toHex(o.address.address) === key);
      throw new NodeError("DUST_RULE", `the address would hold ${after.dustOutputs} dust outputs but its dust allowance ${after.dustAllowance} permits ${dustCapacity(after.dustAllowance)}`, {
        path: at >= 0 ? `${OUTPUTS_PATH}[${at}]` : OUTPUTS_PATH,
      });
    }
  }
  return { consumed, deltas };
}

/**
 * The claim rule (Acceptance.claim), run by every engine inside its accept write: `outputs[i]` is what the confirmed
 * ledger holds for claim.consumed[i], `pending[i]` the pending output of that id (read only where the ledger holds
 * none), `claims[i]` the claim held on it, `latest` the confirmed milestone index. An output neither the ledger nor a
 * live pending transaction holds is INPUT_NOT_FOUND; one spent by another transaction, or claimed by another
 * transaction less than PENDING_CLAIM_MILESTONES milestones ago, INPUT_SPENT. Returns the output ids to claim now: an
 * output this very transaction spent already (a reattachment of a confirmed transaction) is not claimed again.
 */
export function checkClaim(
  claim: SpendClaim,
  outputs: readonly (OutputRecord | undefined)[],
  pending: readonly (PendingOutput | undefined)[],
  claims: readonly (ClaimRecord | undefined)[],
  latest: number,
): string[] {
  const claimed: string[] = [];
  for (let i = 0; i < claim.consumed.length; i++) {
    const id = claim.consumed[i]!;
    const record = outputs[i];
    const path = `${INPUTS_PATH}[${i}]`;
    if (record === undefined) {
      const made = pending[i];
      if (made === undefined || claimLapsed(made, latest)) throw new NodeError("INPUT_NOT_FOUND", `output ${id} is unknown to the confirmed ledger and to every pending transaction`, { path });
    } else if (record.spent !== undefined) {
      if (record.spent.transactionId === claim.transactionId) continue;
      throw new NodeError("INPUT_SPENT", `output ${id} is already spent`, { path });
    }
    const held = claims[i];
    if (held !== undefined && held.transactionId !== claim.transactionId && !claimLapsed(held, latest)) {
      throw new NodeError("INPUT_SPENT", `output ${id} is held by the pending transaction ${held.transactionId} (message ${held.messageId})`, { path });
    }
    claimed.push(id);
  }
  return claimed;
}

/** The pending outputs a claimed transaction in message `messageId` records, made at confirmed index `index`. */
export function pendingOutputsOf(claim: SpendClaim, messageId: string, index: number): PendingOutput[] {
  return claim.created.map((output, i) => ({ outputId: outputId(claim.transactionId, i), transactionId: claim.transactionId, messageId, output, index }));
}

/** A claim (or pending output) made PENDING_CLAIM_MILESTONES or more milestones before `latest` no longer holds. */
export function claimLapsed(claim: Pick<ClaimRecord, "index">, latest: number): boolean {
  return latest - claim.index >= PENDING_CLAIM_MILESTONES;
}

/**
 * Runs every semantic rule on a transaction against a resolver: inputs exist and are unspent, amounts balance,
 * the unlock blocks unlock, and the dust rule (when the resolver keeps dust state). Throws NodeError naming the field.
 */
export async function checkTransaction(payload: TransactionPayload, resolver: UtxoResolver): Promise<void> {
  const ids = consumedOutputIds(payload);
  const found = await Promise.all(ids.map((id) => resolver.output(id)));
  const mutation: LedgerMutation = { transactionId: "", consumed: ids, created: payload.essence.outputs };
  const dust = resolver.dust?.bind(resolver);
  const states = new Map<string, AddressBalance>();
  if (dust !== undefined) {
    const addresses = new Map<string, Uint8Array>();
    for (const o of [...found.map((f) => f?.output), ...payload.essence.outputs]) if (o !== undefined) addresses.set(toHex(o.address.address), o.address.address);
    for (const [key, address] of addresses) {
      const s = await dust(address);
      states.set(key, { balance: 0, dustAllowance: s.allowance, dustOutputs: s.dustOutputs });
    }
  }
  // Without dust state the rule is skipped: no address can look tightened past an unknown capacity.
  const { consumed } = checkLedgerState(mutation, found, (key) => states.get(key) ?? { balance: 0, dustAllowance: Infinity, dustOutputs: 0 });
  checkSpend(payload, consumed);
}

/** An in-memory UTXO ledger for checkTransaction and as a node's genesis: outputs by id, spent flags, dust state. */
export class MemoryLedger implements UtxoResolver {
  readonly #outputs = new Map<string, { output: Output; spent: boolean }>();
  readonly #dust = new Map<string, { allowance: number; dustOutputs: number }>();

  /** Adds an unspent output (genesis funds, or outputs of a transaction confirmed elsewhere). */
  add(id: string, output: Output): this {
    const key = id.toLowerCase();
    if (this.#outputs.has(key)) throw new ProtocolError("DUPLICATE", `output ${key} already exists`, { path: "outputId" });
    this.#outputs.set(key, { output, spent: false });
    this.#account(output, +1);
    return this;
  }

  #account(output: Output, sign: 1 | -1): void {
    const key = toHex(output.address.address);
    let s = this.#dust.get(key);
    if (s === undefined) this.#dust.set(key, (s = { allowance: 0, dustOutputs: 0 }));
    if (output.type === 1) s.allowance += sign * output.amount;
    else if (isDustOutput(output)) s.dustOutputs += sign;
  }

  async output(id: string): Promise<LedgerOutput | undefined> {
    const entry = this.#outputs.get(id.toLowerCase());
    return entry === undefined ? undefined : { output: entry.output, spent: entry.spent };
  }

  async dust(address: Uint8Array): Promise<DustState> {
    return this.#dust.get(toHex(address)) ?? { allowance: 0, dustOutputs: 0 };
  }

  /** Spends the inputs and creates the outputs in one synchronous step (refusing a spent or unknown input). */
  async apply(txId: string, payload: TransactionPayload): Promise<void> {
    const keys = consumedOutputIds(payload);
    keys.forEach((key, i) => {
      const entry = this.#outputs.get(key);
      if (entry === undefined) throw new NodeError("INPUT_NOT_FOUND", `output ${key} is unknown to the ledger`, { path: `${INPUTS_PATH}[${i}]` });
      if (entry.spent) throw new NodeError("INPUT_SPENT", `output ${key} is already spent`, { path: `${INPUTS_PATH}[${i}]` });
    });
    for (const key of keys) {
      const entry = this.#outputs.get(key)!;
      entry.spent = true;
      this.#account(entry.output, -1);
    }
    payload.essence.outputs.forEach((output, index) => this.add(outputId(txId, index), output));
  }

  /** Unspent outputs held by an address. */
  unspent(address: Uint8Array): {
    /** The output's id, lowercase hex. */
    outputId: string;
    /** Its address and amount. */
    output: Output;
  }[] {
    const want = toHex(address);
    const out: { outputId: string; output: Output }[] = [];
    for (const [id, entry] of this.#outputs) if (!entry.spent && toHex(entry.output.address.address) === want) out.push({ outputId: id, output: entry.output });
    return out;
  }

  /** Its unspent outputs as a new store's genesis. */
  genesis(): GenesisOutput[] {
    const out: GenesisOutput[] = [];
    for (const [id, entry] of this.#outputs) if (!entry.spent) out.push({ outputId: id, output: entry.output });
    return out;
  }
}
