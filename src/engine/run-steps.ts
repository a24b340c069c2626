/**
 * A step's two halves (`step-graph.ts`): **prepare** — its view, envelope and job, made when its dependencies are done
 * — and **emit** — its events, evidence, tape segment and commits, written when every earlier step of the plan has
 * been written. Between them the job runs, on a step thread or on this one (`Run.runJob`); `executeStep` does all three
 * for a step that arrives from outside (a session call). Emission is the only place that writes the run's record,
 * always in plan order, so the record is the same whatever ran when and where.
 * @module
 */
import { deriveId } from "../canonical/mod.ts";
import { ExecutionEnvelopeSchema, isExactEnvelope } from "../protocol/mod.ts";
import type { ExecutionEnvelope } from "../protocol/mod.ts";
import { ReachError, toReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import { DEFAULT_MAX_BLOB_BYTES, DEFAULT_MAX_RECORDS } from "../record/mod.ts";
import { DEFAULT_TIMEOUT_MS } from "../sandbox/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import { resolveArguments } from "./arguments.ts";
import { answersOf, argumentsOf, inPrefix, inputOf, playerOf, seedOf, toolOf } from "./branch.ts";
import { FUEL_PER_MS, invocationIdOf } from "./executor.ts";
import type { Generation, LedgerState } from "./generation.ts";
import { infraTool } from "./infra-tools.ts";
import type { Run } from "./run.ts";
import { Aborted } from "./run-stops.ts";
import { failedEvidence, recordStep, stepEvidence, terminalReason } from "./step-events.ts";
import { observeStep } from "./step-observer.ts";
import { budgetError } from "./step-refusal.ts";
import type { StepJob, StepJobResult } from "./step-job.ts";
import { unwireExecution } from "./step-job.ts";
import { argumentFields } from "./value-commits.ts";

/** A step ready to run (or refused before it could). */
export type PreparedStep = {
  readonly index: number;
  readonly step: PlanStep;
  readonly invocationId: string;
  readonly view: LedgerState;
  readonly clockStartMs: number;
  /** The envelope, when the arguments resolved. */
  readonly envelope: ExecutionEnvelope | null;
  /** The job, when the step may run. */
  readonly job: StepJob | null;
  /** Why the step fails without running (its arguments did not resolve), or null. */
  readonly refusal: ReachError | null;
};

/** What the coordinator needs of an emitted step. */
export type StepOutcome = { readonly stepError: ReachError | null; readonly toolOutput: JsonObject | null };

/**
 * Prepare step `i` of a generation: its view, envelope and job.
 * @param run the run
 * @param gen the generation (the step's dependencies are done)
 * @param i the step
 * @param generation the plan generation (replans)
 * @returns the prepared step
 */
export function prepareStep(run: Run, gen: Generation, i: number, generation: number): PreparedStep {
  const { loaded } = run.request;
  const step = gen.steps[i]!;
  const view = gen.viewOf(i);
  const invocationId = invocationIdOf(run.runId, step.id, generation);
  const timeout = run.gated?.plan.execution?.step_timeout_ms ?? run.request.stepTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const base = { index: i, step, invocationId, view: view.state, clockStartMs: view.clockStartMs };
  let envelope: ExecutionEnvelope;
  try {
    const resolved = argumentsOf(run.request, step.id, resolveArguments(step.arguments as JsonObject, inputOf(run.request, step.id, run.input), step.id, view.outputs));
    const candidate = {
      id: deriveId("reach-wasm/envelope", run.runId, step.id, String(generation)),
      task_id: step.id,
      tool: step.tool,
      arguments: resolved,
      context: { session_id: run.runId, permissions: [...loaded.pack.manifest.capabilities.permissions] },
      timeout_ms: timeout,
    };
    // The schema only when the quick check cannot vouch for the envelope as it is (for the verdict and the message).
    // The schema's record drops a "__proto__" member; the arguments it accepted are kept as resolved, so the tool gets
    // every member it was given (conformance/HASHING.md "What a tool sees").
    envelope = isExactEnvelope(candidate) ? candidate : { ...parseOrThrow(ExecutionEnvelopeSchema(), candidate, "PROTO_SCHEMA_VIOLATION", `the envelope of step "${step.id}"`), arguments: resolved };
  } catch (err) {
    return { ...base, envelope: null, job: null, refusal: toReachError(err, "PROTO_SCHEMA_VIOLATION") };
  }
  if (budgetError(run, step.id, view.state.fuel) !== null) return { ...base, envelope, job: null, refusal: null };
  const maxFuel = BigInt(loaded.pack.manifest.policies.maxExecutionTime) * FUEL_PER_MS;
  const prefix = inPrefix(run.request, step.id);
  const stop = run.request.replay?.stops.get(invocationId) ?? run.request.resume?.stops.get(invocationId) ?? (prefix ? run.request.branch?.prefix?.stops.get(invocationId) : undefined) ?? null;
  const tool = loaded.tools.get(step.tool);
  const job: StepJob = {
    runId: run.runId,
    seed: seedOf(run.request, step.id, run.seed),
    epochMs: run.epochMs,
    manifest: loaded.pack.manifest,
    restricted: run.restricted,
    roots: run.preopenRoots,
    tool: tool === undefined ? infraTool(step.tool)! : toolOf(run.request, step.id, tool),
    envelope,
    returnSpec: step.return_spec!,
    invocationId,
    workspace: view.image,
    memory: [...view.state.memory],
    artifactsUsed: view.state.artifacts,
    clockStartMs: view.clockStartMs,
    runFuelLeft: (maxFuel - view.state.fuel).toString(),
    tapeRoom: { records: DEFAULT_MAX_RECORDS - view.state.tape.records, blobBytes: DEFAULT_MAX_BLOB_BYTES - view.state.tape.blobBytes },
    stopAt: stop === null ? null : { fuel: stop.fuel.toString(), reason: stop.reason },
    watchdogFactor: run.request.replay === undefined && !prefix ? 1 : 10,
    network: run.request.fetch !== undefined,
    player: playerOf(run.request, step.id)?.forInvocation(invocationId).wire() ?? null,
    answers: answersOf(run.request, step.id),
    secrets: run.secrets,
    sandboxApi: run.sandboxApi,
  };
  return { ...base, envelope, job, refusal: null };
}

/**
 * Write an executed step into the run (see the module notes): budgets and abort checked, `run.step.started` …
 * `run.step.completed | run.step.failed`, its tape segment, its commits, its evidence.
 * @param run the run
 * @param gen the generation
 * @param p the prepared step
 * @param result its job's result (null when it did not run)
 * @param total the number of steps known so far (progress)
 * @returns the step's failure and output
 * @throws Aborted when the run was aborted before or during the step (its events are written)
 * @throws ReachError `POLICY_RATE_LIMIT_EXCEEDED` / `POLICY_TIMEOUT_EXCEEDED` when a budget is spent
 */
export function emitStep(run: Run, gen: Generation, p: PreparedStep, result: StepJobResult | null, total: number): StepOutcome {
  const { step } = p;
  // A step the abort stopped is written (with its stop point) before the run ends; any other step is written only
  // when the run was not aborted before it.
  if (result?.exec.stepError?.code !== "EXEC_ABORTED") run.checkAbort({ phase: "executing", stepIndex: run.stepIndex });
  const budget = budgetError(run, step.id, p.view.fuel);
  if (budget !== null) {
    run.failedStep = step.id;
    throw budget;
  }
  run.toolCalls++;
  run.usedStepIds.add(step.id);
  const progress = run.request.onProgress ?? (() => {});
  const at = { index: run.stepIndex, total, stepId: step.id, tool: step.tool };
  run.log.append("run.step.started", { stepId: step.id, stepType: "tool", stepIndex: run.stepIndex, toolName: step.tool, ...(step.description === undefined ? {} : { description: step.description }), ...(step.depends_on === undefined ? {} : { dependsOn: [...step.depends_on] }) });
  if (p.refusal !== null || result === null || p.envelope === null) {
    const error = p.refusal ?? new ReachError("EXEC_TOOL_FAILED", `step "${step.id}" did not run`);
    run.log.append("run.step.failed", { stepId: step.id, result: { status: "error", reason: terminalReason(error) }, error: error.toDetails() });
    run.evidence.push(failedEvidence(step, error, run.requestId));
    run.markStep(step.id, 0);
    progress({ kind: "step", ...at, status: "failed", durationMs: 0, code: error.code });
    run.stepIndex++;
    gen.emitted(p.index);
    observeStep(run, step.id, at.index);
    return { stepError: error, toolOutput: null };
  }
  const { envelope, invocationId } = p;
  run.log.append("tool.invoked", { toolName: step.tool, invocationId, ...argumentFields(run.valueKey, invocationId, envelope.arguments as JsonObject), timeoutMs: envelope.timeout_ms, stepId: step.id });
  run.tape.append(result.tape.records, result.tape.blobs);
  playerOf(run.request, step.id)?.forInvocation(invocationId).advance(result.played);
  const exec = unwireExecution(result.exec, run.tape.invocationDigest(invocationId));
  run.fuelSpent += exec.fuelUsed;
  run.recordStop(invocationId, exec.stepError);
  const outputHash = recordStep(run.log, step, exec, run.request.loaded.pack.manifest.capabilities.tools.map((t) => t.name), run.valueKey);
  run.evidence.push(stepEvidence(step, envelope, exec.toolOutput, exec.stepError, exec.schemaValidation, exec.artifacts, exec.durationMs, run.requestId));
  run.markStep(step.id, exec.durationMs);
  progress({ kind: "step", ...at, status: exec.stepError === null ? "completed" : "failed", durationMs: exec.durationMs, fuel: exec.fuelUsed.toString(), ...(exec.stepError === null ? {} : { code: exec.stepError.code }) });
  run.stepIndex++;
  gen.emitted(p.index);
  observeStep(run, step.id, at.index);
  if (exec.stepError === null) {
    run.outputs[step.id] = exec.toolOutput!;
    run.outputCommits[step.id] = outputHash!;
    run.artifacts.adopt(result.artifacts);
  } else if (exec.stepError.code === "EXEC_ABORTED") {
    run.failedStep = step.id;
    throw new Aborted(null);
  }
  return { stepError: exec.stepError, toolOutput: exec.toolOutput };
}

/**
 * Execute one step that arrives from outside (a session call): it depends on the call before it.
 * @param run the run
 * @param step the step
 * @param generation the plan generation
 * @param total the number of steps known so far (progress)
 * @returns the step's failure and output
 * @throws Aborted when the run was aborted before or during the step (its events are written)
 * @throws ReachError `POLICY_RATE_LIMIT_EXCEEDED` / `POLICY_TIMEOUT_EXCEEDED` when a budget is spent
 */
export async function executeStep(run: Run, step: PlanStep, generation: number, total: number): Promise<StepOutcome> {
  const gen = run.gen ?? run.beginGeneration([]);
  const i = gen.add(step);
  const p = prepareStep(run, gen, i, generation);
  run.request.onProgress?.({ kind: "step", index: run.stepIndex, total, stepId: step.id, tool: step.tool, status: "started" });
  const result = p.job === null ? null : await run.runJob(p.job, new AbortController().signal);
  gen.complete(i, p.view.workspace, result, p.clockStartMs);
  return emitStep(run, gen, p, result, total);
}
