// The node among nodes (one job): what gossip (gossip/) brings in and what it should send out, in the node's terms.
// Messages from peers are checked (network, PoW, milestone signatures) and handed to the message processor; those
// whose parents are missing wait, bounded, while the parents are asked of peers; milestones signed by the trusted
// keys are confirmed in index order through the confirmation part; a node behind its peers asks for the milestones
// ahead in ranges (warp sync); stored messages are relayed to every other peer. It answers peers' requests too.
import { ArrivalOrder } from "../bytes/bounded-map.js";
import { equalBytes } from "../bytes/bytes.js";
import { toHex, fromHex } from "../bytes/hex.js";
import { BELOW_MAX_DEPTH, MESSAGE_ID_LENGTH } from "../bytes/limits.js";
import { decodeMessage } from "../model/codec.js";
import { verifyMilestoneSignatures } from "../model/milestone.js";
import type { Message, MilestonePayload } from "../model/types.js";
import type { MilestoneMessage } from "./confirmation.js";
import { NodeError } from "./errors.js";
import type { GossipNode } from "./gossip/types.js";
import type { ChrysalisNode } from "./pipeline.js";
import type { StoredSource } from "./processor.js";
import type { MessageMetadata, StoredMessage } from "./store/contract.js";

/** What the network part uses of the gossip transport (gossip/service.ts's Gossip has it all). */
export interface GossipTransport {
  /** {@inheritDoc Gossip.broadcast} */
  broadcast(bytes: Uint8Array, id: Uint8Array, exceptPeerIds?: Iterable<string>): number;
  /** {@inheritDoc Gossip.request} */
  request(id: Uint8Array, milestoneIndex: number, options?: { readonly preventDiscard?: boolean }): boolean;
  /** {@inheritDoc Gossip.requestMilestone} */
  requestMilestone(index: number): boolean;
  /** {@inheritDoc Gossip.received} */
  received(id: Uint8Array): void;
  /** {@inheritDoc Gossip.milestoneReceived} */
  milestoneReceived(index: number): void;
  /** {@inheritDoc Gossip.statusChanged} */
  statusChanged(): void;
  /** {@inheritDoc Gossip.onHeartbeat} */
  onHeartbeat(listener: (heartbeat: { readonly peerId: string; readonly solidMilestoneIndex: number; readonly latestMilestoneIndex: number }) => void): () => void;
}

/** The milestone keys the node trusts and the bounds of what it holds for the network; only the keys are required. */
export interface NetworkOptions {
  /** The public keys a milestone may be signed by (TIP-8's applicable keys): a coordinator's own, or
   * `--coordinator-public-key`. */
  readonly milestoneKeys: readonly Uint8Array[];
  /** How many of them must sign each milestone. Default: all of them. */
  readonly milestoneKeyCount?: number | undefined;
  /** Most messages waiting for their parents; past it the oldest are dropped (asked for again when needed). Default
   * 20,000. */
  readonly maxWaiting?: number | undefined;
  /** Most bytes they may hold together. Default 64 MiB. */
  readonly maxWaitingBytes?: number | undefined;
  /** Milestones asked for ahead of the confirmed one. Default {@link DEFAULT_WARP_RANGE}. */
  readonly warpRange?: number | undefined;
  /** How often warp sync looks again at what is still missing, ms. Default 5000. */
  readonly warpIntervalMs?: number | undefined;
  /** A confirmation that failed (a Merkle root that differs: this node's Tangle or ledger is not the coordinator's). */
  readonly onError?: ((error: unknown) => void) | undefined;
  /** The node learns its milestones from its (static) peers: while none of them has sent a heartbeat it cannot know
   * how far the network is, so it is not caught up (Hornet: a node without a gossip stream is not healthy). */
  readonly followsPeers?: boolean | undefined;
}

interface Waiting {
  /** Its id, lowercase hex (the key it waits under). */
  readonly id: string;
  readonly message: Message;
  readonly bytes: Uint8Array;
  readonly from: string;
  readonly requested: boolean;
  /** The milestone it is needed for (its own, for a milestone): what its parents are asked with. */
  readonly index: number;
  readonly missing: Set<string>;
}

/** How far warp sync asks ahead of the confirmed milestone by default: Hornet's `warpsync.advancementRange`, 150. */
export const DEFAULT_WARP_RANGE = 150;

/** Unreferenced messages looked through at start for milestones stored and not confirmed (as many as the Tangle
 * rebuilds itself from). */
