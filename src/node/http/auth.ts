// The prove-ownership routes (PROTOCOL.md §7): GET a nonce for an identity, POST its signature for a JWT.
// Answers carry both the bare key (as the original service answers) and `data` (as the node API does). Nothing here is
// cacheable (Cache-Control: no-store on every answer, errors included), and HEAD is refused: a GET issues a nonce.
import { ProtocolError } from "../../bytes/errors.js";
import { decodeParam, json, readJson, type Route } from "./router.js";

/** The two operations of prove-ownership (what createProveOwnership from chrysalis-core/auth returns). */
export interface ProveOwnershipService {
  issueNonce(identityId: string): Promise<string>;
  /** `nonce`, when the client names the nonce it signed, spares the service its search. */
  prove(identityId: string, signedNonce: string, nonce?: string): Promise<string>;
}

/** Headers on every answer that carries or concerns credentials. */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

export function authRoutes(service: ProveOwnershipService): Route[] {
  return [
    {
      name: "prove-ownership",
      pattern: /^\/authentication\/prove-ownership\/([^/]+)$/,
      noHead: true,
      headers: NO_STORE,
      methods: {
        GET: async ({ params: [raw] }) => {
          const nonce = await service.issueNonce(decodeParam(raw!, "identityId"));
          return json(200, { nonce, data: { nonce } });
        },
        POST: async ({ request, params: [raw] }) => {
          const identityId = decodeParam(raw!, "identityId");
          const body = await readJson(request, 4096);
          const fields = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { signedNonce?: unknown; nonce?: unknown }) : {};
          if (typeof fields.signedNonce !== "string") throw new ProtocolError("INVALID_JSON", "the body must be {\"signedNonce\": \"<128 hex characters>\"}", { path: "signedNonce" });
          if (fields.nonce !== undefined && typeof fields.nonce !== "string") throw new ProtocolError("INVALID_JSON", "nonce, when given, is the 40-hex nonce that was signed", { path: "nonce" });
          const jwt = await service.prove(identityId, fields.signedNonce, fields.nonce);
          return json(200, { jwt, data: { jwt } });
        },
      },
    },
  ];
}
