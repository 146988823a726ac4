// The page's helpers that make and find elements, shared by its modules.

export const SVG = "http://www.w3.org/2000/svg";

/** $ is the page's element of that id; a page without it is an error that names it. */
export const $ = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page lacks #${id}`);
  return e as T;
};

/** el is a new element of the tag, with its class and text when given. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** svg is a new SVG element of the tag, with its attributes, and its text when given. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** button is a new button of type "button" (it submits no form), with its id and text. */
export function button(id: string, text: string): HTMLButtonElement {
  const b = el("button", undefined, text);
  b.id = id;
  b.type = "button";
  return b;
}
