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
