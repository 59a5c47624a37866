// The wire layout of every Chrysalis object, described once (PROTOCOL.md §2, TIP-6/7/8/15): encoding, decoding and
// the syntactic rules of §3 all derive from these descriptions. Field names in paths are the node API's JSON names.
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
import { fundsRule, outputsRule, unlockBlocksRule } from "./rules.js";
import { type ArrayRule, amount, array, bool, bytes, payload, struct, tag, u64, uint, union, varBytes } from "./serializer.js";
import type { MilestonePayload, TransactionPayload } from "./types.js";

/** Parents of a message or a milestone: 1 .. 8 message ids, strictly ascending. */
const parents = array({ prefix: 1, min: MIN_PARENTS, max: MAX_PARENTS, of: bytes(MESSAGE_ID_LENGTH), order: "strict" });

export const ed25519Address = struct("Ed25519Address", [
  ["type", tag(1, ED25519_ADDRESS_TYPE)],
  ["address", bytes(ED25519_ADDRESS_LENGTH)],
]);
export const address = union(1, [ed25519Address]);

export const utxoInput = struct("UtxoInput", [
  ["type", tag(1, UTXO_INPUT_TYPE)],
  ["transactionId", bytes(TRANSACTION_ID_LENGTH)],
  ["transactionOutputIndex", uint(2, 0, MAX_OUTPUT_INDEX)],
]);

export const sigLockedSingleOutput = struct("SigLockedSingleOutput", [
  ["type", tag(1, SIG_LOCKED_SINGLE_OUTPUT_TYPE)],
  ["address", address],
  ["amount", amount(1, TOTAL_SUPPLY)],
]);

export const sigLockedDustAllowanceOutput = struct("SigLockedDustAllowanceOutput", [
  ["type", tag(1, SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE)],
  ["address", address],
  ["amount", amount(DUST_ALLOWANCE_MINIMUM, TOTAL_SUPPLY)],
]);
export const output = union(1, [sigLockedSingleOutput, sigLockedDustAllowanceOutput]);

export const indexationPayload = struct("IndexationPayload", [
  ["type", tag(4, INDEXATION_PAYLOAD_TYPE)],
  ["index", varBytes(2, MIN_INDEX_LENGTH, MAX_INDEX_LENGTH)],
  // Data may be empty; its size is bounded by the message that carries it.
  ["data", varBytes(4, 0, MAX_U32)],
]);

export const transactionEssence = struct("TransactionEssence", [
  ["type", tag(1, TRANSACTION_ESSENCE_TYPE)],
  ["inputs", array({ prefix: 2, min: MIN_INPUTS, max: MAX_INPUTS, of: utxoInput, order: "strict" })],
  ["outputs", array({ prefix: 2, min: MIN_OUTPUTS, max: MAX_OUTPUTS, of: output, order: "ascending", rule: outputsRule as ArrayRule })],
  // The only payload an essence may carry.
  ["payload", payload(union(4, [indexationPayload]), true)],
]);

export const ed25519Signature = struct("Ed25519Signature", [
  ["type", tag(1, ED25519_SIGNATURE_TYPE)],
  ["publicKey", bytes(ED25519_PUBLIC_KEY_LENGTH)],
  ["signature", bytes(ED25519_SIGNATURE_LENGTH)],
]);

export const signatureUnlockBlock = struct("SignatureUnlockBlock", [
  ["type", tag(1, SIGNATURE_UNLOCK_BLOCK_TYPE)],
  ["signature", ed25519Signature],
]);

export const referenceUnlockBlock = struct("ReferenceUnlockBlock", [
  ["type", tag(1, REFERENCE_UNLOCK_BLOCK_TYPE)],
  // Any u16 reads; the unlock block rule says which positions it may name.
  ["reference", uint(2)],
]);

export const transactionPayload = struct("TransactionPayload", [
  ["type", tag(4, TRANSACTION_PAYLOAD_TYPE)],
  ["essence", transactionEssence],
  [
    "unlockBlocks",
    array({
      prefix: 2,
      min: MIN_INPUTS,
      max: MAX_INPUTS,
      of: union(1, [signatureUnlockBlock, referenceUnlockBlock]),
      countFrom: ((tx: TransactionPayload) => tx.essence.inputs.length) as (parent: never) => number,
      countRule: "one unlock block per input",
      rule: unlockBlocksRule as ArrayRule,
    }),
  ],
]);

export const treasuryTransactionPayload = struct("TreasuryTransactionPayload", [
  ["type", tag(4, TREASURY_TRANSACTION_PAYLOAD_TYPE)],
  [
    "input",
    struct("TreasuryInput", [
      ["type", tag(1, TREASURY_INPUT_TYPE)],
      ["milestoneId", bytes(MILESTONE_ID_LENGTH)],
    ]),
  ],
  [
    "output",
    struct("TreasuryOutput", [
      ["type", tag(1, TREASURY_OUTPUT_TYPE)],
      ["amount", amount(0, TOTAL_SUPPLY)],
    ]),
  ],
]);

export const migratedFundsEntry = struct("MigratedFundsEntry", [
  ["tailTransactionHash", bytes(TAIL_TRANSACTION_HASH_LENGTH)],
  ["address", address],
  ["deposit", amount(MIGRATED_FUNDS_MINIMUM, TOTAL_SUPPLY)],
]);

export const receiptPayload = struct("ReceiptPayload", [
  ["type", tag(4, RECEIPT_PAYLOAD_TYPE)],
  ["migratedAt", uint(4)],
  ["final", bool],
  ["funds", array({ prefix: 2, min: MIN_MIGRATED_FUNDS, max: MAX_MIGRATED_FUNDS, of: migratedFundsEntry, order: "strict", rule: fundsRule as ArrayRule })],
  ["transaction", payload(union(4, [treasuryTransactionPayload]), false)],
]);

/** What milestone signatures sign (TIP-8): every field from the index through the receipt. */
const milestoneEssenceFields = [
  ["index", uint(4)],
  ["timestamp", u64],
  ["parents", parents, "parentMessageIds"],
  ["inclusionMerkleProof", bytes(MERKLE_PROOF_LENGTH)],
  ["nextPoWScore", uint(4)],
  ["nextPoWScoreMilestoneIndex", uint(4)],
  ["publicKeys", array({ prefix: 1, min: MIN_MILESTONE_KEYS, max: MAX_MILESTONE_KEYS, of: bytes(ED25519_PUBLIC_KEY_LENGTH), order: "strict" })],
  ["receipt", payload(union(4, [receiptPayload]), true)],
] as const;

export const milestoneEssence = struct("MilestoneEssence", milestoneEssenceFields);

export const milestonePayload = struct("MilestonePayload", [
  ["type", tag(4, MILESTONE_PAYLOAD_TYPE)],
  ...milestoneEssenceFields,
  [
    "signatures",
    array({
      prefix: 1,
      min: MIN_MILESTONE_KEYS,
      max: MAX_MILESTONE_KEYS,
      of: bytes(ED25519_SIGNATURE_LENGTH),
      countFrom: ((m: MilestonePayload) => m.publicKeys.length) as (parent: never) => number,
      countRule: "one signature per public key",
    }),
  ],
]);

/** The payloads a message may carry at its top level. */
export const messagePayload = union(4, [transactionPayload, milestonePayload, indexationPayload]);

export const message = struct("Message", [
  ["networkId", u64],
  ["parents", parents, "parentMessageIds"],
  ["payload", payload(messagePayload, true)],
  ["nonce", u64],
]);
