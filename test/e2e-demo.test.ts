// The demo (the README's main job) as a test: every step runs and is reported, at a low score to stay fast
// (the command itself mines at 4000; `npm run demo` shows that).
import { describe, expect, it } from "vitest";
import { runDemo } from "../src/cli/demo.js";

describe("the demo runs the whole flow and reports each step", () => {
  it("node up, identity, JWT, signed transaction, bare submission filled and mined by the node, fetched back, shut down", async () => {
    const lines: string[] = [];
    const result = await runDemo({ minPoWScore: 50, workers: 1, log: (line) => lines.push(line) });
    expect(result.steps.map((s) => s.name)).toEqual([
      "start a node on 127.0.0.1",
      "create an identity",
      "prove ownership, get a JWT",
      "build and sign a transaction",
      "submit without networkId/parents/nonce",
      "fetch it back",
      "shut the node down",
    ]);
    expect(lines).toHaveLength(8);
    lines.slice(0, 7).forEach((line, i) => expect(line).toMatch(new RegExp(`^\\[${i + 1}/7\\] .* \\d+\\.\\d ms`)));
    expect(lines[7]).toBe(`message id ${result.messageId}`);
    expect(result.messageId).toMatch(/^[0-9a-f]{64}$/);
    expect(result.score).toBeGreaterThanOrEqual(50);
  });
});
