/**
 * The report's step sections: one `<details>` per step (collapsed: a one-line summary; expanded: input, output,
 * error, policy violations, artifacts, stop, module commitments and the tape of host calls with the blobs they
 * reference). Internal to `src/report/`.
 * @module
 */
import type { TapeRecord } from "../record/mod.ts";
import { esc, HTML_LIMITS, preBlock, row, sizeCell } from "./_html.ts";
import { clip, compact, get, groupDigits, isText, msText, obj, plural, str, textOf } from "./_json.ts";
import type { StepView } from "./model.ts";

/**
 * The element id of a step's details.
 * @param s the step
 * @returns `step-<position + 1>` (never derived from the untrusted step id)
 * @example stepAnchor({ position: 0 }) // "step-1"
 */
export function stepAnchor(s: Pick<StepView, "position">): string {
  return `step-${s.position + 1}`;
}

function fact(label: string, value: string | null): string {
  return value === null ? "" : `<dt>${esc(label)}</dt><dd><code>${esc(value)}</code></dd>`;
}

function blobOf(side: unknown): string | null {
  const data = obj(get(obj(side), "data"));
  return str(data, "blob");
}

function blobCell(hash: string | null, blobs: ReadonlyMap<string, Uint8Array>): string {
  if (hash === null) return "";
  const bytes = blobs.get(hash);
  if (bytes === undefined) return `<div class="blob missing">blob <code>${esc(hash)}</code>: missing from the capsule</div>`;
  const preview = isText(bytes) ? `<pre class="value small">${esc(clip(textOf(bytes), 2000).text)}</pre>` : "";
  return `<div class="blob">blob <code>${esc(hash)}</code> (${sizeCell(bytes.length)})${preview}</div>`;
}

function tapeTable(tape: readonly TapeRecord[], blobs: ReadonlyMap<string, Uint8Array>): string {
  if (tape.length === 0) return `<p class="note">No host calls.</p>`;
  const shown = tape.slice(0, HTML_LIMITS.tapeRowsPerStep);
  const cell = (v: unknown) => `<pre class="value small">${esc(clip(compact(v), HTML_LIMITS.tapeValueChars).text)}</pre>`;
  const rows = shown.map((r) => {
    if (r.redacted === true) return row([esc(String(r.seq)), `<code>${esc(r.op)}</code>`, `<p class="note">request redacted</p>`, `<p class="note">response redacted (committed by the run hash)</p>`], "call-ok");
    const outcome = r.error === undefined ? cell(r.response ?? null) : `<span class="bad">${esc(r.error.code)}</span>${cell(r.error.message)}`;
    const referenced = blobCell(blobOf(r.request), blobs) + blobCell(blobOf(r.response), blobs);
    return row([esc(String(r.seq)), `<code>${esc(r.op)}</code>`, cell(r.request), outcome + referenced], r.error === undefined ? "call-ok" : "call-err");
  });
  const more = tape.length > shown.length ? `<p class="note">… ${tape.length - shown.length} more host calls are not listed.</p>` : "";
  return `<table class="tape"><thead><tr><th>seq</th><th>op</th><th>request</th><th>response</th></tr></thead><tbody>${rows.join("")}</tbody></table>${more}`;
}

function summaryLine(s: StepView): string {
  const tool = s.type === "replan" ? "planner" : (s.tool ?? "?");
  const kind = s.type === "replan" ? "replan" : s.kind === "mcp" ? "mcp · recorded, not contained" : (s.kind ?? "?");
  const cells = [
    `<span class="num">${s.position + 1}</span>`,
    `<span class="sid">${esc(s.stepId)}</span>`,
    `<span class="tool">${esc(tool)}</span>`,
    `<span class="kind">${esc(kind)}</span>`,
    `<span class="status ${s.status}">${s.status}</span>`,
    `<span class="dur">${s.virtualMs === null ? "—" : esc(msText(s.virtualMs))} virtual</span>`,
    `<span class="dur">${s.realMs === null ? "—" : esc(msText(s.realMs))} real</span>`,
    `<span class="fuel">fuel ${s.fuel === null ? "—" : esc(groupDigits(s.fuel))}</span>`,
    `<span class="hc">${plural(s.hostCalls?.count ?? s.tape.length, "host call")}</span>`,
  ];
  return `<summary>${cells.join("")}</summary>`;
}

