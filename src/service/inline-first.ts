/**
 * A run on the worker's own thread first, on an engine thread only when it must be. Most runs are short, and an
 * engine thread costs a short run more CPU than the run itself (a second JavaScript runtime; measured with
 * scripts/bench-service.ts: the worker processes' CPU per `packs/hello` run fell from 8.6–13.7 ms to 4.8–6.0 ms). But a
 * tool that computes holds the thread, and with it the worker's heartbeats, cancels and HTTP; so the attempt on the
 * worker's thread runs only while that is harmless, and is given up — its result thrown away, nothing stored — the
 * moment it is not: once it has held the thread without a break longer than its budget (seen at a fuel refill, which
 * every computing tool and planner reaches often), or when a tool asks for the network (a request is never sent
 * twice). The run then starts again from the beginning on an engine thread. A run is a pure function of its pack and
 * request (virtual time, seeded randomness, no network before that point), so the second execution records exactly
 * what the first would have: the clocks decide only where a run executes, never what it records. Progress already
 * reported is not reported again. A cancel during the attempt ends the run there (ABORTED, with its capsule), as on
 * a thread.
 * @module
 */
import { runEngine } from "../engine/engine.ts";
import type { EngineEnvironment } from "../engine/runners.ts";
import type { RunProgress } from "../engine/types.ts";
import { jobRequest, outcomeOf } from "./engine-adapter.ts";
import type { EngineJob, EngineOutcome } from "./engine-adapter.ts";

/** Why an attempt was given up (its controller's abort reason; never recorded: the attempt is dropped). */
const PROMOTED = "moved to an engine thread";

/** A run's hooks: `signal` cancels it, `onProgress` reports its steps. */
export type RunHooks = { signal: AbortSignal; onProgress: (p: RunProgress) => void };

/** How long an attempt may hold the thread. */
export type InlineBudget = {
  /** Milliseconds without a break (wall clock), counted from the later of the attempt's start and the loop's last turn. */
  ms: number;
  /**
   * This process's CPU time in milliseconds. When given, an attempt over `ms` is given up only if the process also
   * used `ms` of CPU over that time: a thread that the machine's load keeps waiting holds nothing up on its own account
   * (without it, a loaded machine moves short runs to threads, which only adds load).
   */
  cpuMs?: () => number;
};

/** The engine function the service's workers take (`runOnEngine`'s shape) plus where a run goes when it must move. */
export type InlineFirst = (env: EngineEnvironment, job: EngineJob, hooks: RunHooks, elsewhere: (hooks: RunHooks) => Promise<EngineOutcome>) => Promise<EngineOutcome>;

/**
 * Runs jobs on the calling thread while that is harmless, else again from the start with `elsewhere` (module notes).
 * @param budget how long an attempt may hold the thread
 * @returns the runner: `(env, job, hooks, elsewhere)` → the outcome; it throws ReachError `PACK_*` / `PROTO_*` when
 *   the pack cannot run at all (no capsule then)
 * @throws RangeError for a negative or non-finite budget
 * @example const run = inlineFirst({ ms: 50 }); const out = await run(env, job, hooks, (h) => onThread(job, h));
 */
export function inlineFirst(budget: InlineBudget): InlineFirst {
  if (!Number.isFinite(budget.ms) || budget.ms < 0) throw new RangeError(`"budget.ms" expected a finite number >= 0, got ${budget.ms}`);
  // When the loop last turned (one 10 ms ticker while attempts are under way; it cannot fire while a tool computes).
  const loop = { at: 0, cpu: 0, users: 0, timer: undefined as ReturnType<typeof setInterval> | undefined };
  const cpu = budget.cpuMs ?? (() => 0);
  const turned = (): void => {
    loop.at = performance.now();
    loop.cpu = cpu();
  };
  const over = (start: { at: number; cpu: number }): boolean => {
    if (performance.now() - Math.max(loop.at, start.at) <= budget.ms) return false;
    return budget.cpuMs === undefined || cpu() - Math.max(loop.cpu, start.cpu) > budget.ms;
  };
  return async (env, job, hooks, elsewhere) => {
    const controller = new AbortController();
    let promoted = false;
    let reported = 0;
    // the reason an engine thread records for this signal (its interrupt word's): SIGINT, SIGTERM, else "abort"
    const cancel = (): void => controller.abort(["SIGINT", "SIGTERM"].includes(String(hooks.signal.reason)) ? String(hooks.signal.reason) : "abort");
    const promote = (): true => {
      promoted = true;
      controller.abort(PROMOTED);
      return true;
    };
    if (hooks.signal.aborted) cancel();
    else hooks.signal.addEventListener("abort", cancel, { once: true });
    if (loop.users++ === 0) {
      turned();
      loop.timer = setInterval(turned, 10);
    }
    const start = { at: performance.now(), cpu: cpu() }; // attempts started one after another on a busy loop each get the budget
    let out: EngineOutcome | null = null;
    try {
      out = outcomeOf(await runEngine(env, {
        ...jobRequest(job),
        trust: { store: job.trust },
        signal: controller.signal,
        interrupted: () => promoted || (!controller.signal.aborted && over(start) && promote()),
        ...(job.fetch === undefined ? {} : { fetch: () => (promote(), Promise.reject(new Error(PROMOTED))) }),
        onProgress: (p) => {
          if (promoted) return;
          reported++;
          hooks.onProgress(p);
        },
      }));
    } catch (err) {
      if (!promoted) throw err;
    } finally {
      if (--loop.users === 0) clearInterval(loop.timer);
      hooks.signal.removeEventListener("abort", cancel);
    }
    if (!promoted && out !== null) return out;
    let skip = reported;
    return await elsewhere({ signal: hooks.signal, onProgress: (p) => (skip > 0 ? void skip-- : hooks.onProgress(p)) });
  };
}
