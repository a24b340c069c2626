/**
 * The real clock (internal): what the engine reads for evidence and for when to stop, never for what is hashed
 * (durations in run files, the wall-clock watchdog, how long a run may hold the CLI's thread). `performance` by
 * default; a platform may install a cheaper source: on Node the first read of `performance` loads its perf_hooks
 * modules, ~1 ms of a short CLI run, so the CLI installs `process.hrtime` and `Date.now` (`src/platform/real-clock.ts`).
 * Every reader goes through here, so two readings always come from the same source.
 * @module
 */

/** A source of real time. */
export type RealClock = {
  /** Milliseconds from an arbitrary origin, never going back. */
  monotonicMs(): number;
  /** Milliseconds since the Unix epoch. */
  epochMs(): number;
};

let clock: RealClock = {
  monotonicMs: () => performance.now(),
  epochMs: () => performance.timeOrigin + performance.now(),
};

/**
 * Install the real clock of this process (before anything reads it).
 * @param next the clock
 * @example setRealClock({ monotonicMs: () => performance.now(), epochMs: () => performance.timeOrigin + performance.now() });
 */
export function setRealClock(next: RealClock): void {
  clock = next;
}

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
