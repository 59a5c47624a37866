// Bearer tokens in headers (PROTOCOL.md §7): either Authorization or Authentication, names and scheme in any case,
// disagreeing tokens refused; the client helper sends both. Ends with a real HTTP round trip on 127.0.0.1.
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AuthError, authHeaders, bearerToken, createHs256Jwt, wwwAuthenticate, type HeaderBag } from "../src/auth/index.js";

type Expected = { token: string } | { code: "MISSING_TOKEN" | "INVALID_AUTHORIZATION_HEADER" | "CONFLICTING_TOKENS"; status: number };

const MISSING = { code: "MISSING_TOKEN", status: 401 } as const;
const MALFORMED = { code: "INVALID_AUTHORIZATION_HEADER", status: 400 } as const;
const CONFLICT = { code: "CONFLICTING_TOKENS", status: 400 } as const;

// [description, headers, expected]
const TABLE: Array<[string, Record<string, string | string[] | undefined>, Expected]> = [
  ["standard Authorization", { authorization: "Bearer abc.def.ghi" }, { token: "abc.def.ghi" }],
  ["the interface document's Authentication", { authentication: "Bearer abc.def.ghi" }, { token: "abc.def.ghi" }],
  ["header names in any case", { AuThOrIzAtIoN: "Bearer t1" }, { token: "t1" }],
  ["Authentication in capitals", { AUTHENTICATION: "Bearer t1" }, { token: "t1" }],
  ["the Bearer scheme in any case", { authorization: "bEaReR t1" }, { token: "t1" }],
  ["several spaces after the scheme, whitespace around the value", { authorization: "  Bearer   t1 \t" }, { token: "t1" }],
  ["token68 characters and padding", { authorization: "Bearer aZ09-._~+/==" }, { token: "aZ09-._~+/==" }],
  ["both headers with the same token", { Authorization: "Bearer t1", Authentication: "bearer t1" }, { token: "t1" }],
  ["both headers with different tokens", { Authorization: "Bearer t1", Authentication: "Bearer t2" }, CONFLICT],
  ["the same name twice in different case, different tokens", { authorization: "Bearer t1", Authorization: "Bearer t2" }, CONFLICT],
  ["repeated values that agree", { authentication: ["Bearer t1", "Bearer t1"] }, { token: "t1" }],
  ["repeated values that disagree", { authentication: ["Bearer t1", "Bearer t2"] }, CONFLICT],
  ["no header at all", { "content-type": "application/json" }, MISSING],
  ["an undefined value", { authorization: undefined }, MISSING],
  ["an empty value", { authorization: "" }, MISSING],
  ["another scheme only", { authorization: "Basic dXNlcjpwYXNz" }, MISSING],
  ["another scheme beside a Bearer token", { authorization: "Basic dXNlcjpwYXNz", authentication: "Bearer t1" }, { token: "t1" }],
  ["Bearer without a token", { authorization: "Bearer" }, MALFORMED],
  ["Bearer with two tokens", { authorization: "Bearer t1 t2" }, MALFORMED],
  ["two credentials joined by a comma", { authorization: "Bearer t1, Bearer t2" }, MALFORMED],
  ["a tab instead of a space after the scheme", { authorization: "Bearer\tt1" }, MALFORMED],
  ["a token with a quote", { authorization: 'Bearer "t1"' }, MALFORMED],
  ["a value far too long", { authorization: `Bearer ${"a".repeat(20_000)}` }, MALFORMED],
  ["a value that is not a string", { authorization: 42 as unknown as string }, MALFORMED],
];

function outcome(headers: HeaderBag): Expected {
  try {
    return { token: bearerToken(headers) };
  } catch (error) {
    expect(error).toBeInstanceOf(AuthError);
    const e = error as AuthError;
    return { code: e.code as "MISSING_TOKEN", status: e.status };
  }
}

describe("servers accept Authorization or Authentication, names and Bearer scheme case-insensitive; two different tokens are refused", () => {
  it.each(TABLE)("%s", (_name, headers, expected) => {
    expect(outcome(headers)).toEqual(expected);
  });

  it("a fetch Headers object reads the same way", () => {
    expect(outcome(new Headers({ Authentication: "Bearer t1" }))).toEqual({ token: "t1" });
    expect(outcome(new Headers({ authorization: "BEARER t1", authentication: "Bearer t1" }))).toEqual({ token: "t1" });
    expect(outcome(new Headers({ authorization: "Bearer t1", authentication: "Bearer t2" }))).toEqual(CONFLICT);
    const joined = new Headers();
    joined.append("authorization", "Bearer t1");
    joined.append("authorization", "Bearer t2");
    expect(outcome(joined)).toEqual(MALFORMED);
    expect(outcome(new Headers())).toEqual(MISSING);
  });

  it("arbitrary header records give a token or an AuthError, never a crash", () => {
    const value = fc.oneof(fc.string(), fc.constantFrom("Bearer t1", "bearer t2", "Basic x", "Bearer"), fc.array(fc.string(), { maxLength: 3 }), fc.anything());
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom("authorization", "Authentication", "AUTHORIZATION", "x-other"), value), (headers) => {
        const result = outcome(headers as Record<string, string>);
        if ("token" in result) expect(result.token).toMatch(/^[A-Za-z0-9\-._~+/]+=*$/);
        else expect([400, 401]).toContain(result.status);
      }),
      { numRuns: 500 },
    );
  });

  it("something that is not headers is an INVALID_ARGUMENT", () => {
    for (const bad of [null, undefined, "Bearer t1", 7]) {
      expect(() => bearerToken(bad as unknown as HeaderBag)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });
});

