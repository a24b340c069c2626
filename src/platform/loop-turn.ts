/**
 * One turn of this runtime's event loop, for the engine's abort checks (`EngineEnvironment.turn`): a signal handler
 * or a message that arrived while the thread was held runs before the turn ends.
 * @module
 */
import { processClock } from "./real-clock.ts";

/** On Deno, how long after a timer's turn the checks between steps may skip theirs. */
const DENO_SKIP_MS = 20;

/**
 * The cheapest turn that also handles pending signals. On Node two `setImmediate`s (~30 µs): the second one's check
 * phase follows a poll for I/O and signals, which the first's may not (called from an I/O callback, it runs in the
 * same loop iteration, after that iteration's poll). On Deno only a timer's turn reliably runs a pending signal's listener (a message or
 * `setImmediate` may resolve without the poll that delivers signals), and it costs ~1-2.5 ms: the checks between
 * steps take one only when the last was at least 20 ms ago (a signal is then seen at most 20 ms of steps late),
 * the last check before a run's terminal state always does.
 * @returns a function that resolves after one turn (`last`: always a full turn)
 * @example await loopTurn()(true); // a SIGINT that came while this thread computed has been handled now
 */
export function loopTurn(): (last?: boolean) => Promise<void> {
  const immediate = (globalThis as { setImmediate?: (cb: () => void) => unknown }).setImmediate;
  if ((globalThis as { Deno?: unknown }).Deno === undefined && immediate !== undefined) {
    const once = (): Promise<void> => new Promise<void>((resolve) => void immediate(resolve));
    return async () => {
      await once();
      await once();
    };
  }
  let lastTurn = -Infinity;
  return async (last = false) => {
    if (!last && processClock.monotonicMs() - lastTurn < DENO_SKIP_MS) return;
    await new Promise<void>((resolve) => void setTimeout(resolve, 0));
    lastTurn = processClock.monotonicMs();
  };
}
