/**
 * The step-through as JSON (`reach-wasm report --json`): for each step, the workspace after it (each file's path,
 * size and SHA-256, each link's target, what the step added, changed or removed) and the memory store after it (key →
 * value), or `{known: false, reason}`; whether a replay of the capsule filled in what the record does not say (`replay`:
 * null when none was run); and the run's lineage. File contents are not repeated here: each file's
 * SHA-256 names its bytes in the capsule.
 * @module
 */
import { fileSha256 } from "./step-states.ts";
import type { MemoryState, StepState, WorkspaceState } from "./step-states.ts";
import type { RunView } from "./model.ts";

function workspaceJson(w: WorkspaceState): Record<string, unknown> {
  if (!w.known) return { known: false, reason: w.reason };
  const paths = [...w.files.keys(), ...w.links.keys()].sort();
  return {
    known: true,
    basis: w.basis,
    checked: w.checked,
    digest: w.digest,
    entries: paths.map((path) => {
      const f = w.files.get(path);
      return f === undefined ? { path, type: "symlink", target: w.links.get(path)! } : { path, type: "file", size: f.length, sha256: fileSha256(f) };
    }),
    changes: w.changes === null ? null : { added: w.changes.added, changed: w.changes.changed, removed: w.changes.removed },
  };
}

function memoryJson(m: MemoryState): Record<string, unknown> {
  if (!m.known) return { known: false, reason: m.reason };
  const entries = [...m.entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([key, text]) => ({ key, value: JSON.parse(text) as unknown }));
  return { known: true, basis: m.basis, checked: m.checked, entries, changed: m.changed };
}

function stepJson(s: StepState): Record<string, unknown> {
  return { position: s.position, stepId: s.stepId, committed: s.committed, workspace: workspaceJson(s.workspace), memory: memoryJson(s.memory) };
}

/**
 * The states and lineage of a run as JSON.
 * @param view the run (`buildRunView`)
 * @returns `{lineage, checks, states: [...]}`
 * @example statesJson(view).states[0].memory.known
 */
export function statesJson(view: RunView): Record<string, unknown> {
  return { lineage: view.lineage, checks: view.states.checks, replay: view.states.replay, states: view.states.steps.map(stepJson) };
}

/**
 * Whether the record leaves the workspace or the memory after some step unknown (a replay of the capsule may give it).
 * @param view the run
 * @returns true when a state is not known
 * @example if (needsReplay(view)) view = buildRunView({ ...source, replayed: await replayedStates(capsule, env) })
 */
export function needsReplay(view: RunView): boolean {
  return view.states.replay === null && view.states.steps.some((s) => !s.workspace.known || !s.memory.known);
}
