// fast-check arbitraries for every model object; each yields only objects every syntactic rule accepts.
// Counts are kept modest by default so any combination fits the 32768-byte message limit; the options raise them.
import fc from "fast-check";
import {
  DUST_ALLOWANCE_MINIMUM,
  ED25519_ADDRESS_LENGTH,
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  MAX_INDEX_LENGTH,
  MAX_OUTPUT_INDEX,
  MAX_PARENTS,
  MAX_U32,
  MERKLE_PROOF_LENGTH,
  MESSAGE_ID_LENGTH,
  MIGRATED_FUNDS_MINIMUM,
  MILESTONE_ID_LENGTH,
  MIN_INDEX_LENGTH,
  TAIL_TRANSACTION_HASH_LENGTH,
  TOTAL_SUPPLY,
  TRANSACTION_ID_LENGTH,
  MAX_U64,
} from "../src/bytes/limits.js";
import type {
  Ed25519Address,
  Ed25519Signature,
  IndexationPayload,
  Message,
  MigratedFundsEntry,
  MilestonePayload,
  Output,
  Payload,
  ReceiptPayload,
  ReferenceUnlockBlock,
  SigLockedDustAllowanceOutput,
  SigLockedSingleOutput,
  SignatureUnlockBlock,
  TransactionEssence,
  TransactionPayload,
  TreasuryTransactionPayload,
  UnlockBlock,
  UtxoInput,
} from "../src/model/types.js";

/** Unsigned byte-wise order, the protocol's "sorted". */
function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const key = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

function u16le(value: number): number[] {
  return [value & 0xff, value >>> 8];
}

function u64le(value: number): number[] {
  const out: number[] = [];
  let v = BigInt(value);
  for (let i = 0; i < 8; i++) {
    out.push(Number(v & 0xffn));
    v >>= 8n;
  }
  return out;
}

// Sort keys: the serialized form of the element (type tag included), written out here on purpose so the
// arbitraries do not lean on the codec they are meant to test.
const inputKey = (i: UtxoInput): Uint8Array => Uint8Array.from([i.type, ...i.transactionId, ...u16le(i.transactionOutputIndex)]);
const outputKey = (o: Output): Uint8Array => Uint8Array.from([o.type, o.address.type, ...o.address.address, ...u64le(o.amount)]);
const fundsKey = (f: MigratedFundsEntry): Uint8Array =>
  Uint8Array.from([...f.tailTransactionHash, f.address.type, ...f.address.address, ...u64le(f.deposit)]);

export const arbBytes = (length: number): fc.Arbitrary<Uint8Array> => fc.uint8Array({ minLength: length, maxLength: length });
export const arbU32 = (): fc.Arbitrary<number> => fc.integer({ min: 0, max: MAX_U32 });
export const arbU64 = (): fc.Arbitrary<bigint> => fc.bigInt({ min: 0n, max: MAX_U64 });

/** Distinct 32-byte ids in ascending order (parents, milestone keys). */
export function arbSortedIds(min: number, max: number, length = MESSAGE_ID_LENGTH): fc.Arbitrary<Uint8Array[]> {
  return fc.uniqueArray(arbBytes(length), { minLength: min, maxLength: max, selector: key }).map((ids) => ids.sort(compare));
}

export const arbParents = (max = MAX_PARENTS): fc.Arbitrary<Uint8Array[]> => arbSortedIds(1, max);

export const arbEd25519Address = (): fc.Arbitrary<Ed25519Address> =>
  arbBytes(ED25519_ADDRESS_LENGTH).map((address) => ({ type: 0 as const, address }));

export const arbUtxoInput = (): fc.Arbitrary<UtxoInput> =>
  fc.record({
    type: fc.constant(0 as const),
    transactionId: arbBytes(TRANSACTION_ID_LENGTH),
    transactionOutputIndex: fc.integer({ min: 0, max: MAX_OUTPUT_INDEX }),
  });

/** An amount for one of `count` outputs such that any `count` of them sum to at most the total supply. */
function arbAmount(min: number, count: number): fc.Arbitrary<number> {
  const max = Math.floor(TOTAL_SUPPLY / count);
  return fc.oneof(fc.integer({ min, max: Math.min(max, min + 10_000_000) }), fc.integer({ min, max }), fc.constant(max));
}

export const arbSigLockedSingleOutput = (count = 1): fc.Arbitrary<SigLockedSingleOutput> =>
  fc.record({ type: fc.constant(0 as const), address: arbEd25519Address(), amount: arbAmount(1, count) });

