// The small commands of `chrysalis`: keygen, network-id, message encode|decode|id|validate, auth sign-nonce, pow.
// Each is { summary, usage, run(args) }; main.ts dispatches and turns errors into one line and an exit code.
import { parseArgs } from "node:util";
import { base58Encode } from "../bytes/base58.js";
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { bech32Address, ed25519Address, ed25519PublicKey } from "../crypto/index.js";
import { decodeMessage, encodeMessage } from "../model/codec.js";
import { messageId, networkId } from "../model/ids.js";
import { messageFromJson, messageToJson } from "../model/json.js";
import type { Message } from "../model/types.js";
import { revokeJwt, signNonce } from "../auth/index.js";
import { openSharedStore } from "./setup.js";
import { mineNonce, powScore, targetZeros } from "../pow/index.js";
import { Interrupted, parseMessageInput, readInput, readTextFile, UsageError, write } from "./io.js";
import { MAINNET_HRP, MAINNET_MIN_POW_SCORE, NONCE_LENGTH, TESTNET_HRP } from "../bytes/limits.js";

export interface Command {
  summary: string;
  usage: string;
  run(args: string[]): Promise<void>;
}

function randomSeed(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

/** A complete message from JSON or hex input. */
async function readMessage(file: string | undefined): Promise<{ message: Message; bytes: Uint8Array }> {
  const input = parseMessageInput(await readInput(file));
  if (input.kind === "bytes") return { message: decodeMessage(input.bytes), bytes: input.bytes };
  const message = messageFromJson(input.json);
  return { message, bytes: encodeMessage(message) };
}

function formatCount(n: number): string {
  if (n >= 1e12) return `${n.toExponential(2)} `;
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return n.toFixed(0);
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return "?";
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${(s / 60).toFixed(1)} min`;
  if (s < 86400 * 3) return `${(s / 3600).toFixed(1)} h`;
  if (s < 86400 * 365 * 3) return `${(s / 86400).toFixed(0)} days`;
  return `${(s / (86400 * 365)).toExponential(1)} years`;
}

/** The Bech32 human-readable parts of Chrysalis networks (TIP-11): mainnet and the test networks. */
const HRPS = [MAINNET_HRP, TESTNET_HRP];

export const keygen: Command = {
  summary: "make an Ed25519 key: Base58 seed, public key, address and its Bech32 form",
  usage: `chrysalis keygen [--hrp <hrp>] [--json]

Generates a random Ed25519 seed (CSPRNG) and prints:
  secretKey  the 32-byte seed in Base58 (keep it secret: it signs nonces and transactions)
  publicKey  the 32-byte public key, hex
  address    BLAKE2b-256(public key), hex
  bech32     the Bech32 address (TIP-11)

Options:
  --hrp <hrp>   Bech32 human-readable part: iota (mainnet) or atoi (test networks). Default atoi.
  --json        print one JSON object instead of lines`,
  async run(args) {
    const { values } = parseArgs({ args, options: { hrp: { type: "string", default: TESTNET_HRP }, json: { type: "boolean", default: false } }, strict: true });
    if (!HRPS.includes(values.hrp!)) throw new UsageError(`--hrp is iota (mainnet) or atoi (test networks), not ${JSON.stringify(values.hrp)}`);
    const seed = randomSeed();
    const publicKey = ed25519PublicKey(seed);
    const address = ed25519Address(publicKey);
    const out = { secretKey: base58Encode(seed), publicKey: toHex(publicKey), address: toHex(address), bech32: bech32Address(values.hrp!, address) };
    if (values.json) write(JSON.stringify(out));
    else write(Object.entries(out).map(([k, v]) => `${k.padEnd(10)} ${v}`).join("\n"));
  },
};

export const networkIdCommand: Command = {
  summary: "print the network id (u64) of a network name",
  usage: `chrysalis network-id <name>

Prints the first 8 bytes of BLAKE2b-256(name) as a little-endian u64 in decimal,
e.g. chrysalis network-id chrysalis-mainnet`,
  async run(args) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new UsageError("network-id takes exactly one network name");
    write(networkId(positionals[0]!).toString());
  },
};

export const message: Command = {
  summary: "encode | decode | id | validate a message (JSON ↔ hex)",
  usage: `chrysalis message <encode|decode|id|validate> [file]

Reads the message from [file] or stdin ("-"): node REST JSON (starts with "{") or hex bytes.
  encode     JSON → canonical bytes as hex
  decode     hex → node REST JSON
  id         the message id (BLAKE2b-256 of the bytes)
  validate   run every syntactic rule; prints "valid <id>" (and the PoW score), or the error

Options (any action; the message is refused, exit 1, when it fails them):
  --min-score <n>   also require this PoW score
  --network <name>  also require this network's id`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { "min-score": { type: "string" }, network: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const [action, file, extra] = positionals;
    if (action === undefined) throw new UsageError("message needs an action: encode, decode, id or validate");
    if (!["encode", "decode", "id", "validate"].includes(action)) throw new UsageError(`unknown message action "${action}": use encode, decode, id or validate`);
    if (extra !== undefined) throw new UsageError("message takes one file at most");
    let min: number | undefined;
    if (values["min-score"] !== undefined) {
      min = Number(values["min-score"]);
      if (values["min-score"].trim() === "" || !Number.isFinite(min) || min < 0) throw new UsageError("--min-score takes a number ≥ 0");
    }
    const input = parseMessageInput(await readInput(file));
    if (action === "encode" && input.kind !== "json") throw new UsageError("encode reads JSON; this input is hex (use decode)");
    if (action === "decode" && input.kind !== "bytes") throw new UsageError("decode reads hex; this input is JSON (use encode)");
    const m = input.kind === "bytes" ? decodeMessage(input.bytes) : messageFromJson(input.json);
    const bytes = input.kind === "bytes" ? input.bytes : encodeMessage(m);
    // The checks apply to every action: a decode or an id asked for one network's messages must not pass another's.
    if (values.network !== undefined && m.networkId !== networkId(values.network)) {
      throw new ProtocolError("WRONG_NETWORK_ID", `invalid: networkId ${m.networkId} is not ${values.network}'s (${networkId(values.network)})`, { path: "networkId" });
    }
    const score = min !== undefined || action === "validate" ? powScore(bytes) : 0;
    if (min !== undefined && score < min) throw new ProtocolError("INSUFFICIENT_POW", `invalid: PoW score ${Math.floor(score)} is below ${min}`, { path: "nonce" });
    if (action === "encode") write(toHex(bytes));
    else if (action === "decode") write(JSON.stringify(messageToJson(m), null, 2));
    else if (action === "id") write(messageId(bytes));
    else write(`valid ${messageId(bytes)} (${bytes.length} bytes, PoW score ${Math.floor(score)})`);
  },
};

