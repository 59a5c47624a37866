// The prove-ownership routes' answers (PROTOCOL.md §7, NODE-API.md §3): the nonce and the JWT, each under its own name
// and again under `data`, byte for byte what JSON.stringify writes, whatever text the service hands back.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { credentialAnswer } from "../src/node/http/auth.js";
import { json } from "../src/node/http/router.js";

describe("a credential is answered as {name: value, data: {name: value}}, exactly as JSON.stringify writes it", () => {
  it("nonces, JWTs and any other text give JSON.stringify's bytes, status and headers", () => {
    const samples = ["0123456789abcdef0123456789abcdef01234567", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln-_", "", 'a"b', "a\\b", "\u0000", "é", "\ud800", "</script>"];
    for (const name of ["nonce", "jwt"] as const) {
      for (const value of samples) {
        const expected = json(200, { [name]: value, data: { [name]: value } });
        const answer = credentialAnswer(name, value);
        expect(answer.body).toBe(expected.body);
        expect(answer.status).toBe(expected.status);
        expect(answer.headers).toEqual(expected.headers);
      }
    }
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.constantFrom("nonce" as const, "jwt" as const), (value, name) => {
        expect(credentialAnswer(name, value).body).toBe(JSON.stringify({ [name]: value, data: { [name]: value } }));
      }),
      { numRuns: 2000 },
    );
  });

  it("each answer has headers of its own, for the router to add to", () => {
    const a = credentialAnswer("nonce", "00");
    const b = credentialAnswer("nonce", "00");
    expect(a.headers).not.toBe(b.headers);
  });
});
