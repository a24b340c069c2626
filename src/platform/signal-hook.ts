/**
 * A test hook that puts a signal at an exact point of a run instead of racing the clock: with
 * `REACH_WASM_TEST_SIGNAL=POINT[,POINT…]`, where a POINT is `[SIGINT@|SIGTERM@]NAME` (SIGINT by default), the process
 * sends itself the signal when it reaches that point, and then goes on as if it had come from outside: its handler
 * runs only when the event loop turns, so a point reached while a run holds the thread tests exactly what a user's
 * Ctrl-C at that moment does.
 *
 * The points (`src/host/signal-points.ts` names a progress report's):
 * - `start`: the CLI's first line, before any handler is installed;
 * - `run`: the CLI's handlers are installed and the run is about to start;
 * - `progress:N`: the N-th progress report of the run (from 1), in the order the engine makes them;
 * - `planning`, `planned`: the planner is asked / its plan is gated;
 * - `step:N`, `step-done:N`: step N (from 1) starts / has ended;
 * - `end`: the plan's last step has ended (before the run's terminal state and capsule);
 * - `write`, `written`: the CLI's `run` is about to write the results of a run that has ended / has written them;
 * - `poll:N`: the N-th time a run's attempt on the calling thread is asked whether it was interrupted (at every fuel
 *   refill of a computing tool or planner, and at the checks between steps): a signal while a tool holds the thread;
 * - `handover`: a run given up on the calling thread is about to start again on an engine thread;
 * - `call:N`: the N-th call of a session starts (`reach-wasm mcp`).
 * Without the variable the hook does nothing.
 * @module
 */
import process from "node:process";

type Wanted = { signal: "SIGINT" | "SIGTERM"; point: string };

let wanted: Wanted[] | null = null;

function parse(): Wanted[] {
  const text = process.env["REACH_WASM_TEST_SIGNAL"];
  if (text === undefined || text === "") return [];
  return text.split(",").map((item) => {
    const at = item.indexOf("@");
    const name = at < 0 ? "SIGINT" : item.slice(0, at);
    return { signal: name === "SIGTERM" ? "SIGTERM" : "SIGINT", point: item.slice(at + 1).trim() };
  });
}

/**
 * Send this process the signal the hook names for `point`, if any (each point once).
 * @param points the names of the point reached (any of them may be the one named)
 * @returns nothing
 * @example signalAt("handover");
 */
export function signalAt(...points: string[]): void {
  wanted ??= parse();
  if (wanted.length === 0) return;
  const i = wanted.findIndex((w) => points.includes(w.point));
  if (i < 0) return;
  const [w] = wanted.splice(i, 1);
  process.kill(process.pid, w!.signal);
  // Give the system a moment to deliver it (to the runtime's signal watcher; the handler waits for the loop).
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
}

/**
 * The hook at interrupt polls (`poll:N`), as an `interrupted` poll that never interrupts, or null when no such point
 * is named.
 * @returns the poll, or null
 * @example const poll = pollSignals(); // pass as the attempt's `interrupted`
 */
export function pollSignals(): (() => boolean) | null {
  wanted ??= parse();
  if (!wanted.some((w) => w.point.startsWith("poll:"))) return null;
  let n = 0;
  return () => {
    signalAt(`poll:${++n}`);
    return false;
  };
}

/**
 * Whether the hook names any point (without the variable it does nothing).
 * @returns true when `REACH_WASM_TEST_SIGNAL` names a point
 * @example if (signalsWanted()) onProgress = progressSignals(onProgress);
 */
export function signalsWanted(): boolean {
  wanted ??= parse();
  return wanted.length > 0;
}
