/**
 * A run worker: takes jobs from the queue, claims their runs, runs them through the engine adapter, streams their
 * events, stores capsule and record, heartbeats, honours cancels, and re-queues the runs of workers that died.
 * Any number of workers, in any number of processes and machines, share one database.
 * @module
 */
import { PackCache } from "./pack-cache.ts";
import { isStoreUnavailable } from "./store-errors.ts";
import { CHANNELS } from "./store-runs.ts";
import { claimRuns, heartbeat, releaseRuns, requeueOrphans, requeueStale } from "./store-worker.ts";
import type { ClaimedRun } from "./store-worker.ts";
import { executeRun } from "./worker-run.ts";
import type { WorkerOptions } from "./worker-run.ts";

export type { WorkerOptions } from "./worker-run.ts";

/** A running worker. */
export type RunWorker = {
  /** Runs in progress. */
  readonly inFlight: number;
  /** Stop taking jobs, wait up to `graceMs` for the runs in progress, hand the rest back to the queue. */
  stop(graceMs?: number): Promise<void>;
};

type Running = { run: ClaimedRun; controller: AbortController; done: Promise<void> };

/** Defaults of {@link WorkerOptions}. */
export const WORKER_DEFAULTS = { concurrency: 1, pollMs: 2000, heartbeatMs: 500, staleSeconds: 45, maxAttempts: 3 } as const;

/**
 * On the embedded store, hand back the runs a previous process left EXECUTING. The embedded store is held by one
 * process at a time (its data directory's lock), and that process's workers are its only workers: a run still
 * EXECUTING when its first worker starts was left by a process that ended (killed, crashed, stopped while the store
 * was away). Such runs go back to the queue at once, as the stale path would hand them back after the stale limit
 * (same attempt counting; a run that lost `maxAttempts` workers ends FAILED, with the same record and event). A shared
 * PostgreSQL store never takes this path: other live workers may hold its runs until they go silent.
 * @param o the database, queue, attempt limit and log
 * @returns once the runs are handed back (at once on a PostgreSQL store)
 * @throws Error from the database when the store cannot be reached or the statement fails
 * @example await reclaimOrphans({ db, queue, log: console.error });
 */
export async function reclaimOrphans(o: Pick<WorkerOptions, "db" | "queue" | "maxAttempts" | "log">): Promise<void> {
  if (o.db.kind !== "pglite") return;
  const max = o.maxAttempts ?? WORKER_DEFAULTS.maxAttempts;
  const r = await requeueOrphans(o.db, o.queue, max);
  if (r.requeued.length > 0) o.log?.(`re-queued ${r.requeued.length} run(s) left executing by the embedded store's previous process: ${r.requeued.join(", ")}`);
  if (r.givenUp.length > 0) o.log?.(`gave up ${r.givenUp.length} run(s) that lost ${max} workers: ${r.givenUp.join(", ")}`);
}

/**
 * Start a worker (on the embedded store, after {@link reclaimOrphans}).
 * @param o the database, queue, engine and limits
 * @returns the running worker
 * @throws Error from the database when the NOTIFY channels cannot be listened to
 * @example const w = await startWorker({ db, queue, env, trust: null, id: "host:1:0" }); await w.stop();
 */
export async function startWorker(o: WorkerOptions): Promise<RunWorker> {
  const w = new _Worker(o);
  await w.start();
  return w;
}

class _Worker implements RunWorker {
  readonly #o: WorkerOptions;
  readonly #log: (line: string) => void;
  readonly #cache: PackCache;
  readonly #running = new Map<string, Running>();
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  #unlisten: (() => Promise<void>)[] = [];
  #stopping = false;
  /** Set when the stop's grace period is over: runs still waiting for an unavailable store give up. */
  #stopped = false;
  #wake: (() => void) | null = null;
  /** Job notices so far (NOTIFY on the jobs channel); a take that comes back short clears `#jobsMaybe` only if none arrived meanwhile. */
  #notices = 0;
  /** There may be jobs to take: a notice arrived, the poll timer fired, or the last take filled every free slot. */
  #jobsMaybe = true;
  /** Jobs whose runs ended and were stored: completed with the next take (one statement less per run), or before sleeping. */
  #done: string[] = [];
  #loop: Promise<void> = Promise.resolve();

  constructor(o: WorkerOptions) {
    this.#o = o;
    this.#log = o.log ?? (() => {});
    this.#cache = new PackCache(o.db);
  }

  get inFlight(): number {
    return this.#running.size;
  }

  async start(): Promise<void> {
    const o = this.#o;
    await reclaimOrphans(o); // before anything is taken (and before anything needs undoing)
    this.#unlisten = [
      await o.db.listen(CHANNELS.jobs, () => {
        this.#notices++;
        this.#jobsMaybe = true;
        this.#poke();
      }),
      await o.db.listen(CHANNELS.cancel, (runId) => this.#running.get(runId)?.controller.abort()),
    ];
    this.#timers.push(setInterval(() => void this.#beat(), o.heartbeatMs ?? WORKER_DEFAULTS.heartbeatMs));
    this.#timers.push(setInterval(() => void this.#reap(), Math.max(1000, ((o.staleSeconds ?? WORKER_DEFAULTS.staleSeconds) * 1000) / 3)));
    this.#loop = this.#run();
  }

