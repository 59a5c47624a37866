// Fixtures for the tests that drive the real third-party clients (iota.js 1.8.6, @iota/mqtt.js 1.8.6, @iota/is-client
// 0.1.19) against a real node on 127.0.0.1 (ephemeral port): the node as `serve` assembles it, with its coordinator and
// MQTT broker, and bounded waits. Every node started here is closed by the test that starts it.
import { Bip32Path } from "@iota/crypto.js";
import { Ed25519Address, Ed25519Seed, generateBip44Address } from "@iota/iota.js";
import type { MqttClient } from "@iota/mqtt.js";
import { TOTAL_SUPPLY } from "../src/bytes/limits.js";
import { outputId } from "../src/model/ids.js";
import { startNode, type NodeSetup, type SetupOptions } from "../src/cli/setup.js";
import { MemoryLedger } from "../src/node/index.js";
import { GENESIS_TX } from "./node-helpers.js";

export const NETWORK = "chrysalis-clients";

/** Resolves with `promise`, or rejects after `ms` naming `what` (every wait in these tests is bounded). */
export function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The Ed25519 address bytes of an iota.js seed's BIP-44 address (account 0, external, `index`), as its wallet derives it. */
export function walletAddress(seed: Ed25519Seed, index = 0): Uint8Array {
  const path = generateBip44Address({ accountIndex: 0, addressIndex: index, isInternal: false });
  return new Ed25519Address(seed.generateSeedFromPath(new Bip32Path(path)).keyPair().publicKey).toAddress();
}

export function randomSeed(): Ed25519Seed {
  return new Ed25519Seed(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}

export interface FullNodeOptions extends Omit<SetupOptions, "host" | "port" | "ledger"> {
  /** The total supply starts at this address (genesis output 00…00:0). */
  genesisAddress?: Uint8Array;
}

/** A node as `chrysalis serve` builds it: coordinator (500 ms unless told), MQTT at /mqtt, on 127.0.0.1:0. */
export async function startFullNode(options: FullNodeOptions = {}): Promise<NodeSetup & { url: string; mqttUrl: string }> {
  const { genesisAddress, ...rest } = options;
  const setup: SetupOptions = { network: NETWORK, minPoWScore: 50, pow: { workers: 1 }, coordinator: { intervalMs: 500 }, mqtt: {}, ...rest, host: "127.0.0.1", port: 0 };
  if (genesisAddress !== undefined) {
    setup.ledger = new MemoryLedger().add(outputId(GENESIS_TX, 0), { type: 0, address: { type: 0, address: genesisAddress }, amount: TOTAL_SUPPLY });
  }
  const running = await startNode(setup);
  return Object.assign(running, { url: running.server.url, mqttUrl: `${running.server.url.replace(/^http/, "ws")}/mqtt` });
}

/**
 * MqttClient 1.8.6 has no public close: unsubscribing leaves its connection and its watchdog timer running. Its own
 * private disconnect (what the watchdog calls before reconnecting) ends both; tests call it so nothing outlives them.
 */
export function closeMqtt(client: MqttClient): void {
  (client as unknown as { mqttDisconnect(): void }).mqttDisconnect();
}

/** The first value `subscribe` delivers to its callback that satisfies `accept`, within `ms`. */
export function firstEvent<T>(subscribe: (callback: (topic: string, data: T) => void) => string, accept: (data: T) => boolean, ms: number, what: string): Promise<{ topic: string; data: T; subscriptionId: string }> {
  let subscriptionId = "";
  const got = new Promise<{ topic: string; data: T; subscriptionId: string }>((resolve) => {
    let done = false;
    subscriptionId = subscribe((topic, data) => {
      if (done || !accept(data)) return;
      done = true;
      resolve({ topic, data, subscriptionId });
    });
  });
  return within(ms, got, what);
}
