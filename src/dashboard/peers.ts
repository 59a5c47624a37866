// The peers card: who the node gossips with (GET /api/v1/peers, Hornet's shape) — alias or a short id, relation,
// connected or not, the latest and solid milestone of each peer's last heartbeat — and gossip's totals from /metrics.
// The route answers loopback clients or holders of the admin token (--admin-token-file): on a 403 the card asks for it.
import { figure, h, replace } from "./dom.js";
import { groupDigits } from "./format.js";
import { total, type Sample } from "./prometheus.js";
import { TokenPrompt } from "./token.js";

const TOKEN_KEY = "chrysalis.adminToken";

/** What the card reads of a peer; anything else the node sends is left aside. */
interface Peer {
  id: string;
  alias: string | undefined;
  relation: string | undefined;
  connected: boolean;
  heartbeat: { latest: number; solid: number } | undefined;
}

/** The card's state, also its data-state attribute: tests and users can tell an empty list from a refused one. */
type PeersState = "unknown" | "ok" | "empty" | "token" | "off" | "failed";

/** "12D3KooW…" followed by the id's last characters: every Ed25519 peer id starts alike. */
function shortPeerId(id: string): string {
  return id.length <= 16 ? id : `${id.slice(0, 8)}…${id.slice(-6)}`;
}

function readPeers(body: unknown): Peer[] | undefined {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const peers: Peer[] = [];
  for (const p of data as Record<string, unknown>[]) {
    if (typeof p?.id !== "string") continue;
    const beat = (p.gossip as { heartbeat?: Record<string, unknown> | null } | undefined)?.heartbeat;
    const latest = beat?.latestMilestoneIndex;
    const solid = beat?.solidMilestoneIndex;
    peers.push({
      id: p.id,
      alias: typeof p.alias === "string" && p.alias !== "" ? p.alias : undefined,
      relation: typeof p.relation === "string" ? p.relation : undefined,
      connected: p.connected === true,
      heartbeat: typeof latest === "number" && typeof solid === "number" ? { latest, solid } : undefined,
    });
  }
  return peers;
}

export class PeersCard {
  readonly element: HTMLElement;
  #state: PeersState = "unknown";
  #request: Promise<void> | undefined;
  /** What the list shows now: it is rebuilt only when this changes (a title being hovered stays put). */
  #shown = "";
  readonly #list: HTMLUListElement;
  readonly #note: HTMLElement;
  readonly #token: TokenPrompt;
  readonly #figures: Record<string, HTMLElement> = {};
  readonly #totals: HTMLElement;

