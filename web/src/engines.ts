// The engines the page knows, as the server describes them (GET /api/kernels' engine_info:
// package engine's registry, where each engine's title, group, rank, colour and install hint
// are registered with it): the order the table shows them in, their colours (the same in the
// table's headers, the chart and its legend) and the groups the engine checkboxes are shown
// in. The page keeps no table of its own: setEngines fills it once the catalogue arrives.
import { el } from "./dom";


/** What the server says about an engine (package engine's Info). */
export interface EngineInfo {
  name: string;
  title: string;
  what?: string;
  group: string;
  rank: number;
  /** "server" or "page". */
  place: string;
  color?: string;
  /** How to install the runtime the engine needs ("apt-get install lua5.4"). */
  install?: string;
  version?: string;
  /** The engines of one runtime, one "interpreter" and one "jit" tier, are a JIT on / off pair. */
  runtime?: string;
  tier?: string;
  /** The engine calls kernels.wasm's exports from a host: it runs the host-call kernel. */
  kernels_wasm?: boolean;
}

/** An engine as the page shows it: with a colour and a sentence always. */
export interface Engine extends EngineInfo {
  color: string;
  what: string;
}

/** The group of engines the server does not describe. */
const OTHER = "Other languages";

const FALLBACK = ["#72b7b2", "#ff9da6", "#9d755d", "#bab0ac"];

let known: EngineInfo[] = [];

/** setEngines makes infos the engines the page knows (the catalogue's engine_info). */
export function setEngines(infos: EngineInfo[] | undefined): void {
  known = [...(infos ?? [])].sort((a, b) => a.rank - b.rank);
}

/** engines returns every engine the page knows, in rank order. */
export function engines(): readonly EngineInfo[] {
  return known;
}

function colorOf(name: string): string {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return FALLBACK[h % FALLBACK.length]!;
}

/** info describes an engine, known or not (a server may offer engines it does not describe:
 * they are shown among the other languages). */
export function info(name: string): Engine {
  const k = known.find((e) => e.name === name);
  if (k) {
    const where = k.place === "page" ? "" : " (server)";
    return { ...k, color: readable(k.color || colorOf(name)), what: `${k.what ?? k.title}${where}` };
  }
  return { name, title: name, what: `${name} (server)`, color: readable(colorOf(name)), group: OTHER, rank: Number.MAX_SAFE_INTEGER, place: "server" };
}

/** The contrast a colour keeps against the cards' background (WCAG's for graphics). */
const MIN_CONTRAST = 3;

function rgbOf(hex: string): [number, number, number] | undefined {
  const m = /^#([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return undefined;
  const n = parseInt(m[1]!, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function luminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number): number => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** contrast is the WCAG contrast ratio of two colours' luminances. */
export function contrast(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/** readable moves a colour towards white (on a dark card) or black (on a light one) until
 * it has MIN_CONTRAST against the card: the navy of C and Lua stays visible in the dark theme. */
export function readable(color: string): string {
  const rgb = rgbOf(color);
  const card = typeof document === "undefined" ? undefined : rgbOf(getComputedStyle(document.documentElement).getPropertyValue("--card"));
  if (!rgb || !card) return color;
  const bg = luminance(card);
  const toward = bg < 0.5 ? 255 : 0;
  let c = rgb;
  for (let i = 0; i < 20 && contrast(luminance(c), bg) < MIN_CONTRAST; i++) {
    c = c.map((v) => Math.round(v + (toward - v) * 0.15)) as [number, number, number];
  }
  return `#${c.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}

/** runs reports whether an engine runs a kernel: every engine the articles' kernels, and
 * only the engines of kernels.wasm the one that times a call into it (host_call). */
export function runs(kernel: { host_call?: boolean }, engine: string): boolean {
  return !kernel.host_call || info(engine).kernels_wasm === true;
}

/** groups lists the groups in the order the form shows them: by their first engine's rank. */
export function groups(): string[] {
  const out: string[] = [];
  for (const e of known) if (!out.includes(e.group)) out.push(e.group);
  if (!out.includes(OTHER)) out.push(OTHER);
  return out;
}

/** order sorts engine names as the table shows them: by rank, the unknown ones last. */
export function order(names: string[]): string[] {
  return [...names].sort((a, b) => info(a).rank - info(b).rank || a.localeCompare(b));
}

/** appendGrouped puts an engine's checkbox (chip) into its group's box in host, making the
 * box, with its title, on first use; boxes follow groups()' order whatever order chips come in. */
export function appendGrouped(host: HTMLElement, name: string, chip: HTMLElement): void {
  const group = info(name).group;
  const all = groups();
  let box = [...host.querySelectorAll<HTMLElement>(".engine-group")].find((b) => b.dataset.group === group);
  if (!box) {
    box = el("div", "engine-group");
    box.dataset.group = group;
    const title = el("span", "engine-group-title", group);
    const chips = el("div", "engines");
    box.append(title, chips);
    const after = [...host.querySelectorAll<HTMLElement>(".engine-group")].find(
      (b) => all.indexOf(b.dataset.group ?? OTHER) > all.indexOf(group),
    );
    host.insertBefore(box, after ?? null);
  }
  box.querySelector(".engines")!.append(chip);
}
