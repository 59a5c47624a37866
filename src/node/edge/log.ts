// The node's log (pino): JSON lines, or a short human-readable line per record when the output is a terminal.
// The access log writes one record per answered request with its method, route name, path (never the query string,
// which may hold an api-key), status, duration and client address; no header, token, body or signed nonce is logged.
import { pino, type Logger } from "pino";
import sonicBoom, { type SonicBoomOpts } from "sonic-boom";

// A CommonJS module whose class Node's ESM loader cannot see as a named export.
const { SonicBoom } = sonicBoom;

/** pino's level names: a record at or above the level is written; "silent" writes none. */
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
/** Every LogLevel, most severe first (what `--log-level` accepts). */
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The level, destination and format of a logger made by createLogger. */
export interface LogOptions {
  /** Default "info"; "silent" logs nothing. */
  level?: LogLevel;
  /** Where lines go. Default: standard output, written asynchronously in blocks of 32 KiB and at least once a
   * second (a write call per line cost the node about a tenth of its time per request). */
  destination?: {
    /** Takes one line of the log, newline included. */
    write(line: string): unknown;
  };
  /** Human-readable lines instead of JSON. Default: when the destination is a terminal. */
  pretty?: boolean;
}

export type { Logger };

/** One answered request, as the access log and the metrics see it. */
export interface AccessRecord {
  /** The request's method; "-" for one refused at the socket before it was read (malformed, head too large, too slow). */
  readonly method: string;
  /** The matched route's name, or "-" when none matched (404, or refused before routing). */
  readonly route: string;
  /** The request's path, at most 200 characters of it, never its query string (which may hold an api-key). */
  readonly path: string;
  /** The HTTP status answered (5xx records are logged at warn, the others at info). */
  readonly status: number;
  /** Milliseconds from the request's arrival to its answer; the server gives them to the microsecond. */
  readonly ms: number;
  /** The client's address as the edge sees it (after a trusted proxy). */
  readonly client: string;
}

const LEVEL_NAMES: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO ", 40: "WARN ", 50: "ERROR", 60: "FATAL" };

/** A destination that turns pino's JSON lines into `HH:MM:SS.mmm LEVEL message key=value …`. */
export function prettyDestination(out: { write(line: string): unknown }): {
  /** Takes one of pino's JSON lines and writes its readable form to `out` (a line that is not JSON as it is). */
  write(line: string): void;
} {
  return {
    write(line: string): void {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = record;
      const at = typeof time === "number" ? new Date(time).toISOString().slice(11, 23) : "";
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" ");
      out.write(`${at} ${LEVEL_NAMES[level as number] ?? String(level)} ${typeof msg === "string" ? msg : ""}${fields === "" ? "" : ` ${fields}`}\n`);
    },
  };
}

// How often buffered log lines are written out at the latest.
const FLUSH_INTERVAL_MS = 1000;
// Lines are written out in blocks of this size (or at the flush interval): each write is a hop to libuv's thread pool,
// which at 4 KiB blocks (one per 16 access lines) cost the node a tenth of a trivial request's CPU per request.
const LOG_BLOCK_BYTES = 32 * 1024;
// A reader that stops draining the pipe (EAGAIN on every write) is given this many tries, 100 ms apart, before its
// lines are dropped: the node's exit, which writes what is held synchronously, never waits on it for longer.
const MAX_WRITE_RETRIES = 30;

/** A pino logger for the node. */
export function createLogger(options: LogOptions = {}): Logger {
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  let destination = options.destination;
  if (destination === undefined) {
    // A terminal is written line by line; anything else (a file, a pipe to a collector) in blocks.
    const stdout = new Stdout(pretty);
    destination = pretty ? stdout : new LineBlocks(stdout);
  }
  const stream = pretty ? prettyDestination(destination) : destination;
  const logger = pino(
    {
      level: options.level ?? "info",
      base: null,
      // No `redact`: the records are built here from a fixed set of fields (AccessRecord), none of them a credential,
      // and pino's redaction cost a twentieth of the node's time per request.
    },
    stream,
  );
  OWN_STREAMS.set(logger, stream);
  return logger;
}

// The standard-output writers of this process, each written out synchronously at exit by one listener.
const OPEN = new Set<Stdout>();
let exitHooked = false;

/**
 * Standard output through sonic-boom, which holds what it is given below `minLength` and writes it asynchronously.
 * The reader may go away (a pipe closed, a collector stopped): from then on lines are dropped, and neither a write
 * nor the exit waits for a reader. sonic-boom 5 is used directly for that: pino's own (4.x) retries an EPIPE in its
 * exit-time flushSync forever, so a node whose log reader had gone never exited.
 */
class Stdout {
  #gone = false;
  readonly #out: InstanceType<typeof SonicBoom>;
  /** Blocks still held upstream (LineBlocks), handed over before the exit's synchronous write. */
  beforeExit: (() => void) | undefined;

