// The overview: health and sync, milestones, messages/s and referenced messages/s, tips, PoW, logins and rate limits,
// store size and pruning, peers. Events (MQTT) drive it; what has no event is polled, at most once a second and only
// while the overview is shown and the tab visible.
import type { ClientNodeInfo } from "../client/index.js";
import { RateChart } from "./chart.js";
import type { App } from "./app.js";
import { figure, h, link, replace } from "./dom.js";
import { formatAge, formatBytes, formatHashRate, formatRate, formatTime, groupDigits } from "./format.js";
import { PeersCard } from "./peers.js";
import { parseMetrics, total, type Sample } from "./prometheus.js";
import { TokenPrompt } from "./token.js";

const CHART_SECONDS = 120;
const RECENT_MILESTONES = 10;
// Info is read on each milestone; without one (or without MQTT) it is read this often, to see health change.
const INFO_FALLBACK_MS = 10_000;
const TOKEN_KEY = "chrysalis.metricsToken";

interface MilestoneRow {
  index: number;
  timestamp: number;
  messageId: string | undefined;
}

type MetricsState = "unknown" | "ok" | "token" | "off" | "failed";

export class Overview {
  readonly element: HTMLElement;
  readonly #app: App;
  readonly #chart: RateChart;
  readonly #messages: number[] = [];
  readonly #referenced: number[] = [];
  #messagesThisSecond = 0;
  #referencedThisSecond = 0;
  readonly #milestones: MilestoneRow[] = [];
  #info: ClientNodeInfo | undefined;
  #infoAt = 0;
  #infoRequest: Promise<void> | undefined;
  #metrics: MetricsState = "unknown";
  #previousHashes: { hashes: number; at: number } | undefined;
  #visible = false;
  #tick = 0;
  readonly #figures: Record<string, HTMLElement> = {};
  readonly #milestoneList: HTMLOListElement;
  readonly #tipList: HTMLElement;
  readonly #metricsNote: HTMLElement;
  readonly #metricsToken: TokenPrompt;
  readonly #peers = new PeersCard();

  constructor(app: App) {
    this.#app = app;
    this.#chart = new RateChart(
      [
        { label: "messages/s", colour: "--accent", values: this.#messages },
        { label: "referenced/s", colour: "--accent2", values: this.#referenced },
      ],
      CHART_SECONDS,
      "messages per second and referenced messages per second, last two minutes",
    );
    const add = (name: string, label: string): HTMLElement => {
      const f = figure(name, label);
      this.#figures[name] = f.value;
      return f.element;
    };
    this.#milestoneList = h("ol", { class: "list", "data-list": "milestones" });
    this.#tipList = h("ul", { class: "list", "data-list": "tips" });
    this.#metricsNote = h("p", { class: "note", hidden: "" });
    this.#metricsToken = new TokenPrompt(TOKEN_KEY, "metrics token", () => {
      this.#metrics = "unknown";
      void this.#pollMetrics();
    });
    this.#metricsToken.form.dataset.token = "metrics";

