/**
 * The report's step-through (`#states`): a list of the steps, then one section per step (`#state-N`) with the
 * workspace after it (every file's path, size and SHA-256; what the step added, changed or removed, with the text of
 * small text files it wrote) and the memory store after it, from the record or from a replay of the capsule handed
 * in (`_replayed-states.ts`), or why that state cannot be reconstructed. Previous and
 * next links join the sections, so the page steps through a run without JavaScript; the page's script adds the
 * arrow keys. Anchors are numbers only; every path, key, value and reason from the capsule goes through `esc`.
 * Internal to `src/report/`.
 * @module
 */
import { bytesText, clip, isText, textOf } from "./_json.ts";
import { HTML_LIMITS, esc, row } from "./_html.ts";
import type { RunView } from "./model.ts";
import type { MemoryState, StepState, WorkspaceState } from "./step-states.ts";

/** Bounds of the step-through. */
export const STATE_LIMITS = {
  /** Bytes of a written text file whose content is shown. */
  fileBytes: 16 * 1024,
  /** Characters of file content shown on the whole page. */
  pageContentChars: 1024 * 1024,
  /** Characters of one memory value shown. */
  valueChars: 4_000,
} as const;

/** The stylesheet of the step-through (appended to the report's). */
export const STATES_CSS = `
ol.state-list { columns: 3 220px; padding-left: 24px; } ol.state-list .unknown { color: var(--warn); }
section.state { border: 1px solid var(--line); border-radius: 8px; margin: 10px 0; padding: 4px 14px 10px; }
section.state:target { outline: 2px solid var(--accent); }
nav.state-nav { display: flex; gap: 16px; font-size: 12.5px; } p.cannot { color: var(--warn); font-weight: 600; }
table.files td:nth-child(2) { width: 90px; } table.files td:nth-child(3) { width: 140px; } table.memory td:nth-child(1) { width: 30%; }
`;

/** The script of the step-through: ← and → (or k and j) move between the states when one is shown. */
export const STATES_JS = `
(function () {
  "use strict";
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) return;
    var m = /^#state-(\\d+)$/.exec(location.hash);
    if (!m) return;
    var step = ev.key === "ArrowRight" || ev.key === "j" ? 1 : ev.key === "ArrowLeft" || ev.key === "k" ? -1 : 0;
    var next = step === 0 ? null : document.getElementById("state-" + (Number(m[1]) + step));
    if (next) { location.hash = "#" + next.id; ev.preventDefault(); }
  });
})();
`;

/**
 * The anchor of the state after a step.
 * @param position the step's 0-based position
 * @returns `state-<position + 1>`
 * @example stateAnchor(0) // "state-1"
 */
export function stateAnchor(position: number): string {
  return `state-${position + 1}`;
}

type Budget = { chars: number };

function basisNote(s: { basis: string; checked: boolean }): string {
  const from = s.basis === "before" ? "the workspace the run started from (it matches the recorded digest): no step before this one changed it"
    : s.basis === "after" ? "the workspace the run ended with (it matches the recorded digest): no later step changed it"
      : s.basis === "replay" ? "as replaying the capsule left it after this step (the replay reproduced every event and the run hash)"
        : "the recorded writes and removals applied step by step";
  const checked = s.basis !== "tape" ? "" : s.checked ? "; checked: the last state gives the recorded final digest" : "; not checked against the final digest: a later step's changes are not recorded";
  return `<p class="note">${esc(from + checked)}</p>`;
}

function fileContent(path: string, bytes: Uint8Array, budget: Budget): string {
  if (bytes.length > STATE_LIMITS.fileBytes || !isText(bytes)) return "";
  const c = clip(textOf(bytes), Math.max(0, budget.chars));
  budget.chars -= c.text.length;
  if (c.text.length === 0 && bytes.length > 0) return `<p class="note">${esc(path)}: not shown (the page's limit on file text is reached)</p>`;
  return `<h5><code>${esc(path)}</code></h5><pre class="value small">${esc(c.text)}</pre>${c.omitted === 0 ? "" : `<p class="note">… ${c.omitted} more characters</p>`}`;
}

