// @iota/is-client 0.1.19 (with @iota/is-shared-modules 0.1.16), unmodified, against a real node: authenticate() proves
// ownership at /api/v0.1/authentication/… with the api-key parameter, the JWT it gets opens our protected routes, and
// verifyJwt answers {isValid, error?} as Integration Services does; under every ApiVersion the client offers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiVersion, IdentityClient } from "@iota/is-client";
import { SingleNodeClient } from "@iota/iota.js";
import { Converter } from "@iota/util.js";
import { generateIdentityKeyPair, MemoryIdentityRegistry } from "../src/auth/index.js";
import fc from "fast-check";
import { queryParam } from "../src/node/http/auth.js";
import { startFullNode } from "./clients-helpers.js";

const SECRET = "a test secret of at least thirty-two bytes!";

function identity(): { id: string; secretKey: string; publicKey: Uint8Array } {
  const keys = generateIdentityKeyPair();
  return { id: `did:iota:${Converter.bytesToHex(keys.publicKey).slice(0, 44)}`, ...keys };
}

describe("IS client: authenticate() and verifyJwt against a node with --api-key-file", () => {
  const alice = identity();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  beforeAll(async () => {
    run = await startFullNode({ coordinator: false, mqtt: false, jwtSecret: SECRET, registry: new MemoryIdentityRegistry().add(alice.id, alice.publicKey), apiKey: "the-api-key" });
  });
  afterAll(() => run.close());

  it("authenticate() with the right api key gets a JWT that our protected POST /api/v1/messages accepts", async () => {
    const client = new IdentityClient({ isGatewayUrl: run.url, apiKey: "the-api-key" });
    await client.authenticate(alice.id, alice.secretKey);
    const jwt = client.jwtToken!;
    expect(jwt.split(".")).toHaveLength(3);
    expect((await run.jwt!.verify(jwt)).sub).toBe(alice.id);
    const withJwt = new SingleNodeClient(run.url, { headers: { Authorization: `Bearer ${jwt}` } });
    const id = await withJwt.messageSubmit({ payload: { type: 2, index: Converter.utf8ToHex("is client"), data: "" } });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    // Without it the same submission is refused.
    await expect(new SingleNodeClient(run.url).messageSubmit({ payload: { type: 2, index: "00", data: "" } })).rejects.toMatchObject({ httpStatus: 401 });
  });

  it("verifyJwt: {isValid: true} for ours; {isValid: false, error} in jsonwebtoken's words for a tampered or malformed one", async () => {
    const client = new IdentityClient({ isGatewayUrl: run.url, apiKey: "the-api-key" });
    await client.authenticate(alice.id, alice.secretKey);
    const jwt = client.jwtToken!;
    expect(await client.verifyJwt({ jwt })).toEqual({ isValid: true });
    const [header, claims, signature] = jwt.split(".");
    const flipped = `${header}.${claims}.${signature!.startsWith("A") ? "B" : "A"}${signature!.slice(1)}`;
    expect(await client.verifyJwt({ jwt: flipped })).toEqual({ isValid: false, error: "invalid signature" });
    expect(await client.verifyJwt({ jwt: "not-a-jwt" })).toEqual({ isValid: false, error: "jwt malformed" });
  });

  it("a wrong or missing api key is refused (401), as IS refuses it", async () => {
    await expect(new IdentityClient({ isGatewayUrl: run.url, apiKey: "wrong" }).authenticate(alice.id, alice.secretKey)).rejects.toMatchObject({ response: { status: 401 } });
    await expect(new IdentityClient({ isGatewayUrl: run.url }).authenticate(alice.id, alice.secretKey)).rejects.toMatchObject({ response: { status: 401 } });
    const res = await fetch(`${run.url}/api/v0.1/authentication/verify-jwt?api-key=nope`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jwt: "x" }) });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { reason: string } }).error.reason).toBe("INVALID_API_KEY");
  });

  it("an unknown identity (404, before any work) or a wrong key (401) cannot authenticate", async () => {
    const mallory = identity();
    await expect(new IdentityClient({ isGatewayUrl: run.url, apiKey: "the-api-key" }).authenticate(mallory.id, mallory.secretKey)).rejects.toMatchObject({ response: { status: 404 } });
    await expect(new IdentityClient({ isGatewayUrl: run.url, apiKey: "the-api-key" }).authenticate(alice.id, mallory.secretKey)).rejects.toMatchObject({ response: { status: 401 } });
  });
});

