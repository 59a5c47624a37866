// The semantic rules of a transaction against the UTXO ledger (PROTOCOL.md §3), in the two parts a store needs:
// - checkSpend: what depends only on the consumed outputs' contents (amounts balance, addresses and signatures unlock).
//   An output's contents never change once created, so this may run before the store's atomic write.
// - checkLedgerState: what depends on the ledger's state (each input exists and is unspent, the dust rule). Every store
//   engine runs it INSIDE its atomic write, on records read in that write, so no two transactions can both pass it.
// Plus the per-address balance arithmetic the engines share, and MemoryLedger, a standalone in-memory UtxoResolver.
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { DUST_ALLOWANCE_DIVISOR, DUST_THRESHOLD, MAX_DUST_OUTPUTS_PER_ADDRESS } from "../bytes/limits.js";
import { outputId } from "../model/ids.js";
import { verifyTransactionSignatures } from "../model/transaction.js";
import type { Output, TransactionPayload, UtxoInput } from "../model/types.js";
import { NodeError } from "./errors.js";
import type { AddressBalance, GenesisOutput, LedgerMutation, OutputRecord } from "./store/contract.js";

/** An OutputRecord as checkLedgerState reads it. */
export function ledgerOutput(record: OutputRecord | undefined): LedgerOutput | undefined {
  return record === undefined ? undefined : { output: record.output, spent: record.spent !== undefined };
}

/** An output as a resolver knows it. */
export interface LedgerOutput {
  readonly output: Output;
  readonly spent: boolean;
}

/** The dust bookkeeping of one address: the sum of its dust-allowance outputs and how many dust outputs it holds. */
export interface DustState {
  readonly allowance: number;
  readonly dustOutputs: number;
}

/** What checkTransaction asks a ledger: `output` is required; `dust` enables the dust rule. */
export interface UtxoResolver {
  output(outputId: string): Promise<LedgerOutput | undefined>;
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
  readonly address: Uint8Array;
  balance: number;
  dustAllowance: number;
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
): { consumed: Output[]; deltas: Map<string, BalanceDelta> } {
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
  unspent(address: Uint8Array): { outputId: string; output: Output }[] {
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
