/**
 * The clocks of a Node or Deno process: real time without `performance` (on Node its first read loads the perf_hooks
 * modules, ~1 ms of a short CLI run), and the process's CPU time. Real time is evidence only, never hashed.
 * @module
 */
import process from "node:process";

/** A source of real time (`RealClock` of `src/determinism/real-clock.ts`). */
export type ProcessClock = {
  /** Milliseconds from an arbitrary origin, never going back. */
  monotonicMs(): number;
  /** Milliseconds since the Unix epoch. */
  epochMs(): number;
};

/**
 * `process.hrtime` for monotonic readings and `Date.now` for the epoch.
 * @example const started = processClock.monotonicMs();
 */
export const processClock: ProcessClock = {
  monotonicMs: () => {
    const [s, ns] = process.hrtime();
    return s * 1000 + ns / 1e6;
  },
  epochMs: () => Date.now(),
};

/**
 * This process's CPU time in ms (every thread), where the runtime tells it (Node; Deno's `node:process`).
 * @returns the clock, or undefined where there is none
 * @example const cpu = processCpuClock(); cpu?.() // e.g. 84.2
 */
export function processCpuClock(): (() => number) | undefined {
  try {
    process.cpuUsage();
  } catch {
    return undefined;
  }
  return () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
}
