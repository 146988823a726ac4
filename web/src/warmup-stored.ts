// Stored warm-up studies: the Warm-up view opened at ?view=warmup&study=ID shows a study
// the results store holds (GET /api/warmup/{id}, stored by `wasmgap warmup` or by the
// page's own run), and a finished study shows the link that opens it again.

import { failure } from "./api";
import type { WarmupReport } from "./warmup";
import { el } from "./dom";

/** A stored study (package internal/results's Study). */
export interface StoredStudy {
  id: number;
  created: string;
  source: string;
  wasmgap: string;
  report: WarmupReport;
}

/** studyURL is the Warm-up view's URL of stored study id. */
export function studyURL(id: number): string {
  return `${location.pathname}?${new URLSearchParams({ view: "warmup", study: String(id) })}`;
}

/** fetchStudy reads stored study id, or throws the API's error ("no stored warm-up study 7"). */
export async function fetchStudy(id: string, signal?: AbortSignal): Promise<StoredStudy> {
  const resp = await fetch(`/api/warmup/${encodeURIComponent(id)}`, { signal });
  if (!resp.ok) throw await failure(resp);
  return (await resp.json()) as StoredStudy;
}

/** showStudyLink puts the link of stored study id under the status line, and in the address bar. */
export function showStudyLink(status: HTMLElement, id: number): void {
  document.getElementById("warmup-link")?.remove();
  const p = el("p", "muted small");
  const a = el("a", undefined, `study ${id}`);
  a.id = "warmup-link";
  a.href = studyURL(id);
  p.append("Stored as ", a, ": this link opens it again.");
  p.id = "warmup-link-line";
  document.getElementById("warmup-link-line")?.remove();
  status.after(p);
  history.replaceState(null, "", studyURL(id));
}
