// Classic Bech32 (BIP-173, not bech32m) as TIP-11 uses it for addresses.
// Strict on input: one case throughout, a valid checksum, 8-to-5 bit padding of zeros only.
import { ProtocolError } from "./errors.js";

const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const CHARSET_REV = new Int8Array(128).fill(-1);
for (let i = 0; i < CHARSET.length; i++) CHARSET_REV[CHARSET.charCodeAt(i)] = i;
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
const MAX_LENGTH = 90; // BIP-173

function polymod(values: ArrayLike<number>, start = 1): number {
  let chk = start;
  for (let i = 0; i < values.length; i++) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ values[i]!;
    for (let j = 0; j < 5; j++) if ((top >>> j) & 1) chk ^= GENERATOR[j]!;
  }
  return chk;
}

function hrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) >> 5);
  out.push(0);
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) & 31);
  return out;
}

function convertBits(data: ArrayLike<number>, from: number, to: number, pad: boolean, path?: string): number[] {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (let i = 0; i < data.length; i++) {
    acc = (acc << from) | data[i]!;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
    acc &= (1 << bits) - 1;
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv);
  } else if (bits >= from || ((acc << (to - bits)) & maxv) !== 0) {
    throw new ProtocolError("INVALID_BECH32", "non-zero padding in Bech32 data", { path });
  }
  return out;
}

function validHrp(hrp: string): boolean {
  if (hrp.length < 1 || hrp.length > 83) return false;
  for (let i = 0; i < hrp.length; i++) {
    const c = hrp.charCodeAt(i);
    if (c < 33 || c > 126 || (c >= 65 && c <= 90)) return false;
  }
  return true;
}

/** Bech32 (BIP-173) of `data` under the human-readable part `hrp`; throws ProtocolError INVALID_BECH32 past 90 characters. */
export function bech32Encode(hrp: string, data: Uint8Array): string {
  if (typeof hrp !== "string" || !validHrp(hrp)) throw new ProtocolError("INVALID_BECH32", "invalid human-readable part (1 .. 83 lowercase printable characters)", { path: "hrp" });
  const words = convertBits(data, 8, 5, true);
  const values = hrpExpand(hrp).concat(words, [0, 0, 0, 0, 0, 0]);
  const mod = polymod(values) ^ 1;
  let out = hrp + "1";
  for (const w of words) out += CHARSET[w];
  for (let i = 0; i < 6; i++) out += CHARSET[(mod >>> (5 * (5 - i))) & 31];
  if (out.length > MAX_LENGTH) throw new ProtocolError("INVALID_BECH32", "Bech32 string longer than 90 characters", { path: "data" });
  return out;
}

/** The human-readable part and data of a Bech32 string (one case, checksum verified); throws ProtocolError INVALID_BECH32. */
export function bech32Decode(
  text: unknown,
  path?: string,
): {
  /** The human-readable part, lowercase. */
  hrp: string;
  /** The data, as bytes. */
  data: Uint8Array;
} {
  const fail = (why: string): never => {
    throw new ProtocolError("INVALID_BECH32", why, { path });
  };
  if (typeof text !== "string") return fail("expected a Bech32 string");
  if (text.length < 8 || text.length > MAX_LENGTH) return fail("Bech32 string must be 8 .. 90 characters");
  const lower = text.toLowerCase();
  if (lower !== text && text.toUpperCase() !== text) fail("mixed case in Bech32 string");
  const sep = lower.lastIndexOf("1");
  if (sep < 1 || sep + 7 > lower.length) fail("missing separator or checksum");
  const hrp = lower.slice(0, sep);
  if (!validHrp(hrp)) fail("invalid human-readable part");
  const values: number[] = [];
  for (let i = sep + 1; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    const v = c < 128 ? CHARSET_REV[c]! : -1;
    if (v < 0) fail(`invalid Bech32 character at ${i}`);
    values.push(v);
  }
  if (polymod(hrpExpand(hrp).concat(values)) !== 1) fail("Bech32 checksum mismatch");
  return { hrp, data: Uint8Array.from(convertBits(values.slice(0, -6), 5, 8, false, path)) };
}
