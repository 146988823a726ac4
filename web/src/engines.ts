// The engines the page knows, in the order the table shows them, with their colours
// (the same in the table's headers, the chart and its legend), and the groups the engine
// checkboxes are shown in.

/** The groups of engines, in the order the form shows them. */
export const GROUPS = ["Go tiers", "WebAssembly engines", "Other languages"] as const;
export type Group = (typeof GROUPS)[number];

export interface EngineInfo {
  name: string;
  title: string;
  what: string;
  color: string;
  group: Group;
}

const KNOWN: EngineInfo[] = [
  { name: "native", title: "native", what: "Go, compiled ahead of time by the Go toolchain (server)", color: "#4c78a8", group: "Go tiers" },
  { name: "wazero-compiler", title: "wazero compiler", what: "kernels.wasm compiled to machine code by wazero (server)", color: "#f58518", group: "Go tiers" },
  { name: "wazero-interpreter", title: "wazero interpreter", what: "kernels.wasm interpreted by wazero (server)", color: "#e45756", group: "Go tiers" },
  { name: "yaegi", title: "yaegi", what: "the Go source interpreted by yaegi (server)", color: "#b279a2", group: "Go tiers" },
  { name: "browser-wasm", title: "browser wasm", what: "kernels.wasm compiled by this browser's engine, in a Web Worker", color: "#54a24b", group: "WebAssembly engines" },
  { name: "node-wasm", title: "Node wasm", what: "kernels.wasm compiled by Node's V8, run through node:wasi (server)", color: "#88d27a", group: "WebAssembly engines" },
  { name: "wasmtime", title: "wasmtime", what: "kernels.wasm compiled by wasmtime's Cranelift (server)", color: "#2f8f83", group: "WebAssembly engines" },
  { name: "c", title: "C", what: "the kernels in C, compiled by gcc -O2 (server)", color: "#1f3d7a", group: "Other languages" },
  { name: "c-wasm", title: "C → wasm", what: "the same C compiled to wasm32-wasi by clang -O2, run by wazero's compiler (server)", color: "#9ecae9", group: "Other languages" },
  { name: "java", title: "Java", what: "the kernels in Java on OpenJDK's HotSpot JIT (server)", color: "#d67195", group: "Other languages" },
  { name: "node-js", title: "Node JS", what: "the kernels in JavaScript on Node's V8 (server)", color: "#c9a400", group: "Other languages" },
  { name: "browser-js", title: "browser JS", what: "the kernels ported to TypeScript, run by this browser's JIT in a Web Worker", color: "#eeca3b", group: "Other languages" },
  { name: "php-jit", title: "PHP JIT", what: "the kernels in PHP 8 with opcache's tracing JIT (server)", color: "#8c6bb1", group: "Other languages" },
  { name: "php", title: "PHP", what: "the kernels in PHP 8, interpreted, no JIT (server)", color: "#6b5b95", group: "Other languages" },
];

const FALLBACK = ["#72b7b2", "#ff9da6", "#9d755d", "#bab0ac"];

/** info describes an engine, known or not (a server may offer engines the page does not know:
 * they are shown among the other languages). */
export function info(name: string): EngineInfo {
  const known = KNOWN.find((e) => e.name === name);
  if (known) return known;
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return { name, title: name, what: `${name} (server)`, color: FALLBACK[h % FALLBACK.length]!, group: "Other languages" };
}

/** order sorts engine names as the table shows them: the known ones first, in their order. */
export function order(names: string[]): string[] {
  const rank = (n: string): number => {
    const i = KNOWN.findIndex((e) => e.name === n);
    return i < 0 ? KNOWN.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** appendGrouped puts an engine's checkbox (chip) into its group's box in host, making the
 * box, with its title, on first use; boxes follow GROUPS' order whatever order chips come in. */
export function appendGrouped(host: HTMLElement, name: string, chip: HTMLElement): void {
  const group = info(name).group;
  let box = [...host.querySelectorAll<HTMLElement>(".engine-group")].find((b) => b.dataset.group === group);
  if (!box) {
    box = document.createElement("div");
    box.className = "engine-group";
    box.dataset.group = group;
    const title = document.createElement("span");
    title.className = "engine-group-title";
    title.textContent = group;
    const chips = document.createElement("div");
    chips.className = "engines";
    box.append(title, chips);
    const after = [...host.querySelectorAll<HTMLElement>(".engine-group")].find(
      (b) => GROUPS.indexOf(b.dataset.group as Group) > GROUPS.indexOf(group),
    );
    host.insertBefore(box, after ?? null);
  }
  box.querySelector(".engines")!.append(chip);
}
