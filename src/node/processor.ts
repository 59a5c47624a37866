// The message processor (one job): the one path every complete message takes into the store, from the API, from
// the coordinator or from a peer. It checks the network id, the PoW, solidity and max depth, and (for the API) the
// semantic rules and the claim on the outputs a transaction spends; then stores the message and tells the Tangle, tip
// selection and the node's events. It knows nothing of HTTP, of filling partial messages, or of peers' wire.
import { toHex } from "../bytes/hex.js";
import { targetZeros } from "../pow/index.js";
import { messageTrailingZeros } from "../pow/hash.js";
import { messageId, transactionId } from "../model/ids.js";
import type { Message, TransactionPayload } from "../model/types.js";
import { isBelowMaxDepth, liveRoots, standingRoots } from "./cone.js";
import type { Confirmation } from "./confirmation.js";
import { NodeError } from "./errors.js";
import type { NodeEvents } from "./events.js";
import { checkClaim, checkLedgerState, checkSpend, claimLapsed, EMPTY_BALANCE, ledgerMutation, ledgerOutput } from "./ledger.js";
import { metadataWithLatest } from "./store/common.js";
import type { ConeRoots, MessageMetadata, NodeStore, SpendClaim, StoredMessage } from "./store/contract.js";
import type { Tangle } from "./tangle.js";
import type { TipSelector } from "./tipselect.js";

/** The parts a MessageProcessor reads and tells, and the node's network and PoW rules (createNode wires them). */
export interface ProcessorOptions {
  /** Where messages are accepted (one atomic write each) and parents, metadata and the ledger are read. */
  readonly store: NodeStore;
  /** Answers for recent parents without a store read, and learns every message stored. */
  readonly tangle: Tangle;
  /** Learns every message stored; undefined on a gateway, whose upstream selects tips. */
  readonly tips: TipSelector | undefined;
  /** The confirmed milestone index the claims are judged at; told which transactions' signatures were verified. */
  readonly confirmation: Confirmation;
  /** Where every stored message is announced. */
  readonly events: NodeEvents;
  /** The network name, for the WRONG_NETWORK_ID message. */
  readonly network: string;
  /** The network id every message must carry (derived from the network name). */
  readonly networkId: bigint;
  /** The minimum PoW score a message's nonce must reach (INSUFFICIENT_POW below it). */
  readonly minPoWScore: number;
  /** Whether parents must be known and above max depth (a gateway whose upstream checks them passes false). */
  readonly checkSolidity: boolean;
  /** Whether the store keeps a ledger (known once it opened). */
  readonly ledger: () => boolean;
}

/** What the rules found before the nonce is mined: the message's cone roots and, for a transaction, its claim. */
export interface Checked {
  /** Its cone roots from its parents, above max depth: stored with it as MessageMetadata.coneRoots. */
  readonly roots: ConeRoots;
  /** For a transaction on a node that keeps a ledger: its claim on the outputs it spends, written with it
   * (Acceptance.claim). Undefined otherwise. */
  readonly claim: SpendClaim | undefined;
  /** Its parents' ids, lowercase hex, in the message's order: made once for the rules and reused by the parts told. */
  readonly parentIds: readonly string[];
}

/** Where a stored message came from: this process (the API, the coordinator), a peer (and whether it was asked
 * for), or another instance on the same store. */
export interface StoredSource {
  /** Stored by this process from the API or the coordinator: gossip relays it to every peer. */
  readonly local?: boolean;
  /** The peer it came from (its peer id): gossip relays it to the other peers once synced, and the message event
   * names it. */
  readonly from?: string | undefined;
  /** It came from a peer as the answer to this node's request (catching up, or a missing parent): never relayed. */
  readonly requested?: boolean;
  /** Stored by another instance sharing the store: that instance gossips it, this one does not. */
  readonly instance?: boolean;
}

/** What the processor did with a message. */
export interface Processed {
  /** The message id (BLAKE2b-256 of its bytes), lowercase hex. */
  readonly messageId: string;
  /** False when the same message was stored already. */
  readonly stored: boolean;
}

