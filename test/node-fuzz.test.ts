// Fuzzing the web handler (no sockets): whatever arrives — JSON of any shape, random bytes, odd paths, methods and
// headers — the answer is a well-formed error or success from the documented set, never a 500 and never a throw.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHs256Jwt } from "../src/auth/index.js";
import { createHandler, createNode } from "../src/node/index.js";

const internal: unknown[] = [];
const node = createNode({ network: "chrysalis-fuzz", minPoWScore: 4000, pow: false });
const open = createHandler(node, { onInternalError: (e) => internal.push(e) });
const guarded = createHandler(node, { jwt: createHs256Jwt({ secret: "fuzzing secret of at least 32 bytes!!" }), onInternalError: (e) => internal.push(e) });
const BASE = "http://fuzz.local";
const hexString = (c: { minLength?: number; maxLength: number }) => fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), ...c });

async function answer(handler: (r: Request) => Promise<Response>, request: Request): Promise<{ status: number; body: any }> {
  const response = await handler(request);
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

function expectErrorShape(r: { status: number; body: any }): void {
  expect(r.body?.error?.code).toBe(String(r.status));
  expect(typeof r.body?.error?.message).toBe("string");
}

describe("any JSON body to POST /api/v1/messages gets 400 or 503, never 500", () => {
  it("fc.jsonValue bodies, and mutated plausible messages", async () => {
    const plausible = fc.record(
      {
        networkId: fc.oneof(fc.constant("0"), fc.bigInt({ min: 0n, max: (1n << 64n) + 5n }).map(String), fc.string(), fc.integer()),
        parentMessageIds: fc.oneof(fc.array(hexString({ minLength: 0, maxLength: 70 }), { maxLength: 10 }), fc.jsonValue()),
        payload: fc.oneof(
          fc.constant(null),
          fc.record({ type: fc.integer({ min: -1, max: 5 }), index: hexString({ maxLength: 140 }), data: fc.oneof(hexString({ maxLength: 40 }), fc.jsonValue()) }, { requiredKeys: [] }),
          fc.jsonValue(),
        ),
        nonce: fc.oneof(fc.constant("0"), fc.bigInt({ min: 0n, max: 1n << 64n }).map(String), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), plausible), async (body) => {
        const r = await answer(open, new Request(`${BASE}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
        expect([400, 503]).toContain(r.status);
        expectErrorShape(r);
      }),
      { numRuns: 400 },
    );
    expect(internal).toEqual([]);
  });
});

describe("any bytes to POST /api/v1/messages get 400 (or 413 over 32 KiB), never 500", () => {
  it("random byte strings", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const r = await answer(open, new Request(`${BASE}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bytes }));
        expect(r.status).toBe(400);
        expectErrorShape(r);
      }),
      { numRuns: 300 },
    );
    expect(internal).toEqual([]);
  });
});

describe("any path, method and authorization header get a documented status", () => {
  it("random requests", async () => {
    const segment = fc.oneof(fc.constantFrom("api", "v1", "messages", "info", "tips", "raw", "authentication", "prove-ownership", "%", "%zz", "..", ""), fc.string({ maxLength: 70 }).map(encodeURIComponent), hexString({ minLength: 64, maxLength: 64 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { maxLength: 6 }),
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"),
        fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
        async (segments, method, authorization) => {
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (authorization !== undefined) {
            try {
              new Headers({ authorization });
              headers.authorization = authorization;
            } catch {
              /* not a legal header value: nothing to send */
            }
          }
          const body = method === "GET" || method === "HEAD" ? null : "{}";
          const r = await answer(guarded, new Request(`${BASE}/${segments.join("/")}`, { method, headers, body }));
          expect([200, 400, 401, 404, 405, 503]).toContain(r.status);
          if (r.status !== 200 && method !== "HEAD") expectErrorShape(r);
        },
      ),
      { numRuns: 400 },
    );
    expect(internal).toEqual([]);
  });
});
