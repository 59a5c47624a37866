// The small commands of `chrysalis`: keygen, network-id, message encode|decode|id|validate, auth sign-nonce, pow.
// Each is { summary, usage, run(args) }; main.ts dispatches and turns errors into one line and an exit code.
import { parseArgs } from "node:util";
import { readFile } from "node:fs/promises";
import { base58Encode } from "../bytes/base58.js";
import { ProtocolError } from "../bytes/errors.js";
import { toHex } from "../bytes/hex.js";
import { bech32Address, ed25519Address, ed25519PublicKey } from "../crypto/index.js";
import { decodeMessage, encodeMessage } from "../model/codec.js";
import { messageId, networkId } from "../model/ids.js";
import { messageFromJson, messageToJson } from "../model/json.js";
import type { Message } from "../model/types.js";
import { signNonce } from "../auth/index.js";
import { mineNonce, powScore, targetZeros } from "../pow/index.js";
import { parseMessageInput, readInput, UsageError, write } from "./io.js";
import { MAINNET_MIN_POW_SCORE, NONCE_LENGTH, TESTNET_HRP } from "../bytes/limits.js";

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
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return n.toFixed(0);
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return "?";
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

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

Options (validate):
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
    if (extra !== undefined) throw new UsageError("message takes one file at most");
    switch (action) {
      case "encode": {
        const input = parseMessageInput(await readInput(file));
        if (input.kind !== "json") throw new UsageError("encode reads JSON; this input is hex (use decode)");
        write(toHex(encodeMessage(messageFromJson(input.json))));
        return;
      }
      case "decode": {
        const input = parseMessageInput(await readInput(file));
        if (input.kind !== "bytes") throw new UsageError("decode reads hex; this input is JSON (use encode)");
        write(JSON.stringify(messageToJson(decodeMessage(input.bytes)), null, 2));
        return;
      }
      case "id": {
        const { bytes } = await readMessage(file);
        write(messageId(bytes));
        return;
      }
      case "validate": {
        const { message: m, bytes } = await readMessage(file);
        const score = powScore(bytes);
        if (values.network !== undefined && m.networkId !== networkId(values.network)) {
          throw new ProtocolError("WRONG_NETWORK_ID", `invalid: networkId ${m.networkId} is not ${values.network}'s (${networkId(values.network)})`, { path: "networkId" });
        }
        if (values["min-score"] !== undefined) {
          const min = Number(values["min-score"]);
          if (!Number.isFinite(min) || min < 0) throw new UsageError("--min-score takes a number");
          if (score < min) throw new ProtocolError("INSUFFICIENT_POW", `invalid: PoW score ${Math.floor(score)} is below ${min}`, { path: "nonce" });
        }
        write(`valid ${messageId(bytes)} (${bytes.length} bytes, PoW score ${Math.floor(score)})`);
        return;
      }
      default:
        throw new UsageError(`unknown message action "${action}": use encode, decode, id or validate`);
    }
  },
};

export const auth: Command = {
  summary: "sign-nonce: sign a prove-ownership nonce with a Base58 secret key",
  usage: `chrysalis auth sign-nonce <nonce> [--secret-key-file <file>]

Prints the signedNonce (128 hex characters): Ed25519 over SHA-256 of the 40-character nonce.
The secret key (Base58 seed, or seed ‖ public key) is read from --secret-key-file, else from the
CHRYSALIS_SECRET_KEY environment variable, else from stdin; it is never echoed.`,
  async run(args) {
    const { values, positionals } = parseArgs({ args, options: { "secret-key-file": { type: "string" } }, allowPositionals: true, strict: true });
    const [action, nonce, extra] = positionals;
    if (action !== "sign-nonce") throw new UsageError(action === undefined ? "auth needs an action: sign-nonce" : `unknown auth action "${action}": use sign-nonce`);
    if (nonce === undefined || extra !== undefined) throw new UsageError("sign-nonce takes exactly one nonce");
    let secret: string | undefined;
    if (values["secret-key-file"] !== undefined) {
      try {
        secret = (await readFile(values["secret-key-file"], "utf8")).trim();
      } catch (error) {
        throw new UsageError(`cannot read the secret key file: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
      }
    } else secret = process.env.CHRYSALIS_SECRET_KEY?.trim() || (await readInput(undefined, 4096)).trim();
    if (secret === undefined || secret === "") throw new UsageError("no secret key given");
    write(signNonce(nonce, secret));
  },
};

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
    const expected = 3 ** zeros;
    const tty = process.stderr.isTTY === true;
    let last = 0;
    const started = Date.now();
    const onProgress = ({ hashes, elapsedMs }: { hashes: number; elapsedMs: number }): void => {
      const rate = elapsedMs > 0 ? (hashes * 1000) / elapsedMs : 0;
      // Each nonce succeeds with probability 3^-zeros whatever came before (the search is memoryless), so the expected
      // remaining time is always expected / rate; a countdown to "expected − done" would promise what chance does not.
      const remaining = rate > 0 ? expected / rate : Infinity;
      const line = `mining: ${formatCount(rate)}H/s, ${formatCount(hashes)} hashes done (expected ${formatCount(expected)} for ${zeros} trailing zeros), ~${formatSeconds(remaining)} expected remaining`;
      if (tty) process.stderr.write(`\r\x1b[K${line}`);
      else if (elapsedMs - last >= 1000) {
        process.stderr.write(`${line}\n`);
        last = elapsedMs;
      }
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
      if (tty) process.stderr.write("\r\x1b[K");
      process.stderr.write(`mined nonce ${nonce} in ${((Date.now() - started) / 1000).toFixed(2)} s: score ${Math.floor(powScore(bytes))}, id ${messageId(bytes)}\n`);
      write(values.json ? JSON.stringify(messageToJson(m), null, 2) : toHex(bytes));
    } finally {
      process.off("SIGINT", stop);
    }
  },
};
