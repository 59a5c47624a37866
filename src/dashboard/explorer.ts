// The explorer's views, one per deep link: #/message/<id>, #/transaction/<id>, #/output/<id>, #/address/<bech32|hex>,
// #/milestone/<index>. Each reads the node's REST API (chrysalis-core/client where it has the call) and keeps itself
// current from the MQTT topic of its object where there is one; `dispose` ends those subscriptions.
import { fromHex } from "../bytes/hex.js";
import { ClientError, type ClientMessageMetadata, type ClientOutput } from "../client/index.js";
import { bech32Address } from "../crypto/address.js";
import { outputId, transactionId } from "../model/ids.js";
import { messageFromJson, type MessageJson, type OutputJson, type PayloadJson, type UnlockBlockJson, type UtxoInputJson } from "../model/json.js";
import type { App } from "./app.js";
import { fields, h, link, replace } from "./dom.js";
import { formatAge, formatTime, groupDigits, printable } from "./format.js";

export interface View {
  readonly element: HTMLElement;
  dispose(): void;
}

const OUTPUT_DETAILS = 25;
const INCLUSION_STATES: Record<string, string> = { noTransaction: "no transaction", included: "included", conflicting: "conflicting" };
// Hornet's conflict reasons (NODE-API.md).
const CONFLICTS: Record<number, string> = {
  1: "input already spent",
  2: "input spent by a milestone it references",
  3: "input not found",
  4: "inputs and outputs do not balance",
  5: "invalid signature",
  6: "invalid dust allowance",
  255: "semantic validation failed",
};

function hex(text: string, className = "hex"): HTMLElement {
  return h("code", { class: className }, text);
}

/** Hex with its text beside it when the bytes are printable UTF-8. */
function bytesField(label: string, value: string): [string, HTMLElement[]][] {
  const text = printable(value);
  const rows: [string, HTMLElement[]][] = [[`${label} (hex)`, [value === "" ? h("span", { class: "muted" }, "empty") : hex(value)]]];
  if (text !== undefined) rows.push([`${label} (text)`, [h("span", { class: "text", "data-field": `${label.toLowerCase()}-text` }, text)]]);
  return rows;
}

function json(value: unknown): HTMLElement {
  return h("details", { class: "json" }, h("summary", {}, "JSON"), h("pre", {}, JSON.stringify(value, null, 2)));
}

function section(title: string, ...children: (Node | null | undefined)[]): HTMLElement {
  return h("article", { class: "card wide" }, h("h2", {}, title), ...children);
}

function amount(value: number): HTMLElement {
  return h("span", { class: "amount", "data-amount": String(value), title: `${value} base units (i)` }, `${groupDigits(value)} i`);
}

class Base implements View {
  readonly element: HTMLElement = h("section", { class: "grid view" });
  readonly #unsubscribe: (() => void)[] = [];
  #disposed = false;
  readonly app: App;

