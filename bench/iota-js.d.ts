// Types for the parts of the iota.js 1.8.6 oracle (devDependency) that tests and benchmarks call.
// Its packages ship typings but no "types" entry in their exports maps, so NodeNext resolution cannot see them.
declare module "@iota/util.js" {
  export class ReadStream {
    constructor(storage: Uint8Array, readStartIndex?: number);
  }
  export class WriteStream {
    constructor();
    finalBytes(): Uint8Array;
  }
}

declare module "@iota/crypto.js" {
  export class Blake2b {
    static sum256(data: Uint8Array, key?: Uint8Array): Uint8Array;
  }
  export class Ed25519 {
    static keyPairFromSeed(seed: Uint8Array): { publicKey: Uint8Array; privateKey: Uint8Array };
    static sign(privateKey: Uint8Array, message: Uint8Array): Uint8Array;
    static verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  }
}

declare module "@iota/iota.js" {
  import type { ReadStream, WriteStream } from "@iota/util.js";
  /** iota.js's IMessage: hex strings, u64 as decimal strings; loosely typed here on purpose (it is an oracle). */
  export type IMessage = Record<string, unknown>;
  export function serializeMessage(writeStream: WriteStream, message: IMessage): void;
  export function deserializeMessage(readStream: ReadStream): IMessage;
  export function serializeTransactionEssence(writeStream: WriteStream, essence: Record<string, unknown>): void;
}
