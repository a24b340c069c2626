/**
 * The plan: `OrchestrationBlueprint` (seed 000 §2.1), with seed 001's plan contract S2-B-05.v1 and seed 002's
 * steps (`return_spec` per step, at most 10 steps by default).
 *
 * This schema is deliberately permissive about what makes a plan *executable*: status, risk level, step count,
 * scope and the presence of `return_spec` are checked by the plan gate, which reports `PLAN_*` codes
 * (seed 001 §4). The schema only fixes the shape.
 * @module
 */
import { z } from "zod";
import { identifier, jsonObject, strictObject, timestamp, toolName } from "./_common.ts";
import { lazySchema } from "./_lazy.ts";

/** The plan contract version (seed 001). */
export const PLAN_CONTRACT_VERSION = "S2-B-05.v1";

/** Plan status (seed 001 §3; seed 002 "status pending"). Only `APPROVED` plans execute (plan gate). */
export const PlanStatusSchema = lazySchema(() => z.enum(["DRAFT", "PENDING", "APPROVED", "REJECTED"]));

/** Plan risk (seed 001 §4 "Risk": level > 3 fails, level 3 needs explicit approval). */
export const PlanRiskSchema = lazySchema(() => strictObject("plan.risk", {
  level: z.int().min(0).max(5),
  rationale: z.string().optional(),
}));

/** Tool scope (seed 001 §4 "Scope"): the tools the plan may use; `denied` wins over `allowed`. */
export const PlanScopeSchema = lazySchema(() => strictObject("plan.scope", {
  allowed: z.array(toolName()),
  denied: z.array(toolName()).optional(),
}));

/**
 * One step: one tool call (seed 002 "Executor executes exactly one plan step"). `return_spec` is the JSON
 * Schema the step's output must satisfy (seed 002); the plan gate requires it (`PLAN_RETURN_SPEC_MISSING`).
 */
export const PlanStepSchema = lazySchema(() => strictObject("plan.steps[]", {
  id: identifier(),
  tool: toolName(),
  arguments: jsonObject(),
  return_spec: jsonObject().optional(),
  description: z.string().optional(),
  depends_on: z.array(identifier()).optional(),
}).meta({ id: "PlanStep" }));

/** Execution limits the plan asks for; the pack's policies cap them. */
export const PlanExecutionSchema = lazySchema(() => strictObject("plan.execution", {
  max_steps: z.int().min(1).optional(),
  timeout_ms: z.int().min(1).optional(),
  step_timeout_ms: z.int().min(1).optional(),
}));

/** Approval record (seed 001 §4: explicit approval; `cli` = approved interactively, `record` = pre-recorded). */
export const PlanApprovalSchema = lazySchema(() => z.union([
  strictObject("plan.approval", {
    approved_by: z.string().min(1),
    approved_at: timestamp(),
    method: z.enum(["cli", "record"]),
    note: z.string().optional(),
  }),
  // A signed record (src/trust/approval.ts): the only kind that approves a risk-3 plan from inside the plan.
  strictObject("plan.approval (signed)", {
    type: z.literal("reach-wasm/plan-approval"),
    version: z.literal(1),
    planHash: z.string(),
    publicKey: z.string(),
    signature: z.string(),
  }),
]));

/** The plan document (seed 001 §3, seed 002). */
export const BlueprintSchema = lazySchema(() => strictObject("plan", {
  contract_version: z.literal(PLAN_CONTRACT_VERSION, { error: `plan.contract_version: expected "${PLAN_CONTRACT_VERSION}"` }),
  plan_id: identifier(),
  goal_id: identifier(),
  created_at: timestamp(),
  planner: z.string().min(1),
  status: PlanStatusSchema(),
  risk: PlanRiskSchema(),
  scope: PlanScopeSchema(),
  steps: z.array(PlanStepSchema()),
  execution: PlanExecutionSchema().optional(),
  approval: PlanApprovalSchema().optional(),
  success_criteria: z.array(z.string()),
}).meta({ description: "An OrchestrationBlueprint, plan contract S2-B-05.v1 (seed 001 §3, seed 002)" }));

/** A plan (OrchestrationBlueprint). */
export type Blueprint = z.output<ReturnType<typeof BlueprintSchema>>;
/** Alias in seed 000's words. */
export type OrchestrationBlueprint = Blueprint;
/** A plan step. */
export type PlanStep = z.output<ReturnType<typeof PlanStepSchema>>;
/** Plan status. */
export type PlanStatus = z.output<ReturnType<typeof PlanStatusSchema>>;
/** Plan risk. */
export type PlanRisk = z.output<ReturnType<typeof PlanRiskSchema>>;
/** Plan scope. */
export type PlanScope = z.output<ReturnType<typeof PlanScopeSchema>>;
/** Plan execution limits. */
export type PlanExecution = z.output<ReturnType<typeof PlanExecutionSchema>>;
/** Plan approval record. */
export type PlanApproval = z.output<ReturnType<typeof PlanApprovalSchema>>;
