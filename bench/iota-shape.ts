// Our model in the shape @iota/iota.js 1.8 works on (hex strings, its field names), for the differential test and the bench.
// The comparison is only fair this way: iota.js serializes its own objects, we serialize ours.
import type { Message, Output, Payload, UnlockBlock } from "../src/model/types.js";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/**
 * Loosely typed: iota.js's declaration files re-export without file extensions, which NodeNext resolution does not
 * follow, so most of its model types are not visible from here. Its serializers take these plain objects.
 */
export interface IotaObject {
  [key: string]: unknown;
}

function output(o: Output): IotaObject {
  return { type: o.type, address: { type: o.address.type, address: hex(o.address.address) }, amount: o.amount };
}

function unlockBlock(b: UnlockBlock): IotaObject {
  if (b.type === 1) return { type: 1, reference: b.reference };
  return { type: 0, signature: { type: 0, publicKey: hex(b.signature.publicKey), signature: hex(b.signature.signature) } };
}

export function toIotaPayload(p: Payload): IotaObject {
  switch (p.type) {
    case 2:
      return { type: 2, index: hex(p.index), data: hex(p.data) };
    case 0:
      return {
        type: 0,
        essence: {
          type: 0,
          inputs: p.essence.inputs.map((i) => ({ type: 0, transactionId: hex(i.transactionId), transactionOutputIndex: i.transactionOutputIndex })),
          outputs: p.essence.outputs.map(output),
          payload: p.essence.payload === undefined ? undefined : toIotaPayload(p.essence.payload),
        },
        unlockBlocks: p.unlockBlocks.map(unlockBlock),
      };
    case 1:
      return {
        type: 1,
        index: p.index,
        // iota.js hands this to big-integer, which takes a decimal string as well (a u64 may exceed 2^53).
        timestamp: p.timestamp.toString(),
        parentMessageIds: p.parents.map(hex),
        inclusionMerkleProof: hex(p.inclusionMerkleProof),
        nextPoWScore: p.nextPoWScore,
        nextPoWScoreMilestoneIndex: p.nextPoWScoreMilestoneIndex,
        publicKeys: p.publicKeys.map(hex),
        receipt:
          p.receipt === undefined
            ? undefined
            : {
                type: 3,
                migratedAt: p.receipt.migratedAt,
                final: p.receipt.final,
                funds: p.receipt.funds.map((f) => ({
                  tailTransactionHash: hex(f.tailTransactionHash),
                  address: { type: 0, address: hex(f.address.address) },
                  deposit: f.deposit,
                })),
                transaction: {
                  type: 4,
                  input: { type: 1, milestoneId: hex(p.receipt.transaction.input.milestoneId) },
                  output: { type: 2, amount: p.receipt.transaction.output.amount },
                },
              },
        signatures: p.signatures.map(hex),
      };
  }
}

export function toIotaMessage(m: Message): IotaObject {
  return {
    networkId: m.networkId.toString(),
    parentMessageIds: m.parents.map(hex),
    payload: m.payload === undefined ? undefined : toIotaPayload(m.payload),
    nonce: m.nonce.toString(),
  };
}