function problems(s: StepView): string {
  let html = "";
  if (s.error !== null) html += `<h4>Error</h4><p class="bad"><code>${esc(s.error.code)}</code> ${esc(s.error.message)}${s.reason === null ? "" : ` <span class="note">(${esc(s.reason)})</span>`}</p>${s.error.details === undefined ? "" : preBlock(s.error.details, { cls: "small" })}`;
  if (s.violations.length > 0) {
    html += `<h4>Policy violations</h4><ul class="violations">${s.violations.map((v) => `<li><code>${esc(v.violationType)}</code>${v.attemptedCapability === null ? "" : ` <code>${esc(v.attemptedCapability)}</code>`}: ${esc(v.details)} <span class="note">(event ${v.eventIndex})</span></li>`).join("")}</ul>`;
  }
  if (s.stop !== null) html += `<h4>Stop</h4><p>Stopped by ${s.stop.reason === "abort" ? "an abort" : esc(s.stop.reason)} at fuel <code>${esc(s.stop.fuel ?? "?")}</code>; a replay stops at the same point.</p>`;
  return html;
}

/**
 * One step's `<details>` section.
 * @param s the step
 * @param blobs the tape's blobs (hash → bytes)
 * @returns HTML
 * @example view.steps.map((s) => renderStep(s, view.blobs)).join("")
 */
export function renderStep(s: StepView, blobs: ReadonlyMap<string, Uint8Array>): string {
  const facts = fact("invocation", s.invocationId) + fact("depends on", s.dependsOn.length === 0 ? null : s.dependsOn.join(", ")) +
    fact("output hash", s.outputHash) + fact("module sha256", s.module?.sha256 ?? null) + fact("metered module", s.module?.metered ?? null) +
    fact("host calls hash", s.hostCalls?.hash ?? null) + fact("virtual time", `${s.startedAt} → ${s.endedAt ?? "…"}`) + fact("events", `${s.events.first}–${s.events.last}`);
  const redacted = (what: "arguments" | "output"): string => `<p class="note">redacted (committed by the run hash)</p>`.replace("redacted", `${what} redacted`);
  const input = s.type === "tool" ? `<h4>Input</h4>${s.redacted.includes("arguments") ? redacted("arguments") : s.arguments === undefined ? `<p class="note">none recorded</p>` : preBlock(s.arguments)}` : "";
  const output = s.hasOutput ? `<h4>Output</h4>${preBlock(s.output)}` : s.redacted.includes("output") ? `<h4>Output</h4>${redacted("output")}` : s.replan !== null ? `<h4>Replan</h4>${preBlock(s.replan)}` : "";
  const artifacts = s.artifacts.length === 0 ? "" : `<h4>Artifacts</h4><ul>${s.artifacts.map((a) => `<li><a href="#artifacts">${esc(a.name)}</a> (${esc(a.mimeType)}, ${sizeCell(a.sizeBytes)})</li>`).join("")}</ul>`;
  const tape = s.type === "tool" ? `<h4>Tape (${s.tape.length} host call${s.tape.length === 1 ? "" : "s"})</h4>${tapeTable(s.tape, blobs)}` : "";
  return `<details class="step ${s.status}" id="${stepAnchor(s)}" data-step-id="${esc(s.stepId)}">${summaryLine(s)}<div class="step-body">` +
    `${s.description === null ? "" : `<p class="desc">${esc(s.description)}</p>`}<dl class="facts">${facts}</dl>${input}${output}${problems(s)}${artifacts}${tape}</div></details>`;
}