export const auth: Command = {
  summary: "sign-nonce: sign a prove-ownership nonce; revoke: refuse a JWT on every node sharing a store",
  usage: `chrysalis auth sign-nonce <nonce> [--secret-key-file <file>]
chrysalis auth revoke <jti|token> (--data-dir <dir> | --database <postgres://…>)

sign-nonce prints the signedNonce (128 hex characters): Ed25519 over SHA-256 of the 40-character nonce.
The secret key (Base58 seed, or seed ‖ public key) is read from --secret-key-file, else from the
CHRYSALIS_SECRET_KEY environment variable, else from stdin; it is never echoed.

revoke stores the revocation of a JWT (given whole, or by its id, the jti claim) in the store the
node uses, given by the same option as to serve; every node on that store refuses the token from
its next request on. A token given whole is kept until its own expiry, a bare id for 366 days.`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { "secret-key-file": { type: "string" }, "data-dir": { type: "string" }, database: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const [action, nonce, extra] = positionals;
    if (action === "revoke") {
      if (nonce === undefined || extra !== undefined) throw new UsageError("revoke takes exactly one JWT or jti");
      const store = await openSharedStore({ dataDir: values["data-dir"], database: values.database }, { revocationsOnly: true });
      try {
        const revocation = await revokeJwt(store, nonce);
        write(`revoked ${revocation.jti} until ${new Date(revocation.expiresAt).toISOString()}`);
      } finally {
        await store.close();
      }
      return;
    }
    if (action !== "sign-nonce") throw new UsageError(action === undefined ? "auth needs an action: sign-nonce or revoke" : `unknown auth action "${action}": use sign-nonce or revoke`);
    if (nonce === undefined || extra !== undefined) throw new UsageError("sign-nonce takes exactly one nonce");
    let secret: string | undefined;
    if (values["secret-key-file"] !== undefined) secret = (await readTextFile("the secret key file", values["secret-key-file"])).trim();
    else secret = process.env.CHRYSALIS_SECRET_KEY?.trim() || (await readInput(undefined, 4096)).trim();
    if (secret === undefined || secret === "") throw new UsageError("no secret key given");
    write(signNonce(nonce, secret));
  },
};

