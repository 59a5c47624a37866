// Every Chrysalis wire object, declared once (PROTOCOL.md §2–§3, TIP-6/7/8/15): field order is wire order, and each
// field gives its binary layout, its bounds and, where the node REST JSON differs from the model, its JSON name.
// The model and JSON types (types.ts), the binary codec, the JSON codec, sorting and every syntactic rule derive from
// these declarations; `npm run build` turns them into codecs.generated.ts.
import {
  DUST_ALLOWANCE_MINIMUM,
  ED25519_ADDRESS_LENGTH,
  ED25519_ADDRESS_TYPE,
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  ED25519_SIGNATURE_TYPE,
  INDEXATION_PAYLOAD_TYPE,
  MAX_INDEX_LENGTH,
  MAX_INPUTS,
  MAX_MIGRATED_FUNDS,
  MAX_MILESTONE_KEYS,
  MAX_OUTPUT_INDEX,
  MAX_OUTPUTS,
  MAX_PARENTS,
  MAX_U32,
  MERKLE_PROOF_LENGTH,
  MESSAGE_ID_LENGTH,
  MIGRATED_FUNDS_MINIMUM,
  MILESTONE_ID_LENGTH,
  MILESTONE_PAYLOAD_TYPE,
  MIN_INDEX_LENGTH,
  MIN_INPUTS,
  MIN_MIGRATED_FUNDS,
  MIN_MILESTONE_KEYS,
  MIN_OUTPUTS,
  MIN_PARENTS,
  RECEIPT_PAYLOAD_TYPE,
  REFERENCE_UNLOCK_BLOCK_TYPE,
  SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE,
  SIG_LOCKED_SINGLE_OUTPUT_TYPE,
  SIGNATURE_UNLOCK_BLOCK_TYPE,
  TAIL_TRANSACTION_HASH_LENGTH,
  TOTAL_SUPPLY,
  TRANSACTION_ESSENCE_TYPE,
  TRANSACTION_ID_LENGTH,
  TRANSACTION_PAYLOAD_TYPE,
  TREASURY_INPUT_TYPE,
  TREASURY_OUTPUT_TYPE,
  TREASURY_TRANSACTION_PAYLOAD_TYPE,
  UTXO_INPUT_TYPE,
} from "../bytes/limits.js";
import { unlockBlocksConstruction, unlockBlocksRule } from "./rules.js";
import { amount, array, bool, bytes, custom, distinct, json, payload, struct, sumAtMost, tag, u64, u64Number, uint, union, varBytes } from "./schema.js";

/** Parents of a message or a milestone: 1 .. 8 message ids, strictly ascending; `parentMessageIds` in JSON. */
const parents = json("parentMessageIds", array(bytes(MESSAGE_ID_LENGTH), { prefix: 1, min: MIN_PARENTS, max: MAX_PARENTS, order: "strict" }));

export const ed25519Address = struct("Ed25519Address", {
  /** The address type: 0, Ed25519. */
  type: tag(1, ED25519_ADDRESS_TYPE),
  /** BLAKE2b-256 of the Ed25519 public key. */
  address: bytes(ED25519_ADDRESS_LENGTH),
});
export const address = union(1, [ed25519Address]);

export const utxoInput = struct("UtxoInput", {
  /** The input type: 0, a UTXO input. */
  type: tag(1, UTXO_INPUT_TYPE),
  /** The transaction that created the output. */
  transactionId: bytes(TRANSACTION_ID_LENGTH),
  /** The index of the output in that transaction's essence (0 .. 126). */
  transactionOutputIndex: uint(2, 0, MAX_OUTPUT_INDEX),
});
export const input = union(1, [utxoInput]);

export const sigLockedSingleOutput = struct("SigLockedSingleOutput", {
  /** The output type: 0. */
  type: tag(1, SIG_LOCKED_SINGLE_OUTPUT_TYPE),
  /** The address that may spend the output. */
  address,
  /** IOTA base units, 1 .. the total supply. */
  amount: amount(1, TOTAL_SUPPLY),
});

