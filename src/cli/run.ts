/**
 * `reach-wasm run <pack-dir|pack.tar.gz> [--input FILE|-|JSON] [--seed N] [--out DIR] [--key FILE] [--approve]
 * [--unrestricted] [--trust FILE] [--max-steps N] [--step-timeout MS] [--parallel N] [--request-id ID] [--events FILE|-] [--heartbeat MS] [--quiet] [--json]` (ARCHITECTURE.md
 * "Command line"); with `--on`, the delegated run (`delegated-run.ts`, dispatched by `cli.ts`).
 *
 * The command only parses arguments, hands the run to the engine (`runIsolated`: on this thread first, on an engine
 * thread once a tool holds this one longer than {@link INLINE_FIRST_MS}) and writes the results: the capsule and the
 * run files under `--out`, atomically. SIGINT/SIGTERM from the moment the run starts end it ABORTED, never COMPLETED:
 * at the next check (before the next step, before its terminal state), while a tool computes here once the run has
 * moved to a thread, at once on a thread; a signal after the run's last check but before its results are in place
 * (`run-results.ts`) runs it again to stop there (`stoppedAtEnd`). Before the handlers are installed a signal ends the
 * process (exit 130/143), with nothing written; after the results are in place it stops nothing and is reported. `--out` is checked before the run starts. Progress goes to stderr;
 * `--json` prints one object on stdout: `{"runId","status","runHash","capsule","out","error"?,"writeError"?}`.
 * Exit 0 COMPLETED, 1 FAILED or ABORTED (or the results could not be written), 2 bad invocation or invalid input.
 * A second signal exits at once (130 / 143), leaving no partial file.
 * @module
 */
import type { EngineRun } from "../engine/mod.ts";
import { runIsolated } from "../host/mod.ts";
import { coreCount } from "../platform/threads.ts";
import { readHostFile, readPrivateKeyFile } from "../platform/files.ts";
import { prepareOutDir } from "../platform/out-dir.ts";
import { readPackFiles } from "../host/mod.ts";
import { readTrustStoreText } from "../platform/trust-file.ts";
import { loopTurn } from "../platform/loop-turn.ts";
import { signalAt } from "../platform/signal-hook.ts";
import { progressSignals } from "../host/mod.ts";
import { abortOnSignals } from "../platform/write.ts";
import { stoppedAtEnd } from "../host/mod.ts";
import type { WireRequest } from "../host/mod.ts";
import { readSecrets } from "./secret-args.ts";
import { writeRunResults } from "./run-results.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";
import { createProgress } from "./progress.ts";
import { parseRunArgs, readInput } from "./run-args.ts";
import { openEventStream } from "./run-events.ts";
import type { LiveOtel } from "./_otel-live.ts";

/**
 * The `run` command.
 * @param argv arguments after `run`
 * @param io output streams
 * @returns the exit code
 * @example process.exitCode = await runRunCommand(["packs/hello", "--json"], io);
 */
export async function runRunCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const args = parseRunArgs(argv);
  const progress = createProgress(args.quiet ? { ...io, quiet: true } : io);
  const say = (text: string): void => progress.line(text);
  const outRoot = await prepareOutDir(args.out, args.pack); // before any work: a run is never wasted on --out
  const files = await readPackFiles(args.pack);
  const input = await readInput(args.input);
  const storeText = await readTrustStoreText(args.trust);
  const keyFileText = args.key === undefined ? undefined : new TextDecoder().decode(await readPrivateKeyFile(args.key));
  const approvals = await Promise.all(args.approvals.map(readApproval));
  const secrets = readSecrets(args.secrets, "run");
  // The handlers go on right before the run: a signal before then ends the process (nothing is written); from then on
  // it ends the run ABORTED, until the results are in place (`writeRunResults`); a second one exits at once,
  // removing any temporary file.
  const events = args.events === undefined ? null : openEventStream(args.events, args.heartbeatMs, io);
  // `--otlp-endpoint`: the SDK and the span model load only then (a run without it never loads them)
  const otel = args.otlpEndpoint === undefined ? null : (await import("./_otel-live.ts")).liveOtel(args.otlpEndpoint, io, "run");
  const signals = abortOnSignals();
  signalAt("run");
  let code: number | undefined;
  try {
    code = await runAndWrite(args, { files, input, storeText, keyFileText, approvals, secrets, outRoot, signal: signals.signal, events, otel }, io, say, progress);
  } finally {
    if (code === undefined) signals.dispose();
    // The results are written and reported: a signal while the process winds down has nothing left to stop.
    else signals.settle((name) => io.stderr(`reach-wasm: ${name} after the run had ended and its results were written; nothing was stopped (exit ${code})\n`));
    events?.close();
  }
  await turn(); // a signal that came since is reported before the process ends
  return code;
}

