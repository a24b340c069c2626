/**
 * The plan: `OrchestrationBlueprint` (seed 000 §2.1), with seed 001's plan contract S2-B-05.v1 and seed 002's
 * steps (`return_spec` per step, at most 10 steps by default).
 *
 * A plan lists its work as seed 001 §3 names it, `tasks` (`task_id`, `description`, `type`, `tools`, `paths`), or as
 * reach-wasm's `steps` (one tool call each) — one or the other. A task naming exactly one tool with `arguments`
 * executes like a step ({@link planSteps}); any other task is one the engine cannot execute, which the plan gate
 * refuses (`PLAN_TASK_NOT_EXECUTABLE`). Seed 001's own objects (the plan, `risk`, `scope`, `tasks[]`, `execution`,
 * `approval`) keep members this schema does not name: extension fields are part of the plan, hashed with it
 * (`plan.json`, `planHash`), never refused. `created_at` and `approval.approved_at` are RFC 3339 UTC timestamps,
 * with or without a fraction of a second. A step (ours) stays strict, so that a misspelt member is reported.
 *
 * This schema is deliberately permissive about what makes a plan *executable*: status, risk level, step count,
 * scope and the presence of `return_spec` are checked by the plan gate, which reports `PLAN_*` codes
 * (seed 001 §4). The schema only fixes the shape.
 * @module
 */
import { z } from "zod";
import { identifier, jsonObject, strictObject, timestamp, TOOL_NAME_RE, toolName } from "./_common.ts";
import type { JsonObject } from "./json.ts";
import { lazySchema } from "./_lazy.ts";

/** The plan contract version (seed 001). */
export const PLAN_CONTRACT_VERSION = "S2-B-05.v1";

/** Plan status (seed 001 §3; seed 002 "status pending"). Only `APPROVED` plans execute (plan gate). */
export const PlanStatusSchema = lazySchema(() => z.enum(["DRAFT", "PENDING", "APPROVED", "REJECTED"]));

/**
 * An RFC 3339 timestamp in UTC (`Z`), with or without a fraction of a second: `2025-12-21T15:21:25Z`,
 * `2025-12-21T15:21:25.123Z` (seed 001 §3 "created_at (UTC)").
 */
export const utcTimestamp = () =>
  z.iso.datetime({ error: "expected an RFC 3339 UTC timestamp such as 2025-12-21T15:21:25Z (a fraction of a second is optional)" });

/** Plan risk (seed 001 §4 "Risk": level > 3 fails, level 3 needs explicit approval); `notes` as seed 001's plans write it. */
export const PlanRiskSchema = lazySchema(() => z.looseObject({
  level: z.int().min(0).max(5),
  rationale: z.string().optional(),
  notes: z.string().optional(),
}));

/**
 * Scope (seed 001 §4 "Scope"): what the plan may do. A step or executable task runs only when its tool is in
 * `allowed` and in neither `denied` nor `forbidden` (seed 001's name); other entries (scope categories such as
 * `docs_update`) are kept as written.
 */
export const PlanScopeSchema = lazySchema(() => z.looseObject({
  allowed: z.array(z.string().min(1).max(128)),
  denied: z.array(z.string().min(1).max(128)).optional(),
  forbidden: z.array(z.string().min(1).max(128)).optional(),
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

/**
 * One task (seed 001 §3): `task_id`, `description`, `type`, `tools`, `paths`, as seed 001's plans write them. A task
 * whose `tools` names exactly one tool and which has `arguments` executes like a step (`return_spec` and `depends_on`
 * as a step's); other members are kept.
 */
export const PlanTaskSchema = lazySchema(() => z.looseObject({
  task_id: identifier(),
  description: z.string().optional(),
  type: z.string().optional(),
  tools: z.array(z.string().min(1).max(128)).optional(),
  paths: z.array(z.string()).optional(),
  arguments: jsonObject().optional(),
  return_spec: jsonObject().optional(),
  depends_on: z.array(identifier()).optional(),
}).meta({ id: "PlanTask" }));

/**
 * Execution (seed 001 §3): the limits the plan asks for (the pack's policies cap them), and seed 001's `mode`
 * (`sequential`; reach-wasm writes steps in plan order whatever it says) and `delegation`, kept as written.
 */
export const PlanExecutionSchema = lazySchema(() => z.looseObject({
  max_steps: z.int().min(1).optional(),
  timeout_ms: z.int().min(1).optional(),
  step_timeout_ms: z.int().min(1).optional(),
  mode: z.string().optional(),
}));

/**
 * Approval record (seed 001 §4: explicit approval; `cli` = approved interactively, `record` = pre-recorded), a signed
 * record, or seed 001's own form `{approved_by, approved_at, required}`. Only a signed record by a trusted key (or
 * `--approve`) approves a risk-3 plan for `run`; the others are kept as the planner's statement.
 */
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
  z.looseObject({
    approved_by: z.string().min(1).optional(),
    approved_at: utcTimestamp().optional(),
    required: z.boolean().optional(),
  }),
]));

