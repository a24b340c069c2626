/**
 * A run branched off a recorded one (conformance/HASHING.md "Forks and resumed runs"): a **fork** re-enacts its
 * parent up to a step and runs on from there with changes (the step's arguments, the run input, a tool's build, a
 * host call's response, the seed); a **resume** continues an aborted or timed-out run after its last completed step.
 * Either keeps its parent's run id (its steps before the branch point are the parent's, invocation for invocation)
 * and commits its lineage in `request.json` (`forkedFrom` / `resumedFrom`), so its run hash differs from its
 * parent's and names it.
 *
 * The changes act on the steps from the branch point on, live and in a replay of the branched run alike; the steps
 * before it are, when the branch is made, played against the parent's tape (`prefix`), like a replay.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { TapePlayer } from "../record/player.ts";
import type { TapeOutcome } from "../record/tape.ts";
import type { StopPoint } from "../sandbox/fuel/mod.ts";
import type { PackTool } from "./pack.ts";
import type { RunRequest } from "./types.ts";

/** Prefix of the body entries holding a branch's change files (tool builds, host responses) by SHA-256. */
export const BRANCH_FILE_PREFIX = "fork/";

/** A file a fork's change names: its SHA-256 and size (its bytes are the body entry `fork/<sha256>`). */
export type BranchFileRef = { sha256: string; size: number };

/** `request.json`'s `forkedFrom`: the parent, the step the fork starts at, and what changed there. */
export type ForkedFrom = {
  runHash: string;
  step: string;
  changes: {
    arguments?: JsonObject;
    input?: JsonValue;
    seed?: string;
    tools?: ({ name: string } & BranchFileRef)[];
    responses?: ({ call: number } & BranchFileRef)[];
  };
};

/** `request.json`'s `resumedFrom`: the parent, how it ended, and the steps taken from it. */
export type ResumedFrom = { runHash: string; status: "ABORTED" | "FAILED"; completedSteps: string[] };

/** What a branch changes, from its step `at` on. */
export type BranchChanges = {
  /** The step's arguments (step `at` only). */
  arguments?: JsonObject;
  /** The run input (`$input` references, replans) from `at` on. */
  input?: JsonValue;
  /** The seed of the invocations' random streams from `at` on. */
  seed?: string;
  /** Other builds of tools, from `at` on. */
  tools?: ReadonlyMap<string, PackTool>;
  /** Step `at`'s host calls answered with these outcomes instead of running (1-based call numbers). */
  answers?: ReadonlyMap<number, TapeOutcome>;
};

/** A branched run (`RunRequest.branch`). */
export type Branch = {
  /** The lineage member of `request.json` (committed by the run hash through `run.started.requestHash`). */
  readonly lineage: { forkedFrom: ForkedFrom } | { resumedFrom: ResumedFrom };
  /** The change files by SHA-256 (body entries `fork/<sha256>`). */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The steps before the branch point (the parent's): no change acts on them. */
  readonly before: ReadonlySet<string>;
  /** The step the changes start at (null: a resume, which changes nothing). */
  readonly at: string | null;
  readonly changes: BranchChanges;
  /**
   * When the branch is made (not in its replay): the parent's tape and recorded stops, which the steps before the
   * branch point are played against.
   */
  readonly prefix?: { readonly player: TapePlayer; readonly stops: ReadonlyMap<string, StopPoint> };
};

/** Whether step `stepId` is at or after the branch point (changes act on it). */
function changed(branch: Branch | undefined, stepId: string): branch is Branch {
  return branch !== undefined && !branch.before.has(stepId);
}

/**
 * The run input a step sees: the branch's from its point on, else the run's.
 * @param request the run's request
 * @param stepId the step (a replan's id for a replan)
 * @param input the run's input
 * @returns the input
 */
export function inputOf(request: RunRequest, stepId: string, input: JsonValue): JsonValue {
  const b = request.branch;
  return changed(b, stepId) && b.changes.input !== undefined ? b.changes.input : input;
}

/**
 * The seed of a step's invocation: the branch's from its point on, else the run's.
 * @param request the run's request
 * @param stepId the step
 * @param seed the run's seed
 * @returns the seed
 */
export function seedOf(request: RunRequest, stepId: string, seed: string): string {
  const b = request.branch;
  return changed(b, stepId) && b.changes.seed !== undefined ? b.changes.seed : seed;
}

/**
 * The build of a tool a step runs: the branch's from its point on, else the pack's.
 * @param request the run's request
 * @param stepId the step
 * @param tool the pack's tool
 * @returns the tool
 */
export function toolOf(request: RunRequest, stepId: string, tool: PackTool): PackTool {
  const b = request.branch;
  return (changed(b, stepId) ? b.changes.tools?.get(tool.name) : undefined) ?? tool;
}

/**
 * A step's arguments: the branch's for its step, else the resolved ones.
 * @param request the run's request
 * @param stepId the step
 * @param resolved the arguments the plan gives it
 * @returns the arguments
 */
export function argumentsOf(request: RunRequest, stepId: string, resolved: JsonObject): JsonObject {
  const b = request.branch;
  return b !== undefined && b.at === stepId && b.changes.arguments !== undefined ? b.changes.arguments : resolved;
}

/**
 * The host calls of a step answered by the branch (its step only), as they cross to the step's thread.
 * @param request the run's request
 * @param stepId the step
 * @returns `[call number, outcome]` pairs, or null
 */
export function answersOf(request: RunRequest, stepId: string): [number, TapeOutcome][] | null {
  const b = request.branch;
  return b !== undefined && b.at === stepId && b.changes.answers !== undefined ? [...b.changes.answers] : null;
}

/**
 * The tape a step's invocation plays: while a branch is made, the parent's for the steps before its point and none
 * after (they run live); otherwise the run's (a replay's).
 * @param request the run's request
 * @param stepId the step
 * @returns the player, or undefined
 */
export function playerOf(request: RunRequest, stepId: string): TapePlayer | undefined {
  const b = request.branch;
  if (b?.prefix === undefined) return request.player;
  return b.before.has(stepId) ? b.prefix.player : undefined;
}

/**
 * Whether a step is played against the parent's tape while a branch is made (its watchdog is then as generous as
 * a replay's, and the parent's recorded stop applies).
 * @param request the run's request
 * @param stepId the step
 * @returns whether it is
 */
export function inPrefix(request: RunRequest, stepId: string): boolean {
  const b = request.branch;
  return b?.prefix !== undefined && b.before.has(stepId);
}
