/**
 * The states a replay of the capsule observed (`RunSource.replayed`), joined with the ones the record gives
 * (`step-states.ts`). The replay is run outside `src/report/` (the CLI runs it through the engine) and handed in; it
 * is trusted only when it reproduced the recorded run as a whole (every event, the run hash, the workspace after), so
 * a state it gives is the recorded run's. Where the record gives a state too, both must agree: a step where they do
 * not is shown as not reconstructed, with both digests. A replay that did not reproduce the run gives nothing: each
 * step the record cannot give says why the replay could not either (a divergence, a redacted capsule). Internal to
 * `src/report/`.
 * @module
 */
import { changesBetween, memoryDigestOf, workspaceDigest } from "./_state-digests.ts";
import type { Snapshot } from "./_state-digests.ts";
import type { StepView } from "./_steps.ts";
import type { MemoryState, RunStates, StepState, WorkspaceState } from "./_state-types.ts";

/** The state after one step as a replay observed it (the engine's `ObservedStep`). */
export type ReplayedStep = {
  stepId: string;
  workspace: Snapshot;
  /** `[key, canonical value text]`. */
  memory: readonly (readonly [string, string])[];
};

/** What replaying a capsule gave: the states after its steps, in the record's step order, or why there are none. */
export type ReplayedRun = { matches: true; runHash: string; steps: readonly ReplayedStep[] } | { matches: false; reason: string };

/** What the record says the states are checked against. */
export type RecordedEnds = {
  /** The workspace before the first step, when it matches its recorded digest. */
  before: Snapshot | null;
  /** The memory the run started from, when well formed. */
  memoryStart: ReadonlyMap<string, string> | null;
  /** `workspaceAfter` of the terminal event. */
  after: string | null;
  /** `result.json` `session.memoryAfter`. */
  memoryAfter: string | null;
};

/**
 * Why a redacted capsule's states do not come from a replay, or null when it is not redacted (`capsule.json`
 * `redacted`: the steps whose values and the entries that were removed). A replay would compute what was removed
 * again, and the report would show it: so the report shows only what the capsule still holds, and says so per step.
 * @param index the capsule's index (read leniently)
 * @returns the reason, or null
 * @example redactionOf({ redacted: { steps: ["save"], entries: [] } }) // "the capsule is redacted (step "save") …"
 */
export function redactionOf(index: unknown): string | null {
  const r = index !== null && typeof index === "object" ? (index as { redacted?: unknown }).redacted : undefined;
  if (r === undefined || r === null || typeof r !== "object") return null;
  const steps = Array.isArray((r as { steps?: unknown }).steps) ? ((r as { steps: unknown[] }).steps).filter((x): x is string => typeof x === "string") : [];
  const entries = Array.isArray((r as { entries?: unknown }).entries) ? ((r as { entries: unknown[] }).entries).map((e) => (e !== null && typeof e === "object" ? (e as { path?: unknown }).path : null)).filter((x): x is string => typeof x === "string") : [];
  const what = [...steps.map((x) => `step ${JSON.stringify(x)}`), ...entries.map((x) => JSON.stringify(x))];
  const shown = what.length > 6 ? `${what.slice(0, 6).join(", ")} and ${what.length - 6} more` : what.join(", ");
  return `the capsule is redacted (${shown || "parts of it"}): the report does not replay it, so nothing removed is shown again`;
}

/** Every step the record cannot give says why the replay could not either. */
function fallBack(tape: RunStates, reason: string): RunStates {
  const why = (w: { known: false; reason: string }) => ({ known: false as const, reason: `${w.reason}; ${reason}` });
  return {
    steps: tape.steps.map((s) => ({ ...s, workspace: s.workspace.known ? s.workspace : why(s.workspace), memory: s.memory.known ? s.memory : why(s.memory) })),
    checks: [...tape.checks, reason],
    replay: { matches: false, reason },
  };
}

/** Why the replayed steps do not line up with the recorded ones, or null. */
function misaligned(steps: readonly StepView[], replayed: readonly ReplayedStep[]): string | null {
  if (replayed.length !== steps.length) return `the replay observed ${replayed.length} steps, the record has ${steps.length}`;
  const k = steps.findIndex((s, i) => s.stepId !== replayed[i]!.stepId);
  return k < 0 ? null : `the replay's step ${k + 1} is ${JSON.stringify(replayed[k]!.stepId)}, the record's ${JSON.stringify(steps[k]!.stepId)}`;
}