const RESUME_MESSAGES = 10_000;

/** A peer whose last heartbeat is older than this no longer counts (Hornet drops it after 100 s). */
const PEER_SILENCE_MS = 100_000;

/**
 * How long a peer's heartbeat may claim a latest milestone this node has not verified and still hold its health down.
 * The claim is what tells a node that has just (re)joined that it is behind, until the milestone itself arrives (its
 * request at the stream's start answers within a round trip); a claim still unproven after this is a peer's word
 * alone, and no peer can keep a node unhealthy by announcing milestones that do not exist.
 */
const UNPROVEN_CLAIM_MS = 10_000;

/**
 * The node's side of gossip (gossip/types.ts GossipNode), attached to a transport once it exists. One per node:
 * create it, create the gossip with it as its node, then attach().
 */
export class NetworkNode implements GossipNode {
  readonly networkId: bigint;
  readonly #node: ChrysalisNode;
  readonly #keys: Uint8Array[];
  readonly #threshold: number;
  readonly #maxWaiting: number;
  readonly #maxWaitingBytes: number;
  readonly #warpRange: number;
  readonly #onError: (error: unknown) => void;
  readonly #followsPeers: boolean;
  #gossip: GossipTransport | undefined;
  /** Messages waiting for parents, by id, oldest first; and for each missing parent, the ids waiting on it. */
  readonly #waiting = new Map<string, Waiting>();
  readonly #waitingOrder = new ArrivalOrder<Waiting>((w) => this.#waiting.get(w.id) === w);
  readonly #waitingOn = new Map<string, Set<string>>();
  #waitingBytes = 0;
  /** Valid milestones above the confirmed index, by index: their message ids (stored or waiting). */
  readonly #milestones = new Map<number, string>();
  /** Milestone indexes asked for and not yet seen. */
  readonly #asked = new Set<number>();
  /** The solid and latest index each peer's last heartbeat gave, and when (a peer silent for 100 s is gone: Hornet's
   * liveness rule). */
  readonly #peers = new Map<string, { solid: number; latest: number; at: number; claimedSince: number | undefined }>();
  #pruned = 0;
  #untrusted = 0;
  /** The highest index of the store's entry points (they do not change once it is open). A store made from a snapshot
   * at S keeps milestone S's record (its pruning index is S − 1) but not S's cone, whose ids are its entry points: it
   * announces pruned = S, so that no peer asks it for what it cannot send (Hornet). */
  #entryPointIndex = 0;
  #confirming: Promise<void> = Promise.resolve();
  #failed: unknown;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(node: ChrysalisNode, options: NetworkOptions) {
    this.#node = node;
    this.networkId = node.networkId;
    this.#keys = [...options.milestoneKeys];
    this.#threshold = options.milestoneKeyCount ?? this.#keys.length;
    this.#maxWaiting = Math.max(1, options.maxWaiting ?? 20_000);
    this.#maxWaitingBytes = Math.max(1, options.maxWaitingBytes ?? 64 * 1024 * 1024);
    this.#warpRange = Math.max(1, options.warpRange ?? DEFAULT_WARP_RANGE);
    this.#onError = options.onError ?? ((error) => console.error("chrysalis network:", error));
    this.#followsPeers = options.followsPeers === true;
    if (this.#followsPeers) node.parts.confirmation.heard(Number.POSITIVE_INFINITY);
    this.#unsubscribe.push(node.parts.processor.onStored((stored, metadata, source) => this.#stored(stored, metadata, source)));
    const interval = options.warpIntervalMs ?? 5000;
    this.#timer = setInterval(() => this.#warp(), Math.max(50, interval));
    this.#timer.unref();
  }

  /** The transport this part sends through (its peers, requests and heartbeats). */
  attach(gossip: GossipTransport): void {
    this.#gossip = gossip;
    for (const index of this.#node.store.entryPoints.values()) this.#entryPointIndex = Math.max(this.#entryPointIndex, index);
    this.#unsubscribe.push(
      gossip.onHeartbeat((hb) => {
        // Since when its claim has been ahead of what this node verified carries over; #warp (now) keeps it.
        const claimedSince = this.#peers.get(hb.peerId)?.claimedSince;
        this.#peers.set(hb.peerId, { solid: hb.solidMilestoneIndex, latest: hb.latestMilestoneIndex, at: Date.now(), claimedSince });
        this.#warp();
      }),
    );
    void this.#readPruning();
    this.#resume().catch((error: unknown) => this.#onError(error));
  }

