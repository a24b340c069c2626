/**
 * The coordinator (seed 000 §2, seed 001 §5, seed 004): walks the approved plan one step at a time and guarantees
 * that every run ends in COMPLETED, FAILED or ABORTED with its terminal event written.
 *
 * PENDING → PREPARING (input hash recorded, manifest locked, plan made and gated, plan hash locked; `run.started`)
 * → EXECUTING (per step: budgets and abort checked, envelope built, `run.step.started`, `tool.invoked`, executor,
 * `policy.violation`?, `tool.completed` | `tool.failed`, `run.step.completed` | `run.step.failed`; a soft failure
 * goes back to the planner only while `run.maxReplans` allows, as a recorded `replan` step) → COMPLETED | FAILED |
 * ABORTED (`run.completed` with the output hash | `run.failed` | `run.aborted`).
 * @module
 */
import { deriveId } from "../canonical/ids.ts";
import { hashCanonical } from "../canonical/jcs.ts";
import { parseIsoMillis, VirtualClock } from "../determinism/clock.ts";
import { parseSeed } from "../determinism/prng.ts";
import { EventLog } from "../ledger/event-log.ts";
import { capabilityPolicy, workspaceResources } from "../policy/capabilities.ts";
import { ExecutionEnvelopeSchema } from "../protocol/envelope.ts";
import type { ExecutionEnvelope } from "../protocol/envelope.ts";
import { ReachError, toReachError } from "../protocol/errors.ts";
import type { RunEvidence } from "../protocol/evidence.ts";
import { parseOrThrow } from "../protocol/parse.ts";
import type { PlanStep } from "../protocol/plan.ts";
import { TapeRecorder } from "../record/tape.ts";
import { ArtifactSink } from "../sandbox/host/artifact-sink.ts";
import { MemoryStore } from "../sandbox/host/memory-store.ts";
import { DEFAULT_TIMEOUT_MS } from "../sandbox/types.ts";
import type { JsonObject, JsonValue } from "../sandbox/types.ts";
import { Workspace } from "../sandbox/workspace/workspace.ts";
import { resolveArguments } from "./arguments.ts";
import { executeEnvelope, FUEL_PER_MS, invocationIdOf } from "./executor.ts";
import type { ExecutorRunState, StepExecution } from "./executor.ts";
import { checkPlanLock, DEFAULT_MAX_STEPS, gatePlanAsync } from "./plan-gate.ts";
import type { GatedPlan } from "./plan-gate.ts";
import { makePlan, plannerContext } from "./planner.ts";
import type { ReplanContext } from "./planner.ts";
import { runRunners } from "./runners.ts";
import type { ExecutionHeader, RunPhase, RunRecord, RunRequest, RunStatus } from "./types.ts";
import { recordStep, stepEvidence, terminalReason } from "./step-events.ts";

/** The default virtual epoch (ARCHITECTURE "Determinism"). */
export const DEFAULT_EPOCH = "1970-01-01T00:00:00.000Z";
/** Grace beyond a step's timeout before the watchdog gives up on a tool that ignores its budget. */
export const WATCHDOG_GRACE_MS = 1_000;
/** Prefix of step ids the coordinator reserves for its own steps (replans). */
export const RESERVED_STEP_PREFIX = "reach.";

/** The seed of a run: `--seed`, else the first 64 bits of the input hash (decimal). */
export function runSeed(inputHash: string, seed?: string): string {
  return seed === undefined ? BigInt(`0x${inputHash.slice(0, 16)}`).toString() : parseSeed(seed);
}

class Aborted extends Error {}

/**
 * Run a pack to a terminal state. Never throws for anything the pack, plan or tools do: the outcome is in the
 * record. Throws only for caller bugs (a malformed request).
 * @param request the pack, input and options
 * @returns the run record
 */
