// Bitsliced Curl-P-81 PoW search without SIMD: 64 nonces per transform in the bits of u64 words.
// The loader picks it where WebAssembly SIMD is missing; it mirrors assembly/simd.ts line for line.

// Memory map: the kernel owns bytes 0 .. 393215 (6 pages); asc's own data starts at --memoryBase 393216.
// The loader in src/pow/kernel.ts repeats the host-facing offsets (DIGEST, RESULT, LANES_OUT, IO_TRITS).
const DIGEST: usize = 0; // 32 bytes: the PoW digest, written by the host before setDigest()
const RESULT: usize = 64; // u64: the nonce search() found
const LANES_OUT: usize = 128; // 64 bytes: per-lane trailing zeros from laneZeros()
const IO_TRITS: usize = 256; // 243 i8 trits: hashTrits() input and output
const LANE_TABLE: usize = 1024; // 4 quarters × 6 trits × T: the lowest nonce byte per lane
const MARKS: usize = 8192; // ≤ 9 × 729 bytes: which trits a round needs (scratch for the lists)
const HEAD_LIST: usize = 16384; // ≤ 5 × 729 entries of 12 B: the sparse rounds 1..5
const TAIL_LIST: usize = 65536; // ≤ 8 × 729 entries of 12 B: the sparse rounds 81 − TAIL .. 80
const STATES: usize = 147456; // S0 .. S5, then A and B: 8 states of 729 trits × T

const T: usize = 16; // bytes per trit: lo plane at +0, hi plane at +8
const STATE: usize = 729 * T;
const LANES: u64 = 64;
const ONES: u64 = ~(<u64>0);

// @ts-ignore: decorator
@inline function S(r: u32): usize {
  return STATES + <usize>r * STATE;
}
const STATE_A: usize = STATES + 6 * STATE;
const STATE_B: usize = STATES + 7 * STATE;

/** Sparse rounds at the start (from the block template) and at the end (for the target); fused passes between. */
const HEAD: u32 = 4;
const TAIL: u32 = 8;
const PASSES: u32 = (80 - HEAD - TAIL) / 2;
/** Where the fused passes leave the state (pass 1 writes A, then B, A, …), and where the tail leaves it. */
const TAIL_FROM: usize = PASSES & 1 ? STATE_A : STATE_B;
const TAIL_TO: usize = TAIL & 1 ? (TAIL_FROM == STATE_A ? STATE_B : STATE_A) : TAIL_FROM;

// @ts-ignore: decorator
@inline function and(a: u64, b: u64): u64 {
  return a & b;
}
// @ts-ignore: decorator
@inline function andnot(a: u64, b: u64): u64 {
  return a & ~b;
}
// @ts-ignore: decorator
@inline function xor(a: u64, b: u64): u64 {
  return a ^ b;
}

// The S-box: new = TT[a + 4b + 5] in 4 operations on this encoding (no plane needs inverting):
// lo' = ah ^ (al & ~bl), hi' = al ^ (bh & lo'). Found by exhaustive search over 4-gate circuits.
// Each call site spells it out so that the values stay in locals.

// Round structure of search(): within one batch only the nonce's lowest byte differs between lanes, and between
// batches of one 65536-nonce block only its two lowest bytes (trits 192..203) change. Rounds 1..HEAD therefore
// start from a template (full rounds, once per block) and recompute only the trits those 12 reach (the head list:
// 24, 48, 96, 192 trits). The middle rounds are fused passes. The last TAIL rounds compute only the trits that the
// target's last-round trits depend on (the tail list, 606 of 5832 at 13 zeros), and round 81 only those target
// trits. HEAD 4 / TAIL 8 measured best of (3, 9), (4, 6), (4, 8), (5, 5), (5, 7), by 2–3 % over (5, 5).

/** Two rounds in one pass: t_i = S(src[547i], src[547i+364]) is round one's output at 364i, dst[i] = S(t_i, t_(i+1)).
 * 547·4 ≡ 1 (mod 729), so unrolling by 4 turns every index into k + constant with no wrap for k ≤ 181:
 * t_(4k+1) = S(src[k+547], src[k+182]), t_(4k+2) = S(src[k+365], src[k]), t_(4k+3) = S(src[k+183], src[k+547]),
 * t_(4k+4) = S(src[k+1], src[k+365]). */
