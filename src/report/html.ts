/**
 * `reach-wasm report`: one self-contained HTML page of a run — the summary with the verification verdict and the
 * proof signer, a timeline of steps and host calls, the plan as a graph, every step (input, output, tape with the
 * blobs it references), the workspace before/after diff, the artifacts, every verification check and the run's end.
 *
 * Self-contained and inert: no network, no external script, style, font or image; one inline stylesheet and one
 * inline script, each allowed by its SHA-256 in a Content-Security-Policy that allows nothing else (images only as
 * data: URLs). Every string from the capsule is escaped (`_html.ts`), so a tool output holding `</script>` or
 * markup renders as text. The page is a pure function of the view and the verification: the same capsule gives
 * the same bytes.
 * @module
 */
import { bytesToBase64, hexToBytes } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { REPORT_CSS, REPORT_JS } from "./_html-assets.ts";
import { renderArtifacts, renderEnd, renderSummary, renderVerification, renderWorkspace } from "./_html-sections.ts";
import { renderStep, stepAnchor } from "./_html-steps.ts";
import { renderLineage } from "./_html-lineage.ts";
import type { LineageLinks } from "./_html-lineage.ts";
import { renderStates } from "./_html-states.ts";
import { fileSha256 } from "./step-states.ts";
import { esc } from "./_html.ts";
import { renderPlanGraph } from "./graph.ts";
import type { GraphNode } from "./graph.ts";
import type { RunView } from "./model.ts";
import { renderTimeline } from "./timeline.ts";
import type { ReportVerification } from "./verification.ts";

/** Options of {@link renderReport}. */
export type ReportOptions = {
  /** Who made the page (shown in the footer), e.g. `reach-wasm 0.1.0`. */
  generator?: string;
  /** The runs whose pages sit beside this one (linked as `<runHash>.report.html`) and the children to list. */
  lineage?: LineageLinks;
};

function cspHash(text: string): string {
  return `'sha256-${bytesToBase64(hexToBytes(sha256Hex(text)))}'`;
}

/**
 * The page's Content-Security-Policy: nothing but the inline stylesheet and script (by hash) and data: images.
 * @returns the policy text
 * @example reportCsp().includes("default-src 'none'") // true
 */
export function reportCsp(): string {
  return `default-src 'none'; img-src data:; style-src ${cspHash(REPORT_CSS)}; script-src ${cspHash(REPORT_JS)}; base-uri 'none'; form-action 'none'`;
}

function graphNodes(v: RunView): GraphNode[] {
  const lastRun = new Map(v.steps.map((s) => [s.stepId, s]));
  const planned = v.plan?.steps ?? v.steps.filter((s) => s.type === "tool").map((s) => ({ id: s.stepId, tool: s.tool ?? "?", description: s.description, dependsOn: s.dependsOn }));
  return planned.map((p) => {
    const ran = lastRun.get(p.id);
    return { id: p.id, label: p.id, sub: p.tool, status: ran?.status ?? "planned", dependsOn: p.dependsOn, href: ran === undefined ? null : `#${stepAnchor(ran)}` };
  });
}

/**
 * Render a run as one self-contained HTML page.
 * @param view the run (`buildRunView`)
 * @param verification the capsule's verification (`verifyForReport`), or null when the source is not a capsule
 * @param options footer text
 * @returns the HTML document
 * @example await writeFile("run.html", renderReport(view, verifyForReport(capsule)));
 */
export function renderReport(view: RunView, verification: ReportVerification | null, options: ReportOptions = {}): string {
  const title = `reach-wasm run ${view.runHash.slice(0, 12)} ${view.status}`;
  const steps = view.steps.map((s) => renderStep(s, view.blobs)).join("");
  const body = [
    renderSummary(view, verification),
    renderLineage(view.lineage, options.lineage ?? {}),
    `<nav id="toc"><a href="#timeline">Timeline</a><a href="#plan">Plan</a><a href="#steps">Steps</a><a href="#states">States</a><a href="#workspace">Workspace</a><a href="#artifacts">Artifacts</a><a href="#verification">Verification</a><a href="#end">End</a></nav>`,
    `<section id="timeline"><h2>Timeline</h2><div class="timeline-wrap">${renderTimeline(view.steps, stepAnchor)}</div></section>`,
    `<section id="plan"><h2>Plan${view.plan === null || view.plan.id === null ? "" : ` <code>${esc(view.plan.id)}</code>`}</h2><div class="graph-wrap">${renderPlanGraph(graphNodes(view))}</div></section>`,
    `<section id="steps"><h2>Steps</h2><div class="toolbar"><button type="button" data-expand="all">Expand all</button><button type="button" data-expand="none">Collapse all</button></div>${steps || `<p class="note">No step ran.</p>`}</section>`,
    renderStates(view, (position) => stepAnchor({ position }), fileSha256),
    renderWorkspace(view),
    renderArtifacts(view.steps.flatMap((s) => s.artifacts)),
    renderVerification(verification),
    renderEnd(view),
    `<footer>Made by ${esc(options.generator ?? "reach-wasm")} from ${view.origin === "capsule" ? "a capsule" : "a run directory"}. This page loads nothing from the network.</footer>`,
  ];
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${reportCsp()}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<main>
${body.join("\n")}
</main>
<script>${REPORT_JS}</script>
</body>
</html>
`;
}
