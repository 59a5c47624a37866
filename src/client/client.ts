// The typed HTTP client for a Chrysalis node and the prove-ownership service, built on fetch (runs in browsers too):
// proves ownership and keeps the JWT, submits messages (optionally with local PoW), reads messages and their metadata and
// children, outputs, addresses, milestones, info, tips and health in the node API v1's (Hornet's) shapes.
import { type ErrorCode, ProtocolError, isAbortError } from "../bytes/errors.js";
import { readAtMost } from "../bytes/bytes.js";
import { fromHex, isLowerHex, toHex } from "../bytes/hex.js";
import { ED25519_ADDRESS_LENGTH, MESSAGE_ID_LENGTH } from "../bytes/limits.js";
import { encodeMessage } from "../model/codec.js";
import { completeMessage } from "../model/complete.js";
import { outputId as makeOutputId, networkId as networkIdOf, parseOutputId } from "../model/ids.js";
import { messageFromJson, messageToJson, partialMessageFromJson, payloadToJson, type MessageJson, type NodeInfoJson, type PartialMessage } from "../model/json.js";
import type { AddressBalanceJson, AddressOutputsJson, MessageMetadataJson, MilestoneJson, OutputResponseJson, UtxoChangesJson } from "../model/rest.js";
import type { Message } from "../model/types.js";
import { authHeaders, signNonce } from "../auth/index.js";
import { mineNonce, type Miner } from "../pow/index.js";

/**
 * Every failure of a client call, except an abort (an AbortError, as fetch raises): the node's error answer (status,
 * its `code` string, message, our `reason`/`path` when sent), no answer, or a refusal before any request (a bad
 * argument or secret key: status 0, `code` and `reason` the refusal's stable code, the original error as `cause`).
 * A ProtocolError, so code that handles the library's rejections handles these too.
 */
/**
 * The codes a ClientError carries besides the library's own: the answer's HTTP status as a string (the node API's
 * `error.code`), no answer, an answer of the wrong shape, and a failure that is none of these.
 */
export type ClientErrorCode = `${number}` | "NETWORK_ERROR" | "BAD_RESPONSE" | "CLIENT_FAILED";

declare module "../bytes/errors.js" {
  interface ErrorCodeRegistry {
    client: ClientErrorCode;
  }
}

/** Every failure of the client: the node's refusal (its HTTP status, `code` and `reason`), no answer, or an answer of the wrong shape. */
export class ClientError extends ProtocolError {
  /** HTTP status; 0 when no answer arrived (network failure) or nothing was sent. */
  readonly status: number;
  /** The stable reason code, when the server sends one (chrysalis-core servers do), or the local refusal's code. */
  readonly reason: string | undefined;

  constructor(status: number, code: ErrorCode, message: string, extra: { reason?: string | undefined; path?: string | undefined; cause?: unknown } = {}) {
    super(code, message, extra.cause !== undefined ? { cause: extra.cause } : {});
    this.name = "ClientError";
    this.status = status;
    this.reason = extra.reason;
    // Set here, not through ProtocolError's options: those would append the path to a message that names it already.
    (this as { path: string | undefined }).path = extra.path;
  }
}

