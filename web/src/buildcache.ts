// The server's background warm-up of its build cache for "Your kernel" (GET /api/kernels'
// custom_warming): one short line beside Run while it goes on, gone once it has ended.

import { fetchCatalogue } from "./api";
import type { Catalogue } from "./types";

/** How often the line asks whether the warm-up has ended, and at most how many times. */
const POLL_MS = 5000;
const MAX_POLLS = 120;

/** Shows the line in el while cat (and the catalogue asked again) says the warm-up goes on. */
export function mountBuildCacheNote(el: HTMLElement, cat: Catalogue): void {
  const show = (on: boolean): void => {
    el.hidden = !on;
    el.textContent = on ? "The server is preparing “Your kernel” builds in the background, paused while a run is measured." : "";
  };
  show(!!cat.custom_warming);
  if (!cat.custom_warming) return;
  let polls = 0;
  const poll = async (): Promise<void> => {
    polls++;
    try {
      const now = await fetchCatalogue();
      show(!!now.custom_warming);
      if (!now.custom_warming) return;
    } catch {
      // The next poll asks again; the line stays as it was.
    }
    if (polls < MAX_POLLS) window.setTimeout(poll, POLL_MS);
    else show(false);
  };
  window.setTimeout(poll, POLL_MS);
}
