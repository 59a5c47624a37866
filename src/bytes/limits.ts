// Every protocol constant of Chrysalis in one place (PROTOCOL.md §1–§3): type tags, sizes, counts, bounds.
// Layouts, rules, arbitraries and other layers import from here; nothing else spells these numbers.

/** Total IOTA supply; every amount and every sum of amounts is at most this (below 2^53, so a JS number holds it). */
export const TOTAL_SUPPLY = 2_779_530_283_277_761;
/** A SigLockedDustAllowanceOutput carries at least this much. */
export const DUST_ALLOWANCE_MINIMUM = 1_000_000;
/** A migrated funds entry of a receipt carries at least this much (the same floor as dust allowance). */
export const MIGRATED_FUNDS_MINIMUM = 1_000_000;
/** Dust rule (semantic, PROTOCOL.md §3): a SigLockedSingleOutput below this amount is a dust output. */
export const DUST_THRESHOLD = 1_000_000;
/** Dust rule: each this much of dust allowance lets an address hold one dust output … */
export const DUST_ALLOWANCE_DIVISOR = 100_000;
/** … up to this many. */
export const MAX_DUST_OUTPUTS_PER_ADDRESS = 100;

// Message.
export const MIN_MESSAGE_LENGTH = 53;
export const MAX_MESSAGE_LENGTH = 32_768;
export const MIN_PARENTS = 1;
export const MAX_PARENTS = 8;

// Sizes of fixed-width fields, in bytes.
export const MESSAGE_ID_LENGTH = 32;
export const TRANSACTION_ID_LENGTH = 32;
export const MILESTONE_ID_LENGTH = 32;
export const ED25519_ADDRESS_LENGTH = 32;
export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;
/** An Ed25519 private key as RFC 8032 defines it: the 32-byte seed the key pair derives from. */
export const ED25519_SEED_LENGTH = 32;
export const MERKLE_PROOF_LENGTH = 32;
/** A legacy tail transaction hash: 243 trytes packed t5b1. */
export const TAIL_TRANSACTION_HASH_LENGTH = 49;
export const NONCE_LENGTH = 8;
export const UTXO_INPUT_LENGTH = 1 + TRANSACTION_ID_LENGTH + 2;
export const ADDRESS_LENGTH = 1 + ED25519_ADDRESS_LENGTH;
export const OUTPUT_LENGTH = 1 + ADDRESS_LENGTH + 8;
export const SIGNATURE_LENGTH = 1 + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH;
export const SIGNATURE_UNLOCK_BLOCK_LENGTH = 1 + SIGNATURE_LENGTH;
export const REFERENCE_UNLOCK_BLOCK_LENGTH = 1 + 2;

// Payload type tags (u32).
export const TRANSACTION_PAYLOAD_TYPE = 0;
export const MILESTONE_PAYLOAD_TYPE = 1;
export const INDEXATION_PAYLOAD_TYPE = 2;
export const RECEIPT_PAYLOAD_TYPE = 3;
export const TREASURY_TRANSACTION_PAYLOAD_TYPE = 4;

// Other type tags (u8).
export const TRANSACTION_ESSENCE_TYPE = 0;
export const UTXO_INPUT_TYPE = 0;
export const TREASURY_INPUT_TYPE = 1;
export const SIG_LOCKED_SINGLE_OUTPUT_TYPE = 0;
export const SIG_LOCKED_DUST_ALLOWANCE_OUTPUT_TYPE = 1;
export const TREASURY_OUTPUT_TYPE = 2;
export const ED25519_ADDRESS_TYPE = 0;
export const ED25519_SIGNATURE_TYPE = 0;
/** PROTOCOL.md §2 Decision: 0 as on the live network. */
export const SIGNATURE_UNLOCK_BLOCK_TYPE = 0;
export const REFERENCE_UNLOCK_BLOCK_TYPE = 1;

// Transactions.
export const MIN_INPUTS = 1;
export const MAX_INPUTS = 127;
export const MIN_OUTPUTS = 1;
export const MAX_OUTPUTS = 127;
/** Highest output index an input may reference (an essence holds at most 127 outputs). */
export const MAX_OUTPUT_INDEX = 126;

// Indexation.
export const MIN_INDEX_LENGTH = 1;
export const MAX_INDEX_LENGTH = 64;

// Milestones and receipts.
export const MIN_MILESTONE_KEYS = 1;
export const MAX_MILESTONE_KEYS = 255;
export const MIN_MIGRATED_FUNDS = 1;
export const MAX_MIGRATED_FUNDS = 127;

// Integer limits of the wire types.
export const MAX_U8 = 0xff;
export const MAX_U16 = 0xffff;
export const MAX_U32 = 0xffff_ffff;
export const MAX_U64 = 0xffff_ffff_ffff_ffffn;

// Networks (PROTOCOL.md §4–§5, TIP-11): names, the minimum PoW score a node asks for, Bech32 human-readable parts.
export const MAINNET_NAME = "chrysalis-mainnet";
export const DEVNET_NAME = "chrysalis-devnet";
export const MAINNET_MIN_POW_SCORE = 4000;
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
