// Shared plumbing of the `chrysalis` command: the usage error type, bounded input from a file or stdin,
// and reading a message given as JSON or hex.
import { readFile } from "node:fs/promises";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex } from "../bytes/hex.js";
import { MAX_MESSAGE_LENGTH } from "../bytes/limits.js";

/** A mistake in how the command was called: printed with a hint to --help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The user stopped the command (Ctrl-C): exit code 130, as shells report a SIGINT. */
export class Interrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Interrupted";
  }
}

const FS_REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  EMFILE: "too many open files",
};

/** A file that could not be read, as one line naming it: a failed operation (exit 1), not a usage mistake. */
export function fileError(what: string, path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code !== undefined ? `${FS_REASONS[code] ?? "cannot be read"} (${code})` : (error as Error).message;
  return new Error(`cannot read ${what} ${JSON.stringify(path)}: ${reason}`, { cause: error });
}

/** Reads a whole (small) file for a command, naming the file when that fails. */
export async function readTextFile(what: string, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw fileError(what, path, error);
  }
}

// Message input is JSON (hex inside, keys) or hex: a few hundred KiB at most.
export const MAX_INPUT_BYTES = 1 << 20;

/** Reads a file, or stdin for "-" or no file; refuses more than `limit` bytes. */
export async function readInput(file: string | undefined, limit = MAX_INPUT_BYTES): Promise<string> {
  if (file !== undefined && file !== "-") {
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch (error) {
      throw fileError("the input file", file, error);
    }
    if (data.length > limit) throw new UsageError(`${file} is larger than ${limit} bytes`);
    return data.toString("utf8");
  }
  if (process.stdin.isTTY) throw new UsageError("give a file, or pipe the input on stdin");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new UsageError(`stdin holds more than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export type MessageInput = { kind: "json"; json: unknown } | { kind: "bytes"; bytes: Uint8Array };

/** Input starting with `{` is JSON; anything else is hex (whitespace and a 0x prefix ignored). */
export function parseMessageInput(text: string): MessageInput {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      return { kind: "json", json: JSON.parse(trimmed) as unknown };
    } catch (error) {
      // V8 quotes the input in its message, newlines and all; one line must still carry the whole sentence.
      throw new ProtocolError("INVALID_JSON", `malformed JSON: ${oneLine((error as Error).message)}`, { cause: error });
    }
  }
  const hex = trimmed.replace(/^0x/i, "").replace(/\s+/g, "");
  if (hex.length === 0) throw new UsageError("the input is empty");
  if (hex.length > 2 * MAX_MESSAGE_LENGTH) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a message is at most ${MAX_MESSAGE_LENGTH} bytes`, { path: "message" });
  return { kind: "bytes", bytes: fromHex(hex, "message") };
}

/** One line: line breaks written as \\n (they come from quoted input), other runs of white space as one space. */
export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, "\\n").replace(/\s+/g, " ").trim();
}

/** One line for a terminal: "chrysalis: <message>", never a stack trace, never cut mid-sentence. */
export function describeError(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}

export function write(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}
