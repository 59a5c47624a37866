// Errors from the client are the client's error type: whatever fails inside a call (a bad secret key, a bad
// argument, a malformed answer, no answer) reaches the caller as a ClientError with the original as its cause.
import { describe, expect, it } from "vitest";
import { AuthError } from "../src/auth/errors.js";
import { ProtocolError } from "../src/bytes/errors.js";
import { ClientError, createClient } from "../src/client/index.js";

/** A node that hands out a nonce and records whether anything was posted. */
function nonceNode(): { fetch: typeof fetch; posts: number } {
  const state = { posts: 0, fetch: undefined as unknown as typeof fetch };
  state.fetch = async (_input, init) => {
    if (init?.method === "POST") state.posts++;
    return Response.json({ nonce: "0123456789abcdef0123456789abcdef01234567", data: { nonce: "0123456789abcdef0123456789abcdef01234567" } });
  };
  return state;
}

async function failure(promise: Promise<unknown>): Promise<ClientError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientError);
  return error as ClientError;
}

describe("errors from the client are ClientErrors with the cause attached", () => {
  it("proveOwnership with a secret key that is not Base58: a ClientError whose cause is the AuthError; nothing posted", async () => {
    const node = nonceNode();
    const client = createClient("http://node.example", { fetch: node.fetch });
    const error = await failure(client.proveOwnership("did:iota:alice", "0OIl-not-base58"));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ name: "ClientError", status: 0, code: "INVALID_SECRET_KEY", reason: "INVALID_SECRET_KEY" });
    expect(error.cause).toBeInstanceOf(AuthError);
    expect(error.message).not.toContain("0OIl-not-base58");
    expect(node.posts).toBe(0);
  });

  it("a bad message id, a malformed message and a base URL that is not one", async () => {
    const client = createClient("http://node.example", { fetch: async () => Response.json({}) });
    const badId = await failure(client.getMessageRaw("xyz"));
    expect(badId).toMatchObject({ status: 0, code: "INVALID_HEX", path: "messageId" });
    expect(badId.cause).toBeInstanceOf(ProtocolError);
    const badJson = await failure(client.submitMessage({ payload: { type: 2, index: "zz", data: "" } }));
    expect(badJson).toMatchObject({ status: 0, code: "INVALID_HEX", path: "payload.index" });
    let thrown: unknown;
    try {
      createClient("not a url");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ClientError);
    expect(thrown).toMatchObject({ code: "INVALID_ARGUMENT", path: "baseUrl" });
  });

  it("an answer whose message does not decode: a ClientError, the decoder's error as cause", async () => {
    const client = createClient("http://node.example", { fetch: async () => Response.json({ data: { networkId: "1", parentMessageIds: [], payload: null, nonce: "0" } }) });
    const error = await failure(client.getMessage("ab".repeat(32)));
    expect(error.code).toBe("COUNT_OUT_OF_RANGE");
    expect(error.cause).toBeInstanceOf(ProtocolError);
  });

  it("an abort stays an AbortError, as fetch raises it", async () => {
    const client = createClient("http://node.example", {
      fetch: async (_input, init) => {
        init?.signal?.throwIfAborted();
        return Response.json({ data: { messageId: "ab".repeat(32) } });
      },
    });
    const error = await client.submitMessage(new Uint8Array(40), { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((error as DOMException).name).toBe("AbortError");
  });
});

describe("an answer larger than the client's limit (4 MiB) is refused while it streams in", () => {
  it("a chunked answer with no Content-Length: BAD_RESPONSE, and the client stops reading long before the server is done", async () => {
    const { createServer } = await import("node:http");
    const CHUNK = Buffer.alloc(64 * 1024, 0x20);
    const MAX_CHUNKS = 1024; // 64 MiB at most: the server stops on its own if nobody cancels
    let written = 0;
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.on("close", closed);
      const pump = (): void => {
        while (written < MAX_CHUNKS) {
          written++;
          if (!res.write(CHUNK)) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      res.write("{");
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as import("node:net").AddressInfo;
      const error = await failure(createClient(`http://127.0.0.1:${port}`).getInfo());
      expect(error.code).toBe("BAD_RESPONSE");
      expect(error.message).toContain("larger than");
      await done;
      // 4 MiB is 64 chunks; the sockets' buffers hold a few more. Nowhere near the 1024 a whole read would take.
      expect(written).toBeLessThan(256);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
