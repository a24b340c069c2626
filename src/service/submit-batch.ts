/**
 * Group commit for submissions: while one batch of new runs is being written, the next ones gather, and are then
 * written together (one transaction, two statements). An idle service writes each run at once; a busy one writes
 * fewer, larger transactions. Runs with a requestId take the one-by-one path (it looks for an earlier run first).
 * A batch that fails for anything but an unavailable store is written again run by run, so that one submission's
 * fault fails only that submission.
 * @module
 */
import type { RunQueue, SqlDatabase } from "./ports.ts";
import { isStoreUnavailable } from "./store-errors.ts";
import { submitRun, submitRuns } from "./store-runs.ts";
import type { NewRun, Submitted } from "./store-runs.ts";

export type { Submitted } from "./store-runs.ts";

type Waiting = { run: NewRun; resolve: (v: Submitted) => void; reject: (e: unknown) => void };

/** Largest batch written at once. */
const MAX_BATCH = 256;

/** Writes new runs, batching those that arrive while a write is under way. */
export class SubmitBatcher {
  readonly #db: SqlDatabase;
  readonly #queue: RunQueue;
  #waiting: Waiting[] = [];
  #writing = false;

  /**
   * @param db the database
   * @param queue the run queue
   */
  constructor(db: SqlDatabase, queue: RunQueue) {
    this.#db = db;
    this.#queue = queue;
  }

  /**
   * Record a run and queue its job.
   * @param run a fresh id, the tenant, the pack, the options and the secrets' names
   * @returns the run id and status (an earlier run's for a repeated requestId, with what differs when its request did)
   * @example const { runId } = await batcher.submit({ id, tenant, pack, options });
   */
  submit(run: NewRun): Promise<Submitted> {
    if (run.options.requestId !== undefined) return submitRun(this.#db, this.#queue, run);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ run, resolve, reject });
      if (!this.#writing) void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#writing = true;
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_BATCH);
      try {
        await submitRuns(this.#db, this.#queue, batch.map((w) => w.run));
        for (const w of batch) w.resolve({ runId: w.run.id, status: "PENDING", existed: false });
      } catch (err) {
        if (batch.length === 1 || isStoreUnavailable(err)) for (const w of batch) w.reject(err);
        else await this.#oneByOne(batch); // one submission's fault fails that submission only
      }
    }
    this.#writing = false;
  }

  /** Write each run of a batch that failed in its own transaction, so that only the faulty ones fail. */
  async #oneByOne(batch: readonly Waiting[]): Promise<void> {
    for (const w of batch) {
      try {
        await submitRuns(this.#db, this.#queue, [w.run]);
        w.resolve({ runId: w.run.id, status: "PENDING", existed: false });
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
