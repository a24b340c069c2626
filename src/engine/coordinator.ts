/**
 * The coordinator (seed 000 §2, seed 001 §5, seed 004): walks the approved plan one step at a time and guarantees
 * that every run ends in COMPLETED, FAILED or ABORTED with its terminal event written.
 *
 * PENDING → PREPARING (input hash recorded, manifest locked, plan made and gated, plan hash locked; `run.started`)
 * → EXECUTING (per step: budgets and abort checked, envelope built, `run.step.started`, `tool.invoked`, executor,
 * `policy.violation`?, `tool.completed` | `tool.failed`, `run.step.completed` | `run.step.failed`; a soft failure
 * goes back to the planner only while `run.maxReplans` allows, as a recorded `replan` step) → COMPLETED | FAILED |
 * ABORTED (`run.completed` with the output hash | `run.failed` | `run.aborted`). The phases live in `run.ts`.
 * @module
 */
import { toReachError } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import type { ReplanContext } from "./planner.ts";
import { Run, RESERVED_STEP_PREFIX } from "./run.ts";
import { Aborted, InfraRefused } from "./run-stops.ts";
import { finishRun } from "./run-record.ts";
import { runGeneration } from "./scheduler.ts";
import { observeStep } from "./step-observer.ts";
import type { CompletedStep } from "./scheduler.ts";
import type { RunRecord, RunRequest } from "./types.ts";

export { RESERVED_STEP_PREFIX } from "./run.ts";
export { DEFAULT_EPOCH, runSeed } from "./run-identity.ts";

/**
 * Run a pack to a terminal state. Never throws for anything the pack, plan or tools do: the outcome is in the
 * record. Throws only for caller bugs (a malformed request), and for a plan that calls an infrastructure tool outside
 * `request.infraTools` (the run is not one the caller may have, so it leaves no record).
 * @param request the pack, input and options
 * @returns the run record
 * @throws ReachError `POLICY_VIOLATION` for an infrastructure tool outside `request.infraTools`
 * @example const record = await runPack({ loaded, input: { text: "hi" }, env });
 */
export async function runPack(request: RunRequest): Promise<RunRecord> {
  const run = Run.prepare(request);
  let err: unknown = null;
  try {
    await planAndStart(run);
    run.phases.push("EXECUTING");
    await walk(run);
  } catch (e) {
    err = e;
  }
  try {
    // An abort that came before the run's end ends it ABORTED, whether it would have COMPLETED or FAILED.
    if (!(err instanceof Aborted) && !(err instanceof InfraRefused)) await run.checkEnd();
  } catch (e) {
    err = e;
  } finally {
    run.closeThreads();
    await run.closeMcp();
  }
  if (err instanceof InfraRefused) throw err.error;
  if (err !== null) return finishRun(run, err);
  try {
    return finishRun(run, null);
  } catch (e) {
    return finishRun(run, e);
  }
}

/** Plan, gate and lock; `run.started` is written either way (a failed plan ends the run right after it). */
async function planAndStart(run: Run): Promise<void> {
  let planError: unknown = null;
  try {
    run.gated = await run.plan();
  } catch (err) {
    if (err instanceof InfraRefused) throw err;
    if (err instanceof Aborted) {
      run.start(null);
      throw err;
    }
    planError = toReachError(err, "PLAN_PLANNER_FAILED");
  }
  run.start(run.gated);
  if (planError !== null) throw planError;
  const g = run.gated!;
  run.request.onProgress?.({ kind: "planned", planId: g.plan.plan_id, steps: g.steps.length, planHash: g.planHash });
}

/**
 * Execute the plan's steps — at the same time where `depends_on` allows (`scheduler.ts`), written in plan order; a
 * soft failure may go back to the planner (`run.maxReplans`).
 */
async function walk(run: Run): Promise<void> {
  const maxReplans = run.request.loaded.pack.run?.maxReplans ?? 0;
  let replans = 0;
  let generation = 0;
  const completed: CompletedStep[] = [];
  for (;;) {
    const gen = run.beginGeneration(run.gated!.steps);
    const failure = await runGeneration(run, gen, generation, completed);
    if (failure === null) return;
    const { step, error: e } = failure;
    if (e.severity !== "soft" || replans >= maxReplans) {
      run.failedStep = step.id;
      throw e;
    }
    // A replan is a decision the record must repeat: an abort before it is checked (and recorded) here.
    await run.turn();
    run.checkAbort({ phase: "executing", stepIndex: run.stepIndex });
    replans++;
    generation++;
    await replan(run, step, e, replans, completed);
  }
}

/** A recorded `replan` step: the planner is asked again with the failure and what completed. */
async function replan(run: Run, step: PlanStep, e: { code: string; message: string }, attempt: number, completed: ReplanContext["completed"]): Promise<void> {
  const replanId = `${RESERVED_STEP_PREFIX}replan.${attempt}`;
  run.evidence[run.evidence.length - 1]!.replanEvents.push(replanId);
  run.request.onProgress?.({ kind: "replan", attempt, reason: e.code });
  const stepIndex = run.stepIndex;
  run.log.append("run.step.started", { stepId: replanId, stepType: "replan", stepIndex, description: `replan ${attempt} after step "${step.id}" failed with ${e.code}` });
  run.stepIndex++;
  try {
    run.gated = await run.plan({ attempt, failure: { stepId: step.id, tool: step.tool, code: e.code, message: e.message }, completed: [...completed], previousPlanId: run.gated!.plan.plan_id });
  } catch (err) {
    if (err instanceof Aborted || err instanceof InfraRefused) throw err;
    const pe = toReachError(err, "PLAN_PLANNER_FAILED");
    run.log.append("run.step.failed", { stepId: replanId, result: { status: "error", reason: "replan_rejected" }, error: pe.toDetails() });
    observeStep(run, replanId, stepIndex);
    run.failedStep = replanId;
    throw pe;
  }
  const g = run.gated;
  run.log.append("run.step.completed", { stepId: replanId, result: { attempt, planId: g.plan.plan_id, planHash: g.planHash, cause: e.code } });
  observeStep(run, replanId, stepIndex); // a replan changes neither the workspace nor the memory
  run.request.onProgress?.({ kind: "planned", planId: g.plan.plan_id, steps: g.steps.length, planHash: g.planHash });
}
