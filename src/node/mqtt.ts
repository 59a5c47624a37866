// The node's event API (Hornet's mqtt plugin, one job): an MQTT 3.1.1 broker (aedes) over WebSocket at /mqtt on the API
// port, publishing what the node stored on the topics of NODE-API.md §2.2 with Hornet's payloads and on-subscribe answers.
// Events flow from the store outward: this bridge only translates node events and store reads into topics.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Aedes, type Client, type PublishPacket, type Subscription } from "aedes";
import { createWebSocketStream, WebSocketServer, type WebSocket } from "ws";
import { toHex } from "../bytes/hex.js";
import { bech32Address } from "../crypto/address.js";
import { outputId } from "../model/ids.js";
import { payloadToJson } from "../model/json.js";
import { promotionAdvice } from "./cone.js";
import type { ChrysalisNode, NodeEvent } from "./pipeline.js";
import { messageMetadataJson, outputResponseJson } from "./shapes.js";
import type { UpgradeContext } from "./server.js";
import type { MilestoneRecord, StoredMessage } from "./store/contract.js";

/** The MQTT bridge's path, heartbeat and bounds. */
export interface MqttBridgeOptions {
  /** The WebSocket path on the API port. Default "/mqtt" (Hornet's public route). */
  path?: string;
  /**
   * Every this many ms the store's latest milestone is read: a newer one (issued by another instance sharing the store)
   * is published, and when nothing went out on the milestone topics for this long the latest is published again, so
   * that iota.js MqttClient's 30 s watchdog never drops a quiet connection. Default 15 000.
   */
  heartbeatMs?: number;
  /** Largest WebSocket frame a client may send (clients only connect and subscribe). Default 64 KiB. */
  maxPayload?: number;
  /** Called with failures of a publication (a store read failed). Default: ignored. */
  onError?: (error: unknown) => void;
  /** Most subscriptions one connection holds. Default 256. */
  maxSubscriptionsPerClient?: number;
  /** Most subscriptions held over all connections. Default 65,536. */
  maxSubscriptions?: number;
}

/** The node's MQTT event API, attached to serve() through handleUpgrade. */
export interface MqttBridge {
  /** The aedes broker the bridge publishes on; clients may subscribe only, never publish. */
  readonly broker: Aedes;
  /** serve()'s `onUpgrade`: takes WebSocket upgrades on the MQTT path and refuses any other. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, context?: UpgradeContext): void;
  /** Clients connected now. */
  clients(): number;
  /** Disconnects every client and stops the broker. */
  close(): Promise<void>;
}

/** The WebSocket path MQTT clients connect to on the API port, unless MqttBridgeOptions.path says otherwise (Hornet's
 * public route). */
export const MQTT_PATH = "/mqtt";
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CLIENT = 256;
export const DEFAULT_MAX_SUBSCRIPTIONS = 65_536;

// The topics of NODE-API.md §2.2, exactly (Hornet's topic manager has no wildcards: a filter with + or # would never
// receive anything there, and here it would make every publication scan it).
const TOPICS = [
  /^milestones\/(latest|confirmed)$/,
  /^messages$/,
  /^messages\/referenced$/,
  /^messages\/indexation\/([0-9a-f]{2}){1,64}$/,
  /^messages\/[0-9a-f]{64}\/metadata$/,
  /^transactions\/[0-9a-f]{64}\/included-message$/,
  /^outputs\/[0-9a-f]{68}$/,
  /^addresses\/[a-z0-9]{1,83}\/outputs$/,
  /^addresses\/ed25519\/[0-9a-f]{64}\/outputs$/,
  /^receipts$/,
];
/** How often the bridge reads the latest milestone and republishes it on a quiet connection, unless
 * MqttBridgeOptions.heartbeatMs says otherwise: half of iota.js MqttClient's 30 s watchdog. */
export const DEFAULT_MQTT_HEARTBEAT_MS = 15_000;

const MILESTONES_LATEST = "milestones/latest";
const MILESTONES_CONFIRMED = "milestones/confirmed";

/**
 * Starts the MQTT bridge of `node` once the node is ready: Hornet's topics of `NODE-API.md` §2.2 with its payloads and
 * on-subscribe answers, published from the node's events, and only on topics someone subscribed to.
 */
