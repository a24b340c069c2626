/**
 * The values of a submitted run's secrets (`POST /runs` `secrets`), held in this process's memory from the
 * submission until a worker of this process takes them for the run: never in a table, a row, a log line or a record.
 * A run whose values are gone (taken by an earlier attempt, expired, or claimed by a worker in another process) fails
 * with the engine's "needs secret" error, so the caller submits it again.
 * @module
 */
import type { SecretValues } from "../engine/mod.ts";

/** How long values wait for a worker (ms): a run still queued after this fails for want of them. */
export const SECRET_HOLD_MS = 60 * 60 * 1000;

/** Secret values by run id, until taken. */
export class SecretVault {
  readonly #held = new Map<string, { values: SecretValues; until: number }>();
  readonly #now: () => number;

  /** @param now a monotonic clock in ms (default `performance.now`) */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /**
   * Hold a run's values.
   * @param runId the run
   * @param values the values
   */
  put(runId: string, values: SecretValues): void {
    const now = this.#now();
    for (const [id, h] of this.#held) if (h.until <= now) this.#held.delete(id);
    this.#held.set(runId, { values, until: now + SECRET_HOLD_MS });
  }

  /**
   * Take (and forget) a run's values.
   * @param runId the run
   * @returns the values, or undefined when none are held
   */
  take(runId: string): SecretValues | undefined {
    const h = this.#held.get(runId);
    this.#held.delete(runId);
    return h === undefined || h.until <= this.#now() ? undefined : h.values;
  }

  /** How many runs' values are held (tests). */
  get size(): number {
    return this.#held.size;
  }
}