/**
 * The live PoW line: hash rate, hashes done, and the time left until the expected number of hashes (3^zeros) is
 * done, which counts down as work goes on. Past that number the search has been unlucky so far; each further
 * nonce still succeeds with the same chance, so the line says the solution can come at any moment.
 */
export function progressLine(hashes: number, elapsedMs: number, zeros: number): string {
  const expected = 3 ** zeros;
  const rate = elapsedMs > 0 ? (hashes * 1000) / elapsedMs : 0;
  const left = expected - hashes;
  const eta = rate <= 0 ? "remaining time not known yet" : left > 0 ? `~${formatSeconds(left / rate)} remaining` : "past the expected count: any moment now";
  return `mining: ${formatCount(rate)}H/s, ${formatCount(hashes)} of ~${formatCount(expected)} expected hashes (${zeros} trailing zeros), ${eta}`;
}

export const pow: Command = {
  summary: "mine a nonce for a message, with a live progress line",
  usage: `chrysalis pow [file] [--min-score <n>] [--workers <n>] [--json]

Reads a complete message (JSON or hex; its nonce is replaced) from [file] or stdin, mines a nonce
reaching the score on worker threads, and prints the mined message as hex (or JSON with --json).
Progress goes to stderr: hash rate, hashes done and the expected remaining time.

Options:
  --min-score <n>   target PoW score (default 4000, mainnet)
  --workers <n>     worker threads (default: available cores)
  --json            print the mined message as node REST JSON`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { "min-score": { type: "string", default: String(MAINNET_MIN_POW_SCORE) }, workers: { type: "string" }, json: { type: "boolean", default: false } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 1) throw new UsageError("pow takes one file at most");
    const minScore = Number(values["min-score"]);
    if (!Number.isFinite(minScore) || minScore <= 0) throw new UsageError("--min-score takes a positive number");
    const workers = values.workers === undefined ? undefined : Number(values.workers);
    if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 256)) throw new UsageError("--workers takes a whole number 1 .. 256");
    const { message: m, bytes } = await readMessage(positionals[0]);
    const zeros = targetZeros(bytes.length, minScore);
    const tty = process.stderr.isTTY === true;
    let last = 0;
    let drawn = false;
    let done = 0;
    const started = Date.now();
    const onProgress = ({ hashes, elapsedMs }: { hashes: number; elapsedMs: number }): void => {
      done = hashes;
      const line = progressLine(hashes, elapsedMs, zeros);
      if (tty) {
        process.stderr.write(`\r\x1b[K${line}`);
        drawn = true;
      } else if (elapsedMs - last >= 1000) {
        process.stderr.write(`${line}\n`);
        last = elapsedMs;
      }
    };
    // The progress line has no newline: clear it before anything else is printed, or that lands on its end.
    const clearLine = (): void => {
      if (drawn) process.stderr.write("\r\x1b[K");
      drawn = false;
    };
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    process.once("SIGINT", stop);
    try {
      const options: Parameters<typeof mineNonce>[1] = { minScore, onProgress, signal: controller.signal };
      if (workers !== undefined) options.workers = workers;
      const nonce = await mineNonce(bytes, options);
      new DataView(bytes.buffer, bytes.byteOffset, bytes.length).setBigUint64(bytes.length - NONCE_LENGTH, nonce, true);
      m.nonce = nonce;
      clearLine();
      process.stderr.write(`mined nonce ${nonce} in ${((Date.now() - started) / 1000).toFixed(2)} s: score ${Math.floor(powScore(bytes))}, id ${messageId(bytes)}\n`);
      write(values.json ? JSON.stringify(messageToJson(m), null, 2) : toHex(bytes));
    } catch (error) {
      clearLine();
      if (controller.signal.aborted) throw new Interrupted(`interrupted (Ctrl-C) after ${formatCount(done)} hashes; nothing was mined`);
      throw error;
    } finally {
      process.off("SIGINT", stop);
    }
  },
};
