/**
 * The ports the run service needs from the runtime, declared here and implemented by the platform (the SQL database
 * and the job queue on PostgreSQL or PGlite: `src/platform/postgres.ts`, `src/platform/job-queue.ts`; the HTTP
 * server: `src/platform/http-server.ts`). The CLI opens them and hands them in (`ServiceOptions`); the service
 * imports no platform.
 * @module
 */

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs one statement with `$1…` parameters. */
export type SqlExecutor = {
  /**
   * Run one statement.
   * @param text SQL with `$n` placeholders
   * @param params the values (`Uint8Array` for bytea, objects for json/jsonb are passed as JSON text by the caller)
   * @returns the rows
   */
  query<T extends SqlRow = SqlRow>(text: string, params?: readonly unknown[]): Promise<T[]>;
};

/** An open database. */
export type SqlDatabase = SqlExecutor & {
  /** `postgres` (a server) or `pglite` (embedded). */
  readonly kind: "postgres" | "pglite";
  /** Where it is, for messages (a server URL without its password, or the data directory). */
  readonly where: string;
  /** Run several statements without parameters (schema set-up); resolves to the last statement's rows. */
  exec(text: string): Promise<SqlRow[]>;
  /** Run `fn` in one transaction (committed when it resolves, rolled back when it throws). */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Call `onPayload` for each NOTIFY on `channel`; resolves to the unsubscribe function. Best effort. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Close every connection (and release the data directory lock). */
  close(): Promise<void>;
  /**
   * How long the database has answered since it was last unavailable (or since it was opened), in ms; 0 while the
   * last statement found it unavailable (then thrown as ReachError `EXEC_RESOURCE_UNAVAILABLE` with `retryAfter`
   * and `details.storeUnavailable`).
   */
  upForMs(): number;
};

/** One job: which run to execute. */
export type QueueJob = { jobId: string; runId: string };

/** The queue of runs to execute, written in the same transactions as the run rows. */
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
  /** Stop the queue's maintenance (the database stays open). */
  stop(): Promise<void>;
};

/** Who sent a request, as the HTTP server tells it. */
export type ClientInfo = {
  /** What per-client limits count by (an address, or an IPv6 address's /64 prefix). */
  readonly key: string;
};
