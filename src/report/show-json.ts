/**
 * `reach-wasm show --json`: the run view as one JSON object. Values from the run are data here (JSON escapes them);
 * an input or output larger than {@link JSON_VALUE_LIMIT} characters is replaced by a clipped preview unless `full`.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { clip, compact } from "./_json.ts";
import type { RunView, StepView } from "./model.ts";
import { totalFuel } from "./show.ts";
import { workspaceChanges } from "./workspace-diff.ts";

/** Characters of an input or output kept in `show --json` without `--full`. */
export const JSON_VALUE_LIMIT = 4096;

function bounded(key: string, v: unknown, full: boolean): Record<string, unknown> {
  if (v === undefined) return {};
  const text = compact(v);
  if (full || text.length <= JSON_VALUE_LIMIT) return { [key]: v };
  const c = clip(text, JSON_VALUE_LIMIT);
  return { [`${key}Preview`]: c.text, [`${key}Truncated`]: true, [`${key}Chars`]: text.length };
}

function stepJson(s: StepView, full: boolean): Record<string, unknown> {
  return {
    position: s.position,
    stepId: s.stepId,
    type: s.type,
    tool: s.tool,
    kind: s.kind,
    ...(s.kind === "mcp" ? { contained: false } : {}),
    description: s.description,
    dependsOn: s.dependsOn,
    status: s.status,
    reason: s.reason,
    startedAt: s.startedAt,
    endedAt: s.endedAt,
    virtualMs: s.virtualMs,
    realMs: s.realMs,
    invocationId: s.invocationId,
    ...bounded("input", s.arguments, full),
    ...(s.hasOutput ? bounded("output", s.output, full) : {}),
    ...(s.redacted.length > 0 ? { redacted: s.redacted } : {}),
    outputHash: s.outputHash,
    error: s.error,
    fuel: s.fuel,
    hostCalls: s.hostCalls,
    module: s.module,
    violations: s.violations,
    artifacts: s.artifacts.map((a) => ({ name: a.name, path: a.path, mimeType: a.mimeType, sizeBytes: a.sizeBytes, sha256: a.sha256, present: a.bytes !== null })),
    stop: s.stop,
    replan: s.replan,
    tape: s.tape.map((r) => ({ seq: r.seq, op: r.op, ...(r.error === undefined ? {} : { error: r.error.code }) })),
    events: s.events,
  };
}

type Listed = { path: string; size?: number; sha256?: string; link?: string };

function listing(w: RunView["workspace"]["after"]): Listed[] {
  const files: Listed[] = [...w.files].map(([path, b]) => ({ path, size: b.length, sha256: sha256Hex(b) }));
  const links: Listed[] = [...w.links].map(([path, link]) => ({ path, link }));
  return [...files, ...links].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The run view as one JSON-ready object.
 * @param view the run
 * @param options `full`: keep every input and output whole
 * @returns a plain object (`JSON.stringify` it)
 * @example io.stdout(JSON.stringify(showJson(view)) + "\n");
 */
export function showJson(view: RunView, options: { full?: boolean } = {}): Record<string, unknown> {
  const full = options.full === true;
  const ws = workspaceChanges(view.workspace.before, view.workspace.after);
  return {
    origin: view.origin,
    runId: view.runId,
    runHash: view.runHash,
    status: view.status,
    pack: view.pack,
    seed: view.seed,
    epoch: view.epoch,
    restricted: view.restricted,
    phases: view.phases,
    ...bounded("input", view.input, full),
    plan: view.plan,
    steps: view.steps.map((s) => stepJson(s, full)),
    stops: view.stops,
    terminal: view.terminal,
    totals: { events: view.eventCount, steps: view.steps.length, hostCalls: view.tape.length, fuel: totalFuel(view.steps) },
    workspace: {
      before: view.workspace.before === null ? null : listing(view.workspace.before),
      after: listing(view.workspace.after),
      ...(view.workspace.before === null ? {} : { changes: ws }),
    },
    proofSigner: view.proofSigner,
    // seed 003 §4.2, §9.2: as the run record has them (absent in capsules made before them)
    ...(view.capabilityAudit === null ? {} : bounded("capabilityAudit", view.capabilityAudit, full)),
    ...(view.deprecations.length === 0 ? {} : { deprecations: view.deprecations }),
    ...(view.session === null ? {} : { session: view.session }),
    warnings: view.warnings,
  };
}
