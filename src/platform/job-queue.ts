/**
 * The run queue: pg-boss (an established PostgreSQL job queue, `FOR UPDATE SKIP LOCKED` under the hood) on the
 * service's own database connection, so that a run row and its job are written in one transaction, on a server and
 * on PGlite alike. The service only sends, takes, completes and cancels jobs; pg-boss stores them, hands each to
 * one taker, and cleans up. Only this file knows pg-boss.
 *
 * Why pg-boss 10 (measured on the 2-core CI machine; see the service README section): it runs on PGlite through its
 * `db` adapter (graphile-worker needs a second connection for LISTEN and hangs or corrupts PGlite's one session),
 * it re-offers a killed taker's job through its own fail/retry and expiry machinery (graphile-worker keeps such a
 * job locked for 4 hours), it works under Deno's npm compatibility, and its throughput with `fetch`/`complete` in
 * batches (~4,500 jobs/s drained) is far above what the engine needs. pg-boss 11+ requires Node 22.
 * @module
 */
import PgBoss from "pg-boss";
import { isTransientDbError } from "./postgres-errors.ts";
import type { SqlDatabase, SqlExecutor, SqlRow } from "./postgres.ts";

/** The pg-boss queue that carries runs. */
export const RUN_QUEUE = "reach-wasm-runs";

/** One job: which run to execute. */
export type QueueJob = { jobId: string; runId: string };

/** The queue as the service uses it. */
export type RunQueue = {
  /** Add a job inside the caller's transaction (it exists once the transaction commits). */
  enqueue(tx: SqlExecutor, job: QueueJob): Promise<void>;
  /** Add several jobs in one statement inside the caller's transaction. */
  enqueueMany(tx: SqlExecutor, jobs: readonly QueueJob[]): Promise<void>;
  /**
   * Take up to `max` jobs; each is given to one taker only. Inside a transaction (`tx`), the take is undone when the
   * transaction is: a taker that dies before committing leaves no job taken.
   */
  take(max: number, tx?: SqlExecutor): Promise<QueueJob[]>;
  /** Mark taken jobs done (inside `tx` when given). */
  complete(jobIds: readonly string[], tx?: SqlExecutor): Promise<void>;
  /** Cancel jobs that are waiting or taken (a cancelled job is never offered again). */
  cancel(jobIds: readonly string[], tx?: SqlExecutor): Promise<void>;
  /** Stop pg-boss's maintenance (the database stays open). */
  stop(): Promise<void>;
};

/** Options of {@link openRunQueue}. */
export type RunQueueOptions = {
  /** Run pg-boss's maintenance (archiving, expiry) in this process (default true). */
  maintenance?: boolean;
  /** pg-boss's own errors (maintenance failures), for stderr. */
  onError?: (message: string) => void;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** pg-boss's `db` adapter: parameterised statements as such, parameterless text as a (multi-statement) script. */
function adapter(run: (text: string, values: readonly unknown[] | undefined) => Promise<SqlRow[]>): PgBoss.Db {
  return { executeSql: async (text: string, values?: unknown[]) => ({ rows: await run(text, values) }) };
}

function dbAdapter(db: SqlDatabase): PgBoss.Db {
  return adapter((text, values) => (values !== undefined && values.length > 0 ? db.query(text, values) : db.exec(text)));
}

/**
 * Open the run queue on an open database (creates pg-boss's schema and the queue when missing).
 * @param db the service database
 * @param options maintenance and error reporting
 * @returns the queue
 * @throws Error from the database when pg-boss cannot set up its schema (ReachError `EXEC_RESOURCE_UNAVAILABLE` while
 *   the database is unavailable: open it again later)
 * @example const queue = await openRunQueue(db); const jobs = await queue.take(4);
 */
export async function openRunQueue(db: SqlDatabase, options: RunQueueOptions = {}): Promise<RunQueue> {
  const boss = new PgBoss({
    db: dbAdapter(db),
    schedule: false,
    supervise: options.maintenance ?? true,
    maintenanceIntervalSeconds: 60,
    archiveCompletedAfterSeconds: 3600,
    deleteAfterDays: 2,
  });
  // pg-boss reports its maintenance's failures as 'error' events (unheard, one would end the process); while the
  // database is unavailable they say so once per outage through the database, so only other failures are passed on
  boss.on("error", (err: Error) => {
    if (!isTransientDbError(err, db.kind)) options.onError?.(`queue: ${err.message}`);
  });
  try {
    await boss.start();
    if ((await boss.getQueue(RUN_QUEUE)) === null) {
      // Re-offering a dead worker's run is the service's job (heartbeats); pg-boss's expiry is only a backstop.
      await boss.createQueue(RUN_QUEUE, { name: RUN_QUEUE, policy: "standard", retryLimit: 0, expireInHours: 23 }).catch(async (err: unknown) => {
        if ((await boss.getQueue(RUN_QUEUE)) === null) throw err; // another process created it meanwhile: fine
      });
    }
  } catch (err) {
    await boss.stop({ graceful: false, wait: true, close: false }).catch(() => {}); // no maintenance timers left behind
    throw err;
  }
  const on = (tx: SqlExecutor | undefined) => (tx === undefined ? {} : { db: adapter((text, values) => tx.query(text, values)) });
  return {
    enqueue: async (tx, job) => {
      await boss.send(RUN_QUEUE, { runId: job.runId }, { id: job.jobId, ...on(tx) });
    },
    enqueueMany: async (tx, jobs) => {
      if (jobs.length > 0) await boss.insert(jobs.map((j) => ({ id: j.jobId, name: RUN_QUEUE, data: { runId: j.runId } })), on(tx));
    },
    take: async (max, tx) => {
      const jobs = await boss.fetch<{ runId?: unknown }>(RUN_QUEUE, { batchSize: max, ...on(tx) });
      const valid = (j: (typeof jobs)[number]) => typeof j.data?.runId === "string" && UUID.test(j.data.runId);
      const junk = jobs.filter((j) => !valid(j)).map((j) => j.id);
      if (junk.length > 0) await boss.cancel(RUN_QUEUE, junk, on(tx)); // not ours: never offered again
      return jobs.filter(valid).map((j) => ({ jobId: j.id, runId: j.data.runId as string }));
    },
    complete: async (ids, tx) => {
      // pg-boss 10 reads complete's third argument as output data whatever its typings say: options go fourth
      if (ids.length > 0) await (boss.complete as (name: string, ids: string[], data: undefined, options: PgBoss.ConnectionOptions) => Promise<unknown>)(RUN_QUEUE, [...ids], undefined, on(tx));
    },
    cancel: async (ids, tx) => {
      if (ids.length > 0) await boss.cancel(RUN_QUEUE, [...ids], on(tx));
    },
    stop: async () => {
      await boss.stop({ graceful: false, wait: true, close: false });
    },
  };
}
