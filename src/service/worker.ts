/**
 * A run worker: takes jobs from the queue, claims their runs, runs them through the engine adapter, streams their
 * events, stores capsule and record, heartbeats, honours cancels, and re-queues the runs of workers that died.
 * Any number of workers, in any number of processes and machines, share one database.
 * @module
 */
import type { EngineEnvironment } from "../engine/runners.ts";
import type { RunProgress } from "../engine/types.ts";
import type { RunQueue } from "../platform/job-queue.ts";
import type { SqlDatabase } from "../platform/postgres.ts";
import { toReachError } from "../protocol/errors.ts";
import type { FetchLike } from "../sandbox/host/http.ts";
import type { TrustStore } from "../trust/trust-store.ts";
import { runOnEngine } from "./engine-adapter.ts";
import { advance, eventsOf } from "./events.ts";
import type { EventDraft, ProgressCounters } from "./events.ts";
import { PackCache } from "./pack-cache.ts";
import { CHANNELS } from "./store-runs.ts";
import { claimRuns, finishRun, flushEvents, heartbeat, releaseRuns, requeueStale } from "./store-worker.ts";
import type { ClaimedRun, RunEnd } from "./store-worker.ts";

/** How a worker runs. */
export type WorkerOptions = {
  db: SqlDatabase;
  queue: RunQueue;
  env: EngineEnvironment;
  /** Packs signed by these keys run unrestricted. */
  trust: TrustStore | null;
  /** Sign capsules with this Ed25519 private key seed. */
  key?: Uint8Array;
  /** Network for trusted packs that declare hosts (default none). */
  fetch?: FetchLike;
  /** This worker's id (host:pid:n), shown in run records. */
  id: string;
  /** Runs at once (default 1). */
  concurrency?: number;
  /** Look for jobs at least this often when no NOTIFY arrives (default 2000 ms). */
  pollMs?: number;
  /** Heartbeat (and cancel check) period (default 500 ms). */
  heartbeatMs?: number;
  /** A worker silent this long is presumed dead and its runs re-queued (default 45 s). */
  staleSeconds?: number;
  /** How many workers a run may lose before it ends FAILED (default 3). */
  maxAttempts?: number;
  /** One line per noteworthy event (incidents, re-queues, database errors), for stderr. */
  log?: (line: string) => void;
  /** The engine call (default {@link runOnEngine}, the service's one way into the engine; tests put a stand-in here). */
  engine?: typeof runOnEngine;
};

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
 * Start a worker.
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

  async #beat(): Promise<void> {
    try {
      for (const id of await heartbeat(this.#o.db, this.#o.id, [...this.#running.keys()])) this.#running.get(id)?.controller.abort();
    } catch (err) {
      this.#log(`heartbeat failed: ${(err as Error).message}`);
    }
  }

  async #reap(): Promise<void> {
    const o = this.#o;
    const max = o.maxAttempts ?? WORKER_DEFAULTS.maxAttempts;
    try {
      const r = await requeueStale(o.db, o.queue, o.staleSeconds ?? WORKER_DEFAULTS.staleSeconds, max);
      if (r.requeued.length > 0) this.#log(`re-queued ${r.requeued.length} run(s) of a worker that stopped heartbeating: ${r.requeued.join(", ")}`);
      if (r.givenUp.length > 0) this.#log(`gave up ${r.givenUp.length} run(s) that lost ${max} workers: ${r.givenUp.join(", ")}`);
    } catch (err) {
      this.#log(`re-queue check failed: ${(err as Error).message}`);
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
          this.#log(`taking jobs failed: ${(err as Error).message}`);
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
      this.#log(`completing jobs failed: ${(err as Error).message}`);
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
      const done = execute(o, this.#cache, run, controller.signal, this.#log).then((stored) => {
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

/**
 * Run one claimed run to its stored end; resolves true once the end is stored. Never throws: a failure to store
 * leaves the run to the re-queue check.
 */
async function execute(o: WorkerOptions, cache: PackCache, run: ClaimedRun, signal: AbortSignal, log: (line: string) => void): Promise<boolean> {
  const stream = eventStream(o.db, run, log);
  let end: RunEnd;
  try {
    const files = await cache.files(run.archiveSha256);
    const out = await (o.engine ?? runOnEngine)(
      o.env,
      { pack: { files }, options: run.options, trust: o.trust, ...(o.key === undefined ? {} : { key: o.key }), ...(o.fetch === undefined ? {} : { fetch: o.fetch }) },
      { signal, onProgress: stream.progress },
    );
    const error = out.error === null ? null : { code: out.error.code, message: out.error.message };
    const events = eventsOf({ kind: "finished", status: out.status, runHash: out.runHash, error, artifacts: out.artifacts, cancelled: signal.aborted });
    end = { status: out.status, runHash: out.runHash, engineRunId: out.engineRunId, capsule: out.capsule, result: out.result, error, events, counters: stream.counters() };
  } catch (err) {
    const e = toReachError(err);
    const error = { code: e.code, message: e.message };
    const events = eventsOf({ kind: "finished", status: "FAILED", runHash: null, error, artifacts: [], cancelled: false });
    end = { status: "FAILED", runHash: null, engineRunId: null, capsule: null, result: null, error, events, counters: stream.counters() };
  }
  try {
    const { seq, pending } = await stream.close(); // a short run's events are stored with its end, in one transaction
    const stored = await finishRun(o.db, o.id, { runId: run.runId, attempt: run.attempt, seq }, { ...end, events: [...pending, ...end.events] });
    if (stored.incident !== null) log(`DETERMINISM INCIDENT on run ${run.runId}: ${stored.incident} (run hash ${end.runHash}); recorded in reach_wasm.incidents`);
    return true;
  } catch (err) {
    log(`storing the end of run ${run.runId} failed: ${(err as Error).message}; the run will be re-queued once its heartbeat is stale`);
    return false;
  }
}

/** Buffer a run's events and store them at most every 200 ms while it runs. */
function eventStream(db: SqlDatabase, run: ClaimedRun, log: (line: string) => void) {
  let counters: ProgressCounters = { currentStepIndex: 0, totalSteps: 0, replansCount: 0 };
  let buffer: EventDraft[] = [];
  let seq = run.nextSeq;
  let flushing: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const drafts = buffer;
    buffer = [];
    if (drafts.length === 0) return flushing;
    const from = seq;
    seq += drafts.length;
    flushing = flushing.then(() => flushEvents(db, { runId: run.runId, attempt: run.attempt, seq: from }, drafts, counters)).catch((err: unknown) => log(`storing events of run ${run.runId} failed: ${(err as Error).message}`));
    return flushing;
  };
  return {
    progress: (p: RunProgress) => {
      counters = advance(counters, p);
      buffer.push(...eventsOf({ kind: "progress", progress: p, attempt: run.attempt }));
      timer ??= setTimeout(() => void flush(), 200);
    },
    counters: () => counters,
    /** Stop the timer and wait for stores under way; return the next sequence number and the unstored events. */
    close: async (): Promise<{ seq: number; pending: EventDraft[] }> => {
      if (timer !== null) clearTimeout(timer);
      await flushing;
      return { seq, pending: buffer };
    },
  };
}
