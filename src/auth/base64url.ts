// Strict base64url (RFC 4648 §5, unpadded) for JWT segments and JWK keys.
// One canonical text per byte string: padding, foreign characters and non-zero trailing bits are refused, so a token cannot be re-spelt.
export const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const REVERSE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) REVERSE[ALPHABET.charCodeAt(i)] = i;

// Node's Buffer writes the same unpadded base64url text about 8× faster than the loop below (0.12 vs 1.0 µs for a JWT
// payload; a login encodes four such segments). Taken only when it agrees with the loop on a probe, so a browser
// Buffer polyfill without base64url (or with padding) falls back.
type NodeBufferClass = {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: string): string };
  from(text: string, encoding: "utf8"): { toString(encoding: string): string };
};
const nodeBuffer = nativeEncoder((globalThis as { Buffer?: NodeBufferClass }).Buffer);

function nativeEncoder(buffer: NodeBufferClass | undefined): NodeBufferClass | undefined {
  if (typeof buffer?.from !== "function") return undefined;
  try {
    const probe = Uint8Array.from([0xfb, 0xff, 0xbf, 0x00, 0x10]);
    for (let length = 0; length <= probe.length; length++) {
      if (buffer.from(probe.buffer, 0, length).toString("base64url") !== base64urlEncodeJs(probe.subarray(0, length))) return undefined;
    }
    return buffer;
  } catch {
    return undefined;
  }
}

export function base64urlEncode(bytes: Uint8Array): string {
  if (nodeBuffer !== undefined) return nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64url");
  return base64urlEncodeJs(bytes);
}

const textEncoder = new TextEncoder();

/** base64url of the UTF-8 bytes of `text` (a JWT's JSON segment), without an intermediate byte array where Node is. */
export function base64urlEncodeText(text: string): string {
  if (nodeBuffer !== undefined) return nodeBuffer.from(text, "utf8").toString("base64url");
  return base64urlEncodeJs(textEncoder.encode(text));
}

/** The portable encoder (and the reference the native one is checked against). */
export function base64urlEncodeJs(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

function sextet(text: string, index: number): number {
  const c = text.charCodeAt(index);
  return c < 128 ? REVERSE[c]! : -1;
}

/** Decodes `text[start, end)`; undefined when it is not canonical unpadded base64url. */
export function base64urlDecode(text: string, start = 0, end = text.length): Uint8Array | undefined {
  const length = end - start;
  const tail = length % 4;
  if (tail === 1) return undefined;
  const out = new Uint8Array(((length - tail) / 4) * 3 + (tail === 0 ? 0 : tail - 1));
  let at = 0;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const a = sextet(text, i);
    const b = sextet(text, i + 1);
    const c = sextet(text, i + 2);
    const d = sextet(text, i + 3);
    if ((a | b | c | d) < 0) return undefined;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[at++] = n >> 16;
    out[at++] = (n >> 8) & 255;
    out[at++] = n & 255;
  }
  if (tail === 2) {
    const a = sextet(text, i);
    const b = sextet(text, i + 1);
    if ((a | b) < 0 || (b & 15) !== 0) return undefined;
    out[at] = (a << 2) | (b >> 4);
  } else if (tail === 3) {
    const a = sextet(text, i);
    const b = sextet(text, i + 1);
    const c = sextet(text, i + 2);
    if ((a | b | c) < 0 || (c & 3) !== 0) return undefined;
    out[at++] = (a << 2) | (b >> 4);
    out[at] = ((b & 15) << 4) | (c >> 2);
  }
  return out;
}
