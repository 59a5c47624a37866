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
import type { MilestoneRecord, StoredMessage } from "./store/contract.js";

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
}

export interface MqttBridge {
  readonly broker: Aedes;
  /** serve()'s `onUpgrade`: takes WebSocket upgrades on the MQTT path and refuses any other. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Clients connected now. */
  clients(): number;
  /** Disconnects every client and stops the broker. */
  close(): Promise<void>;
}

export const MQTT_PATH = "/mqtt";
export const DEFAULT_MQTT_HEARTBEAT_MS = 15_000;

const MILESTONES_LATEST = "milestones/latest";
const MILESTONES_CONFIRMED = "milestones/confirmed";

export async function createMqttBridge(node: ChrysalisNode, options: MqttBridgeOptions = {}): Promise<MqttBridge> {
  const path = options.path ?? MQTT_PATH;
  const heartbeatMs = Math.max(10, options.heartbeatMs ?? DEFAULT_MQTT_HEARTBEAT_MS);
  const onError = options.onError ?? (() => undefined);
  const store = node.store;
  const hrp = node.info.bech32HRP;
  const broker = await Aedes.createBroker({
    // Only the node publishes: a client's PUBLISH (a forged milestone, say) is refused and its connection closed.
    authorizePublish: (_client, _packet, callback) => callback(new Error("publishing is reserved to the node")),
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? 64 * 1024 });

  // Hornet publishes a topic only when someone subscribed to it; wildcard filters count for every topic they match.
  const filters = new Map<string, number>();
  const byClient = new Map<Client, Set<string>>();
  const addFilter = (f: string, n: number): void => {
    const count = (filters.get(f) ?? 0) + n;
    if (count > 0) filters.set(f, count);
    else filters.delete(f);
  };
  function hasSubscribers(topic: string): boolean {
    if (filters.has(topic)) return true;
    for (const f of filters.keys()) if ((f.includes("+") || f.includes("#")) && matches(f, topic)) return true;
    return false;
  }

  function publish(topic: string, payload: Uint8Array | string | object): void {
    if (!hasSubscribers(topic)) return;
    const body = payload instanceof Uint8Array ? Buffer.from(payload.buffer, payload.byteOffset, payload.length) : Buffer.from(typeof payload === "string" ? payload : JSON.stringify(payload));
    const packet: PublishPacket = { cmd: "publish", topic, payload: body, qos: 0, retain: false, dup: false };
    broker.publish(packet, () => undefined);
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
    if (!wanted && !referenced) return;
    const advice = metadata.referencedByMilestoneIndex === undefined ? promotionAdvice(metadata.coneRoots, confirmedIndex) : undefined;
    const json = messageMetadataJson(stored.id, stored.message.parents, metadata, advice);
    if (referenced) publish("messages/referenced", json);
    if (wanted) publish(topic, json);
  }

  function onEvent(event: NodeEvent): void {
    switch (event.type) {
      case "message": {
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

  // What Hornet sends at once to a new subscriber of these topics: the current state, when there is one.
  async function onSubscribe(topic: string): Promise<void> {
    if (topic === MILESTONES_LATEST || topic === MILESTONES_CONFIRMED) {
      const latest = await store.latestMilestone();
      if (latest !== undefined) publish(topic, { index: latest.index, timestamp: latest.timestamp });
      return;
    }
    let m = /^messages\/([0-9a-f]{64})\/metadata$/.exec(topic);
    if (m !== null) {
      const [stored, metadata] = await Promise.all([store.get(m[1]!), store.metadata(m[1]!)]);
      if (stored !== undefined && metadata !== undefined) {
        const advice = metadata.referencedByMilestoneIndex === undefined ? promotionAdvice(metadata.coneRoots, confirmedIndex) : undefined;
        publish(topic, messageMetadataJson(stored.id, stored.message.parents, metadata, advice));
      }
      return;
    }
    m = /^transactions\/([0-9a-f]{64})\/included-message$/.exec(topic);
    if (m !== null) {
      const record = await store.output(outputId(m[1]!, 0));
      const stored = record === undefined ? undefined : await store.get(record.messageId);
      if (stored !== undefined) publish(topic, stored.bytes);
      return;
    }
    m = /^outputs\/([0-9a-f]{68})$/.exec(topic);
    if (m !== null) {
      const record = await store.output(m[1]!);
      if (record !== undefined) publish(topic, outputResponseJson(record, (await store.latestMilestone())?.index ?? 0, false));
    }
  }

  broker.on("subscribe", (subscriptions: Subscription[], client: Client) => {
    let topics = byClient.get(client);
    if (topics === undefined) byClient.set(client, (topics = new Set()));
    for (const { topic } of subscriptions) {
      if (!topics.has(topic)) {
        topics.add(topic);
        addFilter(topic, 1);
      }
      onSubscribe(topic).catch(onError);
    }
  });
  broker.on("unsubscribe", (unsubscriptions: string[], client: Client) => {
    const topics = byClient.get(client);
    for (const topic of unsubscriptions) if (topics?.delete(topic) === true) addFilter(topic, -1);
  });
  broker.on("clientDisconnect", (client: Client) => {
    for (const topic of byClient.get(client) ?? []) addFilter(topic, -1);
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
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      const url = new URL(request.url ?? "/", "http://localhost");
      if (url.pathname !== path) {
        socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        const stream = createWebSocketStream(ws);
        // A broken connection is the client's: drop it, never the process.
        stream.on("error", () => ws.terminate());
        broker.handle(stream, request);
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

/** MQTT topic filter matching: `+` one level, `#` the rest (also the parent level itself). */
function matches(filter: string, topic: string): boolean {
  const f = filter.split("/");
  const t = topic.split("/");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return true;
    if (i >= t.length) return false;
    if (f[i] !== "+" && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
