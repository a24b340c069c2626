/**
 * Wake-ups for clients waiting on a run (long polls, event streams): one LISTEN on the run channel per process, fanned
 * out by run id. NOTIFY is best effort, so every waiter also has a timeout after which it looks again.
 * @module
 */
import type { SqlDatabase } from "./ports.ts";
import { CHANNELS } from "./store-runs.ts";

/** A registered wait: `changed` resolves true on a change of the run, false on timeout or cancel. */
export type RunWait = { changed: Promise<boolean>; cancel(): void };

/** Fans run-change notifications out to waiters. */
export class RunHub {
  readonly #waiters = new Map<string, Set<(changed: boolean) => void>>();
  #off: (() => Promise<void>) | null = null;
  #closed = false;

  /** True once {@link close} was called: waiters should give up. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Listen on the database's run channel.
   * @param db the database
   * @returns the hub
   * @example const hub = await RunHub.open(db);
   */
  static async open(db: SqlDatabase): Promise<RunHub> {
    const hub = new RunHub();
    hub.#off = await db.listen(CHANNELS.run, (runId) => hub.notify(runId));
    return hub;
  }

  /**
   * Wake the waiters of a run.
   * @param runId the run that changed
   */
  notify(runId: string): void {
    const set = this.#waiters.get(runId);
    if (set === undefined) return;
    this.#waiters.delete(runId);
    for (const wake of set) wake(true);
  }

  /**
   * Register a wait before looking at the run (so a change in between is not missed).
   * @param runId the run
   * @param timeoutMs the longest wait
   * @returns the wait
   * @example const w = hub.wait(id, 1000); const record = await getRun(…); if (!done(record)) await w.changed; else w.cancel();
   */
  wait(runId: string, timeoutMs: number): RunWait {
    let wake: (changed: boolean) => void = () => {};
    const changed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.#waiters.get(runId)?.delete(wake);
        if (this.#waiters.get(runId)?.size === 0) this.#waiters.delete(runId);
        resolve(value);
      };
      wake = finish;
    });
    let set = this.#waiters.get(runId);
    if (set === undefined) this.#waiters.set(runId, (set = new Set()));
    set.add(wake);
    return { changed, cancel: () => wake(false) };
  }

  /** Stop listening; wake every waiter. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const set of this.#waiters.values()) for (const wake of [...set]) wake(false);
    this.#waiters.clear();
    await this.#off?.();
  }
}
