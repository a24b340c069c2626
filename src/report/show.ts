/**
 * `reach-wasm show`: a run as a terminal timeline — the run's header (hash, status, pack, seed, phases, plan), then
 * each step with its tool, kind, status, virtual and real durations, fuel and host calls, its input and output
 * (clipped unless `full`), policy violations, artifacts, replans and stops, then the run's end, its artifacts and
 * what the workspace gained. Every string from the run is escaped for the terminal (`_text.ts`).
 * @module
 */
import { arr, bytesText, compact, get, groupDigits, msText, obj, plural, pretty, strings } from "./_json.ts";
import { pad, painter, safeText, shortHash, statusColour } from "./_text.ts";
import type { Paint } from "./_text.ts";
import type { RunView, StepView } from "./model.ts";
import { workspaceChanges } from "./workspace-diff.ts";

/** How `show` renders. */
export type ShowOptions = {
  /** Emit ANSI colours (a TTY without `NO_COLOR`). */
  color?: boolean;
  /** Print inputs and outputs in full (pretty JSON) instead of one clipped line. */
  full?: boolean;
  /** Characters of a clipped input or output line (default 160). */
  clip?: number;
};

/**
 * The total fuel of a run's steps.
 * @param steps the steps
 * @returns the sum as a decimal string
 * @example totalFuel(view.steps) // "402050"
 */
export function totalFuel(steps: readonly StepView[]): string {
  let sum = 0n;
  for (const s of steps) if (s.fuel !== null) sum += BigInt(s.fuel);
  return sum.toString();
}

/**
 * Render a run as a terminal timeline.
 * @param view the run
 * @param options colour, full values, clip width
 * @returns the text (ends with a newline)
 * @example io.stdout(renderShow(buildRunView(source), { color: false }));
 */
export function renderShow(view: RunView, options: ShowOptions = {}): string {
  const paint = painter(options.color === true);
  const lines: string[] = [...headerLines(view, paint), ""];
  lines.push(paint("bold", ` ${pad("#", 3)}${pad("step", 16)}${pad("tool", 16)}${pad("kind", 10)}${pad("status", 11)}${pad("virtual", 9)}${pad("real", 9)}${pad("fuel", 13)}host calls`));
  for (const s of view.steps) lines.push(...stepLines(s, paint, options));
  lines.push("", ...endLines(view, paint));
  return lines.join("\n") + "\n";
}

function headerLines(v: RunView, paint: Paint): string[] {
  const pack = `${safeText(v.pack.id ?? "?")}@${safeText(v.pack.version ?? "?")}`;
  const hostCalls = v.steps.reduce((n, s) => n + (s.hostCalls?.count ?? 0), 0);
  const out = [
    `${paint("bold", "run")} ${v.runHash}  ${paint(statusColour(v.status), paint("bold", v.status))}  pack ${pack}  ${paint("dim", `(${v.origin === "capsule" ? "capsule" : "run directory"})`)}`,
    `  run id ${safeText(v.runId ?? "?")}  seed ${safeText(v.seed ?? "?")}  epoch ${safeText(v.epoch ?? "?")}  ${v.restricted === null ? "" : v.restricted ? "restricted executor" : "unrestricted"}`.trimEnd(),
  ];
  if (v.session !== null) out.push(`  session run ${v.session.segment} of an MCP session${v.session.previousRunHash === null ? " (its first)" : `, continuing run ${v.session.previousRunHash}`}`);
  if (v.phases.length > 0) out.push(`  phases ${v.phases.map((p) => safeText(p)).join(" → ")}`);
  if (v.plan !== null) out.push(`  plan ${safeText(v.plan.id ?? "?")}: ${plural(v.plan.steps.length, "step")}, hash ${shortHash(v.plan.hash)}`);
  out.push(`  ${plural(v.eventCount, "event")}, ${plural(v.steps.length, "step")} run, ${plural(hostCalls, "host call")}, fuel ${groupDigits(totalFuel(v.steps))}`);
  return out;
}

