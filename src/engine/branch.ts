/**
 * A run branched off a recorded one (conformance/HASHING.md "Forks and resumed runs"): a **fork** re-enacts its
 * parent up to a step and runs on from there with changes (the step's arguments, the run input, a tool's build, a
 * host call's response, the seed); a **resume** continues an aborted or timed-out run after its last completed step.
 * A fork of a fork keeps its parent's changes (they act as they did in the parent) and adds its own, which win where
 * both change the same thing. Either keeps its parent's run id (its steps before the branch point are the parent's, invocation for invocation)
 * and commits its lineage in `request.json` (`forkedFrom` / `resumedFrom`), so its run hash differs from its
 * parent's and names it.
 *
 * The changes act on the steps from the branch point on, live and in a replay of the branched run alike; the steps
 * before it are, when the branch is made, played against the parent's tape (`prefix`), like a replay.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import type { TapePlayer } from "../record/mod.ts";
import type { TapeOutcome } from "../record/mod.ts";
import type { PackTool } from "./pack.ts";
import type { RunRequest } from "./types.ts";

export * from "./branch-types.ts";
import type { BranchLayer } from "./branch-types.ts";

/** The newest change `pick` finds among the layers that act on step `stepId`. */
function latest<T>(request: RunRequest, stepId: string, pick: (l: BranchLayer) => T | undefined): T | undefined {
  const layers = request.branch?.layers ?? [];
  for (let i = layers.length - 1; i >= 0; i--) {
    const l = layers[i]!;
    if (l.before.has(stepId)) continue;
    const v = pick(l);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * The run input a step sees: the branch's from its point on, else the run's.
 * @param request the run's request
 * @param stepId the step (a replan's id for a replan)
 * @param input the run's input
 * @returns the input
 */
export function inputOf(request: RunRequest, stepId: string, input: JsonValue): JsonValue {
  const found = latest<{ v: JsonValue }>(request, stepId, (l) => (Object.hasOwn(l.changes, "input") && l.changes.input !== undefined ? { v: l.changes.input } : undefined));
  return found === undefined ? input : found.v;
}

/**
 * The seed of a step's invocation: the branch's from its point on, else the run's.
 * @param request the run's request
 * @param stepId the step
 * @param seed the run's seed
 * @returns the seed
 */
export function seedOf(request: RunRequest, stepId: string, seed: string): string {
  return latest(request, stepId, (l) => l.changes.seed) ?? seed;
}

/**
 * The build of a tool a step runs: the branch's from its point on, else the pack's.
 * @param request the run's request
 * @param stepId the step
 * @param tool the pack's tool
 * @returns the tool
 */
export function toolOf(request: RunRequest, stepId: string, tool: PackTool): PackTool {
  return latest(request, stepId, (l) => l.changes.tools?.get(tool.name)) ?? tool;
}

/**
 * A step's arguments: the branch's for its step, else the resolved ones.
 * @param request the run's request
 * @param stepId the step
 * @param resolved the arguments the plan gives it
 * @returns the arguments
 */
export function argumentsOf(request: RunRequest, stepId: string, resolved: JsonObject): JsonObject {
  return latest(request, stepId, (l) => (l.at === stepId ? l.changes.arguments : undefined)) ?? resolved;
}

/**
 * The host calls of a step answered by the branch (its step only), as they cross to the step's thread.
 * @param request the run's request
 * @param stepId the step
 * @returns `[call number, outcome]` pairs, or null
 */
export function answersOf(request: RunRequest, stepId: string): [number, TapeOutcome][] | null {
  const answers = latest(request, stepId, (l) => (l.at === stepId ? l.changes.answers : undefined));
  return answers === undefined ? null : [...answers];
}

/**
 * The tape a step's invocation plays: while a branch is made, the parent's for the steps before its point and none
 * after (they run live); otherwise the run's (a replay's).
 * @param request the run's request
 * @param stepId the step
 * @returns the player, or undefined
 */
export function playerOf(request: RunRequest, stepId: string): TapePlayer | undefined {
  const prefix = request.branch?.prefix;
  if (prefix === undefined) return request.player;
  return prefix.before.has(stepId) ? prefix.player : undefined;
}

/**
 * Whether a step is played against the parent's tape while a branch is made (its watchdog is then as generous as
 * a replay's, and the parent's recorded stop applies).
 * @param request the run's request
 * @param stepId the step
 * @returns whether it is
 */
export function inPrefix(request: RunRequest, stepId: string): boolean {
  return request.branch?.prefix?.before.has(stepId) === true;
}
