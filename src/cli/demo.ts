// `chrysalis demo`: the whole interface in one run on 127.0.0.1: node up, identity, prove ownership (JWT),
// a signed transaction spending a genesis output with an indexation payload, submitted bare (the node fills
// networkId, parents and nonce, mining at score 4000), fetched back, node shut down; each step timed.
import { parseArgs } from "node:util";
import { equalBytes, utf8 } from "../bytes/bytes.js";
import { MAINNET_MIN_POW_SCORE, TOTAL_SUPPLY } from "../bytes/limits.js";
import { bech32Address, ed25519Address, ed25519PublicKey } from "../crypto/index.js";
import { encodeMessage } from "../model/codec.js";
import { outputId, transactionId } from "../model/ids.js";
import { payloadToJson } from "../model/json.js";
import { buildTransactionPayload } from "../model/transaction.js";
import { generateIdentityKeyPair } from "../auth/index.js";
import { base58Encode } from "../bytes/base58.js";
import { powScore } from "../pow/index.js";
import { createClient } from "../client/index.js";
import { MemoryLedger } from "../node/index.js";
import type { Command } from "./commands.js";
import { UsageError, write } from "./io.js";
import { startNode } from "./setup.js";
import { GENESIS_TRANSACTION_ID } from "./serve.js";

export interface DemoOptions {
  minPoWScore?: number;
  workers?: number;
  log?: (line: string) => void;
}

export interface DemoResult {
  messageId: string;
  transactionId: string;
  nonce: bigint;
  score: number;
  /** Milliseconds per step, in order. */
  steps: { name: string; ms: number }[];
}

/** Runs the demo; resolves after the node has shut down. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const log = options.log ?? write;
  const minPoWScore = options.minPoWScore ?? MAINNET_MIN_POW_SCORE;
  const steps: DemoResult["steps"] = [];
  const total = 7;
  async function step<T>(name: string, run: () => Promise<T> | T, describe: (value: T) => string): Promise<T> {
    const started = performance.now();
    const value = await run();
    const ms = performance.now() - started;
    steps.push({ name, ms });
    log(`[${steps.length}/${total}] ${name.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms  ${describe(value)}`);
    return value;
  }

  // The wallet that holds the genesis funds, and the ledger that knows them (for the node's semantic checks).
  const walletSeed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const walletAddress = ed25519Address(ed25519PublicKey(walletSeed));
  const ledger = new MemoryLedger();
  ledger.add(outputId(GENESIS_TRANSACTION_ID, 0), { type: 0, address: { type: 0, address: walletAddress }, amount: TOTAL_SUPPLY });

  const setup = await step(
    "start a node on 127.0.0.1",
    () =>
      startNode({
        host: "127.0.0.1",
        port: 0,
        network: "chrysalis-demo",
        minPoWScore,
        ledger,
        jwtSecret: globalThis.crypto.getRandomValues(new Uint8Array(32)),
        ...(options.workers !== undefined ? { pow: { workers: options.workers } } : {}),
      }),
    (s) => `${s.server.url} (network ${s.node.info.networkId}, min PoW score ${minPoWScore}, JWT required to submit)`,
  );
  try {
    const client = createClient(setup.server.url);
    const identity = await step(
      "create an identity",
      () => {
        const keys = generateIdentityKeyPair();
        const id = `did:iota:${base58Encode(ed25519Address(keys.publicKey))}`;
        setup.registry.add(id, keys.publicKey);
        return { id, ...keys };
      },
      (i) => i.id,
    );
    const jwt = await step("prove ownership, get a JWT", () => client.proveOwnership(identity.id, identity.secretKey), (t) => `${t.slice(0, 24)}… (${t.length} chars)`);
    void jwt;
    const recipient = ed25519Address(ed25519PublicKey(globalThis.crypto.getRandomValues(new Uint8Array(32))));
    const payload = await step(
      "build and sign a transaction",
      () =>
        buildTransactionPayload({
          inputs: [{ transactionId: GENESIS_TRANSACTION_ID, transactionOutputIndex: 0, seed: walletSeed }],
          outputs: [
            { type: 0, address: { type: 0, address: recipient }, amount: 1_000_000 },
            { type: 0, address: { type: 0, address: walletAddress }, amount: TOTAL_SUPPLY - 1_000_000 },
          ],
          indexation: { type: 2, index: utf8.encode("chrysalis-core demo"), data: utf8.encode(`hello from the demo at ${new Date().toISOString()}`) },
        }),
      (p) => `spends genesis output ${GENESIS_TRANSACTION_ID.slice(0, 8)}…:0, sends 1 Mi to ${bech32Address(setup.node.info.bech32HRP, recipient).slice(0, 20)}…, tx ${transactionId(p).slice(0, 16)}…`,
    );
    const submitted = { payload: payloadToJson(payload) };
    const messageId = await step(
      "submit without networkId/parents/nonce",
      () => client.submitMessage(submitted),
      (id) => `201, message id ${id} (the node filled the fields and mined at score ${minPoWScore})`,
    );
    const fetched = await step(
      "fetch it back",
      async () => ({ message: await client.getMessage(messageId), raw: await client.getMessageRaw(messageId) }),
      (f) => `${f.raw.length} bytes, ${f.message.parents.length} parent(s), nonce ${f.message.nonce}, PoW score ${Math.floor(powScore(f.raw))}`,
    );
    if (!equalBytes(encodeMessage(fetched.message), fetched.raw)) throw new Error("the fetched JSON and raw bytes disagree");
    await step("shut the node down", () => setup.close(), () => "in-flight requests finished, workers stopped");
    log(`message id ${messageId}`);
    return { messageId, transactionId: transactionId(payload), nonce: fetched.message.nonce, score: powScore(fetched.raw), steps };
  } finally {
    await setup.close();
  }
}

export const demoCommand: Command = {
  summary: "run the whole flow on a local node and print each step with its timing",
  usage: `chrysalis demo [--min-pow-score <n>] [--workers <n>]

Starts a node on 127.0.0.1 (an ephemeral port) with a genesis output, creates an identity, proves
ownership to get a JWT, builds and signs a transaction spending the genesis output (with an indexation
payload), submits it WITHOUT networkId, parents or nonce so the node fills them and mines at score 4000,
fetches it back, and shuts the node down. Prints each step with its timing and the message id.`,
  async run(args) {
    const { values } = parseArgs({ args, options: { "min-pow-score": { type: "string" }, workers: { type: "string" } }, strict: true });
    const options: DemoOptions = {};
    if (values["min-pow-score"] !== undefined) {
      const n = Number(values["min-pow-score"]);
      if (!Number.isFinite(n) || n < 0) throw new UsageError("--min-pow-score takes a number ≥ 0");
      options.minPoWScore = n;
    }
    if (values.workers !== undefined) {
      const n = Number(values.workers);
      if (!Number.isInteger(n) || n < 1 || n > 256) throw new UsageError("--workers takes a whole number 1 .. 256");
      options.workers = n;
    }
    await runDemo(options);
  },
};