function fusedRounds(src: usize, dst: usize): void {
  let aL = load<u64>(src, 0);
  let aH = load<u64>(src, 8);
  let bL = load<u64>(src, 364 * T);
  let bH = load<u64>(src, 364 * T + 8);
  const t0L = xor(aH, andnot(aL, bL));
  const t0H = xor(aL, and(bH, t0L));
  let pL = t0L;
  let pH = t0H;
  // Carried between steps: src[k] and src[k+182] were loaded by the step before as src[k+1] and src[k+183].
  // Two steps (k, k+1; 8 outputs) per iteration: 182 = 91 · 2. Measured: carrying +6–9 %, the second step +6–8 %.
  let kL = load<u64>(src, 0);
  let kH = load<u64>(src, 8);
  let k182L = load<u64>(src, 182 * T);
  let k182H = load<u64>(src, 182 * T + 8);
  let s = src;
  let d = dst;
  const sEnd = src + 182 * T;
  while (s < sEnd) {
    {
      const x547L = load<u64>(s, 547 * T);
      const x547H = load<u64>(s, 547 * T + 8);
      const n1L = xor(x547H, andnot(x547L, k182L));
      const n1H = xor(x547L, and(k182H, n1L));
      let oL = xor(pH, andnot(pL, n1L));
      store<u64>(d, oL, 0 * T);
      store<u64>(d, xor(pL, and(n1H, oL)), 0 * T + 8);
      const x365L = load<u64>(s, 365 * T);
      const x365H = load<u64>(s, 365 * T + 8);
      const n2L = xor(x365H, andnot(x365L, kL));
      const n2H = xor(x365L, and(kH, n2L));
      oL = xor(n1H, andnot(n1L, n2L));
      store<u64>(d, oL, 1 * T);
      store<u64>(d, xor(n1L, and(n2H, oL)), 1 * T + 8);
      k182L = load<u64>(s, 183 * T);
      k182H = load<u64>(s, 183 * T + 8);
      const n3L = xor(k182H, andnot(k182L, x547L));
      const n3H = xor(k182L, and(x547H, n3L));
      oL = xor(n2H, andnot(n2L, n3L));
      store<u64>(d, oL, 2 * T);
      store<u64>(d, xor(n2L, and(n3H, oL)), 2 * T + 8);
      kL = load<u64>(s, 1 * T);
      kH = load<u64>(s, 1 * T + 8);
      const n4L = xor(kH, andnot(kL, x365L));
      const n4H = xor(kL, and(x365H, n4L));
      oL = xor(n3H, andnot(n3L, n4L));
      store<u64>(d, oL, 3 * T);
      store<u64>(d, xor(n3L, and(n4H, oL)), 3 * T + 8);
      pL = n4L;
      pH = n4H;
    }
    {
      const x547L = load<u64>(s, (547 + 1) * T);
      const x547H = load<u64>(s, (547 + 1) * T + 8);
      const n1L = xor(x547H, andnot(x547L, k182L));
      const n1H = xor(x547L, and(k182H, n1L));
      let oL = xor(pH, andnot(pL, n1L));
      store<u64>(d, oL, 4 * T);
      store<u64>(d, xor(pL, and(n1H, oL)), 4 * T + 8);
      const x365L = load<u64>(s, (365 + 1) * T);
      const x365H = load<u64>(s, (365 + 1) * T + 8);
      const n2L = xor(x365H, andnot(x365L, kL));
      const n2H = xor(x365L, and(kH, n2L));
      oL = xor(n1H, andnot(n1L, n2L));
      store<u64>(d, oL, 5 * T);
      store<u64>(d, xor(n1L, and(n2H, oL)), 5 * T + 8);
      k182L = load<u64>(s, (183 + 1) * T);
      k182H = load<u64>(s, (183 + 1) * T + 8);
      const n3L = xor(k182H, andnot(k182L, x547L));
      const n3H = xor(k182L, and(x547H, n3L));
      oL = xor(n2H, andnot(n2L, n3L));
      store<u64>(d, oL, 6 * T);
      store<u64>(d, xor(n2L, and(n3H, oL)), 6 * T + 8);
      kL = load<u64>(s, (1 + 1) * T);
      kH = load<u64>(s, (1 + 1) * T + 8);
      const n4L = xor(kH, andnot(kL, x365L));
      const n4H = xor(kL, and(x365H, n4L));
      oL = xor(n3H, andnot(n3L, n4L));
      store<u64>(d, oL, 7 * T);
      store<u64>(d, xor(n3L, and(n4H, oL)), 7 * T + 8);
      pL = n4L;
      pH = n4H;
    }
    s += 2 * T;
    d += 8 * T;
  }
  const oL = xor(pH, andnot(pL, t0L));
  store<u64>(d, oL, 0);
  store<u64>(d, xor(pL, and(t0H, oL)), 8);
}

