/**
 * `reach-wasm report <capsule|run-dir> [--out FILE.html] [--trust FILE] [--json]`: one self-contained HTML page of
 * a run (`src/report/html.ts`), with the capsule's verification (every check, the proof signer) computed here.
 * Written atomically; default `<capsule without .capsule.tar.gz>.report.html` beside the capsule (a run directory:
 * `<dir>/report.html`). Exit 0 written (whatever the run's status or the verdict, which the page shows); 2 the
 * input cannot be read or the page cannot be written.
 * @module
 */
import { resolve } from "node:path";
import { renderReport } from "../report/mod.ts";
import { buildRunView } from "../report/mod.ts";
import { verifyForReport } from "../report/mod.ts";
import { writeFileAtomic } from "../platform/write.ts";
import { parseCommand } from "./options.ts";
import { REPORT } from "./specs-run.ts";
import type { CliIO } from "./io.ts";
import { createProgress } from "./progress.ts";
import { isLargeRun, readHostRun } from "./run-source.ts";
import { loadTrustStore } from "../platform/trust-file.ts";
import { VERSION } from "./version.ts";


function defaultOut(path: string, isCapsule: boolean): string {
  if (!isCapsule) return resolve(path, "report.html");
  return resolve(path.endsWith(".capsule.tar.gz") ? `${path.slice(0, -".capsule.tar.gz".length)}.report.html` : `${path}.report.html`);
}

/**
 * The `report` command.
 * @param argv arguments after `report`
 * @param io output streams
 * @returns the exit code
 * @throws ReachError `PROTO_INVALID_ARGUMENT` / `REPLAY_CAPSULE_*` (exit 2, reported by `main`)
 * @example await runReportCommand(["x.capsule.tar.gz", "--out", "x.html"], io) // 0
 */
export async function runReportCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals: positional } = parseCommand(REPORT, argv);
  const path = positional[0]!;
  const store = await loadTrustStore(values.trust);
  const progress = createProgress(io);
  let out: string;
  let summary: Record<string, unknown>;
  try {
    const announce = await isLargeRun(path);
    const run = await progress.task(`reading ${path}`, () => readHostRun(path), { announce });
    const capsule = run.capsule;
    const verification = capsule === null ? null : await progress.task("verifying the capsule", () => verifyForReport(capsule, store ?? undefined), { announce });
    const view = buildRunView(run.source);
    const html = renderReport(view, verification, { generator: `reach-wasm ${VERSION}` });
    out = values.out !== undefined ? resolve(values.out) : defaultOut(path, capsule !== null && run.path === path);
    const bytes = new TextEncoder().encode(html);
    await writeFileAtomic(out, bytes, 0o600); // it shows the run's inputs and outputs: private, like the capsule
    summary = { out, runHash: view.runHash, status: view.status, verified: verification === null ? null : verification.valid, bytes: bytes.length };
  } finally {
    progress.done();
  }
  io.stderr(`reach-wasm: report ${out} (${String(summary["status"])}, ${summary["verified"] === null ? "not verified" : summary["verified"] ? "verified" : "verification FAILED"})\n`);
  if (values.json) io.stdout(JSON.stringify(summary) + "\n");
  return 0;
}
