// Confirmation under load (issue 33 item 3): clients submit over real HTTP on 127.0.0.1 to a node whose coordinator
// issues milestones, either as a wallet does (GET /api/v1/tips, a wait while it mines locally, then the complete
// message) or leaving parents to the node; afterwards every acknowledged message is looked up: was it referenced
// within three milestones of its acknowledgement, later, or never (an orphan)? The test and the bench both run this.
import { toHex } from "../src/bytes/hex.js";
import { networkId } from "../src/model/ids.js";
import { createCoordinator, createEdge, createHandler, createNode, serve } from "../src/node/index.js";

export interface ConfirmationLoadOptions {
  /** Milliseconds between milestones. */
  readonly milestoneMs: number;
  /** Concurrent clients. */
  readonly clients: number;
  /** How long they submit, in ms. */
  readonly durationMs: number;
  /** "tips": GET /tips, wait as if mining, POST with those parents; "node": POST without parents. */
  readonly mode: "tips" | "node";
  /** The wait between GET /tips and the POST, ms: drawn uniformly in [min, max]. */
  readonly powMs?: readonly [number, number];
  /** Milestones a message may wait for its reference and still count as in time. Default 3. */
  readonly within?: number;
}

export interface ConfirmationLoadResult {
  readonly acknowledged: number;
  /** Submissions answered other than 201, by status. */
  readonly refused: Record<string, number>;
  /** Acknowledged messages referenced at most `within` milestones after the confirmed index at their acknowledgement. */
  readonly inTime: number;
  /** Referenced, but later than that. */
  readonly late: number;
  /** Never referenced by the end. */
  readonly orphans: number;
  /** inTime / acknowledged. */
  readonly share: number;
  readonly milestones: number;
}

const NETWORK = "chrysalis-confirmation-load";

export async function confirmationLoad(options: ConfirmationLoadOptions): Promise<ConfirmationLoadResult> {
  const within = options.within ?? 3;
  const [powMin, powMax] = options.powMs ?? [0, 0];
  // Score 0: any nonce meets it, so the clients' "mining" is the wait alone and the node mines nothing either.
  const node = createNode({ network: NETWORK, minPoWScore: 0, pow: { workers: 1 } });
  const coordinator = createCoordinator(node, { keys: [globalThis.crypto.getRandomValues(new Uint8Array(32))], intervalMs: options.milestoneMs, onError: () => undefined });
  const edge = createEdge({ limits: { rates: false } });
  const server = await serve(createHandler(node), { host: "127.0.0.1", port: 0, edge, onClose: () => node.close() });
  const acked: { id: string; cmi: number }[] = [];
  const refused: Record<string, number> = {};
  const network = networkId(NETWORK).toString();
  try {
    await node.ready();
    coordinator.start();
    const end = Date.now() + options.durationMs;
    let sequence = 0;
    const client = async (n: number): Promise<void> => {
      while (Date.now() < end) {
        const text = toHex(new TextEncoder().encode(`load ${n} ${sequence++}`));
        let body: unknown = { payload: { type: 2, index: toHex(new TextEncoder().encode("confirmation load")), data: text } };
        if (options.mode === "tips") {
          const tips = await fetch(`${server.url}/api/v1/tips`);
          if (tips.status !== 200) {
            refused[`tips ${tips.status}`] = (refused[`tips ${tips.status}`] ?? 0) + 1;
            await tips.arrayBuffer();
            await new Promise((r) => setTimeout(r, 20));
            continue;
          }
          const { data } = (await tips.json()) as { data: { tipMessageIds: string[] } };
          await new Promise((r) => setTimeout(r, powMin + Math.random() * (powMax - powMin)));
          body = { ...(body as object), networkId: network, parentMessageIds: data.tipMessageIds, nonce: "0" };
        }
        const response = await fetch(`${server.url}/api/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        if (response.status === 201) {
          const { data } = (await response.json()) as { data: { messageId: string } };
          acked.push({ id: data.messageId, cmi: node.parts.confirmation.confirmedIndex });
        } else {
          refused[String(response.status)] = (refused[String(response.status)] ?? 0) + 1;
          await response.arrayBuffer();
        }
      }
    };
    await Promise.all(Array.from({ length: options.clients }, (_, n) => client(n)));
    // Drain: `within` more milestones after the last acknowledgement, then one more so that the last is announced.
    const last = node.parts.confirmation.confirmedIndex;
    const deadline = Date.now() + (within + 2) * options.milestoneMs + 10_000;
    while (node.parts.confirmation.confirmedIndex < last + within && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await coordinator.stop();
    let inTime = 0;
    let late = 0;
    let orphans = 0;
    for (const { id, cmi } of acked) {
      const metadata = await node.getMetadata(id);
      const at = metadata?.referencedByMilestoneIndex;
      if (at === undefined) orphans++;
      else if (at - cmi <= within) inTime++;
      else late++;
    }
    return { acknowledged: acked.length, refused, inTime, late, orphans, share: acked.length === 0 ? 0 : inTime / acked.length, milestones: node.parts.confirmation.confirmedIndex };
  } finally {
    await coordinator.stop();
    await server.close();
  }
}
