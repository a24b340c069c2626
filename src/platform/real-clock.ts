/**
 * The real clock of a Node or Deno process without `performance` (see `src/determinism/real-clock.ts`):
 * `process.hrtime` for monotonic readings and `Date.now` for the epoch. Real time is evidence only, never hashed.
 * @module
 */
import process from "node:process";
import { setRealClock } from "../determinism/real-clock.ts";

/** The process's monotonic reading (for the CLI's elapsed times). */
export { monotonicMs } from "../determinism/real-clock.ts";

/**
 * Install it for this process.
 * @example installRealClock();
 */
export function installRealClock(): void {
  setRealClock({
    monotonicMs: () => {
      const [s, ns] = process.hrtime();
      return s * 1000 + ns / 1e6;
    },
    epochMs: () => Date.now(),
  });
}
