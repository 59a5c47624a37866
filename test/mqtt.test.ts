// The MQTT event API (NODE-API.md §2.2) with @iota/mqtt.js 1.8.6's MqttClient, unmodified, over WebSocket at /mqtt on
// the API port of a real node: each topic, its payload, Hornet's on-subscribe answers, and what the broker refuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Converter } from "@iota/util.js";
import { Bech32Helper, SingleNodeClient, send, type MessageJson, type MessageMetadataJson, type OutputResponseJson } from "@iota/iota.js";
import { MqttClient } from "@iota/mqtt.js";
import mqtt from "mqtt";
import { toHex } from "../src/bytes/hex.js";
import { decodeMessage } from "../src/model/codec.js";
import { messageId as idOf, transactionId } from "../src/model/ids.js";
import { closeMqtt, firstEvent, randomSeed, startFullNode, walletAddress, within } from "./clients-helpers.js";

type Milestone = { index: number; timestamp: number };

describe("every topic of the event API, with iota.js MqttClient", () => {
  const genesisSeed = randomSeed();
  let run: Awaited<ReturnType<typeof startFullNode>>;
  let client: SingleNodeClient;
  let events: MqttClient;
  beforeAll(async () => {
    run = await startFullNode({ genesisAddress: walletAddress(genesisSeed), coordinator: { intervalMs: 400 } });
    client = new SingleNodeClient(run.url);
    events = new MqttClient(run.mqttUrl);
  });
  afterAll(async () => {
    closeMqtt(events);
    await run.close();
  });

  it("milestones/latest and milestones/confirmed: {index, timestamp}, the current one at once, then each new one", async () => {
    const seen: Milestone[] = [];
    const latest = firstEvent<Milestone>((cb) => events.milestonesLatest((t, d) => (seen.push(d), cb(t, d))), () => seen.length >= 3, 5000, "three milestones/latest");
    const confirmed = await firstEvent<Milestone>((cb) => events.milestonesConfirmed(cb), () => true, 5000, "milestones/confirmed");
    expect(Object.keys(confirmed.data).sort()).toEqual(["index", "timestamp"]);
    expect(confirmed.topic).toBe("milestones/confirmed");
    await latest;
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.index).toBeGreaterThanOrEqual(seen[i - 1]!.index);
    expect(seen.at(-1)!.index).toBeGreaterThan(seen[0]!.index);
    const record = await client.milestone(seen.at(-1)!.index);
    expect(record.timestamp).toBe(seen.at(-1)!.timestamp);
  });

  it("messages and messagesRaw: the raw bytes of each new message; messages/indexation/{hex}: only that index", async () => {
    const index = `topic-${Date.now()}`;
    const raw = firstEvent<Uint8Array>((cb) => events.messagesRaw(cb), (d) => decodeMessage(d).payload?.type === 2, 5000, "messages (raw)");
    const decoded = firstEvent<MessageJson>((cb) => events.messages((t, d) => cb(t, d)), (d) => d.payload?.type === 2 && d.payload.index === Converter.utf8ToHex(index), 5000, "messages");
    const byIndex = firstEvent<MessageJson>((cb) => events.index(index, (t, d) => cb(t, d)), () => true, 5000, "messages/indexation");
    const byIndexRaw = firstEvent<Uint8Array>((cb) => events.indexRaw(index, cb), () => true, 5000, "messages/indexation (raw)");
    const other = firstEvent<Uint8Array>((cb) => events.indexRaw("other-index", cb), () => true, 1500, "no other index").then(() => "published", () => "quiet");
    await new Promise((r) => setTimeout(r, 200));
    const id = await client.messageSubmit({ payload: { type: 2, index: Converter.utf8ToHex(index), data: "" } });
    expect(idOf((await byIndexRaw).data)).toBe(id);
    expect((await byIndex).topic).toBe(`messages/indexation/${Converter.utf8ToHex(index)}`);
    expect(idOf((await raw).data)).toMatch(/^[0-9a-f]{64}$/);
    expect((await decoded).data.payload).toEqual({ type: 2, index: Converter.utf8ToHex(index), data: "" });
    expect(await other).toBe("quiet");
  });

  it("messages/{id}/metadata: at once when known, then again when referenced; messages/referenced: each referenced one", async () => {
    const id = await client.messageSubmit({ payload: { type: 2, index: Converter.utf8ToHex("metadata topic"), data: "" } });
    const states: MessageMetadataJson[] = [];
    const referenced = firstEvent<MessageMetadataJson>((cb) => events.messageMetadata(id, (t, d) => (states.push(d), cb(t, d))), (d) => d.referencedByMilestoneIndex !== undefined, 5000, "metadata referenced");
    const onReferencedTopic = firstEvent<MessageMetadataJson>((cb) => events.messagesMetadata(cb), (d) => d.messageId === id, 5000, "messages/referenced");
    const final = (await referenced).data;
    expect(final).toMatchObject({ messageId: id, isSolid: true, ledgerInclusionState: "noTransaction" });
    expect((await onReferencedTopic).data).toEqual(final);
    expect(final).toEqual(await client.messageMetadata(id));
    // The first answer may already be the referenced one (a milestone can come between submit and subscribe).
    if (states.length > 1) expect(states[0]).toMatchObject({ messageId: id, isSolid: true, shouldPromote: false, shouldReattach: false });
  });

  it("outputs/{id}, addresses/{bech32}/outputs, addresses/ed25519/{hex}/outputs and transactions/{id}/included-message at confirmation", async () => {
    const recipient = walletAddress(randomSeed());
    const recipientHex = toHex(recipient);
    const recipientBech32 = Bech32Helper.toBech32(0, recipient, "atoi");
    const byBech32 = firstEvent<OutputResponseJson>((cb) => events.addressOutputs(recipientBech32, cb), () => true, 8000, "addresses/{bech32}/outputs");
    const byHex = firstEvent<OutputResponseJson>((cb) => events.addressEd25519Outputs(recipientHex, cb), () => true, 8000, "addresses/ed25519/{hex}/outputs");
    await new Promise((r) => setTimeout(r, 200));
    const { messageId } = await send(client, genesisSeed, 0, recipientBech32, 1_500_000);
    const txId = transactionId((decodeMessage(await client.messageRaw(messageId)).payload as Parameters<typeof transactionId>[0]));
    const included = firstEvent<MessageJson>((cb) => events.transactionIncludedMessage(txId, (t, d) => cb(t, d)), () => true, 8000, "transactions/{id}/included-message");
    const includedRaw = firstEvent<Uint8Array>((cb) => events.transactionIncludedMessageRaw(txId, cb), () => true, 8000, "transactions/{id}/included-message (raw)");
    const event = (await byBech32).data;
    expect(event).toMatchObject({ messageId, transactionId: txId, isSpent: false, output: { type: 0, address: { type: 0, address: recipientHex }, amount: 1_500_000 } });
    expect(event).not.toHaveProperty("milestoneIndexSpent");
    expect((await byHex).data).toEqual(event);
    expect(idOf((await includedRaw).data)).toBe(messageId);
    expect((await included).data.payload?.type).toBe(0);
    const meta = await client.messageMetadata(messageId);
    expect(event.ledgerIndex).toBe(meta.referencedByMilestoneIndex);

    // outputs/{id}: the current state at once; the spend is announced when a milestone confirms it.
    const outputId = `${txId}${event.outputIndex.toString(16).padStart(2, "0")}00`;
    const now = await firstEvent<OutputResponseJson>((cb) => events.output(outputId, cb), () => true, 5000, "outputs/{id} at once");
    expect(now.data).toMatchObject({ messageId, transactionId: txId, isSpent: false });
    // Once a transaction is in the ledger, a new subscriber gets its including message at once. (A second callback on
    // the same MqttClient sends no SUBSCRIBE, so the new subscriber is a new client.)
    const lateClient = new MqttClient(run.mqttUrl);
    try {
      const late = await firstEvent<Uint8Array>((cb) => lateClient.transactionIncludedMessageRaw(txId, cb), () => true, 5000, "included-message at once");
      expect(idOf(late.data)).toBe(messageId);
    } finally {
      closeMqtt(lateClient);
    }
  });

  it("publishing is the node's alone: a client's PUBLISH closes its connection and reaches no one", async () => {
    const seen = firstEvent<Milestone>((cb) => events.subscribeJson<Milestone>("milestones/latest", cb), (d) => d.index === 424242, 2000, "a forged milestone").then(() => "delivered", () => "refused");
    const rogue = mqtt.connect(run.mqttUrl, { reconnectPeriod: 0 });
    try {
      await within(5000, new Promise<void>((resolve, reject) => (rogue.once("connect", () => resolve()), rogue.once("error", reject))), "rogue connect");
      const closed = within(5000, new Promise<void>((resolve) => rogue.once("close", () => resolve())), "rogue closed");
      rogue.publish("milestones/latest", JSON.stringify({ index: 424242, timestamp: 1 }));
      await closed;
      expect(await seen).toBe("refused");
    } finally {
      rogue.end(true);
    }
  });
});

