/**
 * A run on the calling thread first, elsewhere (an engine thread) only when it must be: the CLI's `run` and the run
 * service's workers take their runs through this.
 *
 * Most runs are short, and an engine thread costs a short run more CPU than the run itself (a second JavaScript
 * runtime, the engine's code loaded again). But a tool that computes holds the calling thread, and with it whatever
 * else that thread must do: handle a signal, a cancel, a heartbeat, an HTTP request. So the attempt on the calling
 * thread runs only while that is harmless, and is given up — its result thrown away, nothing written — the moment it
 * is not: once it has held the thread without a break longer than its budget (seen at a fuel refill, which every
 * computing tool and planner reaches often; with `cpuMs`, only if the process also used that much CPU meanwhile, so
 * that a loaded machine does not move short runs), or when a tool asks for the network (a request is never sent
 * twice). The run then starts again from the beginning elsewhere. A run is a pure function of its pack and request
 * (virtual time, seeded randomness, no network before that point), so the second execution records exactly what the
 * first would have: the clocks decide only where a run executes, never what it records. Progress already reported is
 * not reported again. An abort the thread could handle during the attempt ends the run there, ABORTED, as on a
 * thread: one that came while a tool waited for the host, or while a step held the thread (the engine lets the loop
 * turn at its checks outside an invocation: before planning, before each step, before the terminal state, so its
 * handler runs there). One that came while a tool held the thread past the budget is seen only once the attempt was
 * given up: the run started again is then stopped where the attempt stopped (`stopAt`), as that abort's stop.
 * @module
 */
import type { EngineRun, EngineRunRequest } from "./engine.ts";
import type { RunProgress } from "./types.ts";
import { monotonicMs } from "../determinism/mod.ts";

/** How long an attempt may hold the thread. */
export type InlineBudget = {
  /** Milliseconds without a break (wall clock), from the later of the attempt's start and the loop's last turn. */
  ms: number;
  /** The process's CPU time (ms): when given, an attempt over `ms` is given up only if the process also used `ms`. */
  cpuMs?: () => number;
  /**
   * One full turn of the event loop, which runs the handler of a signal that came while the attempt held the thread
   * (`EngineEnvironment.turn`; default: two zero-delay timers, the second after the loop's poll for signals).
   */
  turn?: (last?: boolean) => Promise<void>;
  /** The real clock in ms (`EngineEnvironment.clock`; default `performance`). */
  now?: () => number;
};

/** How the run goes on elsewhere: its progress (what the attempt reported is skipped), and where to stop. */
export type Elsewhere = {
  onProgress: (p: RunProgress) => void;
  /** The caller's signal, unless the run is to stop at `stopAt` (an abort that came while the attempt held the thread). */
  signal?: AbortSignal;
  stopAt?: NonNullable<EngineRunRequest["stopAt"]>;
};

/** Why an attempt was given up (its controller's abort reason; never recorded: the attempt is dropped). */
const PROMOTED = "moved to an engine thread";

/** The abort reasons a thread records by name (else "abort"). */
const SIGNALS = ["SIGINT", "SIGTERM"];

/** A hold: when an attempt began (wall clock and the process's CPU time). */
export type Hold = { readonly at: number; readonly cpu: number };

/**
 * Watches how long attempts hold the calling thread (a 10 ms ticker while any is under way; it cannot fire while a
 * tool computes, so a late tick means the thread was held). The turns of the loop the engine makes at its checks
 * (`turn`, for a signal's handler) are no break: a tick during one is not counted, so where a run executes does not
 * change with them.
 * @param budget how long an attempt may hold the thread
 * @returns `begin()` starts an attempt's hold, `over(hold)` says whether it has held the thread too long, `end()`
 *   ends the attempt, `turn(last)` is the budget's turn of the loop, not counted as a break
 * @throws RangeError for a negative or non-finite budget
 * @example const watch = holdWatch({ ms: 50 }); const hold = watch.begin(); watch.over(hold); watch.end();
 */