export const arbSigLockedDustAllowanceOutput = (count = 1): fc.Arbitrary<SigLockedDustAllowanceOutput> =>
  fc.record({ type: fc.constant(1 as const), address: arbEd25519Address(), amount: arbAmount(DUST_ALLOWANCE_MINIMUM, count) });

export const arbOutput = (count = 1): fc.Arbitrary<Output> => fc.oneof(arbSigLockedSingleOutput(count), arbSigLockedDustAllowanceOutput(count));

export interface EssenceOptions {
  maxInputs?: number;
  maxOutputs?: number;
  maxDataLength?: number;
}

export const arbIndexationPayload = (maxDataLength = 256): fc.Arbitrary<IndexationPayload> =>
  fc.record({
    type: fc.constant(2 as const),
    index: fc.uint8Array({ minLength: MIN_INDEX_LENGTH, maxLength: MAX_INDEX_LENGTH }),
    data: fc.uint8Array({ minLength: 0, maxLength: maxDataLength }),
  });

/** fast-check keeps arrays short by default; a large requested maximum is drawn over its whole range. */
const sized = (max: number): { size?: "max" } => (max > 16 ? { size: "max" } : {});

/** 1 .. maxInputs unique inputs, sorted by their serialized form. */
export const arbInputs = (maxInputs = 8): fc.Arbitrary<UtxoInput[]> =>
  fc
    .uniqueArray(arbUtxoInput(), { minLength: 1, maxLength: maxInputs, selector: (i) => key(inputKey(i)), ...sized(maxInputs) })
    .map((inputs) => inputs.sort((a, b) => compare(inputKey(a), inputKey(b))));

/** 1 .. maxOutputs outputs, each address at most once per output type, sorted by serialized form. */
export const arbOutputs = (maxOutputs = 8): fc.Arbitrary<Output[]> =>
  fc
    .uniqueArray(arbOutput(maxOutputs), { minLength: 1, maxLength: maxOutputs, selector: (o) => `${o.type}:${key(o.address.address)}`, ...sized(maxOutputs) })
    .map((outputs) => outputs.sort((a, b) => compare(outputKey(a), outputKey(b))));

export const arbEssence = (options: EssenceOptions = {}): fc.Arbitrary<TransactionEssence> =>
  fc
    .record({
      inputs: arbInputs(options.maxInputs),
      outputs: arbOutputs(options.maxOutputs),
      payload: fc.option(arbIndexationPayload(options.maxDataLength), { nil: undefined }),
    })
    .map(({ inputs, outputs, payload }) => {
      const essence: TransactionEssence = { type: 0, inputs, outputs };
      if (payload !== undefined) essence.payload = payload;
      return essence;
    });
export const arbTransactionEssence = arbEssence;

export const arbEd25519Signature = (): fc.Arbitrary<Ed25519Signature> =>
  fc.record({ type: fc.constant(0 as const), publicKey: arbBytes(ED25519_PUBLIC_KEY_LENGTH), signature: arbBytes(ED25519_SIGNATURE_LENGTH) });

export const arbSignatureUnlockBlock = (): fc.Arbitrary<SignatureUnlockBlock> =>
  arbEd25519Signature().map((signature) => ({ type: 0 as const, signature }));

/**
 * `count` unlock blocks: the first is a signature block, each later one either a fresh (unique) signature block or a
 * reference to an earlier signature block.
 */
export function arbUnlockBlocks(count: number): fc.Arbitrary<UnlockBlock[]> {
  return fc
    .tuple(
      // Unbiased: exactly `count` distinct blocks are needed, and biased bytes (zeros, 0xff…) repeat so often that with
      // 127 of them fast-check once spent minutes looking for distinct ones.
      fc.uniqueArray(fc.noBias(arbSignatureUnlockBlock()), { minLength: count, maxLength: count, selector: (b) => key(b.signature.publicKey) + key(b.signature.signature) }),
      fc.array(fc.tuple(fc.boolean(), fc.nat()), { minLength: count, maxLength: count }),
    )
    .map(([signatures, choices]) => {
      const blocks: UnlockBlock[] = [];
      const signaturePositions: number[] = [];
      for (let i = 0; i < count; i++) {
        const [asReference, pick] = choices[i]!;
        if (asReference && signaturePositions.length > 0) {
          const reference: ReferenceUnlockBlock = { type: 1, reference: signaturePositions[pick % signaturePositions.length]! };
          blocks.push(reference);
        } else {
          signaturePositions.push(i);
          blocks.push(signatures[i]!);
        }
      }
      return blocks;
    });
}