describe("a node without a coordinator still feeds MqttClient's 30 s watchdog", () => {
  it("the latest milestone is published again after heartbeatMs of quiet", async () => {
    // Milestones come from a coordinator that is then stopped; the bridge keeps re-announcing the latest one.
    const run = await startFullNode({ coordinator: { intervalMs: 200 }, mqtt: { heartbeatMs: 300 } });
    const events = new MqttClient(run.mqttUrl);
    try {
      await firstEvent<Milestone>((cb) => events.milestonesLatest(cb), (d) => d.index >= 1, 5000, "a first milestone");
      await run.coordinator!.stop();
      const last = (await client(run).info()).latestMilestoneIndex;
      const repeats: Milestone[] = [];
      await firstEvent<Milestone>((cb) => events.milestonesLatest((t, d) => (repeats.push(d), cb(t, d))), () => repeats.filter((m) => m.index === last).length >= 3, 5000, "three heartbeats");
      expect(repeats.every((m) => m.index === last)).toBe(true);
    } finally {
      closeMqtt(events);
      await run.close();
    }
  });

  it("another path than /mqtt is refused; closing the node disconnects MQTT clients", async () => {
    const run = await startFullNode({ coordinator: false });
    const wrong = mqtt.connect(run.mqttUrl.replace(/\/mqtt$/, "/other"), { reconnectPeriod: 0 });
    const outcome = await within(5000, new Promise<string>((resolve) => (wrong.once("connect", () => resolve("connected")), wrong.once("error", () => resolve("refused")), wrong.once("close", () => resolve("refused")))), "wrong path");
    wrong.end(true);
    expect(outcome).toBe("refused");
    const good = mqtt.connect(run.mqttUrl, { reconnectPeriod: 0 });
    await within(5000, new Promise<void>((resolve) => good.once("connect", () => resolve())), "connect");
    expect(run.mqtt!.clients()).toBe(1);
    const closed = within(5000, new Promise<void>((resolve) => good.once("close", () => resolve())), "closed by the node");
    await within(10_000, run.close(), "node close with an MQTT client connected");
    await closed;
    good.end(true);
  });
});

