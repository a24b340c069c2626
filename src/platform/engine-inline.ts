/**
 * The engine call on the calling thread: for tests that call the CLI in process (`setInlineEngine`), and as the CLI's
 * first attempt at a run (`runInlineFirst`).
 *
 * Why a first attempt: most runs are short, and an engine thread costs more CPU to start than a short run costs (a
 * second JavaScript runtime, the engine's code loaded again). But a tool that computes holds the calling thread, so a
 * signal cannot be handled until it stops. The attempt therefore runs only while that is harmless, and is abandoned —
 * its result thrown away, nothing written — the moment it is not: once it has held the thread without a break longer
 * than its time budget (seen at a fuel refill, where every computing tool and planner comes often), or when a tool
 * asks for the network (a request must never be sent twice). The run then starts again from the beginning on an engine thread. A run is a
 * pure function of its pack and request (virtual time, seeded randomness, no network before that point), so the
 * second run records exactly what the first would have: the wall clock decides only where the run executes, never
 * what it records. Progress already reported is not reported twice.
 * @module
 */
import type { EngineRun } from "../engine/engine.ts";
import type { RunProgress } from "../engine/types.ts";
import { interruptCode } from "./_interrupt.ts";
import type { IsolatedSession, WireRequest } from "./engine-thread.ts";

type Options = { signal?: AbortSignal; onProgress?: (p: RunProgress) => void };

async function engineModules() {
  const [{ openSession, runEngine }, { engineRequest }, { defaultEnvironment }] = await Promise.all([import("../engine/engine.ts"), import("./engine-request.ts"), import("./environment.ts")]);
  return { openSession, runEngine, engineRequest, defaultEnvironment };
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
 * `runIsolated` on the calling thread (see `setInlineEngine`).
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
 * permission without `sandbox.network: "none"` (read from `reach.json` as plain JSON; the engine checks it properly).
 * Such a run goes to an engine thread at once, so that a signal while a tool waits for a response stops it there.
 */
function mayReachNetwork(request: WireRequest): boolean {
  if (request.network !== true || !("files" in request.pack)) return false;
  try {
    const doc = JSON.parse(new TextDecoder().decode(request.pack.files.get("reach.json"))) as { manifest?: { capabilities?: { permissions?: unknown }; policies?: { sandbox?: { network?: unknown } } } };
    const permissions = doc.manifest?.capabilities?.permissions;
    return Array.isArray(permissions) && permissions.includes("network") && doc.manifest?.policies?.sandbox?.network !== "none";
  } catch {
    return false; // not JSON: the engine says what is wrong
  }
}

/** Why an inline attempt was given up (the controller's abort reason; never recorded: the attempt is dropped). */
const PROMOTED = "promoted to an engine thread";

/**
 * Run on the calling thread while that is harmless, else again from the start on an engine thread (module notes).
 * Steps run one at a time in the attempt (the record is the same for every `parallel`).
 * @param request what would cross to the thread
 * @param options the abort signal and a progress callback
 * @param budgetMs how long the attempt may hold the thread without a break (wall clock; it decides only where the
 *   run executes)
 * @param onThread runs the request on an engine thread
 * @returns the run
 * @throws ReachError as `runEngine` does
 * @example const run = await runInlineFirst({ pack: { files } }, {}, 200, (r, o) => runIsolated(r, o));
 */
export async function runInlineFirst(request: WireRequest, options: Options, budgetMs: number, onThread: (request: WireRequest, options: Options) => Promise<EngineRun>): Promise<EngineRun> {
  if (mayReachNetwork(request)) return await onThread(request, options);
  const { runEngine, engineRequest, defaultEnvironment } = await engineModules();
  const w = wire(options.signal);
  let promoted = false;
  let reported = 0;
  const promote = (): true => {
    promoted = true;
    if (!w.controller.signal.aborted) w.controller.abort(PROMOTED);
    return true;
  };
  const onProgress = (p: RunProgress): void => {
    if (promoted) return;
    reported++;
    options.onProgress?.(p);
  };
  const req = engineRequest({ ...request, parallel: 1 }, w.interrupt, w.controller, onProgress);
  const interrupted = req.interrupted!;
  // How long this thread has been held: a timer notes when the event loop was last free (it cannot run while a tool
  // computes); the fuel meter's refills compare.
  let free = performance.now();
  const beat = setInterval(() => void (free = performance.now()), 10);
  req.interrupted = () => promoted || interrupted() || (performance.now() - free > budgetMs && promote());
  if (req.fetch !== undefined) req.fetch = () => (promote(), Promise.reject(new Error(PROMOTED)));
  let run: EngineRun | null = null;
  try {
    run = await runEngine(defaultEnvironment(), req);
  } catch (err) {
    if (!promoted) throw err;
  } finally {
    clearInterval(beat);
    w.dispose();
  }
  if (!promoted && run !== null) return run;
  let skip = reported;
  const rest: Options = { ...options, onProgress: (p) => (skip > 0 ? void skip-- : options.onProgress?.(p)) };
  // A signal that came while the attempt held the thread is handled only now: the run is started again to stop
  // where the attempt was stopped (its recorded stop), as a thread would have stopped it at that refill.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const stop = options.signal?.aborted === true && run !== null ? promotionStop(run) : null;
  if (stop === null) return await onThread(request, rest);
  const { signal: _aborted, ...later } = rest;
  return await onThread({ ...request, stopAt: { ...stop, signal: String(options.signal!.reason ?? "abort") } }, later);
}

/** Where an attempt was stopped (the `stops` of its terminal event), or null when it was not inside an invocation. */
function promotionStop(run: EngineRun): { invocationId: string; fuel: string } | null {
  const lines = new TextDecoder().decode(run.files.get("events.jsonl") ?? new Uint8Array()).trim().split("\n");
  try {
    const last = JSON.parse(lines[lines.length - 1]!) as { payload?: { stops?: { invocationId?: unknown; fuel?: unknown; reason?: unknown }[] } };
    const s = last.payload?.stops?.find((x) => x.reason === "abort");
    return s === undefined || typeof s.invocationId !== "string" ? null : { invocationId: s.invocationId, fuel: String(s.fuel) };
  } catch {
    return null;
  }
}

/**
 * `openIsolatedSession` on the calling thread (see `setInlineEngine`).
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
