// The typed model of a Chrysalis message and its node REST JSON form, inferred from the declarations in objects.ts
// (nothing here is written twice). Byte fields are Uint8Array, u64 fields bigint, amounts and indices number.
import type * as o from "./objects.js";
import type { Json, Model } from "./schema.js";

/** A message: the unit of the Tangle. */
export type Message = Model<typeof o.message>;
/** What a message may carry at its top level: a transaction, a milestone or an indexation. */
export type Payload = Model<typeof o.messagePayload>;
/** A transaction: its essence and one unlock block per input. */
export type TransactionPayload = Model<typeof o.transactionPayload>;
/** What a transaction's signatures sign: inputs, outputs and an optional indexation payload. */
export type TransactionEssence = Model<typeof o.transactionEssence>;
/** An input that spends an output, named by its transaction id and index. */
export type UtxoInput = Model<typeof o.utxoInput>;
/** Any input of a transaction essence (a UTXO input). */
export type Input = Model<typeof o.input>;
/** An output of some IOTA to an address. */
export type SigLockedSingleOutput = Model<typeof o.sigLockedSingleOutput>;
/** An output of at least 1 Mi to an address, which lets the address receive dust outputs. */
export type SigLockedDustAllowanceOutput = Model<typeof o.sigLockedDustAllowanceOutput>;
/** Any output of a transaction essence. */
export type Output = Model<typeof o.output>;
/** An Ed25519 address: BLAKE2b-256 of a public key. */
export type Ed25519Address = Model<typeof o.ed25519Address>;
/** Any address (an Ed25519 address). */
export type Address = Model<typeof o.address>;
/** Data under an index a node can find the message by. */
export type IndexationPayload = Model<typeof o.indexationPayload>;
/** An Ed25519 public key and its signature. */
export type Ed25519Signature = Model<typeof o.ed25519Signature>;
/** Any signature (an Ed25519 signature). */
export type Signature = Ed25519Signature;
/** Unlocks an input with a signature of the essence hash. */
export type SignatureUnlockBlock = Model<typeof o.signatureUnlockBlock>;
/** Unlocks an input with the signature of an earlier unlock block (the same key). */
export type ReferenceUnlockBlock = Model<typeof o.referenceUnlockBlock>;
/** Any unlock block. */
export type UnlockBlock = Model<typeof o.unlockBlock>;
/** A milestone: its essence (index, timestamp, parents, Merkle root, keys, receipt) and signatures. */
export type MilestonePayload = Model<typeof o.milestonePayload>;
/** Receipt of migrated legacy funds, only ever inside a milestone (type 3). */
export type ReceiptPayload = Model<typeof o.receiptPayload>;
/** Funds migrated from the legacy network to an address, within a receipt. */
export type MigratedFundsEntry = Model<typeof o.migratedFundsEntry>;
/** Treasury transaction, only inside a receipt (type 4). */
export type TreasuryTransactionPayload = Model<typeof o.treasuryTransactionPayload>;
/** The input of a treasury transaction: the milestone whose treasury output it spends. */
export type TreasuryInput = Model<typeof o.treasuryInput>;
/** The output of a treasury transaction: what is left in the treasury. */
export type TreasuryOutput = Model<typeof o.treasuryOutput>;

/** The node REST JSON of a message, as messageToJson writes it (u64 as decimal strings, bytes as lowercase hex). */
export type MessageJson = Json<typeof o.message>;
/** The node REST JSON of a Payload. */
export type PayloadJson = Json<typeof o.messagePayload>;
/** The node REST JSON of a TransactionPayload. */
export type TransactionPayloadJson = Json<typeof o.transactionPayload>;
/** The node REST JSON of a TransactionEssence. */
export type TransactionEssenceJson = Json<typeof o.transactionEssence>;
/** The node REST JSON of a UtxoInput. */
export type UtxoInputJson = Json<typeof o.utxoInput>;
/** The node REST JSON of a SigLockedSingleOutput. */
export type SigLockedSingleOutputJson = Json<typeof o.sigLockedSingleOutput>;
/** The node REST JSON of a SigLockedDustAllowanceOutput. */
export type SigLockedDustAllowanceOutputJson = Json<typeof o.sigLockedDustAllowanceOutput>;
/** The node REST JSON of an Output. */
export type OutputJson = Json<typeof o.output>;
/** The node REST JSON of an Ed25519Address. */
export type Ed25519AddressJson = Json<typeof o.ed25519Address>;
/** The node REST JSON of an IndexationPayload. */
export type IndexationPayloadJson = Json<typeof o.indexationPayload>;
/** The node REST JSON of an Ed25519Signature. */
export type Ed25519SignatureJson = Json<typeof o.ed25519Signature>;
/** The node REST JSON of a SignatureUnlockBlock. */
export type SignatureUnlockBlockJson = Json<typeof o.signatureUnlockBlock>;
/** The node REST JSON of a ReferenceUnlockBlock. */
export type ReferenceUnlockBlockJson = Json<typeof o.referenceUnlockBlock>;
/** The node REST JSON of an UnlockBlock. */
export type UnlockBlockJson = Json<typeof o.unlockBlock>;
/** The node REST JSON of a MilestonePayload. */
export type MilestonePayloadJson = Json<typeof o.milestonePayload>;
/** The node REST JSON of a ReceiptPayload. */
export type ReceiptPayloadJson = Json<typeof o.receiptPayload>;
/** The node REST JSON of a MigratedFundsEntry. */
export type MigratedFundsEntryJson = Json<typeof o.migratedFundsEntry>;
/** The node REST JSON of a TreasuryTransactionPayload. */
export type TreasuryTransactionPayloadJson = Json<typeof o.treasuryTransactionPayload>;

/** A message as submitted to a node: networkId, parents and nonce may be left for the node (or client) to fill. */
export type PartialMessage = { [K in keyof Message]?: Message[K] | undefined };
