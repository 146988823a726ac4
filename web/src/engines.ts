// The engines the page knows, in the order the table shows them, with their colours
// (the same in the table's headers, the chart and its legend).

export interface EngineInfo {
  name: string;
  title: string;
  what: string;
  color: string;
}

const KNOWN: EngineInfo[] = [
  { name: "native", title: "native", what: "Go, compiled ahead of time by the Go toolchain (server)", color: "#4c78a8" },
  { name: "wazero-compiler", title: "wazero compiler", what: "kernels.wasm compiled to machine code by wazero (server)", color: "#f58518" },
  { name: "wazero-interpreter", title: "wazero interpreter", what: "kernels.wasm interpreted by wazero (server)", color: "#e45756" },
  { name: "yaegi", title: "yaegi", what: "the Go source interpreted by yaegi (server)", color: "#b279a2" },
  { name: "browser-wasm", title: "browser wasm", what: "kernels.wasm compiled by this browser's engine, in a Web Worker", color: "#54a24b" },
  { name: "browser-js", title: "browser JS", what: "the kernels ported to TypeScript, run by this browser's JIT in a Web Worker", color: "#eeca3b" },
];

const FALLBACK = ["#72b7b2", "#ff9da6", "#9d755d", "#bab0ac"];

/** info describes an engine, known or not (a server may offer engines the page does not know). */
export function info(name: string): EngineInfo {
  const known = KNOWN.find((e) => e.name === name);
  if (known) return known;
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return { name, title: name, what: `${name} (server)`, color: FALLBACK[h % FALLBACK.length]! };
}

/** order sorts engine names as the table shows them: the known ones first, in their order. */
export function order(names: string[]): string[] {
  const rank = (n: string): number => {
    const i = KNOWN.findIndex((e) => e.name === n);
    return i < 0 ? KNOWN.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
