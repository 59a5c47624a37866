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
import { unlockBlocksRule } from "./rules.js";
import { amount, array, bool, bytes, custom, distinct, json, payload, struct, sumAtMost, tag, u64, u64Number, uint, union, varBytes } from "./schema.js";

/** Parents of a message or a milestone: 1 .. 8 message ids, strictly ascending; `parentMessageIds` in JSON. */
const parents = json("parentMessageIds", array(bytes(MESSAGE_ID_LENGTH), { prefix: 1, min: MIN_PARENTS, max: MAX_PARENTS, order: "strict" }));

export const ed25519Address = struct("Ed25519Address", {
  type: tag(1, ED25519_ADDRESS_TYPE),
  /** BLAKE2b-256 of the Ed25519 public key. */
  address: bytes(ED25519_ADDRESS_LENGTH),
});
export const address = union(1, [ed25519Address]);

export const utxoInput = struct("UtxoInput", {
  type: tag(1, UTXO_INPUT_TYPE),
  /** The transaction that created the output. */
  transactionId: bytes(TRANSACTION_ID_LENGTH),
  transactionOutputIndex: uint(2, 0, MAX_OUTPUT_INDEX),
});
export const input = union(1, [utxoInput]);

export const sigLockedSingleOutput = struct("SigLockedSingleOutput", {
  type: tag(1, SIG_LOCKED_SINGLE_OUTPUT_TYPE),
  address,
  amount: amount(1, TOTAL_SUPPLY),
});

export const sigLockedDustAllowanceOutput = struct("SigLockedDustAllowanceOutput", {
  type: tag(1, SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE),
  address,
  amount: amount(DUST_ALLOWANCE_MINIMUM, TOTAL_SUPPLY),
});
export const output = union(1, [sigLockedSingleOutput, sigLockedDustAllowanceOutput]);

export const indexationPayload = struct("IndexationPayload", {
  type: tag(4, INDEXATION_PAYLOAD_TYPE),
  index: varBytes(2, MIN_INDEX_LENGTH, MAX_INDEX_LENGTH),
  // May be empty (iota.js then leaves it out of the JSON); the message that carries it bounds its size.
  data: varBytes(4, 0, MAX_U32, { absentIsEmpty: true }),
});

export const transactionEssence = struct("TransactionEssence", {
  type: tag(1, TRANSACTION_ESSENCE_TYPE),
  inputs: array(input, { prefix: 2, min: MIN_INPUTS, max: MAX_INPUTS, order: "strict" }),
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
  payload: payload(union(4, [indexationPayload]), true),
});

export const ed25519Signature = struct("Ed25519Signature", {
  type: tag(1, ED25519_SIGNATURE_TYPE),
  publicKey: bytes(ED25519_PUBLIC_KEY_LENGTH),
  signature: bytes(ED25519_SIGNATURE_LENGTH),
});

export const signatureUnlockBlock = struct("SignatureUnlockBlock", {
  type: tag(1, SIGNATURE_UNLOCK_BLOCK_TYPE),
  signature: ed25519Signature,
});

export const referenceUnlockBlock = struct("ReferenceUnlockBlock", {
  type: tag(1, REFERENCE_UNLOCK_BLOCK_TYPE),
  // Any u16 reads; the unlock block rule says which positions it may name.
  reference: uint(2),
});
export const unlockBlock = union(1, [signatureUnlockBlock, referenceUnlockBlock]);

export const transactionPayload = struct("TransactionPayload", {
  type: tag(4, TRANSACTION_PAYLOAD_TYPE),
  essence: transactionEssence,
  unlockBlocks: array(unlockBlock, {
    prefix: 2,
    min: MIN_INPUTS,
    max: MAX_INPUTS,
    sameCountAs: ["essence", "inputs"],
    countRule: "one unlock block per input",
    rules: [custom(unlockBlocksRule)],
  }),
});

export const treasuryInput = struct("TreasuryInput", {
  type: tag(1, TREASURY_INPUT_TYPE),
  milestoneId: bytes(MILESTONE_ID_LENGTH),
});

export const treasuryOutput = struct("TreasuryOutput", {
  type: tag(1, TREASURY_OUTPUT_TYPE),
  amount: amount(0, TOTAL_SUPPLY),
});

/** Only ever inside a receipt. */
export const treasuryTransactionPayload = struct("TreasuryTransactionPayload", {
  type: tag(4, TREASURY_TRANSACTION_PAYLOAD_TYPE),
  input: treasuryInput,
  output: treasuryOutput,
});

export const migratedFundsEntry = struct("MigratedFundsEntry", {
  /** A legacy tail transaction hash: 243 trytes packed t5b1. */
  tailTransactionHash: bytes(TAIL_TRANSACTION_HASH_LENGTH),
  address,
  deposit: amount(MIGRATED_FUNDS_MINIMUM, TOTAL_SUPPLY),
});

/** Receipt of migrated legacy funds, only ever inside a milestone. */
export const receiptPayload = struct("ReceiptPayload", {
  type: tag(4, RECEIPT_PAYLOAD_TYPE),
  migratedAt: uint(4),
  final: bool,
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
  transaction: payload(union(4, [treasuryTransactionPayload]), false),
});

/** What milestone signatures sign (TIP-8): every field from the index through the receipt. */
const milestoneEssenceShape = {
  index: uint(4),
  /** Seconds since the Unix epoch. */
  timestamp: u64Number,
  parents,
  inclusionMerkleProof: bytes(MERKLE_PROOF_LENGTH),
  nextPoWScore: uint(4),
  nextPoWScoreMilestoneIndex: uint(4),
  publicKeys: array(bytes(ED25519_PUBLIC_KEY_LENGTH), { prefix: 1, min: MIN_MILESTONE_KEYS, max: MAX_MILESTONE_KEYS, order: "strict" }),
  receipt: payload(union(4, [receiptPayload]), true),
} as const;

export const milestoneEssence = struct("MilestoneEssence", milestoneEssenceShape);

export const milestonePayload = struct("MilestonePayload", {
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
  networkId: u64,
  parents,
  payload: payload(messagePayload, true),
  nonce: u64,
});
