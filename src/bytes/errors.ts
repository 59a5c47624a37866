// ProtocolError: the one error type every rejection of input raises.
// Callers match on the stable `code`; `path` names the field, `offset` the byte.

/** The codes raised by the core layers (bytes, crypto, model). */
export type CoreErrorCode =
  | "TRUNCATED" // input ends before a field does
  | "TRAILING_BYTES" // bytes left after the object
  | "INVALID_TYPE" // unknown or disallowed type tag
  | "COUNT_OUT_OF_RANGE" // an array count outside its bounds
  | "LENGTH_OUT_OF_RANGE" // a byte length (message, index, payload) outside its bounds
  | "LENGTH_MISMATCH" // a declared payload length differs from what it holds
  | "NOT_SORTED" // elements not in ascending byte order
  | "DUPLICATE" // an element that must be unique appears twice
  | "VALUE_OUT_OF_RANGE" // a number outside its bounds (amounts, indices)
  | "INVALID_REFERENCE" // a reference unlock block pointing at the wrong place
  | "INVALID_HEX"
  | "INVALID_BASE58"
  | "INVALID_BECH32"
  | "INVALID_JSON" // a JSON value of the wrong shape
  | "INVALID_KEY" // a key of the wrong size or encoding
  | "INVALID_SIGNATURE"
  | "INVALID_ARGUMENT" // a library call given the wrong kind of value
  | "INPUT_NOT_FOUND" // a transaction input whose output is unknown or spent
  | "ADDRESS_MISMATCH" // a signature or reference that unlocks another address than the input's
  | "UNKNOWN_KEY" // a milestone signed with a key not applicable to its index
  | "NONCE_WITHOUT_NETWORK_ID" // a partial message with a nonce but no networkId: the PoW cannot have covered it
  | "CANNOT_FILL"; // a partial message whose missing field cannot be filled (no tips, no PoW)

/**
 * Every layer's codes, by name of the layer. A layer above adds its own union here by declaration merging
 * (`declare module "../bytes/errors.js" { interface ErrorCodeRegistry { node: NodeErrorCode } }`), so no lower layer
 * imports a higher one, and ErrorCode is the union the compiler holds every `new ProtocolError(code, …)` to.
 */
export interface ErrorCodeRegistry {
  core: CoreErrorCode;
}

/** Every stable error code of the library (docs/LIBRARY.md lists them). */
export type ErrorCode = ErrorCodeRegistry[keyof ErrorCodeRegistry];

/** Where a ProtocolError happened, and what caused it. */
export interface ProtocolErrorOptions {
  /** The JSON or field path of the value refused, e.g. `payload.essence.inputs[2].transactionId`. */
  readonly path?: string | undefined;
  /** For binary input, the byte offset where decoding failed. */
  readonly offset?: number | undefined;
  /** The error underneath, if any (kept as Error.cause). */
  readonly cause?: unknown;
}

/**
 * Every rejection of input by the library: a stable `code` a caller can match on, the `path` of the field where known
 * and, for binary input, the byte `offset`. Layers above raise subclasses (AuthError, NodeError, ClientError).
 */
export class ProtocolError extends Error {
  /** The stable code of the rule or check that refused the input (see ErrorCode). */
  readonly code: ErrorCode;
  /** The JSON or field path of the value refused, where known. */
  readonly path: string | undefined;
  /** For binary input, the byte offset where decoding failed. */
  readonly offset: number | undefined;

  constructor(code: ErrorCode, message: string, options: ProtocolErrorOptions = {}) {
    const where = [
      options.path !== undefined && options.path !== "" ? `at ${options.path}` : "",
      options.offset !== undefined ? `offset ${options.offset}` : "",
    ].filter(Boolean);
    super(where.length > 0 ? `${message} (${where.join(", ")})` : message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "ProtocolError";
    this.code = code;
    this.path = options.path;
    this.offset = options.offset;
  }
}

/** Joins a field path: `join("payload", "essence")`, `join("inputs", 2)` → `inputs[2]`. */
export function joinPath(base: string | undefined, key: string | number): string {
  if (typeof key === "number") return `${base ?? ""}[${key}]`;
  return base === undefined || base === "" ? key : `${base}.${key}`;
}

// Assertions at the door (after noble's abytes/anumber): each names the field it checks.

export function assertBytes(value: unknown, path: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new ProtocolError("INVALID_ARGUMENT", "expected a Uint8Array", { path });
  if (length !== undefined && value.length !== length) {
    throw new ProtocolError("LENGTH_OUT_OF_RANGE", `expected ${length} bytes, got ${value.length}`, { path });
  }
}

export function assertInteger(value: unknown, path: string, min: number, max: number): asserts value is number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new ProtocolError("INVALID_ARGUMENT", "expected an integer", { path });
  }
  if (value < min || value > max) throw new ProtocolError("VALUE_OUT_OF_RANGE", `expected ${min} .. ${max}, got ${value}`, { path });
}

export function assertString(value: unknown, path: string): asserts value is string {
  if (typeof value !== "string") throw new ProtocolError("INVALID_ARGUMENT", "expected a string", { path });
}

/** True for the rejection an aborted AbortSignal produces (a DOMException or any error named AbortError). */
export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

/** The rejection of aborted work, as fetch() raises it: the signal's reason when that is an AbortError, else a DOMException named AbortError. */
export function abortError(reason?: unknown): Error {
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("the operation was aborted", "AbortError");
}
