// libsodium's part in Ed25519 verification (ed25519.ts): loading it, and when its verdict may be taken as it is.
// libsodium 1.0.21 (what sodium-native 5.1.0 builds, pinned in package.json) checks, in this order:
//   1. S < L;
//   2. R is not of small order;
//   3. A has a canonical y (below p) and is not of small order (2 and 3 by the encodings, the sign bit left out);
//   4. A decodes, and the encoding of [S]B − [k]A equals R byte for byte, with k = SHA-512(R ‖ A ‖ message) mod L.
// OpenSSL checks 1 and 4 alone (the strict rules' definition), so libsodium's "valid" implies OpenSSL's, and where
// libsodium refused at 1 or 4, OpenSSL refuses too. Only a refusal at 2 or 3 may differ: those go on to OpenSSL.
// A libsodium that decided otherwise would break that (its development branch checks a cofactored equation, which
// accepts what OpenSSL refuses): hence the exact version in package.json, and test/ed25519.test.ts asks the installed
// one every published speccheck case.
import * as ed from "@noble/ed25519";
import { copyBytes } from "../bytes/bytes.js";
import { toHex } from "../bytes/hex.js";
import { nativeCrypto } from "./native.js";

/** The one libsodium call the library makes (sodium-native's binding: true when the signature verifies). */
export interface Sodium {
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): unknown;
}

let loaded: Sodium | null | undefined;

/**
 * sodium-native (an optional dependency: a prebuilt addon), loaded at the first verification rather than with the
 * package: undefined in browsers, where it is not installed or its addon does not load, and on Node before 20.16 (no
 * process.getBuiltinModule to load it synchronously). A require made at run time, which no bundler follows.
 */
export function libsodium(): Sodium | undefined {
  if (loaded === undefined) loaded = loadSodium() ?? null;
  return loaded ?? undefined;
}

function loadSodium(): Sodium | undefined {
  if (nativeCrypto === undefined) return undefined;
  const node = process as { getBuiltinModule?: (id: string) => unknown };
  if (typeof node.getBuiltinModule !== "function") return undefined;
  try {
    const { createRequire } = node.getBuiltinModule("node:module") as typeof import("node:module");
    const sodium = createRequire(import.meta.url)("sodium-native") as Partial<Sodium>;
    return typeof sodium.crypto_sign_verify_detached === "function" ? (sodium as Sodium) : undefined;
  } catch {
    return undefined;
  }
}

const { p: P, n: L } = ed.Point.CURVE();
const TWO_255 = 2n ** 255n;

/** 32 little-endian bytes of a value below 2^256. */
function littleEndian32(value: bigint): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn));
}

const ORDER_LE = littleEndian32(L);
const P_LE = littleEndian32(P);

/** Whether the 32 little-endian bytes of `bytes` at `at` (their top bit left out when `masked`) are below `limit`. */
function below(bytes: Uint8Array, at: number, limit: Uint8Array, masked: boolean): boolean {
  for (let i = 31; i >= 0; i--) {
    const b = i === 31 && masked ? bytes[at + i]! & 0x7f : bytes[at + i]!;
    const l = limit[i]!;
    if (b !== l) return b < l;
  }
  return false;
}

/** An encoding's y (its first 32 bytes, sign bit cleared) as hex. */
function maskedHex(encoding: Uint8Array): string {
  const y = copyBytes(encoding, 0, 32); // the caller's signature or key stays as it was
  y[31]! &= 0x7f;
  return toHex(y);
}

let smallOrder: Set<string> | undefined;

/**
 * The encodings (sign bit clear, as hex) of every point of small order, y ≥ p included: the y of each multiple of a
 * point of order 8 (the torsion part of a point outside the prime-order subgroup: n·P), and y + p where that is below
 * 2^255. Derived once, on the first refusal that needs it.
 */
export function smallOrderEncodings(): ReadonlySet<string> {
  if (smallOrder !== undefined) return smallOrder;
  let torsion: ed.Point | undefined;
  for (let y = 2n; torsion === undefined; y++) {
    let point: ed.Point;
    try {
      point = ed.Point.fromBytes(littleEndian32(y), true);
    } catch {
      continue; // no x for this y
    }
    const part = point.multiplyUnsafe(L - 1n).add(point);
    if (!part.double().double().is0()) torsion = part;
  }
  const found = new Set<string>();
  for (let i = 0, q = ed.Point.ZERO; i < 8; i++, q = q.add(torsion)) {
    for (const y of [q.y, q.y + P]) if (y < TWO_255) found.add(toHex(littleEndian32(y)));
  }
  return (smallOrder = found);
}

/**
 * libsodium's verdict: true (valid: final), false (refused: final under the strict rules where sodiumRefusalIsFinal
 * says so), or undefined where it gave none (S ≥ L, checked here first; a throw; anything but a boolean, as
 * sodium-native returns for memory it cannot take, a SharedArrayBuffer's): the other verifiers decide then.
 */
export function sodiumVerdict(sodium: Sodium, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean | undefined {
  if (!below(signature, 32, ORDER_LE, false)) return undefined;
  try {
    const verdict = sodium.crypto_sign_verify_detached(signature, message, publicKey);
    return typeof verdict === "boolean" ? verdict : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether libsodium's refusal of this signature is OpenSSL's too (it reached check 4 above), so that the strict rules
 * need no second verification: S < L, A's y below p, neither A nor R of small order.
 */
export function sodiumRefusalIsFinal(publicKey: Uint8Array, signature: Uint8Array): boolean {
  if (!below(signature, 32, ORDER_LE, false) || !below(publicKey, 0, P_LE, true)) return false;
  const small = smallOrderEncodings();
  return !small.has(maskedHex(publicKey)) && !small.has(maskedHex(signature));
}
