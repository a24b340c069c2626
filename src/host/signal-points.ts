/**
 * The test hook of `src/platform/signal-hook.ts` (`REACH_WASM_TEST_SIGNAL`) at the points a run's progress reports
 * mark: `progress:N`, `planning`, `planned`, `step:N`, `step-done:N`, `end` (see that module's notes).
 * @module
 */
import type { RunProgress } from "../engine/mod.ts";
import { signalAt, signalsWanted } from "../platform/signal-hook.ts";

/**
 * A progress callback that also fires the hook at the points a progress report marks (see the module notes).
 * @param onProgress the callback to wrap
 * @returns the callback, unchanged when the hook is off
 * @example const onProgress = progressSignals((p) => bar.update(p));
 */
export function progressSignals(onProgress: (p: RunProgress) => void): (p: RunProgress) => void {
  if (!signalsWanted()) return onProgress;
  let n = 0;
  return (p) => {
    onProgress(p);
    signalAt(...signalPoints(p, ++n));
  };
}

/**
 * The names of the point a progress report marks.
 * @param p the report
 * @param n its number in the run (from 1)
 * @returns the names
 * @example signalPoints({ kind: "planning", attempt: 0 }, 3) // ["progress:3", "planning"]
 */
export function signalPoints(p: RunProgress, n: number): string[] {
  const names = [`progress:${n}`];
  if (p.kind === "planning" || p.kind === "planned") names.push(p.kind);
  if (p.kind === "step") {
    names.push(p.status === "started" ? `step:${p.index + 1}` : `step-done:${p.index + 1}`);
    if (p.status !== "started" && p.index + 1 === p.total) names.push("end");
  }
  return names;
}