export function holdWatch(budget: InlineBudget): { begin(): Hold; over(hold: Hold): boolean; end(): void; turn(last?: boolean): Promise<void> } {
  if (!Number.isFinite(budget.ms) || budget.ms < 0) throw new RangeError(`"budget.ms" expected a finite number >= 0, got ${budget.ms}`);
  const loop = { at: 0, cpu: 0, users: 0, quiet: 0, timer: undefined as ReturnType<typeof setInterval> | undefined };
  const cpu = budget.cpuMs ?? (() => 0);
  const base = budget.turn ?? twoTimers;
  const now = budget.now ?? monotonicMs;
  const turned = (): void => {
    if (loop.quiet > 0) return;
    loop.at = now();
    loop.cpu = cpu();
  };
  return {
    begin: () => {
      if (loop.users++ === 0) {
        turned();
        loop.timer = setInterval(turned, 10);
      }
      return { at: now(), cpu: cpu() }; // attempts started one after another on a busy loop each get the budget
    },
    over: (hold) => {
      if (now() - Math.max(loop.at, hold.at) <= budget.ms) return false;
      return budget.cpuMs === undefined || cpu() - Math.max(loop.cpu, hold.cpu) > budget.ms;
    },
    end: () => {
      if (--loop.users === 0) clearInterval(loop.timer);
    },
    turn: async (last) => {
      loop.quiet++;
      try {
        await base(last);
      } finally {
        loop.quiet--;
      }
    },
  };
}

/**
 * A runner that tries each run on the calling thread first (module notes).
 * @param budget how long an attempt may hold the thread
 * @returns `(run, request, elsewhere)`: `run` is the engine call (`runEngine` with the platform's environment), the
 *   request's `signal`, `onProgress`, `fetch` and `interrupted` are wrapped; `elsewhere` runs it again
 * @throws RangeError for a negative or non-finite budget
 * @example const first = inlineFirst({ ms: 150 }); const run = await first((r) => runEngine(env, r), request, (o) => onThread(o));
 */
export function inlineFirst(budget: InlineBudget): (run: (request: EngineRunRequest) => Promise<EngineRun>, request: EngineRunRequest, elsewhere: (o: Elsewhere) => Promise<EngineRun>) => Promise<EngineRun> {
  const watch = holdWatch(budget);
  return async (run, request, elsewhere) => {
    const signal = request.signal;
    const controller = new AbortController();
    let promoted = false;
    let reported = 0;
    const cancel = (): void => void (controller.signal.aborted || controller.abort(SIGNALS.includes(String(signal?.reason)) ? String(signal?.reason) : "abort"));
    const promote = (): true => {
      promoted = true;
      if (!controller.signal.aborted) controller.abort(PROMOTED);
      return true;
    };
    if (signal?.aborted === true) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    const start = watch.begin();
    const outer = request.interrupted;
    let attempt: EngineRun | null = null;
    try {
      attempt = await run({
        ...request,
        parallel: 1, // the record is the same for every value; the attempt starts no step threads
        signal: controller.signal,
        turn: (last) => watch.turn(last),
        interrupted: () => promoted || outer?.() === true || (!controller.signal.aborted && watch.over(start) && promote()),
        ...(request.fetch === undefined ? {} : { fetch: () => (promote(), Promise.reject(new Error(PROMOTED))) }),
        onProgress: (p) => {
          if (promoted) return;
          reported++;
          request.onProgress?.(p);
        },
      });
    } catch (err) {
      if (!promoted) throw err;
    } finally {
      watch.end();
      signal?.removeEventListener("abort", cancel);
    }
    if (!promoted && attempt !== null) return attempt;
    let skip = reported;
    const onProgress = (p: RunProgress): void => (skip > 0 ? void skip-- : request.onProgress?.(p));
    // An abort that came while the attempt held the thread is handled only now (a turn of the loop runs its handler).
    await (budget.turn ?? twoTimers)(true);
    const stop = signal?.aborted === true && attempt !== null ? attemptStop(attempt) : null;
    if (stop === null) return await elsewhere({ onProgress, ...(signal === undefined ? {} : { signal }) });
    return await elsewhere({ onProgress, stopAt: { ...stop, signal: SIGNALS.includes(String(signal!.reason)) ? String(signal!.reason) : "abort" } });
  };
}

/** A full turn of the loop without the platform's: a timer set from a timer's callback runs after the poll for signals. */
async function twoTimers(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** Where an attempt was stopped (the `stops` of its terminal event), or null when it was not inside an invocation. */
function attemptStop(run: EngineRun): { invocationId: string; fuel: string } | null {
  const lines = new TextDecoder().decode(run.files.get("events.jsonl") ?? new Uint8Array()).trim().split("\n");
  try {
    const last = JSON.parse(lines[lines.length - 1]!) as { payload?: { stops?: { invocationId?: unknown; fuel?: unknown; reason?: unknown }[] } };
    const s = last.payload?.stops?.find((x) => x.reason === "abort");
    return s === undefined || typeof s.invocationId !== "string" ? null : { invocationId: s.invocationId, fuel: String(s.fuel) };
  } catch {
    return null;
  }
}