export const arbTransactionPayload = (options: EssenceOptions = {}): fc.Arbitrary<TransactionPayload> =>
  arbEssence(options).chain((essence) =>
    arbUnlockBlocks(essence.inputs.length).map((unlockBlocks) => ({ type: 0 as const, essence, unlockBlocks })),
  );

export const arbMigratedFundsEntry = (count = 1): fc.Arbitrary<MigratedFundsEntry> =>
  fc.record({
    tailTransactionHash: arbBytes(TAIL_TRANSACTION_HASH_LENGTH),
    address: arbEd25519Address(),
    deposit: arbAmount(MIGRATED_FUNDS_MINIMUM, count),
  });

export const arbTreasuryTransactionPayload = (): fc.Arbitrary<TreasuryTransactionPayload> =>
  fc.record({
    type: fc.constant(4 as const),
    input: fc.record({ type: fc.constant(1 as const), milestoneId: arbBytes(MILESTONE_ID_LENGTH) }),
    output: fc.record({ type: fc.constant(2 as const), amount: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: TOTAL_SUPPLY })) }),
  });

export const arbReceiptPayload = (maxFunds = 8): fc.Arbitrary<ReceiptPayload> =>
  fc.record({
    type: fc.constant(3 as const),
    migratedAt: arbU32(),
    final: fc.boolean(),
    funds: fc
      .uniqueArray(arbMigratedFundsEntry(maxFunds), { minLength: 1, maxLength: maxFunds, selector: (f) => key(f.tailTransactionHash) })
      .map((funds) => funds.sort((a, b) => compare(fundsKey(a), fundsKey(b)))),
    transaction: arbTreasuryTransactionPayload(),
  });

export interface MilestoneOptions {
  maxKeys?: number;
  receipt?: boolean;
}

export const arbMilestonePayload = (options: MilestoneOptions = {}): fc.Arbitrary<MilestonePayload> =>
  fc
    .record({
      index: arbU32(),
      timestamp: arbU64(),
      parents: arbParents(),
      inclusionMerkleProof: arbBytes(MERKLE_PROOF_LENGTH),
      nextPoWScore: arbU32(),
      nextPoWScoreMilestoneIndex: arbU32(),
      publicKeys: arbSortedIds(1, options.maxKeys ?? 5, ED25519_PUBLIC_KEY_LENGTH),
      receipt: options.receipt === false ? fc.constant(undefined) : fc.option(arbReceiptPayload(), { nil: undefined }),
    })
    .chain((m) =>
      fc.array(arbBytes(ED25519_SIGNATURE_LENGTH), { minLength: m.publicKeys.length, maxLength: m.publicKeys.length }).map((signatures) => {
        const milestone: MilestonePayload = {
          type: 1,
          index: m.index,
          timestamp: m.timestamp,
          parents: m.parents,
          inclusionMerkleProof: m.inclusionMerkleProof,
          nextPoWScore: m.nextPoWScore,
          nextPoWScoreMilestoneIndex: m.nextPoWScoreMilestoneIndex,
          publicKeys: m.publicKeys,
          signatures,
        };
        if (m.receipt !== undefined) milestone.receipt = m.receipt;
        return milestone;
      }),
    );

export const arbPayload = (): fc.Arbitrary<Payload> =>
  fc.oneof(arbTransactionPayload(), arbMilestonePayload(), arbIndexationPayload());

export interface MessageOptions {
  /** Which top-level payloads to draw; "none" yields messages without one. */
  payloads?: ReadonlyArray<"none" | "transaction" | "milestone" | "indexation">;
}

export function arbMessage(options: MessageOptions = {}): fc.Arbitrary<Message> {
  const kinds = options.payloads ?? ["none", "transaction", "milestone", "indexation"];
  const choices: fc.Arbitrary<Payload | undefined>[] = kinds.map((kind) => {
    switch (kind) {
      case "none":
        return fc.constant(undefined);
      case "transaction":
        return arbTransactionPayload();
      case "milestone":
        return arbMilestonePayload();
      case "indexation":
        return arbIndexationPayload(1024);
    }
  });
  return fc.record({ networkId: arbU64(), parents: arbParents(), payload: fc.oneof(...choices), nonce: arbU64() }).map(({ networkId, parents, payload, nonce }) => {
    const message: Message = { networkId, parents, nonce };
    if (payload !== undefined) message.payload = payload;
    return message;
  });
}
