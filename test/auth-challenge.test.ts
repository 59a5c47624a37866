// Stateless nonces (challenge.ts): issued second (u32 BE) ‖ lane ‖ the first 15 bytes of
// HMAC-SHA-256(key, "chrysalis-core/prove-ownership/nonce/v1" NUL ‖ issued ‖ lane ‖ UTF-8 identity id), as 40 hex.
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nonceIssuedAt, nonceMinter } from "../src/auth/index.js";

function reference(key: Uint8Array, id: string, issued: number, lane: number): string {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(issued, 0);
  head[4] = lane;
  const tag = createHmac("sha256", key).update("chrysalis-core/prove-ownership/nonce/v1\u0000").update(head).update(id, "utf8").digest();
  return Buffer.concat([head, tag.subarray(0, 15)]).toString("hex");
}

describe("a nonce is its issue second, its lane and a MAC binding them to one identity", () => {
  const key = new Uint8Array(32).map((_, i) => i * 7);

  it("matches the layout for DIDs, other ids, non-ASCII ids and ids longer than the scratch, in any order", () => {
    const mint = nonceMinter(key);
    const ids = ["did:iota:8dQAzVbbf6FLW9ckwyCBnKmcMGcUV9LYJoXtgQkHcNQy", "bob.example", "a", "did:iota:é-ü", "\u{1F600}x", "x".repeat(256), "y".repeat(1500), "é".repeat(600), "did:iota:bench1"];
    for (let pass = 0; pass < 2; pass++) {
      for (const id of ids) {
        for (const [issued, lane] of [[0, 0], [1_800_000_000, 15], [0xffff_ffff, 7]] as const) {
          const nonce = mint.nonce(id, issued, lane);
          expect(nonce).toBe(reference(key, id, issued, lane));
          expect(nonceIssuedAt(nonce)).toEqual({ issued, lane });
        }
      }
    }
  });

  it("arbitrary ids, seconds and lanes give the layout's nonce", () => {
    const mint = nonceMinter(key);
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.nat({ max: 0xffff_ffff }), fc.nat({ max: 15 }), (id, issued, lane) => {
        expect(mint.nonce(id, issued, lane)).toBe(reference(key, id, issued, lane));
      }),
      { numRuns: 1000 },
    );
  });
});
