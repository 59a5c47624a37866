// Hornet's gossip frames (GOSSIP.md §3): frames written by hand in test/vectors/gossip-frames.json decode as the spec
// says, whole or cut anywhere; bad headers fail with stable codes at their offset; and the encoders round-trip.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";
import { MAX_MESSAGE_FRAME_LENGTH } from "../src/node/gossip/constants.js";
import {
  decodeHeartbeat,
  decodeMilestoneRequest,
  encodeFrame,
  encodeHeartbeat,
  encodeMessageFrame,
  encodeMessageRequest,
  encodeMilestoneRequest,
  FrameParser,
  type Frame,
  type Heartbeat,
} from "../src/node/gossip/frames.js";
import { hex, toHexString } from "./helpers.js";

interface Expected {
  type: number;
  heartbeat?: Heartbeat;
  milestoneIndex?: number;
  payload?: string;
}
const vectors = JSON.parse(readFileSync(new URL("./vectors/gossip-frames.json", import.meta.url), "utf8")) as {
  frames: { name: string; hex: string; frames: Expected[] }[];
  errors: { name: string; hex: string; code: string; offset: number }[];
};

function describeFrame(frame: Frame): Expected {
  if (frame.type === 4) return { type: 4, heartbeat: decodeHeartbeat(frame.payload) };
  if (frame.type === 1) return { type: 1, milestoneIndex: decodeMilestoneRequest(frame.payload) };
  return { type: frame.type, payload: toHexString(frame.payload) };
}

function parseAll(chunks: Uint8Array[]): Frame[] {
  const parser = new FrameParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

/** Every way of cutting `bytes` in two, and byte by byte. */
function cuts(bytes: Uint8Array): Uint8Array[][] {
  const ways: Uint8Array[][] = [[bytes], [...bytes].map((b) => Uint8Array.of(b))];
  for (let i = 1; i < bytes.length; i++) ways.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return ways;
}

describe("frames are type u8, length u16 little-endian, payload (hand-written vectors)", () => {
  for (const vector of vectors.frames) {
    it(`${vector.name}, whole and cut anywhere`, () => {
      for (const chunks of cuts(hex(vector.hex))) expect(parseAll(chunks).map(describeFrame)).toEqual(vector.frames);
    });
  }

  it("the encoders write the same bytes as the hand-written vectors", () => {
    expect(toHexString(encodeHeartbeat({ solidMilestoneIndex: 0x01020304, prunedMilestoneIndex: 5, latestMilestoneIndex: 0xfffffffe, connectedNeighbors: 3, syncedNeighbors: 255 }))).toBe("040e000403020105000000feffffff03ff");
    expect(toHexString(encodeMilestoneRequest(0))).toBe("01040000000000");
    expect(toHexString(encodeMilestoneRequest(0x00abcdef))).toBe("010400efcdab00");
    expect(toHexString(encodeMessageFrame(hex("aabbccddee")))).toBe("020500aabbccddee");
    expect(toHexString(encodeMessageRequest(hex("0001020304050607080910111213141516171819202122232425262728293031")))).toBe("0320000001020304050607080910111213141516171819202122232425262728293031");
  });

  it("a heartbeat count past one byte is sent as 255 (Hornet wraps it; a count never reads smaller than it is here)", () => {
    const bytes = encodeHeartbeat({ solidMilestoneIndex: 1, prunedMilestoneIndex: 0, latestMilestoneIndex: 1, connectedNeighbors: 300, syncedNeighbors: 256 });
    expect([bytes[15], bytes[16]]).toEqual([255, 255]);
  });

  it("the largest frame is 32771 bytes: a message of 32768 bytes passes, one more does not", () => {
    const largest = encodeMessageFrame(new Uint8Array(MAX_MESSAGE_FRAME_LENGTH).fill(7));
    expect(largest.length).toBe(32771);
    expect(toHexString(largest.subarray(0, 3))).toBe("020080");
    expect(parseAll([largest])[0]!.payload.length).toBe(32768);
    expect(() => encodeMessageFrame(new Uint8Array(MAX_MESSAGE_FRAME_LENGTH + 1))).toThrow(ProtocolError);
  });
});

describe("header errors: an unknown type, a length over the maximum or not a fixed type's size", () => {
  for (const vector of vectors.errors) {
    it(`${vector.name}: ${vector.code} at offset ${vector.offset}`, () => {
      for (const chunks of cuts(hex(vector.hex))) {
        const parser = new FrameParser();
        let error: unknown;
        try {
          for (const chunk of chunks) parser.push(chunk);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ProtocolError);
        expect((error as ProtocolError).code).toBe(vector.code);
        expect((error as ProtocolError).offset).toBe(vector.offset);
        // The stream is unusable after a bad header: the parser stays failed.
        expect(() => parser.push(hex("01040000000000"))).toThrow(ProtocolError);
      }
    });
  }

  it("the encoders refuse what the parser would refuse", () => {
    expect(() => encodeMessageRequest(new Uint8Array(31))).toThrow(ProtocolError);
    expect(() => encodeMilestoneRequest(-1)).toThrow(ProtocolError);
    expect(() => encodeMilestoneRequest(2 ** 32)).toThrow(ProtocolError);
    expect(() => encodeFrame(4, new Uint8Array(13))).toThrow(ProtocolError);
  });
});

describe("no-op frames are counted", () => {
  it("each 00 03 00 passed over adds one to noops (the session charges them to the peer's frame budget)", () => {
    const parser = new FrameParser();
    expect(parser.push(hex("000300000300010400070000000003"))).toHaveLength(1);
    expect(parser.noops).toBe(2);
    parser.push(hex("00"));
    expect(parser.noops).toBe(3);
  });
});

describe("the parser's buffer is bounded", () => {
  it("holds at most one frame in progress, however a peer drips the bytes", () => {
    const parser = new FrameParser();
    const frame = encodeMessageFrame(new Uint8Array(MAX_MESSAGE_FRAME_LENGTH));
    let most = 0;
    for (let i = 0; i < frame.length - 1; i += 97) {
      parser.push(frame.subarray(i, Math.min(i + 97, frame.length - 1)));
      most = Math.max(most, parser.buffered);
    }
    expect(most).toBeLessThanOrEqual(32771);
    expect(parser.push(frame.subarray(frame.length - 1))).toHaveLength(1);
    expect(parser.buffered).toBe(0);
  });
});

const heartbeatArb = fc.record({
  solidMilestoneIndex: fc.nat({ max: 0xffffffff }),
  prunedMilestoneIndex: fc.nat({ max: 0xffffffff }),
  latestMilestoneIndex: fc.nat({ max: 0xffffffff }),
  connectedNeighbors: fc.nat({ max: 255 }),
  syncedNeighbors: fc.nat({ max: 255 }),
});
const frameArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  heartbeatArb.map(encodeHeartbeat),
  fc.nat({ max: 0xffffffff }).map(encodeMilestoneRequest),
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map(encodeMessageRequest),
  fc.uint8Array({ maxLength: 2000 }).map(encodeMessageFrame),
  fc.constant(Uint8Array.of(0, 3, 0)),
);