  /** Stops warp sync and lets go of the node's events and the transport; stopping the transport is the caller's job. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const u of this.#unsubscribe.splice(0)) u();
    this.#gossip = undefined;
  }

  /** What waits for its parents now, bounded by `maxWaiting` and `maxWaitingBytes`. */
  get waiting(): {
    /** Messages held. */
    readonly messages: number;
    /** Their bytes together. */
    readonly bytes: number;
  } {
    return { messages: this.#waiting.size, bytes: this.#waitingBytes };
  }

  /** Messages from peers with a milestone payload that is not a milestone here (signatures that do not verify against
   * the trusted keys, or parents not the message's), since start: stored as plain messages, their senders kept. */
  get untrustedMilestones(): number {
    return this.#untrusted;
  }

  /** The failure that stopped confirmation, if one did. */
  get failure(): unknown {
    return this.#failed;
  }

  // --- GossipNode ---------------------------------------------------------------------------------------------------

  status(): ReturnType<GossipNode["status"]> {
    const { confirmation } = this.#node.parts;
    return { solid: confirmation.confirmedIndex, pruned: this.#pruned, latest: confirmation.latestIndex };
  }

  async messageBytes(id: Uint8Array): Promise<Uint8Array | undefined> {
    return (await this.#node.store.get(toHex(id)))?.bytes;
  }

  async milestoneBytes(index: number): Promise<Uint8Array | undefined> {
    const { confirmation } = this.#node.parts;
    const wanted = index === 0 ? confirmation.latestIndex : index;
    const id = this.#milestones.get(wanted) ?? (await this.#node.store.milestone(wanted))?.messageId;
    return id === undefined ? undefined : (await this.#node.store.get(id))?.bytes;
  }

  knows(id: Uint8Array): boolean {
    const hex = toHex(id);
    return this.#node.parts.tangle.knows(hex) || this.#waiting.has(hex);
  }

  async receive(bytes: Uint8Array, id: Uint8Array, from: string, requested: boolean): Promise<"new" | "known" | "invalid" | "ignored"> {
    const hex = toHex(id);
    if (this.knows(id)) return "known";
    const { processor, confirmation } = this.#node.parts;
    let message: Message;
    try {
      message = decodeMessage(bytes);
    } catch {
      return "invalid";
    }
    if (message.networkId !== this.networkId) return "invalid";
    // Hornet takes a message it asked for whatever its PoW (an old one, of a lower score).
    if (!requested && !processor.meetsPow(bytes)) return "invalid";
    const payload = this.#milestoneOf(message);
    if (payload === undefined && message.payload?.type === 1) this.#untrusted++;
    let index: number;
    if (payload !== undefined) {
      index = payload.index;
      confirmation.saw(index);
      if (index > confirmation.confirmedIndex && !this.#milestones.has(index)) this.#milestones.set(index, hex);
      this.#asked.delete(index);
    } else {
      // Not almost synced: a message nobody asked for is dropped (Hornet); what the milestones need is asked for.
      if (!requested && !confirmation.synced) return "ignored";
      // Its missing parents are asked of a peer that has confirmed what this node has (Hornet's peer choice by index).
      index = Math.max(1, confirmation.confirmedIndex);
    }
    return this.#process(hex, message, bytes, from, requested, index);
  }

  // --- inside -------------------------------------------------------------------------------------------------------

  /**
   * The message's milestone payload if it is a milestone to this node: its payload's parents are the message's own, in
   * order, and it is signed by the trusted keys (TIP-8). Anything else is a plain message, stored as any other and
   * without a penalty for its sender (Hornet, GOSSIP.md §4): the signatures cover only the payload's essence, so a real
   * milestone wrapped in a message with other parents, or junk in a milestone's shape, is what anyone can make, and
   * honest peers relay it.
   */
  #milestoneOf(message: Message): MilestonePayload | undefined {
    const payload = message.payload;
    if (payload?.type !== 1 || payload.parents.length !== message.parents.length) return undefined;
    for (let i = 0; i < payload.parents.length; i++) if (!equalBytes(payload.parents[i]!, message.parents[i]!)) return undefined;
    return this.#trusted(payload) ? payload : undefined;
  }

  /** Whether a milestone is signed by the trusted keys, as many as are required (TIP-8). */
  #trusted(payload: MilestonePayload): boolean {
    if (this.#keys.length === 0) return false;
    try {
      return verifyMilestoneSignatures(payload, { publicKeys: this.#keys, threshold: Math.min(this.#threshold, this.#keys.length) }).valid;
    } catch {
      return false;
    }
  }

  async #process(hex: string, message: Message, bytes: Uint8Array, from: string, requested: boolean, index: number): Promise<"new" | "known"> {
    const result = await this.#node.parts.processor.fromPeer(message, bytes, hex, from, requested);
    if ("stored" in result) return result.stored ? "new" : "known";
    this.#hold({ id: hex, message, bytes, from, requested, index, missing: new Set(result.missing) });
    return "new";
  }

  /** Keeps a message until its parents are stored, asking peers for them (a milestone's cone is asked for until it
   * comes; beyond the warp range it is not asked for yet). */
  #hold(entry: Waiting): void {
    const hex = entry.id;
    if (this.#waiting.has(hex)) return;
    this.#waiting.set(hex, entry);
    this.#waitingOrder.push(entry, this.#waiting.size);
    this.#waitingBytes += entry.bytes.length;
    for (const p of entry.missing) {
      let set = this.#waitingOn.get(p);
      if (set === undefined) this.#waitingOn.set(p, (set = new Set()));
      set.add(hex);
    }
    while (this.#waiting.size > this.#maxWaiting || this.#waitingBytes > this.#maxWaitingBytes) this.#drop(this.#waitingOrder.takeOldest()!.id);
    const confirmed = this.#node.parts.confirmation.confirmedIndex;
    if (entry.index > confirmed + this.#warpRange) return;
    const isMilestone = entry.message.payload?.type === 1;
    for (const p of entry.missing) this.#gossip?.request(fromHex(p, "parent", MESSAGE_ID_LENGTH), entry.index, { preventDiscard: isMilestone || entry.requested });
  }

  #drop(hex: string): void {
    const entry = this.#waiting.get(hex);
    if (entry === undefined) return;
    this.#waiting.delete(hex);
    this.#waitingBytes -= entry.bytes.length;
    for (const p of entry.missing) {
      const set = this.#waitingOn.get(p);
      set?.delete(hex);
      if (set?.size === 0) this.#waitingOn.delete(p);
    }
  }

  /** Every message stored or learnt by this process: children waiting on it go on, a milestone goes to confirmation,
   * and it is relayed. */
  #stored(stored: StoredMessage, metadata: MessageMetadata, source: StoredSource): void {
    const gossip = this.#gossip;
    const id = fromHex(stored.id, "messageId", MESSAGE_ID_LENGTH);
    gossip?.received(id);
    const payload = stored.message.payload;
    const { confirmation } = this.#node.parts;
    if (payload?.type === 1 && payload.index > confirmation.confirmedIndex && (source.local === true || this.#milestones.get(payload.index) === stored.id)) {
      this.#milestones.set(payload.index, stored.id);
      gossip?.milestoneReceived(payload.index);
      this.#confirmNext();
    }
    this.#relay(stored, metadata, source, id);
    const children = this.#waitingOn.get(stored.id);
    if (children === undefined) return;
    this.#waitingOn.delete(stored.id);
    for (const child of children) {
      const entry = this.#waiting.get(child);
      if (entry === undefined) continue;
      entry.missing.delete(stored.id);
      if (entry.missing.size > 0) continue;
      this.#drop(child);
      void this.#process(child, entry.message, entry.bytes, entry.from, entry.requested, entry.index).catch((error: unknown) => this.#onError(error));
    }
  }

  /** Hornet's Broadcast: what this process made goes to every peer; what a peer sent goes to every other peer, once
   * solid, if the node is synced, the message is not below max depth, and it was not asked for (catching up). */
  #relay(stored: StoredMessage, metadata: MessageMetadata, source: StoredSource, id: Uint8Array): void {
    const gossip = this.#gossip;
    if (gossip === undefined || source.instance === true) return;
    if (source.local === true) {
      gossip.broadcast(stored.bytes, id);
      return;
    }
    const { confirmation } = this.#node.parts;
    if (source.requested === true || !confirmation.synced) return;
    if (confirmation.latestIndex - metadata.coneRoots.oldest > BELOW_MAX_DEPTH) return;
    gossip.broadcast(stored.bytes, id, source.from === undefined ? [] : [source.from]);
  }

  /** Confirms the milestones stored above the confirmed index, in index order, one at a time. */
  #confirmNext(): void {
    this.#confirming = this.#confirming.then(async () => {
      const { confirmation } = this.#node.parts;
      for (;;) {
        if (this.#failed !== undefined) return;
        const next = confirmation.confirmedIndex + 1;
        const id = this.#milestones.get(next);
        if (id === undefined) break;
        const stored = await this.#node.store.get(id);
        if (stored === undefined || stored.message.payload?.type !== 1) break;
        try {
          await confirmation.confirmStored(stored as MilestoneMessage);
        } catch (error) {
          if (error instanceof NodeError && error.code === "MILESTONE_CONFLICT") {
            // Another instance on the same store confirmed it: catch up with what it wrote.
            await confirmation.load();
            await confirmation.external(next).catch(() => undefined);
          } else {
            this.#failed = error;
            this.#onError(error);
            return;
          }
        }
        this.#milestones.delete(next);
        for (const index of this.#milestones.keys()) if (index <= confirmation.confirmedIndex) this.#milestones.delete(index);
      }
      await this.#readPruning();
      this.#gossip?.statusChanged();
      this.#warp();
    });
  }

  /**
   * At start: milestones the store holds above the confirmed index, stored and not yet confirmed when the node stopped
   * (killed between the two writes). Peers would not send them again (the node knows them), so they are found among
   * the store's unreferenced messages and confirmed in order, as if just received.
   */
  async #resume(): Promise<void> {
    const { store } = this.#node;
    const { confirmation } = this.#node.parts;
    const ids = await store.unreferenced(RESUME_MESSAGES);
    for (let at = 0; at < ids.length; at += 256) {
      for (const stored of await Promise.all(ids.slice(at, at + 256).map((id) => store.get(id)))) {
        const payload = stored === undefined ? undefined : this.#milestoneOf(stored.message);
        if (stored === undefined || payload === undefined || payload.index <= confirmation.confirmedIndex || this.#milestones.has(payload.index)) continue;
        this.#milestones.set(payload.index, stored.id);
        confirmation.saw(payload.index);
        this.#gossip?.milestoneReceived(payload.index);
      }
    }
    this.#confirmNext();
  }

  async #readPruning(): Promise<void> {
    this.#pruned = Math.max(this.#entryPointIndex, await this.#node.store.pruningIndex().catch(() => this.#pruned));
  }

  /**
   * Warp sync (Hornet's plugins/warpsync): while the peers' highest solid index is 2 or more ahead, the milestones of
   * the next `warpRange` indexes not seen yet are asked for; their cones follow as their parents are asked for. A
   * milestone seen but still waiting for its cone beyond the range is asked for again once the range reaches it.
   */
  #warp(): void {
    const gossip = this.#gossip;
    if (gossip === undefined) return;
    const { confirmation, tangle } = this.#node.parts;
    const confirmed = confirmation.confirmedIndex;
    let target = 0;
    let heard = 0;
    const now = Date.now();
    for (const [peer, p] of this.#peers) {
      if (now - p.at > PEER_SILENCE_MS) {
        this.#peers.delete(peer);
        continue;
      }
      target = Math.max(target, p.solid);
      // A latest ahead of what this node verified is a claim, counted from the first look at it for UNPROVEN_CLAIM_MS.
      if (p.latest <= confirmation.latestIndex) p.claimedSince = undefined;
      else if (now - (p.claimedSince ??= now) > UNPROVEN_CLAIM_MS) continue;
      heard = Math.max(heard, p.latest);
    }
    confirmation.heard(this.#followsPeers && this.#peers.size === 0 ? Number.POSITIVE_INFINITY : heard);
    target = Math.max(target, confirmation.latestIndex);
    if (target - confirmed < 1) return;
    const top = Math.min(confirmed + this.#warpRange, target);
    for (let index = confirmed + 1; index <= top; index++) {
      const id = this.#milestones.get(index);
      if (id === undefined) {
        if (!this.#asked.has(index) && gossip.requestMilestone(index)) this.#asked.add(index);
        continue;
      }
      // Seen: if it waits for parents it has not asked for yet (it was beyond the range), ask now; if it was dropped
      // while it waited, ask for it again.
      const entry = this.#waiting.get(id);
      if (entry !== undefined) for (const p of entry.missing) gossip.request(fromHex(p, "parent", MESSAGE_ID_LENGTH), index, { preventDiscard: true });
      else if (!tangle.knows(id)) gossip.requestMilestone(index);
    }
    for (const index of this.#asked) if (index <= confirmed) this.#asked.delete(index);
  }
}
