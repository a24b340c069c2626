/**
 * What `RunRequest.observeStep` is told after each step is written into the run: the step and the run's workspace and
 * memory store as the written steps left them (the generation's ledger, `generation.ts`: the steps' commits composed
 * in plan order, which is the order the record writes them in). A replay uses it to show the state after each step
 * (`replay-states.ts`); nothing here is hashed or recorded.
 * @module
 */
import type { RunRequest } from "./types.ts";

/** What the observer reads of a run (`Run` has it; named here so this file does not import the run). */
export type ObservableRun = {
  readonly request: Pick<RunRequest, "observeStep">;
  readonly workspace: { contents(): { files: Map<string, Uint8Array>; links: Map<string, string> } };
  memoryEntries(): [string, string][];
};

/** The last contents read, per workspace object (the run keeps one object while its state does not change). */
const lastContents = new WeakMap<object, { files: Map<string, Uint8Array>; links: Map<string, string> }>();

/**
 * Tell the run's observer, if it has one, the state after the step just written.
 * @param run the run (its state includes the step's commits)
 * @param stepId the step's id
 * @param stepIndex its index among the run's steps (`run.step.started` `stepIndex`)
 */
export function observeStep(run: ObservableRun, stepId: string, stepIndex: number): void {
  const observe = run.request.observeStep;
  if (observe === undefined) return;
  const ws = run.workspace;
  let contents = lastContents.get(ws);
  if (contents === undefined) lastContents.set(ws, (contents = ws.contents()));
  observe({ stepId, stepIndex, workspace: { files: contents.files, links: contents.links }, memory: run.memoryEntries() });
}
