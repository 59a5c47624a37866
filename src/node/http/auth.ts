// The prove-ownership routes (PROTOCOL.md §7): GET a nonce for an identity, POST its signature for a JWT.
// Answers carry both the bare key (as the original service answers) and `data` (as the node API does).
import { ProtocolError } from "../../bytes/errors.js";
import { decodeParam, json, readJson, type Route } from "./router.js";

/** The two operations of prove-ownership (what createProveOwnership from chrysalis-core/auth returns). */
export interface ProveOwnershipService {
  issueNonce(identityId: string): Promise<string>;
  prove(identityId: string, signedNonce: string): Promise<string>;
}

export function authRoutes(service: ProveOwnershipService): Route[] {
  return [
    {
      name: "prove-ownership",
      pattern: /^\/authentication\/prove-ownership\/([^/]+)$/,
      methods: {
        GET: async ({ params: [raw] }) => {
          const nonce = await service.issueNonce(decodeParam(raw!, "identityId"));
          return json(200, { nonce, data: { nonce } });
        },
        POST: async ({ request, params: [raw] }) => {
          const identityId = decodeParam(raw!, "identityId");
          const body = await readJson(request, 4096);
          const signedNonce = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { signedNonce?: unknown }).signedNonce : undefined;
          if (typeof signedNonce !== "string") throw new ProtocolError("INVALID_JSON", "the body must be {\"signedNonce\": \"<128 hex characters>\"}", { path: "signedNonce" });
          const jwt = await service.prove(identityId, signedNonce);
          return json(200, { jwt, data: { jwt } });
        },
      },
    },
  ];
}
