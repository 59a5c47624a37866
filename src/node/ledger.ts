// Semantic checks of a transaction against a ledger (PROTOCOL.md §3, semantic rules), behind the UtxoResolver interface,
// and MemoryLedger, the embedded ledger the in-memory node and the demo use (seeded with genesis outputs).
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { DUST_ALLOWANCE_DIVISOR, DUST_THRESHOLD, MAX_DUST_OUTPUTS_PER_ADDRESS } from "../bytes/limits.js";
import { outputId } from "../model/ids.js";
import { verifyTransactionSignatures } from "../model/transaction.js";
import type { Output, TransactionPayload, UtxoInput } from "../model/types.js";
import { NodeError } from "./errors.js";

/** An output as the ledger knows it. */
export interface LedgerOutput {
  readonly output: Output;
  readonly spent: boolean;
}

/** The dust bookkeeping of one address: the sum of its dust-allowance outputs and how many dust outputs it holds. */
export interface DustState {
  readonly allowance: number;
  readonly dustOutputs: number;
}

/**
 * What the node asks a ledger. `output` is required; `dust` enables the dust rule; `apply` makes an accepted
 * transaction spend its inputs (it must re-check atomically that none was spent meanwhile and throw INPUT_SPENT).
 */
export interface UtxoResolver {
  output(outputId: string): Promise<LedgerOutput | undefined>;
  dust?(address: Uint8Array): Promise<DustState>;
  apply?(transactionId: string, payload: TransactionPayload): Promise<void>;
}

const INPUTS_PATH = "payload.essence.inputs";
const OUTPUTS_PATH = "payload.essence.outputs";

function isDust(output: Output): boolean {
  return output.type === 0 && output.amount < DUST_THRESHOLD;
}

/** How many dust outputs an address with dust-allowance sum `allowance` may hold. */
export function dustCapacity(allowance: number): number {
  return Math.min(Math.floor(allowance / DUST_ALLOWANCE_DIVISOR), MAX_DUST_OUTPUTS_PER_ADDRESS);
}

/**
 * Runs the semantic rules on a transaction: each input's output exists and is unspent, the amounts balance,
 * the unlock blocks unlock (addresses match, signatures verify), and the dust rule (when the resolver keeps dust state).
 * Throws NodeError (status 400) naming the field.
 */
export async function checkTransaction(payload: TransactionPayload, resolver: UtxoResolver): Promise<void> {
  const inputs = payload.essence.inputs;
  const consumed: Output[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const id = outputId(input.transactionId, input.transactionOutputIndex);
    const entry = await resolver.output(id);
    if (entry === undefined) throw new NodeError("INPUT_NOT_FOUND", `output ${id} is unknown to the ledger`, { path: `${INPUTS_PATH}[${i}]` });
    if (entry.spent) throw new NodeError("INPUT_SPENT", `output ${id} is already spent`, { path: `${INPUTS_PATH}[${i}]` });
    consumed.push(entry.output);
  }
  let inSum = 0;
  for (const o of consumed) inSum += o.amount;
  let outSum = 0;
  for (const o of payload.essence.outputs) outSum += o.amount;
  // Both sums stay below 2^53: each side is at most 127 amounts ≤ the total supply (< 2^52).
  if (inSum !== outSum) throw new NodeError("AMOUNTS_DIFFER", `inputs sum to ${inSum} but outputs to ${outSum}`, { path: OUTPUTS_PATH });

  // Paths of the result are relative to the transaction payload; in a message it sits at "payload".
  const result = verifyTransactionSignatures(payload, (_input: UtxoInput, index: number) => consumed[index]?.address.address);
  if (!result.valid) throw new ProtocolError(result.code, result.message, { path: `payload.${result.path}` });

  if (resolver.dust !== undefined) await checkDust(payload, consumed, resolver.dust.bind(resolver));
}

interface DustDelta {
  address: Uint8Array;
  allowance: number;
  dustOutputs: number;
  /** Whether the transaction adds dust to the address or lowers its allowance: only then is the rule checked. */
  tightens: boolean;
}