/** The plan document (seed 001 §3, seed 002): its work as `tasks` or as `steps`, not both (the plan gate checks). */
export const BlueprintSchema = lazySchema(() => z.looseObject({
  contract_version: z.literal(PLAN_CONTRACT_VERSION, { error: `plan.contract_version: expected "${PLAN_CONTRACT_VERSION}"` }),
  plan_id: identifier(),
  goal_id: identifier(),
  created_at: utcTimestamp(),
  planner: z.string().min(1),
  status: PlanStatusSchema(),
  risk: PlanRiskSchema(),
  scope: PlanScopeSchema(),
  steps: z.array(PlanStepSchema()).optional(),
  tasks: z.array(PlanTaskSchema()).optional(),
  execution: PlanExecutionSchema().optional(),
  approval: PlanApprovalSchema().optional(),
  success_criteria: z.array(z.string()),
}).meta({ description: "An OrchestrationBlueprint, plan contract S2-B-05.v1 (seed 001 §3, seed 002)" }));

/** A plan (OrchestrationBlueprint). */
export type Blueprint = z.output<ReturnType<typeof BlueprintSchema>>;
/** Alias in seed 000's words. */
export type OrchestrationBlueprint = Blueprint;
/** A seed 001 task. */
export type PlanTask = z.output<ReturnType<typeof PlanTaskSchema>>;
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

/** Why a task cannot execute (`PLAN_TASK_NOT_EXECUTABLE`'s `reason`). */
export type TaskRefusal = "no_tool" | "several_tools" | "no_arguments" | "bad_tool_name";

/**
 * Whether the engine can execute a task, and why not: it must name exactly one tool (a tool name such as `fs.read`)
 * and carry `arguments`.
 * @param task a parsed task
 * @returns null when it executes like a step, else the reason and a sentence saying how to make it executable
 * @example taskRefusal({ task_id: "T1", tools: ["markdown"] }) // { reason: "no_arguments", … }
 */
export function taskRefusal(task: PlanTask): { reason: TaskRefusal; message: string } | null {
  const tools = task.tools ?? [];
  if (tools.length === 0) return { reason: "no_tool", message: "names no tool; give it \"tools\": [ONE_TOOL] and \"arguments\"" };
  if (tools.length > 1) return { reason: "several_tools", message: `names ${tools.length} tools (${tools.map((t) => JSON.stringify(t)).join(", ")}); a task the engine executes names exactly one tool — split it into one task per tool` };
  if (!TOOL_NAME_RE.test(tools[0]!)) return { reason: "bad_tool_name", message: `names ${JSON.stringify(tools[0])}, which is not a tool name (letters, digits, '.', '_', '-')` };
  if (task.arguments === undefined) return { reason: "no_arguments", message: `names tool ${JSON.stringify(tools[0])} but has no "arguments"; a task the engine executes carries the tool's arguments (an object) — without them it is work for a person or another orchestrator` };
  return null;
}

/**
 * A plan's work as the steps the engine executes: its `steps`, or each of its `tasks` as the step it stands for
 * (`task_id` → `id`, its one tool, `arguments`, `return_spec`, `description`, `depends_on`). Untyped JSON is read
 * too (a capsule's `plan.json`): then a task that cannot execute still gives a step with an empty tool.
 * @param plan a parsed plan (or a plan.json document)
 * @returns the steps, in plan order
 * @example planSteps({ tasks: [{ task_id: "T1", tools: ["echo"], arguments: {} }] }) // [{ id: "T1", tool: "echo", arguments: {} }]
 */
export function planSteps(plan: Pick<Blueprint, "steps" | "tasks">): PlanStep[] {
  if (Array.isArray(plan.steps)) return plan.steps;
  const tasks = Array.isArray(plan.tasks) ? plan.tasks : [];
  return tasks.map((t) => {
    const step: PlanStep = { id: String(t?.task_id), tool: String(Array.isArray(t?.tools) ? (t.tools[0] ?? "") : ""), arguments: (t?.arguments ?? {}) as JsonObject };
    if (t?.return_spec !== undefined) step.return_spec = t.return_spec;
    if (typeof t?.description === "string") step.description = t.description;
    if (Array.isArray(t?.depends_on)) step.depends_on = t.depends_on;
    return step;
  });
}
