/**
 * The report's other sections: the run summary, the verification result and the proof signer, the workspace
 * before/after diff, the artifacts (images inline, everything else downloadable), and the run's end. Internal to
 * `src/report/`.
 * @module
 */
import { dataUrl, downloadName, esc, HTML_LIMITS, preBlock, row, sizeCell, sniffImage } from "./_html.ts";
import { clip, compact, groupDigits, isText, plural, textOf } from "./_json.ts";
import type { ArtifactView, RunView, WorkspaceView } from "./model.ts";
import { totalFuel } from "./show.ts";
import { diffLines } from "./text-diff.ts";
import type { ReportVerification } from "./verification.ts";
import { workspaceChanges } from "./workspace-diff.ts";

function kv(label: string, value: string, raw = false): string {
  return `<div class="kv"><span class="k">${esc(label)}</span><span class="v">${raw ? value : esc(value)}</span></div>`;
}

/**
 * The summary at the top: run hash, status, pack, seed, epoch, phases, plan, totals, verdict and signer.
 * @param v the run
 * @param verification the verification (null: not verified)
 * @returns HTML
 * @example renderSummary(view, verifyForReport(capsule)) // "<header id=\"summary\">…"
 */
export function renderSummary(v: RunView, verification: ReportVerification | null): string {
  const verdict = verification === null ? `<span class="badge unknown">not verified</span>` : verification.valid ? `<span class="badge ok">verified</span>` : `<span class="badge bad">verification failed</span>`;
  const hostCalls = v.steps.reduce((n, s) => n + (s.hostCalls?.count ?? 0), 0);
  const signer = verification?.signer ?? null;
  const facts = [
    kv("run hash", `<code id="run-hash">${esc(v.runHash)}</code>`, true),
    kv("run id", v.runId ?? "?"),
    kv("pack", `${v.pack.id ?? "?"}@${v.pack.version ?? "?"}`),
    kv("pack digest", v.pack.digest ?? "?"),
    kv("seed", v.seed ?? "?"),
    kv("epoch", v.epoch ?? "?"),
    kv("executor", v.restricted === null ? "?" : v.restricted ? "restricted" : "unrestricted"),
    kv("phases", v.phases.join(" → ") || "?"),
    kv("plan", v.plan === null ? "none" : `${v.plan.id ?? "?"} (${plural(v.plan.steps.length, "step")})`),
    kv("totals", `${plural(v.eventCount, "event")} · ${plural(v.steps.length, "step")} · ${plural(hostCalls, "host call")} · fuel ${groupDigits(totalFuel(v.steps))}`),
    kv("signed by", signer === null ? (v.proofSigner === null ? "not signed" : `${v.proofSigner} (proof not verified)`) : `${signer.keyName === undefined ? "" : `${signer.keyName} `}${signer.publicKey}${signer.trusted ? " (trusted)" : " (not in the trust store)"}`),
  ];
  return `<header id="summary"><h1>Run <span class="status-badge ${v.status}">${v.status}</span> ${verdict}</h1><div class="facts-grid">${facts.join("")}</div></header>`;
}

/**
 * The verification section: every check of `verifyRunCapsule`.
 * @param verification the result, or null for a source that is not a capsule
 * @returns HTML
 * @example renderVerification(null) // a "not verified" note
 */
export function renderVerification(verification: ReportVerification | null): string {
  if (verification === null) return `<section id="verification"><h2>Verification</h2><p class="note">Not verified: only a capsule can be verified (reach-wasm verify).</p></section>`;
  const rows = verification.checks.map((c) => row([c.ok ? `<span class="ok">ok</span>` : `<span class="bad">FAIL</span>`, `<code>${esc(c.name)}</code>`, esc(c.message)], c.ok ? "check-ok" : "check-err"));
  const head = verification.valid ? `<p class="ok">Every check passed: the run hash ${esc(verification.runHash)} commits to every entry.</p>` : `<p class="bad">Verification failed: ${esc(verification.checks.filter((c) => !c.ok).map((c) => c.name).join(", "))}.</p>`;
  return `<section id="verification"><h2>Verification</h2>${head}<table class="checks"><tbody>${rows.join("")}</tbody></table></section>`;
}

function fileText(ws: WorkspaceView | null, path: string): string | null {
  if (ws === null) return "";
  const link = ws.links.get(path);
  if (link !== undefined) return `→ ${link}\n`;
  const bytes = ws.files.get(path);
  if (bytes === undefined) return "";
  return bytes.length <= HTML_LIMITS.diffFileBytes && isText(bytes) ? textOf(bytes) : null;
}

function fileDiff(before: WorkspaceView | null, after: WorkspaceView, path: string): string {
  const a = fileText(before, path);
  const b = fileText(after, path);
  if (a === null || b === null) return `<p class="note">binary or larger than ${HTML_LIMITS.diffFileBytes} bytes: not diffed</p>`;
  const lines = diffLines(a, b);
  if (lines === null) return `<p class="note">too large or too different to diff line by line</p>`;
  const body = lines.map((l) => `<span class="${l.op === "+" ? "add" : l.op === "-" ? "del" : "same"}">${esc(`${l.op} ${l.text}`)}</span>`).join("\n");
  return `<pre class="diff">${body}</pre>`;
}

