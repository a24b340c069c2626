/**
 * The engine call on the calling thread: where no engine thread can start (`engine-thread.ts`: Node running the
 * TypeScript sources, as the tests do), and as the CLI's first attempt at a run (`runInlineFirst`, over `src/engine/inline-first.ts`, which says when a run moves to an
 * engine thread and why the record does not change).
 * @module
 */
import type { EngineRun } from "../engine/mod.ts";
import type { RunProgress } from "../engine/mod.ts";
import { INTERRUPT_REASONS, interruptCode } from "./_interrupt.ts";
import { loopTurn } from "../platform/loop-turn.ts";
import { processClock, processCpuClock } from "../platform/real-clock.ts";
import { pollSignals, signalAt } from "../platform/signal-hook.ts";
import type { IsolatedSession, WireRequest } from "./engine-wire.ts";

type Options = { signal?: AbortSignal; onProgress?: (p: RunProgress) => void };

const turn = loopTurn();

async function engineModules() {
  const [{ openSession, readPackDeclaration, runEngine }, { engineRequest }, { defaultEnvironment }] = await Promise.all([import("../engine/engine.ts"), import("./engine-request.ts"), import("./environment.ts")]);
  return { openSession, readPackDeclaration, runEngine, engineRequest, defaultEnvironment };
}

/** An interrupt word and a controller, both set by an abort of `signal` (as an engine thread's are). */
function wire(signal: AbortSignal | undefined): { interrupt: SharedArrayBuffer; controller: AbortController; dispose: () => void } {
  const interrupt = new SharedArrayBuffer(8);
  const controller = new AbortController();
  const stop = (): void => {
    Atomics.store(new Int32Array(interrupt), 0, interruptCode(signal?.reason));
    if (!controller.signal.aborted) controller.abort(signal?.reason ?? "abort");
  };
  if (signal?.aborted === true) stop();
  else signal?.addEventListener("abort", stop, { once: true });
  return { interrupt, controller, dispose: () => signal?.removeEventListener("abort", stop) };
}

/**
 * `runIsolated` on the calling thread (`engine-thread.ts`'s module notes).
 * @param request what would cross to the thread
 * @param options the abort signal and a progress callback
 * @returns the run
 * @throws ReachError as `runEngine` does
 * @example const run = await runInline({ pack: { files } }, {});
 */
export async function runInline(request: WireRequest, options: Options): Promise<EngineRun> {
  const { runEngine, engineRequest, defaultEnvironment } = await engineModules();
  const w = wire(options.signal);
  try {
    return await runEngine(defaultEnvironment(), engineRequest(request, w.interrupt, w.controller, options.onProgress ?? (() => {})));
  } finally {
    w.dispose();
  }
}

/**
 * Whether a run's tools may reach the network: the runtime's fetch is given and the pack declares the `network`
 * permission without `sandbox.network: "none"` (its declaration read and checked as a run reads it,
 * `readPackDeclaration`, through the platform's document cache). Such a run goes to an engine thread at once, so
 * that a signal while a tool waits for a response stops it there.
 * @param request what would cross to the thread
 * @returns whether its tools may reach the network; false for a pack the engine refuses (the engine says why)
 * @example await mayReachNetwork({ pack: { files }, network: true }) // true for packs/http
 */
export async function mayReachNetwork(request: WireRequest): Promise<boolean> {
  if (request.network !== true || !("files" in request.pack)) return false;
  const { readPackDeclaration, defaultEnvironment } = await engineModules();
  try {
    const { manifest } = await readPackDeclaration(defaultEnvironment(), request.pack.files);
    return manifest.capabilities.permissions.includes("network") && manifest.policies.sandbox.network !== "none";
  } catch {
    return false; // the engine refuses the pack and says why
  }
}

/**
 * Run on the calling thread while that is harmless, else again from the start on an engine thread
 * (`src/engine/inline-first.ts`). A pack that may reach the network goes to the thread at once.
 * @param request what would cross to the thread
 * @param options the abort signal and a progress callback
 * @param budgetMs how long the attempt may hold the thread without a break, and use that much CPU meanwhile
 * @param onThread runs the request on an engine thread
 * @returns the run
 * @throws ReachError as `runEngine` does
 * @example const run = await runInlineFirst({ pack: { files } }, {}, 150, (r, o) => runIsolated(r, o));
 */
