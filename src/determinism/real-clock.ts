/**
 * The real clock (internal): what the engine reads for evidence and for when to stop, never for what is hashed
 * (durations in run files, the wall-clock watchdog, how long a run may hold the CLI's thread). A platform hands in its
 * own (`EngineEnvironment.clock`): on Node the first read of `performance` loads its perf_hooks modules, ~1 ms of a
 * short CLI run, so Node's and Deno's is `process.hrtime` and `Date.now` (`src/platform/real-clock.ts`). A run reads
 * one clock throughout, so two of its readings always come from the same source; without one, `performance`.
 * @module
 */

/** A source of real time. */
export type RealClock = {
  /** Milliseconds from an arbitrary origin, never going back. */
  monotonicMs(): number;
  /** Milliseconds since the Unix epoch. */
  epochMs(): number;
};

/** The web-standard clock: `performance`. */
const clock: RealClock = {
  monotonicMs: () => performance.now(),
  epochMs: () => performance.timeOrigin + performance.now(),
};

/**
 * Milliseconds from an arbitrary origin, monotonic.
 * @returns the reading
 * @example const started = monotonicMs();
 */
export function monotonicMs(): number {
  return clock.monotonicMs();
}

/**
 * Milliseconds since the Unix epoch (real time: evidence only).
 * @returns the reading
 * @example const createdAt = new Date(epochMs()).toISOString();
 */
export function epochMs(): number {
  return clock.epochMs();
}
