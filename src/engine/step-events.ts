/**
 * How one executed step is written into the event chain and the evidence (seed 003 §3.2; seed 004 RunEvidence).
 * @module
 */
import type { EventLog } from "../ledger/mod.ts";
import type { ExecutionEnvelope } from "../protocol/mod.ts";
import { prefixOf } from "../protocol/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import type { ArtifactInfo, RunEvidence } from "../protocol/mod.ts";
import type { PlanStep } from "../protocol/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import type { StepExecution } from "./executor.ts";
import { outputFields } from "./value-commits.ts";
import type { ValueKey } from "./value-commits.ts";

/**
 * The `reason` of a failed step or run: `timeout` for the watchdog and time budgets (seed 004 "timeout"),
 * `aborted`, `policy_violation`, `plan_rejected`, `budget_exceeded`, `output_invalid`, `insufficient`,
 * `invalid_input`, else `tool_failed`.
 * @param error the error
 * @returns the reason
 */
export function terminalReason(error: ReachError): string {
  const code = error.code;
  if (code === "EXEC_TOOL_TIMEOUT" || code === "POLICY_TIMEOUT_EXCEEDED") return "timeout";
  if (code === "EXEC_ABORTED") return "aborted";
  if (code === "EXEC_OUTPUT_INVALID") return "output_invalid";
  if (code === "EXEC_INSUFFICIENT") return "insufficient";
  if (code === "POLICY_RATE_LIMIT_EXCEEDED") return "budget_exceeded";
  if (code.startsWith("POLICY_")) return "policy_violation";
  if (prefixOf(code) === "PLAN") return "plan_rejected";
  if (code.startsWith("PROTO_") || code.startsWith("PACK_")) return "invalid_input";
  return "tool_failed";
}

/** A bigint as a JSON value: a number when exact, else a decimal string. */
function jsonInt(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

/**
 * Append the events of an executed step after `tool.invoked`.
 * @param log the run's log (the step and its invocation are open)
 * @param step the plan step
 * @param exec what the executor reported
 * @param declared the manifest's tool names (for `policy.violation`)
 * @param key the run's commit key (`value-commits.ts`; null: the legacy unsalted form)
 * @returns the output's hash or commitment (`outputHash`), or null when the tool failed
 */
export function recordStep(log: EventLog, step: PlanStep, exec: StepExecution, declared: readonly string[], key: ValueKey = null): string | null {
  const v = exec.violation;
  if (v !== null && v.code === "POLICY_VIOLATION") {
    const d = v.details;
    log.append("policy.violation", {
      violationType: (d["violationType"] as string | undefined) ?? "PERMISSION_DENIED",
      details: v.message,
      attemptedCapability: (d["attemptedCapability"] as string | undefined) ?? step.tool,
      declaredCapabilities: [...declared],
      stepId: step.id,
    });
  }
  // What the tool saw and what ran are committed here: its host calls (their tape lines' hash), its fuel, its module.
  const ran: JsonObject = { fuel: jsonInt(exec.fuelUsed), hostCalls: exec.hostCalls, ...(exec.module === null ? {} : { module: exec.module }) };
  let outputHash: string | null = null;
  if (exec.toolOutput !== null) {
    const fields = outputFields(key, exec.invocationId, exec.toolOutput);
    outputHash = fields.outputHash;
    log.append("tool.completed", { invocationId: exec.invocationId, ...fields, ...ran });
  } else {
    log.append("tool.failed", { invocationId: exec.invocationId, error: (exec.toolError ?? exec.stepError)!.toDetails(), ...ran });
  }
  if (exec.stepError === null) {
    // The output is stored once, in tool.completed; the step refers to it by hash.
    const payload: JsonObject = { stepId: step.id, result: { outputHash: outputHash! } };
    if (exec.artifacts.length > 0) payload["artifacts"] = exec.artifacts as unknown as JsonObject[];
    log.append("run.step.completed", payload);
  } else {
    const status = exec.result.status === "success" ? "error" : exec.result.status;
    log.append("run.step.failed", { stepId: step.id, result: { status, reason: terminalReason(exec.stepError) }, error: exec.stepError.toDetails() });
  }
  return outputHash;
}

/**
 * Record a plan gate's policy refusal (seed 003 §4.3 "Audit Trail"): an undeclared tool in the plan is refused before
 * any step runs, so its `policy.violation` stands between steps (no `stepId`; the step is named in `details`).
 * @param log the run's log (no step open)
 * @param error the refusal
 * @param declared the manifest's tool names
 * @returns true when `error` was a plan-stage policy violation and was recorded
 */
export function recordPlanViolation(log: EventLog, error: ReachError, declared: readonly string[]): boolean {
  if (error.code !== "POLICY_VIOLATION" || error.details["stage"] !== "plan" || log.openStep !== null) return false;
  const d = error.details;
  log.append("policy.violation", {
    violationType: (d["violationType"] as string | undefined) ?? "UNDEFINED_TOOL",
    details: error.message,
    attemptedCapability: (d["attemptedCapability"] as string | undefined) ?? String(d["tool"]),
    declaredCapabilities: [...declared],
  });
  return true;
}

/**
 * The evidence of one step (seed 004 "Evidence Per Step"). Durations are real and unhashed.
 * @returns the evidence record
 */
export function stepEvidence(
  step: PlanStep,
  envelope: ExecutionEnvelope,
  output: JsonObject | null,
  error: ReachError | null,
  schemaValidation: "pass" | "fail",
  artifacts: readonly ArtifactInfo[],
  durationMs: number,
  requestId: string,
): RunEvidence {
  const ev: RunEvidence = {
    stepId: step.id,
    toolName: step.tool,
    input: envelope.arguments,
    output,
    schemaValidation,
    requestId,
    durationMs: Math.max(0, Math.round(durationMs)),
    retryCount: 0,
    replanEvents: [],
    status: error === null ? "completed" : "failed",
    artifacts: [...artifacts],
  };
  if (error !== null) Object.assign(ev, errorEvidence(error));
  return ev;
}

/** `errorStack` (the guest's, from the error's details) and `error` of a failed step's evidence. */
function errorEvidence(error: ReachError): Pick<RunEvidence, "errorStack" | "error"> {
  const stack = error.details["errorStack"];
  return { ...(typeof stack === "string" && stack !== "" ? { errorStack: stack } : {}), error: error.toDetails() };
}

/**
 * The evidence of a step that failed before its tool ran (refused, or its arguments did not resolve).
 * @param step the step
 * @param error why
 * @param requestId the run's correlation id
 * @returns the evidence record
 * @example failedEvidence(step, error, requestId).status // "failed"
 */
export function failedEvidence(step: PlanStep, error: ReachError, requestId: string): RunEvidence {
  return { stepId: step.id, toolName: step.tool, input: step.arguments, output: null, schemaValidation: "fail", requestId, durationMs: 0, retryCount: 0, replanEvents: [], status: "failed", artifacts: [], ...errorEvidence(error) };
}

/**
 * The evidence of a step of the final plan that never ran (seed 004 `skipped`).
 * @param step the step
 * @param requestId the run's correlation id
 * @returns the evidence record
 * @example skippedEvidence(step, requestId).status // "skipped"
 */
export function skippedEvidence(step: PlanStep, requestId: string): RunEvidence {
  return { stepId: step.id, toolName: step.tool, input: step.arguments, output: null, schemaValidation: "fail", requestId, durationMs: 0, retryCount: 0, replanEvents: [], status: "skipped", artifacts: [] };
}