function client(run: { url: string }): SingleNodeClient {
  return new SingleNodeClient(run.url);
}

describe("what one MQTT client cannot do to the node or to the others", () => {
  type Granted = { topic: string; qos: number }[];
  const connect = (url: string, options: mqtt.IClientOptions = {}): Promise<mqtt.MqttClient> => {
    const c = mqtt.connect(url, { reconnectPeriod: 0, ...options });
    return within(5000, new Promise<mqtt.MqttClient>((resolve, reject) => (c.once("connect", () => resolve(c)), c.once("error", reject), c.once("close", () => reject(new Error("closed before connecting"))))), "connect");
  };
  const subscribe = (c: mqtt.MqttClient, topics: string[]): Promise<Granted> =>
    within(5000, new Promise<Granted>((resolve, reject) => c.subscribe(topics, (error, granted) => (error ? reject(error) : resolve((granted ?? []) as Granted)))), "suback");
  /** Messages `c` receives on `topic` during `ms`. */
  const heard = (c: mqtt.MqttClient, topic: string, ms: number): Promise<number> =>
    new Promise((resolve) => {
      let n = 0;
      const on = (t: string): void => void (t === topic && n++);
      c.on("message", on);
      setTimeout(() => (c.off("message", on), resolve(n)), ms);
    });

  // Before the fix this killed `serve` with an unhandled ECONNRESET; here such an error fails the run.
  it("an upgrade to another path, or to /mqtt, reset at once by its client, costs that connection only", async () => {
    const net = await import("node:net");
    const run = await startFullNode({ coordinator: false });
    try {
      const { port } = new URL(run.url);
      for (const path of ["/nothing", "/mqtt", "/nothing", "/mqtt"]) {
        for (const delay of [0, 20]) {
          const socket = net.connect({ host: "127.0.0.1", port: Number(port), localAddress: "127.0.0.2" });
          socket.on("error", () => undefined);
          await within(5000, new Promise((resolve) => socket.once("connect", resolve)), "attacker connect");
          socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
          if (delay > 0) await new Promise((r) => setTimeout(r, delay));
          socket.resetAndDestroy();
        }
      }
      await new Promise((r) => setTimeout(r, 100));
      expect((await fetch(`${run.url}/api/v1/info`)).status).toBe(200);
    } finally {
      await run.close();
    }
  });

  it("a persistent session (clean: false) is refused: subscriptions end with their connection", async () => {
    const run = await startFullNode({ coordinator: false });
    try {
      const outcome = await connect(run.mqttUrl, { clean: false, clientId: "keep-me" }).then(
        (c) => (c.end(true), "connected"),
        () => "refused",
      );
      expect(outcome).toBe("refused");
      // The node closes the refused connection (CONNACK 5, then close).
      await within(5000, (async () => { while (run.mqtt!.clients() > 0) await new Promise((r) => setTimeout(r, 20)); })(), "the refused connection closed");
    } finally {
      await run.close();
    }
  });

  it("only the topics of the event API are granted (no wildcards, as Hornet), at most so many per connection and in all", async () => {
    const run = await startFullNode({ coordinator: false, mqtt: { maxSubscriptionsPerClient: 3, maxSubscriptions: 4 } });
    const clients: mqtt.MqttClient[] = [];
    try {
      const a = await connect(run.mqttUrl);
      clients.push(a);
      const refused = await subscribe(a, ["messages/#", "+/latest", "foo", "messages/ZZ/metadata"]);
      expect(refused.map((g) => g.qos)).toEqual([128, 128, 128, 128]);
      const ids = ["01", "02", "03", "04"].map((b) => `messages/${b.repeat(32)}/metadata`);
      expect((await subscribe(a, ids)).map((g) => g.qos)).toEqual([0, 0, 0, 128]);
      // The same topic again is no new subscription; a second connection gets what is left of the total.
      expect((await subscribe(a, [ids[0]!])).map((g) => g.qos)).toEqual([0]);
      const b = await connect(run.mqttUrl);
      clients.push(b);
      expect((await subscribe(b, ["milestones/latest", "milestones/confirmed"])).map((g) => g.qos)).toEqual([0, 128]);
      // A connection that leaves gives its subscriptions back.
      a.end(true);
      await within(5000, (async () => { while (run.mqtt!.clients() > 1) await new Promise((r) => setTimeout(r, 20)); })(), "a disconnected");
      expect((await subscribe(b, ["milestones/confirmed"])).map((g) => g.qos)).toEqual([0]);
    } finally {
      for (const c of clients) c.end(true);
      await run.close();
    }
  });

  it("an on-subscribe answer goes to the new subscriber only", async () => {
    const run = await startFullNode({ coordinator: { intervalMs: 3_600_000 } });
    const clients: mqtt.MqttClient[] = [];
    try {
      await within(5000, (async () => { while ((await run.node.store.latestMilestone()) === undefined) await new Promise((r) => setTimeout(r, 20)); })(), "first milestone");
      const first = await connect(run.mqttUrl);
      clients.push(first);
      const firstHears = heard(first, "milestones/latest", 1500);
      await subscribe(first, ["milestones/latest"]);
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 3; i++) {
        const other = await connect(run.mqttUrl);
        clients.push(other);
        const answered = heard(other, "milestones/latest", 600);
        await subscribe(other, ["milestones/latest"]);
        expect(await answered).toBe(1);
      }
      // The first subscriber got its own answer once, and nothing for the three that came after it.
      expect(await firstHears).toBe(1);
    } finally {
      for (const c of clients) c.end(true);
      await run.close();
    }
  });

  it("a transaction accepted but not yet confirmed is not announced on subscribe; its milestone announces it", async () => {
    const genesisSeed = randomSeed();
    const run = await startFullNode({ genesisAddress: walletAddress(genesisSeed), coordinator: { intervalMs: 3_600_000 } });
    const clients: mqtt.MqttClient[] = [];
    try {
      await within(5000, (async () => { while ((await run.node.store.latestMilestone()) === undefined) await new Promise((r) => setTimeout(r, 20)); })(), "first milestone");
      const iota = new SingleNodeClient(run.url);
      const recipient = Bech32Helper.toBech32(0, walletAddress(randomSeed()), "atoi");
      const { messageId } = await send(iota, genesisSeed, 0, recipient, 2_000_000);
      const txId = transactionId(decodeMessage(await iota.messageRaw(messageId)).payload as Parameters<typeof transactionId>[0]);
      const topic = `transactions/${txId}/included-message`;
      const c = await connect(run.mqttUrl);
      clients.push(c);
      const early = heard(c, topic, 800);
      await subscribe(c, [topic]);
      expect(await early).toBe(0);
      const confirmed = heard(c, topic, 3000);
      await run.coordinator!.issue();
      expect(await confirmed).toBe(1);
    } finally {
      for (const c of clients) c.end(true);
      await run.close();
    }
  });
});
