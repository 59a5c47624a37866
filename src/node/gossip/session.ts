// One peer's gossip stream (H pkg/protocol/gossip/protocol.go): frames read and dispatched, a bounded send queue,
// read and write timeouts, per-peer rate limits and metrics, and a bounded queue of requests waiting for the store.
import type { ProtocolError } from "../../bytes/errors.js";
import { ANSWER_CONCURRENCY, HEARTBEAT_FRAME_TYPE, MESSAGE_FRAME_TYPE, MESSAGE_REQUEST_FRAME_TYPE, MILESTONE_REQUEST_FRAME_TYPE } from "./constants.js";
import { decodeHeartbeat, decodeMilestoneRequest, encodeMessageFrame, FrameParser, type Frame, type FrameType, type Heartbeat } from "./frames.js";
import { TokenBucket } from "./filters.js";
import type { DropReason, FrameCounts, PeerGossipMetrics } from "./types.js";

/** A duplex byte stream as libp2p's Stream is one: a source of chunks and a sink pulling from a source. */
export interface ByteStream {
  readonly source: AsyncIterable<Uint8Array | { subarray(): Uint8Array }>;
  sink(source: AsyncIterable<Uint8Array>): Promise<void>;
  abort(error: Error): void;
  close(): Promise<void>;
}

export interface SessionLimits {
  readonly sendQueueSize: number;
  readonly answerQueueSize: number;
  readonly maxReceiving: number;
  readonly maxFramesPerSecond: number;
  readonly maxRequestsPerSecond: number;
  readonly readTimeoutMs: number;
  readonly writeTimeoutMs: number;
}

/** A request of the peer waiting for the store. */
export type Wanted = { readonly kind: "message"; readonly id: Uint8Array } | { readonly kind: "milestone"; readonly index: number };

/** What a session asks of the service that runs it. */
export interface SessionHost {
  now(): number;
  /** A message frame: the whole receive path (duplicates, knows, the node). */
  message(session: PeerSession, bytes: Uint8Array): Promise<void>;
  /** The stored bytes answering a request (undefined: silence). */
  answer(wanted: Wanted): Promise<Uint8Array | undefined>;
  heartbeat(session: PeerSession, heartbeat: Heartbeat): void;
  /** The session ended; `reason` says why when gossip ended it (a penalty, a timeout), undefined when the stream did. */
  ended(session: PeerSession, reason: DropReason | undefined, error: unknown): void;
  /** Totals across peers, counted here as frames go in and out. */
  readonly framesIn: FrameCounts;
  readonly framesOut: FrameCounts;
  droppedPacket(): void;
}

const FRAME_NAMES: Record<FrameType, keyof FrameCounts> = {
  [MILESTONE_REQUEST_FRAME_TYPE]: "milestoneRequest",
  [MESSAGE_FRAME_TYPE]: "message",
  [MESSAGE_REQUEST_FRAME_TYPE]: "messageRequest",
  [HEARTBEAT_FRAME_TYPE]: "heartbeat",
};

const SENT_METRIC: Record<FrameType, keyof PeerGossipMetrics> = {
  [MILESTONE_REQUEST_FRAME_TYPE]: "sentMilestoneRequests",
  [MESSAGE_FRAME_TYPE]: "sentMessages",
  [MESSAGE_REQUEST_FRAME_TYPE]: "sentMessageRequests",
  [HEARTBEAT_FRAME_TYPE]: "sentHeartbeats",
};

export function emptyMetrics(): PeerGossipMetrics {
  return {
    newMessages: 0,
    knownMessages: 0,
    receivedMessages: 0,
    receivedMessageRequests: 0,
    receivedMilestoneRequests: 0,
    receivedHeartbeats: 0,
    sentMessages: 0,
    sentMessageRequests: 0,
    sentMilestoneRequests: 0,
    sentHeartbeats: 0,
    droppedPackets: 0,
  };
}

