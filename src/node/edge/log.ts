// The node's log (pino): JSON lines, or a short human-readable line per record when the output is a terminal.
// The access log writes one record per answered request with its method, route name, path (never the query string,
// which may hold an api-key), status, duration and client address; no header, token, body or signed nonce is logged.
import { pino, type Logger } from "pino";

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
  /** Milliseconds from the request's arrival to its answer. */
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

/** A pino logger for the node. */
export function createLogger(options: LogOptions = {}): Logger {
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  let destination = options.destination;
  if (destination === undefined) {
    // A terminal is written line by line; anything else (a file, a pipe to a collector) in blocks.
    // sonic-boom holds what it is given below a block (the once-a-second hand-over): its exit hook then writes that
    // synchronously, and its flush(cb) waits until the lines are written and synced.
    const stdout = pino.destination({ dest: 1, sync: pretty, minLength: pretty ? 0 : LOG_BLOCK_BYTES, maxWrite: 2 * LOG_BLOCK_BYTES });
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

// The block writers open in this process, handed over at exit by one listener.
const HELD = new Set<LineBlocks>();
let exitHooked = false;

/**
 * Gathers lines into blocks of LOG_BLOCK_BYTES before they reach sonic-boom, and hands over what it holds at least once
 * a second, on flush() and when the process exits. sonic-boom's own buffering measures the UTF-8 length of the whole
 * block it appends to on every write: at 32 KiB blocks that was about 10 µs per access line, a seventh of a trivial
 * request's CPU.
 */
class LineBlocks {
  #lines: string[] = [];
  #chars = 0;
  #closed = false;
  readonly #out: ReturnType<typeof pino.destination>;

  constructor(out: ReturnType<typeof pino.destination>) {
    this.#out = out;
    const timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS).unref();
    if (!exitHooked) {
      // Before sonic-boom's own exit hook (pino registers it), which writes what sonic-boom holds synchronously: what is
      // held here is less than a block, which sonic-boom keeps rather than starting a write that could not finish.
      process.prependListener("exit", () => {
        for (const blocks of HELD) blocks.#handOver();
      });
      exitHooked = true;
    }
    HELD.add(this);
    out.once("close", () => {
      this.#closed = true;
      clearInterval(timer);
      HELD.delete(this);
    });
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
    if (this.#lines.length === 0 || this.#closed) return;
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
