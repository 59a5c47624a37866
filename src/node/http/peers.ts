// Hornet's REST v1 peers routes (GOSSIP.md §6): list, show, add and remove the gossip part's peers, in Hornet's shapes
// and status codes. They change who the node talks to, so only loopback clients or holders of the admin token get them.
import { ProtocolError } from "../../bytes/errors.js";
import { secretMatcher } from "../../crypto/sha256.js";
import { normalizeAddress } from "../edge/address.js";
import { NodeError } from "../errors.js";
import { parsePeerId } from "../gossip/identity.js";
import type { PeerJson } from "../gossip/types.js";
import { Answer, decodeParam, json, readJson, type Route, type RouteCall } from "./router.js";

/** What the peers routes ask of the gossip part (a Gossip is one). */
export interface PeerAdmin {
  /** Every peer, known or connected, in Hornet's shape (GET /api/v1/peers). */
  peers(): PeerJson[];
  /** The peer of this libp2p peer id; undefined answers 404 (GET /api/v1/peers/{peerId}). */
  peer(peerId: string): PeerJson | undefined;
  /** Adds (or updates) a static peer from a multiaddr ending in /p2p/<peer id> and tries to dial it (POST
   * /api/v1/peers); a bad address is INVALID_MULTIADDR or INVALID_PEER_ID (400), a failed dial no error. */
  addPeer(multiAddress: string, alias?: string): Promise<PeerJson>;
  /** Forgets the peer and disconnects it; a peer never added is no error (DELETE /api/v1/peers/{peerId}, 204). */
  removePeer(peerId: string): Promise<void>;
}

/** What enables the peers routes, and who besides loopback clients may use them. */
export interface PeerRouteOptions {
  /** The gossip part the routes list, add and remove peers on. */
  readonly admin: PeerAdmin;
  /** When set, a client off loopback that sends `Authorization: Bearer <this>` is answered too. */
  readonly adminToken?: string | undefined;
}

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const BEARER = /^Bearer[ \t]+(.+?)[ \t]*$/i;

/** True for 127.0.0.0/8 and ::1 (IPv4-mapped addresses included). */
export function isLoopback(address: string | undefined): boolean {
  const normalized = normalizeAddress(address);
  return normalized === "::1" || LOOPBACK_V4.test(normalized);
}

export function peerRoutes(options: PeerRouteOptions, maxJsonBytes: number): Route[] {
  const { admin } = options;
  const tokenMatches = options.adminToken === undefined || options.adminToken === "" ? undefined : secretMatcher(options.adminToken);

  function allow(call: RouteCall): void {
    // A loopback client that came through a proxy (a forwarding header is set) may be anyone: a reverse proxy on the
    // same host, not named by --trust-proxy, makes every remote client look local. Those need the token too.
    const headers = call.request.headers;
    const forwarded = headers.has("x-forwarded-for") || headers.has("forwarded") || headers.has("x-real-ip");
    if (isLoopback(call.context.clientAddress) && !forwarded) return;
    const given = BEARER.exec(call.request.headers.get("authorization") ?? "")?.[1];
    // Compared as SHA-256 digests in constant time: neither the token's bytes nor its length leak through timing.
    if (tokenMatches !== undefined && given !== undefined && tokenMatches(given)) return;
    throw new NodeError("FORBIDDEN", "the peers routes answer loopback clients (not through a proxy), or clients holding the admin token");
  }

  function peerIdParam(raw: string): string {
    return parsePeerId(decodeParam(raw, "peerId"), "peerId");
  }

  async function add(call: RouteCall): Promise<Answer> {
    allow(call);
    const body = await readJson(call.request, maxJsonBytes);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ProtocolError("INVALID_JSON", 'expected {"multiAddress", "alias"?}', { path: "" });
    const { multiAddress, alias } = body as { multiAddress?: unknown; alias?: unknown };
    if (typeof multiAddress !== "string") throw new ProtocolError("INVALID_MULTIADDR", "multiAddress is a multiaddr ending in /p2p/<peer id>", { path: "multiAddress" });
    if (alias !== undefined && alias !== null && typeof alias !== "string") throw new ProtocolError("INVALID_JSON", "alias is a string", { path: "alias" });
    return json(200, { data: await admin.addPeer(multiAddress, typeof alias === "string" ? alias : undefined) });
  }

  return [
    {
      name: "peers",
      pattern: /^\/api\/v1\/peers$/,
      headers: { "cache-control": "no-store" },
      methods: {
        GET: async (call) => {
          allow(call);
          return json(200, { data: admin.peers() });
        },
        POST: add,
      },
    },
    {
      name: "peer",
      pattern: /^\/api\/v1\/peers\/([^/]+)$/,
      headers: { "cache-control": "no-store" },
      methods: {
        GET: async (call) => {
          allow(call);
          const peer = admin.peer(peerIdParam(call.params[0]!));
          if (peer === undefined) throw new NodeError("NOT_FOUND", "no such peer");
          return json(200, { data: peer });
        },
        DELETE: async (call) => {
          allow(call);
          await admin.removePeer(peerIdParam(call.params[0]!));
          return new Answer(204, {}, null);
        },
      },
    },
  ];
}
