/**
 * The steps of a run, assembled from its events (`run.step.started` … `run.step.completed | run.step.failed`), its
 * tape and its evidence. Internal to `src/report/`; `model.ts` documents where each field comes from.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import type { TapeRecord } from "../record/mod.ts";
import { arr, fuelText, get, num, obj, str, strings } from "./_json.ts";
import type { Obj } from "./_json.ts";

/** One event as read (untrusted payload). */
export type RawEvent = { index: number; type: string; timestamp: string; eventHash: string; payload: Obj };

/** A recorded policy violation. */
export type ViolationView = { eventIndex: number; violationType: string; details: string; attemptedCapability: string | null };

/** An artifact a step committed, with its bytes when the source holds them (and they hash to `sha256`). */
export type ArtifactView = { name: string; path: string; mimeType: string; sizeBytes: number | null; sha256: string | null; bytes: Uint8Array | null; stepId: string };

/** Where a signal or the watchdog stopped a tool (the fuel count replay stops at). */
export type StopView = { invocationId: string; reason: string; fuel: string | null; stepId: string | null };

/** One step (a tool call, or a recorded replan). */
export type StepView = {
  /** Position in the run (0-based, in event order). */
  position: number;
  stepId: string;
  type: "tool" | "replan";
  tool: string | null;
  kind: string | null;
  description: string | null;
  dependsOn: string[];
  status: "completed" | "failed" | "open";
  reason: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Virtual duration (from the events' virtual timestamps). */
  virtualMs: number | null;
  /** Real duration (from evidence; null when the source has none). */
  realMs: number | null;
  invocationId: string | null;
  arguments: unknown;
  /** The tool's output (`tool.completed` result); `hasOutput` false when it returned none. */
  output: unknown;
  hasOutput: boolean;
  /** What of the step a redacted capsule lacks (conformance/HASHING.md "Redaction"): its arguments, its output, its host calls. */
  redacted: ("arguments" | "output" | "host calls")[];
  outputHash: string | null;
  error: { code: string; message: string; details: unknown } | null;
  fuel: string | null;
  hostCalls: { count: number; hash: string | null } | null;
  module: { sha256: string | null; metered: string | null } | null;
  violations: ViolationView[];
  artifacts: ArtifactView[];
  tape: TapeRecord[];
  stop: StopView | null;
  /** A replan step's result (attempt, planId, planHash, cause). */
  replan: Obj | null;
  events: { first: number; last: number };
};

/** What steps are assembled with. */
export type StepContext = {
  tape: readonly TapeRecord[];
  kinds: ReadonlyMap<string, string>;
  entries: ReadonlyMap<string, Uint8Array>;
  evidence: unknown;
  warnings: string[];
};

/**
 * Assemble the steps of a run from its events.
 * @param events the events, in order
 * @param ctx tape, tool kinds, entries (artifact bytes), evidence, and where to note problems
 * @returns the steps in event order, and every recorded stop (a stop outside any step is a planner's)
 * @example const { steps, stops } = buildSteps(events, { tape, kinds, entries, evidence, warnings });
 */
export function buildSteps(events: readonly RawEvent[], ctx: StepContext): { steps: StepView[]; stops: StopView[] } {
  const steps: StepView[] = [];
  let open: StepView | null = null;
  for (const e of events) {
    if (e.type === "run.step.started") {
      open = newStep(e, steps.length, ctx.kinds);
      steps.push(open);
      continue;
    }
    if (open === null) continue;
    open.events.last = e.index;
    applyEvent(open, e, ctx);
    if (e.type === "run.step.completed" || e.type === "run.step.failed") open = null;
  }
  attachTape(steps, ctx.tape);
  const stops = attachStops(steps, events[events.length - 1]);
  attachEvidence(steps, ctx.evidence);
  return { steps, stops };
}

function newStep(e: RawEvent, position: number, kinds: ReadonlyMap<string, string>): StepView {
  const p = e.payload;
  const tool = str(p, "toolName");
  return {
    position,
    stepId: str(p, "stepId") ?? `(step ${position})`,
    type: str(p, "stepType") === "replan" ? "replan" : "tool",
    tool,
    kind: tool === null ? null : (kinds.get(tool) ?? null),
    description: str(p, "description"),
    dependsOn: strings(p, "dependsOn"),
    status: "open",
    reason: null,
    startedAt: e.timestamp,
    endedAt: null,
    virtualMs: null,
    realMs: null,
    invocationId: null,
    arguments: undefined,
    output: undefined,
    hasOutput: false,
    redacted: [],
    outputHash: null,
    error: null,
    fuel: null,
    hostCalls: null,
    module: null,
    violations: [],
    artifacts: [],
    tape: [],
    stop: null,
    replan: null,
    events: { first: e.index, last: e.index },
  };
}

function errorOf(v: unknown): StepView["error"] {
  const e = obj(v);
  return e === null ? null : { code: str(e, "code") ?? "?", message: str(e, "message") ?? "", details: get(e, "details") };
}

function applyEvent(s: StepView, e: RawEvent, ctx: StepContext): void {
  const p = e.payload;
  switch (e.type) {
    case "tool.invoked":
      s.invocationId = str(p, "invocationId");
      s.arguments = get(p, "arguments");
      if (s.arguments === undefined && Object.hasOwn(p, "argumentsCommit")) s.redacted.push("arguments");
      return;
    case "policy.violation":
      s.violations.push({ eventIndex: e.index, violationType: str(p, "violationType") ?? "?", details: str(p, "details") ?? "", attemptedCapability: str(p, "attemptedCapability") });
      return;
    case "tool.completed":
    case "tool.failed":
      ranWith(s, p);
      if (e.type === "tool.completed") {
        s.hasOutput = Object.hasOwn(p, "result");
        s.output = get(p, "result");
        s.outputHash = str(p, "outputHash");
        if (!s.hasOutput) s.redacted.push("output");
      } else s.error = errorOf(get(p, "error"));
      return;
    case "run.step.completed":
    case "run.step.failed":
      closeStep(s, e, ctx);
      return;
  }
}

function ranWith(s: StepView, p: Obj): void {
  s.fuel = fuelText(get(p, "fuel"));
  const hc = obj(get(p, "hostCalls"));
  if (hc !== null) s.hostCalls = { count: num(hc, "count") ?? 0, hash: str(hc, "hash") };
  const m = obj(get(p, "module"));
  if (m !== null) s.module = { sha256: str(m, "sha256"), metered: str(m, "metered") };
}

function closeStep(s: StepView, e: RawEvent, ctx: StepContext): void {
  const p = e.payload;
  s.endedAt = e.timestamp;
  const a = Date.parse(s.startedAt);
  const b = Date.parse(e.timestamp);
  s.virtualMs = Number.isFinite(a) && Number.isFinite(b) ? b - a : null;
  const result = obj(get(p, "result"));
  if (e.type === "run.step.completed") {
    s.status = "completed";
    if (s.type === "replan") s.replan = result;
    for (const raw of arr(p, "artifacts")) {
      const art = artifactOf(obj(raw), s.stepId, ctx.entries);
      if (art !== null) s.artifacts.push(art);
    }
  } else {
    s.status = "failed";
    s.reason = str(result, "reason");
    s.error = errorOf(get(p, "error")) ?? s.error;
  }
}

function artifactOf(a: Obj | null, stepId: string, entries: ReadonlyMap<string, Uint8Array>): ArtifactView | null {
  const path = str(a, "path");
  if (path === null) return null;
  const sha = str(a, "sha256");
  const bytes = entries.get(path) ?? null;
  const intact = bytes !== null && sha !== null && sha256Hex(bytes) === sha;
  return {
    name: str(a, "name") ?? path.slice(path.lastIndexOf("/") + 1),
    path,
    mimeType: str(a, "mimeType") ?? "application/octet-stream",
    sizeBytes: num(a, "sizeBytes"),
    sha256: sha,
    bytes: intact ? bytes : null,
    stepId,
  };
}

function attachTape(steps: StepView[], tape: readonly TapeRecord[]): void {
  const byInvocation = new Map<string, StepView>();
  for (const s of steps) if (s.invocationId !== null) byInvocation.set(s.invocationId, s);
  for (const r of tape) {
    const s = byInvocation.get(r.invocationId);
    s?.tape.push(r);
    if (r.redacted === true && s !== undefined && !s.redacted.includes("host calls")) s.redacted.push("host calls");
  }
}

function attachStops(steps: StepView[], last: RawEvent | undefined): StopView[] {
  const stops: StopView[] = [];
  const isTerminal = last !== undefined && (last.type === "run.completed" || last.type === "run.failed" || last.type === "run.aborted");
  for (const raw of isTerminal ? arr(last.payload, "stops") : []) {
    const o = obj(raw);
    const invocationId = str(o, "invocationId");
    if (invocationId === null) continue;
    const step = steps.find((s) => s.invocationId === invocationId);
    const stop: StopView = { invocationId, reason: str(o, "reason") ?? "?", fuel: fuelText(get(o, "fuel")), stepId: step?.stepId ?? null };
    if (step !== undefined) step.stop = stop;
    stops.push(stop);
  }
  return stops;
}

function attachEvidence(steps: StepView[], evidence: unknown): void {
  if (!Array.isArray(evidence)) return;
  const pending = evidence.map(obj).filter((e): e is Obj => e !== null);
  for (const s of steps) {
    const i = pending.findIndex((e) => str(e, "stepId") === s.stepId);
    if (i < 0) continue;
    const ms = num(pending[i]!, "durationMs");
    s.realMs = ms !== null && ms >= 0 ? ms : null;
    pending.splice(i, 1);
  }
}