/** One full round: dst[i] = S(src[p(i)], src[p(i+1)]), p(i) = 364i mod 729. */
function fullRound(src: usize, dst: usize): void {
  let p: usize = 0;
  for (let i: usize = 0; i < 729; i++) {
    const q = p < 365 ? p + 364 : p - 365;
    const a = src + p * T;
    const b = src + q * T;
    const aL = load<u64>(a, 0);
    const oL = xor(load<u64>(a, 8), andnot(aL, load<u64>(b, 0)));
    store<u64>(dst + i * T, oL, 0);
    store<u64>(dst + i * T, xor(aL, and(load<u64>(b, 8), oL)), 8);
    p = q;
  }
}

/** Runs a list of (dst, a, b) addresses: dst = S(a, b). */
function sparseRounds(list: usize, end: usize): void {
  for (let e = list; e < end; e += 12) {
    const d = <usize>load<u32>(e, 0);
    const a = <usize>load<u32>(e, 4);
    const b = <usize>load<u32>(e, 8);
    const aL = load<u64>(a, 0);
    const oL = xor(load<u64>(a, 8), andnot(aL, load<u64>(b, 0)));
    store<u64>(d, oL, 0);
    store<u64>(d, xor(aL, and(load<u64>(b, 8), oL)), 8);
  }
}

/** Appends to `out` one entry per marked output trit i of a round from src to dst; returns the new end. */
function emitRound(marks: usize, src: usize, dst: usize, out: usize): usize {
  let p: usize = 0;
  for (let i: usize = 0; i < 729; i++) {
    const q = p < 365 ? p + 364 : p - 365;
    if (load<u8>(marks + i) != 0) {
      store<u32>(out, <u32>(dst + i * T), 0);
      store<u32>(out, <u32>(src + p * T), 4);
      store<u32>(out, <u32>(src + q * T), 8);
      out += 12;
    }
    p = q;
  }
  return out;
}

let headEnd: usize = 0;

/** The head list: rounds 1..5 for the trits that trits 192..203 (the two lowest nonce bytes) reach. */
function buildHead(): void {
  memory.fill(MARKS, 0, (HEAD + 1) * 729);
  memory.fill(MARKS + 192, 1, 12);
  let out = HEAD_LIST;
  for (let r: usize = 1; r <= HEAD; r++) {
    const from = MARKS + (r - 1) * 729;
    const to = MARKS + r * 729;
    let p: usize = 0;
    for (let i: usize = 0; i < 729; i++) {
      const q = p < 365 ? p + 364 : p - 365;
      if (load<u8>(from + p) != 0 || load<u8>(from + q) != 0) store<u8>(to + i, 1);
      p = q;
    }
    out = emitRound(to, S(<u32>r - 1), S(<u32>r), out);
  }
  headEnd = out;
}

let tailEnd: usize = 0;
let tailTarget: u32 = 0xffffffff;

/** The tail list for `target` zeros: rounds 81 − TAIL .. 80 for the trits round 81's trits 243 − target .. 242
 * depend on (at 13 zeros: 268, 140, 76, 44, 28, 20, 16, 14 trits), alternating from TAIL_FROM. */