function value(label: string, v: unknown, paint: Paint, options: ShowOptions): string[] {
  const indent = "      ";
  if (options.full === true) {
    const text = safeText(pretty(v), true).split("\n");
    return [`${indent}${paint("dim", label)} ${text[0]}`, ...text.slice(1).map((l) => `${indent}${" ".repeat(label.length + 1)}${l}`)];
  }
  const max = options.clip ?? 160;
  const text = safeText(compact(v));
  const clipped = text.length > max ? `${text.slice(0, max)}${paint("dim", `… (${text.length - max} more characters; --full shows all)`)}` : text;
  return [`${indent}${paint("dim", label)} ${clipped}`];
}

/** An untrusted table cell: escaped, and clipped to `width` columns. */
function cell(text: string, width: number): string {
  const t = safeText(text);
  return t.length > width ? `${t.slice(0, width - 1)}…` : t;
}

function hostCallSummary(s: StepView): string | null {
  if (s.tape.length === 0) return null;
  const counts = new Map<string, number>();
  for (const r of s.tape) counts.set(r.op, (counts.get(r.op) ?? 0) + 1);
  return [...counts].map(([op, n]) => `${safeText(op)}${n > 1 ? ` ×${n}` : ""}`).join(", ");
}

function stepLines(s: StepView, paint: Paint, options: ShowOptions): string[] {
  const status = paint(statusColour(s.status), pad(s.status, 11));
  const fuel = s.fuel === null ? "—" : groupDigits(s.fuel);
  const real = s.realMs === null ? "—" : msText(s.realMs);
  const virt = s.virtualMs === null ? "—" : msText(s.virtualMs);
  const tool = s.type === "replan" ? "(planner)" : cell(s.tool ?? "?", 15);
  const kind = s.type === "replan" ? "replan" : cell(s.kind ?? "?", 9);
  const out = [` ${pad(String(s.position + 1), 3)}${pad(cell(s.stepId, 15), 16)}${pad(tool, 16)}${pad(kind, 10)}${status}${pad(virt, 9)}${pad(real, 9)}${pad(fuel, 13)}${s.hostCalls?.count ?? 0}`];
  if (s.description !== null) out.push(`      ${paint("dim", safeText(s.description))}`);
  if (s.kind === "mcp") out.push(`      ${paint("yellow", "recorded, not contained")} ${paint("dim", "an MCP server's tool: it ran outside the sandbox; its answer is as recorded, and a replay serves it from the tape")}`);
  if (s.dependsOn.length > 0) out.push(`      ${paint("dim", "after")} ${s.dependsOn.map((d) => safeText(d)).join(", ")}`);
  if (s.type === "tool" && s.arguments !== undefined) out.push(...value("input ", s.arguments, paint, options));
  if (s.hasOutput) out.push(...value("output", s.output, paint, options));
  if (s.redacted.length > 0) out.push(`      ${s.redacted.join(" and ")} redacted (committed by the run hash; \`reach-wasm verify\` lists it)`);
  if (s.type === "replan" && s.replan !== null) out.push(...value("replan", s.replan, paint, options));
  if (s.error !== null) out.push(`      ${paint("red", "error")}  ${safeText(s.error.code)}: ${safeText(s.error.message)}${s.reason === null ? "" : paint("dim", ` (${safeText(s.reason)})`)}`);
  for (const v of s.violations) out.push(`      ${paint("red", "policy violation")} ${safeText(v.violationType)}${v.attemptedCapability === null ? "" : ` ${safeText(v.attemptedCapability)}`}: ${safeText(v.details)}`);
  for (const a of s.artifacts) out.push(`      ${paint("cyan", "artifact")} ${safeText(a.name)} (${safeText(a.mimeType)}, ${a.sizeBytes === null ? "?" : bytesText(a.sizeBytes)}) ${paint("dim", safeText(a.path))}`);
  if (s.stop !== null) out.push(`      ${paint("yellow", "stopped")} by ${s.stop.reason === "abort" ? "an abort" : safeText(s.stop.reason)} at fuel ${s.stop.fuel === null ? "?" : groupDigits(s.stop.fuel)}`);
  const calls = hostCallSummary(s);
  if (calls !== null && options.full !== true) out.push(`      ${paint("dim", "host calls")} ${calls}`);
  if (options.full === true) for (const r of s.tape) out.push(`      ${paint("dim", `host call ${r.seq}`)} ${safeText(r.op)} ${r.redacted === true ? "(request and response redacted)" : `${safeText(compact(r.request))} → ${safeText(compact(r.error ?? r.response ?? null))}`}`);
  return out;
}

