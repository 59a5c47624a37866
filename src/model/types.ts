// The typed model of a Chrysalis message and its node REST JSON form, inferred from the declarations in objects.ts
// (nothing here is written twice). Byte fields are Uint8Array, u64 fields bigint, amounts and indices number.
import type * as o from "./objects.js";
import type { Json, Model } from "./schema.js";

/** A message: the unit of the Tangle. */
export type Message = Model<typeof o.message>;
export type Payload = Model<typeof o.messagePayload>;
export type TransactionPayload = Model<typeof o.transactionPayload>;
export type TransactionEssence = Model<typeof o.transactionEssence>;
export type UtxoInput = Model<typeof o.utxoInput>;
export type Input = Model<typeof o.input>;
export type SigLockedSingleOutput = Model<typeof o.sigLockedSingleOutput>;
export type SigLockedDustAllowanceOutput = Model<typeof o.sigLockedDustAllowanceOutput>;
export type Output = Model<typeof o.output>;
export type Ed25519Address = Model<typeof o.ed25519Address>;
export type Address = Model<typeof o.address>;
export type IndexationPayload = Model<typeof o.indexationPayload>;
export type Ed25519Signature = Model<typeof o.ed25519Signature>;
export type Signature = Ed25519Signature;
export type SignatureUnlockBlock = Model<typeof o.signatureUnlockBlock>;
export type ReferenceUnlockBlock = Model<typeof o.referenceUnlockBlock>;
export type UnlockBlock = Model<typeof o.unlockBlock>;
export type MilestonePayload = Model<typeof o.milestonePayload>;
/** Receipt of migrated legacy funds, only ever inside a milestone (type 3). */
export type ReceiptPayload = Model<typeof o.receiptPayload>;
export type MigratedFundsEntry = Model<typeof o.migratedFundsEntry>;
/** Treasury transaction, only inside a receipt (type 4). */
export type TreasuryTransactionPayload = Model<typeof o.treasuryTransactionPayload>;
export type TreasuryInput = Model<typeof o.treasuryInput>;
export type TreasuryOutput = Model<typeof o.treasuryOutput>;

/** The node REST JSON of a message, as messageToJson writes it (u64 as decimal strings, bytes as lowercase hex). */
export type MessageJson = Json<typeof o.message>;
export type PayloadJson = Json<typeof o.messagePayload>;
export type TransactionPayloadJson = Json<typeof o.transactionPayload>;
export type TransactionEssenceJson = Json<typeof o.transactionEssence>;
export type UtxoInputJson = Json<typeof o.utxoInput>;
export type SigLockedSingleOutputJson = Json<typeof o.sigLockedSingleOutput>;
export type SigLockedDustAllowanceOutputJson = Json<typeof o.sigLockedDustAllowanceOutput>;
export type OutputJson = Json<typeof o.output>;
export type Ed25519AddressJson = Json<typeof o.ed25519Address>;
export type IndexationPayloadJson = Json<typeof o.indexationPayload>;
export type Ed25519SignatureJson = Json<typeof o.ed25519Signature>;
export type SignatureUnlockBlockJson = Json<typeof o.signatureUnlockBlock>;
export type ReferenceUnlockBlockJson = Json<typeof o.referenceUnlockBlock>;
export type UnlockBlockJson = Json<typeof o.unlockBlock>;
export type MilestonePayloadJson = Json<typeof o.milestonePayload>;
export type ReceiptPayloadJson = Json<typeof o.receiptPayload>;
export type MigratedFundsEntryJson = Json<typeof o.migratedFundsEntry>;
export type TreasuryTransactionPayloadJson = Json<typeof o.treasuryTransactionPayload>;

/** A message as submitted to a node: networkId, parents and nonce may be left for the node (or client) to fill. */
export type PartialMessage = { [K in keyof Message]?: Message[K] | undefined };
