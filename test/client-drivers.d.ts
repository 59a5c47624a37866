// Types for the parts of the real clients the tests drive (iota.js 1.8.6, @iota/mqtt.js 1.8.6): their packages ship
// typings but no "types" entry in their exports maps, so NodeNext resolution cannot see them (see bench/iota-js.d.ts,
// which these declarations extend). Shapes are the node API's JSON as those clients hand it over.
declare module "@iota/util.js" {
  export class Converter {
    static utf8ToHex(text: string): string;
    static bytesToHex(bytes: Uint8Array): string;
    static bytesToUtf8(bytes: Uint8Array): string;
  }
}

declare module "@iota/crypto.js" {
  export class Bip32Path {
    constructor(path: string);
  }
}

declare module "@iota/iota.js" {
  import type { Bip32Path } from "@iota/crypto.js";

  export type PayloadJson = { type: number; index?: string; data?: string; essence?: { inputs: { type: number; transactionId: string; transactionOutputIndex: number }[] }; [key: string]: unknown };
  export type MessageJson = { networkId?: string; parentMessageIds?: string[]; payload?: PayloadJson | null; nonce?: string };
  export type MessageMetadataJson = {
    messageId: string;
    parentMessageIds: string[];
    isSolid: boolean;
    referencedByMilestoneIndex?: number;
    milestoneIndex?: number;
    ledgerInclusionState?: string;
    conflictReason?: number;
    shouldPromote?: boolean;
    shouldReattach?: boolean;
  };
  export type OutputResponseJson = {
    messageId: string;
    transactionId: string;
    outputIndex: number;
    isSpent: boolean;
    milestoneIndexSpent?: number;
    transactionIdSpent?: string;
    ledgerIndex: number;
    output: { type: number; address: { type: number; address: string }; amount: number };
  };
  export type NodeInfoJson = {
    name: string;
    version: string;
    isHealthy: boolean;
    networkId: string;
    bech32HRP: string;
    minPoWScore: number;
    messagesPerSecond: number;
    referencedMessagesPerSecond: number;
    referencedRate: number;
    latestMilestoneTimestamp: number;
    latestMilestoneIndex: number;
    confirmedMilestoneIndex: number;
    pruningIndex: number;
    features: string[];
  };
  export type AddressResponseJson = { addressType: number; address: string; balance: number; dustAllowed: boolean; ledgerIndex: number };
  export type AddressOutputsJson = { addressType: number; address: string; maxResults: number; count: number; outputIds: string[]; ledgerIndex: number };