function workspaceOf(tape: WorkspaceState, r: ReplayedStep, position: number, checks: string[]): WorkspaceState {
  const digest = workspaceDigest(r.workspace);
  if (!tape.known) return { known: true, basis: "replay", checked: true, digest, files: new Map(r.workspace.files), links: new Map(r.workspace.links), changes: null };
  if (tape.digest === digest) return tape;
  const reason = `cannot reconstruct: the replay gives workspace ${digest} after step ${position + 1}, the record ${tape.digest}`;
  checks.push(`${reason} (they must agree)`);
  return { known: false, reason };
}

function memoryOf(tape: MemoryState, entries: ReadonlyMap<string, string>, previous: ReadonlyMap<string, string> | null, position: number, checks: string[]): MemoryState {
  const digest = memoryDigestOf(entries);
  if (tape.known) {
    if (memoryDigestOf(tape.entries) === digest) return tape;
    const reason = `cannot reconstruct: the replay and the recorded memory calls give different memory after step ${position + 1}`;
    checks.push(`${reason} (they must agree)`);
    return { known: false, reason };
  }
  const changed = previous === null ? null : [...entries].filter(([k, v]) => previous.get(k) !== v).map(([k]) => k);
  return { known: true, basis: "replay", checked: true, entries, changed };
}

/** The replay's last state must be the recorded end: a reason when it is not. */
function endProblem(last: ReplayedStep | undefined, ends: RecordedEnds): string | null {
  if (last === undefined) return null;
  if (ends.after !== null && workspaceDigest(last.workspace) !== ends.after) return "the replayed workspace after the last step is not the recorded workspaceAfter";
  if (ends.memoryAfter !== null && memoryDigestOf(new Map(last.memory)) !== ends.memoryAfter) return "the replayed memory after the last step is not result.json session.memoryAfter";
  return null;
}

/**
 * Join the states the record gives with a replay's.
 * @param steps the run's steps (the view's)
 * @param runHash the run's hash
 * @param tape the states from the record (`buildStepStates` without a replay)
 * @param replayed what the replay gave
 * @param ends what the states are checked against
 * @returns the states: each one the record gives (checked against the replay's), else the replay's, else why not
 */
export function joinReplayed(steps: readonly StepView[], runHash: string, tape: RunStates, replayed: ReplayedRun, ends: RecordedEnds): RunStates {
  if (!replayed.matches) return fallBack(tape, replayed.reason);
  if (replayed.runHash !== runHash) return fallBack(tape, `the replay handed in is of run ${replayed.runHash}, not of this run`);
  const problem = misaligned(steps, replayed.steps) ?? endProblem(replayed.steps[replayed.steps.length - 1], ends);
  if (problem !== null) return fallBack(tape, `the replay's states are not used: ${problem}`);
  const checks = [...tape.checks];
  let filled = 0;
  let memory = ends.memoryStart;
  const out: StepState[] = tape.steps.map((s, k) => {
    const r = replayed.steps[k]!;
    const entries = new Map(r.memory.map(([key, v]) => [key, v] as [string, string]));
    const state = { ...s, workspace: workspaceOf(s.workspace, r, k, checks), memory: memoryOf(s.memory, entries, memory, k, checks) };
    if (!s.workspace.known && state.workspace.known) filled++;
    if (!s.memory.known && state.memory.known) filled++;
    memory = entries;
    return state;
  });
  let prev: Snapshot | null = ends.before;
  for (const s of out) {
    if (s.workspace.known && s.workspace.changes === null && prev !== null) s.workspace = { ...s.workspace, changes: changesBetween(prev, s.workspace) };
    prev = s.workspace.known ? s.workspace : null;
  }
  const disagreed = checks.length - tape.checks.length;
  checks.push(`replaying the capsule reproduced the run hash, and its state after the last step is the recorded one; it gave ${filled} state${filled === 1 ? "" : "s"} the record does not, and ${disagreed === 0 ? "agrees with every one the record gives" : `disagrees with the record at ${disagreed}`}`);
  return { steps: out, checks, replay: { matches: true, reason: null } };
}
