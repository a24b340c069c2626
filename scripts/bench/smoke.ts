/**
 * The benchmarks' smoke mode: `REACH_BENCH_SMOKE=1` runs each measurement with tiny counts (CI runs every benchmark
 * that `npm run bench` names this way, to see that it still runs; its figures then mean nothing).
 * @module
 */
import process from "node:process";

/** Whether the benchmarks run in smoke mode. */
export const SMOKE = process.env["REACH_BENCH_SMOKE"] === "1";

/**
 * A count: `full` normally, `smoke` in smoke mode.
 * @param full the measured count
 * @param smoke the smoke count (default 1)
 * @returns the count to use
 * @example for (let r = 0; r < n(3); r++) measure();
 */
export function n(full: number, smoke = 1): number {
  return SMOKE ? smoke : full;
}