  export interface IPowProvider {
    pow(message: Uint8Array, targetScore: number): Promise<string>;
  }
  export class LocalPowProvider implements IPowProvider {
    pow(message: Uint8Array, targetScore: number): Promise<string>;
  }
  export class SingleNodeClient {
    constructor(endpoint: string, options?: { powProvider?: IPowProvider; headers?: Record<string, string>; timeout?: number });
    health(): Promise<boolean>;
    info(): Promise<NodeInfoJson>;
    tips(): Promise<{ tipMessageIds: string[] }>;
    message(messageId: string): Promise<MessageJson>;
    messageMetadata(messageId: string): Promise<MessageMetadataJson>;
    messageRaw(messageId: string): Promise<Uint8Array>;
    messageSubmit(message: MessageJson): Promise<string>;
    messageSubmitRaw(message: Uint8Array): Promise<string>;
    messagesFind(index: Uint8Array | string): Promise<{ index: string; maxResults: number; count: number; messageIds: string[] }>;
    messageChildren(messageId: string): Promise<{ messageId: string; maxResults: number; count: number; childrenMessageIds: string[] }>;
    transactionIncludedMessage(transactionId: string): Promise<MessageJson>;
    output(outputId: string): Promise<OutputResponseJson>;
    address(addressBech32: string): Promise<AddressResponseJson>;
    addressOutputs(addressBech32: string, type?: number, includeSpent?: boolean): Promise<AddressOutputsJson>;
    addressEd25519(addressEd25519: string): Promise<AddressResponseJson>;
    addressEd25519Outputs(addressEd25519: string, type?: number, includeSpent?: boolean): Promise<AddressOutputsJson>;
    milestone(index: number): Promise<{ index: number; messageId: string; timestamp: number }>;
    milestoneUtxoChanges(index: number): Promise<{ index: number; createdOutputs: string[]; consumedOutputs: string[] }>;
    receipts(migratedAt?: number): Promise<{ receipts: { receipt: unknown; milestoneIndex: number }[] }>;
    treasury(): Promise<{ milestoneId: string; amount: number }>;
    peers(): Promise<IPeer[]>;
    peer(peerId: string): Promise<IPeer>;
    peerAdd(multiAddress: string, alias?: string): Promise<IPeer>;
    peerDelete(peerId: string): Promise<void>;
  }
  export interface IPeer {
    id: string;
    multiAddresses: string[];
    alias?: string;
    relation: "known" | "unknown" | "autopeered";
    connected: boolean;
    gossip?: {
      heartbeat?: { solidMilestoneIndex: number; prunedMilestoneIndex: number; latestMilestoneIndex: number; connectedNeighbors: number; syncedNeighbors: number } | null;
      metrics: Record<string, number>;
    };
  }
  export class ClientError extends Error {
    route: string;
    httpStatus: number;
    code: string;
  }
  export class Ed25519Seed {
    constructor(secretKeyBytes?: Uint8Array);
    generateSeedFromPath(path: Bip32Path): Ed25519Seed;
    keyPair(): { publicKey: Uint8Array; privateKey: Uint8Array };
  }
  export class Ed25519Address {
    constructor(publicKey: Uint8Array);
    toAddress(): Uint8Array;
  }
  export class Bech32Helper {
    static toBech32(addressType: number, addressBytes: Uint8Array, humanReadablePart: string): string;
  }
  export function generateBip44Address(state: { accountIndex: number; addressIndex: number; isInternal: boolean }): string;
  type Sent = Promise<{ messageId: string; message: MessageJson }>;
  export function send(client: SingleNodeClient, seed: Ed25519Seed, accountIndex: number, addressBech32: string, amount: number): Sent;
  export function sendData(client: SingleNodeClient, indexationKey: Uint8Array | string, indexationData?: Uint8Array | string): Sent;
  export function retrieveData(client: SingleNodeClient, messageId: string): Promise<{ index: Uint8Array; data?: Uint8Array } | undefined>;
  export function promote(client: SingleNodeClient, messageId: string): Sent;
  export function reattach(client: SingleNodeClient, messageId: string): Sent;
  export function retry(client: SingleNodeClient, messageId: string): Sent;
}

declare module "@iota/mqtt.js" {
  import type { MessageJson, MessageMetadataJson, OutputResponseJson } from "@iota/iota.js";
  type Milestone = { index: number; timestamp: number };
  type Callback<T> = (topic: string, data: T) => void;
  export class MqttClient {
    constructor(endpoints: string | string[], keepAliveTimeoutSeconds?: number);
    milestonesLatest(callback: Callback<Milestone>): string;
    milestonesConfirmed(callback: Callback<Milestone>): string;
    messageMetadata(messageId: string, callback: Callback<MessageMetadataJson>): string;
    messagesMetadata(callback: Callback<MessageMetadataJson>): string;
    output(outputId: string, callback: Callback<OutputResponseJson>): string;
    addressOutputs(addressBech32: string, callback: Callback<OutputResponseJson>): string;
    addressEd25519Outputs(addressEd25519: string, callback: Callback<OutputResponseJson>): string;
    messagesRaw(callback: Callback<Uint8Array>): string;
    messages(callback: (topic: string, data: MessageJson, raw: Uint8Array) => void): string;
    indexRaw(index: Uint8Array | string, callback: Callback<Uint8Array>): string;
    index(index: Uint8Array | string, callback: (topic: string, data: MessageJson, raw: Uint8Array) => void): string;
    transactionIncludedMessageRaw(transactionId: string, callback: Callback<Uint8Array>): string;
    transactionIncludedMessage(transactionId: string, callback: (topic: string, data: MessageJson, raw: Uint8Array) => void): string;
    subscribeJson<T>(topic: string, callback: Callback<T>): string;
    subscribeRaw(topic: string, callback: Callback<Uint8Array>): string;
    unsubscribe(subscriptionId: string): void;
  }
}