export class PeerSession {
  readonly peerId: string;
  /** True when this side opened the stream. */
  readonly opener: boolean;
  readonly startedAt: number;
  readonly metrics = emptyMetrics();
  /** The peer's last heartbeat, and when it came. */
  heartbeat: Heartbeat | undefined;
  heartbeatAt: number | undefined;
  /** When this side last queued a heartbeat for the peer. */
  heartbeatSentAt = -Infinity;

  readonly #stream: ByteStream;
  readonly #host: SessionHost;
  readonly #limits: SessionLimits;
  readonly #parser = new FrameParser();
  readonly #frames: TokenBucket;
  readonly #requests: TokenBucket;
  // The send queue: frames and their types, read from #head (compacted now and then).
  #queue: { frame: Uint8Array; type: FrameType }[] = [];
  #head = 0;
  #wake: (() => void) | undefined;
  #ended = false;
  /** Set while the writer has handed a frame to the stream and waits for it to be taken. */
  #writingSince: number | undefined;
  /** Set while the reader waits for bytes from the peer (not while it waits for the node). */
  #readingSince: number | undefined;
  #receiving = 0;
  #slot: (() => void) | undefined;
  readonly #wanted: Wanted[] = [];
  #answering = 0;

  constructor(peerId: string, opener: boolean, stream: ByteStream, host: SessionHost, limits: SessionLimits) {
    this.peerId = peerId;
    this.opener = opener;
    this.#stream = stream;
    this.#host = host;
    this.#limits = limits;
    this.startedAt = host.now();
    this.#frames = new TokenBucket(limits.maxFramesPerSecond, this.startedAt);
    this.#requests = new TokenBucket(limits.maxRequestsPerSecond, this.startedAt);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Frames waiting to be written. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Starts reading and writing; `first` frames (a heartbeat, a milestone request for 0) are queued before anything. */
  start(first: readonly { frame: Uint8Array; type: FrameType }[]): void {
    for (const { frame, type } of first) this.send(frame, type);
    this.#stream.sink(this.#outgoing()).then(
      () => this.end(undefined, undefined),
      (error: unknown) => this.end(undefined, error),
    );
    void this.#read();
  }

