// Generates test/vectors/zip215.json: Ed25519 edge cases whose ZIP-215 answer is known by construction.
// Run: node test/vectors/generate-zip215.mjs > test/vectors/zip215.json (deterministic; noble's Point does the arithmetic).
//
// Each vector's `zip215` answer follows from how it was built, not from running a verifier:
// ZIP-215 accepts iff S < L, A and R decode (non-canonical y and x = 0 with the sign bit set allowed) and
// [8][S]B = [8]R + [8][k]A with k = SHA-512(R ‖ A ‖ M) over the bytes as given. `cofactorless` says whether
// [S]B = R + [k]A also holds (what a strict RFC 8032 / OpenSSL verifier checks), for information.
import { Point } from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const B = Point.BASE;

const hex = (b) => Buffer.from(b).toString("hex");
const le = (n, len = 32) => {
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
};
const fromLe = (b) => b.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
const mod = (n, m = L) => ((n % m) + m) % m;
const enc = (y, sign) => {
  const b = le(y);
  if (sign) b[31] |= 0x80;
  return b;
};
const concat = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));
const k = (R, A, M) => mod(fromLe(sha512(concat(R, A, M))));
const mul = (point, n) => {
  let acc = Point.ZERO;
  let add = point;
  for (let e = n; e > 0n; e >>= 1n) {
    if (e & 1n) acc = acc.add(add);
    add = add.double();
  }
  return acc;
};
// Deterministic "random" scalars and messages (SHA-512 of a label), so the file regenerates identically.
const scalar = (label) => mod(fromLe(sha512(new TextEncoder().encode(label))));
const message = (label) => sha512(new TextEncoder().encode(`message ${label}`)).slice(0, 32);

// The torsion subgroup: [L]P for a curve point P lands in it; take one generator of order 8.
let T8;
for (let y = 2n; !T8; y++) {
  let point;
  try {
    point = Point.fromBytes(enc(y, false), true);
  } catch {
    continue;
  }
  const t = mul(point, L);
  if (!t.double().double().is0()) T8 = t;
}
const torsion = Array.from({ length: 8 }, (_, i) => mul(T8, BigInt(i)));

// The 8 canonical encodings of small-order points, then the 6 non-canonical ones: y + p for y = 0 and y = 1
// (both signs), and x = 0 with the sign bit set for y = 1 and y = p − 1.
const smallOrder = torsion.map((t, i) => ({ bytes: t.toBytes(), label: `torsion[${i}] canonical`, canonical: true }));
smallOrder.push(
  { bytes: enc(P, false), label: "y = p (≡ 0), sign 0", canonical: false },
  { bytes: enc(P, true), label: "y = p (≡ 0), sign 1", canonical: false },
  { bytes: enc(P + 1n, false), label: "y = p + 1 (identity), sign 0", canonical: false },
  { bytes: enc(P + 1n, true), label: "y = p + 1 (identity), sign 1", canonical: false },
  { bytes: enc(1n, true), label: "identity with x = −0", canonical: false },
  { bytes: enc(P - 1n, true), label: "(0, −1) with x = −0", canonical: false },
);
for (const s of smallOrder) {
  const point = Point.fromBytes(s.bytes, true);
  if (!torsion.some((t) => t.equals(point))) throw new Error(`${s.label} is not a small-order point`);
  s.point = point;
}

const cases = [];
const push = (group, name, A, R, S, M, zip215, cofactorless, note) => {
  cases.push({ group, name, publicKey: hex(A), signature: hex(concat(R, le(S))), message: hex(M), zip215, cofactorless, ...(note ? { note } : {}) });
};
const cofactorlessHolds = (A, R, S, M) => {
  try {
    const lhs = S === 0n ? Point.ZERO : mul(B, S);
    return lhs.equals(Point.fromBytes(R, true).add(mul(Point.fromBytes(A, true), k(R, A, M))));
  } catch {
    return false;
  }
};

// 1. Small-order A and R with S = 0: [8]R = [8][k]A = 0 = [8][0]B, so ZIP-215 accepts all 14 × 14.
const m0 = message("small order");
for (const a of smallOrder) {
  for (const r of smallOrder) {
    push("small-order A and R, S = 0", `A ${a.label}; R ${r.label}`, a.bytes, r.bytes, 0n, m0, true, cofactorlessHolds(a.bytes, r.bytes, 0n, m0));
  }
}

