// Signed transactions: an essence derived from the schema, keys for its inputs, and the payload buildTransactionPayload
// signs from them, with what each input spends (output id, owner, amount) so that a test can stand up the ledger.
import fc from "fast-check";
import { ED25519_SEED_LENGTH } from "../bytes/limits.js";
import { ed25519Address } from "../crypto/address.js";
import { ed25519PublicKey } from "../crypto/ed25519.js";
import { outputId } from "../model/ids.js";
import * as objects from "../model/objects.js";
import { signersFrom } from "../model/rules.js";
import { bytes } from "../model/schema.js";
import { buildTransactionPayload } from "../model/transaction.js";
import type { Output, TransactionEssence, TransactionPayload, UtxoInput } from "../model/types.js";
import { Deriver, fewestBytes, sortedDistinct } from "./derive.js";
import { type ArbitraryOptions, capsOf, invalidOption, MAX_PAYLOAD_BYTES } from "./options.js";

/** Options of `signedTransaction()`. */
export interface SignedTransactionOptions extends ArbitraryOptions {
  /** Most distinct keys signing one transaction (1 .. 127); by default up to one per input. */
  readonly maxSigners?: number | undefined;
}

/** A key that signs: its Ed25519 seed, public key, and the address (BLAKE2b-256 of the key) whose outputs it unlocks. */
export interface SigningKey {
  /** The 32-byte Ed25519 seed (what buildTransactionPayload's `seed` takes). */
  readonly seed: Uint8Array;
  /** Its 32-byte public key, as the signature unlock block carries it. */
  readonly publicKey: Uint8Array;
  /** BLAKE2b-256 of the public key: the Ed25519 address of the outputs it unlocks. */
  readonly address: Uint8Array;
}

/** What an input spends: the output's id, the key and address owning it, and its amount. */
export interface SpentOutput {
  /** The output id (68 hex characters) of the input's transaction id and index. */
  readonly outputId: string;
  /** The input as the essence holds it. */
  readonly input: UtxoInput;
  /** Position of the owning key in `keys`. */
  readonly key: number;
  /** The owner's Ed25519 address (32 bytes). */
  readonly address: Uint8Array;
  /** Amounts of all inputs add up to the outputs' total, as the semantic rules ask. */
  readonly amount: number;
}

/** A transaction payload whose signatures verify, with the keys behind them and what its inputs spend. */
export interface SignedTransaction {
  /** The signed payload: sorted, one signature unlock block per key, references for a key's later inputs. */
  readonly payload: TransactionPayload;
  /** The distinct signers, in the order of their signature unlock blocks. */
  readonly keys: readonly SigningKey[];
  /** One per input of the essence, in its order. */
  readonly inputs: readonly SpentOutput[];
  /** The address owning the output `input` spends (undefined for another input): what verifyTransactionSignatures asks. */
  readonly addressOf: (input: UtxoInput) => Uint8Array | undefined;
}

const seed = bytes(ED25519_SEED_LENGTH);

const idOf = (input: UtxoInput): string | undefined => {
  try {
    return outputId(input.transactionId, input.transactionOutputIndex);
  } catch {
    return undefined;
  }
};

/** `total` split into `weights.length` parts of at least 1 each, in proportion to the weights (exact, in bigints). */
function split(total: number, weights: readonly number[]): number[] {
  const spare = BigInt(total - weights.length);
  const sum = weights.reduce((s, w) => s + BigInt(w + 1), 0n);
  const parts = weights.map((w) => 1 + Number((spare * BigInt(w + 1)) / sum));
  parts[parts.length - 1]! += total - parts.reduce((s, p) => s + p, 0);
  return parts;
}

/**
 * Transaction payloads signed by real keys: the essence is derived like `transactionEssence()`, its inputs are shared
 * among 1 .. maxSigners keys (a key's first input carries its signature, later ones reference it), and each input is
 * tied by its output id to the key and address owning it, with amounts that balance the outputs (the dust rule is not
 * considered). `verifyTransactionSignatures(t.payload, t.addressOf)` is valid for every value.
 */
export function signedTransaction(options: SignedTransactionOptions = {}): fc.Arbitrary<SignedTransaction> {
  const { caps, budget } = capsOf(options, MAX_PAYLOAD_BYTES);
  const fewest = 4 + fewestBytes(objects.transactionEssence, caps);
  if (budget < fewest) throw invalidOption("maxBytes", `a transaction needs at least ${fewest} bytes, got ${budget}`);
  const maxSigners = options.maxSigners ?? Infinity;
  if (maxSigners !== Infinity && (!Number.isInteger(maxSigners) || maxSigners < 1 || maxSigners > 127)) throw invalidOption("maxSigners", "expected an integer 1 .. 127");
  const essences = new Deriver(caps).root(objects.transactionEssence, budget - 4) as fc.Arbitrary<TransactionEssence>;
  return essences
    .chain((essence) => {
      const n = essence.inputs.length;
      const each = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(arbitrary, { minLength: n, maxLength: n });
      return fc.tuple(fc.constant(essence), each(fc.integer({ min: 0, max: 255 })), each(fc.uint8Array({ minLength: ED25519_SEED_LENGTH, maxLength: ED25519_SEED_LENGTH })), each(fc.nat()));
    })
    .map(([essence, choices, seeds, weights]) => {
      const signerOf = signersFrom(choices, maxSigners);
      const count = Math.max(...signerOf) + 1;
      const keys = (sortedDistinct(seed, seeds.slice(0, count), Infinity) as Uint8Array[]).map((s): SigningKey => {
        const publicKey = ed25519PublicKey(s);
        return { seed: s, publicKey, address: ed25519Address(publicKey) };
      });
      // Amounts balance only if the outputs hold at least one per input: the last output makes up the difference
      // (an amount is never what orders outputs: no two share a type and address).
      let outputs: Output[] = essence.outputs;
      const total = outputs.reduce((s, o) => s + o.amount, 0);
      if (total < signerOf.length) outputs = [...outputs.slice(0, -1), { ...outputs.at(-1)!, amount: outputs.at(-1)!.amount + signerOf.length - total }];
      const payload = buildTransactionPayload({
        inputs: essence.inputs.map((input, i) => ({ transactionId: input.transactionId, transactionOutputIndex: input.transactionOutputIndex, seed: keys[signerOf[i]!]!.seed })),
        outputs,
        indexation: essence.payload,
      });
      const amounts = split(Math.max(total, signerOf.length), weights);
      const inputs = payload.essence.inputs.map((input, i): SpentOutput => ({ outputId: idOf(input)!, input, key: signerOf[i]!, address: keys[signerOf[i]!]!.address, amount: amounts[i]! }));
      const owners = new Map(inputs.map((s) => [s.outputId, s.address]));
      return { payload, keys, inputs, addressOf: (input: UtxoInput) => owners.get(idOf(input) ?? "") };
    });
}

