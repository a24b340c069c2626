/**
 * The plan gate (seed 001 §4, §6; seed 002 "max 10 steps", `return_spec`): nothing executes unless every rule
 * holds. Rules, in the order they are checked (the first failure is reported):
 *
 * 1. the plan parses (`BlueprintSchema`) — `PLAN_INVALID`
 * 2. `status` is `APPROVED` — `PLAN_NOT_APPROVED`
 * 3. the work is `steps` or seed 001's `tasks`, not both; at least one, at most `maxSteps` (default 10; the pack's
 *    `run.maxSteps` or the caller may change it) — `PLAN_INVALID` / `PLAN_TOO_MANY_STEPS`; every task names exactly
 *    one tool and carries `arguments`, so that it executes like a step — `PLAN_TASK_NOT_EXECUTABLE` (details `taskId`,
 *    `reason`); step (task) ids are unique and `depends_on` names earlier ones — `PLAN_INVALID`
 * 4. `risk.level` > 3 fails — `PLAN_RISK_TOO_HIGH`; `risk.level` == 3 needs `--approve` or an `approval`
 *    record — `PLAN_APPROVAL_REQUIRED`
 * 5. every step's tool is declared with code in the manifest — else `POLICY_VIOLATION` with `violationType`
 *    `UNDEFINED_TOOL` (seed 003 §4.2 "only declared tools MAY be invoked", §4.3 the denial's code), refused here,
 *    before anything executes; and it is in the plan's `scope.allowed`, not in `scope.denied` — `PLAN_SCOPE_VIOLATION`
 * 6. every step has a `return_spec` that compiles — `PLAN_RETURN_SPEC_MISSING` / `PLAN_INVALID`
 * 7. every `{"$step": id, "pointer"}` argument names a step the step depends on, directly or transitively
 *    (`step-graph.ts`) — `PLAN_STEP_REFERENCE_INVALID` (details `reason`: `malformed`, `unknown` step, `self`, a
 *    `later` step, or `not_a_dependency`)
 * 8. for a generation intent (seed 004), some step uses a tool that generates one of its artifact types —
 *    `PLANNING_ERROR` (`intent.ts`)
 *
 * Members the schema does not name are kept (seed 001's extension fields; `plan.ts`), so the plan hash commits to them.
 *
 * The approved plan's hash (SHA-256 of its canonical JSON) is the lock: `checkPlanLock` refuses a plan whose hash
 * no longer matches (seed 001 §6, `PLAN_HASH_MISMATCH`).
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { policyViolation, ReachError } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { BlueprintSchema, planSteps, taskRefusal } from "../protocol/mod.ts";
import type { Blueprint, PlanStep } from "../protocol/mod.ts";
import { deepFreeze } from "./pack-document.ts";
import { validatedDocument } from "./document-cache.ts";
import type { DocumentStore } from "./document-cache.ts";
import { approvalPlanHash, approves } from "../trust/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import { compileSchema, isLiteSchema, loadFullValidator } from "./schema-check.ts";
import { stepReferences } from "./arguments.ts";
import { dependencyClosures, directDependencies } from "./step-graph.ts";
import { checkIntentPlan } from "./intent.ts";
import type { RunIntent } from "./intent.ts";
import type { JsonObject } from "../protocol/mod.ts";

/** Seed 002: a plan has at most 10 steps unless configured otherwise. */
export const DEFAULT_MAX_STEPS = 10;
/** Highest risk level that may run at all (seed 001 §4). */
export const MAX_RISK_LEVEL = 3;

/** What the gate checks a plan against. */
export type GateOptions = {
  /** Tools declared in the manifest that have code. */
  tools: ReadonlySet<string>;
  /** Most steps (default 10). */
  maxSteps?: number;
  /** Explicit approval given by the user (`--approve`). */
  approve?: boolean;
  /**
   * Signed approval records (`--approval FILE`; `src/trust/approval.ts`) and the trust store that decides whose
   * signatures count (`anyKey` in replay, where that decision was recorded at run time).
   */
  approvals?: { records: readonly unknown[]; store: TrustStore | null; anyKey?: boolean };
  /** The run's intent and the MIME types each tool generates (seed 004 plan validation). */
  intent?: { intent: RunIntent | null; generates: ReadonlyMap<string, readonly string[]> };
  /** Where validated plans are kept (`document-cache.ts`; `gatePlanAsync` only; default: validate every time). */
  documents?: DocumentStore;
};

