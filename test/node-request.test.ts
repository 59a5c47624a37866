// The server's lazy web Request (NodeRequest): its headers read node:http's raw list with Headers' own rules, checked
// against undici's Headers over a real loopback request, duplicates, case and surrounding whitespace included.
import { createServer, type IncomingMessage } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { NodeRequest } from "../src/node/node-request.js";

/** The IncomingMessage node:http makes of these raw header lines (sent as written). */
async function received(lines: string[]): Promise<IncomingMessage> {
  let resolveReq!: (req: IncomingMessage) => void;
  const got = new Promise<IncomingMessage>((resolve) => (resolveReq = resolve));
  const server = createServer((req, res) => {
    resolveReq(req);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, "127.0.0.1");
    socket.write(`GET /x HTTP/1.1\r\nHost: a\r\n${lines.map((l) => `${l}\r\n`).join("")}Connection: close\r\n\r\n`);
    const req = await got;
    socket.destroy();
    return req;
  } finally {
    server.close();
  }
}

function reference(raw: string[]): Headers {
  const h = new Headers();
  for (let i = 0; i < raw.length; i += 2) h.append(raw[i]!, raw[i + 1]!);
  return h;
}

describe("NodeRequest headers", () => {
  it("get and has answer as undici's Headers over the same raw list", async () => {
    const req = await received(["Content-Type: application/json ", "AUTHORIZATION:\tBearer a", "authorization: Bearer b", "X-Empty:", "x-multi: 1", "X-Multi: 2 , 3", "Cookie: a=1", "cookie: b=2"]);
    const ours = new NodeRequest(req, "http://a").headers;
    const theirs = reference(req.rawHeaders);
    for (const name of ["content-type", "Content-Type", "authorization", "x-empty", "x-multi", "cookie", "host", "connection", "missing", "content-length"]) {
      expect(ours.get(name), name).toBe(theirs.get(name));
      expect(ours.has(name), name).toBe(theirs.has(name));
    }
    expect(ours.get("authorization")).toBe("Bearer a, Bearer b");
  });

  it("strips the HTTP whitespace Headers strips, at both ends only (values node:http would not send as they are)", () => {
    const values = [" a ", "\t\ta b\t", "\r\n x\r\n", "  ", "", "x", " \t\r\n", "a \t b", "\u00a0a\u00a0", "\fa\v"];
    const raw = values.flatMap((v, i) => [`X-${i}`, v]);
    const ours = new NodeRequest({ rawHeaders: raw, method: "GET", url: "/" } as unknown as IncomingMessage, "http://a").headers;
    const theirs = new Headers();
    values.forEach((v, i) => {
      try {
        theirs.append(`X-${i}`, v);
      } catch {
        // Headers refuses some of these outright; node:http never hands them over.
      }
    });
    values.forEach((_, i) => {
      if (theirs.has(`x-${i}`)) expect(ours.get(`x-${i}`), JSON.stringify(values[i])).toBe(theirs.get(`x-${i}`));
    });
    expect(ours.get("x-1")).toBe("a b");
  });

  it("iterates and changes as Headers, and reads its changes back", async () => {
    const req = await received(["X-B: 2", "X-A: 1"]);
    const ours = new NodeRequest(req, "http://a").headers;
    expect([...(ours as unknown as Iterable<[string, string]>)]).toEqual([...(reference(req.rawHeaders) as unknown as Iterable<[string, string]>)]);
    ours.set("x-a", "changed");
    ours.delete("x-b");
    expect(ours.get("X-A")).toBe("changed");
    expect(ours.has("x-b")).toBe(false);
    const seen: string[] = [];
    ours.forEach((value, key, parent) => {
      expect(parent).toBe(ours);
      seen.push(`${key}=${value}`);
    });
    expect(seen).toContain("x-a=changed");
  });

  it("a real Request built from it carries the same headers", async () => {
    const req = await received(["X-Trace: t1"]);
    const light = new NodeRequest(req, "http://a");
    expect(light.headers.get("x-trace")).toBe("t1");
    const copy = new Request(light.url, { headers: light.headers });
    expect(copy.headers.get("x-trace")).toBe("t1");
  });
});

describe("NodeRequest headers are Headers to their readers", () => {
  it("instanceof Headers, and bearerToken reads the token from them", async () => {
    const { bearerToken } = await import("../src/auth/index.js");
    const req = await received(["Authorization: Bearer abc.def.ghi"]);
    const headers = new NodeRequest(req, "http://a").headers;
    expect(headers instanceof Headers).toBe(true);
    expect(bearerToken(headers)).toBe("abc.def.ghi");
  });
});
