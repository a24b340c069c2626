/**
 * Stopping one tool invocation from outside: the run is aborted (a signal), or the tool ran past its wall-clock
 * limit (the watchdog). Both are safety nets above the deterministic fuel budget, and both act only where the stop
 * can be recorded and replayed:
 * - while the tool computes, at the fuel meter's next refill (`FuelMeter` `poll`; the fuel count is the stop point);
 * - while the tool waits for an asynchronous host call, through `signal`: the host fails the call with the halting
 *   error this module names (`EXEC_ABORTED`, or `EXEC_TOOL_TIMEOUT` with reason `watchdog`), which the tape records,
 *   so a replay halts at the same call.
 *
 * The watchdog's clock starts when the tool's own code starts (`FuelMeter.start`), so compiling and instrumenting are
 * never the tool's time. `interrupted()` is read at every refill: in a worker it is a shared memory word the main
 * thread sets on a signal, so a stop lands even while the tool holds the thread.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { FuelMeterOptions, StopReason } from "./fuel/fuel-meter.ts";
import { STEP_TIMEOUT_HINT } from "./fuel/meter.ts";
import { monotonicMs } from "../determinism/mod.ts";

/** Options of {@link invocationStops}. */
export type StopOptions = {
  /** The tool's wall-clock limit in ms (the step timeout, its envelope's `timeout_ms`, plus any grace). */
  limitMs: number;
  /** Whether the run was aborted; read at every refill (default: never). */
  interrupted?: () => boolean;
  /** The run's abort signal, for asynchronous waits (default: none). */
  signal?: AbortSignal;
  /** A wall clock in ms (default the real clock's `monotonicMs`); it only decides when to stop, never what is recorded. */
  now?: () => number;
};

/** The stop wiring of one invocation. */
export type InvocationStops = {
  /** `poll` and `onStart` for the invocation's `FuelMeter`. */
  meter: Pick<FuelMeterOptions, "poll" | "onStart">;
  /** Aborted, with the halting error as its reason, when the tool must stop while it waits for the host. */
  signal: AbortSignal;
  /** Clear the watchdog's timer (call when the invocation ends). */
  dispose(): void;
};

/**
 * The halting error a host call fails with when the tool is stopped while waiting for it.
 * @param reason why the tool was stopped
 * @returns `EXEC_ABORTED` (reason `aborted`) or `EXEC_TOOL_TIMEOUT` (reason `watchdog`)
 * @example waitStopError("abort").code // "EXEC_ABORTED"
 */
export function waitStopError(reason: StopReason): ReachError {
  return reason === "abort"
    ? new ReachError("EXEC_ABORTED", "the run was aborted while the tool waited for this host call", { details: { reason: "aborted" } })
    : new ReachError("EXEC_TOOL_TIMEOUT", "the watchdog stopped the tool while it waited for this host call; " + STEP_TIMEOUT_HINT, { details: { reason: "watchdog" } });
}

/**
 * Wire the stops of one invocation (see the module notes).
 * @param options the wall-clock limit, the interrupt and the run's signal
 * @returns the meter options, the wait signal and `dispose`
 * @throws RangeError when `limitMs` is not a positive number
 * @example
 * const stops = invocationStops({ limitMs: 30_500, signal });
 * const meter = new FuelMeter({ budget, ...stops.meter });
 * try { await runner.run({ ...invocation, meter }); } finally { stops.dispose(); }
 */
export function invocationStops(options: StopOptions): InvocationStops {
  if (!(options.limitMs > 0)) throw new RangeError(`"limitMs" expected a positive number, got ${options.limitMs}`);
  const now = options.now ?? monotonicMs;
  const controller = new AbortController();
  let startedAt: number | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = (reason: StopReason): void => {
    if (!controller.signal.aborted) controller.abort(waitStopError(reason));
  };
  const onAbort = (): void => stop("abort");
  if (options.signal?.aborted === true) stop("abort");
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const poll = (): StopReason | null => {
    if (options.interrupted?.() === true || options.signal?.aborted === true) return "abort";
    if (startedAt !== null && now() - startedAt > options.limitMs) return "watchdog";
    return null;
  };
  const onStart = (): void => {
    startedAt = now();
    timer = setTimeout(() => stop("watchdog"), options.limitMs + 1);
  };
  return {
    meter: { poll, onStart },
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    },
  };
}
