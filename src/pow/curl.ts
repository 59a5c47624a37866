// Curl-P-81 in plain TypeScript, one trit per array cell: the reference the WASM kernel is tested against.
// Slow by design (readability over speed); mining never uses it.
import { ProtocolError } from "../bytes/errors.js";

/** Curl's state: 3 × 243 trits; the hash is the first 243. */
export const CURL_STATE_TRITS = 729;
/** Trits in a Curl hash, and in the input absorbed per transform. */
export const CURL_HASH_TRITS = 243;
/** Rounds of Curl-P-81's transform. */
export const CURL_ROUNDS = 81;

/** new = TT[a + 4b + 5] (`PROTOCOL.md` §5). */
const TRUTH_TABLE = Int8Array.of(1, 0, -1, 2, 1, -1, 0, 2, -1, 1, 0);

/** Curl-P-81 of up to 243 trits absorbed once into a zero state (shorter input is zero-padded): the 243 hash trits. */
export function curlP81(trits: Int8Array): Int8Array {
  if (!(trits instanceof Int8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected an Int8Array of trits", { path: "trits" });
  if (trits.length > CURL_HASH_TRITS) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `at most ${CURL_HASH_TRITS} trits, got ${trits.length}`, { path: "trits" });
  let state = new Int8Array(CURL_STATE_TRITS);
  for (let i = 0; i < trits.length; i++) {
    const t = trits[i]!;
    if (t !== -1 && t !== 0 && t !== 1) throw new ProtocolError("VALUE_OUT_OF_RANGE", "a trit must be -1, 0 or 1", { path: `trits[${i}]` });
    state[i] = t;
  }
  let next = new Int8Array(CURL_STATE_TRITS);
  for (let round = 0; round < CURL_ROUNDS; round++) {
    let p = 0;
    for (let i = 0; i < CURL_STATE_TRITS; i++) {
      const q = p < 365 ? p + 364 : p - 365;
      next[i] = TRUTH_TABLE[state[p]! + 4 * state[q]! + 5]!;
      p = q;
    }
    [state, next] = [next, state];
  }
  return state.slice(0, CURL_HASH_TRITS);
}