describe("a Bearer value reads the same whichever way it is spelt: the usual spelling and the general grammar agree", () => {
  // RFC 7235 credentials and RFC 6750's b64token, as the specification words them: optional whitespace around the
  // value, the scheme, one or more spaces, the token; anything after the token but whitespace makes the value malformed.
  function reference(value: string): Expected {
    if (value.trim() === "") return MISSING;
    const match = /^[ \t]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)(?: +([^ \t].*?))?[ \t]*$/s.exec(value);
    if (match === null) return MALFORMED;
    if (match[1]!.toLowerCase() !== "bearer") return MISSING;
    const token = match[2];
    if (token === undefined || !/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) return MALFORMED;
    return { token };
  }

  it("arbitrary values built from the characters that matter give the grammar's answer", () => {
    const part = fc.constantFrom("Bearer", "bearer", "BEARER", "Bearerx", "Basic", " ", "  ", "\t", "\n", "\u00a0", "=", "==", ",", '"', "a", "Z9", "-._~+/", ".", "\u00e9", "\ud800");
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        const value = parts.join("");
        expect(outcome({ authorization: value })).toEqual(reference(value));
      }),
      { numRuns: 3000 },
    );
  });

  it("values as clients send them, and their near misses", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    for (const value of [`Bearer ${jwt}`, `bearer   ${jwt}`, `Bearer ${jwt}==`, `Bearer ${jwt}=x`, `Bearer ${jwt} `, ` Bearer ${jwt}`, `Bearer ${jwt}\n`, `Bearer\t${jwt}`, `Bearer ${jwt}\u00e9`, `Bearers ${jwt}`, `Bearer =${jwt}`, "Bearer ="]) {
      expect(outcome({ authorization: value }), JSON.stringify(value)).toEqual(reference(value));
    }
  });
});

describe("clients send the JWT in both Authorization and Authentication", () => {
  it("authHeaders gives both, and bearerToken reads them back", () => {
    const headers = authHeaders("aaa.bbb.ccc");
    expect(headers).toEqual({ Authorization: "Bearer aaa.bbb.ccc", Authentication: "Bearer aaa.bbb.ccc" });
    expect(bearerToken(headers)).toBe("aaa.bbb.ccc");
  });

  it("a value that would break the header (space, CR LF, empty) is refused", () => {
    for (const bad of ["", "a b", "a\r\nX-Injected: 1", 5]) {
      expect(() => authHeaders(bad as string)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });
});

describe("RFC 6750 challenges for refusals", () => {
  it("WWW-Authenticate: no error for a missing token, invalid_token for 401s, invalid_request for 400s", () => {
    expect(wwwAuthenticate(new AuthError("MISSING_TOKEN", "x"))).toBe('Bearer realm="chrysalis"');
    expect(wwwAuthenticate(new AuthError("TOKEN_EXPIRED", "x"), "node")).toBe('Bearer realm="node", error="invalid_token"');
    expect(wwwAuthenticate(new AuthError("CONFLICTING_TOKENS", "x"))).toBe('Bearer realm="chrysalis", error="invalid_request"');
  });
});

describe("over real HTTP on 127.0.0.1: a protected route reads either header", () => {
  it("the token arrives through Node's header handling, in any case and either name", async () => {
    const jwt = createHs256Jwt({ secret: "a shared secret of at least thirty-two bytes" });
    const server = createServer((req, res) => {
      void (async () => {
        try {
          const claims = await jwt.verify(bearerToken(req.headers));
          res.writeHead(200, { "content-type": "text/plain" }).end(claims.sub);
        } catch (error) {
          const e = error as AuthError;
          res.writeHead(e.status, { "www-authenticate": wwwAuthenticate(e) }).end(e.code);
        }
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const call = (headers: IncomingHttpHeaders | [string, string][]) =>
      new Promise<{ status: number; body: string; challenge: string | undefined }>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path: "/protected", headers: headers as never }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, challenge: res.headers["www-authenticate"] }));
        });
        req.on("error", reject);
        req.end();
      });
    try {
      const token = await jwt.issue("did:iota:abc");
      expect(await call(authHeaders(token))).toMatchObject({ status: 200, body: "did:iota:abc" });
      expect(await call({ AUTHENTICATION: `bearer ${token}` })).toMatchObject({ status: 200, body: "did:iota:abc" });
      expect(await call({ authorization: `Bearer ${token}` })).toMatchObject({ status: 200, body: "did:iota:abc" });
      expect(await call({ authorization: `Bearer ${token}`, authentication: `Bearer ${await jwt.issue("mallory")}` })).toMatchObject({ status: 400, body: "CONFLICTING_TOKENS" });
      expect(await call({})).toMatchObject({ status: 401, body: "MISSING_TOKEN", challenge: 'Bearer realm="chrysalis"' });
      expect(await call({ authorization: `Bearer ${token}x` })).toMatchObject({ status: 401, body: "TOKEN_INVALID_SIGNATURE" });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
