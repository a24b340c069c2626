/**
 * Steps a run does not run: one refused before it could run (a session call naming a tool the run does not have),
 * recorded as a failed step, and the budget checks (seed 003 §4.1 policies) that stop a step before it starts.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import { FUEL_PER_MS } from "./executor.ts";
import type { Run } from "./run.ts";
import { failedEvidence, terminalReason } from "./step-events.ts";
import { observeStep } from "./step-observer.ts";

/**
 * Record a step that was refused before it could run (a session call naming a tool the run does not have):
 * `run.step.started`, `policy.violation` for a policy error, `run.step.failed`.
 * @param run the run
 * @param step the step
 * @param error why it was refused
 */
export function refuseStep(run: Run, step: PlanStep, error: ReachError): void {
  const gen = run.gen ?? run.beginGeneration([]);
  const i = gen.add(step);
  gen.complete(i, gen.current.workspace, null, 0);
  run.usedStepIds.add(step.id);
  run.log.append("run.step.started", { stepId: step.id, stepType: "tool", stepIndex: run.stepIndex, toolName: step.tool });
  if (error.code === "POLICY_VIOLATION") {
    const d = error.details;
    run.log.append("policy.violation", { violationType: (d["violationType"] as string | undefined) ?? "UNDEFINED_TOOL", details: error.message, attemptedCapability: (d["attemptedCapability"] as string | undefined) ?? step.tool, declaredCapabilities: run.request.loaded.pack.manifest.capabilities.tools.map((t) => t.name), stepId: step.id });
  }
  run.log.append("run.step.failed", { stepId: step.id, result: { status: "error", reason: terminalReason(error) }, error: error.toDetails() });
  run.evidence.push(failedEvidence(step, error, run.requestId));
  run.markStep(step.id, 0);
  run.stepIndex++;
  gen.emitted(i);
  observeStep(run, step.id, run.stepIndex - 1);
}

/**
 * Why the run's budgets do not allow a step (seed 003 §4.1 policies; both deterministic): one tool call more than
 * `maxToolCalls`, or the time budget spent along its dependencies (`step-graph.ts`).
 * @param run the run
 * @param stepId the step
 * @param fuelBefore the fuel its dependency closure (and the plans before) used
 * @returns the error, or null when the step may run
 */
export function budgetError(run: Pick<Run, "request" | "toolCalls">, stepId: string, fuelBefore: bigint): ReachError | null {
  const policies = run.request.loaded.pack.manifest.policies;
  if (run.toolCalls + 1 > policies.maxToolCalls) {
    return new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `step "${stepId}" would be tool call ${run.toolCalls + 1}; the pack allows ${policies.maxToolCalls} (manifest.policies.maxToolCalls)`, {
      details: { maxToolCalls: policies.maxToolCalls, stepId },
    });
  }
  if (fuelBefore >= BigInt(policies.maxExecutionTime) * FUEL_PER_MS) {
    return new ReachError("POLICY_TIMEOUT_EXCEEDED", `the run has used its ${policies.maxExecutionTime} ms budget (manifest.policies.maxExecutionTime, counted in fuel: ${FUEL_PER_MS} units per ms) before step "${stepId}"`, {
      details: { maxExecutionTime: policies.maxExecutionTime, stepId },
    });
  }
  return null;
}
