// The recent Tangle in memory: for the messages this node stored lately, their parents, the milestone that referenced
// each, its cone root indexes (Hornet's YCRI/OCRI) and how many children it has. Tip selection scores from it, the
// coordinator finds the messages no other references in it, and the message processor checks parents against it
// before it asks the store. Rebuilt at start from the store's unreferenced messages; bounded, the oldest forgotten.
import { ArrivalOrder } from "../bytes/bounded-map.js";
import { toHex } from "../bytes/hex.js";
import type { ConeRoots } from "./store/contract.js";

/** A message the node stored lately, as the Tangle remembers it. */
export interface RecentMessage {
  /** The message id, lowercase hex. */
  readonly id: string;
  /** Its parents' ids, lowercase hex, in the message's order. */
  readonly parents: readonly string[];
  /** The milestone that referenced it, once one did. */
  referenced: number | undefined;
  /** Its oldest and youngest cone root index at the confirmed milestone (its own milestone's, once referenced). */
  roots: ConeRoots;
  /** Children of it this node stored while it remembered it. */
  children: number;
}

/** The bound of a Tangle. */
export interface TangleOptions {
  /** Most messages remembered; past it the oldest are forgotten (the store still holds them). Default 50,000. */
  maxMessages?: number;
}

/** Messages a Tangle remembers unless TangleOptions.maxMessages (NodeOptions.tangle) says otherwise. */
export const DEFAULT_TANGLE_MESSAGES = 50_000;

/**
 * The messages this node stored lately, with their parents, milestone and cone roots, kept in memory and bounded: what
 * tip selection scores from, and what spares the store a read for each parent of a new message.
 */
export class Tangle {
  /** Insertion order is arrival order: parents before children, the first the oldest. */
  readonly #messages = new Map<string, RecentMessage>();
  // The Tangle forgets a message only here, its oldest, as it takes it off this queue (add): whatever is queued is
  // held, which spares a lookup (a cache miss in a map of 50,000) per message remembered.
  readonly #arrival = new ArrivalOrder<RecentMessage>(() => true);
  readonly #entryPoints: ReadonlyMap<string, number>;
  readonly #max: number;
  /** The confirmed milestone index the roots are computed at (Hornet's CMI). */
  confirmed = 0;

  /** `entryPoints`: the store's solid entry points (a live map: a snapshot load changes it). */
  constructor(entryPoints: ReadonlyMap<string, number>, options: TangleOptions = {}) {
    this.#entryPoints = entryPoints;
    this.#max = Math.max(1, options.maxMessages ?? DEFAULT_TANGLE_MESSAGES);
  }

  /** Messages remembered now (at most maxMessages). */
  get size(): number {
    return this.#messages.size;
  }

  /** The remembered message of this id (lowercase hex), live: it changes as milestones reference it; undefined once
   * forgotten or never stored here (ask the store then). */
  get(id: string): RecentMessage | undefined {
    return this.#messages.get(id);
  }

  /** The parents of a message as the Tangle would hold them: each parent's id in lowercase hex, the very string of the
   * remembered parent where there is one, so that a message keeps no copy of its parents' ids (a hundred thousand
   * messages in memory kept two or more each) and a lookup by one compares a pointer. */
  parentIds(parents: readonly Uint8Array[]): string[] {
    const ids = new Array<string>(parents.length);
    for (let i = 0; i < parents.length; i++) {
      const id = toHex(parents[i]!);
      ids[i] = this.#messages.get(id)?.id ?? id;
    }
    return ids;
  }

  /** True when the id is a remembered message or a solid entry point: known solid without asking the store. */
  knows(id: string): boolean {
    return this.#messages.has(id) || this.#entryPoints.has(id);
  }

  /** The roots `id` passes on to a child: its milestone's once referenced, an entry point's index, else its cone's;
   * undefined when it is not remembered (the store must tell). */
  passedOn(id: string): ConeRoots | undefined {
    const entryPoint = this.#entryPoints.get(id);
    if (entryPoint !== undefined) return { oldest: entryPoint, youngest: entryPoint };
    const m = this.#messages.get(id);
    if (m === undefined) return undefined;
    return m.referenced !== undefined ? { oldest: m.referenced, youngest: m.referenced } : m.roots;
  }

  /** The roots a message with these parents has now, from memory alone; undefined when a parent is not remembered. */
  rootsOf(parents: readonly string[]): ConeRoots | undefined {
    let oldest = Infinity;
    let youngest = 0;
    let first: ConeRoots | undefined;
    for (const p of parents) {
      const roots = this.passedOn(p);
      if (roots === undefined) return undefined;
      first ??= roots;
      if (roots.oldest < oldest) oldest = roots.oldest;
      if (roots.youngest > youngest) youngest = roots.youngest;
    }
    // Roots are never changed in place: a message whose roots are its first parent's shares that object (most do).
    if (first !== undefined && first.oldest === oldest && first.youngest === youngest) return first;
    return { oldest: oldest === Infinity ? 0 : oldest, youngest };
  }

  /**
   * Remembers a stored message (once: a message remembered already is returned as it is). `roots`: what its parents
   * gave it when it was stored; `referenced`: its milestone, when one referenced it already.
   */
  add(id: string, parents: readonly string[], roots: ConeRoots, referenced?: number): RecentMessage {
    const known = this.#messages.get(id);
    if (known !== undefined) return known;
    const m: RecentMessage = { id, parents, referenced, roots, children: 0 };
    this.#messages.set(id, m);
    this.#arrival.push(m, this.#messages.size);
    for (const p of parents) {
      const parent = this.#messages.get(p);
      if (parent !== undefined) parent.children++;
    }
    if (this.#messages.size > this.#max) this.#messages.delete(this.#arrival.takeOldest()!.id);
    return m;
  }

  /** Milestone `index` referenced these messages (those remembered): each becomes its own root. */
  reference(ids: Iterable<string>, index: number): void {
    for (const id of ids) {
      const m = this.#messages.get(id);
      if (m === undefined || m.referenced !== undefined) continue;
      m.referenced = index;
      m.roots = { oldest: index, youngest: index };
    }
  }

  /**
   * Moves to the confirmed index `confirmed` and works every unreferenced message's roots out again from its parents,
   * parents first (Hornet recomputes the future cone of what a milestone referenced). A parent no longer remembered
   * leaves the message's roots as they were: they can only be older than the true ones, never younger.
   */
  confirm(confirmed: number): void {
    this.confirmed = Math.max(this.confirmed, confirmed);
    for (const m of this.#messages.values()) {
      if (m.referenced !== undefined) continue;
      let oldest = Infinity;
      let youngest = 0;
      let complete = true;
      for (const p of m.parents) {
        const roots = this.passedOn(p);
        if (roots === undefined) {
          complete = false;
          break;
        }
        if (roots.oldest < oldest) oldest = roots.oldest;
        if (roots.youngest > youngest) youngest = roots.youngest;
      }
      if (complete) m.roots = { oldest: oldest === Infinity ? 0 : oldest, youngest };
    }
  }

  /** Every remembered message no milestone references yet and no stored message names as a parent, oldest first:
   * what a milestone must reach for nothing to be left behind. */
  childless(): RecentMessage[] {
    const out: RecentMessage[] = [];
    for (const m of this.#messages.values()) if (m.referenced === undefined && m.children === 0) out.push(m);
    return out;
  }
}
