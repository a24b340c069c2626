/**
 * `reach-wasm report <capsule|run-dir> [more...] [--out FILE.html | --out-dir DIR] [--trust FILE] [--no-replay] [--json]`:
 * one self-contained HTML page per run (`src/report/html.ts`), with the capsule's verification (every check, the proof
 * signer) computed here. When the record leaves the state after a step unknown (a WASI tool's writes), the capsule is
 * replayed through the engine and the states it observed are handed to the report (used only when the replay
 * reproduces the run hash); `--no-replay` shows the record's alone. Written atomically; default `<capsule without .capsule.tar.gz>.report.html` beside the
 * capsule (a run directory: `<dir>/report.html`). Runs reported together (several, or `--out-dir`) are written as
 * `DIR/<runHash>.report.html`, and each page links its parent (fork, resume, session) and its children among them. Exit 0 written (whatever the run's status or the verdict, which the page shows); 2 the
 * input cannot be read or the page cannot be written.
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { refuseOutputOverInput } from "../platform/files.ts";
import { ReachError } from "../protocol/mod.ts";
import { directParents, isRunHash, needsReplay, redactionOf, renderReport, reportFileName, statesJson } from "../report/mod.ts";
import { replayedStates } from "../engine/mod.ts";
import { defaultEnvironment } from "../host/mod.ts";
import { buildRunView } from "../report/mod.ts";
import { verifyForReport } from "../report/mod.ts";
import type { ChildLink, ReportVerification, RunView } from "../report/mod.ts";
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

/** The trust store `verifyForReport` judges a proof's signer with. */
type TrustStore = Parameters<typeof verifyForReport>[1];

type Reported = { view: RunView; verification: ReportVerification | null; path: string; isCapsule: boolean };

async function readReported(path: string, store: TrustStore | undefined, replay: boolean, io: CliIO): Promise<Reported> {
  const progress = createProgress(io);
  try {
    const announce = await isLargeRun(path);
    const run = await progress.task(`reading ${path}`, () => readHostRun(path), { announce });
    const capsule = run.capsule;
    const verification = capsule === null ? null : await progress.task("verifying the capsule", () => verifyForReport(capsule, store), { announce });
    let view = buildRunView(run.source);
    // What the record cannot say (a WASI tool's writes), a replay of the capsule gives: trusted only when it
    // reproduces the run (`replayedStates`); the report takes it as data.
    if (replay && capsule !== null && needsReplay(view)) {
      const redacted = redactionOf(capsule.index); // never replayed for the report: it would show what was removed
      const replayed = redacted !== null ? { matches: false as const, reason: redacted } : await progress.task("replaying for the state after each step", () => replayedStates(capsule, defaultEnvironment()), { announce: true });
      view = buildRunView({ ...run.source, replayed });
    }
    return { view, verification, path, isCapsule: capsule !== null && run.path === path };
  } finally {
    progress.done();
  }
}

/** Each run's children among the runs reported together (a fork, a resumed run, the next session run). */
function childrenOf(runs: readonly Reported[]): Map<string, ChildLink[]> {
  const out = new Map<string, ChildLink[]>();
  for (const r of runs) {
    for (const p of directParents(r.view.lineage)) {
      const list = out.get(p.runHash) ?? [];
      list.push({ runHash: r.view.runHash, relation: p.relation, step: p.step });
      out.set(p.runHash, list);
    }
  }
  return out;
}

function lineageHashes(v: RunView): string[] {
  return [...v.lineage.forkedFrom.map((f) => f.runHash), ...directParents(v.lineage).map((p) => p.runHash)];
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
  const { values, positionals } = parseCommand(REPORT, argv);
  const outDir = values["out-dir"];
  if (values.out !== undefined && (outDir !== undefined || positionals.length > 1)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", "--out names one page: with several runs (or --out-dir) each page is DIR/<runHash>.report.html; give --out-dir DIR instead");
  }
  if (values.out !== undefined) await refuseOutputOverInput(values.out, [positionals[0], values.trust], "write the page to another file, e.g. run.report.html");
  const store = (await loadTrustStore(values.trust)) ?? undefined;
  const runs: Reported[] = [];
  for (const path of positionals) runs.push(await readReported(path, store, values["no-replay"] !== true, io));
  const together = outDir !== undefined || runs.length > 1;
  const dir = resolve(outDir ?? dirname(resolve(positionals[0]!)));
  const pages = new Set(together ? runs.map((r) => r.view.runHash).filter(isRunHash) : []);
  const children = childrenOf(runs);
  const summaries: Record<string, unknown>[] = [];
  const written = new Map<string, string>();
  for (const r of runs) {
    const { view } = r;
    const first = written.get(view.runHash);
    if (first !== undefined) {
      // one page per run hash: a redacted copy keeps its run's hash, so it would replace the page just written
      io.stderr(`reach-wasm: note: ${r.path} has the run hash of ${first} (the same run, or a redacted copy of it); its page is ${first}'s — report it alone with --out FILE.html\n`);
      continue;
    }
    written.set(view.runHash, r.path);
    const file = reportFileName(view.runHash);
    if (together && file === null) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(r.path)} has no valid run hash, so its page cannot be named <runHash>.report.html; report it alone with --out FILE.html`);
    const out = together ? join(dir, file!) : values.out !== undefined ? resolve(values.out) : defaultOut(r.path, r.isCapsule);
    // alone, a page named by the rule links its parents by the same rule (their pages, when reported beside it)
    const linked = together ? pages : basename(out) === file ? new Set(lineageHashes(view)) : new Set<string>();
    const html = renderReport(view, r.verification, { generator: `reach-wasm ${VERSION}`, lineage: { pages: linked, children: children.get(view.runHash) ?? [] } });
    const bytes = new TextEncoder().encode(html);
    await writeFileAtomic(out, bytes, 0o600); // it shows the run's inputs and outputs: private, like the capsule
    const verified = r.verification === null ? null : r.verification.valid;
    io.stderr(`reach-wasm: report ${out} (${view.status}, ${verified === null ? "not verified" : verified ? "verified" : "verification FAILED"})\n`);
    summaries.push({ out, runHash: view.runHash, status: view.status, verified, bytes: bytes.length, children: children.get(view.runHash) ?? [], ...statesJson(view) });
  }
  if (values.json) io.stdout(JSON.stringify(summaries.length === 1 && !together ? summaries[0] : { reports: summaries }) + "\n");
  return 0;
}