function buildTail(target: u32): void {
  if (target == tailTarget) return;
  tailTarget = target;
  memory.fill(MARKS, 0, (TAIL + 1) * 729);
  // MARKS + TAIL·729: round 81's wanted outputs; MARKS + r·729: the needed outputs of the tail's round r.
  memory.fill(MARKS + <usize>TAIL * 729 + 243 - target, 1, target);
  for (let r: i32 = <i32>TAIL - 1; r >= 0; r--) {
    const want = MARKS + <usize>(r + 1) * 729;
    const need = MARKS + <usize>r * 729;
    let p: usize = 0;
    for (let i: usize = 0; i < 729; i++) {
      const q = p < 365 ? p + 364 : p - 365;
      if (load<u8>(want + i) != 0) {
        store<u8>(need + p, 1);
        store<u8>(need + q, 1);
      }
      p = q;
    }
  }
  let out = TAIL_LIST;
  const other = TAIL_FROM == STATE_A ? STATE_B : STATE_A;
  for (let r: usize = 0; r < TAIL; r++) {
    const src = (r & 1) == 0 ? TAIL_FROM : other;
    const dst = (r & 1) == 0 ? other : TAIL_FROM;
    out = emitRound(MARKS + r * 729, src, dst, out);
  }
  tailEnd = out;
}

/** Round 81 for hash trit i alone, from `state`: sets lastL/lastH. */
let lastL: u64 = ONES;
let lastH: u64 = ONES;
// @ts-ignore: decorator
@inline function lastRoundTrit(state: usize, i: u32): void {
  const p = (i * 364) % 729;
  const q = p < 365 ? p + 364 : p - 365;
  const a = state + <usize>p * T;
  const b = state + <usize>q * T;
  const aL = load<u64>(a, 0);
  const bL = load<u64>(b, 0);
  lastL = xor(load<u64>(a, 8), andnot(aL, bL));
  lastH = xor(aL, and(load<u64>(b, 8), lastL));
}

/** Balanced trit m (0..5) of the b1t6 encoding of byte b. */
function byteTrit(b: u32, m: u32): i32 {
  const v = <i32>(<i8>b) + 364;
  let t = m < 3 ? (v % 27) - 13 : v / 27 - 13;
  for (let j: u32 = 0; j < m % 3; j++) {
    const r = ((t % 3) + 3) % 3;
    t = (t - (r == 2 ? -1 : r)) / 3;
  }
  const r = ((t % 3) + 3) % 3;
  return r == 2 ? -1 : r;
}

// @ts-ignore: decorator
@inline function storeBroadcast(at: usize, trit: i32): void {
  store<u64>(at, trit > 0 ? 0 : ONES, 0);
  store<u64>(at, trit < 0 ? 0 : ONES, 8);
}

/** The lane table: lane j of quarter h carries the lowest nonce byte 64h + j. */
function buildLaneTable(): void {
  memory.fill(LANE_TABLE, 0, 4 * 6 * T);
  for (let h: u32 = 0; h < 4; h++) {
    for (let j: u32 = 0; j < 64; j++) {
      for (let m: u32 = 0; m < 6; m++) {
        const trit = byteTrit(h * 64 + j, m);
        const at = LANE_TABLE + <usize>(h * 6 + m) * T + <usize>(j >> 3);
        const bit: u32 = 1 << (j & 7);
        if (trit <= 0) store<u8>(at, <u32>load<u8>(at) | bit);
        if (trit >= 0) store<u8>(at + 8, <u32>load<u8>(at + 8) | bit);
      }
    }
  }
}

let ready = false;
let block: u64 = 0;
let blockValid = false;

/** Reads the 32-byte digest at DIGEST into S0 (trits 0..191, broadcast). */
export function setDigest(): void {
  if (!ready) {
    buildLaneTable();
    buildHead();
    ready = true;
  }
  for (let i: u32 = 0; i < 32; i++) {
    const b = <u32>load<u8>(DIGEST + i);
    for (let m: u32 = 0; m < 6; m++) storeBroadcast(S(0) + <usize>(i * 6 + m) * T, byteTrit(b, m));
  }
  blockValid = false;
}

/** S0's nonce trits for bytes 2..7 of `base` and the zero tail, then S1..S5 in full: the template of a block. */
function buildBlock(base: u64): void {
  for (let byte: u32 = 0; byte < 8; byte++) {
    const b = <u32>((base >> (8 * byte)) & 0xff);
    for (let m: u32 = 0; m < 6; m++) storeBroadcast(S(0) + <usize>(192 + byte * 6 + m) * T, byteTrit(b, m));
  }
  for (let at = S(0) + 240 * T; at < S(0) + 729 * T; at += 8) store<u64>(at, ONES);
  for (let r: u32 = 1; r <= HEAD; r++) fullRound(S(r - 1), S(r));
  block = base >> 16;
  blockValid = true;
}

