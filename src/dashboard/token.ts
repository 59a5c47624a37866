// A bearer token a route of the node asks for (the metrics token, the peers routes' admin token): a password field, and
// the token kept in this tab's sessionStorage, sent only in the Authorization header of that route, never in a URL.
import { h } from "./dom.js";

export class TokenPrompt {
  readonly form: HTMLFormElement;
  readonly forget: HTMLButtonElement;
  readonly #key: string;

  /** `changed` is called when a token is entered or forgotten: the caller asks the node again. */
  constructor(key: string, name: string, changed: () => void) {
    this.#key = key;
    const input = h("input", { type: "password", name: "token", autocomplete: "off", placeholder: name, "aria-label": name });
    this.form = h("form", { class: "token", hidden: "" }, input, h("button", { type: "submit" }, "Use"));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const token = input.value.trim();
      if (token === "") return;
      // For this tab only (sessionStorage), never in the URL: the page's history and the logs never see it.
      sessionStorage.setItem(this.#key, token);
      input.value = "";
      changed();
    });
    this.forget = h("button", { type: "button", class: "link-button", hidden: "" }, `forget the ${name}`);
    this.forget.addEventListener("click", () => {
      sessionStorage.removeItem(this.#key);
      this.forget.hidden = true;
      changed();
    });
  }

  /** The headers for one request, and whether they carry a token (to read its answer by). */
  authorization(): { headers: Record<string, string>; sent: boolean } {
    const token = sessionStorage.getItem(this.#key);
    return token === null ? { headers: {}, sent: false } : { headers: { authorization: `Bearer ${token}` }, sent: true };
  }

  /** The node refused the request (401, 403): a token sent with it is dropped, and the form shows. */
  refused(sent: boolean): void {
    if (sent) sessionStorage.removeItem(this.#key);
    this.form.hidden = false;
    this.forget.hidden = true;
  }

  /** The node answered: the form hides, and "forget" shows when a token went with the request. */
  answered(sent: boolean): void {
    this.form.hidden = true;
    this.forget.hidden = !sent;
  }
}