/** A plan that passed the gate, with its lock. */
export type GatedPlan = {
  readonly plan: Blueprint;
  /** What executes: the plan's steps, or its tasks as steps (`planSteps`), in plan order. */
  readonly steps: readonly PlanStep[];
  /** SHA-256 of the canonical plan. */
  readonly planHash: string;
  /** How a risk-3 plan was approved, or null when no approval was needed. */
  readonly approvedBy: "cli" | "record" | null;
};

function refuse(code: "PLAN_TASK_NOT_EXECUTABLE" | "PLAN_STEP_REFERENCE_INVALID" | "PLAN_INVALID" | "PLAN_NOT_APPROVED" | "PLAN_TOO_MANY_STEPS" | "PLAN_RISK_TOO_HIGH" | "PLAN_APPROVAL_REQUIRED" | "PLAN_SCOPE_VIOLATION" | "PLAN_RETURN_SPEC_MISSING", message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError(code, message, { details });
}

/**
 * Check a plan and lock it.
 * @param document the plan as produced by the planner (untrusted JSON)
 * @param options the manifest's tools, the step limit and the user's approval
 * @returns the frozen plan and its hash
 * @throws ReachError with a `PLAN_*` code naming the first rule that failed and how to fix it
 * @throws Error when a `return_spec` needs the full validator and `loadFullValidator()` was not awaited (use {@link gatePlanAsync})
 */
export function gatePlan(document: unknown, options: GateOptions): GatedPlan {
  return gateParsed(parsePlan(document), options);
}

function parsePlan(document: unknown): Blueprint {
  const plan = parseOrThrow(BlueprintSchema(), document, "PLAN_INVALID", "the plan");
  // The schema's record drops a "__proto__" member of a step's arguments: keep the arguments the schema accepted as
  // written, so the tool gets every member the plan gives it (conformance/HASHING.md "What a tool sees").
  const doc = document as { steps?: { arguments?: unknown }[]; tasks?: Record<string, unknown>[] };
  const hasProto = (v: unknown): boolean => v !== null && typeof v === "object" && Object.prototype.hasOwnProperty.call(v, "__proto__");
  plan.steps?.forEach((step, i) => {
    const written = doc.steps?.[i]?.arguments;
    if (hasProto(written)) step.arguments = written as typeof step.arguments;
  });
  plan.tasks?.forEach((task, i) => {
    const written = doc.tasks?.[i]?.["arguments"];
    if (hasProto(written)) task.arguments = written as typeof task.arguments;
  });
  // An extension member named "__proto__" of seed 001's objects is kept too, as an own member (hashed with the plan).
  const keep = (out: unknown, written: unknown): void => {
    if (hasProto(written) && out !== null && typeof out === "object") Object.defineProperty(out, "__proto__", { value: (written as Record<string, unknown>)["__proto__"], enumerable: true, writable: true, configurable: true });
  };
  const w = document as Record<string, unknown>;
  keep(plan, w);
  for (const k of ["risk", "scope", "execution", "approval"] as const) keep(plan[k], w[k]);
  plan.tasks?.forEach((task, i) => keep(task, doc.tasks?.[i]));
  return plan;
}