/** 80 rounds for nonces base .. base + 63 (base a multiple of 64); the state ends in TAIL_TO, valid on the tail's trits. */
function transform(base: u64): void {
  if (!blockValid || base >> 16 != block) buildBlock(base);
  memory.copy(S(0) + 192 * T, LANE_TABLE + <usize>((base >> 6) & 3) * 6 * T, 6 * T);
  const b1 = <u32>((base >> 8) & 0xff);
  for (let m: u32 = 0; m < 6; m++) storeBroadcast(S(0) + <usize>(198 + m) * T, byteTrit(b1, m));
  sparseRounds(HEAD_LIST, headEnd);
  fusedRounds(S(HEAD), STATE_A);
  for (let r: u32 = 1; r < PASSES; r += 2) {
    fusedRounds(STATE_A, STATE_B);
    if (r + 1 < PASSES) fusedRounds(STATE_B, STATE_A);
  }
  sparseRounds(TAIL_LIST, tailEnd);
}

// @ts-ignore: decorator
@inline function bits(lo: u64, hi: u64): u64 {
  return (~(<u64>0) << lo) & (~(<u64>0) >> (63 - hi));
}

/** Finds the first nonce n with first ≤ n ≤ last whose hash ends in at least `target` zero trits.
 * Returns 1 and stores n at RESULT, or 0. setDigest() must have run. */
export function search(target: u32, first: u64, last: u64): u32 {
  buildTail(target);
  let base = first & ~(LANES - 1);
  while (true) {
    transform(base);
    let ok = ONES;
    for (let i: u32 = 243 - target; i < 243; i++) {
      lastRoundTrit(TAIL_TO, i);
      ok = and(ok, and(lastL, lastH));
    }
    const lo = first > base ? first - base : 0;
    const hi = last - base < LANES - 1 ? last - base : LANES - 1;
    if (lo > 0 || hi < LANES - 1) ok = and(ok, bits(lo, hi));
    if (ok != 0) {
      store<u64>(RESULT, base + ctz(ok));
      return 1;
    }
    if (last - base < LANES) return 0;
    base += LANES;
  }
}

/** For tests: the trailing zero trits of nonces base .. base+63 (base a multiple of 64), one byte per lane at
 * LANES_OUT, through the same path as search() (tail list for all 243 trits). */
export function laneZeros(base: u64): void {
  buildTail(243);
  transform(base);
  let alive = ONES;
  memory.fill(LANES_OUT, 0, 64);
  for (let i: i32 = 242; i >= 0; i--) {
    lastRoundTrit(TAIL_TO, <u32>i);
    alive = and(alive, and(lastL, lastH));
    if (alive == 0) break;
    for (let j: u32 = 0; j < 64; j++) {
      if ((alive >> j) & 1) store<u8>(LANES_OUT + j, load<u8>(LANES_OUT + j) + 1);
    }
  }
}

/** One hash (trailingZeros/powScore, and the Curl-P-81 vectors): Curl-P-81 of the 243 trits at IO_TRITS (one absorb, every lane alike) with 40 plain fused passes and
 * a full last round; the 243 hash trits of lane 0 replace the input. Returns 1 when all 64 lanes agree. */
export function hashTrits(): u32 {
  for (let i: u32 = 0; i < 243; i++) storeBroadcast(STATE_A + <usize>i * T, <i32>load<i8>(IO_TRITS + i));
  for (let at = STATE_A + 243 * T; at < STATE_A + 729 * T; at += 8) store<u64>(at, ONES);
  for (let r = 0; r < 20; r++) {
    fusedRounds(STATE_A, STATE_B);
    fusedRounds(STATE_B, STATE_A);
  }
  let same: u32 = 1;
  for (let i: u32 = 0; i < 243; i++) {
    lastRoundTrit(STATE_A, i);
    const l = lastL & 1;
    const h = lastH & 1;
    store<i8>(IO_TRITS + i, <i8>(l == 0 ? 1 : h == 0 ? -1 : 0));
    if (lastL != (l != 0 ? ONES : 0) || lastH != (h != 0 ? ONES : 0)) same = 0;
  }
  return same;
}
