// What every view of the dashboard shares: the node's typed client (chrysalis-core/client), the MQTT subscriber, and
// the node's info once read (its Bech32 prefix for addresses).
import { createClient, type ChrysalisClient, type ClientNodeInfo } from "../client/index.js";
import { MqttSubscriber, type MqttStatus } from "./mqtt.js";

export interface App {
  readonly client: ChrysalisClient;
  readonly mqtt: MqttSubscriber;
  /** The node's Bech32 prefix ("iota", "atoi"), once the info was read. */
  readonly hrp: string | undefined;
  /** Settles once the node's info was first asked for (views wait for it: addresses are shown in Bech32). */
  readonly ready: Promise<unknown>;
  setInfo(info: ClientNodeInfo): void;
  /** GET a node API path the client has no call for: its `data`, or undefined on 404. */
  data<T>(path: string): Promise<T | undefined>;
}

export function createApp(onStatus: (status: MqttStatus) => void): App {
  const origin = location.origin;
  const client = createClient(origin);
  const mqtt = new MqttSubscriber(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/mqtt`, onStatus);
  let hrp: string | undefined;
  const ready = client.getInfo().then(
    (info) => (hrp = info.bech32HRP),
    () => undefined,
  );
  return {
    client,
    mqtt,
    ready,
    get hrp() {
      return hrp;
    },
    setInfo(info) {
      hrp = info.bech32HRP;
    },
    async data<T>(path: string): Promise<T | undefined> {
      const response = await fetch(path, { headers: { accept: "application/json" } });
      if (response.status === 404) {
        await response.body?.cancel();
        return undefined;
      }
      if (!response.ok) throw new Error(`${path} answered ${response.status}`);
      return ((await response.json()) as { data: T }).data;
    },
  };
}