/** One turn of the event loop (a signal's handler runs in it). */
const turn = (): Promise<void> => loopTurn()(true);

/**
 * How long a run may hold this thread before it starts again on an engine thread (`runInlineFirst`): short runs
 * then start no thread, and a signal waits at most this long (plus the thread's start) to be acted on.
 */
const INLINE_FIRST_MS = 150;

type Prepared = { files: Map<string, Uint8Array>; input: Awaited<ReturnType<typeof readInput>>; storeText: string | null; keyFileText: string | undefined; approvals: unknown[]; secrets: Record<string, string>; outRoot: string; signal: AbortSignal; events: ReturnType<typeof openEventStream> | null; otel: LiveOtel | null };

/** An approval record file (`--approval`): JSON, checked by the plan gate (signature, plan hash, trusted key). */
async function readApproval(path: string): Promise<unknown> {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(await readHostFile(path, 64 * 1024)));
  } catch (err) {
    if (err instanceof ReachError) throw err;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `run: --approval ${JSON.stringify(path)} is not a JSON approval record (make one with reach-wasm approve PLAN_HASH --key FILE --out FILE)`);
  }
}

/** What crosses to the engine: the pack, the request's options, the trust decision, the key. */
function wireRequestOf(args: ReturnType<typeof parseRunArgs>, p: Prepared): WireRequest {
  return {
    pack: { files: p.files },
    input: p.input,
    ...(args.seed === undefined ? {} : { seed: args.seed }),
    approve: args.approve,
    ...(p.approvals.length === 0 ? {} : { approvals: p.approvals }),
    ...(args.maxSteps === undefined ? {} : { maxSteps: args.maxSteps }),
    ...(args.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: args.stepTimeoutMs }),
    parallel: args.parallel ?? coreCount(),
    ...(args.requestId === undefined ? {} : { requestId: args.requestId }),
    ...(p.events === null && p.otel === null ? {} : { liveEvents: true }),
    trust: { storeText: p.storeText, unrestricted: args.unrestricted },
    ...(p.keyFileText === undefined ? {} : { keyFileText: p.keyFileText }),
    // in memory only: crosses to the engine thread by structured clone, never into request.json or any record
    ...(Object.keys(p.secrets).length === 0 ? {} : { secrets: p.secrets }),
    network: true,
  };
}

async function runAndWrite(args: ReturnType<typeof parseRunArgs>, p: Prepared, io: CliIO, say: (text: string) => void, progress: ReturnType<typeof createProgress>): Promise<number> {
  const request = wireRequestOf(args, p);
  const onProgress = progressSignals((r) => {
    if (r.kind !== "event") return progress.run(r);
    p.otel?.saw(r.event.eventHash);
    if (p.events !== null) p.events.onProgress(r);
  });
  const ended: EngineRun = await runIsolated(request, { signal: p.signal, inlineFirstMs: INLINE_FIRST_MS, onProgress });
  progress.done();
  signalAt("write"); // a test hook (REACH_WASM_TEST_SIGNAL), as the next one
  const { run, written } = await writeRunResults(p.outRoot, ended, p.signal, (r) => stoppedAtEnd(r, request, { signal: p.signal, onProgress }, (again) => runIsolated(again, {})));
  signalAt("written");
  const summary = run.error === null ? "" : `: ${run.error.code}: ${run.error.message}`;
  say(`${run.status} ${run.runHash}${summary}`);
  if (written.error === null) say(`capsule ${written.capsulePath}${run.capsule.signed ? " (signed)" : ""}; run files in ${written.outDir}`);
  else io.stderr(`reach-wasm: ${written.error.code}: the run ended ${run.status} but its results could not be written: ${written.error.message}\n`);
  await p.otel?.exportRun(run); // once the results are in place and reported; a failure is a warning
  if (args.json) {
    const line: Record<string, unknown> = { runId: run.runId, status: run.status, runHash: run.runHash, capsule: written.capsulePath, out: written.outDir };
    if (run.result["error"] !== undefined) line["error"] = run.result["error"];
    if (written.error !== null) line["writeError"] = written.error.toDetails();
    io.stdout(JSON.stringify(line) + "\n");
  }
  return run.status === "COMPLETED" && written.error === null ? 0 : 1;
}