/** Any failure inside a client call as a ClientError with the original as its cause; aborts stay AbortErrors. */
function asClientError(error: unknown): unknown {
  if (error instanceof ClientError || isAbortError(error)) return error;
  if (error instanceof ProtocolError) return new ClientError(0, error.code, error.message, { reason: error.code, path: error.path, cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new ClientError(0, "CLIENT_FAILED", message, { cause: error });
}

/** The method, with every failure it raises passed through asClientError. */
function guard<A extends unknown[], R>(method: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    try {
      return await method(...args);
    } catch (error) {
      throw asClientError(error);
    }
  };
}

/**
 * What GET /api/v1/info answers (model/json.ts's NodeInfoJson): the client needs only networkId and minPoWScore, so
 * it does not insist on `features` and keeps whatever else a real node adds.
 */
export type ClientNodeInfo = Omit<NodeInfoJson, "features"> & {
  /** The node's features, when it lists them. */
  features?: string[];
  /** Hornet's milestone and rate fields (a node that issues or follows milestones sends them). */
  latestMilestoneIndex?: number;
  /** The index of the latest confirmed milestone. */
  confirmedMilestoneIndex?: number;
  /** The latest milestone's timestamp, seconds since the epoch. */
  latestMilestoneTimestamp?: number;
  /** Milestones at or below this index were pruned. */
  pruningIndex?: number;
  /** Messages the node received per second, lately. */
  messagesPerSecond?: number;
  /** Messages referenced by milestones per second, lately. */
  referencedMessagesPerSecond?: number;
  /** The share of messages milestones referenced, in percent. */
  referencedRate?: number;
  [key: string]: unknown;
};

/** The node API's response shapes (model/rest.ts), under the names the client has always exported. */
export type ClientMessageMetadata = MessageMetadataJson;
/** GET /api/v1/outputs/:outputId: an output, whether it is spent, and the message that created it. */
export type ClientOutput = OutputResponseJson;
/** GET /api/v1/addresses/…: an address's balance and whether it may receive dust. */
export type ClientAddressBalance = AddressBalanceJson;
/** GET /api/v1/addresses/…/outputs: the ids of an address's outputs. */
export type ClientAddressOutputs = AddressOutputsJson;
/** GET /api/v1/milestones/:index: its index, message id and timestamp. */
export type ClientMilestone = MilestoneJson;
/** GET /api/v1/milestones/:index/utxo-changes: the outputs a milestone created and consumed. */
export type ClientUtxoChanges = UtxoChangesJson;

/** How a client talks to its node: fetch, a JWT, extra headers, and local PoW. */
export interface ClientOptions {
  /** Injectable fetch (tests, proxies, instrumentation). Default: the global fetch. */
  fetch?: typeof fetch;
  /** A JWT obtained earlier; proveOwnership replaces it. */
  jwt?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** A persistent miner pool for local PoW (createMiner from chrysalis-core/pow); default: mineNonce per call. */
  miner?: Miner;
  /** Worker threads for local PoW when no miner is given. */
  powWorkers?: number;
  /**
   * How long local PoW reuses the node's info (network and minimum score, which change rarely) before reading it
   * again, in ms. Default 10 s; 0 reads it for every submission. Tips are always read fresh.
   */
  infoCacheMs?: number;
}

/** How one message is submitted: filled and mined by the node (the default) or here. */
export interface SubmitMessageOptions {
  /** Fill networkId, parents and nonce here (info and tips read from the node, PoW mined locally) instead of on the node. */
  localPow?: boolean;
  /** With localPow: post the finished message as raw bytes (default) or as JSON. */
  format?: "raw" | "json";
  /** Aborts the submission (and local mining). */
  signal?: AbortSignal;
  /** Local PoW progress. */
  onProgress?: (progress: { hashes: number; elapsedMs: number }) => void;
}

/** A message to submit: REST JSON (partial allowed), a model (partial allowed), or raw bytes. */
export type SubmittableMessage = Uint8Array | Message | PartialMessage | MessageJson | Record<string, unknown>;

/** A typed client of a node's REST API v1 and prove-ownership routes (createClient); failures are ClientErrors. */
export interface ChrysalisClient {
  /** The node's URL, as given to createClient. */
  readonly baseUrl: string;
  /** The JWT sent on every request (Authorization and Authentication headers), if any. */
  readonly jwt: string | undefined;
  /** Sets (or, with undefined, clears) the JWT sent on every request. */
  setJwt(jwt: string | undefined): void;
  /** GET /authentication/prove-ownership/:identityId → the nonce to sign. */
  requestNonce(identityId: string): Promise<string>;
  /** The whole proof: fetch a nonce, sign it with the Base58 secret key, POST it, keep and return the JWT. */
  proveOwnership(identityId: string, secretKeyBase58: string): Promise<string>;
  /** POST /api/v1/messages: the message id. What the message leaves out (network id, parents, nonce) the node fills, or this client with `localPow`. */
  submitMessage(message: SubmittableMessage, options?: SubmitMessageOptions): Promise<string>;
  /** GET /api/v1/messages/:id, as the model. */
  getMessage(messageId: string): Promise<Message>;
  /** GET /api/v1/messages/:id, as the node's JSON. */
  getMessageJson(messageId: string): Promise<MessageJson>;
  /** GET /api/v1/messages/:id/raw: the message's bytes. */
  getMessageRaw(messageId: string): Promise<Uint8Array>;
  /** GET /api/v1/info. */
  getInfo(): Promise<ClientNodeInfo>;
  /** GET /api/v1/tips: message ids to use as parents. */
  getTips(): Promise<string[]>;
  /** GET /health: true on 200, false on 503 (the node has no recent milestone). */
  getHealth(): Promise<boolean>;
  /** GET /api/v1/messages/:id/metadata: solidity, milestone references and ledger inclusion. */
  getMessageMetadata(messageId: string): Promise<ClientMessageMetadata>;
  /** The ids of the messages that name this one as a parent (at most the node's maxResults). */
  getMessageChildren(messageId: string): Promise<string[]>;
  /** The ids of the messages with this indexation index (UTF-8 text or bytes). */
  findMessages(index: string | Uint8Array): Promise<string[]>;
  /** GET /api/v1/outputs/:outputId. */
  getOutput(outputId: string): Promise<ClientOutput>;
  /** A Bech32 address, or an Ed25519 address as 64 hex characters. */
  getAddress(address: string): Promise<ClientAddressBalance>;
  /** GET …/outputs of a Bech32 or hex Ed25519 address: unspent output ids, of one output type if asked, spent ones too with `includeSpent`. */
  getAddressOutputs(address: string, options?: { type?: 0 | 1; includeSpent?: boolean }): Promise<ClientAddressOutputs>;
  /** GET /api/v1/milestones/:index. */
  getMilestone(index: number): Promise<ClientMilestone>;
  /** GET /api/v1/milestones/:index/utxo-changes. */
  getMilestoneUtxoChanges(index: number): Promise<ClientUtxoChanges>;
  /** The message that included a transaction (the one whose transaction created output <transactionId>:0). */
  getTransactionIncludedMessage(transactionId: string): Promise<MessageJson>;
}

// Answers are read with a limit: a hostile server must not exhaust a client's memory.
const MAX_RESPONSE_BYTES = 4 << 20;

function isModel(value: object): boolean {
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.parents) || typeof v.networkId === "bigint" || typeof v.nonce === "bigint") return true;
  const payload = v.payload as Record<string, unknown> | undefined | null;
  if (typeof payload !== "object" || payload === null) return false;
  if (payload.index instanceof Uint8Array || payload.essence !== undefined && typeof (payload.essence as { inputs?: unknown[] }).inputs?.[0] === "object" && ((payload.essence as { inputs: { transactionId?: unknown }[] }).inputs[0]!.transactionId instanceof Uint8Array)) return true;
  return Array.isArray(payload.publicKeys) && payload.publicKeys[0] instanceof Uint8Array;
}

