/**
 * `reach-wasm diff <capsuleA> <capsuleB> [--json]`: where two runs first part ways and what else differs
 * (`src/report/diff.ts`). Exit 0 identical, 1 they differ, 2 either cannot be read.
 * @module
 */
import { diffRuns } from "../report/mod.ts";
import { renderDiff } from "../report/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { parseCommand } from "./options.ts";
import { DIFF } from "./specs-run.ts";
import { rawIO } from "./io.ts";
import type { CliIO } from "./io.ts";
import { colourStdout, createProgress } from "./progress.ts";
import { isLargeRun, readHostRun } from "./run-source.ts";


/**
 * The `diff` command.
 * @param argv arguments after `diff`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` / `REPLAY_CAPSULE_*` (exit 2, reported by `main`)
 * @example await runDiffCommand(["a.capsule.tar.gz", "b.capsule.tar.gz"], io) // 0 identical, 1 different
 */
export async function runDiffCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals: positional } = parseCommand(DIFF, argv);
  const progress = createProgress(io);
  let text: string;
  let identical: boolean;
  try {
    const [a, b] = await Promise.all(positional.map(async (p) => {
      const run = await progress.task(`reading ${p}`, () => readHostRun(p), { announce: await isLargeRun(p) });
      if (run.capsule === null) throw new ReachError("PROTO_INVALID_ARGUMENT", `diff: ${JSON.stringify(p)} is a run directory; diff compares capsules: give the <runHash>.capsule.tar.gz that run wrote beside runs/`);
      return run;
    }));
    const d = diffRuns(a!.source, b!.source);
    identical = d.identical;
    text = values.json ? JSON.stringify(d) + "\n" : renderDiff(d, { color: colourStdout(io) });
  } finally {
    progress.done();
  }
  // in colour, the text holds the painter's sequences, and every string from the capsule is escaped already
  (colourStdout(io) && !values.json ? rawIO(io) : io).stdout(text);
  return identical ? 0 : 1;
}
