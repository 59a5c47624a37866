// Hornet's gossip frames byte for byte (GOSSIP.md §3): TLV frames of type u8, length u16 LE and payload, their four
// payloads, and an incremental parser over a byte stream split anywhere, which never holds more than one frame.
import { ProtocolError } from "../../bytes/errors.js";
import { MAX_U32 } from "../../bytes/limits.js";
import {
  FRAME_HEADER_LENGTH,
  HEADER_FRAME_TYPE,
  HEARTBEAT_FRAME_TYPE,
  HEARTBEAT_LENGTH,
  MAX_FRAME_TYPE,
  MAX_HEARTBEAT_COUNT,
  MAX_MESSAGE_FRAME_LENGTH,
  MESSAGE_FRAME_TYPE,
  MESSAGE_REQUEST_FRAME_TYPE,
  MESSAGE_REQUEST_LENGTH,
  MILESTONE_REQUEST_FRAME_TYPE,
  MILESTONE_REQUEST_LENGTH,
} from "./constants.js";
import type {} from "../errors.js";

/** The frame types that carry a payload to act on (type 0 only re-reads a header). */
export type FrameType = typeof MILESTONE_REQUEST_FRAME_TYPE | typeof MESSAGE_FRAME_TYPE | typeof MESSAGE_REQUEST_FRAME_TYPE | typeof HEARTBEAT_FRAME_TYPE;

/** A frame as the parser hands it over: its header checked and gone, its payload whole. */
export interface Frame {
  /** Which of the four payloads it carries, by Hornet's number (1 … 4). */
  readonly type: FrameType;
  /** The payload, a copy the receiver may keep. */
  readonly payload: Uint8Array;
}

/** What a heartbeat says about its sender (all indexes u32, both counts one byte). */
export interface Heartbeat {
  /** The sender's confirmed milestone index: Hornet calls it solid and does not tell the two apart. A message needed at
   * index i is asked first of a peer with pruned < i ≤ solid. */
  readonly solidMilestoneIndex: number;
  /** The sender's pruning index: it holds nothing at or below it, so it is never asked for that. */
  readonly prunedMilestoneIndex: number;
  /** The latest milestone index the sender knows of, stored or not. When no peer has confirmed index i, a message
   * needed at i is asked of every peer with pruned < i ≤ latest. */
  readonly latestMilestoneIndex: number;
  /** How many peers the sender is connected to (this node counts those it has a gossip stream with). */
  readonly connectedNeighbors: number;
  /** Of those, the ones whose own heartbeat says solid ≥ max(their latest, the sender's latest) − 2. */
  readonly syncedNeighbors: number;
}

/** Each type's payload length: exact for fixed types, the maximum for variable ones (HG message.Definition). */
const DEFINITIONS: readonly { readonly max: number; readonly variable: boolean }[] = [
  { max: FRAME_HEADER_LENGTH, variable: false },
  { max: MILESTONE_REQUEST_LENGTH, variable: false },
  { max: MAX_MESSAGE_FRAME_LENGTH, variable: true },
  { max: MESSAGE_REQUEST_LENGTH, variable: false },
  { max: HEARTBEAT_LENGTH, variable: false },
];

/** What is wrong with a header, as HG tlv.ParseHeader decides; undefined when nothing is. */
function headerError(type: number, length: number, offset?: number): ProtocolError | undefined {
  const definition = type <= MAX_FRAME_TYPE ? DEFINITIONS[type] : undefined;
  if (definition === undefined) return new ProtocolError("FRAME_UNKNOWN_TYPE", `message type unknown: ${type}`, { path: "frame.type", offset });
  if (length > definition.max || (!definition.variable && length !== definition.max)) {
    return new ProtocolError("FRAME_INVALID_LENGTH", `invalid message length: type ${type} advertises ${length} bytes; ${definition.variable ? "at most" : "exactly"} ${definition.max}`, { path: "frame.length", offset });
  }
  return undefined;
}

/** Checks a header as HG tlv.ParseHeader does; returns the payload length. */
export function checkHeader(type: number, length: number): number {
  const error = headerError(type, length);
  if (error !== undefined) throw error;
  return length;
}

/** One frame: header and payload in one new array. */
export function encodeFrame(type: FrameType, payload: Uint8Array): Uint8Array {
  checkHeader(type, payload.length);
  const frame = new Uint8Array(FRAME_HEADER_LENGTH + payload.length);
  frame[0] = type;
  frame[1] = payload.length & 0xff;
  frame[2] = payload.length >>> 8;
  frame.set(payload, FRAME_HEADER_LENGTH);
  return frame;
}

function u32(value: number, path: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_U32) throw new ProtocolError("VALUE_OUT_OF_RANGE", `expected 0 .. ${MAX_U32}, got ${value}`, { path });
  return value;
}

/** A message frame carrying the full serialized message (nonce included). */
export function encodeMessageFrame(message: Uint8Array): Uint8Array {
  return encodeFrame(MESSAGE_FRAME_TYPE, message);
}

