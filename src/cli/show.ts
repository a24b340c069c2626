/**
 * `reach-wasm show <capsule|run-dir> [--json] [--full]`: a run as a terminal timeline (`src/report/show.ts`), or
 * with `--json` as one JSON object. Colour only when stdout is a TTY and `NO_COLOR` is not set.
 * Exit 0 shown; 2 the path is neither a capsule nor a run directory, or cannot be read.
 * @module
 */
import { buildRunView } from "../report/mod.ts";
import { renderShow } from "../report/mod.ts";
import { showJson } from "../report/mod.ts";
import { parseCommand } from "./options.ts";
import { SHOW } from "./specs-run.ts";
import { rawIO } from "./io.ts";
import type { CliIO } from "./io.ts";
import { colourStdout, createProgress } from "./progress.ts";
import { isLargeRun, readHostRun } from "./run-source.ts";


/**
 * The `show` command.
 * @param argv arguments after `show`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` / `REPLAY_CAPSULE_*` (exit 2, reported by `main`)
 * @example await runShowCommand(["x.capsule.tar.gz", "--json"], io) // 0
 */
export async function runShowCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals: positional } = parseCommand(SHOW, argv);
  const path = positional[0]!;
  const progress = createProgress(io);
  let text: string;
  try {
    const run = await progress.task(`reading ${path}`, () => readHostRun(path), { announce: await isLargeRun(path) });
    const view = buildRunView(run.source);
    const full = values.full;
    text = values.json ? JSON.stringify(showJson(view, { full })) + "\n" : renderShow(view, { color: colourStdout(io), full });
  } finally {
    progress.done();
  }
  // in colour, the text holds the painter's sequences, and every string from the capsule is escaped already
  (colourStdout(io) && !values.json ? rawIO(io) : io).stdout(text);
  return 0;
}
