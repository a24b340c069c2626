/**
 * The live events of a service run (seed 004 "Event Types"), derived in ONE place from what the engine reports
 * while it runs (`onProgress`) and from its final result. When the engine emits seed 004's event stream itself,
 * {@link eventsOf} is the one function to replace. Events are service metadata: never hashed, never in the capsule.
 * @module
 */
import type { RunProgress, RunStatus } from "../engine/mod.ts";

/** What happened to a run, as the worker (or the API, for a run cancelled before it started) sees it. */
export type RunUpdate =
  | { kind: "progress"; progress: RunProgress; attempt: number }
  | { kind: "finished"; status: RunStatus; runHash: string | null; error: { code: string; message: string } | null; artifacts: readonly unknown[]; cancelled: boolean }
  | { kind: "cancelled-while-queued" }
  | { kind: "given-up"; attempts: number; message: string };

/** One event before it is numbered and stored. */
export type EventDraft = { eventType: string; stepIndex?: number; toolName?: string; data?: Record<string, unknown> };

/** Codes that end a step or a run by a watchdog (seed 004 `timeout_error`). */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(["EXEC_TOOL_TIMEOUT", "POLICY_TIMEOUT_EXCEEDED", "PROTO_TIMEOUT"]);

function stepEvents(p: Extract<RunProgress, { kind: "step" }>): EventDraft[] {
  const at = { stepIndex: p.index, toolName: p.tool };
  if (p.status === "started") {
    return [
      { eventType: "step_started", ...at, data: { stepId: p.stepId, total: p.total } },
      { eventType: "tool_called", ...at, data: { stepId: p.stepId } },
    ];
  }
  const outcome = { stepId: p.stepId, status: p.status, durationMs: p.durationMs, ...(p.code === undefined ? {} : { code: p.code }) };
  const out: EventDraft[] = [
    { eventType: "tool_output", ...at, data: outcome },
    { eventType: "step_completed", ...at, data: outcome },
  ];
  if (p.code !== undefined && TIMEOUT_CODES.has(p.code)) out.push({ eventType: "timeout_error", ...at, data: { stepId: p.stepId, code: p.code } });
  return out;
}

/**
 * The events an update stands for.
 * @param update what happened
 * @returns the events, in order (possibly none)
 * @example eventsOf({ kind: "cancelled-while-queued" }) // [{ eventType: "run_cancelled", data: { reason: "cancelled before a worker took it" } }]
 */
export function eventsOf(update: RunUpdate): EventDraft[] {
  switch (update.kind) {
    case "progress": {
      const p = update.progress;
      if (p.kind === "planned") return [{ eventType: "run_started", data: { attempt: update.attempt, planId: p.planId, planHash: p.planHash, totalSteps: p.steps } }];
      if (p.kind === "replan") return [{ eventType: "replan_triggered", data: { attempt: p.attempt, reason: p.reason } }];
      if (p.kind !== "step") return [];
      return stepEvents(p);
    }
    case "finished": {
      const artifacts: EventDraft[] = update.artifacts.map((a) => ({ eventType: "artifact_created", data: { artifact: a } }));
      const base = { runHash: update.runHash, status: update.status };
      if (update.status === "COMPLETED") return [...artifacts, { eventType: "run_completed", data: base }];
      if (update.status === "ABORTED" && update.cancelled) return [...artifacts, { eventType: "run_cancelled", data: { ...base, error: update.error } }];
      return [...artifacts, { eventType: "run_failed", data: { ...base, error: update.error } }];
    }
    case "cancelled-while-queued":
      return [{ eventType: "run_cancelled", data: { reason: "cancelled before a worker took it" } }];
    case "given-up":
      return [{ eventType: "run_failed", data: { attempts: update.attempts, error: { code: "EXEC_RESOURCE_UNAVAILABLE", message: update.message } } }];
  }
}

/** The seed 004 progress counters of a run record. */
export type ProgressCounters = { currentStepIndex: number; totalSteps: number; replansCount: number };

/**
 * Fold one engine progress report into the record's counters.
 * @param counters the counters so far
 * @param p the report
 * @returns the new counters
 * @example advance({ currentStepIndex: 0, totalSteps: 0, replansCount: 0 }, { kind: "planned", planId: "p", steps: 3, planHash: "…" })
 */
export function advance(counters: ProgressCounters, p: RunProgress): ProgressCounters {
  if (p.kind === "planned") return { ...counters, totalSteps: p.steps };
  if (p.kind === "replan") return { ...counters, replansCount: counters.replansCount + 1 };
  if (p.kind !== "step") return counters;
  return { ...counters, currentStepIndex: p.index, totalSteps: p.total };
}