  constructor(app: App) {
    this.app = app;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  listen(topic: string, on: (payload: Uint8Array) => void): void {
    if (!this.#disposed) this.#unsubscribe.push(this.app.mqtt.subscribe(topic, on));
  }

  dispose(): void {
    this.#disposed = true;
    for (const u of this.#unsubscribe.splice(0)) u();
  }

  address(ed25519Hex: string): HTMLElement[] {
    const hrp = this.app.hrp;
    const bech32 = hrp === undefined ? undefined : bech32Address(hrp, fromHex(ed25519Hex, "address", 32));
    return [link(`address/${bech32 ?? ed25519Hex}`, bech32 ?? ed25519Hex), ...(bech32 === undefined ? [] : [h("div", { class: "sub" }, "Ed25519 ", hex(ed25519Hex))])];
  }

  output(output: OutputJson): [string, (Node | string)[]][] {
    return [
      ["Type", [output.type === 0 ? "SigLockedSingleOutput (0)" : "SigLockedDustAllowanceOutput (1)"]],
      ["Address", this.address(output.address.address)],
      ["Amount", [amount(output.amount)]],
    ];
  }

  /** A message's fields, its payload and its metadata (kept current by messages/{id}/metadata). */
  message(id: string, message: MessageJson, metadata: ClientMessageMetadata | undefined, children: string[]): void {
    const meta = h("div", { "data-part": "metadata" });
    const showMetadata = (m: ClientMessageMetadata): void => {
      replace(
        meta,
        fields([
          ["Solid", m.isSolid ? "yes" : "no"],
          ["Referenced by milestone", m.referencedByMilestoneIndex === undefined ? "not yet" : link(`milestone/${m.referencedByMilestoneIndex}`, String(m.referencedByMilestoneIndex), "milestone")],
          ["Milestone index", m.milestoneIndex === undefined ? undefined : link(`milestone/${m.milestoneIndex}`, String(m.milestoneIndex), "milestone")],
          ["Ledger inclusion state", m.ledgerInclusionState === undefined ? undefined : h("span", { "data-field": "ledgerInclusionState" }, INCLUSION_STATES[m.ledgerInclusionState] ?? m.ledgerInclusionState)],
          ["Conflict reason", m.conflictReason === undefined || m.conflictReason === 0 ? undefined : `${CONFLICTS[m.conflictReason] ?? "unknown"} (${m.conflictReason})`],
          ["Should promote", m.shouldPromote === undefined ? undefined : m.shouldPromote ? "yes" : "no"],
          ["Should reattach", m.shouldReattach === undefined ? undefined : m.shouldReattach ? "yes" : "no"],
        ]),
        json(m),
      );
    };
    if (metadata !== undefined) showMetadata(metadata);
    this.listen(`messages/${id}/metadata`, (payload) => showMetadata(JSON.parse(new TextDecoder().decode(payload)) as ClientMessageMetadata));
    const payload = message.payload as PayloadJson | null;
    this.element.append(
      section(
        "Message",
        fields([
          ["Message ID", hex(id, "hex id-main")],
          ["Network ID", message.networkId],
          ["Parents", h("ul", { class: "list", "data-list": "parents" }, ...message.parentMessageIds.map((p) => h("li", {}, link(`message/${p}`, p))))],
          ["Nonce", message.nonce],
          ["Payload", payload === null ? "none" : payloadName(payload.type)],
          ["Children", children.length === 0 ? h("span", { class: "muted" }, "none yet") : h("ul", { class: "list", "data-list": "children" }, ...children.map((c) => h("li", {}, link(`message/${c}`, c))))],
        ]),
        json(message),
      ),
      section("Metadata", meta),
    );
    if (payload !== null) this.payload(message, payload);
  }

  payload(message: MessageJson, payload: PayloadJson): void {
    if (payload.type === 2) {
      this.element.append(section("Indexation payload", fields([...bytesField("Index", payload.index), ...bytesField("Data", payload.data)])));
      return;
    }
    if (payload.type === 1) {
      this.element.append(
        section(
          "Milestone payload",
          fields([
            ["Index", link(`milestone/${payload.index}`, String(payload.index), "milestone")],
            ["Timestamp", `${formatTime(Number(payload.timestamp))} (${formatAge(Number(payload.timestamp))})`],
            ["Inclusion Merkle proof", hex(payload.inclusionMerkleProof)],
            ["Next PoW score", payload.nextPoWScore === undefined || payload.nextPoWScore === 0 ? undefined : `${payload.nextPoWScore} from milestone ${payload.nextPoWScoreMilestoneIndex}`],
            ["Public keys", h("ul", { class: "list" }, ...payload.publicKeys.map((k) => h("li", {}, hex(k))))],
            ["Signatures", h("ul", { class: "list" }, ...payload.signatures.map((s) => h("li", {}, hex(s))))],
            ["Receipt", payload.receipt === null || payload.receipt === undefined ? "none" : "yes (see JSON)"],
          ]),
        ),
      );
      return;
    }
    if (payload.type === 0) {
      const model = messageFromJson(message);
      const txId = model.payload?.type === 0 ? transactionId(model.payload) : undefined;
      const essence = payload.essence;
      const inputs = essence.inputs as UtxoInputJson[];
      const outputs = essence.outputs as OutputJson[];
      const inner = essence.payload as PayloadJson | null | undefined;
      this.element.append(
        section(
          "Transaction payload",
          fields([
            ["Transaction ID", txId === undefined ? undefined : link(`transaction/${txId}`, txId)],
            [
              "Inputs",
              h("ol", { class: "list", start: "0", "data-list": "inputs" }, ...inputs.map((input) => h("li", {}, link(`output/${outputId(input.transactionId, input.transactionOutputIndex)}`, `${input.transactionId}:${input.transactionOutputIndex}`)))),
            ],
            [
              "Outputs",
              h(
                "ol",
                { class: "list", start: "0", "data-list": "outputs" },
                ...outputs.map((output, index) =>
                  h(
                    "li",
                    {},
                    txId === undefined ? null : link(`output/${outputId(txId, index)}`, `output ${index}`, "output"),
                    " ",
                    amount(output.amount),
                    h("div", { class: "sub" }, "to ", ...this.address(output.address.address)),
                  ),
                ),
              ),
            ],
            [
              "Unlock blocks",
              h("ol", { class: "list", start: "0" }, ...(payload.unlockBlocks as UnlockBlockJson[]).map((block) => h("li", {}, ...unlockBlock(block)))),
            ],
          ]),
        ),
      );
      if (inner !== null && inner !== undefined && inner.type === 2) {
        this.element.append(section("Indexation in the essence", fields([...bytesField("Index", inner.index), ...bytesField("Data", inner.data)])));
      }
      return;
    }
    // Receipts and treasury transactions travel inside milestones; shown as they are, should one come alone.
    this.element.append(section(payloadName((payload as { type: number }).type), json(payload)));
  }
}

function unlockBlock(block: UnlockBlockJson): (Node | string)[] {
  if (block.type === 0) return ["signature by ", hex(block.signature.publicKey), h("div", { class: "sub" }, hex(block.signature.signature))];
  return [`same as unlock block ${block.reference}`];
}

function payloadName(type: number): string {
  return type === 0 ? "transaction" : type === 1 ? "milestone" : type === 2 ? "indexation" : type === 4 ? "receipt" : type === 5 ? "treasury transaction" : `type ${type}`;
}

function notFound(view: Base, what: string): void {
  replace(view.element, section("Not found", h("p", { "data-state": "not-found" }, `${what} is not known to this node (it may not exist, or may have been pruned).`)));
}

/** Runs `load`; a 404 shows "not found", another failure its message. */
async function guarded(view: Base, what: string, load: () => Promise<void>): Promise<void> {
  try {
    await view.app.ready;
    await load();
  } catch (error) {
    if (view.disposed) return;
    if (error instanceof ClientError && error.status === 404) notFound(view, what);
    else replace(view.element, section("Could not load", h("p", { "data-state": "error" }, `${what}: ${(error as Error).message}`)));
  }
}

function loading(view: Base): void {
  replace(view.element, h("p", { class: "muted", "data-state": "loading" }, "Loading…"));
}

function done(view: Base): void {
  view.element.querySelector("[data-state=loading]")?.remove();
  view.element.dataset.ready = "true";
}

export function messageView(app: App, id: string): View {
  const view = new Base(app);
  loading(view);
  void guarded(view, `Message ${id}`, async () => {
    const [message, metadata, children] = await Promise.all([app.client.getMessageJson(id), app.client.getMessageMetadata(id), app.client.getMessageChildren(id)]);
    if (view.disposed) return;
    view.message(id, message, metadata, children);
    done(view);
  });
  return view;
}

export function transactionView(app: App, txId: string): View {
  const view = new Base(app);
  loading(view);
  void guarded(view, `Transaction ${txId}`, async () => {
    // The client reads the including message; its id and metadata come from the route beside it.
    const [message, metadata] = await Promise.all([app.client.getTransactionIncludedMessage(txId), app.data<ClientMessageMetadata>(`/api/v1/transactions/${txId}/included-message/metadata`)]);
    if (metadata === undefined) throw new ClientError(404, "404", "not found");
    const children = await app.client.getMessageChildren(metadata.messageId);
    if (view.disposed) return;
    view.element.append(section("Transaction", fields([["Transaction ID", hex(txId, "hex id-main")], ["Included in message", link(`message/${metadata.messageId}`, metadata.messageId)]])));
    view.message(metadata.messageId, message, metadata, children);
    done(view);
  });
  return view;
}

export function outputView(app: App, id: string): View {
  const view = new Base(app);
  loading(view);
  const body = h("div");
  const show = (output: ClientOutput): void => {
    replace(
      body,
      fields([
        ["Output ID", hex(id, "hex id-main")],
        ["Transaction", link(`transaction/${output.transactionId}`, output.transactionId)],
        ["Output index", String(output.outputIndex)],
        ["Message", link(`message/${output.messageId}`, output.messageId)],
        ...view.output(output.output),
        ["Spent", h("span", { "data-field": "spent" }, output.isSpent ? "yes" : "no")],
        ["Spent at milestone", output.milestoneIndexSpent === undefined ? undefined : link(`milestone/${output.milestoneIndexSpent}`, String(output.milestoneIndexSpent), "milestone")],
        ["Spent by transaction", output.transactionIdSpent === undefined ? undefined : link(`transaction/${output.transactionIdSpent}`, output.transactionIdSpent)],
        ["Ledger index", String(output.ledgerIndex)],
      ]),
      json(output),
    );
  };
  void guarded(view, `Output ${id}`, async () => {
    const output = await app.client.getOutput(id);
    if (view.disposed) return;
    view.element.append(section("Output", body));
    show(output);
    done(view);
    // A spend booked by a milestone is published here: read the whole answer again (the event leaves out the …Spent fields).
    view.listen(`outputs/${id}`, () => void app.client.getOutput(id).then((o) => view.disposed || show(o), () => undefined));
  });
  return view;
}

export function addressView(app: App, address: string): View {
  const view = new Base(app);
  loading(view);
  const summary = h("div");
  const list = h("ol", { class: "list", "data-list": "address-outputs" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const load = async (): Promise<void> => {
    const [balance, outputs] = await Promise.all([app.client.getAddress(address), app.client.getAddressOutputs(address)]);
    const details = await Promise.all(outputs.outputIds.slice(0, OUTPUT_DETAILS).map((o) => app.client.getOutput(o).catch(() => undefined)));
    if (view.disposed) return;
    const hrp = app.hrp;
    const bech32 = hrp === undefined ? undefined : bech32Address(hrp, fromHex(balance.address, "address", 32));
    replace(
      summary,
      fields([
        ["Address", bech32 === undefined ? hex(balance.address, "hex id-main") : hex(bech32, "hex id-main")],
        ["Ed25519", hex(balance.address)],
        ["Balance", h("span", { class: "amount big", "data-field": "balance", "data-amount": String(balance.balance), title: `${balance.balance} base units (i)` }, `${groupDigits(balance.balance)} i`)],
        ["Dust allowed", balance.dustAllowed ? "yes" : "no"],
        ["Ledger index", String(balance.ledgerIndex)],
        ["Unspent outputs", `${outputs.count}${outputs.count >= outputs.maxResults ? ` (the first ${outputs.maxResults})` : ""}`],
      ]),
    );
    replace(
      list,
      outputs.outputIds.map((o, i) => {
        const d = details[i];
        return h("li", {}, link(`output/${o}`, o), d === undefined ? null : h("div", { class: "sub" }, amount(d.output.amount), d.isSpent ? " spent" : ""));
      }),
    );
  };
  void guarded(view, `Address ${address}`, async () => {
    await load();
    if (view.disposed) return;
    view.element.append(section("Address", summary), section("Outputs", list));
    done(view);
    // Outputs booked or spent by a milestone arrive here; a burst of them is read once.
    const topic = /^[0-9a-f]{64}$/.test(address) ? `addresses/ed25519/${address}/outputs` : `addresses/${address}/outputs`;
    view.listen(topic, () => {
      clearTimeout(timer);
      timer = setTimeout(() => void load().catch(() => undefined), 1000);
    });
  });
  const dispose = view.dispose.bind(view);
  view.dispose = () => {
    clearTimeout(timer);
    dispose();
  };
  return view;
}

export function milestoneView(app: App, index: number): View {
  const view = new Base(app);
  loading(view);
  void guarded(view, `Milestone ${index}`, async () => {
    const [milestone, changes] = await Promise.all([app.client.getMilestone(index), app.client.getMilestoneUtxoChanges(index).catch(() => undefined)]);
    if (view.disposed) return;
    const outputs = (ids: string[], name: string): HTMLElement =>
      ids.length === 0 ? h("span", { class: "muted" }, "none") : h("ul", { class: "list", "data-list": name }, ...ids.map((o) => h("li", {}, link(`output/${o}`, o))));
    view.element.append(
      section(
        "Milestone",
        fields([
          ["Index", h("span", { class: "big", "data-field": "index" }, String(milestone.index))],
          ["Timestamp", h("time", { datetime: new Date(milestone.timestamp * 1000).toISOString(), "data-field": "timestamp" }, `${formatTime(milestone.timestamp)} (${formatAge(milestone.timestamp)})`)],
          ["Message ID", link(`message/${milestone.messageId}`, milestone.messageId)],
          ["Created outputs", changes === undefined ? undefined : outputs(changes.createdOutputs, "created")],
          ["Consumed outputs", changes === undefined ? undefined : outputs(changes.consumedOutputs, "consumed")],
        ]),
        h("p", { class: "pager" }, index > 1 ? link(`milestone/${index - 1}`, `← ${index - 1}`, "milestone") : null, " ", link(`milestone/${index + 1}`, `${index + 1} →`, "milestone")),
        json(milestone),
      ),
    );
    done(view);
  });
  return view;
}
