/**
 * `pack validate`'s plan check: a pack's static plan through the plan gate the way `run` gates it (seed 001 §4;
 * `plan-gate.ts`) — the pack's declared tools and the infrastructure tools, its `run.maxSteps`, step ids not reserved
 * — before anything runs. Two things only a run has are left to the run: the user's approval of a risk-3 plan
 * (`--approve`, `--approval`; reported as `approvalRequired`) and the query's intent (seed 004, from the run input).
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { DEFAULT_MAX_STEPS, gatePlanAsync, MAX_RISK_LEVEL } from "./plan-gate.ts";
import { INFRA_TOOL_NAMES } from "./infra-tools.ts";
import type { LoadedPack } from "./pack.ts";
import { RESERVED_STEP_PREFIX } from "./types.ts";
import { planLock } from "./task-files.ts";

/** What `pack validate` says of a static plan that passed. */
export type StaticPlanCheck = {
  planId: string;
  /** SHA-256 of the canonical plan (`run.started`'s `planHash`). */
  planHash: string;
  /** SHA-256 of the plan file's bytes as read (the execution header's `plan_sha256`, seed 001 §6). */
  planSha256: string;
  /** `steps` or `tasks`. */
  work: "steps" | "tasks";
  steps: number;
  /** A risk-3 plan: `run` needs `--approve` or a trusted signed approval. */
  approvalRequired: boolean;
};

/**
 * Gate a pack's static plan as `run` would.
 * @param loaded the pack
 * @returns null when the entrypoint is a planner module, else what was checked
 * @throws ReachError the `PLAN_*` code (or `POLICY_VIOLATION` `UNDEFINED_TOOL`) `run` would refuse the plan with
 */
export async function checkStaticPlan(loaded: LoadedPack): Promise<StaticPlanCheck | null> {
  if (loaded.entrypoint.kind !== "plan") return null;
  const g = await gatePlanAsync(loaded.entrypoint.document, {
    tools: new Set([...loaded.tools.keys(), ...INFRA_TOOL_NAMES]),
    maxSteps: loaded.pack.run?.maxSteps ?? DEFAULT_MAX_STEPS,
    approve: true, // the approval is the run's to give: reported below, not refused
  });
  for (const s of g.steps) {
    if (s.id.startsWith(RESERVED_STEP_PREFIX)) {
      throw new ReachError("PLAN_INVALID", `step id "${s.id}" is reserved (ids starting "${RESERVED_STEP_PREFIX}"); give the step another id`, { details: { stepId: s.id } });
    }
  }
  return {
    planId: g.plan.plan_id,
    planHash: g.planHash,
    planSha256: planLock(loaded, g.plan, false).plan_sha256!,
    work: g.plan.tasks !== undefined ? "tasks" : "steps",
    steps: g.steps.length,
    approvalRequired: g.plan.risk.level === MAX_RISK_LEVEL,
  };
}
