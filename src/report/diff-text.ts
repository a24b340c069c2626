/**
 * `reach-wasm diff` for people: the verdict, the first divergence, then one line per kind of difference. Every
 * string from the capsules is escaped for the terminal.
 * @module
 */
import { painter, safeText, shortHash } from "./_text.ts";
import type { Paint } from "./_text.ts";
import type { PathChanges, RunDiff } from "./diff.ts";

const LIST = 8;

function paths(c: PathChanges): string {
  const all = [...c.added.map((p) => `+${p}`), ...c.changed.map((p) => `~${p}`), ...c.removed.map((p) => `-${p}`)];
  const shown = all.slice(0, LIST).map((p) => safeText(p)).join(", ");
  return all.length > LIST ? `${shown}, … ${all.length - LIST} more` : shown;
}

function count(c: PathChanges): number {
  return c.added.length + c.changed.length + c.removed.length;
}

function divergenceLines(d: RunDiff, paint: Paint): string[] {
  const f = d.firstDivergence;
  if (f === null) return [`first divergence: none in the events${d.a.runHash === d.b.runHash ? "" : " (yet the run hashes differ)"}`];
  const where = `event ${f.eventIndex}${f.stepId === null ? "" : ` (step "${safeText(f.stepId)}")`}`;
  const types = f.type.a === f.type.b ? safeText(f.type.a ?? "?") : `A ${safeText(f.type.a ?? "nothing")}, B ${safeText(f.type.b ?? "nothing")}`;
  const out = [`${paint("bold", "first divergence:")} ${where}, field ${paint("yellow", safeText(f.field))} (${types})`];
  const h = f.hostCall;
  if (h !== null) {
    const op = h.op.a === h.op.b ? safeText(h.op.a ?? "?") : `A ${safeText(h.op.a ?? "none")}, B ${safeText(h.op.b ?? "none")}`;
    out.push(`  host call ${h.index + 1} of the step (tape seq A ${h.seq.a ?? "—"}, B ${h.seq.b ?? "—"}): ${op}, field ${safeText(h.field)}`);
  }
  return out;
}

/**
 * Render a diff for the terminal.
 * @param d the diff (`diffRuns`)
 * @param options `color`: ANSI colours
 * @returns the text (ends with a newline)
 * @example io.stdout(renderDiff(diffRuns(a, b)));
 */
export function renderDiff(d: RunDiff, options: { color?: boolean } = {}): string {
  const paint = painter(options.color === true);
  const side = (label: string, s: RunDiff["a"]) => `  ${label} ${shortHash(s.runHash)} ${s.status} (${s.steps} step${s.steps === 1 ? "" : "s"}, ${s.events} events)${s.damaged === 0 ? "" : paint("red", `, ${s.damaged} damaged entries`)}${s.redacted === undefined ? "" : `, redacted: ${[...s.redacted.steps.map((id) => `step ${id}`), ...s.redacted.entries].join(", ")}`}`;
  const lines = [d.identical ? paint("green", "identical runs") : paint("red", "the runs differ"), side("A", d.a), side("B", d.b)];
  if (d.identical) {
    if (d.proofDiffers) lines.push("  (only the proofs differ: the same run, signed differently)");
    return lines.join("\n") + "\n";
  }
  lines.push(...divergenceLines(d, paint));
  const also: string[] = [];
  if (d.inputs.length > 0) also.push(`inputs: ${d.inputs.map((f) => safeText(f)).join(", ")}`);
  if (count(d.packFiles) > 0) also.push(`pack files: ${paths(d.packFiles)}`);
  for (const m of d.modules) also.push(`tool module ${safeText(m.tool)}: ${shortHash(m.a)} → ${shortHash(m.b)}`);
  if (count(d.workspaceBefore) > 0) also.push(`workspace before: ${paths(d.workspaceBefore)}`);
  if (count(d.workspaceAfter) > 0) also.push(`workspace after: ${paths(d.workspaceAfter)}`);
  if (d.outputs.length > 0) also.push(`outputs: ${d.outputs.slice(0, LIST).map((o) => safeText(o.stepId) + (o.a === null ? " (only in B)" : o.b === null ? " (only in A)" : "")).join(", ")}${d.outputs.length > LIST ? `, … ${d.outputs.length - LIST} more` : ""}`);
  if (count(d.entries) > 0) also.push(`other entries: ${paths(d.entries)}`);
  if (d.proofDiffers) also.push("proof.json");
  lines.push(also.length === 0 ? "nothing else differs" : paint("bold", "also different:"), ...also.map((l) => `  ${l}`));
  return lines.join("\n") + "\n";
}
