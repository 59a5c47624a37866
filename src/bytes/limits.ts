// Every protocol constant of Chrysalis in one place (PROTOCOL.md §1–§3): type tags, sizes, counts, bounds.
// Layouts, rules, arbitraries and other layers import from here; nothing else spells these numbers.

/** Total IOTA supply; every amount and every sum of amounts is at most this (below 2^53, so a JS number holds it). */
export const TOTAL_SUPPLY = 2_779_530_283_277_761;
/** A SigLockedDustAllowanceOutput carries at least this much. */
export const DUST_ALLOWANCE_MINIMUM = 1_000_000;
/** A migrated funds entry of a receipt carries at least this much (the same floor as dust allowance). */
export const MIGRATED_FUNDS_MINIMUM = 1_000_000;
/** Dust rule (semantic, `PROTOCOL.md` §3): a SigLockedSingleOutput below this amount is a dust output. */
export const DUST_THRESHOLD = 1_000_000;
/** Dust rule: each this much of dust allowance lets an address hold one dust output … */
export const DUST_ALLOWANCE_DIVISOR = 100_000;
/** … up to this many. */
export const MAX_DUST_OUTPUTS_PER_ADDRESS = 100;

// Message.
/** The shortest encoded message, in bytes (no payload, one parent). */
export const MIN_MESSAGE_LENGTH = 53;
/** The longest encoded message, in bytes (32 KiB). */
export const MAX_MESSAGE_LENGTH = 32_768;
/** Parents a message or milestone names, at least … */
export const MIN_PARENTS = 1;
/** … and at most. */
export const MAX_PARENTS = 8;

// Sizes of fixed-width fields, in bytes.
/** A message id: BLAKE2b-256 of the message's bytes. */
export const MESSAGE_ID_LENGTH = 32;
/** A transaction id: BLAKE2b-256 of the transaction payload's bytes. */
export const TRANSACTION_ID_LENGTH = 32;
/** A milestone id: BLAKE2b-256 of the milestone essence. */
export const MILESTONE_ID_LENGTH = 32;
/** An Ed25519 address: BLAKE2b-256 of the public key. */
export const ED25519_ADDRESS_LENGTH = 32;
/** An Ed25519 public key. */
export const ED25519_PUBLIC_KEY_LENGTH = 32;
/** An Ed25519 signature (R ‖ S). */
export const ED25519_SIGNATURE_LENGTH = 64;
/** An Ed25519 private key as RFC 8032 defines it: the 32-byte seed the key pair derives from. */
export const ED25519_SEED_LENGTH = 32;
/** A milestone's inclusion Merkle root (TIP-4). */
export const MERKLE_PROOF_LENGTH = 32;
/** A legacy tail transaction hash: 243 trytes packed t5b1. */
export const TAIL_TRANSACTION_HASH_LENGTH = 49;
/** The message nonce, a u64: the last 8 bytes of a message. */
export const NONCE_LENGTH = 8;
/** An encoded UTXO input: type, transaction id, output index. */
export const UTXO_INPUT_LENGTH = 1 + TRANSACTION_ID_LENGTH + 2;
/** An encoded address: type and the Ed25519 address. */
export const ADDRESS_LENGTH = 1 + ED25519_ADDRESS_LENGTH;
/** An encoded output: type, address, amount. */
export const OUTPUT_LENGTH = 1 + ADDRESS_LENGTH + 8;
/** An encoded Ed25519 signature: type, public key, signature. */
export const SIGNATURE_LENGTH = 1 + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH;
/** An encoded signature unlock block: type and signature. */
export const SIGNATURE_UNLOCK_BLOCK_LENGTH = 1 + SIGNATURE_LENGTH;
/** An encoded reference unlock block: type and the u16 index of the unlock block it refers to. */
export const REFERENCE_UNLOCK_BLOCK_LENGTH = 1 + 2;

// Payload type tags (u32).
/** Payload type of a transaction. */
export const TRANSACTION_PAYLOAD_TYPE = 0;
/** Payload type of a milestone. */
export const MILESTONE_PAYLOAD_TYPE = 1;
/** Payload type of an indexation. */
export const INDEXATION_PAYLOAD_TYPE = 2;
/** Payload type of a receipt (only inside a milestone). */
export const RECEIPT_PAYLOAD_TYPE = 3;
/** Payload type of a treasury transaction (only inside a receipt). */
export const TREASURY_TRANSACTION_PAYLOAD_TYPE = 4;