export async function runPack(request: RunRequest): Promise<RunRecord> {
  const { loaded } = request;
  const now = request.now ?? (() => performance.now());
  const startedAt = now();
  const phases: RunPhase[] = ["PENDING"];
  const input: JsonValue = request.input ?? {};
  const inputHash = hashCanonical(input);
  const seed = runSeed(inputHash, request.seed);
  const epoch = loaded.pack.run?.epoch ?? DEFAULT_EPOCH;
  const epochMs = parseIsoMillis(epoch);
  const restricted = request.restricted === true;
  const runId = deriveId("reach-wasm/run", loaded.packDigest, inputHash, seed);
  const clock = new VirtualClock(epochMs);
  const log = new EventLog({ runId, clock });
  const policy = capabilityPolicy(loaded.pack.manifest, { restricted });
  // WASI tools reach the workspace through preopens, not through the host API's checks, so the workspace itself
  // enforces what the policy allows: without the filesystem permission nothing is preopened (runRunners), and in the
  // restricted executor or with sandbox.filesystem "readonly" every declared root is read-only (temp/ stays writable).
  const readOnly = policy.restricted || policy.filesystemReadonly;
  const resources = workspaceResources(policy, loaded.workspaceFiles).map((r) => (readOnly ? { ...r, access: "read" as const } : r));
  const workspace = Workspace.fromResources(resources);
  const workspaceBefore = workspace.snapshot();
  const memory = new MemoryStore();
  const artifacts = new ArtifactSink();
  const tape = new TapeRecorder();
  const filesystem = policy.permissions.has("filesystem");
  const runners = runRunners(request.env, filesystem ? policy.workspaceRoots.map((r) => r.root) : null);
  const maxSteps = request.maxSteps ?? loaded.pack.run?.maxSteps ?? DEFAULT_MAX_STEPS;
  const maxReplans = loaded.pack.run?.maxReplans ?? 0;
  const policies = loaded.pack.manifest.policies;
  const evidence: RunEvidence[] = [];
  const outputs: JsonObject = {};
  const usedStepIds = new Set<string>();
  let gated: GatedPlan | null = null;
  let error: ReachError | null = null;
  let status: RunStatus = "COMPLETED";
  let failedStep: string | undefined;
  let toolCalls = 0;
  let stepIndex = 0;
  let cancelled = false;
  const progress = request.onProgress ?? (() => {});
  const aborted = (): boolean => request.signal?.aborted === true;
  const abortError = (): ReachError =>
    new ReachError("EXEC_ABORTED", `the run was aborted (${String(request.signal?.reason ?? "signal")}); the current step was stopped and rolled back`, {
      details: { signal: String(request.signal?.reason ?? "abort") },
    });

  const state: ExecutorRunState = {
    seed,
    policy,
    workspace,
    memory,
    artifacts,
    tape,
    clock,
    runnerFor: runners.runnerFor,
    cancelled: () => cancelled,
    ...(request.fetch === undefined ? {} : { fetch: request.fetch }),
    ...(request.player === undefined ? {} : { player: request.player }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  };

  const plan = async (replan?: ReplanContext): Promise<GatedPlan> => {
    const context = plannerContext(loaded, maxSteps, replan);
    const document = await makePlan({ loaded, request: { context, objective: input, seed }, epochMs, quickjs: runners.quickjs, fuelPerMs: FUEL_PER_MS });
    const g = await gatePlanAsync(document, { tools: new Set(loaded.tools.keys()), maxSteps, approve: request.approve === true });
    for (const s of g.plan.steps) {
      if (s.id.startsWith(RESERVED_STEP_PREFIX) || usedStepIds.has(s.id)) {
        throw new ReachError("PLAN_INVALID", `step id "${s.id}" is ${usedStepIds.has(s.id) ? "already used in this run" : `reserved (ids starting "${RESERVED_STEP_PREFIX}")`}; give the step another id`, {
          details: { stepId: s.id },
        });
      }
    }
    return g;
  };

  /** Run one step under the watchdog and the abort signal. */
  const execute = async (step: PlanStep, envelope: ExecutionEnvelope, invocationId: string): Promise<StepExecution> => {
    const tool = loaded.tools.get(step.tool)!;
    const run = executeEnvelope(envelope, tool, step.return_spec!, state, invocationId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const watchdog = new Promise<"timeout" | "abort">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), envelope.timeout_ms + WATCHDOG_GRACE_MS);
      onAbort = () => resolve("abort");
      request.signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const first = await Promise.race([run, watchdog]);
      if (first === "abort") {
        cancelled = true;
        throw new Aborted();
      }
      if (first === "timeout") {
        cancelled = true;
        const e = new ReachError("EXEC_TOOL_TIMEOUT", `the watchdog stopped tool "${step.tool}" after ${envelope.timeout_ms} ms; raise the step's timeout_ms or give it less work`, {
          details: { reason: "timeout", timeoutMs: envelope.timeout_ms, watchdog: true },
        });
        return { invocationId, result: { envelope_id: envelope.id, status: "error", error: e.toDetails() }, toolOutput: null, toolError: e, stepError: e, violation: null, schemaValidation: "fail", artifacts: [], log: "", fuelUsed: 0n, durationMs: envelope.timeout_ms };
      }
      return first;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) request.signal?.removeEventListener("abort", onAbort);
    }
  };

  try {
    phases.push("PREPARING");
    let planError: ReachError | null = null;
    try {
      if (aborted()) throw new Aborted();
      gated = await plan();
    } catch (err) {
      if (err instanceof Aborted) throw err;
      planError = toReachError(err, "PLAN_PLANNER_FAILED");
    }
    const started: JsonObject = {
      runId,
      packId: loaded.pack.id,
      packVersion: loaded.pack.version,
      specVersion: loaded.pack.specVersion,
      inputHash,
      manifestHash: loaded.manifestHash,
      packDigest: loaded.packDigest,
      seed,
      epoch,
      capabilities: { restricted, permissions: [...loaded.pack.manifest.capabilities.permissions], tools: [...loaded.tools.keys()] },
    };
    if (gated !== null) {
      started["planId"] = gated.plan.plan_id;
      started["planHash"] = gated.planHash;
    }
    log.append("run.started", started);
    if (planError !== null) throw planError;
    progress({ kind: "planned", planId: gated!.plan.plan_id, steps: gated!.plan.steps.length, planHash: gated!.planHash });
    phases.push("EXECUTING");

    let replans = 0;
    let queue: PlanStep[] = [...gated!.plan.steps];
    let generation = 0;
    const completed: ReplanContext["completed"] = [];
    while (queue.length > 0) {
      const step = queue.shift()!;
      if (aborted()) throw new Aborted();
      if (toolCalls + 1 > policies.maxToolCalls) {
        failedStep = step.id;
        throw new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `step "${step.id}" would be tool call ${toolCalls + 1}; the pack allows ${policies.maxToolCalls} (manifest.policies.maxToolCalls)`, {
          details: { maxToolCalls: policies.maxToolCalls, stepId: step.id },
        });
      }
      if (now() - startedAt > policies.maxExecutionTime) {
        failedStep = step.id;
        throw new ReachError("POLICY_TIMEOUT_EXCEEDED", `the run has used more than its ${policies.maxExecutionTime} ms (manifest.policies.maxExecutionTime) before step "${step.id}"`, {
          details: { maxExecutionTime: policies.maxExecutionTime, stepId: step.id },
        });
      }
      checkPlanLock(gated!.plan, gated!.planHash);
      toolCalls++;
      const total = stepIndex + 1 + queue.length;
      const invocationId = invocationIdOf(runId, step.id, generation);
      const timeout = gated!.plan.execution?.step_timeout_ms ?? request.stepTimeoutMs ?? DEFAULT_TIMEOUT_MS;
      usedStepIds.add(step.id);
      const envelope = parseOrThrow(
        ExecutionEnvelopeSchema,
        {
          id: deriveId("reach-wasm/envelope", runId, step.id, String(generation)),
          task_id: step.id,
          tool: step.tool,
          arguments: resolveArguments(step.arguments as JsonObject, input, step.id),
          context: { session_id: runId, permissions: [...loaded.pack.manifest.capabilities.permissions] },
          timeout_ms: timeout,
        },
        "PROTO_SCHEMA_VIOLATION",
        `the envelope of step "${step.id}"`,
      );
      progress({ kind: "step", index: stepIndex, total, stepId: step.id, tool: step.tool, status: "started" });
      log.append("run.step.started", { stepId: step.id, stepType: "tool", stepIndex, toolName: step.tool, ...(step.description === undefined ? {} : { description: step.description }), ...(step.depends_on === undefined ? {} : { dependsOn: [...step.depends_on] }) });
      log.append("tool.invoked", { toolName: step.tool, invocationId, arguments: envelope.arguments, timeoutMs: envelope.timeout_ms, stepId: step.id });
      let exec: StepExecution;
      try {
        exec = await execute(step, envelope, invocationId);
      } catch (err) {
        if (!(err instanceof Aborted)) throw err;
        const e = abortError();
        log.append("tool.failed", { invocationId, error: e.toDetails() });
        log.append("run.step.failed", { stepId: step.id, result: { status: "error", reason: "aborted" }, error: e.toDetails() });
        evidence.push(stepEvidence(step, envelope, null, e, "fail", [], 0, []));
        failedStep = step.id;
        throw err;
      }
      recordStep(log, step, exec, loaded.pack.manifest.capabilities.tools.map((t) => t.name));
      evidence.push(stepEvidence(step, envelope, exec.toolOutput, exec.stepError, exec.schemaValidation, exec.artifacts, exec.durationMs, []));
      progress({ kind: "step", index: stepIndex, total, stepId: step.id, tool: step.tool, status: exec.stepError === null ? "completed" : "failed", durationMs: exec.durationMs, ...(exec.stepError === null ? {} : { code: exec.stepError.code }) });
      stepIndex++;
      if (exec.stepError === null) {
        outputs[step.id] = exec.toolOutput!;
        completed.push({ stepId: step.id, tool: step.tool, output: exec.toolOutput! });
        continue;
      }
      const e = exec.stepError;
      if (e.severity === "soft" && replans < maxReplans && !aborted()) {
        replans++;
        generation++;
        const replanId = `${RESERVED_STEP_PREFIX}replan.${replans}`;
        evidence[evidence.length - 1]!.replanEvents.push(replanId);
        progress({ kind: "replan", attempt: replans, reason: e.code });
        log.append("run.step.started", { stepId: replanId, stepType: "replan", stepIndex, description: `replan ${replans} after step "${step.id}" failed with ${e.code}` });
        stepIndex++;
        try {
          gated = await plan({ attempt: replans, failure: { stepId: step.id, tool: step.tool, code: e.code, message: e.message }, completed: [...completed], previousPlanId: gated!.plan.plan_id });
        } catch (err) {
          const pe = toReachError(err, "PLAN_PLANNER_FAILED");
          log.append("run.step.failed", { stepId: replanId, result: { status: "error", reason: "replan_rejected" }, error: pe.toDetails() });
          failedStep = replanId;
          throw pe;
        }
        log.append("run.step.completed", { stepId: replanId, result: { attempt: replans, planId: gated.plan.plan_id, planHash: gated.planHash, cause: e.code } });
        progress({ kind: "planned", planId: gated.plan.plan_id, steps: gated.plan.steps.length, planHash: gated.planHash });
        queue = [...gated.plan.steps];
        continue;
      }
      failedStep = step.id;
      throw e;
    }
    const outputHash = hashCanonical(outputs);
    const committed = artifacts.artifacts.map((a) => a.info);
    log.append("run.completed", { runId, status: "success", outputHash, ...(committed.length > 0 ? { artifacts: committed } : {}) });
  } catch (err) {
    // Close whatever is open so that the terminal event is legal (seed 003 §3.2: termination comes last).
    if (log.events.length === 0) log.append("run.started", { runId, packId: loaded.pack.id, packVersion: loaded.pack.version, specVersion: loaded.pack.specVersion, inputHash, manifestHash: loaded.manifestHash, seed, epoch });
    const interrupted = err instanceof Aborted || aborted() ? abortError() : toReachError(err, "EXEC_TOOL_FAILED");
    if (log.openInvocation !== null) log.append("tool.failed", { invocationId: log.openInvocation, error: interrupted.toDetails() });
    if (log.openStep !== null) {
      failedStep = log.openStep;
      log.append("run.step.failed", { stepId: log.openStep, result: { status: "error", reason: terminalReason(interrupted) }, error: interrupted.toDetails() });
    }
    if (err instanceof Aborted || aborted()) {
      status = "ABORTED";
      error = interrupted;
      log.append("run.aborted", { runId, status: "failure", reason: "aborted", signal: String(request.signal?.reason ?? "abort"), error: error.toDetails() });
    } else {
      status = "FAILED";
      error = interrupted;
      log.append("run.failed", { runId, status: "failure", error: error.toDetails(), reason: terminalReason(error), ...(failedStep === undefined ? {} : { failedStep }) });
    }
  }
  phases.push(status);
  const header: ExecutionHeader = {
    contract_version: "S2-B-06.v1",
    run_id: runId,
    pack_id: loaded.pack.id,
    pack_version: loaded.pack.version,
    manifest_hash: loaded.manifestHash,
    input_hash: inputHash,
    seed,
    epoch,
    restricted,
    plan_id: gated?.plan.plan_id ?? null,
    plan_hash: gated?.planHash ?? null,
    approved_by: gated?.approvedBy ?? null,
    phases,
  };
  if (hashCanonical(loaded.pack.manifest) !== loaded.manifestHash) throw new Error("internal: the locked manifest changed during the run");
  const files = new Map<string, Uint8Array>();
  const after = workspace.snapshot();
  for (const e of after) files.set(e.path, workspace.read(e.path));
  return {
    runId,
    status,
    runHash: log.runHash(),
    error,
    events: log.events,
    evidence,
    artifacts: artifacts.artifacts,
    plan: gated?.plan ?? null,
    planHash: gated?.planHash ?? null,
    header,
    inputHash,
    input,
    seed,
    outputs,
    tape,
    workspaceBefore,
    workspaceAfter: after,
    workspaceFiles: files,
    warnings: [...loaded.warnings],
  };
}