  #poke(): void {
    this.#wake?.();
  }

  /** Log a failure, except the store being unavailable: the database reports that once per outage, not per call. */
  #trouble(what: string, err: unknown): void {
    if (!isStoreUnavailable(err)) this.#log(`${what}: ${(err as Error).message}`);
  }

  async #beat(): Promise<void> {
    try {
      for (const id of await heartbeat(this.#o.db, this.#o.id, [...this.#running.keys()])) this.#running.get(id)?.controller.abort();
    } catch (err) {
      this.#trouble("heartbeat failed", err);
    }
  }

  async #reap(): Promise<void> {
    const o = this.#o;
    const max = o.maxAttempts ?? WORKER_DEFAULTS.maxAttempts;
    const stale = o.staleSeconds ?? WORKER_DEFAULTS.staleSeconds;
    if (o.db.upForMs() < stale * 1000) return; // after an outage, give every worker time to heartbeat first
    try {
      const r = await requeueStale(o.db, o.queue, stale, max);
      if (r.requeued.length > 0) this.#log(`re-queued ${r.requeued.length} run(s) of a worker that stopped heartbeating: ${r.requeued.join(", ")}`);
      if (r.givenUp.length > 0) this.#log(`gave up ${r.givenUp.length} run(s) that lost ${max} workers: ${r.givenUp.join(", ")}`);
    } catch (err) {
      this.#trouble("re-queue check failed", err);
    }
  }

  /** Take jobs while there are free slots and maybe jobs; otherwise sleep until a notice, a freed slot or the poll timer. */
  async #run(): Promise<void> {
    const concurrency = this.#o.concurrency ?? WORKER_DEFAULTS.concurrency;
    while (!this.#stopping) {
      const free = concurrency - this.#running.size;
      if (free > 0 && this.#jobsMaybe) {
        const seen = this.#notices;
        try {
          const took = await this.#take(free);
          if (took < free && this.#notices === seen) this.#jobsMaybe = false; // drained, as far as anyone told us
        } catch (err) {
          this.#trouble("taking jobs failed", err);
          this.#jobsMaybe = false; // look again at the next notice or poll
        }
        continue;
      }
      if (this.#stopping) break;
      await this.#completeDone();
      if (this.#jobsMaybe && concurrency - this.#running.size > 0) continue; // a notice or a free slot came meanwhile
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.#jobsMaybe = true;
          this.#wake = null;
          resolve();
        }, this.#o.pollMs ?? WORKER_DEFAULTS.pollMs);
        this.#wake = () => {
          clearTimeout(t);
          this.#wake = null;
          resolve();
        };
      });
    }
  }

  async #completeDone(): Promise<void> {
    const done = this.#done.splice(0);
    try {
      await this.#o.queue.complete(done);
    } catch (err) {
      this.#done.push(...done);
      this.#trouble("completing jobs failed", err);
    }
  }

  async #take(free: number): Promise<number> {
    const o = this.#o;
    const done = this.#done.splice(0);
    // take and claim in one transaction: a worker that dies in between leaves the job offered, not taken
    let result: { taken: number; claimed: ClaimedRun[] };
    try {
      result = await o.db.transaction(async (tx) => {
        const jobs = await o.queue.take(free, tx);
        const runs = await claimRuns(tx, o.id, jobs);
        const ids = new Set(runs.map((c) => c.jobId));
        await o.queue.complete([...done, ...jobs.filter((j) => !ids.has(j.jobId)).map((j) => j.jobId)], tx); // unclaimed: stale jobs
        return { taken: jobs.length, claimed: runs };
      });
    } catch (err) {
      this.#done.push(...done);
      throw err;
    }
    for (const run of result.claimed) {
      const controller = new AbortController();
      if (run.cancelRequested) controller.abort();
      const ctx = { o, cache: this.#cache, signal: controller.signal, log: this.#log, stopped: () => this.#stopped };
      const done = executeRun(ctx, run).then((stored) => {
        if (stored) this.#done.push(run.jobId);
      }).finally(() => {
        this.#running.delete(run.runId);
        this.#poke();
      });
      this.#running.set(run.runId, { run, controller, done });
    }
    return result.taken;
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.#stopping = true;
    this.#poke();
    await this.#loop;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const all = Promise.all([...this.#running.values()].map((r) => r.done));
    await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    for (const off of this.#unlisten) await off().catch(() => {});
    await this.#completeDone();
    const left = [...this.#running.keys()];
    if (left.length > 0) {
      const released = await releaseRuns(this.#o.db, this.#o.queue, this.#o.id, left).catch(() => []);
      this.#log(`handed ${released.length} unfinished run(s) back to the queue`);
    }
  }
}