/** A request for the message with this id (32 bytes). */
export function encodeMessageRequest(id: Uint8Array): Uint8Array {
  if (id.length !== MESSAGE_REQUEST_LENGTH) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message id is ${MESSAGE_REQUEST_LENGTH} bytes, got ${id.length}`, { path: "id" });
  return encodeFrame(MESSAGE_REQUEST_FRAME_TYPE, id);
}

/** A request for the milestone of this index; 0 asks for the peer's latest. */
export function encodeMilestoneRequest(index: number): Uint8Array {
  const payload = new Uint8Array(MILESTONE_REQUEST_LENGTH);
  new DataView(payload.buffer).setUint32(0, u32(index, "index"), true);
  return encodeFrame(MILESTONE_REQUEST_FRAME_TYPE, payload);
}

/** The index a milestone request's payload asks for (0: the sender's latest); FRAME_INVALID_LENGTH unless 4 bytes. */
export function decodeMilestoneRequest(payload: Uint8Array): number {
  checkHeader(MILESTONE_REQUEST_FRAME_TYPE, payload.length);
  return new DataView(payload.buffer, payload.byteOffset, payload.length).getUint32(0, true);
}

/** A heartbeat frame; each index must be a u32 (VALUE_OUT_OF_RANGE otherwise), each count is sent as at most 255. */
export function encodeHeartbeat(heartbeat: Heartbeat): Uint8Array {
  const payload = new Uint8Array(HEARTBEAT_LENGTH);
  const view = new DataView(payload.buffer);
  view.setUint32(0, u32(heartbeat.solidMilestoneIndex, "solidMilestoneIndex"), true);
  view.setUint32(4, u32(heartbeat.prunedMilestoneIndex, "prunedMilestoneIndex"), true);
  view.setUint32(8, u32(heartbeat.latestMilestoneIndex, "latestMilestoneIndex"), true);
  // Hornet truncates the counts to a byte (Go's byte(n) wraps); a count past 255 is sent as 255 here, not as n mod 256.
  payload[12] = Math.min(Math.max(0, Math.floor(heartbeat.connectedNeighbors)), MAX_HEARTBEAT_COUNT);
  payload[13] = Math.min(Math.max(0, Math.floor(heartbeat.syncedNeighbors)), MAX_HEARTBEAT_COUNT);
  return encodeFrame(HEARTBEAT_FRAME_TYPE, payload);
}

/** The heartbeat in a heartbeat frame's payload; FRAME_INVALID_LENGTH unless 14 bytes. */
export function decodeHeartbeat(payload: Uint8Array): Heartbeat {
  checkHeader(HEARTBEAT_FRAME_TYPE, payload.length);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.length);
  return {
    solidMilestoneIndex: view.getUint32(0, true),
    prunedMilestoneIndex: view.getUint32(4, true),
    latestMilestoneIndex: view.getUint32(8, true),
    connectedNeighbors: payload[12]!,
    syncedNeighbors: payload[13]!,
  };
}

/**
 * Frames out of a byte stream fed in chunks cut anywhere. It holds at most one header and one payload, allocated at the
 * length its header passed (so never more than the largest frame, whatever a peer sends), and throws a ProtocolError (FRAME_UNKNOWN_TYPE, FRAME_INVALID_LENGTH) at the
 * first bad header: the stream is unusable after that, as in Hornet, and the parser stays failed.
 */
export class FrameParser {
  readonly #header = new Uint8Array(FRAME_HEADER_LENGTH);
  #headerFilled = 0;
  /** The frame being read, once its header passed: its type, and where its payload goes. */
  #type = HEADER_FRAME_TYPE;
  #payload: Uint8Array | undefined;
  #payloadFilled = 0;
  #failed: ProtocolError | undefined;
  /** Bytes consumed, for the error's offset. */
  #offset = 0;
  /** Type-0 no-op frames passed over so far (they cost a peer's rate limit like any other frame). */
  noops = 0;

  /** Bytes held of a frame not yet complete (never more than the largest frame). */
  get buffered(): number {
    return this.#headerFilled + this.#payloadFilled;
  }

  /** Feeds a chunk; returns the frames it completes, in order. */
  push(chunk: Uint8Array): Frame[] {
    if (this.#failed !== undefined) throw this.#failed;
    const frames: Frame[] = [];
    let at = 0;
    while (at < chunk.length || (this.#payload !== undefined && this.#payloadFilled === this.#payload.length)) {
      if (this.#payload === undefined) {
        const take = Math.min(FRAME_HEADER_LENGTH - this.#headerFilled, chunk.length - at);
        this.#header.set(chunk.subarray(at, at + take), this.#headerFilled);
        this.#headerFilled += take;
        at += take;
        if (this.#headerFilled < FRAME_HEADER_LENGTH) break;
        this.#headerFilled = 0;
        const type = this.#header[0]!;
        const length = this.#header[1]! | (this.#header[2]! << 8);
        const error = headerError(type, length, this.#offset + at - FRAME_HEADER_LENGTH);
        if (error !== undefined) {
          this.#failed = error;
          throw error;
        }
        // Type 0 (length 3, checkHeader made sure) has the next three bytes read as a header: a no-op frame.
        if (type === HEADER_FRAME_TYPE) {
          this.noops++;
          continue;
        }
        this.#type = type;
        this.#payload = new Uint8Array(length);
        this.#payloadFilled = 0;
        continue;
      }
      const payload = this.#payload;
      const take = Math.min(payload.length - this.#payloadFilled, chunk.length - at);
      payload.set(chunk.subarray(at, at + take), this.#payloadFilled);
      this.#payloadFilled += take;
      at += take;
      if (this.#payloadFilled < payload.length) break;
      frames.push({ type: this.#type as FrameType, payload });
      this.#payload = undefined;
      this.#payloadFilled = 0;
    }
    this.#offset += chunk.length;
    return frames;
  }
}