  /** Queues a frame; false (and counted in droppedPackets) when the queue is full or the session ended. */
  send(frame: Uint8Array, type: FrameType): boolean {
    if (this.#ended) return false;
    if (this.queued >= this.#limits.sendQueueSize) {
      this.#dropped();
      return false;
    }
    this.#queue.push({ frame, type });
    if (type === HEARTBEAT_FRAME_TYPE) this.heartbeatSentAt = this.#host.now();
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
    return true;
  }

  /** Checks the read and write timeouts. */
  tick(now: number): void {
    if (this.#ended) return;
    if (this.#readingSince !== undefined && now - this.#readingSince >= this.#limits.readTimeoutMs) this.end("timeout", new Error(`nothing read for ${this.#limits.readTimeoutMs} ms`));
    else if (this.#writingSince !== undefined && now - this.#writingSince >= this.#limits.writeTimeoutMs) this.end("timeout", new Error(`a write stuck for ${this.#limits.writeTimeoutMs} ms`));
  }

  /** Ends the session: the stream is closed (reason undefined) or reset, and the service told once. */
  end(reason: DropReason | undefined, error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#queue = [];
    this.#head = 0;
    this.#wanted.length = 0;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
    const slot = this.#slot;
    this.#slot = undefined;
    slot?.();
    if (reason === undefined) this.#stream.close().catch(() => this.#stream.abort(new Error("closed")));
    else this.#stream.abort(error instanceof Error ? error : new Error(reason));
    this.#host.ended(this, reason, error);
  }

  #dropped(): void {
    this.metrics.droppedPackets++;
    this.#host.droppedPacket();
  }

  async *#outgoing(): AsyncGenerator<Uint8Array> {
    while (!this.#ended) {
      if (this.#head === this.#queue.length) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        continue;
      }
      const { frame, type } = this.#queue[this.#head]!;
      this.#queue[this.#head++] = undefined as never;
      if (this.#head > 512 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.metrics[SENT_METRIC[type]]++;
      this.#host.framesOut[FRAME_NAMES[type]]++;
      this.#writingSince = this.#host.now();
      yield frame;
      this.#writingSince = undefined;
    }
  }

  async #read(): Promise<void> {
    try {
      const source = this.#stream.source[Symbol.asyncIterator]();
      while (!this.#ended) {
        this.#readingSince = this.#host.now();
        const next = await source.next();
        this.#readingSince = undefined;
        if (next.done === true || this.#ended) break;
        const chunk = next.value instanceof Uint8Array ? next.value : next.value.subarray();
        let frames: Frame[];
        const noops = this.#parser.noops;
        try {
          frames = this.#parser.push(chunk);
        } catch (error) {
          this.end("malformed", error as ProtocolError);
          return;
        }
        // No-op frames do nothing, but a peer sending nothing else still spends its frame budget on them.
        for (let i = this.#parser.noops - noops; i > 0; i--) {
          if (!this.#frames.take(this.#host.now())) return this.end("flood", new Error(`more than ${this.#limits.maxFramesPerSecond} frames a second`));
        }
        for (const frame of frames) {
          if (this.#ended) return;
          await this.#dispatch(frame);
        }
      }
      this.end(undefined, undefined);
    } catch (error) {
      this.end(undefined, error);
    }
  }

  async #dispatch(frame: Frame): Promise<void> {
    const now = this.#host.now();
    if (!this.#frames.take(now)) {
      this.end("flood", new Error(`more than ${this.#limits.maxFramesPerSecond} frames a second`));
      return;
    }
    this.#host.framesIn[FRAME_NAMES[frame.type]]++;
    switch (frame.type) {
      case MESSAGE_FRAME_TYPE:
        this.metrics.receivedMessages++;
        // The node's hands are full with this peer's messages: stop reading until one is done (TCP pushes back).
        while (this.#receiving >= this.#limits.maxReceiving && !this.#ended) await new Promise<void>((resolve) => (this.#slot = resolve));
        if (this.#ended) return;
        this.#receiving++;
        this.#host
          .message(this, frame.payload)
          .catch(() => undefined)
          .finally(() => {
            this.#receiving--;
            const slot = this.#slot;
            this.#slot = undefined;
            slot?.();
          });
        return;
      case MESSAGE_REQUEST_FRAME_TYPE:
        this.metrics.receivedMessageRequests++;
        this.#want({ kind: "message", id: frame.payload }, now);
        return;
      case MILESTONE_REQUEST_FRAME_TYPE:
        this.metrics.receivedMilestoneRequests++;
        this.#want({ kind: "milestone", index: decodeMilestoneRequest(frame.payload) }, now);
        return;
      case HEARTBEAT_FRAME_TYPE: {
        this.metrics.receivedHeartbeats++;
        const heartbeat = decodeHeartbeat(frame.payload);
        this.heartbeat = heartbeat;
        this.heartbeatAt = now;
        this.#host.heartbeat(this, heartbeat);
        return;
      }
    }
  }

  #want(wanted: Wanted, now: number): void {
    if (!this.#requests.take(now)) {
      this.end("flood", new Error(`more than ${this.#limits.maxRequestsPerSecond} requests a second`));
      return;
    }
    if (this.#wanted.length >= this.#limits.answerQueueSize) {
      this.#dropped();
      return;
    }
    this.#wanted.push(wanted);
    while (this.#answering < ANSWER_CONCURRENCY && this.#wanted.length > 0) void this.#answerNext();
  }

  async #answerNext(): Promise<void> {
    this.#answering++;
    try {
      for (let wanted = this.#wanted.shift(); wanted !== undefined && !this.#ended; wanted = this.#wanted.shift()) {
        // A store failure or a pruned message is silence to the peer; no error leaves this loop.
        const bytes = await this.#host.answer(wanted).catch(() => undefined);
        if (bytes === undefined || this.#ended) continue;
        let frame: Uint8Array;
        try {
          frame = encodeMessageFrame(bytes);
        } catch {
          continue; // a stored message over the frame's maximum cannot be gossiped; silence, as for any other miss
        }
        this.send(frame, MESSAGE_FRAME_TYPE);
      }
    } finally {
      this.#answering--;
    }
  }
}