/**
 * The one path every complete message takes into the store, from the API, the coordinator or a peer: network id, PoW,
 * solidity and max depth, (for the API) the semantic rules and the claim; then the store's write and the parts told.
 * Refusals name the field (`path`): WRONG_NETWORK_ID, INSUFFICIENT_POW, PARENT_NOT_SOLID, BELOW_MAX_DEPTH, and the
 * ledger's and the signature check's codes (INPUT_NOT_FOUND, INPUT_SPENT, AMOUNTS_DIFFER, DUST_RULE, INVALID_SIGNATURE, …).
 */
export class MessageProcessor {
  readonly #o: ProcessorOptions;
  readonly #listeners = new Set<(stored: StoredMessage, metadata: MessageMetadata, source: StoredSource) => void>();

  constructor(options: ProcessorOptions) {
    this.#o = options;
  }

  /** The network id every message must carry. */
  get networkId(): bigint {
    return this.#o.networkId;
  }

  /** The minimum PoW score a message's nonce must reach. */
  get minPoWScore(): number {
    return this.#o.minPoWScore;
  }

  /** Refuses a network id other than the node's with WRONG_NETWORK_ID (path `networkId`): checked first, before any
   * hashing. */
  checkNetwork(id: bigint): void {
    if (id !== this.#o.networkId) {
      throw new NodeError("WRONG_NETWORK_ID", `networkId ${id} is not this node's network (${this.#o.network}, ${this.#o.networkId})`, { path: "networkId" });
    }
  }