export async function createMqttBridge(node: ChrysalisNode, options: MqttBridgeOptions = {}): Promise<MqttBridge> {
  const path = options.path ?? MQTT_PATH;
  const heartbeatMs = Math.max(10, options.heartbeatMs ?? DEFAULT_MQTT_HEARTBEAT_MS);
  const onError = options.onError ?? (() => undefined);
  const store = node.store;
  const hrp = node.info.bech32HRP;
  const maxPerClient = Math.max(1, options.maxSubscriptionsPerClient ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_CLIENT);
  const maxTotal = Math.max(1, options.maxSubscriptions ?? DEFAULT_MAX_SUBSCRIPTIONS);
  // Each connection's edge admission: one request token per SUBSCRIBE, from the client address it upgraded from.
  const admissions = new WeakMap<Client, () => boolean>();
  // Hornet publishes a topic only when someone subscribed to it.
  const filters = new Map<string, number>();
  const byClient = new Map<Client, Set<string>>();
  let total = 0;
  const broker = await Aedes.createBroker({
    // Sessions end with their connection: a persistent one would keep its subscriptions after the client left, so
    // clean: false is refused (CONNACK 5) and the connection closed.
    authenticate: (client, _username, _password, callback) => callback(null, client.clean !== false),
    // Only the node publishes: a client's PUBLISH (a forged milestone, say) is refused and its connection closed.
    authorizePublish: (_client, _packet, callback) => callback(new Error("publishing is reserved to the node")),
    // A topic of §2.2, within the caps and the client's rate limit, or a refusal (SUBACK 0x80) of that one topic.
    authorizeSubscribe: (client, subscription, callback) => {
      const topic = subscription.topic;
      const topics = byClient.get(client) ?? new Set<string>();
      if (topics.has(topic)) return callback(null, subscription);
      const known = TOPICS.some((shape) => shape.test(topic));
      if (!known || topics.size >= maxPerClient || total >= maxTotal || admissions.get(client)?.() === false) return callback(null, null);
      topics.add(topic);
      byClient.set(client, topics);
      filters.set(topic, (filters.get(topic) ?? 0) + 1);
      total++;
      callback(null, subscription);
    },
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? 64 * 1024 });

  const removeFilter = (client: Client, topic: string): void => {
    if (byClient.get(client)?.delete(topic) !== true) return;
    total--;
    const count = (filters.get(topic) ?? 1) - 1;
    if (count > 0) filters.set(topic, count);
    else filters.delete(topic);
  };
  const hasSubscribers = (topic: string): boolean => filters.has(topic);

  function packet(topic: string, payload: Uint8Array | string | object): PublishPacket {
    const body = payload instanceof Uint8Array ? Buffer.from(payload.buffer, payload.byteOffset, payload.length) : Buffer.from(typeof payload === "string" ? payload : JSON.stringify(payload));
    return { cmd: "publish", topic, payload: body, qos: 0, retain: false, dup: false };
  }

  function publish(topic: string, payload: Uint8Array | string | object): void {
    if (hasSubscribers(topic)) broker.publish(packet(topic, payload), () => undefined);
  }

  // The confirmed index the promote/reattach advice in metadata is computed against; kept current by milestone events.
  await node.ready();
  let lastMilestone: MilestoneRecord | undefined = await store.latestMilestone().catch(() => undefined);
  let confirmedIndex = lastMilestone?.index ?? 0;
  let lastMilestoneSentAt = Date.now();
  function publishMilestone(record: MilestoneRecord): void {
    lastMilestone = record;
    confirmedIndex = Math.max(confirmedIndex, record.index);
    lastMilestoneSentAt = Date.now();
    const json = { index: record.index, timestamp: record.timestamp };
    publish(MILESTONES_LATEST, json);
    publish(MILESTONES_CONFIRMED, json);
  }

  function publishMetadata(stored: StoredMessage, metadata: Parameters<typeof messageMetadataJson>[2], referenced: boolean): void {
    const topic = `messages/${stored.id}/metadata`;
    const wanted = hasSubscribers(topic);
    if (!wanted && !(referenced && hasSubscribers("messages/referenced"))) return;
    const advice = metadata.referencedByMilestoneIndex === undefined ? promotionAdvice(metadata.coneRoots, confirmedIndex) : undefined;
    const json = messageMetadataJson(stored.id, stored.message.parents, metadata, advice);
    if (referenced) publish("messages/referenced", json);
    if (wanted) publish(topic, json);
  }

  function onEvent(event: NodeEvent): void {
    switch (event.type) {
      case "message": {
        // With no subscription at all (a node's usual state), a stored message costs no topic names.
        if (filters.size === 0) return;
        publish("messages", event.stored.bytes);
        const payload = event.stored.message.payload;
        // Only a top-level indexation payload counts, as in Hornet (not one inside a transaction essence).
        if (payload?.type === 2) publish(`messages/indexation/${toHex(payload.index)}`, event.stored.bytes);
        publishMetadata(event.stored, event.metadata, false);
        return;
      }
      case "referenced":
        publishMetadata(event.stored, event.metadata, true);
        return;
      case "output": {
        const record = event.output;
        const json = outputResponseJson(record, event.milestoneIndex, false);
        publish(`outputs/${record.outputId}`, json);
        publish(`addresses/${bech32Address(hrp, record.output.address.address)}/outputs`, json);
        publish(`addresses/ed25519/${toHex(record.output.address.address)}/outputs`, json);
        return;
      }
      case "transaction":
        publish(`transactions/${event.transactionId}/included-message`, event.stored.bytes);
        return;
      case "milestone": {
        publishMilestone(event.milestone);
        const receipt = event.payload.receipt;
        if (receipt !== undefined) {
          const json = payloadToJson(event.payload);
          if (json.type === 1 && json.receipt !== null) publish("receipts", json.receipt);
        }
        return;
      }
    }
  }
  const unsubscribe = node.subscribe(onEvent);

  // What Hornet sends at once to a new subscriber of these topics: the current state, when there is one; to that
  // subscriber alone (the others have it already).
  async function onSubscribe(topic: string, client: Client): Promise<void> {
    const answer = (payload: Uint8Array | object): void => client.publish(packet(topic, payload), () => undefined);
    if (topic === MILESTONES_LATEST || topic === MILESTONES_CONFIRMED) {
      const latest = await store.latestMilestone();
      if (latest !== undefined) answer({ index: latest.index, timestamp: latest.timestamp });
      return;
    }
    let m = /^messages\/([0-9a-f]{64})\/metadata$/.exec(topic);
    if (m !== null) {
      const [stored, metadata] = await Promise.all([store.get(m[1]!), store.metadata(m[1]!)]);
      if (stored !== undefined && metadata !== undefined) {
        const advice = metadata.referencedByMilestoneIndex === undefined ? promotionAdvice(metadata.coneRoots, confirmedIndex) : undefined;
        answer(messageMetadataJson(stored.id, stored.message.parents, metadata, advice));
      }
      return;
    }
    // Hornet's ledger holds only what milestones confirmed, and these topics fire at confirmation: a transaction or an
    // output this node accepted but no milestone booked yet is not announced early.
    m = /^transactions\/([0-9a-f]{64})\/included-message$/.exec(topic);
    if (m !== null) {
      const record = await store.output(outputId(m[1]!, 0));
      const stored = record?.milestoneIndexBooked === undefined ? undefined : await store.get(record.messageId);
      if (stored !== undefined) answer(stored.bytes);
      return;
    }
    m = /^outputs\/([0-9a-f]{68})$/.exec(topic);
    if (m !== null) {
      const record = await store.output(m[1]!);
      if (record?.milestoneIndexBooked !== undefined) answer(outputResponseJson(record, (await store.latestMilestone())?.index ?? 0, false));
    }
  }

  // Granted subscriptions were counted by authorizeSubscribe; here they get their on-subscribe answers.
  broker.on("subscribe", (subscriptions: Subscription[], client: Client) => {
    for (const { topic } of subscriptions) onSubscribe(topic, client).catch(onError);
  });
  broker.on("unsubscribe", (unsubscriptions: string[], client: Client) => {
    for (const topic of unsubscriptions) removeFilter(client, topic);
  });
  broker.on("clientDisconnect", (client: Client) => {
    for (const topic of [...(byClient.get(client) ?? [])]) removeFilter(client, topic);
    byClient.delete(client);
  });

  const heartbeat = setInterval(() => {
    store
      .latestMilestone()
      .then((latest) => {
        if (latest === undefined) return;
        if (lastMilestone === undefined || latest.index > lastMilestone.index || Date.now() - lastMilestoneSentAt >= heartbeatMs) publishMilestone(latest);
      })
      .catch(onError);
  }, heartbeatMs);
  heartbeat.unref();

  return {
    broker,
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, context?: UpgradeContext): void {
      // A broken connection is the client's: drop it, never the process.
      if (socket.listenerCount("error") === 0) socket.on("error", () => socket.destroy());
      const url = new URL(request.url ?? "/", "http://localhost");
      if (url.pathname !== path) {
        socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        setTimeout(() => socket.destroy(), 1000).unref();
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        const stream = createWebSocketStream(ws);
        stream.on("error", () => ws.terminate());
        const client = broker.handle(stream, request);
        if (context !== undefined) admissions.set(client, () => context.admit());
      });
    },
    clients: () => wss.clients.size,
    async close(): Promise<void> {
      clearInterval(heartbeat);
      unsubscribe();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}
