/**
 * The report's lineage (`#lineage`): the run this one was forked from, resumed or continues, and the children the
 * report was told about, each by run hash and, when its page is known to sit beside this one, as a relative link to
 * `<runHash>.report.html`. Only a validated run hash (64 lowercase hex digits) ever becomes a link. Internal to
 * `src/report/`.
 * @module
 */
import { esc } from "./_html.ts";
import { isRunHash } from "./lineage.ts";
import type { ChildLink, LineageView } from "./lineage.ts";

/** What the page links to: run hash → relative file name of that run's page (absent: not linked). */
export type LineageLinks = { pages?: ReadonlySet<string>; children?: readonly ChildLink[] };

/**
 * The file name of a run's report page under the naming rule `<runHash>.report.html`.
 * @param runHash the run hash (checked)
 * @returns the file name, or null when `runHash` is not a run hash
 * @example reportFileName("ab…") // "ab….report.html"
 */
export function reportFileName(runHash: string): string | null {
  return isRunHash(runHash) ? `${runHash}.report.html` : null;
}

function runRef(runHash: string, links: LineageLinks): string {
  const file = links.pages?.has(runHash) === true ? reportFileName(runHash) : null;
  const code = `<code>${esc(runHash)}</code>`;
  return file === null ? code : `<a href="${esc(file)}" data-run-hash="${esc(runHash)}">${code}</a>`;
}

function parents(l: LineageView, links: LineageLinks): string[] {
  const items: string[] = [];
  for (const [i, f] of l.forkedFrom.entries()) {
    const who = i === 0 && l.resumedFrom === null ? "Forked from" : "Fork of a fork: from";
    const changes = f.changes.length === 0 ? "" : `, changing ${f.changes.map((c) => `<code>${esc(c)}</code>`).join(", ")}`;
    items.push(`<li class="parent fork">${who} ${runRef(f.runHash, links)}${f.step === null ? "" : ` at step <code>${esc(f.step)}</code>`}${changes}</li>`);
  }
  if (l.resumedFrom !== null) {
    const r = l.resumedFrom;
    items.push(`<li class="parent resume">Resumed ${runRef(r.runHash, links)}${r.status === null ? "" : ` (${esc(r.status)})`}, taking ${r.completedSteps.length} completed step${r.completedSteps.length === 1 ? "" : "s"} from it</li>`);
  }
  if (l.previousRunHash !== null) items.push(`<li class="parent session">Continues the session run ${runRef(l.previousRunHash, links)}</li>`);
  return items;
}

function children(links: LineageLinks): string[] {
  const what = { fork: "Forked into", resume: "Resumed by", session: "Continued by the session run" } as const;
  return (links.children ?? []).filter((c) => isRunHash(c.runHash)).map((c) =>
    `<li class="child ${c.relation}">${what[c.relation]} ${runRef(c.runHash, links)}${c.step === null ? "" : ` at step <code>${esc(c.step)}</code>`}</li>`);
}

/**
 * The lineage section, or "" when the run has no recorded parent and no child was named.
 * @param lineage the run's parents (`lineageOf`)
 * @param links which runs have a page beside this one, and the children to list
 * @returns HTML
 */
export function renderLineage(lineage: LineageView, links: LineageLinks): string {
  const items = [...parents(lineage, links), ...children(links)];
  if (items.length === 0) return "";
  const unlinked = items.some((i) => !i.includes("<a href=")) ? `<p class="note">A run hash without a link: that run's page is not beside this one (report the runs together, e.g. <code>reach-wasm report PARENT CHILD --out-dir DIR</code>, to link them).</p>` : "";
  return `<section id="lineage"><h2>Lineage</h2><ul class="lineage">${items.join("")}</ul>${unlinked}</section>`;
}
