/**
 * The types of a run branched off a recorded one (`branch.ts`): its lineage as `request.json` commits it, its changes,
 * and how the engine holds them (`RunRequest.branch`).
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import type { TapeOutcome, TapePlayer } from "../record/mod.ts";
import type { StopPoint } from "../sandbox/mod.ts";
import type { PackTool } from "./pack.ts";

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