describe("the api-key parameter is read from the query as URL's searchParams reads it", () => {
  it("queryParam agrees with new URL(href).searchParams.get on any query, encoded or not", () => {
    const part = fc.oneof(fc.string(), fc.constantFrom("api-key", "api%2Dkey", "api-key=", "a=b&api-key=c", "+", "%", "%zz", "#", "?", "&", "="));
    fc.assert(
      fc.property(fc.array(part, { maxLength: 4 }), fc.boolean(), fc.constantFrom("&", "?", "#", ""), (parts, withQuery, separator) => {
        const href = new URL(`http://127.0.0.1:1/authentication/prove-ownership/x${withQuery ? "?" : ""}${parts.join(separator)}`).href;
        expect(queryParam(href, "api-key")).toBe(new URL(href).searchParams.get("api-key"));
      }),
    );
    expect(queryParam("http://h/p?api-key=a%20b+c&api-key=2", "api-key")).toBe("a b c");
    // A "?" in the fragment starts no query; one inside the query is part of a value.
    expect(queryParam("http://h/p#&?&api-key", "api-key")).toBe(null);
    expect(queryParam("http://h/p?a=?&api-key=x#?api-key=y", "api-key")).toBe("x");
    // A query that begins with "?" keeps it: its first name is "?api-key".
    expect(queryParam("http://h/p??api-key=x", "api-key")).toBe(null);
  });
});

describe("without --api-key-file the parameter is accepted and ignored", () => {
  it("authenticate() with any api key, or none, succeeds", async () => {
    const bob = identity();
    const run = await startFullNode({ coordinator: false, mqtt: false, jwtSecret: SECRET, registry: new MemoryIdentityRegistry().add(bob.id, bob.publicKey) });
    try {
      for (const apiKey of [undefined, "", "anything"]) {
        const client = new IdentityClient(apiKey === undefined ? { isGatewayUrl: run.url } : { isGatewayUrl: run.url, apiKey });
        await client.authenticate(bob.id, bob.secretKey);
        expect(await client.verifyJwt({ jwt: client.jwtToken! })).toEqual({ isValid: true });
      }
    } finally {
      await run.close();
    }
  });
});

describe("every ApiVersion of @iota/is-client selects a prefix we answer under", () => {
  const carol = identity();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  beforeAll(async () => {
    run = await startFullNode({ coordinator: false, mqtt: false, jwtSecret: SECRET, registry: new MemoryIdentityRegistry().add(carol.id, carol.publicKey), apiKey: "the-api-key" });
  });
  afterAll(() => run.close());

  it("the enum holds the versions this suite covers (a new one must be added to src/node/http/auth.ts)", () => {
    expect(Object.values(ApiVersion).sort()).toEqual(["v0.1", "v1"]);
  });

  // The client builds `${url}/api/${apiVersion}` from the gateway URL, or from the SSI bridge URL without the gateway.
  for (const apiVersion of Object.values(ApiVersion)) {
    for (const via of ["gateway", "ssi bridge"] as const) {
      it(`apiVersion ${apiVersion} through the ${via} URL: authenticate() gets a JWT and verifyJwt checks it`, async () => {
        const config = via === "gateway" ? { isGatewayUrl: run.url } : { useGatewayUrl: false, ssiBridgeUrl: run.url, auditTrailUrl: run.url };
        const client = new IdentityClient({ ...config, apiKey: "the-api-key", apiVersion });
        await client.authenticate(carol.id, carol.secretKey);
        const jwt = client.jwtToken!;
        expect((await run.jwt!.verify(jwt)).sub).toBe(carol.id);
        expect(await client.verifyJwt({ jwt })).toEqual({ isValid: true });
        expect(await client.verifyJwt({ jwt: "not-a-jwt" })).toEqual({ isValid: false, error: "jwt malformed" });
        // The api key is checked under this prefix too.
        await expect(new IdentityClient({ ...config, apiKey: "wrong", apiVersion }).authenticate(carol.id, carol.secretKey)).rejects.toMatchObject({ response: { status: 401 } });
      });
    }
  }

  it("a prefix no ApiVersion selects is still 404", async () => {
    const res = await fetch(`${run.url}/api/v2/authentication/prove-ownership/${encodeURIComponent(carol.id)}?api-key=the-api-key`);
    expect(res.status).toBe(404);
  });
});
