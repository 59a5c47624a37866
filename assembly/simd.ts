// Bitsliced Curl-P-81 PoW search, 128 nonces per transform in WASM SIMD (v128) lanes.
// Trits are two bit-planes (-1 = l1 h0, 0 = l1 h1, +1 = l0 h1); see PROTOCOL.md §5 and assembly/README.md.

// Memory map: the kernel owns bytes 0 .. 393215 (6 pages); asc's own data starts at --memoryBase 393216.
// The loader in src/pow/kernel.ts repeats the host-facing offsets (DIGEST, RESULT, LANES_OUT, IO_TRITS).
const DIGEST: usize = 0; // 32 bytes: the PoW digest, written by the host before setDigest()
const RESULT: usize = 64; // u64: the nonce search() found
const LANES_OUT: usize = 128; // 128 bytes: per-lane trailing zeros from laneZeros()
const IO_TRITS: usize = 256; // 243 i8 trits: hashTrits() input and output
const LANE_TABLE: usize = 1024; // 2 halves × 6 trits × T: the lowest nonce byte per lane
const MARKS: usize = 8192; // ≤ 9 × 729 bytes: which trits a round needs (scratch for the lists)
const HEAD_LIST: usize = 16384; // ≤ 5 × 729 entries of 12 B: the sparse rounds 1..5
const TAIL_LIST: usize = 65536; // ≤ 8 × 729 entries of 12 B: the sparse rounds 81 − TAIL .. 80
const STATES: usize = 147456; // S0 .. S5, then A and B: 8 states of 729 trits × T

const T: usize = 32; // bytes per trit: lo plane at +0, hi plane at +16
const STATE: usize = 729 * T;
const LANES: u64 = 128;
const ONES: v128 = i64x2(-1, -1);

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
  let aL = v128.load(src, 0);
  let aH = v128.load(src, 16);
  let bL = v128.load(src, 364 * T);
  let bH = v128.load(src, 364 * T + 16);
  const t0L = v128.xor(aH, v128.andnot(aL, bL));
  const t0H = v128.xor(aL, v128.and(bH, t0L));
  let pL = t0L;
  let pH = t0H;
  // Carried between steps: src[k] and src[k+182] were loaded by the step before as src[k+1] and src[k+183].
  // Two steps (k, k+1; 8 outputs) per iteration: 182 = 91 · 2. Measured: carrying +6–9 %, the second step +6–8 %.
  let kL = v128.load(src, 0);
  let kH = v128.load(src, 16);
  let k182L = v128.load(src, 182 * T);
  let k182H = v128.load(src, 182 * T + 16);
  let s = src;
  let d = dst;
  const sEnd = src + 182 * T;
  while (s < sEnd) {
    {
      const x547L = v128.load(s, 547 * T);
      const x547H = v128.load(s, 547 * T + 16);
      const n1L = v128.xor(x547H, v128.andnot(x547L, k182L));
      const n1H = v128.xor(x547L, v128.and(k182H, n1L));
      let oL = v128.xor(pH, v128.andnot(pL, n1L));
      v128.store(d, oL, 0 * T);
      v128.store(d, v128.xor(pL, v128.and(n1H, oL)), 0 * T + 16);
      const x365L = v128.load(s, 365 * T);
      const x365H = v128.load(s, 365 * T + 16);
      const n2L = v128.xor(x365H, v128.andnot(x365L, kL));
      const n2H = v128.xor(x365L, v128.and(kH, n2L));
      oL = v128.xor(n1H, v128.andnot(n1L, n2L));
      v128.store(d, oL, 1 * T);
      v128.store(d, v128.xor(n1L, v128.and(n2H, oL)), 1 * T + 16);
      k182L = v128.load(s, 183 * T);
      k182H = v128.load(s, 183 * T + 16);
      const n3L = v128.xor(k182H, v128.andnot(k182L, x547L));
      const n3H = v128.xor(k182L, v128.and(x547H, n3L));
      oL = v128.xor(n2H, v128.andnot(n2L, n3L));
      v128.store(d, oL, 2 * T);
      v128.store(d, v128.xor(n2L, v128.and(n3H, oL)), 2 * T + 16);
      kL = v128.load(s, 1 * T);
      kH = v128.load(s, 1 * T + 16);
      const n4L = v128.xor(kH, v128.andnot(kL, x365L));
      const n4H = v128.xor(kL, v128.and(x365H, n4L));
      oL = v128.xor(n3H, v128.andnot(n3L, n4L));
      v128.store(d, oL, 3 * T);
      v128.store(d, v128.xor(n3L, v128.and(n4H, oL)), 3 * T + 16);
      pL = n4L;
      pH = n4H;
    }
    {
      const x547L = v128.load(s, (547 + 1) * T);
      const x547H = v128.load(s, (547 + 1) * T + 16);
      const n1L = v128.xor(x547H, v128.andnot(x547L, k182L));
      const n1H = v128.xor(x547L, v128.and(k182H, n1L));
      let oL = v128.xor(pH, v128.andnot(pL, n1L));
      v128.store(d, oL, 4 * T);
      v128.store(d, v128.xor(pL, v128.and(n1H, oL)), 4 * T + 16);
      const x365L = v128.load(s, (365 + 1) * T);
      const x365H = v128.load(s, (365 + 1) * T + 16);
      const n2L = v128.xor(x365H, v128.andnot(x365L, kL));
      const n2H = v128.xor(x365L, v128.and(kH, n2L));
      oL = v128.xor(n1H, v128.andnot(n1L, n2L));
      v128.store(d, oL, 5 * T);
      v128.store(d, v128.xor(n1L, v128.and(n2H, oL)), 5 * T + 16);
      k182L = v128.load(s, (183 + 1) * T);
      k182H = v128.load(s, (183 + 1) * T + 16);
      const n3L = v128.xor(k182H, v128.andnot(k182L, x547L));
      const n3H = v128.xor(k182L, v128.and(x547H, n3L));
      oL = v128.xor(n2H, v128.andnot(n2L, n3L));
      v128.store(d, oL, 6 * T);
      v128.store(d, v128.xor(n2L, v128.and(n3H, oL)), 6 * T + 16);
      kL = v128.load(s, (1 + 1) * T);
      kH = v128.load(s, (1 + 1) * T + 16);
      const n4L = v128.xor(kH, v128.andnot(kL, x365L));
      const n4H = v128.xor(kL, v128.and(x365H, n4L));
      oL = v128.xor(n3H, v128.andnot(n3L, n4L));
      v128.store(d, oL, 7 * T);
      v128.store(d, v128.xor(n3L, v128.and(n4H, oL)), 7 * T + 16);
      pL = n4L;
      pH = n4H;
    }
    s += 2 * T;
    d += 8 * T;
  }
  const oL = v128.xor(pH, v128.andnot(pL, t0L));
  v128.store(d, oL, 0);
  v128.store(d, v128.xor(pL, v128.and(t0H, oL)), 16);
}

