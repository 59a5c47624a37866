// The node REST API v1 (NODE-API.md §1): thin translations between HTTP and the node. This file holds the node, tips and
// message routes; utxo.ts the ledger and milestone reads. Shapes come from ../shapes.ts, rules from the node.
import { ProtocolError } from "../../bytes/errors.js";
import { decodeHex } from "../../bytes/hex.js";
import { MAX_INDEX_LENGTH, MAX_MESSAGE_LENGTH, MIN_INDEX_LENGTH } from "../../bytes/limits.js";
import { messageToJson } from "../../model/json.js";
import type { JwtClaims } from "../../auth/index.js";
import { currentConeRoots, promotionAdvice } from "../cone.js";
import { NodeError } from "../errors.js";
import type { ChrysalisNode, NodeInfo, SubmitOptions } from "../pipeline.js";
import { messageMetadataJson } from "../shapes.js";
import { TIPS_PER_SELECTION } from "../tipselect.js";
import type { StoredMessage } from "../store/contract.js";
import { bytesResponse, idParam, json, readBody, readJsonText, type Reply, type Route, type RouteCall } from "./router.js";
import { includedMessageId, utxoRoutes } from "./utxo.js";

export interface ApiRouteOptions {
  /** Verifies the caller of POST /api/v1/messages; undefined when submission is open. */
  authorize?: ((request: Request) => Promise<JwtClaims>) | undefined;
  /** Largest JSON body accepted, in bytes. */
  maxJsonBytes: number;
  /** A gateway's upstream: every read (GET /health and /api/v1/…) is answered by it, as it holds the Tangle and ledger. */
  forward?: ((request: Request) => Promise<Response>) | undefined;
}

/** Hornet's maxResults for lists (children, index lookups, address outputs). */
export const MAX_RESULTS = 1000;

/** Hornet's optimalTipCount: GET /api/v1/tips answers up to this many (tip selection's count). */
export const TIPS_ANSWERED = TIPS_PER_SELECTION;

/** The route groups GET /api/routes lists (Hornet names its core API "v1"). */
export const ROUTE_GROUPS = ["v1"] as const;

/**
 * One submission's options. A class: an object literal with a getter is built in dictionary mode, and one per request
 * (its getter closing over the request) took everything the request allocated into V8's old generation with it. Under
 * submissions (edge bench, LMDB, --trace-gc-nvp): 1.0 MB → 38 KB promoted per young-generation collection, 9–10 → 3
 * full collections in a phase, and 161–179 → 144–150 µs of server CPU per submission over four paired rounds.
 */
class Submission implements SubmitOptions {
  readonly #request: Request;
  readonly requester: string;
  readonly admitPow: (() => void) | undefined;

  constructor(request: Request, requester: string, admitPow: (() => void) | undefined) {
    this.#request = request;
    this.requester = requester;
    this.admitPow = admitPow;
  }

  /** Asked for only when the node mines (a server's request makes its signal on first read). */
  get signal(): AbortSignal {
    return this.#request.signal;
  }
}