/** Rule 3: the plan's work — steps, or tasks that each execute like a step — and its size. */
function workOf(plan: Blueprint, maxSteps: number): PlanStep[] {
  if (plan.steps !== undefined && plan.tasks !== undefined) throw refuse("PLAN_INVALID", "the plan has both steps and tasks; write its work as one or the other (seed 001 names it tasks)");
  const kind = plan.tasks !== undefined ? "tasks" : "steps";
  const steps = planSteps(plan);
  if (steps.length === 0) throw refuse("PLAN_INVALID", `the plan has no ${kind}; a plan needs at least one ${kind === "tasks" ? "task (seed 001 §4)" : "step"}`);
  if (steps.length > maxSteps) {
    throw refuse("PLAN_TOO_MANY_STEPS", `the plan has ${steps.length} ${kind}; at most ${maxSteps} are allowed — split the objective or raise run.maxSteps in reach.json`, {
      steps: steps.length,
      maxSteps,
    });
  }
  for (const [i, task] of (plan.tasks ?? []).entries()) {
    const why = taskRefusal(task);
    if (why !== null) {
      throw refuse("PLAN_TASK_NOT_EXECUTABLE", `tasks[${i}] ("${task.task_id}") ${why.message}; reach-wasm executes a task that names exactly one tool and carries its "arguments" (seed 001 §3 tasks); nothing was executed`, {
        taskId: task.task_id,
        reason: why.reason,
      });
    }
  }
  return steps;
}

function gateParsed(parsed: Blueprint, options: GateOptions): GatedPlan {
  const plan = deepFreeze(parsed);
  if (plan.status !== "APPROVED") {
    throw refuse("PLAN_NOT_APPROVED", `the plan's status is ${plan.status}; only an APPROVED plan executes (seed 001 §4)`, { status: plan.status });
  }
  const steps = workOf(plan, options.maxSteps ?? DEFAULT_MAX_STEPS);
  const kind = plan.tasks !== undefined ? "tasks" : "steps";
  const seen = new Set<string>();
  for (const [i, step] of steps.entries()) {
    if (seen.has(step.id)) throw refuse("PLAN_INVALID", `${kind}[${i}]: ${kind === "tasks" ? "task" : "step"} id "${step.id}" is used twice; ids must be unique`, { stepId: step.id });
    for (const dep of step.depends_on ?? []) {
      if (!seen.has(dep)) throw refuse("PLAN_INVALID", `${kind}[${i}] ("${step.id}") depends on "${dep}", which is not an earlier ${kind === "tasks" ? "task" : "step"}`, { stepId: step.id, dependsOn: dep });
    }
    seen.add(step.id);
  }
  if (plan.risk.level > MAX_RISK_LEVEL) {
    throw refuse("PLAN_RISK_TOO_HIGH", `the plan's risk level is ${plan.risk.level}; plans above ${MAX_RISK_LEVEL} never execute (seed 001 §4)`, { riskLevel: plan.risk.level });
  }
  let approvedBy: GatedPlan["approvedBy"] = null;
  if (plan.risk.level === MAX_RISK_LEVEL) approvedBy = approval(plan, options);
  const allowed = new Set(plan.scope.allowed);
  const denied = new Set([...(plan.scope.denied ?? []), ...(plan.scope.forbidden ?? [])]);
  for (const [i, step] of steps.entries()) {
    const where = `${kind}[${i}] ("${step.id}")`;
    if (!options.tools.has(step.tool)) {
      throw policyViolation("UNDEFINED_TOOL", step.tool, `${where} uses tool "${step.tool}", which the pack's manifest does not declare (or has no code for); nothing was executed — declare it in manifest.capabilities.tools and "tools", or plan without it`, {
        stepId: step.id,
        tool: step.tool,
        stage: "plan",
      });
    }
    if (!allowed.has(step.tool) || denied.has(step.tool)) {
      throw refuse("PLAN_SCOPE_VIOLATION", `${where} uses tool "${step.tool}", which is ${denied.has(step.tool) ? "in the plan's scope.denied/forbidden" : "outside the plan's scope.allowed"}; the orchestrator executes only the approved scope`, {
        stepId: step.id,
        tool: step.tool,
      });
    }
    if (step.return_spec === undefined) {
      throw refuse("PLAN_RETURN_SPEC_MISSING", `${where} has no return_spec; every step needs a JSON Schema for its output (seed 002)`, { stepId: step.id });
    }
    try {
      compileSchema(step.return_spec);
    } catch (err) {
      throw refuse("PLAN_INVALID", `${where}: return_spec: ${(err as Error).message}`, { stepId: step.id });
    }
  }
  checkStepReferences(steps);
  if (options.intent !== undefined) checkIntentPlan(steps, options.intent.intent, options.intent.generates);
  return Object.freeze({ plan, steps: Object.freeze(steps), planHash: hashCanonical(plan), approvedBy });
}

