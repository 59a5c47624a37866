// A GossipNode held in memory for testing the gossip part alone: the layer's contract (GossipNode) implemented in the
// fewest lines. Messages are opaque bytes here; by this file's convention bytes starting with 0xff are "invalid".
import { toHex } from "../src/bytes/hex.js";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { networkId } from "../src/model/ids.js";
import type { Gossip, GossipNode } from "../src/node/gossip/index.js";

export const INVALID_MARK = 0xff;

export interface Received {
  id: string;
  from: string;
  requested: boolean;
  verdict: "new" | "known" | "invalid" | "ignored";
}

export class MemoryGossipNode implements GossipNode {
  readonly networkId: bigint;
  solid = 0;
  pruned = 0;
  latest = 0;
  readonly messages = new Map<string, Uint8Array>();
  readonly milestones = new Map<number, Uint8Array>();
  readonly received: Received[] = [];
  /** Relays each new message to the other peers, as the node does once a message is solid. */
  gossip: Gossip | undefined;
  relay = true;
  /** Takes only messages it asked for, as a node not synced does (its verdict for the others: "ignored"). */
  ignoreUnrequested = false;

  constructor(network: string) {
    this.networkId = networkId(network);
  }

  status(): { solid: number; pruned: number; latest: number } {
    return { solid: this.solid, pruned: this.pruned, latest: this.latest };
  }

  async messageBytes(id: Uint8Array): Promise<Uint8Array | undefined> {
    return this.messages.get(toHex(id));
  }

  async milestoneBytes(index: number): Promise<Uint8Array | undefined> {
    return this.milestones.get(index === 0 ? this.latest : index);
  }

  knows(id: Uint8Array): boolean {
    return this.messages.has(toHex(id));
  }

  async receive(bytes: Uint8Array, id: Uint8Array, from: string, requested: boolean): Promise<"new" | "known" | "invalid" | "ignored"> {
    const key = toHex(id);
    const verdict = bytes[0] === INVALID_MARK ? "invalid" : this.messages.has(key) ? "known" : this.ignoreUnrequested && !requested ? "ignored" : "new";
    this.received.push({ id: key, from, requested, verdict });
    if (verdict !== "new") return verdict;
    this.messages.set(key, bytes);
    if (this.relay) this.gossip?.broadcast(bytes, id, [from]);
    return verdict;
  }

  /** Stores a message as the node's own; returns its id's hex. */
  add(bytes: Uint8Array): string {
    const key = toHex(blake2b256(bytes));
    this.messages.set(key, bytes);
    return key;
  }

  /** Stores a milestone message of this index (and makes it the latest when it is higher). */
  addMilestone(index: number, bytes: Uint8Array): string {
    this.milestones.set(index, bytes);
    this.latest = Math.max(this.latest, index);
    return this.add(bytes);
  }
}
