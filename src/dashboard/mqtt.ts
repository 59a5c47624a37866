// A minimal MQTT 3.1.1 subscriber over WebSocket for the dashboard: CONNECT (clean session), SUBSCRIBE/UNSUBSCRIBE at
// QoS 0, PUBLISH in, PINGREQ to keep the connection, and reconnecting with backoff. 2.3 kB minified (1.2 kB gzip), where
// mqtt.js's browser build (4.3.8, dist/mqtt.min.js) is 236 kB minified and 61 kB gzip, more than the rest of the dashboard
// together, for what a read-only QoS 0 subscriber never uses (QoS 1/2, stores, publishing, Node streams).

export type Listener = (payload: Uint8Array, topic: string) => void;

const CONNECT = 0x10;
const CONNACK = 0x20;
const PUBLISH = 0x30;
const SUBSCRIBE = 0x82;
const UNSUBSCRIBE = 0xa2;
const PINGREQ = 0xc0;
const KEEP_ALIVE_SECONDS = 30;
// The node drops a connection silent for 1.5 × the keep-alive; a ping at half of it leaves room.
const PING_MS = (KEEP_ALIVE_SECONDS * 1000) / 2;
const MAX_BACKOFF_MS = 10_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function utf8String(text: string): Uint8Array {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(2 + bytes.length);
  out[0] = bytes.length >> 8;
  out[1] = bytes.length & 0xff;
  out.set(bytes, 2);
  return out;
}

/** A packet: its first byte, the remaining length (MQTT's variable-length integer), then the parts. */
function packet(first: number, ...parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((n, p) => n + p.length, 0);
  const header = [first];
  let rest = length;
  do {
    let digit = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) digit |= 0x80;
    header.push(digit);
  } while (rest > 0);
  const out = new Uint8Array(header.length + length);
  out.set(header, 0);
  let at = header.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface MqttStatus {
  connected: boolean;
}

/**
 * Subscriptions that survive reconnects: `subscribe` returns an unsubscribe function; each topic is subscribed once on
 * the wire however many listeners it has, and again after every reconnect (sessions are clean).
 */
export class MqttSubscriber {
  readonly #url: string;
  readonly #listeners = new Map<string, Set<Listener>>();
  readonly #onStatus: (status: MqttStatus) => void;
  #socket: WebSocket | undefined;
  #connected = false;
  #buffer = new Uint8Array(0);
  #packetId = 0;
  #ping: ReturnType<typeof setInterval> | undefined;
  #backoff = 500;
  #closed = false;

  constructor(url: string, onStatus: (status: MqttStatus) => void = () => undefined) {
    this.#url = url;
    this.#onStatus = onStatus;
    this.#open();
  }

  get connected(): boolean {
    return this.#connected;
  }

  subscribe(topic: string, listener: Listener): () => void {
    let set = this.#listeners.get(topic);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(topic, set);
      if (this.#connected) this.#send(this.#subscribePacket([topic]));
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(topic);
      if (current === undefined || !current.delete(listener) || current.size > 0) return;
      this.#listeners.delete(topic);
      if (this.#connected) this.#send(packet(UNSUBSCRIBE, this.#nextId(), ...[topic].map(utf8String)));
    };
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#ping);
    this.#socket?.close();
  }

  #nextId(): Uint8Array {
    this.#packetId = (this.#packetId % 0xffff) + 1;
    return new Uint8Array([this.#packetId >> 8, this.#packetId & 0xff]);
  }

  #subscribePacket(topics: string[]): Uint8Array {
    return packet(SUBSCRIBE, this.#nextId(), ...topics.flatMap((t) => [utf8String(t), new Uint8Array([0])]));
  }

  #send(bytes: Uint8Array): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(bytes);
  }

  #open(): void {
    const socket = new WebSocket(this.#url, "mqtt");
    socket.binaryType = "arraybuffer";
    this.#socket = socket;
    this.#buffer = new Uint8Array(0);
    socket.onopen = () => {
      const clientId = `dashboard-${Math.random().toString(36).slice(2, 10)}`;
      // Protocol name "MQTT", level 4 (3.1.1), flags: clean session only, keep-alive.
      const variable = new Uint8Array([0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0x02, KEEP_ALIVE_SECONDS >> 8, KEEP_ALIVE_SECONDS & 0xff]);
      this.#send(packet(CONNECT, variable, utf8String(clientId)));
    };
    socket.onmessage = (event: MessageEvent<ArrayBuffer>) => this.#receive(new Uint8Array(event.data));
    socket.onclose = () => {
      clearInterval(this.#ping);
      const was = this.#connected;
      this.#connected = false;
      if (was) this.#onStatus({ connected: false });
      if (this.#closed) return;
      setTimeout(() => this.#open(), this.#backoff);
      this.#backoff = Math.min(MAX_BACKOFF_MS, this.#backoff * 2);
    };
    // A failed connection also closes; the close handler retries.
    socket.onerror = () => undefined;
  }

  /** Frames may carry part of a packet or several: packets are cut from the buffered bytes. */
  #receive(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.#buffer.length + chunk.length);
    joined.set(this.#buffer, 0);
    joined.set(chunk, this.#buffer.length);
    let at = 0;
    for (;;) {
      if (joined.length - at < 2) break;
      let length = 0;
      let multiplier = 1;
      let i = at + 1;
      let complete = false;
      for (; i < joined.length && i < at + 5; i++) {
        const digit = joined[i]!;
        length += (digit & 0x7f) * multiplier;
        multiplier *= 128;
        if ((digit & 0x80) === 0) {
          complete = true;
          i++;
          break;
        }
      }
      if (!complete || joined.length - i < length) break;
      this.#handle(joined[at]!, joined.subarray(i, i + length));
      at = i + length;
    }
    this.#buffer = joined.slice(at);
  }

  #handle(first: number, body: Uint8Array): void {
    const type = first & 0xf0;
    if (type === CONNACK) {
      if (body[1] !== 0) {
        this.#socket?.close();
        return;
      }
      this.#connected = true;
      this.#backoff = 500;
      this.#onStatus({ connected: true });
      const topics = [...this.#listeners.keys()];
      if (topics.length > 0) this.#send(this.#subscribePacket(topics));
      this.#ping = setInterval(() => this.#send(new Uint8Array([PINGREQ, 0])), PING_MS);
      return;
    }
    if (type === PUBLISH) {
      const topicLength = (body[0]! << 8) | body[1]!;
      const topic = decoder.decode(body.subarray(2, 2 + topicLength));
      // QoS 1 or 2 would carry a packet id; the node publishes at QoS 0 only, but skip one if present.
      const qos = (first >> 1) & 3;
      const payload = body.subarray(2 + topicLength + (qos > 0 ? 2 : 0));
      for (const listener of this.#listeners.get(topic) ?? []) listener(payload, topic);
      return;
    }
    // SUBACK (a refused topic is 0x80: the view that asked simply hears nothing), UNSUBACK and PINGRESP need nothing.
  }
}