export async function runInlineFirst(request: WireRequest, options: Options, budgetMs: number, onThread: (request: WireRequest, options: Options) => Promise<EngineRun>): Promise<EngineRun> {
  if (await mayReachNetwork(request)) return await onThread(request, options);
  const [{ runEngine, engineRequest, defaultEnvironment }, { inlineFirst }] = await Promise.all([engineModules(), import("../engine/inline-first.ts")]);
  const cpuMs = processCpuClock();
  const first = inlineFirst({ ms: budgetMs, turn, now: processClock.monotonicMs, ...(cpuMs === undefined ? {} : { cpuMs }) });
  // The request as an engine thread makes it (trust store and key parsed, fetch), with the caller's signal.
  const { interrupted: _word, signal: _own, ...engine } = engineRequest(request, new SharedArrayBuffer(8), new AbortController(), options.onProgress ?? (() => {}));
  const env = defaultEnvironment();
  const polls = pollSignals(); // a test hook (REACH_WASM_TEST_SIGNAL): a signal while a tool holds this thread
  return await first((r) => runEngine(env, r), { ...engine, ...(options.signal === undefined ? {} : { signal: options.signal }), ...(polls === null ? {} : { interrupted: polls }) }, (o) => {
    signalAt("handover"); // a test hook (REACH_WASM_TEST_SIGNAL)
    return onThread(o.stopAt === undefined ? request : { ...request, stopAt: o.stopAt }, { onProgress: o.onProgress, ...(o.signal === undefined ? {} : { signal: o.signal }) });
  });
}

/**
 * The run's results, unless its signal came after the run's last check (while its capsule was made, or on its way
 * from a thread) but before the caller took them: such a run is started again to stop at that check (`stopAt:
 * {atEnd}`), so it ends ABORTED, as if the check had seen the signal. A run whose signal came while it was still going
 * thus never ends COMPLETED (or FAILED); the cost, a second execution, is paid only when a signal lands in that
 * window (its progress is not reported again; a second signal still exits at once).
 * @param run the run as it ended
 * @param request what ran
 * @param options its signal and progress callback
 * @param again runs the request again (without a signal: it stops at its end)
 * @returns the run, or the run started again and ABORTED at its end
 * @throws ReachError as the run started again may
 * @example const settled = await stoppedAtEnd(run, request, { signal }, (r) => runInline(r, {}));
 */
export async function stoppedAtEnd(run: EngineRun, request: WireRequest, options: Options, again: (request: WireRequest) => Promise<EngineRun>): Promise<EngineRun> {
  const signal = options.signal;
  if (signal === undefined || run.status === "ABORTED") return run;
  if (!signal.aborted) await turn(true); // a signal that came while this thread was held is handled now
  if (!signal.aborted) return run;
  const name = INTERRUPT_REASONS[interruptCode(signal.reason)]!;
  options.onProgress?.({ kind: "warning", message: `${name} came as the run ended ${run.status}; running it again to stop it there, ABORTED (a second signal exits at once)` });
  return await again({ ...request, stopAt: { atEnd: true, signal: name } });
}

/**
 * `openIsolatedSession` on the calling thread (`engine-thread.ts`'s module notes).
 * @param request what would cross to the thread
 * @param options the abort signal (it ends the session ABORTED)
 * @returns the session
 * @throws ReachError as `openSession` does
 * @example const session = await openInlineSession({ pack: { files } }, {});
 */
export async function openInlineSession(request: WireRequest, options: { signal?: AbortSignal }): Promise<IsolatedSession> {
  const { openSession, engineRequest, defaultEnvironment } = await engineModules();
  const w = wire(options.signal);
  const session = await openSession(defaultEnvironment(), engineRequest(request, w.interrupt, w.controller, () => {})).catch((err: unknown) => {
    w.dispose();
    throw err;
  });
  return {
    tools: session.tools(),
    pack: session.pack,
    budget: session.budget,
    scope: session.scope,
    call: (tool, args) => session.call(tool, args),
    workspace: () => Promise.resolve(session.workspace()),
    readWorkspace: (path) => Promise.resolve(session.readWorkspace(path)),
    close: async (aborted = false) => {
      try {
        return await session.close(aborted);
      } finally {
        w.dispose();
      }
    },
  };
}
