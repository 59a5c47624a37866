// hashing: blake2b256 against the two BLAKE2b-256 libraries a user would pick instead (issue #2 speed target ≥ 0.9×).
// blake2b-wasm through its normal API and hash-wasm with a reused hasher (its fastest synchronous form), at 32 B, 300 B, 32 KiB.
import { createRequire } from "node:module";
import { createBLAKE2b } from "hash-wasm";
import { blake2b256 } from "../src/crypto/blake2b.js";
import { medianRound } from "./repeat.js";
import { compare, type Row } from "./harness.js";

interface Blake2bWasm {
  (digestLength: number): { update(input: Uint8Array): { digest(): Uint8Array } };
  ready(cb?: (error?: Error) => void): Promise<void>;
}

const require = createRequire(import.meta.url);

export default async function hashing(): Promise<Row[]> {
  const blake2bWasm = require("blake2b-wasm") as Blake2bWasm;
  await blake2bWasm.ready();
  const hasher = await createBLAKE2b(256);
  const rows: Row[] = [];
  for (const [name, size] of [["32 B", 32], ["300 B", 300], ["32 KiB", 32 * 1024]] as const) {
    const input = Uint8Array.from({ length: size }, (_, i) => (i * 131 + 7) & 0xff);
    // The competitors must compute the same digest, or the comparison means nothing.
    const expected = Buffer.from(blake2b256(input)).toString("hex");
    if (Buffer.from(blake2bWasm(32).update(input).digest()).toString("hex") !== expected) throw new Error("blake2b-wasm disagrees");
    if (Buffer.from(hasher.init().update(input).digest("binary")).toString("hex") !== expected) throw new Error("hash-wasm disagrees");
    rows.push(
      await medianRound(3, () =>
        compare(
          "hashing",
          `blake2b256 ${name}`,
          () => blake2b256(input),
          {
            "blake2b-wasm": () => blake2bWasm(32).update(input).digest(),
            "hash-wasm": () => hasher.init().update(input).digest("binary"),
          },
          { target: 0.9, time: 500 },
        ),
      ),
    );
  }
  return rows;
}
