/**
 * Writing a run's results (`reach-wasm run`): the capsule and the run files under `--out`, each written durably under
 * a temporary name first and put in place together only after a last look for a signal. A run whose signal came
 * while its results were being written is taken as still going (nothing of it is in place yet): its staged results
 * are dropped and the run is stopped at its end, ABORTED, and those results are written instead.
 * @module
 */
import { join } from "node:path";
import type { EngineRun } from "../engine/mod.ts";
import { loopTurn } from "../platform/loop-turn.ts";
import { stageDir, stageFile } from "../platform/write.ts";
import type { StagedWrite } from "../platform/write.ts";
import { ReachError } from "../protocol/mod.ts";

/** Where the results went (null where they could not be written, with the error). */
export type Written = { capsulePath: string | null; outDir: string | null; error: ReachError | null };

type Staged = { capsulePath: string; outDir: string; capsule: StagedWrite | null; dir: StagedWrite | null; error: ReachError | null };

const asError = (err: unknown): ReachError => (err instanceof ReachError ? err : new ReachError("PROTO_INVALID_ARGUMENT", String(err)));

/** Write the capsule and the run files under temporary names; a failure (a full disk) is kept, not thrown. */
function stage(outRoot: string, run: EngineRun): Staged {
  const staged: Staged = { capsulePath: join(outRoot, run.capsule.name), outDir: join(outRoot, "runs", run.runHash), capsule: null, dir: null, error: null };
  try {
    staged.capsule = stageFile(staged.capsulePath, run.capsule.bytes, 0o600, { within: outRoot });
    staged.dir = stageDir(staged.outDir, run.files, { within: outRoot, mode: 0o600 });
  } catch (err) {
    staged.error = asError(err);
  }
  return staged;
}

/** Put the staged results in place (the capsule first); a failure is reported, not thrown. */
function commit(s: Staged): Written {
  if (s.capsule === null) return { capsulePath: null, outDir: null, error: s.error };
  try {
    s.capsule.commit();
  } catch (err) {
    s.dir?.discard();
    return { capsulePath: null, outDir: null, error: asError(err) };
  }
  if (s.dir === null) return { capsulePath: s.capsulePath, outDir: null, error: s.error };
  try {
    s.dir.commit();
  } catch (err) {
    return { capsulePath: s.capsulePath, outDir: null, error: asError(err) };
  }
  return { capsulePath: s.capsulePath, outDir: s.outDir, error: null };
}

/**
 * Write a run's results, unless its signal came before they were in place: then the run is stopped at its end
 * (`stopAtEnd`, the run executed again) and those results are written.
 * @param outRoot `--out`
 * @param run the run as it ended
 * @param signal the run's signal
 * @param stopAtEnd executes the run again to stop it at its end, ABORTED (`stoppedAtEnd` of the platform)
 * @returns the run whose results were written, and where they went
 * @example const { run: final, written } = await writeRunResults(".reach", run, signal, (r) => again(r));
 */
export async function writeRunResults(outRoot: string, run: EngineRun, signal: AbortSignal, stopAtEnd: (run: EngineRun) => Promise<EngineRun>): Promise<{ run: EngineRun; written: Written }> {
  let staged = stage(outRoot, run);
  await loopTurn()(true); // the files were written synchronously: a signal that came meanwhile is handled now
  if (!signal.aborted || run.status === "ABORTED") return { run, written: commit(staged) };
  staged.capsule?.discard();
  staged.dir?.discard();
  const stopped = await stopAtEnd(run);
  staged = stage(outRoot, stopped);
  return { run: stopped, written: commit(staged) };
}
