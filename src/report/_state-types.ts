/**
 * The types of a run's step-through states (`step-states.ts` builds them, `_replayed-states.ts` joins a replay's
 * into them), and the workspace snapshot both read: a file of their own, so neither builder imports the other's
 * types through the model. Internal to `src/report/`.
 * @module
 */

/** A workspace snapshot (files: path → bytes; links: path → target). */
export type WorkspaceView = { files: Map<string, Uint8Array>; links: Map<string, string> };

/** The changes between two snapshots, each list in path order. */
export type WorkspaceChanges = { added: string[]; removed: string[]; changed: string[]; unchanged: number };

/**
 * How a shown state is known: equal to a committed snapshot, derived from the tape (and checked or not), or observed
 * by a replay of the capsule that reproduced the run hash (`_replayed-states.ts`).
 */
export type StateBasis = "before" | "after" | "tape" | "replay";

/** A part of the state after a step: shown, or not with the reason. */
export type Known<T> = ({ known: true; basis: StateBasis; checked: boolean } & T) | { known: false; reason: string };

/** The workspace after a step (files: path → bytes; links: path → target). */
export type WorkspaceState = Known<{ digest: string; files: Map<string, Uint8Array>; links: Map<string, string>; changes: WorkspaceChanges | null }>;

/** The memory store after a step (key → canonical JSON text). */
export type MemoryState = Known<{ entries: ReadonlyMap<string, string>; changed: string[] | null }>;

/** The state after one step. */
export type StepState = { position: number; stepId: string; committed: boolean; workspace: WorkspaceState; memory: MemoryState };

/**
 * The states of a run, one per step, and what they were checked against; `replay` says whether a replay of the
 * capsule was handed in (null: the record alone) and, when it did not reproduce the run, why.
 */
export type RunStates = { steps: StepState[]; checks: string[]; replay: { matches: boolean; reason: string | null } | null };
