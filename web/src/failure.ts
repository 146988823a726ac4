// A failed cell in one short line, the same words whatever tier failed and however its
// runtime put it: "timed out after 30 s", "stack overflow", "out of memory", "trapped",
// "wrong value". The whole text, a trace included, is in the details dialog.

const KINDS: [RegExp, string][] = [
  [/stack overflow|maximum call stack|too much recursion|call stack exhausted|goroutine stack exceeds/i, "stack overflow"],
  [/out of memory|cannot allocate|allocation failed|memory exhausted|OutOfMemory/i, "out of memory"],
  [/wrong result|wrong value|not the catalogue's|mismatch/i, "wrong value"],
  [/wasm error|trap|unreachable|RuntimeError|panic|crashed|signal/i, "trapped"],
  [/load failed/i, "failed to load"],
];

/** failureKind words a failure in one line, else gives its first line, cut to 80 characters. */
export function failureKind(failure: string): string {
  const t = /timed out after (\d+(?:\.\d+)?)\s*(ms|s|m)\b/.exec(failure);
  if (t) return `timed out after ${t[1]} ${t[2]}`;
  // A runtime that is missing says what to install: kept, in its own words.
  const missing = /not installed/.test(failure);
  if (!missing) for (const [re, kind] of KINDS) if (re.test(failure)) return kind;
  const line = (failure.trim().split("\n")[0] ?? "").replace(/^load failed: /, "");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