  /**
   * The accept/refuse decision hashes the message's own nonce once on the kernel's one-state path (a few µs; a nonce
   * search of one nonce costs a whole 128-lane batch) and compares its trailing zeros with the exact target for this
   * length; the score, from the same zeros, only words the refusal.
   */
  checkPow(bytes: Uint8Array): void {
    const zeros = messageTrailingZeros(bytes);
    if (zeros >= targetZeros(bytes.length, this.#o.minPoWScore)) return;
    throw new NodeError("INSUFFICIENT_POW", `the PoW score ${Math.floor(3 ** zeros / bytes.length)} is below the node's minimum ${this.#o.minPoWScore}`, { path: "nonce" });
  }

  /** Whether the message as it stands (nonce included) meets the node's score: Hornet keeps a nonce that does. */
  meetsPow(bytes: Uint8Array): boolean {
    return messageTrailingZeros(bytes) >= targetZeros(bytes.length, this.#o.minPoWScore);
  }

  /**
   * Every rule of a submission but the PoW, before any PoW is spent: parents solid and above max depth (Hornet's
   * Emit), then the semantic rules against the confirmed ledger and the claims (the hint that refuses a spend the
   * node knows cannot win; the store decides it again in its write). With `id` (the nonce is in the bytes already),
   * a message stored before is answered `"known"` first, as Hornet answers it with its id.
   */
  check(message: Message, id: undefined): Promise<Checked>;
  check(message: Message, id: string | undefined): Promise<Checked | "known">;
  async check(message: Message, id: string | undefined): Promise<Checked | "known"> {
    const parentIds = this.#o.tangle.parentIds(message.parents);
    // Recent parents are answered from memory without a promise; only the store's answer is awaited.
    const roots = this.#recentRoots(message, parentIds, id) ?? (await this.#roots(parentIds, id));
    if (roots === "known") return roots;
    const payload = message.payload;
    const claim = payload?.type === 0 && this.#o.ledger() ? await this.#claim(payload) : undefined;
    return { roots, claim, parentIds };
  }

  /** Stores a message the rules passed (check), then tells the Tangle, tip selection and the events. */
  async store(message: Message, bytes: Uint8Array, checked: Checked, id = messageId(bytes)): Promise<Processed> {
    const arrivalTime = Date.now();
    const { stored } = await this.#o.store.accept({ id, bytes, message, arrivalTime, coneRoots: checked.roots, claim: checked.claim, parentIds: checked.parentIds });
    if (stored) {
      // Its signatures were verified against the very outputs it claims: white-flag need not verify them again.
      if (checked.claim !== undefined) this.#o.confirmation.verified(id);
      this.stored({ id, bytes, message }, { arrivalTime, solid: true, coneRoots: checked.roots }, { local: true }, checked.parentIds);
    }
    return { messageId: id, stored };
  }

  /** A message is in the store now (stored here, or by another instance on the same store): the parts learn it.
   * `parentIds`: its parents' ids in hex when the caller has them already. */
  stored(stored: StoredMessage, metadata: MessageMetadata, source: StoredSource = { local: true }, parentIds: readonly string[] = this.#o.tangle.parentIds(stored.message.parents)): void {
    const { tangle, tips, events } = this.#o;
    tips?.add(stored.id, tangle.add(stored.id, parentIds, metadata.coneRoots, metadata.referencedByMilestoneIndex));
    for (const listener of this.#listeners) listener(stored, metadata, source);
    events.emit(source.from === undefined ? { type: "message", stored, metadata } : { type: "message", stored, metadata, from: source.from });
  }

  /** Calls `listener` for every message this process stores or learns of, with where it came from (gossip relays
   * from it); before the node's events see it. */
  onStored(listener: (stored: StoredMessage, metadata: MessageMetadata, source: StoredSource) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * A message from a peer, decoded and checked by the caller (network, PoW, milestone signatures): stored whatever the
   * ledger says once every parent is stored (Hornet stores one below max depth too; it is never a tip, as it scores
   * lazy, and never relayed). Answers the parents not stored yet when there are any (the caller holds the message and
   * asks peers for them), else whether it was stored (false: it was already).
   */
  async fromPeer(
    message: Message,
    bytes: Uint8Array,
    id: string,
    from: string,
    requested: boolean,
  ): Promise<
    | {
        /** The parents no store holds yet (lowercase hex): nothing was stored. */
        readonly missing: string[];
      }
    | {
        /** False when the message was stored already. */
        readonly stored: boolean;
      }
  > {
    const { store, tangle } = this.#o;
    const parents = tangle.parentIds(message.parents);
    let roots = tangle.rootsOf(parents);
    if (roots === undefined) {
      const asked = parents.filter((p) => !tangle.knows(p));
      const read = await metadataWithLatest(store, asked);
      const missing = asked.filter((_, i) => read.metadata[i] === undefined);
      if (missing.length > 0) return { missing };
      const confirmed = Math.max(read.latest?.index ?? 0, tangle.confirmed);
      let oldest = Infinity;
      let youngest = 0;
      for (const p of parents) {
        const at = asked.indexOf(p);
        const m = at < 0 ? undefined : read.metadata[at];
        const r = tangle.passedOn(p) ?? (m === undefined ? undefined : (standingRoots(m, confirmed) ?? (await liveRoots(store, p, m, confirmed))));
        if (r === undefined) continue;
        oldest = Math.min(oldest, r.oldest);
        youngest = Math.max(youngest, r.youngest);
      }
      roots = { oldest: oldest === Infinity ? 0 : oldest, youngest };
    }
    const arrivalTime = Date.now();
    const { stored } = await store.accept({ id, bytes, message, arrivalTime, coneRoots: roots, parentIds: parents });
    if (stored) this.stored({ id, bytes, message }, { arrivalTime, solid: true, coneRoots: roots }, { from, requested }, parents);
    return { stored };
  }

  /** A complete message from the API: network, PoW, every rule, stored. */
  async submit(message: Message, bytes: Uint8Array): Promise<Processed> {
    this.checkNetwork(message.networkId);
    this.checkPow(bytes);
    const id = messageId(bytes);
    const checked = await this.check(message, id);
    if (checked === "known") return { messageId: id, stored: false };
    return this.store(message, bytes, checked, id);
  }

  /**
   * Hornet's solidity rule for the node's own messages: every parent a stored message or a solid entry point, and
   * none below max depth. The Tangle in memory answers for recent parents, here and at once; undefined when it cannot,
   * and #roots asks the store for the others, in one read with the message's own id (one round trip to a store across
   * a network).
   */
  #recentRoots(message: Message, parents: readonly string[], id: string | undefined): ConeRoots | "known" | undefined {
    const { tangle, checkSolidity } = this.#o;
    if (!checkSolidity) return undefined;
    if (id !== undefined && tangle.get(id) !== undefined) return "known";
    // A transaction asks the store whether it is stored already: its own acceptance changed what its rules find.
    const recent = id === undefined || message.payload?.type !== 0 ? tangle.rootsOf(parents) : undefined;
    return recent === undefined ? undefined : this.#depth(recent, tangle.confirmed);
  }

  /** The rest of #recentRoots's rule, from the store: the parents memory did not answer for. */
  async #roots(parents: readonly string[], id: string | undefined): Promise<ConeRoots | "known"> {
    const { store, tangle, checkSolidity } = this.#o;
    if (!checkSolidity) return id !== undefined && (await store.has(id)) ? "known" : { oldest: 0, youngest: 0 };
    const entryPoints = parents.map((p) => store.entryPoints.get(p));
    const asked = parents.filter((_, i) => entryPoints[i] === undefined);
    if (id !== undefined) asked.push(id);
    const read = await metadataWithLatest(store, asked);
    if (id !== undefined && read.metadata[asked.length - 1] !== undefined) return "known";
    const confirmed = Math.max(read.latest?.index ?? 0, tangle.confirmed);
    let oldest = Infinity;
    let youngest = 0;
    let next = 0;
    for (let i = 0; i < parents.length; i++) {
      const entryPoint = entryPoints[i];
      let roots: ConeRoots;
      if (entryPoint !== undefined) roots = { oldest: entryPoint, youngest: entryPoint };
      else {
        const m = read.metadata[next++];
        if (m === undefined) throw new NodeError("PARENT_NOT_SOLID", `parent ${parents[i]} is unknown to this node`, { path: `parentMessageIds[${i}]` });
        roots = tangle.passedOn(parents[i]!) ?? standingRoots(m, confirmed) ?? (await liveRoots(store, parents[i]!, m, confirmed));
      }
      oldest = Math.min(oldest, roots.oldest);
      youngest = Math.max(youngest, roots.youngest);
    }
    return this.#depth({ oldest: oldest === Infinity ? 0 : oldest, youngest }, confirmed);
  }

  #depth(roots: ConeRoots, confirmed: number): ConeRoots {
    if (isBelowMaxDepth(roots.oldest, confirmed)) {
      throw new NodeError("BELOW_MAX_DEPTH", `a parent's past cone was confirmed ${confirmed - roots.oldest} milestones ago: attach to newer tips`, { path: "parentMessageIds" });
    }
    return roots;
  }

  /**
   * The semantic rules of a submitted transaction against the confirmed ledger, and the claims other pending
   * transactions hold (a hint: white-flag decides at confirmation). A transaction whose outputs it spent already
   * (the same transaction in a new message: iota.js `reattach`) passes, and claims nothing.
   */
  async #claim(payload: TransactionPayload): Promise<SpendClaim> {
    const { store } = this.#o;
    const mutation = ledgerMutation(transactionId(payload), payload);
    const claim: SpendClaim = { transactionId: mutation.transactionId, consumed: mutation.consumed, created: payload.essence.outputs };
    const [records, claims] = await Promise.all([Promise.all(mutation.consumed.map((o) => store.output(o))), Promise.all(mutation.consumed.map((o) => store.claim(o)))]);
    if (records.length > 0 && records.every((r) => r?.spent?.transactionId === mutation.transactionId)) return claim;
    // An output no milestone confirmed yet may be a pending transaction's (a chained spend): its contents are known. A
    // milestone may book it between the two reads (its pending output goes as its output is written): read it again.
    const pending = await Promise.all(mutation.consumed.map((o, i) => (records[i] === undefined ? store.pendingOutput(o) : undefined)));
    await Promise.all(
      mutation.consumed.map(async (o, i) => {
        if (records[i] === undefined && pending[i] === undefined) records[i] = await store.output(o);
      }),
    );
    const confirmed = this.#o.confirmation.confirmedIndex;
    const entries = records.map((r, i) => ledgerOutput(r) ?? (pending[i] !== undefined && !claimLapsed(pending[i]!, confirmed) ? { output: pending[i]!.output, spent: false } : undefined));
    const addresses = new Map<string, Uint8Array>();
    for (const o of payload.essence.outputs) addresses.set(toHex(o.address.address), o.address.address);
    for (const e of entries) if (e !== undefined) addresses.set(toHex(e.output.address.address), e.output.address.address);
    const balances = new Map(await Promise.all([...addresses].map(async ([key, address]) => [key, await store.addressBalance(address)] as const)));
    const { consumed } = checkLedgerState(mutation, entries, (key) => balances.get(key) ?? EMPTY_BALANCE);
    checkSpend(payload, consumed);
    // The claims now, so that no PoW is spent on a spend the store's write would refuse.
    checkClaim(claim, records, pending, claims, confirmed);
    return claim;
  }
}
