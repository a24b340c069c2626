/**
 * The planning phase of a run (seed 001 §4; `Run.plan`): the planner call, with the stop it was given recorded, and
 * the gate, which the plan passes only when it calls no infrastructure tool the run may not use and its step ids are
 * neither reserved nor used already in the run.
 * @module
 */
import { ReachError, toReachError } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import type { SandboxApiLevel } from "../sandbox/mod.ts";
import { inputOf, seedOf } from "./branch.ts";
import { FUEL_PER_MS } from "./executor.ts";
import { INFRA_TOOL_NAMES, infraRefusal } from "./infra-tools.ts";
import type { RunIntent } from "./intent.ts";
import { gatePlanAsync } from "./plan-gate.ts";
import type { GatedPlan } from "./plan-gate.ts";
import { makePlan, plannerContext, plannerInvocationId } from "./planner.ts";
import type { PlanRequestOptions, ReplanContext } from "./planner.ts";
import { Aborted, InfraRefused, stopOf } from "./run-stops.ts";
import type { RecordedStop } from "./run-stops.ts";
import { RESERVED_STEP_PREFIX } from "./types.ts";
import type { RunRequest } from "./types.ts";

/** What planning reads of the run (`Run` has it all), and where it records a stop. */
export type PlanningRun = {
  readonly request: RunRequest;
  readonly input: JsonValue;
  readonly seed: string;
  readonly epochMs: number;
  readonly query: string;
  readonly intent: RunIntent | null;
  readonly maxSteps: number;
  readonly sandboxApi: SandboxApiLevel;
  readonly stops: RecordedStop[];
  readonly usedStepIds: ReadonlySet<string>;
};

/**
 * Ask the planner for a plan (not yet gated); a stop a signal or the watchdog made in the planner's invocation is
 * recorded in the run's stops (replay reproduces it).
 * @param run the run
 * @param replan the replan state, when replanning
 * @param sandbox the run's QuickJS runner and what the planner's invocation shares with the run (its stops)
 * @returns the plan document (untrusted JSON: the gate checks it)
 * @throws Aborted when the run was aborted while the planner ran
 * @throws ReachError `PLAN_PLANNER_FAILED` when the planner fails
 */
export async function callPlanner(run: PlanningRun, replan: ReplanContext | undefined, sandbox: { quickjs: PlanRequestOptions["quickjs"]; state: NonNullable<PlanRequestOptions["state"]> }): Promise<unknown> {
  const { request } = run;
  const { loaded } = request;
  const attempt = replan?.attempt ?? 0;
  const context = plannerContext(loaded, run.maxSteps, replan, loaded.pack.intents === undefined ? undefined : { query: run.query, intent: run.intent });
  const invocationId = plannerInvocationId(loaded, run.seed, attempt);
  // A replan after a branch point sees the branch's input and seed (`branch.ts`).
  const replanId = `${RESERVED_STEP_PREFIX}replan.${attempt}`;
  const objective = attempt === 0 ? run.input : inputOf(request, replanId, run.input);
  const seed = attempt === 0 ? run.seed : seedOf(request, replanId, run.seed);
  try {
    return await makePlan({
      loaded,
      request: { context, objective, seed },
      epochMs: run.epochMs,
      quickjs: sandbox.quickjs,
      fuelPerMs: FUEL_PER_MS,
      sandboxApi: run.sandboxApi,
      state: sandbox.state,
    });
  } catch (err) {
    const e = toReachError(err, "PLAN_PLANNER_FAILED");
    const stop = stopOf(e.code === "EXEC_ABORTED" ? e : (e.cause as ReachError | undefined) ?? null);
    if (stop !== null) run.stops.push({ invocationId, ...stop });
    if (e.code === "EXEC_ABORTED") throw new Aborted(null);
    throw e;
  }
}

/**
 * Gate a plan (seed 001 §4), checking its step ids against those the run already used.
 * @param run the run
 * @param document the plan document the planner gave
 * @returns the gated plan
 * @throws InfraRefused when the plan calls an infrastructure tool the run may not use
 * @throws ReachError `PLAN_*` when the gate refuses the plan
 */
export async function gateRunPlan(run: PlanningRun, document: unknown): Promise<GatedPlan> {
  const { request } = run;
  const { loaded } = request;
  const g = await gatePlanAsync(document, {
    tools: new Set([...loaded.tools.keys(), ...INFRA_TOOL_NAMES]),
    maxSteps: run.maxSteps,
    approve: request.approve === true,
    // In a replay the approvals are the recorded ones, whose trust was decided (and recorded) at run time.
    approvals: { records: request.approvals ?? [], store: request.trustStore ?? null, anyKey: request.replay !== undefined },
    intent: { intent: run.intent, generates: new Map([...loaded.tools].map(([n, t]) => [n, "generates" in t.definition ? (t.definition.generates ?? []) : []])) },
    ...(request.env.documents === undefined ? {} : { documents: request.env.documents }),
  });
  const refused = infraRefusal(g.steps, request.infraTools);
  if (refused !== null) throw new InfraRefused(refused);
  for (const s of g.steps) {
    if (s.id.startsWith(RESERVED_STEP_PREFIX) || run.usedStepIds.has(s.id)) {
      throw new ReachError("PLAN_INVALID", `step id "${s.id}" is ${run.usedStepIds.has(s.id) ? "already used in this run" : `reserved (ids starting "${RESERVED_STEP_PREFIX}")`}; give the step another id`, {
        details: { stepId: s.id },
      });
    }
  }
  return g;
}
