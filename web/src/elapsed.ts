// A running cell's elapsed seconds: the table renders a span that names when the cell
// started, and one ticker rewrites every such span once a second, so that a slow cell shows
// it is still going (and for how long) between its progress events.
import { el } from "./dom";


/** elapsedText is how long since the cell started, in whole seconds ("12 s"). */
export function elapsedText(since: number, now = Date.now()): string {
  return `${Math.max(0, Math.floor((now - since) / 1000))} s`;
}

/** elapsedSpan renders the elapsed time of a cell started at since (ms since the epoch). */
export function elapsedSpan(since: number): HTMLSpanElement {
  const s = el("span", "muted elapsed");
  s.dataset.since = String(since);
  s.textContent = elapsedText(since);
  return s;
}

let ticking = false;

/** tickElapsed starts, once, the ticker that keeps every elapsed span current. */
export function tickElapsed(): void {
  if (ticking) return;
  ticking = true;
  window.setInterval(() => {
    const now = Date.now();
    for (const s of document.querySelectorAll<HTMLElement>(".elapsed[data-since]")) {
      s.textContent = elapsedText(Number(s.dataset.since), now);
    }
  }, 1000);
}
