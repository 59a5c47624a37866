// The Curl-P-81 nonce search in plain JavaScript: the fallback where WebAssembly cannot run (a page whose
// Content-Security-Policy lacks 'wasm-unsafe-eval', `node --jitless`). Bitsliced like the WASM kernels (trits as a lo
// and a hi bit-plane, same S-box), 32 nonces per transform in the bits of Int32 words; roughly 10–20× slower.
//
// Self-contained on purpose (no imports, no closures over module scope): assembly/build.mjs transpiles this file
// and embeds createJsKernel's JavaScript in the worker source, so workers and this thread run the same code.

/** One instance per thread: its state arrays are allocated once. */
export interface JsKernel {
  /** Sets the 32-byte PoW digest the following searches use. */
  setDigest(digest: Uint8Array): void;
  /** The first nonce n, first ≤ n ≤ last, whose hash ends in ≥ target zero trits; −1n if none. */
  search(target: number, first: bigint, last: bigint): bigint;
}

/** The PoW search in plain JavaScript (32 nonces per transform, bitsliced): what the miner runs where WebAssembly is refused. */
export function createJsKernel(): JsKernel {
  const STATE = 729;
  const LANES = 32;
  // The balanced trits of every byte's b1t6 encoding (TIP-5), 6 per byte: byte b read as int8, plus 364, is two trytes.
  const byteTrits = new Int8Array(256 * 6);
  for (let b = 0; b < 256; b++) {
    const v = ((b << 24) >> 24) + 364;
    const trytes = [(v % 27) - 13, Math.floor(v / 27) - 13];
    for (let k = 0; k < 2; k++) {
      let t = trytes[k]!;
      for (let j = 0; j < 3; j++) {
        const r = ((t % 3) + 3) % 3;
        const trit = r === 2 ? -1 : r;
        byteTrits[b * 6 + k * 3 + j] = trit;
        t = (t - trit) / 3;
      }
    }
  }
  // Encoding (as in the WASM kernels): −1 = lo 1 hi 0, 0 = lo 1 hi 1, +1 = lo 0 hi 1; a broadcast trit fills all lanes.
  const loOf = (trit: number): number => (trit > 0 ? 0 : -1);
  const hiOf = (trit: number): number => (trit < 0 ? 0 : -1);
  // The lowest nonce byte differs between lanes: lane j of group g carries byte 32g + j. 8 groups × 6 trits × 2 planes.
  const laneLo = new Int32Array(8 * 6);
  const laneHi = new Int32Array(8 * 6);
  for (let g = 0; g < 8; g++) {
    for (let m = 0; m < 6; m++) {
      let lo = 0;
      let hi = 0;
      for (let j = 0; j < LANES; j++) {
        const trit = byteTrits[(g * LANES + j) * 6 + m]!;
        if (trit <= 0) lo |= 1 << j;
        if (trit >= 0) hi |= 1 << j;
      }
      laneLo[g * 6 + m] = lo;
      laneHi[g * 6 + m] = hi;
    }
  }
  // Curl's permutation: round output i reads p(i) = 364·i mod 729 and p(i + 1).
  const from = new Int16Array(STATE + 1);
  for (let i = 0, p = 0; i <= STATE; i++, p = p < 365 ? p + 364 : p - 365) from[i] = p;

  const templateLo = new Int32Array(STATE).fill(-1);
  const templateHi = new Int32Array(STATE).fill(-1);
  let aLo = new Int32Array(STATE);
  let aHi = new Int32Array(STATE);
  let bLo = new Int32Array(STATE);
  let bHi = new Int32Array(STATE);

  function setDigest(digest: Uint8Array): void {
    for (let i = 0; i < 32; i++) {
      for (let m = 0; m < 6; m++) {
        const trit = byteTrits[digest[i]! * 6 + m]!;
        templateLo[i * 6 + m] = loOf(trit);
        templateHi[i * 6 + m] = hiOf(trit);
      }
    }
  }

  /** 81 rounds for the 32 nonces base .. base + 31 (base a multiple of 32); returns the lanes meeting `target`. */
  function transform(base: bigint, target: number): number {
    aLo.set(templateLo);
    aHi.set(templateHi);
    const group = Number((base >> 5n) & 7n);
    for (let m = 0; m < 6; m++) {
      aLo[192 + m] = laneLo[group * 6 + m]!;
      aHi[192 + m] = laneHi[group * 6 + m]!;
    }
    for (let byte = 1; byte < 8; byte++) {
      const b = Number((base >> BigInt(8 * byte)) & 0xffn);
      for (let m = 0; m < 6; m++) {
        const trit = byteTrits[b * 6 + m]!;
        aLo[192 + byte * 6 + m] = loOf(trit);
        aHi[192 + byte * 6 + m] = hiOf(trit);
      }
    }
    // Trits 240 .. 728 stay zero (lo 1, hi 1) from the template.
    for (let round = 0; round < 80; round++) {
      for (let i = 0; i < STATE; i++) {
        const p = from[i]!;
        const q = from[i + 1]!;
        const xLo = aLo[p]!;
        const lo = aHi[p]! ^ (xLo & ~aLo[q]!);
        bLo[i] = lo;
        bHi[i] = xLo ^ (aHi[q]! & lo);
      }
      const tLo = aLo;
      const tHi = aHi;
      aLo = bLo;
      aHi = bHi;
      bLo = tLo;
      bHi = tHi;
    }
    // Round 81 only for the trits the target looks at: the hash's last `target` trits must be 0 (lo 1 and hi 1).
    let ok = -1;
    for (let i = 243 - target; i < 243 && ok !== 0; i++) {
      const p = from[i]!;
      const q = from[i + 1]!;
      const xLo = aLo[p]!;
      const lo = aHi[p]! ^ (xLo & ~aLo[q]!);
      ok &= lo & (xLo ^ (aHi[q]! & lo));
    }
    return ok;
  }

  function search(target: number, first: bigint, last: bigint): bigint {
    let base = first & ~31n;
    for (;;) {
      let ok = transform(base, target);
      if (first > base) ok &= -1 << Number(first - base);
      if (last - base < 31n) ok &= (1 << (Number(last - base) + 1)) - 1;
      if (ok !== 0) return base + BigInt(31 - Math.clz32(ok & -ok));
      if (last - base < 32n) return -1n;
      base += 32n;
    }
  }

  return { setDigest, search };
}