// Other type tags (u8).
/** Type of a transaction essence. */
export const TRANSACTION_ESSENCE_TYPE = 0;
/** Input type of a UTXO input. */
export const UTXO_INPUT_TYPE = 0;
/** Input type of a treasury input. */
export const TREASURY_INPUT_TYPE = 1;
/** Output type of a SigLockedSingleOutput. */
export const SIG_LOCKED_SINGLE_OUTPUT_TYPE = 0;
/** Output type of a SigLockedDustAllowanceOutput. */
export const SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE = 1;
/** Output type of a treasury output. */
export const TREASURY_OUTPUT_TYPE = 2;
/** Address type of an Ed25519 address. */
export const ED25519_ADDRESS_TYPE = 0;
/** Signature type of an Ed25519 signature. */
export const ED25519_SIGNATURE_TYPE = 0;
/** `PROTOCOL.md` §2 Decision: 0 as on the live network. */
export const SIGNATURE_UNLOCK_BLOCK_TYPE = 0;
/** Unlock block type of a reference unlock block. */
export const REFERENCE_UNLOCK_BLOCK_TYPE = 1;

// Transactions.
/** Inputs of a transaction essence, at least … */
export const MIN_INPUTS = 1;
/** … and at most. */
export const MAX_INPUTS = 127;
/** Outputs of a transaction essence, at least … */
export const MIN_OUTPUTS = 1;
/** … and at most. */
export const MAX_OUTPUTS = 127;
/** Highest output index an input may reference (an essence holds at most 127 outputs). */
export const MAX_OUTPUT_INDEX = 126;

// Indexation.
/** Bytes of an indexation payload's index, at least … */
export const MIN_INDEX_LENGTH = 1;
/** … and at most. */
export const MAX_INDEX_LENGTH = 64;

// Milestones and receipts.
/** Public keys (and so signatures) of a milestone, at least … */
export const MIN_MILESTONE_KEYS = 1;
/** … and at most. */
export const MAX_MILESTONE_KEYS = 255;
/** Migrated funds entries of a receipt, at least … */
export const MIN_MIGRATED_FUNDS = 1;
/** … and at most. */
export const MAX_MIGRATED_FUNDS = 127;

// Integer limits of the wire types.
/** The largest u8. */
export const MAX_U8 = 0xff;
/** The largest u16. */
export const MAX_U16 = 0xffff;
/** The largest u32. */
export const MAX_U32 = 0xffff_ffff;
/** The largest u64, as a bigint. */
export const MAX_U64 = 0xffff_ffff_ffff_ffffn;

// Networks (PROTOCOL.md §4–§5, TIP-11): names, the minimum PoW score a node asks for, Bech32 human-readable parts.
/** The main network's name; its network id is derived from it. */
export const MAINNET_NAME = "chrysalis-mainnet";
/** The development network's name, the default of `chrysalis serve`. */
export const DEVNET_NAME = "chrysalis-devnet";
/** The minimum PoW score of mainnet. */
export const MAINNET_MIN_POW_SCORE = 4000;
/** The minimum PoW score of the development network. */
export const DEVNET_MIN_POW_SCORE = 2000;
/** Bech32 human-readable part of mainnet addresses … */
export const MAINNET_HRP = "iota";
/** … and of every test network's. */
export const TESTNET_HRP = "atoi";

// Node policy from Hornet's defaults (NODE-API.md §1.7): how far behind the confirmed milestone a message's past cone may
// fall before new messages may not attach to it, and when a client should promote or reattach an unconfirmed message.
/** A parent whose oldest cone root is more than this many milestones behind the confirmed one is below max depth. */
export const BELOW_MAX_DEPTH = 15;
/** shouldPromote when the confirmed milestone is more than this past the message's youngest cone root … */
export const MAX_DELTA_YOUNGEST_CONE_ROOT = 8;
/** … or more than this past its oldest cone root. */
export const MAX_DELTA_OLDEST_CONE_ROOT = 13;
