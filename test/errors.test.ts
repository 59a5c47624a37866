// Error codes: one typed union (ErrorCode) of what each layer declares; docs/LIBRARY.md lists every code; and no code is
// compiled at run time anywhere in the package (no eval, no new Function), so strict CSP pages can use it.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../src/bytes/errors.js";
import type {} from "../src/auth/errors.js";
import type {} from "../src/node/errors.js";
import type {} from "../src/pow/errors.js";
import type {} from "../src/client/client.js";

// Exactly the codes of ErrorCode but the client's HTTP statuses as strings (INVALID_ARGUMENT is a core code that auth's status table repeats to give it 400): the type checker (npm test runs it) refuses this table when a code is declared or
// removed without it, and so without the docs/LIBRARY.md line the test below asks for.
const EVERY_CODE: Record<Exclude<ErrorCode, `${number}`>, true> = {
  TRUNCATED: true,
  TRAILING_BYTES: true,
  INVALID_TYPE: true,
  COUNT_OUT_OF_RANGE: true,
  LENGTH_OUT_OF_RANGE: true,
  LENGTH_MISMATCH: true,
  NOT_SORTED: true,
  DUPLICATE: true,
  VALUE_OUT_OF_RANGE: true,
  INVALID_REFERENCE: true,
  INVALID_HEX: true,
  INVALID_BASE58: true,
  INVALID_BECH32: true,
  INVALID_JSON: true,
  INVALID_KEY: true,
  INVALID_SIGNATURE: true,
  INVALID_ARGUMENT: true,
  INPUT_NOT_FOUND: true,
  ADDRESS_MISMATCH: true,
  UNKNOWN_KEY: true,
  NONCE_WITHOUT_NETWORK_ID: true,
  CANNOT_FILL: true,
  POW_QUEUE_FULL: true,
  POW_MINER_CLOSED: true,
  POW_WORKER_FAILED: true,
  POW_KERNEL_ERROR: true,
  POW_NOT_FOUND: true,
  UNSUPPORTED: true,
  INVALID_NONCE: true,
  INVALID_SECRET_KEY: true,
  INVALID_SIGNED_NONCE: true,
  INVALID_PUBLIC_KEY: true,
  INVALID_IDENTITY_ID: true,
  INVALID_DID_DOCUMENT: true,
  UNKNOWN_IDENTITY: true,
  INVALID_PROOF: true,
  NONCE_EXPIRED_OR_USED: true,
  TOO_MANY_NONCES: true,
  MISSING_TOKEN: true,
  INVALID_AUTHORIZATION_HEADER: true,
  CONFLICTING_TOKENS: true,
  TOKEN_MALFORMED: true,
  TOKEN_ALGORITHM_NOT_ALLOWED: true,
  TOKEN_INVALID_SIGNATURE: true,
  TOKEN_EXPIRED: true,
  TOKEN_NOT_YET_VALID: true,
  TOKEN_CLAIM_INVALID: true,
  TOKEN_ISSUER_MISMATCH: true,
  TOKEN_AUDIENCE_MISMATCH: true,
  TOKEN_REVOKED: true,
  TOKEN_SUBJECT_UNKNOWN: true,
  TOKEN_KEY_UNKNOWN: true,
  INVALID_JWT_SECRET: true,
  INVALID_JWT_KEY: true,
  JWT_CANNOT_ISSUE: true,
  INVALID_CONFIGURATION: true,
  NONCE_STORE_FAILED: true,
  IDENTITY_RESOLUTION_FAILED: true,
  WRONG_NETWORK_ID: true,
  INSUFFICIENT_POW: true,
  POW_DISABLED: true,
  MILESTONE_REFUSED: true,
  INVALID_API_KEY: true,
  POW_FAILED: true,
  INPUT_SPENT: true,
  AMOUNTS_DIFFER: true,
  DUST_RULE: true,
  NOT_FOUND: true,
  METHOD_NOT_ALLOWED: true,
  BODY_TOO_LARGE: true,
  UNSUPPORTED_MEDIA_TYPE: true,
  UNAUTHORIZED: true,
  UPSTREAM_FAILED: true,
  SHUTTING_DOWN: true,
  PARENT_NOT_SOLID: true,
  BELOW_MAX_DEPTH: true,
  STORE_UNAVAILABLE: true,
  STORE_WRONG_NETWORK: true,
  STORE_TOO_NEW: true,
  STORE_CORRUPT: true,
  MILESTONE_CONFLICT: true,
  NOT_SUPPORTED: true,
  RATE_LIMITED: true,
  FORBIDDEN: true,
  INVALID_PEER_ID: true,
  INVALID_MULTIADDR: true,
  FRAME_UNKNOWN_TYPE: true,
  FRAME_INVALID_LENGTH: true,
  NETWORK_ERROR: true,
  BAD_RESPONSE: true,
  CLIENT_FAILED: true,
};

const root = new URL("..", import.meta.url).pathname;

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, ext) : ext.test(name) ? [path] : [];
  });
}

describe("error codes", () => {
  it("docs/LIBRARY.md lists every code", () => {
    const guide = readFileSync(join(root, "docs/LIBRARY.md"), "utf8");
    const missing = Object.keys(EVERY_CODE).filter((code) => !guide.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});

describe("nothing is compiled at run time", () => {
  it("no eval or new Function in src/ or dist/", () => {
    const sources = [...files(join(root, "src"), /\.ts$/), ...files(join(root, "dist"), /\.js$/)];
    expect(sources.length).toBeGreaterThan(50);
    const offending = sources.filter((path) => /\bnew Function\s*\(|\beval\s*\(/.test(readFileSync(path, "utf8")));
    expect(offending).toEqual([]);
  });
});
