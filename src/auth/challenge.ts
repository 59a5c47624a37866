// Stateless prove-ownership nonces: a nonce carries the second it was issued in and a MAC binding it to one identity
// under a server key, so issuing one stores nothing that anonymous traffic could fill; only redeemed nonces are kept.
//
// Layout (20 bytes, sent as the 40 lowercase hex characters the Integration Services client insists on):
//   byte  0..3   issued: u32 big-endian, whole seconds since the Unix epoch (good until 2106)
//   byte  4      lane: 0 .. MAX_LANES - 1, which of the identity's nonces of that second
//   bytes 5..19  HMAC-SHA-256(key, DOMAIN ‖ issued ‖ lane ‖ UTF-8 identity id), first 15 bytes (120 bits)
// There is no random part, on purpose: the IS client's POST carries only the signature, so the server must be able to
// rebuild every nonce it may have issued to the identity lately and try the signature against each. A nonce is thus a
// function of (identity, second, lane). The MAC makes nonces unforgeable without the key (a client cannot pick its own,
// e.g. one with a far-off issue time or one a signature was harvested for elsewhere), and binds each to its identity.
import { toHex } from "../bytes/hex.js";
import { AUTH_NONCE_BYTES } from "./nonce.js";
import { hmacSha256Text } from "./primitives.js";

/** Bytes of the issue time and lane at the front of a nonce. */
const ISSUED_BYTES = 4;
const HEAD_BYTES = ISSUED_BYTES + 1;
/** Nonces one identity can have per second (lanes). */
export const MAX_LANES = 16;
/** Separates these MACs from any other use of the key. */
const encoder = new TextEncoder();
const DOMAIN = encoder.encode("chrysalis-core/prove-ownership/nonce/v1\u0000");
/** The latest issue second a u32 holds. */
export const MAX_ISSUED_SECONDS = 0xffff_ffff;

/** Mints and recognises nonces under one key. */
export interface NonceMinter {
  /** The nonce of `identityId` for the second `issued` (seconds since the epoch) and `lane` (0 .. MAX_LANES - 1). */
  nonce(identityId: string, issued: number, lane: number): string;
}

/** A minter over a key of at least 32 bytes (the key schedule runs once). */
export function nonceMinter(key: Uint8Array): NonceMinter {
  // The tag as hex, straight from the MAC: a nonce is the head's hex and the first 15 bytes' (30 digits) of it.
  const mac = hmacSha256Text(key, "hex");
  const at = DOMAIN.length;
  const input = new Uint8Array(at + HEAD_BYTES + 4 * 256);
  input.set(DOMAIN);
  const view = new DataView(input.buffer);
  // The identity's bytes go here; MACed as views of the whole input by length, made once each (an id of n bytes uses
  // inputs[n]), rather than a subarray per nonce.
  const idTarget = input.subarray(at + HEAD_BYTES);
  const inputs: Uint8Array[] = [];
  const head = input.subarray(at, at + HEAD_BYTES);
  return {
    nonce(identityId: string, issued: number, lane: number): string {
      view.setUint32(at, issued, false);
      input[at + ISSUED_BYTES] = lane;
      // The identity id comes last, so the input is unambiguous without a length prefix. Ids up to 256 characters (the
      // default validator's bound) fit the scratch; a longer one from a custom validator is encoded on its own. An ASCII
      // id (every id the default validator accepts) is copied character by character: TextEncoder's encodeInto is a
      // call into C++ for the few dozen bytes of a DID.
      let written = -1;
      const n = identityId.length;
      if (n <= idTarget.length) {
        let i = 0;
        for (; i < n; i++) {
          const c = identityId.charCodeAt(i);
          if (c >= 0x80) break;
          idTarget[i] = c;
        }
        if (i === n) written = n;
      }
      if (written < 0) {
        const result = encoder.encodeInto(identityId, idTarget);
        if (result.read === n) written = result.written;
      }
      let tag: string;
      if (written >= 0) tag = mac((inputs[written] ??= input.subarray(0, at + HEAD_BYTES + written)));
      else {
        const id = encoder.encode(identityId);
        const whole = new Uint8Array(at + HEAD_BYTES + id.length);
        whole.set(input.subarray(0, at + HEAD_BYTES));
        whole.set(id, at + HEAD_BYTES);
        tag = mac(whole);
      }
      return toHex(head) + tag.slice(0, 2 * (AUTH_NONCE_BYTES - HEAD_BYTES));
    },
  };
}

/** The issue second and lane written in a nonce (which must already be known to be 40 lowercase hex characters). */
export function nonceIssuedAt(nonce: string): {
  /** The second it was issued in, since the epoch. */
  issued: number;
  /** Its lane within that second. */
  lane: number;
} {
  return { issued: Number.parseInt(nonce.slice(0, 2 * ISSUED_BYTES), 16), lane: Number.parseInt(nonce.slice(2 * ISSUED_BYTES, 2 * HEAD_BYTES), 16) };
}