  constructor(sync: boolean) {
    // maxWriteRetries is sonic-boom 5's; its type definitions do not list it yet.
    const options: SonicBoomOpts & { maxWriteRetries: number } = { fd: 1, sync, minLength: sync ? 0 : LOG_BLOCK_BYTES, maxWrite: 2 * LOG_BLOCK_BYTES, maxWriteRetries: MAX_WRITE_RETRIES };
    this.#out = new SonicBoom(options);
    // An asynchronous write's failure (EPIPE, or EAGAIN past the retries) arrives here; with no listener it would be
    // thrown. There is nowhere to report it: the log is where it would go.
    this.#out.on("error", () => this.#close());
    if (!exitHooked) {
      process.on("exit", () => {
        for (const out of OPEN) out.#exit();
      });
      exitHooked = true;
    }
    OPEN.add(this);
  }

  write(text: string): void {
    if (!this.#gone) this.#out.write(text);
  }

  /** Resolves (or calls back) once what was written is out. */
  flush(cb?: (error?: Error | null) => void): void {
    if (this.#gone) cb?.(null);
    else this.#out.flush(cb);
  }

  #exit(): void {
    this.beforeExit?.();
    if (this.#gone) return;
    try {
      this.#out.flushSync();
    } catch {
      // The reader has gone (EPIPE) or stopped draining: what is held cannot be written.
    }
    this.#close();
  }

  #close(): void {
    this.#gone = true;
    OPEN.delete(this);
  }

  get gone(): boolean {
    return this.#gone;
  }
}

/**
 * Gathers lines into blocks of LOG_BLOCK_BYTES before they reach sonic-boom, and hands over what it holds at least once
 * a second, on flush() and when the process exits. sonic-boom's own buffering measures the UTF-8 length of the whole
 * block it appends to on every write: at 32 KiB blocks that was about 10 µs per access line, a seventh of a trivial
 * request's CPU.
 */
class LineBlocks {
  #lines: string[] = [];
  #chars = 0;
  readonly #out: Stdout;
  readonly #timer: NodeJS.Timeout;

  constructor(out: Stdout) {
    this.#out = out;
    this.#timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS).unref();
    out.beforeExit = () => this.#handOver();
  }

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= LOG_BLOCK_BYTES) this.#handOver();
  }

  /** pino's logger.flush(): what is held goes out now. */
  flush(cb?: (error?: Error | null) => void): void {
    this.#handOver();
    this.#out.flush(cb);
  }

  #handOver(): void {
    if (this.#out.gone) {
      clearInterval(this.#timer);
      this.#lines = [];
      this.#chars = 0;
      return;
    }
    if (this.#lines.length === 0) return;
    const block = this.#lines.join("");
    this.#lines = [];
    this.#chars = 0;
    this.#out.write(block);
  }
}

// Loggers made by createLogger, and where their lines go. Their options are fixed here (no base fields, mixin,
// formatters, serializers or hooks), so an access record can be written as the very line pino would write for it,
// without pino's generic serializer: that serializer (a property walk and a JSON.stringify per field) was the
// larger part of the access log's cost, which came to about half a trivial request's CPU per request. Any other
// logger (an application's own, a child with bindings) goes through pino.
const OWN_STREAMS = new WeakMap<Logger, { write(line: string): unknown }>();

/** Writes one access record at info level; 5xx answers at warn. */
export function logAccess(logger: Logger, record: AccessRecord): void {
  const level = record.status >= 500 ? "warn" : "info";
  const stream = OWN_STREAMS.get(logger);
  if (stream === undefined) {
    logger[level](record, "request");
    return;
  }
  if (!logger.isLevelEnabled(level)) return;
  // pino's line for (record, "request") with base null: level, time, the record's fields in order, msg. The strings
  // are written as JSON.stringify writes them (jsonString: a path may hold quotes or backslashes); status is an
  // integer and ms a finite number, written as JSON writes them.
  const ms = Number.isFinite(record.ms) ? record.ms : null;
  stream.write(
    `{"level":${level === "warn" ? 40 : 30},"time":${Date.now()},"method":${jsonString(record.method)},"route":${jsonString(record.route)},"path":${jsonString(record.path)},"status":${record.status},"ms":${ms},"client":${jsonString(record.client)},"msg":"request"}\n`,
  );
}

// What JSON.stringify escapes in a string: the quote, the backslash, control characters and surrogates (a lone one is
// written as \uXXXX; a pair passes through, but telling the two apart is left to JSON.stringify).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it: the usual record (a route name, an address, a plain path) needs no escaping,
 * and quoting it directly spares a JSON.stringify call per field (together a tenth of a trivial request's CPU). */
function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
