/**
 * The report's only stylesheet and script, inlined; the page's Content-Security-Policy allows exactly these two by
 * their SHA-256 (`html.ts`), so nothing a capsule smuggles into the page can run or load. The script only opens the
 * step a link points at and expands or collapses every step (and the step-through's own, `_html-states.ts`).
 * Internal to `src/report/`.
 * @module
 */
import { STATES_CSS, STATES_JS } from "./_html-states.ts";

/** The stylesheet. */
export const REPORT_CSS = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --bg: #ffffff; --panel: #f5f7fa; --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; --accent: #3451b2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 12px; display: flex; gap: 10px; align-items: center; }
h2 { font-size: 18px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 16px 0 6px; }
h4 { font-size: 13px; margin: 14px 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
code, pre, .sid, .tool, .kind, .fuel { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12.5px; }
code { overflow-wrap: anywhere; }
#summary { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; }
.facts-grid { display: grid; grid-template-columns: 1fr 1fr; gap: 4px 24px; }
.kv { display: flex; gap: 8px; min-width: 0; }
.kv .k { flex: 0 0 96px; color: var(--muted); }
.kv .v { min-width: 0; overflow-wrap: anywhere; }
nav#toc { display: flex; gap: 14px; flex-wrap: wrap; margin: 12px 0 0; }
nav#toc a, a { color: var(--accent); text-decoration: none; }
.badge, .status-badge { display: inline-block; padding: 2px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; background: var(--muted); }
.badge.ok, .status-badge.COMPLETED { background: var(--ok); color: #fff; }
.badge.bad, .status-badge.FAILED, .status-badge.ABORTED { background: var(--bad); color: #fff; }
.status-badge.INCOMPLETE, .badge.unknown { background: var(--warn); }
.ok { color: var(--ok); } .bad { color: var(--bad); } .note { color: var(--muted); font-size: 12.5px; margin: 4px 0; }
svg text { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; fill: var(--fg); }
.graph-wrap, .timeline-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; padding: 8px; background: var(--panel); }
.node { fill: #fff; stroke: var(--muted); stroke-width: 1.4; }
.node.completed { stroke: var(--ok); } .node.failed { stroke: var(--bad); fill: #fff2f2; } .node.open { stroke: var(--warn); } .node.planned { stroke-dasharray: 4 3; }
.node-label { font-weight: 600; } .node-sub { fill: var(--muted); font-size: 11px; }
.edge { fill: none; stroke: var(--muted); stroke-width: 1.3; } .arrowhead { fill: var(--muted); }
.bar { fill: #9fb3e8; } .bar.completed { fill: #8fd19e; } .bar.failed { fill: #f3a3a3; } .bar.open { fill: #f0d38a; }
.tick { stroke: #1d2330; stroke-width: 1.5; }
.tl-dur, .tl-axis { fill: var(--muted); font-size: 11px; } .tl-axis.end { text-anchor: end; }
.tl-row:hover .bar { opacity: .8; }
details.step { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; background: #fff; }
details.step.failed { border-color: #f0b4b4; }
details.step > summary { cursor: pointer; list-style: none; display: grid; grid-template-columns: 32px 150px 130px 80px 90px 110px 100px 140px 1fr; gap: 8px; align-items: center; padding: 8px 12px; }
details.step > summary::-webkit-details-marker { display: none; }
details.step[open] > summary { border-bottom: 1px solid var(--line); background: var(--panel); border-radius: 8px 8px 0 0; }
summary .num { color: var(--muted); } summary .sid { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
summary .tool { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
summary .status.completed { color: var(--ok); } summary .status.failed { color: var(--bad); } summary .status.open { color: var(--warn); }
summary .dur, summary .hc { color: var(--muted); }
.step-body { padding: 8px 14px 14px; }
dl.facts { display: grid; grid-template-columns: 140px 1fr; gap: 2px 12px; margin: 6px 0; } dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; min-width: 0; }
pre.value { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 4px 0; max-height: 360px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.small { font-size: 11.5px; max-height: 200px; padding: 4px 6px; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
td, th { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
table.tape td:nth-child(1), table.tape th:nth-child(1) { width: 48px; } table.tape td:nth-child(2), table.tape th:nth-child(2) { width: 120px; }
table.checks td:nth-child(1) { width: 56px; } table.checks td:nth-child(2) { width: 150px; }
table.workspace td:nth-child(2), table.workspace th:nth-child(2) { width: 90px; } table.workspace td:nth-child(3), table.workspace td:nth-child(4), table.workspace th:nth-child(3), table.workspace th:nth-child(4) { width: 130px; }
tr.call-err td, tr.check-err td { background: #fff2f2; }
tr.diff-row td { border-bottom: 1px solid var(--line); padding-top: 0; }
pre.diff { margin: 4px 0; background: var(--panel); padding: 6px 8px; max-height: 400px; overflow: auto; }
pre.diff .add { color: var(--ok); } pre.diff .del { color: var(--bad); } pre.diff .same { color: var(--muted); }
tr.added td:nth-child(2) { color: var(--ok); } tr.removed td:nth-child(2) { color: var(--bad); } tr.changed td:nth-child(2) { color: var(--warn); }
ul.artifacts { list-style: none; padding: 0; } li.artifact { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 8px 0; }
img.artifact-image { display: block; max-width: 100%; max-height: 480px; margin-top: 8px; border: 1px solid var(--line); }
.toolbar { display: flex; gap: 8px; margin: 4px 0 8px; }
button { font: inherit; padding: 3px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
` + STATES_CSS;

/** The script: open the step a link points at; expand or collapse every step. */
export const REPORT_JS = `
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.tagName === "DETAILS") { el.open = true; el.scrollIntoView({ block: "start" }); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var buttons = document.querySelectorAll("button[data-expand]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", function (ev) {
      var open = ev.currentTarget.getAttribute("data-expand") === "all";
      var steps = document.querySelectorAll("details.step");
      for (var j = 0; j < steps.length; j++) steps[j].open = open;
    });
  }
})();
` + STATES_JS;