export function apiRoutes(node: ChrysalisNode, options: ApiRouteOptions): Route[] {
  async function submit({ request, context }: RouteCall): Promise<Reply> {
    const claims = await options.authorize?.(request);
    // The PoW queue serves requesters round-robin: an authenticated identity, else the client's address.
    const requester = claims !== undefined ? `identity:${claims.sub}` : `address:${context.clientKey ?? context.clientAddress ?? "unknown"}`;
    const gate = context.gate;
    const submitOptions = new Submission(request, requester, gate === undefined ? undefined : () => gate.pow());
    // Hornet's rule: a content type starting with application/json is JSON; anything else (none, text/plain,
    // application/octet-stream) is the raw message.
    const contentType = (request.headers.get("content-type") ?? "").trim().toLowerCase();
    const result = contentType.startsWith("application/json")
      ? await node.submitJsonText(await readJsonText(request, options.maxJsonBytes, true), submitOptions)
      : await node.submitMessage(await readBody(request, MAX_MESSAGE_LENGTH), submitOptions);
    return json(201, { data: { messageId: result.messageId } }, { location: result.messageId });
  }

  async function stored(raw: string): Promise<StoredMessage> {
    const id = idParam(raw);
    const entry = await node.getMessage(id);
    if (entry === undefined) throw new NodeError("NOT_FOUND", `message not found: ${id}`, { path: "messageId" });
    return entry;
  }

  async function metadata(entry: StoredMessage): Promise<Reply> {
    const m = await node.getMetadata(entry.id);
    if (m === undefined) throw new NodeError("NOT_FOUND", `message not found: ${entry.id}`, { path: "messageId" });
    let advice;
    if (m.referencedByMilestoneIndex === undefined && m.solid) {
      const confirmed = (await node.store.latestMilestone())?.index ?? 0;
      // The Tangle in memory knows the cone roots as of the latest milestone; for an older message the store's parents.
      const roots = node.parts.tangle.get(entry.id)?.roots ?? (await currentConeRoots(node.store, entry.message.parents, m.coneRoots));
      advice = promotionAdvice(roots, confirmed);
    }
    return json(200, { data: messageMetadataJson(entry.id, entry.message.parents, m, advice) });
  }

  async function children(id: string): Promise<Reply> {
    await node.ready();
    const childrenMessageIds = await node.store.children(id, MAX_RESULTS);
    return json(200, { data: { messageId: id, maxResults: MAX_RESULTS, count: childrenMessageIds.length, childrenMessageIds } });
  }

  const raw = (entry: StoredMessage): Reply => bytesResponse(200, entry.bytes);

  // The three views of a message (its JSON, its bytes, its metadata), under /messages/{id} and under
  // /transactions/{id}/included-message.
  const views = {
    // The two that need nothing more from the store answer at once: an async function returning a reply made the
    // route's own async function wait two more microtasks for it.
    message: (entry: StoredMessage): Reply => json(200, { data: messageToJson(entry.message) }),
    raw,
    metadata,
  };
  const byTransaction = async (txRaw: string): Promise<StoredMessage> => stored(await includedMessageId(node, txRaw));

  const routes: (Route & { read?: boolean })[] = [
    {
      name: "health",
      pattern: /^\/health$/,
      read: true,
      methods: { GET: async () => new Response(null, { status: (await node.health()) ? 200 : 503 }) },
    },
    { name: "routes", pattern: /^\/api\/routes$/, methods: { GET: async () => json(200, { data: { routes: [...ROUTE_GROUPS] } }) } },
    {
      name: "info",
      pattern: /^\/api\/v1\/info$/,
      methods: { GET: async ({ request }) => json(200, { data: options.forward === undefined ? await node.nodeInfo() : await gatewayInfo(node, options.forward, request) }) },
    },
    {
      name: "tips",
      pattern: /^\/api\/v1\/tips$/,
      read: true,
      methods: {
        GET: async ({ url }) => {
          // Hornet's query key `spammerTips` (any case, any value) asks for the spammer rule's tips.
          const spammer = [...url.searchParams.keys()].some((key) => key.toLowerCase() === "spammertips");
          const tipMessageIds = await node.tips(TIPS_ANSWERED, { spammer });
          if (tipMessageIds.length === 0) throw new NodeError("CANNOT_FILL", "no tips available", { status: 503 });
          return json(200, { data: { tipMessageIds } });
        },
      },
    },
    {
      name: "messages",
      pattern: /^\/api\/v1\/messages$/,
      read: true,
      methods: {
        POST: submit,
        GET: async ({ url }) => {
          const indexText = url.searchParams.get("index");
          if (indexText === null || indexText === "") throw new ProtocolError("INVALID_ARGUMENT", "query parameter index is required", { path: "index" });
          const index = decodeHex(indexText);
          if (index === undefined) throw new ProtocolError("INVALID_HEX", "index is hex", { path: "index" });
          if (index.length < MIN_INDEX_LENGTH || index.length > MAX_INDEX_LENGTH) {
            throw new ProtocolError("LENGTH_OUT_OF_RANGE", `an index is ${MIN_INDEX_LENGTH} .. ${MAX_INDEX_LENGTH} bytes`, { path: "index" });
          }
          await node.ready();
          const messageIds = await node.store.findByIndex(index, MAX_RESULTS);
          return json(200, { data: { index: indexText, maxResults: MAX_RESULTS, count: messageIds.length, messageIds } });
        },
      },
    },
    { name: "message", pattern: /^\/api\/v1\/messages\/([^/]+)$/, read: true, methods: { GET: async ({ params: [id] }) => views.message(await stored(id!)) } },
    { name: "message.raw", pattern: /^\/api\/v1\/messages\/([^/]+)\/raw$/, read: true, methods: { GET: async ({ params: [id] }) => views.raw(await stored(id!)) } },
    { name: "message.metadata", pattern: /^\/api\/v1\/messages\/([^/]+)\/metadata$/, read: true, methods: { GET: async ({ params: [id] }) => views.metadata(await stored(id!)) } },
    // An unknown message has no children: 200 with count 0, as Hornet answers.
    { name: "message.children", pattern: /^\/api\/v1\/messages\/([^/]+)\/children$/, read: true, methods: { GET: async ({ params: [id] }) => children(idParam(id!)) } },
    { name: "transaction.message", pattern: /^\/api\/v1\/transactions\/([^/]+)\/included-message$/, read: true, methods: { GET: async ({ params: [tx] }) => views.message(await byTransaction(tx!)) } },
    { name: "transaction.raw", pattern: /^\/api\/v1\/transactions\/([^/]+)\/included-message\/raw$/, read: true, methods: { GET: async ({ params: [tx] }) => views.raw(await byTransaction(tx!)) } },
    { name: "transaction.metadata", pattern: /^\/api\/v1\/transactions\/([^/]+)\/included-message\/metadata$/, read: true, methods: { GET: async ({ params: [tx] }) => views.metadata(await byTransaction(tx!)) } },
    { name: "transaction.children", pattern: /^\/api\/v1\/transactions\/([^/]+)\/included-message\/children$/, read: true, methods: { GET: async ({ params: [tx] }) => children((await byTransaction(tx!)).id) } },
    ...utxoRoutes(node, MAX_RESULTS).map((r) => ({ ...r, read: true })),
  ];
  const forward = options.forward;
  if (forward === undefined) return routes;
  return routes.map(({ read, ...r }) => (read === true ? { ...r, methods: { ...r.methods, GET: ({ request }: RouteCall) => forward(request) } } : r));
}

/** A gateway's /info: the upstream's network, milestones and health, with this gateway's name, version and features. */
async function gatewayInfo(node: ChrysalisNode, forward: (request: Request) => Promise<Response>, request: Request): Promise<NodeInfo> {
  const response = await forward(new Request(request.url, { method: "GET", headers: { accept: "application/json" } }));
  let data: unknown;
  try {
    data = ((await response.json()) as { data?: unknown }).data;
  } catch {
    data = undefined;
  }
  if (!response.ok || typeof data !== "object" || data === null) throw new NodeError("UPSTREAM_FAILED", `the upstream answered ${response.status} to /api/v1/info`);
  return { ...(data as NodeInfo), name: node.info.name, version: node.info.version, features: [...node.info.features] };
}
