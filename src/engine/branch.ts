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
import type { StopPoint } from "../sandbox/mod.ts";
import type { PackTool } from "./pack.ts";
import type { RunRequest } from "./types.ts";

/** Prefix of the body entries holding a branch's change files (tool builds, host responses) by SHA-256. */
export const BRANCH_FILE_PREFIX = "fork/";

/** A file a fork's change names: its SHA-256 and size (its bytes are the body entry `fork/<sha256>`). */
export type BranchFileRef = { sha256: string; size: number };

/**
 * `request.json`'s `forkedFrom`: the parent, the step the fork starts at, and what changed there; when the parent was
 * itself a fork, its own `forkedFrom` (whose changes still act, as they did in the parent).
 */
export type ForkedFrom = {
  runHash: string;
  step: string;
  forkedFrom?: ForkedFrom;
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

/** The changes of one fork (a fork of a fork has one per fork, the oldest first). */
export type BranchLayer = {
  /** The step the changes start at. */
  readonly at: string;
  /** The steps before it (the parent's): the layer's changes do not act on them. */
  readonly before: ReadonlySet<string>;
  readonly changes: BranchChanges;
};

/** A branched run (`RunRequest.branch`). */
export type Branch = {
  /**
   * The lineage members of `request.json` (committed by the run hash through `run.started.requestHash`): `forkedFrom`,
   * `resumedFrom`, or both (a resumed fork).
   */
  readonly lineage: { forkedFrom?: ForkedFrom; resumedFrom?: ResumedFrom };
  /** The change files by SHA-256 (body entries `fork/<sha256>`). */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The forks' changes, the oldest first (none for a resumed run that was not forked). */
  readonly layers: readonly BranchLayer[];
  /**
   * When the branch is made (not in its replay): the steps taken from the parent, which are played against the
   * parent's tape, with its recorded stops.
   */
  readonly prefix?: { readonly before: ReadonlySet<string>; readonly player: TapePlayer; readonly stops: ReadonlyMap<string, StopPoint> };
};

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
