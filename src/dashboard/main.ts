// The dashboard and explorer of a chrysalis node, served by the node at /dashboard/: the overview at #/ and one view
// per deep link; the search field opens the view of whatever id or index it is given. A client of the node like any
// other: REST through chrysalis-core/client, events through MQTT over WebSocket.
import { ClientError } from "../client/index.js";
import { createApp, type App } from "./app.js";
import { h, replace } from "./dom.js";
import { addressView, messageView, milestoneView, outputView, transactionView, type View } from "./explorer.js";
import { Overview } from "./overview.js";
import { classify } from "./search.js";

const HEX64 = /^[0-9a-f]{64}$/;

/** The view a hash route names, or undefined for the overview; a malformed id is an error text. */
function viewFor(app: App, route: string): View | string | undefined {
  const [kind, raw = ""] = route.replace(/^#?\/?/, "").split("/");
  const id = decodeURIComponent(raw).trim();
  switch (kind) {
    case "":
    case undefined:
      return undefined;
    case "message":
      return HEX64.test(id.toLowerCase()) ? messageView(app, id.toLowerCase()) : "a message id is 64 hex characters";
    case "transaction":
      return HEX64.test(id.toLowerCase()) ? transactionView(app, id.toLowerCase()) : "a transaction id is 64 hex characters";
    case "output":
      return /^[0-9a-f]{68}$/i.test(id) ? outputView(app, id.toLowerCase()) : "an output id is 68 hex characters";
    case "address":
      return id !== "" ? addressView(app, id.toLowerCase()) : "an address is Bech32 or 64 hex characters";
    case "milestone":
      return /^\d{1,10}$/.test(id) && Number(id) >= 1 ? milestoneView(app, Number(id)) : "a milestone index is a whole number from 1";
    default:
      return `no view named ${kind}`;
  }
}

/** Which view 64 hex characters name: a message, else the transaction of an included message, else an address. */
async function resolveHex64(app: App, id: string): Promise<string> {
  try {
    await app.client.getMessageMetadata(id);
    return `message/${id}`;
  } catch (error) {
    if (!(error instanceof ClientError) || error.status !== 404) throw error;
  }
  if ((await app.data(`/api/v1/transactions/${id}/included-message/metadata`)) !== undefined) return `transaction/${id}`;
  return `address/${id}`;
}

function start(): void {
  const status = h("span", { class: "status", "data-field": "mqtt" }, "connecting…");
  const app = createApp(({ connected }) => {
    status.textContent = connected ? "live" : "reconnecting…";
    status.classList.toggle("good", connected);
  });
  const input = h("input", {
    type: "search",
    name: "q",
    placeholder: "message, transaction, output, address or milestone",
    "aria-label": "search by message id, transaction id, output id, address or milestone index",
    autocomplete: "off",
    spellcheck: "false",
    enterkeyhint: "search",
  });
  const searchNote = h("p", { class: "search-note", role: "status", hidden: "" });
  const form = h("form", { role: "search" }, input);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    searchNote.hidden = true;
    const target = classify(input.value);
    if ("error" in target) {
      searchNote.textContent = target.error;
      searchNote.hidden = false;
      return;
    }
    if ("route" in target) {
      location.hash = `#/${target.route}`;
      return;
    }
    searchNote.textContent = "looking it up…";
    searchNote.hidden = false;
    resolveHex64(app, target.hex64).then(
      (route) => {
        searchNote.hidden = true;
        location.hash = `#/${route}`;
      },
      (error: unknown) => {
        searchNote.textContent = `the node did not answer: ${(error as Error).message}`;
      },
    );
  });
  const main = h("main", { id: "main" });
  document.body.append(
    h("header", {}, h("a", { href: "#/", class: "brand" }, "chrysalis"), h("nav", {}, h("a", { href: "#/" }, "Overview")), status, form),
    searchNote,
    main,
  );

  const overview = new Overview(app);
  let current: View | undefined;
  const route = (): void => {
    current?.dispose();
    current = undefined;
    const view = viewFor(app, location.hash);
    overview.show(view === undefined);
    document.body.dataset.route = location.hash.replace(/^#\/?/, "").split("/")[0] || "overview";
    if (view === undefined) {
      replace(main, overview.element);
      document.title = "chrysalis node";
      return;
    }
    if (typeof view === "string") {
      replace(main, h("p", { class: "card", "data-state": "error" }, view));
      return;
    }
    current = view;
    replace(main, view.element);
    document.title = `chrysalis: ${location.hash.slice(2)}`;
    window.scrollTo(0, 0);
  };
  addEventListener("hashchange", route);
  route();
  void overview.start();
}

start();
