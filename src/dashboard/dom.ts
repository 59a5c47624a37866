// A few DOM helpers for the dashboard: elements are built with textContent only (never innerHTML), so a hostile
// indexation payload or id is shown as text and cannot become markup or script.

type Child = Node | string | number | null | undefined | false;

/** An element with attributes (no inline style: the page's policy refuses it) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | undefined> = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  append(element, children);
  return element;
}

export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: (Child | Child[])[]): void {
  while (parent.firstChild !== null) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** A link inside the page (a hash route). */
export function link(route: string, text: string, className = "id"): HTMLAnchorElement {
  return h("a", { href: `#/${route}`, class: className }, text);
}

/** The value element of a labelled figure, with a stable data-metric name (tests and users can find it). */
export function figure(name: string, label: string): { element: HTMLElement; value: HTMLElement } {
  const value = h("span", { class: "value", "data-metric": name }, "–");
  return { element: h("div", { class: "figure" }, h("span", { class: "label" }, label), value), value };
}

/** A definition list from label → value pairs; undefined values are left out. */
export function fields(rows: [string, Child | Child[]][]): HTMLDListElement {
  const list = h("dl", { class: "fields" });
  for (const [label, value] of rows) {
    if (value === undefined) continue;
    list.append(h("dt", {}, label), h("dd", {}, ...(Array.isArray(value) ? value : [value])));
  }
  return list;
}