describe("properties (fast-check)", () => {
  it("heartbeats and milestone requests round-trip through encoder, parser and decoder", () => {
    fc.assert(
      fc.property(heartbeatArb, fc.nat({ max: 0xffffffff }), (heartbeat, index) => {
        const [h, m] = parseAll([encodeHeartbeat(heartbeat), encodeMilestoneRequest(index)]);
        expect(decodeHeartbeat(h!.payload)).toEqual(heartbeat);
        expect(decodeMilestoneRequest(m!.payload)).toBe(index);
      }),
    );
  });

  it("any sequence of frames, cut at any points, parses to the same frames as the whole stream", () => {
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 10 }), (frames, points) => {
        const stream = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
        let at = 0;
        for (const f of frames) {
          stream.set(f, at);
          at += f.length;
        }
        const sorted = [...new Set(points.map((p) => (stream.length === 0 ? 0 : p % stream.length)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let last = 0;
        for (const p of [...sorted, stream.length]) {
          chunks.push(stream.subarray(last, p));
          last = p;
        }
        const whole = parseAll([stream]);
        expect(parseAll(chunks)).toEqual(whole);
        // Re-encoding the parsed frames gives the stream back, no-op frames left out.
        const again = whole.map((f) => toHexString(encodeFrame(f.type, f.payload))).join("");
        expect(again).toBe(frames.filter((f) => f[0] !== 0).map(toHexString).join(""));
      }),
    );
  });

  it("arbitrary bytes either parse or fail with a frame code, never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseAll([bytes]);
        } catch (error) {
          expect(["FRAME_UNKNOWN_TYPE", "FRAME_INVALID_LENGTH"]).toContain((error as ProtocolError).code);
        }
      }),
    );
  });
});