/** A partial model as the REST JSON the node accepts (missing fields left out for the node to fill). */
function partialToJson(m: PartialMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (m.networkId !== undefined && m.networkId !== 0n) out.networkId = m.networkId.toString();
  if (m.parents !== undefined && m.parents.length > 0) out.parentMessageIds = m.parents.map(toHex);
  out.payload = m.payload === undefined ? null : payloadToJson(m.payload);
  if (m.nonce !== undefined && m.nonce !== 0n) out.nonce = m.nonce.toString();
  return out;
}

function messageIdArg(id: string): string {
  return toHex(fromHex(id, "messageId", MESSAGE_ID_LENGTH));
}

/** Creates a client for the node (and prove-ownership service) at `baseUrl`, e.g. http://127.0.0.1:14265. */
export function createClient(baseUrl: string, options: ClientOptions = {}): ChrysalisClient {
  let base: string;
  try {
    base = new URL(baseUrl).href.replace(/\/+$/, "");
  } catch (error) {
    throw new ClientError(0, "INVALID_ARGUMENT", "baseUrl is not a valid URL", { reason: "INVALID_ARGUMENT", path: "baseUrl", cause: error });
  }
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let jwt = options.jwt;

  async function call(method: string, path: string, init: { body?: BodyInit; contentType?: string; accept?: string; signal?: AbortSignal | undefined } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: init.accept ?? "application/json", ...options.headers };
    if (jwt !== undefined) Object.assign(headers, authHeaders(jwt));
    if (init.contentType !== undefined) headers["content-type"] = init.contentType;
    const requestInit: RequestInit = { method, headers };
    if (init.body !== undefined) requestInit.body = init.body;
    if (init.signal !== undefined) requestInit.signal = init.signal;
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, requestInit);
    } catch (error) {
      if (isAbortError(error)) throw error;
      throw new ClientError(0, "NETWORK_ERROR", `no answer from ${base}: ${(error as Error).message}`, { cause: error });
    }
    if (response.ok) return response;
    const body = await readJson(response).catch(() => undefined);
    const e = typeof body === "object" && body !== null ? (body as { error?: Record<string, unknown> }).error : undefined;
    const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
    // The node API's code is the status as a string; anything else a server sends stays in the message, not the code.
    const code = str(e?.code);
    throw new ClientError(response.status, code !== undefined && /^\d{3}$/.test(code) ? (code as `${number}`) : `${response.status}`, str(e?.message) ?? `${method} ${path} answered ${response.status}`, {
      reason: str(e?.reason),
      path: str(e?.path),
    });
  }

  // Counted while the body streams in (a chunked answer declares no length), and cancelled once past the limit.
  async function readBytes(response: Response): Promise<Uint8Array> {
    const tooLarge = (): ClientError => new ClientError(response.status, "BAD_RESPONSE", `the answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > MAX_RESPONSE_BYTES) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const bytes = await readAtMost(response.body, MAX_RESPONSE_BYTES);
    if (bytes === undefined) throw tooLarge();
    return bytes;
  }

  async function readJson(response: Response): Promise<unknown> {
    const bytes = await readBytes(response);
    try {
      return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    } catch (error) {
      throw new ClientError(response.status, "BAD_RESPONSE", "the answer is not JSON", { cause: error });
    }
  }

  /** `data.<key>` of a node API answer, or the bare `<key>` (the original prove-ownership service). */
  async function field(response: Response, key: string): Promise<unknown> {
    const body = await readJson(response);
    if (typeof body !== "object" || body === null) throw new ClientError(response.status, "BAD_RESPONSE", `the answer has no ${key}`);
    const data = (body as { data?: unknown }).data;
    if (typeof data === "object" && data !== null && Object.prototype.hasOwnProperty.call(data, key)) return (data as Record<string, unknown>)[key];
    if (Object.prototype.hasOwnProperty.call(body, key)) return (body as Record<string, unknown>)[key];
    throw new ClientError(response.status, "BAD_RESPONSE", `the answer has no ${key}`);
  }

  async function getInfo(): Promise<ClientNodeInfo> {
    const response = await call("GET", "/api/v1/info");
    const body = await readJson(response);
    const data = typeof body === "object" && body !== null ? (body as { data?: unknown }).data : undefined;
    if (typeof data !== "object" || data === null) throw new ClientError(200, "BAD_RESPONSE", "the info answer has no data");
    const info = data as Partial<ClientNodeInfo>;
    if (typeof info.networkId !== "string" || typeof info.minPoWScore !== "number") throw new ClientError(200, "BAD_RESPONSE", "the info answer lacks networkId or minPoWScore");
    return info as ClientNodeInfo;
  }

  const infoCacheMs = options.infoCacheMs ?? 10_000;
  let infoCache: { info: ClientNodeInfo; at: number } | undefined;
  async function cachedInfo(): Promise<ClientNodeInfo> {
    const now = Date.now();
    if (infoCache !== undefined && now - infoCache.at < infoCacheMs) return infoCache.info;
    const info = await getInfo();
    infoCache = { info, at: now };
    return info;
  }

  async function getTips(): Promise<string[]> {
    const ids = await field(await call("GET", "/api/v1/tips"), "tipMessageIds");
    if (!Array.isArray(ids) || !ids.every((t) => typeof t === "string")) throw new ClientError(200, "BAD_RESPONSE", "tipMessageIds is not a list of ids");
    return ids as string[];
  }

  /** The `data` object of a node API answer. */
  async function data<T>(path: string, what: string): Promise<T> {
    const response = await call("GET", path);
    const body = await readJson(response);
    const value = typeof body === "object" && body !== null ? (body as { data?: unknown }).data : undefined;
    if (typeof value !== "object" || value === null) throw new ClientError(response.status, "BAD_RESPONSE", `the ${what} answer has no data`);
    return value as T;
  }

  function listOf(value: unknown, key: string): string[] {
    const list = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(list) || !list.every((t) => typeof t === "string")) throw new ClientError(200, "BAD_RESPONSE", `${key} is not a list of ids`);
    return list as string[];
  }

  function addressPath(address: string): string {
    if (typeof address === "string" && isLowerHex(address.toLowerCase(), ED25519_ADDRESS_LENGTH)) return `/api/v1/addresses/ed25519/${address.toLowerCase()}`;
    if (typeof address !== "string" || !/^[a-z0-9]{1,83}$/i.test(address)) throw new ProtocolError("INVALID_BECH32", "expected a Bech32 address or 64 hex characters", { path: "address" });
    return `/api/v1/addresses/${address.toLowerCase()}`;
  }

  function indexArg(index: number): number {
    if (!Number.isSafeInteger(index) || index < 0 || index > 0xffff_ffff) throw new ProtocolError("INVALID_ARGUMENT", "a milestone index is a u32", { path: "index" });
    return index;
  }

  async function getMessageJson(messageId: string): Promise<MessageJson> {
    return data<MessageJson>(`/api/v1/messages/${messageIdArg(messageId)}`, "message");
  }

  async function requestNonce(identityId: string): Promise<string> {
    const nonce = await field(await call("GET", `/authentication/prove-ownership/${encodeURIComponent(identityId)}`), "nonce");
    if (typeof nonce !== "string") throw new ClientError(200, "BAD_RESPONSE", "the nonce is not a string");
    return nonce;
  }

  async function post(body: Uint8Array | string, contentType: string, signal: AbortSignal | undefined): Promise<string> {
    const response = await call("POST", "/api/v1/messages", { body: body as BodyInit, contentType, signal });
    const id = await field(response, "messageId");
    if (typeof id !== "string") throw new ClientError(response.status, "BAD_RESPONSE", "messageId is not a string");
    return id;
  }

  async function completeLocally(partial: PartialMessage, submit: SubmitMessageOptions): Promise<Message> {
    // A node with no tips answers /tips with 503 CANNOT_FILL (as Hornet); completion then refuses as the node itself would.
    const tips = (): Promise<string[]> => getTips().catch((error: unknown) => (error instanceof ClientError && error.reason === "CANNOT_FILL" ? [] : Promise.reject(error)));
    const filler = { networkId: async () => networkIdOf((await cachedInfo()).networkId), tips };
    const { message, bytes, needsNonce } = await completeMessage(partial, filler);
    if (!needsNonce) return message;
    const info = await cachedInfo();
    // Start at 1: in JSON a nonce of "0" means "missing" (PROTOCOL.md §6), so a node would mine the message again.
    const powOptions: { minScore: number; startNonce: bigint; signal?: AbortSignal; onProgress?: (p: { hashes: number; elapsedMs: number }) => void; workers?: number } = {
      minScore: info.minPoWScore,
      startNonce: 1n,
    };
    if (submit.signal !== undefined) powOptions.signal = submit.signal;
    if (submit.onProgress !== undefined) powOptions.onProgress = submit.onProgress;
    if (options.miner !== undefined) message.nonce = await options.miner.mine(bytes, powOptions);
    else {
      if (options.powWorkers !== undefined) powOptions.workers = options.powWorkers;
      message.nonce = await mineNonce(bytes, powOptions);
    }
    return message;
  }

  // Every call goes through guard(): whatever fails inside (a bad key, a malformed answer) reaches the caller as a
  // ClientError with the cause attached.
  return {
    baseUrl: base,
    get jwt() {
      return jwt;
    },
    setJwt(value: string | undefined): void {
      jwt = value;
    },
    requestNonce: guard(requestNonce),
    proveOwnership: guard(async (identityId: string, secretKeyBase58: string): Promise<string> => {
      const nonce = await requestNonce(identityId);
      const signedNonce = signNonce(nonce, secretKeyBase58);
      const response = await call("POST", `/authentication/prove-ownership/${encodeURIComponent(identityId)}`, {
        body: JSON.stringify({ signedNonce }),
        contentType: "application/json",
      });
      const token = await field(response, "jwt");
      if (typeof token !== "string") throw new ClientError(200, "BAD_RESPONSE", "the jwt is not a string");
      jwt = token;
      return token;
    }),
    submitMessage: guard(async (input: SubmittableMessage, submit: SubmitMessageOptions = {}): Promise<string> => {
      if (input instanceof Uint8Array) return post(input, "application/octet-stream", submit.signal);
      if (typeof input !== "object" || input === null) throw new ProtocolError("INVALID_ARGUMENT", "expected a message (JSON, model or bytes)", { path: "" });
      const partial: PartialMessage = isModel(input) ? (input as PartialMessage) : partialMessageFromJson(input);
      if (submit.localPow !== true) return post(JSON.stringify(partialToJson(partial)), "application/json", submit.signal);
      const once = async (): Promise<string> => {
        const message = await completeLocally(partial, submit);
        // messageToJson keeps a mined nonce of 0, which the partial form would drop as "missing".
        if (submit.format === "json") return post(JSON.stringify(messageToJson(message)), "application/json", submit.signal);
        return post(encodeMessage(message), "application/octet-stream", submit.signal);
      };
      try {
        return await once();
      } catch (error) {
        // The info the PoW was mined for may be stale (the node raised its score or changed network): read it again
        // and retry once.
        const reason = error instanceof ClientError ? error.reason : undefined;
        if (reason !== "INSUFFICIENT_POW" && reason !== "WRONG_NETWORK_ID") throw error;
        infoCache = undefined;
        return once();
      }
    }),
    getMessage: guard(async (messageId: string): Promise<Message> => messageFromJson(await getMessageJson(messageId))),
    getMessageJson: guard(getMessageJson),
    getMessageRaw: guard(async (messageId: string): Promise<Uint8Array> => readBytes(await call("GET", `/api/v1/messages/${messageIdArg(messageId)}/raw`, { accept: "application/octet-stream" }))),
    getInfo: guard(getInfo),
    getTips: guard(getTips),
    getHealth: guard(async (): Promise<boolean> => {
      let response: Response;
      try {
        response = await doFetch(`${base}/health`, { method: "GET", headers: { ...options.headers } });
      } catch (error) {
        throw new ClientError(0, "NETWORK_ERROR", `no answer from ${base}: ${(error as Error).message}`, { cause: error });
      }
      await response.body?.cancel();
      if (response.status === 200) return true;
      if (response.status === 503) return false;
      throw new ClientError(response.status, `${response.status}`, `GET /health answered ${response.status}`);
    }),
    getMessageMetadata: guard((messageId: string) => data<ClientMessageMetadata>(`/api/v1/messages/${messageIdArg(messageId)}/metadata`, "metadata")),
    getMessageChildren: guard(async (messageId: string): Promise<string[]> => listOf(await data(`/api/v1/messages/${messageIdArg(messageId)}/children`, "children"), "childrenMessageIds")),
    findMessages: guard(async (index: string | Uint8Array): Promise<string[]> => {
      const bytes = typeof index === "string" ? new TextEncoder().encode(index) : index;
      return listOf(await data(`/api/v1/messages?index=${toHex(bytes)}`, "index"), "messageIds");
    }),
    getOutput: guard(async (outputId: string): Promise<ClientOutput> => {
      const { transactionId, index } = parseOutputId(outputId);
      return data<ClientOutput>(`/api/v1/outputs/${makeOutputId(transactionId, index)}`, "output");
    }),
    getAddress: guard(async (address: string) => data<ClientAddressBalance>(addressPath(address), "address")),
    getAddressOutputs: guard(async (address: string, query: { type?: 0 | 1; includeSpent?: boolean } = {}): Promise<ClientAddressOutputs> => {
      const params = new URLSearchParams();
      if (query.type !== undefined) params.set("type", String(query.type));
      if (query.includeSpent !== undefined) params.set("include-spent", String(query.includeSpent));
      const search = params.size > 0 ? `?${params}` : "";
      return data<ClientAddressOutputs>(`${addressPath(address)}/outputs${search}`, "address outputs");
    }),
    getMilestone: guard(async (index: number) => data<ClientMilestone>(`/api/v1/milestones/${indexArg(index)}`, "milestone")),
    getMilestoneUtxoChanges: guard(async (index: number) => data<ClientUtxoChanges>(`/api/v1/milestones/${indexArg(index)}/utxo-changes`, "utxo changes")),
    getTransactionIncludedMessage: guard(async (transactionId: string) => data<MessageJson>(`/api/v1/transactions/${messageIdArg(transactionId)}/included-message`, "included message")),
  };
}
