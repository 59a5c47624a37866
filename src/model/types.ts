// The typed model of a Chrysalis message (PROTOCOL.md §2): what decoders produce and encoders take.
// Byte fields are Uint8Array, u64 fields bigint, amounts and indices number (the total supply is below 2^53).

/** A message: the unit of the Tangle. */
export interface Message {
  networkId: bigint;
  /** 1 .. 8 parent message ids of 32 bytes, strictly ascending. */
  parents: Uint8Array[];
  payload?: Payload | undefined;
  nonce: bigint;
}

export type Payload = TransactionPayload | MilestonePayload | IndexationPayload;

export interface TransactionPayload {
  type: 0;
  essence: TransactionEssence;
  unlockBlocks: UnlockBlock[];
}

export interface TransactionEssence {
  type: 0;
  inputs: UtxoInput[];
  outputs: Output[];
  payload?: IndexationPayload | undefined;
}

export interface UtxoInput {
  type: 0;
  /** 32-byte id of the transaction that created the output. */
  transactionId: Uint8Array;
  transactionOutputIndex: number;
}

export type Input = UtxoInput;

export interface SigLockedSingleOutput {
  type: 0;
  address: Ed25519Address;
  amount: number;
}

export interface SigLockedDustAllowanceOutput {
  type: 1;
  address: Ed25519Address;
  amount: number;
}

export type Output = SigLockedSingleOutput | SigLockedDustAllowanceOutput;

export interface Ed25519Address {
  type: 0;
  /** BLAKE2b-256 of the Ed25519 public key, 32 bytes. */
  address: Uint8Array;
}

export type Address = Ed25519Address;

export interface IndexationPayload {
  type: 2;
  /** 1 .. 64 bytes. */
  index: Uint8Array;
  /** May be empty. */
  data: Uint8Array;
}

export interface Ed25519Signature {
  type: 0;
  /** 32 bytes. */
  publicKey: Uint8Array;
  /** 64 bytes. */
  signature: Uint8Array;
}

export type Signature = Ed25519Signature;

export interface SignatureUnlockBlock {
  type: 0;
  signature: Ed25519Signature;
}

export interface ReferenceUnlockBlock {
  type: 1;
  /** Position of an earlier signature unlock block. */
  reference: number;
}

export type UnlockBlock = SignatureUnlockBlock | ReferenceUnlockBlock;

export interface MilestonePayload {
  type: 1;
  index: number;
  /** Seconds since the Unix epoch (u64). */
  timestamp: bigint;
  parents: Uint8Array[];
  /** 32 bytes. */
  inclusionMerkleProof: Uint8Array;
  nextPoWScore: number;
  nextPoWScoreMilestoneIndex: number;
  /** 32-byte Ed25519 public keys, strictly ascending. */
  publicKeys: Uint8Array[];
  receipt?: ReceiptPayload | undefined;
  /** 64-byte Ed25519 signatures, one per public key in the same order. */
  signatures: Uint8Array[];
}

/** Receipt of migrated legacy funds, only ever inside a milestone (type 3). */
export interface ReceiptPayload {
  type: 3;
  migratedAt: number;
  final: boolean;
  funds: MigratedFundsEntry[];
  transaction: TreasuryTransactionPayload;
}

export interface MigratedFundsEntry {
  /** 49-byte legacy tail transaction hash (243 trytes packed t5b1). */
  tailTransactionHash: Uint8Array;
  address: Ed25519Address;
  deposit: number;
}

/** Treasury transaction, only inside a receipt (type 4). */
export interface TreasuryTransactionPayload {
  type: 4;
  input: TreasuryInput;
  output: TreasuryOutput;
}

export interface TreasuryInput {
  type: 1;
  /** 32-byte milestone id. */
  milestoneId: Uint8Array;
}

export interface TreasuryOutput {
  type: 2;
  amount: number;
}