/** One full round: dst[i] = S(src[p(i)], src[p(i+1)]), p(i) = 364i mod 729. */
function fullRound(src: usize, dst: usize): void {
  let p: usize = 0;
  for (let i: usize = 0; i < 729; i++) {
    const q = p < 365 ? p + 364 : p - 365;
    const a = src + p * T;
    const b = src + q * T;
    const aL = v128.load(a, 0);
    const oL = v128.xor(v128.load(a, 16), v128.andnot(aL, v128.load(b, 0)));
    v128.store(dst + i * T, oL, 0);
    v128.store(dst + i * T, v128.xor(aL, v128.and(v128.load(b, 16), oL)), 16);
    p = q;
  }
}

/** Runs a list of (dst, a, b) addresses: dst = S(a, b). */
function sparseRounds(list: usize, end: usize): void {
  for (let e = list; e < end; e += 12) {
    const d = <usize>load<u32>(e, 0);
    const a = <usize>load<u32>(e, 4);
    const b = <usize>load<u32>(e, 8);
    const aL = v128.load(a, 0);
    const oL = v128.xor(v128.load(a, 16), v128.andnot(aL, v128.load(b, 0)));
    v128.store(d, oL, 0);
    v128.store(d, v128.xor(aL, v128.and(v128.load(b, 16), oL)), 16);
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
let lastL: v128 = ONES;
let lastH: v128 = ONES;
// @ts-ignore: decorator
@inline function lastRoundTrit(state: usize, i: u32): void {
  const p = (i * 364) % 729;
  const q = p < 365 ? p + 364 : p - 365;
  const a = state + <usize>p * T;
  const b = state + <usize>q * T;
  const aL = v128.load(a, 0);
  const bL = v128.load(b, 0);
  lastL = v128.xor(v128.load(a, 16), v128.andnot(aL, bL));
  lastH = v128.xor(aL, v128.and(v128.load(b, 16), lastL));
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
  v128.store(at, trit > 0 ? i64x2(0, 0) : ONES, 0);
  v128.store(at, trit < 0 ? i64x2(0, 0) : ONES, 16);
}

/** The lane table: lane j of half h carries the lowest nonce byte 128h + j. */
function buildLaneTable(): void {
  memory.fill(LANE_TABLE, 0, 2 * 6 * T);
  for (let h: u32 = 0; h < 2; h++) {
    for (let j: u32 = 0; j < 128; j++) {
      for (let m: u32 = 0; m < 6; m++) {
        const trit = byteTrit(h * 128 + j, m);
        const at = LANE_TABLE + <usize>(h * 6 + m) * T + <usize>(j >> 3);
        const bit: u32 = 1 << (j & 7);
        if (trit <= 0) store<u8>(at, <u32>load<u8>(at) | bit);
        if (trit >= 0) store<u8>(at + 16, <u32>load<u8>(at + 16) | bit);
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
  for (let at = S(0) + 240 * T; at < S(0) + 729 * T; at += 16) v128.store(at, ONES);
  for (let r: u32 = 1; r <= HEAD; r++) fullRound(S(r - 1), S(r));
  block = base >> 16;
  blockValid = true;
}

/** 80 rounds for nonces base .. base + 127 (base a multiple of 128); the state ends in TAIL_TO, valid on the tail's trits. */
function transform(base: u64): void {
  if (!blockValid || base >> 16 != block) buildBlock(base);
  memory.copy(S(0) + 192 * T, LANE_TABLE + <usize>((base >> 7) & 1) * 6 * T, 6 * T);
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

/** The lanes j with lo ≤ j ≤ hi (both in 0..127), as a mask. */
function laneRange(lo: u64, hi: u64): v128 {
  const a: u64 = lo > 63 ? 0 : bits(lo, hi < 63 ? hi : 63);
  const b: u64 = hi < 64 ? 0 : bits(lo > 64 ? lo - 64 : 0, hi - 64);
  return i64x2(a, b);
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
      ok = v128.and(ok, v128.and(lastL, lastH));
    }
    const lo = first > base ? first - base : 0;
    const hi = last - base < LANES - 1 ? last - base : LANES - 1;
    if (lo > 0 || hi < LANES - 1) ok = v128.and(ok, laneRange(lo, hi));
    if (v128.any_true(ok)) {
      const a = i64x2.extract_lane(ok, 0);
      const lane = a != 0 ? ctz(a) : 64 + ctz(i64x2.extract_lane(ok, 1));
      store<u64>(RESULT, base + <u64>lane);
      return 1;
    }
    if (last - base < LANES) return 0;
    base += LANES;
  }
}

/** For tests: the trailing zero trits of nonces base .. base+127 (base a multiple of 128), one byte per lane at
 * LANES_OUT, through the same path as search() (tail list for all 243 trits). */
export function laneZeros(base: u64): void {
  buildTail(243);
  transform(base);
  let alive = ONES;
  memory.fill(LANES_OUT, 0, 128);
  for (let i: i32 = 242; i >= 0; i--) {
    lastRoundTrit(TAIL_TO, <u32>i);
    alive = v128.and(alive, v128.and(lastL, lastH));
    if (!v128.any_true(alive)) break;
    const a = i64x2.extract_lane(alive, 0);
    const b = i64x2.extract_lane(alive, 1);
    for (let j: u32 = 0; j < 64; j++) {
      if ((a >> j) & 1) store<u8>(LANES_OUT + j, load<u8>(LANES_OUT + j) + 1);
      if ((b >> j) & 1) store<u8>(LANES_OUT + 64 + j, load<u8>(LANES_OUT + 64 + j) + 1);
    }
  }
}

/** One hash (trailingZeros/powScore, and the Curl-P-81 vectors): Curl-P-81 of the 243 trits at IO_TRITS (one absorb, every lane alike) with 40 plain fused passes and
 * a full last round; the 243 hash trits of lane 0 replace the input. Returns 1 when all 128 lanes agree. */
export function hashTrits(): u32 {
  for (let i: u32 = 0; i < 243; i++) storeBroadcast(STATE_A + <usize>i * T, <i32>load<i8>(IO_TRITS + i));
  for (let at = STATE_A + 243 * T; at < STATE_A + 729 * T; at += 16) v128.store(at, ONES);
  for (let r = 0; r < 20; r++) {
    fusedRounds(STATE_A, STATE_B);
    fusedRounds(STATE_B, STATE_A);
  }
  let same: u32 = 1;
  for (let i: u32 = 0; i < 243; i++) {
    lastRoundTrit(STATE_A, i);
    const l = i64x2.extract_lane(lastL, 0) & 1;
    const h = i64x2.extract_lane(lastH, 0) & 1;
    store<i8>(IO_TRITS + i, <i8>(l == 0 ? 1 : h == 0 ? -1 : 0));
    const wantL = l != 0 ? ONES : i64x2(0, 0);
    const wantH = h != 0 ? ONES : i64x2(0, 0);
    if (!i8x16.all_true(v128.and(v128.not(v128.xor(lastL, wantL)), v128.not(v128.xor(lastH, wantH))))) same = 0;
  }
  return same;
}