function sizeOf(ws: WorkspaceView | null, path: string): string {
  if (ws === null) return "";
  const link = ws.links.get(path);
  if (link !== undefined) return `link → ${esc(clip(link, 200).text)}`;
  const b = ws.files.get(path);
  return b === undefined ? "—" : sizeCell(b.length);
}

/**
 * The workspace section: each path added, changed or removed by the run, with a line diff of text files.
 * @param v the run
 * @returns HTML
 * @example renderWorkspace(view) // "<section id=\"workspace\">…"
 */
export function renderWorkspace(v: RunView): string {
  const { before, after } = v.workspace;
  const ch = workspaceChanges(before, after);
  const listed = [...ch.added.map((p) => [p, "added"] as const), ...ch.changed.map((p) => [p, "changed"] as const), ...ch.removed.map((p) => [p, "removed"] as const)]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1)).slice(0, HTML_LIMITS.workspacePaths);
  const head = before === null
    ? `<p class="note">A run directory holds only the workspace after the run.</p>`
    : `<p>${ch.added.length} added, ${ch.changed.length} changed, ${ch.removed.length} removed, ${ch.unchanged} unchanged.</p>`;
  const rows = listed.map(([path, what]) => `<tr class="${what}"><td><code>${esc(path)}</code></td><td>${what}</td><td>${sizeOf(before, path)}</td><td>${sizeOf(after, path)}</td></tr>` +
    `<tr class="diff-row"><td colspan="4"><details class="file-diff"><summary>diff</summary>${fileDiff(before, after, path)}</details></td></tr>`);
  const table = rows.length === 0 ? "" : `<table class="workspace"><thead><tr><th>path</th><th>change</th><th>before</th><th>after</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
  return `<section id="workspace"><h2>Workspace</h2>${head}${table}</section>`;
}

/**
 * The artifacts section: images (by their bytes' signature) inline as data: URLs, any artifact downloadable.
 * @param artifacts every artifact of the run
 * @returns HTML
 * @example renderArtifacts(view.steps.flatMap((s) => s.artifacts))
 */
export function renderArtifacts(artifacts: readonly ArtifactView[]): string {
  let budget: number = HTML_LIMITS.totalArtifactBytes;
  const items = artifacts.map((a) => {
    const meta = `<code>${esc(a.path)}</code> · ${esc(a.mimeType)} · ${sizeCell(a.sizeBytes)} · step ${esc(a.stepId)}`;
    if (a.bytes === null) return `<li class="artifact"><b>${esc(a.name)}</b> ${meta}<p class="note">not in this source, or its bytes do not match its SHA-256</p></li>`;
    if (a.bytes.length > HTML_LIMITS.artifactBytes || a.bytes.length > budget) return `<li class="artifact"><b>${esc(a.name)}</b> ${meta}<p class="note">too large to embed; see the capsule</p></li>`;
    budget -= a.bytes.length;
    const image = sniffImage(a.bytes);
    const shown = image !== null ? `<img class="artifact-image" alt="${esc(a.name)}" src="${dataUrl(image, a.bytes)}">` : isText(a.bytes) ? preBlock(textOf(a.bytes), { raw: true, max: 4000, cls: "small" }) : "";
    const link = `<a class="download" download="${esc(downloadName(a.name))}" href="${dataUrl("application/octet-stream", a.bytes)}">download</a>`;
    return `<li class="artifact"><b>${esc(a.name)}</b> ${meta} ${link}${shown}</li>`;
  });
  return `<section id="artifacts"><h2>Artifacts</h2>${items.length === 0 ? `<p class="note">The run committed no artifact.</p>` : `<ul class="artifacts">${items.join("")}</ul>`}</section>`;
}

/**
 * The run's end: terminal event, error, abort point, planner stops, and what could not be read.
 * @param v the run
 * @returns HTML
 * @example renderEnd(view) // "<section id=\"end\">…"
 */
export function renderEnd(v: RunView): string {
  const t = v.terminal;
  const parts: string[] = [];
  if (t === null) parts.push(`<p class="bad">The run has no terminal event: it is incomplete.</p>`);
  else {
    parts.push(`<p><span class="status-badge ${v.status}">${v.status}</span> at <code>${esc(t.at)}</code>${t.failedStep === null ? "" : ` in step <code>${esc(t.failedStep)}</code>`}${t.reason === null ? "" : ` (${esc(t.reason)})`}</p>`);
    if (t.error !== null) parts.push(`<p class="bad"><code>${esc(t.error.code)}</code> ${esc(t.error.message)}</p>`);
    if (t.type === "run.aborted") parts.push(`<p>Aborted by <code>${esc(t.signal ?? "?")}</code>${t.abortedAt === null ? "" : ` at <code>${esc(compact(t.abortedAt))}</code>`}.</p>`);
  }
  for (const s of v.stops) parts.push(`<p>Stop: invocation <code>${esc(s.invocationId)}</code>${s.stepId === null ? " (the planner)" : ` (step <code>${esc(s.stepId)}</code>)`} by ${esc(s.reason)} at fuel <code>${esc(s.fuel ?? "?")}</code>.</p>`);
  if (v.input !== undefined) parts.push(`<h3>Run input</h3>${preBlock(v.input)}`);
  if (v.warnings.length > 0) parts.push(`<h3>Warnings</h3><ul class="warnings">${v.warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>`);
  return `<section id="end"><h2>End of the run</h2>${parts.join("")}</section>`;
}