export const sigLockedDustAllowanceOutput = struct("SigLockedDustAllowanceOutput", {
  /** The output type: 1. */
  type: tag(1, SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE),
  /** The address that may spend the output, and that may receive dust outputs for it. */
  address,
  /** IOTA base units, at least 1 Mi (1,000,000). */
  amount: amount(DUST_ALLOWANCE_MINIMUM, TOTAL_SUPPLY),
});
export const output = union(1, [sigLockedSingleOutput, sigLockedDustAllowanceOutput]);

export const indexationPayload = struct("IndexationPayload", {
  /** The payload type: 2. */
  type: tag(4, INDEXATION_PAYLOAD_TYPE),
  /** 1 .. 64 bytes a node indexes the message by. */
  index: varBytes(2, MIN_INDEX_LENGTH, MAX_INDEX_LENGTH),
  // May be empty (iota.js then leaves it out of the JSON); the message that carries it bounds its size.
  /** Any bytes, possibly none. */
  data: varBytes(4, 0, MAX_U32, { absentIsEmpty: true }),
});

export const transactionEssence = struct("TransactionEssence", {
  /** The essence type: 0. */
  type: tag(1, TRANSACTION_ESSENCE_TYPE),
  /** 1 .. 127 inputs, in ascending order of their bytes, none twice. */
  inputs: array(input, { prefix: 2, min: MIN_INPUTS, max: MAX_INPUTS, order: "strict" }),
  /** 1 .. 127 outputs, in ascending order of their bytes, one per (type, address). */
  outputs: array(output, {
    prefix: 2,
    min: MIN_OUTPUTS,
    max: MAX_OUTPUTS,
    order: "ascending",
    rules: [
      sumAtMost("amount", TOTAL_SUPPLY, "outputs sum to more than the total supply"),
      // Sorted by (type, address, amount), so repeats of one (type, address) are neighbours.
      distinct("address", "an address appears twice for one output type"),
    ],
  }),
  // The only payload an essence may carry.
  /** An indexation payload, or none. */
  payload: payload(union(4, [indexationPayload]), true),
});

export const ed25519Signature = struct("Ed25519Signature", {
  /** The signature type: 0, Ed25519. */
  type: tag(1, ED25519_SIGNATURE_TYPE),
  /** The signer's 32-byte Ed25519 public key. */
  publicKey: bytes(ED25519_PUBLIC_KEY_LENGTH),
  /** The 64-byte signature of the essence hash. */
  signature: bytes(ED25519_SIGNATURE_LENGTH),
});

export const signatureUnlockBlock = struct("SignatureUnlockBlock", {
  /** The unlock block type: 0. */
  type: tag(1, SIGNATURE_UNLOCK_BLOCK_TYPE),
  /** The signature unlocking the input at this position. */
  signature: ed25519Signature,
});

export const referenceUnlockBlock = struct("ReferenceUnlockBlock", {
  /** The unlock block type: 1. */
  type: tag(1, REFERENCE_UNLOCK_BLOCK_TYPE),
  // Any u16 reads; the unlock block rule says which positions it may name.
  /** The position of an earlier signature unlock block by the same signer. */
  reference: uint(2),
});
export const unlockBlock = union(1, [signatureUnlockBlock, referenceUnlockBlock]);

export const transactionPayload = struct("TransactionPayload", {
  /** The payload type: 0. */
  type: tag(4, TRANSACTION_PAYLOAD_TYPE),
  /** What is signed. */
  essence: transactionEssence,
  /** One unlock block per input, in the inputs' order. */
  unlockBlocks: array(unlockBlock, {
    prefix: 2,
    min: MIN_INPUTS,
    max: MAX_INPUTS,
    sameCountAs: ["essence", "inputs"],
    countRule: "one unlock block per input",
    rules: [custom(unlockBlocksRule, unlockBlocksConstruction)],
  }),
});

export const treasuryInput = struct("TreasuryInput", {
  /** The input type: 1, the treasury. */
  type: tag(1, TREASURY_INPUT_TYPE),
  /** The milestone whose treasury output this spends. */
  milestoneId: bytes(MILESTONE_ID_LENGTH),
});

export const treasuryOutput = struct("TreasuryOutput", {
  /** The output type: 2, the treasury. */
  type: tag(1, TREASURY_OUTPUT_TYPE),
  /** IOTA base units left in the treasury. */
  amount: amount(0, TOTAL_SUPPLY),
});