/** Rule 7: a step reads only the outputs of steps in its dependency closure. */
function checkStepReferences(steps: readonly PlanStep[]): void {
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const closures = dependencyClosures(directDependencies(steps));
  for (const [i, step] of steps.entries()) {
    for (const ref of stepReferences(step.arguments as JsonObject, step.id)) {
      const at = index.get(ref.step);
      const reason = at === undefined ? "unknown" : at === i ? "self" : at > i ? "later" : closures[i]!.includes(at) ? null : "not_a_dependency";
      if (reason === null) continue;
      const why = {
        unknown: `names step "${ref.step}", which is not in the plan`,
        self: "names the step itself, which has no output before it runs",
        later: `names step "${ref.step}", which comes later in the plan and has no output yet`,
        not_a_dependency: `names step "${ref.step}", which step "${step.id}" does not depend on; add "${ref.step}" to its depends_on`,
      }[reason];
      throw refuse("PLAN_STEP_REFERENCE_INVALID", `${ref.where}: {"$step": ${JSON.stringify(ref.step)}} ${why} (a step reads only the outputs of the steps it depends on)`, {
        stepId: step.id,
        ref: ref.step,
        pointer: ref.pointer,
        reason,
      });
    }
  }
}

/**
 * Who approved a risk-3 plan: the user (`--approve`), or a record signed by a trusted key over the plan's hash —
 * supplied with the run or carried in the plan. An `approval` object the plan carries without such a signature does
 * not count: a planner could have written it.
 */
function approval(plan: Blueprint, options: GateOptions): "cli" | "record" {
  if (options.approve === true) return "cli";
  const planHash = approvalPlanHash(plan as unknown as Record<string, unknown>);
  const records = [...(options.approvals?.records ?? []), ...(plan.approval === undefined ? [] : [plan.approval])];
  const store = options.approvals?.store ?? null;
  if (records.some((r) => approves(r, planHash, store, options.approvals?.anyKey === true) !== null)) return "record";
  throw refuse("PLAN_APPROVAL_REQUIRED", `the plan's risk level is ${MAX_RISK_LEVEL}: it needs explicit approval from outside the plan — run again with --approve, or sign its hash with \`reach-wasm approve ${planHash} --key KEY --out approval.json\` (a key in the trust store) and pass --approval approval.json; an approval the plan carries itself counts only when such a key signed it`, {
    riskLevel: plan.risk.level,
    planHash,
  });
}

/**
 * {@link gatePlan}, loading the full JSON Schema validator first when a `return_spec` needs it; the schema's verdict
 * on a plan validated before comes from the validated-document cache (`document-cache.ts`).
 * @param document the plan
 * @param options as for gatePlan
 * @returns the gated plan
 */
export async function gatePlanAsync(document: unknown, options: GateOptions): Promise<GatedPlan> {
  const d = document as { steps?: unknown; tasks?: unknown } | null;
  const steps = d?.steps ?? d?.tasks;
  if (Array.isArray(steps) && steps.some((s) => s !== null && typeof s === "object" && typeof (s as { return_spec?: unknown }).return_spec === "object" && (s as { return_spec: unknown }).return_spec !== null && !isLiteSchema((s as { return_spec: Record<string, unknown> }).return_spec))) {
    await loadFullValidator();
  }
  return gateParsed(await validatedDocument("plan", document, () => parsePlan(document), options.documents), options);
}

/**
 * Refuse a plan whose canonical hash is not the locked one (seed 001 §6).
 * @param plan the plan about to execute
 * @param lockedHash the hash recorded when the plan was approved
 * @throws ReachError `PLAN_HASH_MISMATCH`
 */
export function checkPlanLock(plan: Blueprint, lockedHash: string): void {
  const now = hashCanonical(plan);
  if (now !== lockedHash) {
    throw new ReachError("PLAN_HASH_MISMATCH", `the plan changed after approval (hash ${now}, locked ${lockedHash}); execution refused — approve the new plan`, {
      details: { planHash: now, lockedHash },
    });
  }
}