// 2. Honest signatures and their S ≥ L twins.
for (let i = 0; i < 3; i++) {
  const a = scalar(`honest key ${i}`);
  const r = scalar(`honest nonce ${i}`);
  const A = mul(B, a).toBytes();
  const R = mul(B, r).toBytes();
  const M = message(`honest ${i}`);
  const S = mod(r + k(R, A, M) * a);
  push("honest", `honest signature ${i}`, A, R, S, M, true, true);
  push("honest", `honest signature ${i}, other message`, A, R, S, message(`other ${i}`), false, false);
  push("S ≥ L", `honest signature ${i} with S + L`, A, R, S + L, M, false, false, "same point equation, non-canonical S: rejected");
  push("S ≥ L", `honest signature ${i} with S + 2^255`, A, R, S + 2n ** 255n, M, false, false, "top bit of S set");
}
push("S ≥ L", "identity A and R with S = L", smallOrder[0].bytes, smallOrder[0].bytes, L, m0, false, false, "S = 0 would verify; S = L is non-canonical");

// 3. Mixed-order public key A = [a]B + T: [8] removes T, so ZIP-215 accepts; cofactorless only when [k]T = 0.
for (let i = 0; i < 8; i++) {
  const a = scalar(`mixed key ${i}`);
  const r = scalar(`mixed nonce ${i}`);
  const A = mul(B, a).add(torsion[1 + (i % 7)]).toBytes();
  const R = mul(B, r).toBytes();
  const M = message(`mixed A ${i}`);
  const S = mod(r + k(R, A, M) * a);
  push("mixed-order A", `A = [a]B + torsion[${1 + (i % 7)}], honest R and S (${i})`, A, R, S, M, true, cofactorlessHolds(A, R, S, M));
}

// 4. Mixed-order R = [r]B + T with an honest key: the cofactorless equation is off by T.
for (let i = 0; i < 4; i++) {
  const a = scalar(`mixed R key ${i}`);
  const r = scalar(`mixed R nonce ${i}`);
  const A = mul(B, a).toBytes();
  const R = mul(B, r).add(torsion[1 + 2 * i]).toBytes();
  const M = message(`mixed R ${i}`);
  const S = mod(r + k(R, A, M) * a);
  push("mixed-order R", `R = [r]B + torsion[${1 + 2 * i}] (${i})`, A, R, S, M, true, false);
}

// 5. Small-order A (every encoding) with an honest-looking R = [r]B and S = r: [8][k]A = 0.
for (const s of smallOrder) {
  const r = scalar(`small A nonce ${s.label}`);
  const R = mul(B, r).toBytes();
  const M = message(`small A ${s.label}`);
  push("small-order A, R = [r]B, S = r", `A ${s.label}`, s.bytes, R, r, M, true, cofactorlessHolds(s.bytes, R, r, M));
}

// 6. A non-canonical R is hashed as given: S = k·a with k = H(R as given ‖ A ‖ M) verifies, because [8]R = 0.
//    A verifier that re-encoded R before hashing would compute another k and reject.
for (const s of smallOrder.filter((x) => !x.canonical)) {
  const a = scalar(`as given ${s.label}`);
  const A = mul(B, a).toBytes();
  const M = message(`as given ${s.label}`);
  const S = mod(k(s.bytes, A, M) * a);
  push("R hashed as given", `R ${s.label}, S = k·a`, A, s.bytes, S, M, true, cofactorlessHolds(A, s.bytes, S, M));
  const canonicalK = mod(k(s.point.toBytes(), A, M) * a);
  if (canonicalK !== S) push("R hashed as given", `R ${s.label}, S computed over the re-encoded R`, A, s.bytes, canonicalK, M, false, false);
}

// 7. Encodings that are not points: y with no square root for x (and the same in R).
const notPoints = [];
for (let y = 2n; notPoints.length < 2; y++) {
  try {
    Point.fromBytes(enc(y, false), true);
  } catch {
    notPoints.push(enc(y, false));
  }
}
for (const [i, bad] of notPoints.entries()) {
  push("not a point", `A not on the curve (${i})`, bad, smallOrder[0].bytes, 0n, m0, false, false);
  push("not a point", `R not on the curve (${i})`, smallOrder[0].bytes, bad, 0n, m0, false, false);
}

console.log(
  JSON.stringify(
    {
      about:
        "Ed25519 edge cases with the answer ZIP-215 (TIP-14) gives, known by construction (test/vectors/generate-zip215.mjs). " +
        "signature = R ‖ S (S little-endian). cofactorless: whether [S]B = R + [k]A holds as well, for information.",
      cases,
    },
    null,
    1,
  ),
);