  constructor() {
    this.#list = h("ul", { class: "list peers", "data-list": "peers" });
    this.#note = h("p", { class: "note", "data-field": "peers-note", hidden: "" });
    this.#token = new TokenPrompt(TOKEN_KEY, "admin token", () => {
      this.#state = "unknown";
      void this.poll();
    });
    this.#token.form.dataset.token = "admin";
    const add = (name: string, label: string): HTMLElement => {
      const f = figure(name, label);
      this.#figures[name] = f.value;
      return f.element;
    };
    this.#totals = h("div", {}, add("peersConnected", "Connected"), add("gossipFrames", "Frames in / out"), add("gossipRequests", "Requests answered / sent"), add("peersDropped", "Peers dropped"));
    this.element = h(
      "article",
      { class: "card", "data-card": "peers", "data-state": this.#state },
      h("h2", {}, "Peers"),
      this.#totals,
      this.#note,
      this.#token.form,
      this.#token.forget,
      this.#list,
    );
  }

  /** Reads the peers route: one request at a time, none while a token is wanted or when the node does not peer. */
  poll(): Promise<void> {
    if (this.#state === "off" || this.#state === "token") return Promise.resolve();
    this.#request ??= this.#read().finally(() => (this.#request = undefined));
    return this.#request;
  }

  /** Gossip's totals, from the samples the overview read of /metrics (absent when the node does not peer). */
  showMetrics(samples: readonly Sample[]): void {
    const sum = (name: string, where: Record<string, string> = {}): number | undefined => total(samples, name, where);
    const framesIn = sum("chrysalis_gossip_frames_total", { direction: "in" });
    const framesOut = sum("chrysalis_gossip_frames_total", { direction: "out" });
    if (framesIn === undefined && framesOut === undefined) return;
    const byType = (direction: string): string =>
      samples
        .filter((s) => s.name === "chrysalis_gossip_frames_total" && s.labels.direction === direction)
        .map((s) => `${s.labels.type}: ${s.value}`)
        .join(", ");
    this.#set("gossipFrames", `${groupDigits(framesIn ?? 0)} / ${groupDigits(framesOut ?? 0)}`, `in: ${byType("in")}\nout: ${byType("out")}`);
    const answered = sum("chrysalis_gossip_requests_total", { result: "answered" }) ?? 0;
    const sent = sum("chrysalis_gossip_requests_total", { result: "sent" }) ?? 0;
    this.#set("gossipRequests", `${groupDigits(answered)} / ${groupDigits(sent)}`, `pending: ${sum("chrysalis_gossip_requests_pending") ?? 0}`);
    const reasons = samples.filter((s) => s.name === "chrysalis_peers_dropped_total" && s.value > 0).map((s) => `${s.labels.reason}: ${s.value}`);
    this.#set("peersDropped", groupDigits(sum("chrysalis_peers_dropped_total") ?? 0), reasons.length > 0 ? reasons.join(", ") : "none");
  }

  #set(name: string, text: string, title?: string): void {
    const element = this.#figures[name];
    if (element === undefined) return;
    element.textContent = text;
    if (title !== undefined) element.title = title;
  }

  /** The state, and the note that says it (none: hidden); a flag in the note is code, kept on one line. */
  #show(state: PeersState, ...note: (string | HTMLElement)[]): void {
    this.#state = state;
    this.element.dataset.state = state;
    replace(this.#note, note);
    this.#note.hidden = note.length === 0;
    this.#totals.hidden = state === "off";
  }

  async #read(): Promise<void> {
    const { headers, sent } = this.#token.authorization();
    let response: Response;
    try {
      response = await fetch("/api/v1/peers", { headers: { accept: "application/json", ...headers }, cache: "no-store" });
    } catch {
      this.#show("failed", "The node did not answer.");
      return;
    }
    if (response.status === 403) {
      await response.body?.cancel();
      this.#token.refused(sent);
      this.#list.hidden = true;
      if (sent) this.#show("token", "That token was refused: enter the admin token again.");
      else this.#show("token", "The peers are shown to loopback clients, or with the node's admin token (", h("code", {}, "--admin-token-file"), "): enter it to see them.");
      return;
    }
    this.#token.answered(sent);
    if (response.status === 404) {
      await response.body?.cancel();
      this.#list.hidden = true;
      this.#show("off", "This node does not peer (", h("code", {}, "--no-p2p"), "): gossip is off.");
      return;
    }
    if (!response.ok) await response.body?.cancel();
    const peers = response.ok ? readPeers(await response.json().catch(() => undefined)) : undefined;
    if (peers === undefined) {
      this.#show("failed", `The peers could not be read (${response.status}).`);
      return;
    }
    const connected = peers.filter((p) => p.connected).length;
    this.#set("peersConnected", peers.length === 0 ? "0" : `${connected} of ${peers.length}`);
    this.#list.hidden = peers.length === 0;
    if (peers.length === 0) this.#show("empty", "no peers");
    else this.#show("ok");
    this.#render(peers);
  }

  #render(peers: Peer[]): void {
    const shown = JSON.stringify(peers);
    if (shown === this.#shown) return;
    this.#shown = shown;
    replace(
      this.#list,
      peers.map((p) =>
        h(
          "li",
          { "data-peer": p.id, "data-connected": String(p.connected) },
          h(
            "div",
            { class: "peer-head" },
            h("span", { class: p.alias === undefined ? "peer-name id" : "peer-name", "data-field": "name", title: p.id }, p.alias ?? shortPeerId(p.id)),
            h("span", { class: p.connected ? "value good" : "value bad", "data-field": "connected" }, p.connected ? "connected" : "not connected"),
          ),
          h("div", { class: "sub peer-about" }, p.alias === undefined ? null : h("span", { class: "id", title: p.id }, shortPeerId(p.id)), p.relation === undefined ? null : h("span", { "data-field": "relation" }, p.relation)),
          p.heartbeat === undefined
            ? h("div", { class: "sub", "data-field": "heartbeat" }, "no heartbeat yet")
            : h(
                "div",
                { class: "sub", "data-field": "heartbeat", title: "the milestones of the peer's last heartbeat" },
                "latest ",
                h("span", { "data-field": "latestMilestoneIndex", "data-index": String(p.heartbeat.latest) }, groupDigits(p.heartbeat.latest)),
                " · solid ",
                h("span", { "data-field": "solidMilestoneIndex", "data-index": String(p.heartbeat.solid) }, groupDigits(p.heartbeat.solid)),
              ),
        ),
      ),
    );
  }
}