/** The capability audit (seed 003 §4.2) in one line per kind, and each deprecated feature the run used (§9.2). */
function auditLines(v: RunView, paint: Paint): string[] {
  const out: string[] = [];
  const a = v.capabilityAudit;
  if (a !== null) {
    const kind = (k: string): string => {
      const u = obj(get(a, k));
      return `${k} ${strings(u, "used").length} used of ${strings(u, "declared").length} declared${strings(u, "unused").length === 0 ? "" : ` (unused: ${strings(u, "unused").slice(0, 10).map((x) => safeText(x)).join(", ")})`}`;
    };
    const undeclared = arr(a, "undeclared").length;
    out.push(`capabilities: ${["tools", "permissions", "resources"].map(kind).join("; ")}; hosts contacted ${strings(obj(get(a, "hosts")), "contacted").length}`);
    if (undeclared > 0) out.push(`  ${paint("red", `${undeclared} undeclared use${undeclared === 1 ? "" : "s"} attempted`)}`);
  }
  for (const d of v.deprecations) out.push(paint("yellow", safeText(d.message)));
  return out;
}

function endLines(v: RunView, paint: Paint): string[] {
  const out: string[] = [];
  const t = v.terminal;
  if (t === null) out.push(paint("yellow", "the run has no terminal event (incomplete)"));
  else {
    const what = t.error === null ? "" : `: ${safeText(t.error.code)}: ${safeText(t.error.message)}`;
    out.push(`${paint(statusColour(v.status), v.status)} at ${safeText(t.at)}${t.failedStep === null ? "" : ` in step ${safeText(t.failedStep)}`}${what}`);
    if (t.signal !== null && t.type === "run.aborted") out.push(`  aborted by ${safeText(t.signal)}${t.abortedAt === null ? "" : ` at ${safeText(compact(t.abortedAt))}`}`);
  }
  for (const s of v.stops.filter((x) => x.stepId === null)) out.push(`  ${paint("yellow", "stopped")} the planner (${safeText(s.invocationId)}) by ${safeText(s.reason)} at fuel ${s.fuel ?? "?"}`);
  const arts = v.steps.flatMap((s) => s.artifacts);
  if (arts.length > 0) out.push(`artifacts: ${arts.map((a) => safeText(a.path)).join(", ")}`);
  const ws = workspaceChanges(v.workspace.before, v.workspace.after);
  if (v.workspace.before === null) out.push(`workspace after: ${v.workspace.after.files.size + v.workspace.after.links.size} entries`);
  else out.push(`workspace: ${ws.added.length} added, ${ws.changed.length} changed, ${ws.removed.length} removed, ${ws.unchanged} unchanged`);
  if (v.workspace.before !== null) {
    for (const [label, list] of [["+", ws.added], ["~", ws.changed], ["-", ws.removed]] as const) {
      for (const p of list.slice(0, 20)) out.push(`  ${label} ${safeText(p)}`);
      if (list.length > 20) out.push(`  ${label} … ${list.length - 20} more`);
    }
  }
  out.push(...auditLines(v, paint));
  for (const w of v.warnings) out.push(paint("yellow", `warning: ${safeText(w)}`));
  return out;
}