async function checkDust(payload: TransactionPayload, consumed: Output[], dust: (address: Uint8Array) => Promise<DustState>): Promise<void> {
  const deltas = new Map<string, DustDelta>();
  const delta = (address: Uint8Array): DustDelta => {
    const key = toHex(address);
    let d = deltas.get(key);
    if (d === undefined) deltas.set(key, (d = { address, allowance: 0, dustOutputs: 0, tightens: false }));
    return d;
  };
  for (const o of consumed) {
    const d = delta(o.address.address);
    if (o.type === 1) {
      d.allowance -= o.amount;
      d.tightens = true;
    } else if (isDust(o)) d.dustOutputs -= 1;
  }
  for (const o of payload.essence.outputs) {
    const d = delta(o.address.address);
    if (o.type === 1) d.allowance += o.amount;
    else if (isDust(o)) {
      d.dustOutputs += 1;
      d.tightens = true;
    }
  }
  const outputs = payload.essence.outputs;
  for (const d of deltas.values()) {
    if (!d.tightens) continue;
    const state = await dust(d.address);
    const allowance = state.allowance + d.allowance;
    const count = state.dustOutputs + d.dustOutputs;
    if (count > dustCapacity(allowance)) {
      const at = outputs.findIndex((o) => toHex(o.address.address) === toHex(d.address));
      throw new NodeError("DUST_RULE", `the address would hold ${count} dust outputs but its dust allowance ${allowance} permits ${dustCapacity(allowance)}`, {
        path: at >= 0 ? `${OUTPUTS_PATH}[${at}]` : OUTPUTS_PATH,
      });
    }
  }
}

interface LedgerEntry {
  output: Output;
  spent: boolean;
}

/** An in-memory UTXO ledger: outputs by output id, spent flags, and per-address dust state. */
export class MemoryLedger implements UtxoResolver {
  readonly #outputs = new Map<string, LedgerEntry>();
  readonly #dust = new Map<string, { allowance: number; dustOutputs: number }>();

  /** Adds an unspent output (genesis funds, or outputs of a transaction confirmed elsewhere). */
  add(id: string, output: Output): void {
    const key = id.toLowerCase();
    if (this.#outputs.has(key)) throw new ProtocolError("DUPLICATE", `output ${key} already exists`, { path: "outputId" });
    this.#outputs.set(key, { output, spent: false });
    this.#account(output, +1);
  }

  #account(output: Output, sign: 1 | -1): void {
    const key = toHex(output.address.address);
    let s = this.#dust.get(key);
    if (s === undefined) this.#dust.set(key, (s = { allowance: 0, dustOutputs: 0 }));
    if (output.type === 1) s.allowance += sign * output.amount;
    else if (isDust(output)) s.dustOutputs += sign;
  }

  async output(id: string): Promise<LedgerOutput | undefined> {
    const entry = this.#outputs.get(id.toLowerCase());
    return entry === undefined ? undefined : { output: entry.output, spent: entry.spent };
  }

  async dust(address: Uint8Array): Promise<DustState> {
    return this.#dust.get(toHex(address)) ?? { allowance: 0, dustOutputs: 0 };
  }

  /** Spends the inputs and creates the outputs in one synchronous step, so two submissions cannot both spend an output. */
  async apply(txId: string, payload: TransactionPayload): Promise<void> {
    const inputs = payload.essence.inputs;
    const keys = inputs.map((input) => outputId(input.transactionId, input.transactionOutputIndex));
    for (let i = 0; i < keys.length; i++) {
      const entry = this.#outputs.get(keys[i]!);
      if (entry === undefined) throw new NodeError("INPUT_NOT_FOUND", `output ${keys[i]} is unknown to the ledger`, { path: `${INPUTS_PATH}[${i}]` });
      if (entry.spent) throw new NodeError("INPUT_SPENT", `output ${keys[i]} is already spent`, { path: `${INPUTS_PATH}[${i}]` });
    }
    for (const key of keys) {
      const entry = this.#outputs.get(key)!;
      entry.spent = true;
      this.#account(entry.output, -1);
    }
    payload.essence.outputs.forEach((output, index) => this.add(outputId(txId, index), output));
  }

  /** Unspent outputs held by an address (for wallets and the demo). */
  unspent(address: Uint8Array): { outputId: string; output: Output }[] {
    const want = toHex(address);
    const out: { outputId: string; output: Output }[] = [];
    for (const [id, entry] of this.#outputs) if (!entry.spent && toHex(entry.output.address.address) === want) out.push({ outputId: id, output: entry.output });
    return out;
  }
}
