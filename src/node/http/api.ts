// The node REST API v1 routes: thin translations between HTTP and the node (submission, messages, tips, info).
import { ProtocolError } from "../../bytes/errors.js";
import { fromHex } from "../../bytes/hex.js";
import { MAX_INDEX_LENGTH, MAX_MESSAGE_LENGTH, MIN_INDEX_LENGTH } from "../../bytes/limits.js";
import { messageToJson } from "../../model/json.js";
import type { JwtClaims } from "../../auth/index.js";
import { NodeError } from "../errors.js";
import type { ChrysalisNode } from "../pipeline.js";
import { bytesResponse, idParam, json, mediaType, readBody, readJson, type Reply, type Route, type RouteCall } from "./router.js";

export interface ApiRouteOptions {
  /** Verifies the caller of POST /api/v1/messages; undefined when submission is open. */
  authorize?: ((request: Request) => Promise<JwtClaims>) | undefined;
  /** Largest JSON body accepted, in bytes. */
  maxJsonBytes: number;
}

/** Hornet's maxResults for lists (children, index lookups, address outputs). */
export const MAX_RESULTS = 1000;

export function apiRoutes(node: ChrysalisNode, options: ApiRouteOptions): Route[] {
  async function submit({ request, context }: RouteCall): Promise<Reply> {
    const claims = await options.authorize?.(request);
    // The PoW queue serves requesters round-robin: an authenticated identity, else the client's address.
    const requester = claims !== undefined ? `identity:${claims.sub}` : `address:${context.clientKey ?? context.clientAddress ?? "unknown"}`;
    const gate = context.gate;
    const submitOptions = { signal: request.signal, requester, admitPow: gate === undefined ? undefined : () => gate.pow() };
    const type = mediaType(request);
    let result;
    if (type === "application/octet-stream") {
      const bytes = await readBody(request, MAX_MESSAGE_LENGTH);
      result = await node.submitMessage(bytes, submitOptions);
    } else if (type === "application/json") {
      const body = await readJson(request, options.maxJsonBytes);
      result = await node.submitMessage(body, submitOptions);
    } else {
      throw new NodeError("UNSUPPORTED_MEDIA_TYPE", "send the message as application/json or application/octet-stream");
    }
    return json(201, { data: { messageId: result.messageId } }, { location: result.messageId });
  }

  async function stored(raw: string) {
    const id = idParam(raw);
    const entry = await node.getMessage(id);
    if (entry === undefined) throw new NodeError("NOT_FOUND", `message ${id} not found`, { path: "messageId" });
    return entry;
  }

  return [
    { name: "info", pattern: /^\/api\/v1\/info$/, methods: { GET: async () => json(200, { data: node.info }) } },
    { name: "tips", pattern: /^\/api\/v1\/tips$/, methods: { GET: async () => json(200, { data: { tipMessageIds: await node.tips() } }) } },
    {
      name: "messages",
      pattern: /^\/api\/v1\/messages$/,
      methods: {
        POST: submit,
        GET: async ({ url }) => {
          const indexText = url.searchParams.get("index");
          if (indexText === null) throw new ProtocolError("INVALID_ARGUMENT", "query parameter index is required", { path: "index" });
          const index = fromHex(indexText, "index");
          if (index.length < MIN_INDEX_LENGTH || index.length > MAX_INDEX_LENGTH) {
            throw new ProtocolError("LENGTH_OUT_OF_RANGE", `an index is ${MIN_INDEX_LENGTH} .. ${MAX_INDEX_LENGTH} bytes`, { path: "index" });
          }
          await node.ready();
          const messageIds = await node.store.findByIndex(index, MAX_RESULTS);
          return json(200, { data: { index: indexText.toLowerCase(), maxResults: MAX_RESULTS, count: messageIds.length, messageIds } });
        },
      },
    },
    {
      name: "message",
      pattern: /^\/api\/v1\/messages\/([^/]+)$/,
      methods: { GET: async ({ params: [id] }) => json(200, { data: messageToJson((await stored(id!)).message) }) },
    },
    {
      name: "message.raw",
      pattern: /^\/api\/v1\/messages\/([^/]+)\/raw$/,
      methods: {
        GET: async ({ params: [id] }) => {
          const entry = await stored(id!);
          return bytesResponse(200, entry.bytes);
        },
      },
    },
  ];
}
