// Byte-level mutations of valid encodings (flips, sets, truncations, insertions, deletions, length-field tweaks), for
// the fuzz tests and the engine comparison.
import fc from "fast-check";

export type Mutation =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "set"; at: number; value: number }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; count: number }
  | { kind: "length"; at: number; width: 1 | 2 | 4; value: number };

export const arbMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 40 }) }),
  // Length and count fields: overwrite 1, 2 or 4 bytes with extreme or nearby values.
  fc.record({
    kind: fc.constant("length" as const),
    at: fc.nat(),
    width: fc.constantFrom(1 as const, 2 as const, 4 as const),
    value: fc.oneof(fc.constantFrom(0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fff_ffff, 0xffff_ffff), fc.integer({ min: 0, max: 300 })),
  }),
);

export function mutate(bytes: Uint8Array, mutations: Mutation[]): Uint8Array {
  let b = Uint8Array.from(bytes);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % b.length;
    switch (m.kind) {
      case "flip":
        if (b.length > 0) b[at]! ^= 1 << m.bit;
        break;
      case "set":
        if (b.length > 0) b[at] = m.value;
        break;
      case "truncate":
        b = b.subarray(0, at);
        break;
      case "insert":
        b = Uint8Array.from([...b.subarray(0, at), ...m.bytes, ...b.subarray(at)]);
        break;
      case "delete":
        b = Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + m.count)]);
        break;
      case "length": {
        if (at + m.width > b.length) break;
        const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
        if (m.width === 1) view.setUint8(at, m.value & 0xff);
        else if (m.width === 2) view.setUint16(at, m.value & 0xffff, true);
        else view.setUint32(at, m.value >>> 0, true);
        break;
      }
    }
  }
  return b;
}