    const plain = (name: string): HTMLElement => {
      const value = h("span", { class: "value", "data-metric": name }, "–");
      this.#figures[name] = value;
      return value;
    };
    this.element = h(
      "section",
      { class: "grid", "aria-label": "overview" },
      h("article", { class: "card" }, h("h2", {}, "Node"), add("health", "Health"), add("sync", "Sync"), add("network", "Network"), add("version", "Version"), add("events", "Events")),
      h("article", { class: "card" }, h("h2", {}, "Milestones"), add("latestMilestoneIndex", "Latest"), add("confirmedMilestoneIndex", "Confirmed"), add("latestMilestoneAge", "Latest issued")),
      h("article", { class: "card" }, h("h2", {}, "Store"), add("storeBytes", "Size"), add("pruningIndex", "Pruning index")),
      h("article", { class: "card" }, h("h2", {}, "Proof of work"), add("powQueueDepth", "Queue depth"), add("powQueueWaiting", "Waiting"), add("powHashRate", "Hash rate")),
      h(
        "article",
        { class: "card wide" },
        h("h2", {}, "Messages per second"),
        h("div", { class: "legend" }, h("span", { class: "key messages" }, "messages/s ", plain("messagesPerSecond")), h("span", { class: "key referenced" }, "referenced/s ", plain("referencedPerSecond"))),
        this.#chart.canvas,
      ),
      h("article", { class: "card" }, h("h2", {}, "Recent milestones"), this.#milestoneList),
      h("article", { class: "card" }, h("h2", {}, "Tips"), add("tips", "Tips"), this.#tipList),
      h("article", { class: "card" }, h("h2", {}, "Logins and limits"), add("loginsSucceeded", "Logins succeeded"), add("loginsFailed", "Logins failed"), add("rateLimited", "Rate-limited requests")),
      this.#peers.element,
      h("article", { class: "card wide metrics-state" }, this.#metricsNote, this.#metricsToken.form, this.#metricsToken.forget),
    );

    this.#set("events", "connecting…");
    app.mqtt.subscribe("milestones/latest", (payload) => this.#onMilestone(payload));
    app.mqtt.subscribe("messages", () => this.#messagesThisSecond++);
    app.mqtt.subscribe("messages/referenced", () => this.#referencedThisSecond++);
    setInterval(() => this.#everySecond(), 1000);
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && this.#visible) void this.#refresh();
    });
  }

  /** Called by the router: polling runs only while the overview is on screen. */
  show(visible: boolean): void {
    this.#visible = visible;
    if (visible) {
      void this.#refresh();
      this.#chart.draw();
    }
  }

  async start(): Promise<void> {
    await this.#refresh();
    await this.#loadRecentMilestones();
  }

  #set(name: string, text: string, title?: string): void {
    const element = this.#figures[name];
    if (element === undefined) return;
    element.textContent = text;
    if (title !== undefined) element.title = title;
  }

  #setState(name: string, good: boolean | undefined): void {
    const element = this.#figures[name];
    if (element === undefined) return;
    element.classList.toggle("good", good === true);
    element.classList.toggle("bad", good === false);
  }

  #everySecond(): void {
    // The counts of the second that ended go into the series whatever is shown: the chart is whole when one returns.
    this.#messages.push(this.#messagesThisSecond);
    this.#referenced.push(this.#referencedThisSecond);
    this.#messagesThisSecond = 0;
    this.#referencedThisSecond = 0;
    if (this.#messages.length > CHART_SECONDS) this.#messages.shift();
    if (this.#referenced.length > CHART_SECONDS) this.#referenced.shift();
    this.#set("events", this.#app.mqtt.connected ? "live (MQTT)" : "reconnecting…");
    this.#setState("events", this.#app.mqtt.connected);
    if (!this.#visible || document.hidden) return;
    this.#tick++;
    this.#set("messagesPerSecond", formatRate(this.#messages.at(-1) ?? 0));
    this.#set("referencedPerSecond", formatRate(this.#referenced.at(-1) ?? 0));
    this.#chart.draw();
    if (this.#info !== undefined) this.#set("latestMilestoneAge", this.#info.latestMilestoneTimestamp ? formatAge(this.#info.latestMilestoneTimestamp) : "none yet");
    void this.#pollMetrics();
    void this.#peers.poll();
    if (this.#tick % 2 === 0) void this.#pollTips();
    const infoEvery = this.#app.mqtt.connected ? INFO_FALLBACK_MS : 2000;
    if (Date.now() - this.#infoAt >= infoEvery) void this.#pollInfo();
  }

  async #refresh(): Promise<void> {
    await Promise.all([this.#pollInfo(), this.#pollTips(), this.#pollMetrics(), this.#peers.poll()]);
  }

  /** One request at a time: a caller arriving while one is out waits for that one. */
  #pollInfo(): Promise<void> {
    this.#infoAt = Date.now();
    this.#infoRequest ??= this.#app.client
      .getInfo()
      .then(
        (info) => this.#showInfo(info),
        () => {
          this.#set("health", "no answer");
          this.#setState("health", false);
        },
      )
      .finally(() => (this.#infoRequest = undefined));
    return this.#infoRequest;
  }

  #showInfo(info: ClientNodeInfo): void {
    this.#info = info;
    this.#app.setInfo(info);
    this.#set("health", info.isHealthy ? "healthy" : "unhealthy", info.isHealthy ? "a milestone less than 5 minutes old" : "no milestone in the last 5 minutes");
    this.#setState("health", info.isHealthy);
    const latest = info.latestMilestoneIndex ?? 0;
    const confirmed = info.confirmedMilestoneIndex ?? 0;
    const synced = info.isHealthy && latest === confirmed;
    this.#set("sync", synced ? "synced" : latest === confirmed ? "not synced (no recent milestone)" : `behind by ${latest - confirmed}`);
    this.#setState("sync", synced);
    this.#set("network", info.networkId);
    this.#set("version", `${info.name} ${info.version}`);
    this.#set("latestMilestoneIndex", groupDigits(latest));
    this.#set("confirmedMilestoneIndex", groupDigits(confirmed));
    this.#set("latestMilestoneAge", info.latestMilestoneTimestamp ? formatAge(info.latestMilestoneTimestamp) : "none yet", info.latestMilestoneTimestamp ? formatTime(info.latestMilestoneTimestamp) : undefined);
    if (this.#metrics !== "ok" && info.pruningIndex !== undefined) this.#set("pruningIndex", groupDigits(info.pruningIndex));
  }

  #onMilestone(payload: Uint8Array): void {
    let milestone: { index: number; timestamp: number };
    try {
      milestone = JSON.parse(new TextDecoder().decode(payload)) as { index: number; timestamp: number };
    } catch {
      return;
    }
    if (typeof milestone.index !== "number") return;
    this.#set("latestMilestoneIndex", groupDigits(milestone.index));
    // The same milestone again is the node's heartbeat: nothing new to list.
    if (this.#milestones[0]?.index === milestone.index) return;
    this.#addMilestone({ index: milestone.index, timestamp: milestone.timestamp, messageId: undefined });
    void this.#app.client.getMilestone(milestone.index).then(
      (m) => this.#addMilestone({ index: m.index, timestamp: m.timestamp, messageId: m.messageId }),
      () => undefined,
    );
    // Health, sync, pruning index and the node's rates change with a milestone: read them once now.
    void this.#pollInfo();
  }

  async #loadRecentMilestones(): Promise<void> {
    const latest = this.#info?.latestMilestoneIndex ?? 0;
    const pruned = this.#info?.pruningIndex ?? 0;
    const indexes: number[] = [];
    for (let i = latest; i > Math.max(0, pruned) && indexes.length < RECENT_MILESTONES; i--) indexes.push(i);
    const found = await Promise.all(indexes.map((i) => this.#app.client.getMilestone(i).catch(() => undefined)));
    for (const m of found) if (m !== undefined) this.#addMilestone({ index: m.index, timestamp: m.timestamp, messageId: m.messageId });
  }

  #addMilestone(row: MilestoneRow): void {
    const at = this.#milestones.findIndex((m) => m.index === row.index);
    if (at >= 0) this.#milestones[at] = { ...row, messageId: row.messageId ?? this.#milestones[at]!.messageId };
    else this.#milestones.push(row);
    this.#milestones.sort((a, b) => b.index - a.index);
    this.#milestones.length = Math.min(this.#milestones.length, RECENT_MILESTONES);
    replace(
      this.#milestoneList,
      this.#milestones.map((m) =>
        h(
          "li",
          { "data-index": String(m.index) },
          link(`milestone/${m.index}`, `#${m.index}`, "milestone"),
          " ",
          h("time", { datetime: new Date(m.timestamp * 1000).toISOString(), title: formatTime(m.timestamp) }, formatTime(m.timestamp).slice(11)),
          m.messageId === undefined ? null : h("div", { class: "sub" }, "message ", link(`message/${m.messageId}`, `${m.messageId.slice(0, 16)}…`)),
        ),
      ),
    );
  }

  async #pollTips(): Promise<void> {
    let tips: string[];
    try {
      tips = await this.#app.client.getTips();
    } catch {
      tips = [];
    }
    this.#set("tips", String(tips.length), "the tips the node would give a new message as parents");
    replace(
      this.#tipList,
      tips.map((id) => h("li", {}, link(`message/${id}`, id))),
    );
  }

  async #pollMetrics(): Promise<void> {
    if (this.#metrics === "off" || this.#metrics === "token") return;
    const { headers, sent } = this.#metricsToken.authorization();
    let response: Response;
    try {
      response = await fetch("/metrics", { headers, cache: "no-store" });
    } catch {
      this.#metrics = "failed";
      return;
    }
    if (response.status === 401) {
      await response.body?.cancel();
      this.#metricsToken.refused(sent);
      this.#metrics = "token";
      this.#metricsNote.textContent = sent ? "That token was refused: enter the metrics token again." : "This node's metrics need a token (--metrics-token-file): enter it to see PoW, logins, limits, the store and gossip's totals.";
      this.#metricsNote.hidden = false;
      return;
    }
    this.#metricsToken.answered(sent);
    if (response.status === 404) {
      await response.body?.cancel();
      this.#metrics = "off";
      this.#metricsNote.textContent = "This node serves no metrics (--no-metrics): PoW, logins, limits, the store size and gossip's totals are not shown.";
      this.#metricsNote.hidden = false;
      return;
    }
    if (!response.ok) {
      await response.body?.cancel();
      this.#metrics = "failed";
      return;
    }
    this.#metrics = "ok";
    this.#metricsNote.hidden = true;
    const samples = parseMetrics(await response.text());
    this.#showMetrics(samples);
    this.#peers.showMetrics(samples);
  }

  #showMetrics(samples: Sample[]): void {
    const value = (name: string, where: Record<string, string> = {}): number => total(samples, name, where) ?? 0;
    this.#set("powQueueDepth", String(value("chrysalis_pow_queue_depth")));
    this.#set("powQueueWaiting", String(value("chrysalis_pow_queue_waiting")));
    // The rate from the hash counter between two of our reads: the gauge counts since anyone's last scrape.
    const hashes = value("chrysalis_pow_hashes_total");
    const now = performance.now();
    if (this.#previousHashes !== undefined && now > this.#previousHashes.at) {
      this.#set("powHashRate", formatHashRate(Math.max(0, hashes - this.#previousHashes.hashes) / ((now - this.#previousHashes.at) / 1000)));
    }
    this.#previousHashes = { hashes, at: now };
    this.#set("loginsSucceeded", groupDigits(value("chrysalis_logins_total", { result: "success" })));
    this.#set("loginsFailed", groupDigits(value("chrysalis_logins_total", { result: "failure" })));
    const byClass = samples.filter((s) => s.name === "chrysalis_rate_limited_total" && s.value > 0).map((s) => `${s.labels.class}: ${s.value}`);
    this.#set("rateLimited", groupDigits(value("chrysalis_rate_limited_total")), byClass.length > 0 ? byClass.join(", ") : "none");
    const bytes = total(samples, "chrysalis_store_bytes");
    if (bytes !== undefined) this.#set("storeBytes", formatBytes(bytes), `${groupDigits(bytes)} bytes`);
    const pruning = Math.max(total(samples, "chrysalis_pruning_index") ?? 0, this.#info?.pruningIndex ?? 0);
    this.#set("pruningIndex", groupDigits(pruning), pruning === 0 ? "nothing pruned yet" : `milestones up to ${pruning} are pruned`);
  }
}
