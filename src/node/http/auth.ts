// The prove-ownership routes (PROTOCOL.md §7) and their Integration Services twins (NODE-API.md §3): GET a nonce for an
// identity, POST its signature for a JWT, POST a JWT to have it checked. Served at /authentication/… and, as IS clients
// address them, at /api/v0.1/authentication/… and /api/v1/authentication/…; all take the `api-key` query parameter IS
// clients always send. Nothing here is cacheable (Cache-Control: no-store on every answer, errors included), and HEAD
// is refused: a GET issues a nonce.
import { ProtocolError } from "../../bytes/errors.js";
import { secretMatcher } from "../../crypto/sha256.js";
import { AuthError, type JwtService } from "../../auth/index.js";
import { NodeError } from "../errors.js";
import { decodeParam, json, jsonText, readJson, type Answer, type Route, type RouteCall } from "./router.js";

/** The two operations of prove-ownership (what createProveOwnership from chrysalis-core/auth returns). */
export interface ProveOwnershipService {
  /** The identity's current nonce, 40 lowercase hex characters: what GET …/prove-ownership/{identityId} answers. */
  issueNonce(identityId: string): Promise<string>;
  /** `nonce`, when the client names the nonce it signed, spares the service its search. */
  prove(identityId: string, signedNonce: string, nonce?: string): Promise<string>;
}

/** Headers on every answer that carries or concerns credentials. */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

export interface AuthRouteOptions {
  /** Enables the prove-ownership routes. */
  proveOwnership?: ProveOwnershipService | undefined;
  /** Enables verify-jwt: the service that issued the tokens. */
  jwt?: JwtService | undefined;
  /** When set, every auth route needs `?api-key=<this>` (as IS's API_KEY); otherwise the parameter is ignored. */
  apiKey?: string | undefined;
}

/**
 * Where IS clients look for the routers: `${url}/api/${apiVersion}/authentication`, with @iota/is-client 0.1.19's
 * ApiVersion "v0.1" (its default) or "v1". A client configured with either must find us, so both prefixes (and none)
 * match; /api/v1/authentication/… collides with no REST API v1 route.
 */
const IS_API_VERSIONS = ["v0.1", "v1"] as const;
const PREFIXES = `(?:/api/(?:${IS_API_VERSIONS.map((v) => v.replace(/\./g, "\\.")).join("|")}))?`;

// jsonwebtoken's messages, which IS hands back in verify-jwt's `error`, for the refusals our verifier names by code.
const JSONWEBTOKEN_MESSAGE: Partial<Record<string, string>> = {
  TOKEN_EXPIRED: "jwt expired",
  TOKEN_INVALID_SIGNATURE: "invalid signature",
  TOKEN_MALFORMED: "jwt malformed",
  TOKEN_NOT_YET_VALID: "jwt not active",
  TOKEN_ALGORITHM_NOT_ALLOWED: "invalid algorithm",
  TOKEN_AUDIENCE_MISMATCH: "jwt audience invalid",
  TOKEN_ISSUER_MISMATCH: "jwt issuer invalid",
};

/** A query parameter of an absolute URL, decoded as URL's searchParams decodes it; null when absent. */
export function queryParam(href: string, name: string): string | null {
  // The query ends at the fragment, and a "?" inside the fragment starts no query. It goes to URLSearchParams with its
  // "?", which the constructor strips: without it, a query that itself begins with "?" would lose that one.
  const hash = href.indexOf("#");
  const end = hash < 0 ? href.length : hash;
  const start = href.indexOf("?");
  if (start < 0 || start > end) return null;
  return new URLSearchParams(href.slice(start, end)).get(name);
}

// What a nonce (hex) or a JWT (base64url and dots) is made of: text JSON writes as it is, without escapes.
const PLAIN_TEXT = /^[A-Za-z0-9._-]*$/;

/**
 * `{"<name>": value, "data": {"<name>": value}}` (IS clients read the one, our clients the other), written as text when
 * the value needs no escaping: exactly what JSON.stringify writes, which took 2.3 µs for a JWT written twice (0.4 µs
 * this way, on every login). Anything else goes through JSON.stringify.
 */
export function credentialAnswer(name: "nonce" | "jwt", value: string): Answer {
  if (!PLAIN_TEXT.test(value)) return json(200, { [name]: value, data: { [name]: value } });
  return jsonText(200, `{"${name}":"${value}","data":{"${name}":"${value}"}}`);
}

export function authRoutes(options: AuthRouteOptions): Route[] {
  const apiKeyMatches = options.apiKey === undefined ? undefined : secretMatcher(options.apiKey);

  // The request URL is looked at only when a key is configured, and then only its query (URLSearchParams reads it as
  // URL's searchParams would): parsing the whole URL on every login cost more than the check itself.
  function checkApiKey(request: Request): void {
    if (apiKeyMatches === undefined) return;
    if (!apiKeyMatches(queryParam(request.url, "api-key") ?? "")) throw new NodeError("INVALID_API_KEY", "no valid api key provided!", { path: "api-key" });
  }

  function bodyField(body: unknown, key: string, what: string): string {
    const value = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[key] : undefined;
    if (typeof value !== "string" || value === "") throw new ProtocolError("INVALID_JSON", `the body must be {"${key}": "<${what}>"}`, { path: key });
    return value;
  }

  const routes: Route[] = [];
  const service = options.proveOwnership;
  if (service !== undefined) {
    routes.push({
      name: "prove-ownership",
      pattern: new RegExp(`^${PREFIXES}/authentication/prove-ownership/([^/]+)$`),
      noHead: true,
      headers: NO_STORE,
      methods: {
        GET: async ({ request, params: [raw] }: RouteCall) => {
          checkApiKey(request);
          const nonce = await service.issueNonce(decodeParam(raw!, "identityId"));
          return credentialAnswer("nonce", nonce);
        },
        POST: async ({ request, params: [raw] }: RouteCall) => {
          checkApiKey(request);
          const identityId = decodeParam(raw!, "identityId");
          const body = await readJson(request, 4096);
          const signedNonce = bodyField(body, "signedNonce", "128 hex characters");
          // Our own extension: the nonce that was signed (the IS client sends only the signature).
          const named = typeof body === "object" && body !== null ? (body as { nonce?: unknown }).nonce : undefined;
          if (named !== undefined && typeof named !== "string") throw new ProtocolError("INVALID_JSON", "nonce, when given, is the 40-hex nonce that was signed", { path: "nonce" });
          const jwt = await service.prove(identityId, signedNonce, named);
          return credentialAnswer("jwt", jwt);
        },
      },
    });
  }
  const jwt = options.jwt;
  if (jwt !== undefined) {
    routes.push({
      name: "verify-jwt",
      pattern: new RegExp(`^${PREFIXES}/authentication/verify-jwt$`),
      headers: NO_STORE,
      methods: {
        // As IS answers: 200 either way, `{"isValid": false, "error": "<why>"}` for a token it refuses.
        POST: async ({ request }: RouteCall) => {
          checkApiKey(request);
          const token = bodyField(await readJson(request, 16_384), "jwt", "a JWT");
          try {
            await jwt.verify(token);
            return json(200, { isValid: true });
          } catch (error) {
            if (!(error instanceof AuthError) || error.status >= 500) throw error;
            return json(200, { isValid: false, error: JSONWEBTOKEN_MESSAGE[error.code] ?? error.message });
          }
        },
      },
    });
  }
  return routes;
}
