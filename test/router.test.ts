// The router passes over a route whose literal start the path does not share, without running its pattern: the route
// it picks must always be the first whose pattern matches, as a plain scan of the table would pick.
import { describe, expect, it } from "vitest";
import { createRouter, json, literalStart, routerAnswers, type Route } from "../src/node/http/router.js";

const patterns = [
  /^\/health$/,
  /^\/api\/v1\/messages$/,
  /^\/api\/v1\/messages\/([^/]+)$/,
  /^\/api\/v1\/messages\/([^/]+)\/raw$/,
  /^(?:\/api\/(?:v0\.1|v1))?\/authentication\/prove-ownership\/([^/]+)$/,
  /^\/dashboard(?:\/([A-Za-z0-9._-]+))?$/,
  /^\/a?b$/,
  /^\/x{0,2}y$/,
  /^\/ab|c$/,
  /^\/a\.b\/(x|y)$/,
  /^\/CaSe$/i,
  /^\/a[|]b$/,
  /d$/,
];

describe("literalStart", () => {
  it("is the text every match starts with, and nothing when that is not plain", () => {
    expect(patterns.map(literalStart)).toEqual([
      "/health",
      "/api/v1/messages",
      "/api/v1/messages/",
      "/api/v1/messages/",
      "",
      "/dashboard",
      "/",
      "/",
      "",
      "/a.b/",
      "",
      "/a",
      "",
    ]);
  });
});

describe("the router picks the first route whose pattern matches", () => {
  it("on paths made from the patterns' own pieces (2,000 paths)", async () => {
    const routes: Route[] = patterns.map((pattern, i) => ({ name: `r${i}`, pattern, methods: { GET: async () => json(200, { i }) } }));
    const answer = routerAnswers(createRouter(routes))!;
    const pieces = ["/", "/api", "/v1", "/v0.1", "/messages", "/raw", "/ab", "/a", "b", "/b", "c", "d", "/x", "y", "xx", "/a.b", "/health", "/dashboard", "/main.js", "/authentication", "/prove-ownership", "/did:iota:1", ".", "|", "/CASE", "/case"];
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let matched = 0;
    for (let i = 0; i < 2000; i++) {
      let path = "";
      for (let k = 1 + next(5); k > 0; k--) path += pieces[next(pieces.length)];
      if (!path.startsWith("/")) path = `/${path}`;
      const request = { method: "GET", pathname: path, url: `http://node${path}`, headers: new Headers(), signal: new AbortController().signal } as unknown as Request;
      const context: { route?: string } = {};
      await answer(request, context);
      const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
      const expected = routes.find((r) => r.pattern.test(trimmed))?.name;
      expect(context.route, path).toBe(expected);
      if (expected !== undefined) matched++;
    }
    expect(matched).toBeGreaterThan(100);
  });
});
