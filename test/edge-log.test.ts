// The access log writes the records of the node's own loggers without pino's serializer: each line must be the very
// line pino writes for the same record, and every other logger still goes through pino.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createLogger, type AccessRecord } from "../src/node/index.js";
import { logAccess } from "../src/node/edge/log.js";

function capture(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const records: AccessRecord[] = [
  { method: "GET", route: "message-raw", path: "/api/v1/messages/ab/raw", status: 200, ms: 0.123456789, client: "127.0.0.1" },
  { method: "POST", route: "messages", path: '/api/v1/"quoted"\\back\u0001slash\u2028', status: 503, ms: 12, client: "::1" },
  { method: "-", route: "-", path: "-", status: 408, ms: 0, client: "2001:db8::1" },
  // A surrogate pair, DEL and U+2028 pass through unescaped, as pino writes them.
  { method: "GET", route: "-", path: "/\ud83d\ude00/\u007f/\u2028", status: 404, ms: 1.5, client: "::ffff:127.0.0.1" },
];

describe("an access record of the node's own logger is the line pino writes", () => {
  it("level, time, the record's fields in order and msg, byte for byte (time aside)", () => {
    const ours = capture();
    const theirs = capture();
    const logger = createLogger({ destination: ours, pretty: false });
    const reference = pino({ level: "info", base: null }, theirs);
    for (const record of records) {
      logAccess(logger, record);
      if (record.status >= 500) reference.warn(record, "request");
      else reference.info(record, "request");
    }
    const untimed = (line: string): string => line.replace(/"time":\d+/, '"time":0');
    expect(ours.lines.map(untimed)).toEqual(theirs.lines.map(untimed));
    expect(ours.lines.every((line) => line.endsWith("}\n"))).toBe(true);
  });

  it("a lone surrogate is escaped as JSON.stringify does (pino would write it raw, and UTF-8 would lose it)", () => {
    const out = capture();
    const path = "/a\ud800b/\udfff";
    logAccess(createLogger({ destination: out, pretty: false }), { ...records[0]!, path });
    expect(out.lines[0]).toContain(`"path":${JSON.stringify(path)},`);
    expect(out.lines[0]).toContain("\\ud800");
    expect((JSON.parse(out.lines[0]!) as { path: string }).path).toBe(path);
  });

  it("keeps the level: info records stop below info, 5xx ones at warn", () => {
    const out = capture();
    const logger = createLogger({ destination: out, pretty: false, level: "warn" });
    for (const record of records) logAccess(logger, record);
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ level: 40, status: 503 });
    logger.level = "silent";
    logAccess(logger, records[1]!);
    expect(out.lines).toHaveLength(1);
  });

  it("a pretty logger gets the same record, as its human-readable line", () => {
    const out = capture();
    logAccess(createLogger({ destination: out, pretty: true }), records[0]!);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(/INFO {2}request method=GET route=message-raw path=\/api\/v1\/messages\/ab\/raw status=200 ms=0.123456789 client=127.0.0.1\n$/);
  });

  it("any other logger (an application's own, a child with bindings) goes through pino", () => {
    const out = capture();
    const logger = pino({ level: "info" }, out);
    logAccess(logger, records[0]!);
    logAccess(createLogger({ destination: out, pretty: false }).child({ part: "edge" }), records[0]!);
    expect(out.lines).toHaveLength(2);
    expect(JSON.parse(out.lines[0]!)).toMatchObject({ pid: process.pid, route: "message-raw", msg: "request" });
    expect(JSON.parse(out.lines[1]!)).toMatchObject({ part: "edge", route: "message-raw", msg: "request" });
  });
});