function workspaceHtml(w: WorkspaceState, budget: Budget, sha: (b: Uint8Array) => string): string {
  if (!w.known) return `<h4>Workspace</h4><p class="cannot">Cannot reconstruct the workspace after this step: ${esc(w.reason)}</p>`;
  const c = w.changes;
  const status = new Map<string, string>();
  for (const p of c?.added ?? []) status.set(p, "added");
  for (const p of c?.changed ?? []) status.set(p, "changed");
  const changes = c === null ? `<p class="note">What this step changed is not shown: the state before it is not known.</p>`
    : c.added.length + c.changed.length + c.removed.length === 0 ? `<p class="note">No change.</p>`
      : `<ul class="changes">${[...c.added.map((p) => `<li class="ok">added <code>${esc(p)}</code></li>`), ...c.changed.map((p) => `<li>changed <code>${esc(p)}</code></li>`), ...c.removed.map((p) => `<li class="bad">removed <code>${esc(p)}</code></li>`)].join("")}</ul>`;
  const paths = [...w.files.keys(), ...w.links.keys()].sort();
  const rows = paths.slice(0, HTML_LIMITS.workspacePaths).map((p) => {
    const f = w.files.get(p);
    const cls = status.get(p);
    return f === undefined ? row([`<code>${esc(p)}</code>`, "link", `→ <code>${esc(w.links.get(p)!)}</code>`], cls)
      : row([`<code>${esc(p)}</code>`, esc(bytesText(f.length)), `<code title="${esc(sha(f))}">${esc(sha(f).slice(0, 16))}…</code>`], cls);
  });
  const more = paths.length > HTML_LIMITS.workspacePaths ? `<p class="note">… ${paths.length - HTML_LIMITS.workspacePaths} more paths are not listed</p>` : "";
  const written = [...status.keys()].filter((p) => w.files.has(p)).map((p) => fileContent(p, w.files.get(p)!, budget)).join("");
  return `<h4>Workspace</h4>${basisNote(w)}<p class="note">digest <code>${esc(w.digest)}</code></p>${changes}` +
    (paths.length === 0 ? `<p class="note">The workspace is empty.</p>` : `<table class="files"><tr><th>path</th><th>size</th><th>sha256</th></tr>${rows.join("")}</table>${more}`) + written;
}

function memoryHtml(m: MemoryState): string {
  if (!m.known) return `<h4>Memory</h4><p class="cannot">Cannot reconstruct the memory after this step: ${esc(m.reason)}</p>`;
  const changed = new Set(m.changed ?? []);
  const from = m.basis === "replay" ? "as replaying the capsule left it after this step (the replay reproduced every event and the run hash)" : `from the recorded memory.set calls${m.checked ? "; checked against result.json session.memoryAfter" : ""}`;
  const note = `<p class="note">${esc(from)}</p>`;
  if (m.entries.size === 0) return `<h4>Memory</h4>${note}<p class="note">The memory store is empty.</p>`;
  const rows = [...m.entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, HTML_LIMITS.workspacePaths).map(([k, v]) => {
    const c = clip(v, STATE_LIMITS.valueChars);
    return row([`<code>${esc(k)}</code>`, `<code>${esc(c.text)}</code>${c.omitted === 0 ? "" : ` <span class="note">… ${c.omitted} more characters</span>`}`], changed.has(k) ? "changed" : undefined);
  });
  return `<h4>Memory</h4>${note}<table class="memory"><tr><th>key</th><th>value (canonical JSON)</th></tr>${rows.join("")}</table>`;
}

function stateSection(s: StepState, n: number, stepHref: string, budget: Budget, sha: (b: Uint8Array) => string): string {
  const prev = s.position === 0 ? `<a href="#states">↑ list</a>` : `<a href="#${stateAnchor(s.position - 1)}" rel="prev">← previous</a>`;
  const next = s.position + 1 >= n ? "" : `<a href="#${stateAnchor(s.position + 1)}" rel="next">next →</a>`;
  const what = s.committed ? "" : `<p class="note">This step did not complete: nothing it did reached the workspace or the memory.</p>`;
  return `<section class="state" id="${stateAnchor(s.position)}"><h3>After step ${s.position + 1} <code>${esc(s.stepId)}</code></h3>` +
    `<nav class="state-nav">${prev}<a href="#${stepHref}">the step</a>${next}</nav>${what}${workspaceHtml(s.workspace, budget, sha)}${memoryHtml(s.memory)}</section>`;
}

/**
 * The step-through section.
 * @param view the run (its `states`)
 * @param stepHref the anchor of a step's own section, by position
 * @param sha the SHA-256 of a file's bytes
 * @returns HTML
 */
export function renderStates(view: RunView, stepHref: (position: number) => string, sha: (b: Uint8Array) => string): string {
  const { steps, checks } = view.states;
  if (steps.length === 0) return `<section id="states"><h2>State after each step</h2><p class="note">No step ran.</p></section>`;
  const mark = (s: StepState): string => (s.workspace.known && s.memory.known ? "" : ` <span class="unknown">(${!s.workspace.known && !s.memory.known ? "not reconstructed" : !s.workspace.known ? "workspace not reconstructed" : "memory not reconstructed"})</span>`);
  const list = `<ol class="state-list">${steps.map((s) => `<li><a href="#${stateAnchor(s.position)}">${esc(s.stepId)}</a>${mark(s)}</li>`).join("")}</ol>`;
  const budget: Budget = { chars: STATE_LIMITS.pageContentChars };
  const sections = steps.map((s) => stateSection(s, steps.length, stepHref(s.position), budget, sha)).join("");
  const how = view.states.replay?.matches === true ? "From the capsule's record and, where it does not say, from replaying the capsule" : "Derived from the capsule without running anything";
  return `<section id="states"><h2>State after each step</h2><p class="note">${how}: ${esc(checks.join("; "))}.</p>${list}${sections}</section>`;
}
