// Shared test helpers: the published vectors and a matcher for ProtocolError.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { ProtocolError } from "../src/bytes/errors.js";

const here = fileURLToPath(new URL(".", import.meta.url));

/** ../shared/vectors/public.json, beside the checkout (CI clones with shared/ beside it). */
export function loadVectors(): any {
  const candidates = [`${here}../../shared/vectors/public.json`, `${here}vectors/public.json`];
  for (const path of candidates) {
    try {
      return JSON.parse(readFileSync(path, "utf8"));
    } catch {
      /* try the next */
    }
  }
  throw new Error("public test vectors not found");
}

export function hex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, "hex"));
}

export function toHexString(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

/** Runs `fn`, expects a ProtocolError with `code` (and `path`/`offset` when given), and returns it. */
export function expectProtocolError(fn: () => unknown, code: string, where: { path?: string; offset?: number } = {}): ProtocolError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a ProtocolError").toBeInstanceOf(ProtocolError);
  const error = caught as ProtocolError;
  expect(error.code).toBe(code);
  if (where.path !== undefined) expect(error.path).toBe(where.path);
  if (where.offset !== undefined) expect(error.offset).toBe(where.offset);
  return error;
}
