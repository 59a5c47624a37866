// Instances on one PostgreSQL database hear each other (LISTEN/NOTIFY): with the coordinator on A and MQTT clients on
// B, B's subscribers receive every milestone A confirms and every message A stores, and B's REST answers the same
// latest milestone. Two `chrysalis serve` processes, a real database, iota.js's MqttClient unmodified.
import { afterAll, describe, expect, it } from "vitest";
import { MqttClient } from "@iota/mqtt.js";
import { bech32Address } from "../src/crypto/index.js";
import { messageId } from "../src/model/ids.js";
import { closeMqtt } from "./clients-helpers.js";
import { killAll, startServe } from "./serve-process.js";
import { createTestDatabase, postgresUrl, wallet } from "./store-helpers.js";

const serverUrl = postgresUrl();

afterAll(killAll);

describe.skipIf(serverUrl === undefined)("two instances on one PostgreSQL database, the coordinator on one, MQTT clients on the other", () => {
  it("the other's subscribers receive every milestone and every message, and its REST the same latest milestone", async () => {
    const db = await createTestDatabase(serverUrl!, "cluster_events");
    try {
      const common = ["--database", db.url, "--network", "chrysalis-cluster", "--min-pow-score", "0", "--no-rate-limits", "--no-p2p", "--genesis", bech32Address("atoi", wallet().address)];
      const a = await startServe([...common, "--milestone-interval", "500ms"]);
      const b = await startServe([...common, "--no-coordinator"]);
      const events = new MqttClient(`${b.url.replace(/^http/, "ws")}/mqtt`);
      const milestones: number[] = [];
      const messages = new Set<string>();
      try {
        events.milestonesLatest((_, m) => milestones.push(m.index));
        events.messagesRaw((_, bytes) => messages.add(messageId(bytes)));
        // The subscriptions are live once a first milestone arrives through B.
        for (let i = 0; i < 100 && milestones.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(milestones.length).toBeGreaterThan(0);
        const sent: string[] = [];
        for (let i = 0; i < 20; i++) {
          const response = await fetch(`${a.url}/api/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ payload: { type: 2, index: Buffer.from("cluster").toString("hex"), data: Buffer.from(String(i)).toString("hex") } }),
          });
          expect(response.status).toBe(201);
          sent.push(((await response.json()) as { data: { messageId: string } }).data.messageId);
        }
        const first = milestones.at(-1)!;
        for (let i = 0; i < 100 && (sent.some((id) => !messages.has(id)) || milestones.at(-1)! < first + 4); i++) await new Promise((r) => setTimeout(r, 50));
        for (const id of sent) expect(messages.has(id), `B's subscribers heard of ${id}`).toBe(true);
        expect(milestones.at(-1)!).toBeGreaterThanOrEqual(first + 4);
        // Each milestone once, in order.
        expect(milestones).toEqual([...new Set(milestones)].sort((x, y) => x - y));
        const [infoA, infoB] = await Promise.all([a, b].map(async (n) => ((await (await fetch(`${n.url}/api/v1/info`)).json()) as { data: { confirmedMilestoneIndex: number } }).data.confirmedMilestoneIndex));
        expect(Math.abs(infoA! - infoB!)).toBeLessThanOrEqual(1);
      } finally {
        closeMqtt(events);
        await a.kill();
        await b.kill();
      }
    } finally {
      await db.drop();
    }
  }, 60_000);
});