/** Only ever inside a receipt. */
export const treasuryTransactionPayload = struct("TreasuryTransactionPayload", {
  /** The payload type: 4. */
  type: tag(4, TREASURY_TRANSACTION_PAYLOAD_TYPE),
  /** The treasury output spent. */
  input: treasuryInput,
  /** The new treasury output. */
  output: treasuryOutput,
});

export const migratedFundsEntry = struct("MigratedFundsEntry", {
  /** A legacy tail transaction hash: 243 trytes packed t5b1. */
  tailTransactionHash: bytes(TAIL_TRANSACTION_HASH_LENGTH),
  /** The address the funds migrate to. */
  address,
  /** IOTA base units migrated, at least 1 Mi (1,000,000). */
  deposit: amount(MIGRATED_FUNDS_MINIMUM, TOTAL_SUPPLY),
});

/** Receipt of migrated legacy funds, only ever inside a milestone. */
export const receiptPayload = struct("ReceiptPayload", {
  /** The payload type: 3. */
  type: tag(4, RECEIPT_PAYLOAD_TYPE),
  /** The legacy milestone index the funds were migrated at. */
  migratedAt: uint(4),
  /** Whether this is the last receipt for that legacy milestone. */
  final: bool,
  /** 1 .. 127 migrated funds entries, in ascending order, no tail transaction hash twice. */
  funds: array(migratedFundsEntry, {
    prefix: 2,
    min: MIN_MIGRATED_FUNDS,
    max: MAX_MIGRATED_FUNDS,
    order: "strict",
    rules: [
      sumAtMost("deposit", TOTAL_SUPPLY, "migrated funds sum to more than the total supply"),
      // Sorted by serialized form, which starts with the tail hash, so repeats are neighbours.
      distinct("tailTransactionHash", "a tail transaction hash appears twice"),
    ],
  }),
  /** The treasury transaction paying for the funds. */
  transaction: payload(union(4, [treasuryTransactionPayload]), false),
});

/** What milestone signatures sign (TIP-8): every field from the index through the receipt. */
const milestoneEssenceShape = {
  /** The milestone's index. */
  index: uint(4),
  /** Seconds since the Unix epoch. */
  timestamp: u64Number,
  parents,
  /** The Merkle root of the ids of the messages the milestone newly includes (TIP-4). */
  inclusionMerkleProof: bytes(MERKLE_PROOF_LENGTH),
  /** The minimum PoW score from nextPoWScoreMilestoneIndex on (0: unchanged). */
  nextPoWScore: uint(4),
  /** The milestone index from which nextPoWScore applies. */
  nextPoWScoreMilestoneIndex: uint(4),
  /** The public keys that sign the milestone, 1 .. 255, in ascending order. */
  publicKeys: array(bytes(ED25519_PUBLIC_KEY_LENGTH), { prefix: 1, min: MIN_MILESTONE_KEYS, max: MAX_MILESTONE_KEYS, order: "strict" }),
  /** A receipt of migrated funds, or none. */
  receipt: payload(union(4, [receiptPayload]), true),
} as const;

export const milestoneEssence = struct("MilestoneEssence", milestoneEssenceShape);

export const milestonePayload = struct("MilestonePayload", {
  /** The payload type: 1. */
  type: tag(4, MILESTONE_PAYLOAD_TYPE),
  ...milestoneEssenceShape,
  /** Ed25519 signatures, one per public key in the same order. */
  signatures: array(bytes(ED25519_SIGNATURE_LENGTH), {
    prefix: 1,
    min: MIN_MILESTONE_KEYS,
    max: MAX_MILESTONE_KEYS,
    sameCountAs: ["publicKeys"],
    countRule: "one signature per public key",
  }),
});

/** The payloads a message may carry at its top level. */
export const messagePayload = union(4, [transactionPayload, milestonePayload, indexationPayload]);

export const message = struct("Message", {
  /** The network id: the first 8 bytes of BLAKE2b-256 of the network's name, as a u64. */
  networkId: u64,
  /** 1 .. 8 message ids, in ascending order, none twice; `parentMessageIds` in JSON. */
  parents,
  /** A transaction, milestone or indexation payload, or none. */
  payload: payload(messagePayload, true),
  /** The proof-of-work nonce, a u64. */
  nonce: u64,
});