describe("the default destination (standard output, not a terminal) writes lines in blocks", () => {
  // A child process with the built package: its standard output is a pipe, so createLogger() takes the block writer.
  const logger = new URL("../dist/node/edge/log.js", import.meta.url).href;
  // `readAfterMs`: the reader starts that late, as a slow collector would (the pipe fills while the child runs).
  // A child running `body` with `log` (createLogger()) and logAccess in scope, its standard output a pipe to this process.
  const logging = async (body: string) => {
    const { spawn } = await import("node:child_process");
    return spawn(process.execPath, ["--input-type=module", "-e", `import { createLogger, logAccess } from ${JSON.stringify(logger)};\nconst log = createLogger();\n${body}`], { stdio: ["ignore", "pipe", "inherit"] });
  };
  const run = async (body: string, readAfterMs = 0): Promise<{ lines: string[]; at: number[] }> => {
    const child = await logging(body);
    const started = performance.now();
    const at: number[] = [];
    let text = "";
    child.stdout.pause();
    setTimeout(() => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
        at.push(performance.now() - started);
      });
      child.stdout.resume();
    }, readAfterMs);
    await new Promise<void>((resolve, reject) => child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`)))));
    return { lines: text.split("\n").filter((line) => line !== ""), at };
  };

  it("every line arrives, in order, when the process exits with lines still held (process.exit included)", async () => {
    const { lines } = await run(`for (let i = 0; i < 5000; i++) logAccess(log, { method: "GET", route: "r", path: "/" + i, status: 200, ms: 1, client: "127.0.0.1" });\nlog.warn("last");\nprocess.exit(0);`);
    expect(lines).toHaveLength(5001);
    lines.slice(0, 5000).forEach((line, i) => expect(JSON.parse(line)).toMatchObject({ path: `/${i}`, msg: "request" }));
    expect(JSON.parse(lines[5000]!)).toMatchObject({ level: 40, msg: "last" });
  }, 20_000);

  it("every line arrives when the process ends by itself, its reader slow to start (5 runs of 10,000 lines)", async () => {
    for (let i = 0; i < 5; i++) {
      const { lines } = await run(`for (let i = 0; i < 10000; i++) logAccess(log, { method: "GET", route: "r", path: "/" + i, status: 200, ms: 1, client: "127.0.0.1" });`, 300);
      expect(lines).toHaveLength(10000);
      expect(JSON.parse(lines[9999]!)).toMatchObject({ path: "/9999" });
    }
  }, 60_000);

  // How the child ends when its reader has closed the pipe ("closed") or never reads it ("stalled"); killed after 20 s.
  const ending = async (body: string, reader: "closed" | "stalled"): Promise<{ code: number | null; ms: number }> => {
    const child = await logging(body);
    if (reader === "closed") child.stdout.destroy();
    else child.stdout.pause();
    const started = performance.now();
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    clearTimeout(killer);
    child.stdout.destroy();
    return { code, ms: performance.now() - started };
  };

  it("the process still ends when its reader has closed the pipe: a line held at exit is dropped, not retried forever", async () => {
    // sonic-boom 4 (pino's own) retried the exit's EPIPE every 100 ms for ever: this child never ended.
    const { code, ms } = await ending(`setTimeout(() => log.info("held at exit"), 200);`, "closed");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  }, 30_000);

  it("lines written after the reader closed the pipe (EPIPE on the asynchronous writes) are dropped; no crash", async () => {
    const { code } = await ending(`let n = 0;\nconst t = setInterval(() => { for (let i = 0; i < 2000; i++) logAccess(log, { method: "GET", route: "r", path: "/" + n++, status: 200, ms: 1, client: "127.0.0.1" }); log.flush(); }, 20);\nsetTimeout(() => clearInterval(t), 1500);`, "closed");
    expect(code).toBe(0);
  }, 30_000);

  it("a reader that never drains the pipe holds the exit for a few seconds at most, not for ever", async () => {
    // 20 MB of lines: far more than a pipe holds, so every write past the first 64 KiB meets EAGAIN.
    const { code, ms } = await ending(`for (let i = 0; i < 200000; i++) logAccess(log, { method: "GET", route: "r", path: "/" + i, status: 200, ms: 1, client: "127.0.0.1" });`, "stalled");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(15_000);
  }, 30_000);

  it("a line is held no longer than about a second when nothing else is written", async () => {
    const { lines, at } = await run(`log.info("held");\nsetTimeout(() => process.exit(0), 3000);`);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(["held"]);
    // Written by the once-a-second hand-over, well before the exit at 3 s would have written it.
    expect(at[0]).toBeLessThan(2500);
  }, 20_000);
});
