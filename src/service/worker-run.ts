/**
 * One claimed run on a worker, from its pack to its stored end. The run executes once; what follows never executes it
 * again:
 * - while the store is unavailable (its database restarting, down, out of connections) the pack is read, the events
 *   are kept and the end is stored as soon as it is back, retried with backoff; the run stays the worker's meanwhile
 *   (its heartbeat goes on), so no other worker takes it up for that reason;
 * - a store that refuses the end itself (a statement that fails the same way every time) ends the run FAILED with
 *   that refusal as its error, at once: a deterministic failure is reported as what it is, never retried.
 * @module
 */
import type { RunProgress } from "../engine/mod.ts";
import type { EngineEnvironment } from "../engine/mod.ts";
import type { RunQueue, SqlDatabase } from "./ports.ts";
import type { FetchLike } from "../protocol/mod.ts";
import { toReachError } from "../protocol/mod.ts";
import { runOnEngine, trustNow } from "./engine-adapter.ts";
import type { TrustSource } from "./engine-adapter.ts";
import { advance, eventsOf } from "./events.ts";
import type { EventDraft, ProgressCounters } from "./events.ts";
import type { PackCache } from "./pack-cache.ts";
import { isStoreUnavailable } from "./store-errors.ts";
import { finishRun, flushEvents, numberEvents } from "./store-worker.ts";
import type { ClaimedRun, NumberedEvent, RunEnd } from "./store-worker.ts";
import type { SecretVault } from "./secret-vault.ts";

/** How a worker runs (`startWorker`, `worker.ts`). */
export type WorkerOptions = {
  db: SqlDatabase;
  queue: RunQueue;
  env: EngineEnvironment;
  /** Packs signed by these keys run unrestricted (a function: asked before each run, so changes reach the next one). */
  trust: TrustSource;
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
  /**
   * A worker silent this long is presumed dead and its runs re-queued (default 45 s). Only while the database has
   * answered this worker for at least as long: after an outage every heartbeat is old, and the runs' workers get that
   * time to heartbeat and store their ends before anyone presumes them dead.
   */
  staleSeconds?: number;
  /** How many workers a run may lose before it ends FAILED (default 3). */
  maxAttempts?: number;
  /** One line per noteworthy event (incidents, re-queues, database errors), for stderr. */
  log?: (line: string) => void;
  /** Submitted runs' secret values (the service's, when the worker runs in its process): taken once per run. */
  secrets?: SecretVault;
  /** The engine call (default `runOnEngine`, the service's one way into the engine; tests put a stand-in here). */
  engine?: typeof runOnEngine;
};

/**
 * Backoff while the store is unavailable: from 250 ms, doubling, at most this far apart (ms). Short: an end is stored
 * within a second of the database's return (the run's heartbeat resumes as soon, every `heartbeatMs`).
 */
const MAX_BACKOFF_MS = 1000;

/** What {@link executeRun} needs besides the run. */
export type RunContext = {
  o: WorkerOptions;
  cache: PackCache;
  signal: AbortSignal;
  log: (line: string) => void;
  /** True once the worker stops for good (the wait for the store then ends). */
  stopped: () => boolean;
};

/**
 * Call `fn` until it does not fail for an unavailable store (backoff 250 ms → 1 s); any other failure is thrown.
 * @param fn the store call
 * @param stopped gives up (throwing the last failure) once this is true
 * @param onFirstWait called once, when the first call found the store unavailable
 * @returns what `fn` returns
 * @throws the first failure that is not the store being unavailable, or the last one once `stopped()`
 * @example const files = await whileUnavailable(() => cache.files(sha), () => false);
 */
export async function whileUnavailable<T>(fn: () => Promise<T>, stopped: () => boolean, onFirstWait?: () => void): Promise<T> {
  let delay = 250;
  for (let tries = 0; ; tries++) {
    try {
      return await fn();
    } catch (err) {
      if (!isStoreUnavailable(err) || stopped()) throw err;
      if (tries === 0) onFirstWait?.();
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(MAX_BACKOFF_MS, delay * 2);
  }
}

/**
 * Run one claimed run to its stored end; resolves true once the end is stored. Never throws: an end that could not be
 * stored (the worker stopped while the store was away, or the store refused even a FAILED end) is logged and left to
 * the re-queue check.
 * @param ctx the worker, its pack cache, the run's abort signal and log
 * @param run the claimed run
 * @returns whether the end is stored
 */
export async function executeRun(ctx: RunContext, run: ClaimedRun): Promise<boolean> {
  const { o, log } = ctx;
  const stream = eventStream(o.db, run, log);
  let end: RunEnd;
  try {
    const files = await whileUnavailable(() => ctx.cache.files(run.archiveSha256), ctx.stopped);
    const secrets = o.secrets?.take(run.runId);
    const out = await (o.engine ?? runOnEngine)(
      o.env,
      { pack: { files }, options: run.options, trust: await trustNow(o.trust), ...(o.key === undefined ? {} : { key: o.key }), ...(o.fetch === undefined ? {} : { fetch: o.fetch }), ...(secrets === undefined ? {} : { secrets }) },
      { signal: ctx.signal, onProgress: stream.progress },
    );
    const error = out.error === null ? null : { code: out.error.code, message: out.error.message };
    const events = eventsOf({ kind: "finished", status: out.status, runHash: out.runHash, error, artifacts: out.artifacts, cancelled: ctx.signal.aborted });
    end = { status: out.status, runHash: out.runHash, engineRunId: out.engineRunId, capsule: out.capsule, result: out.result, error, events, counters: stream.counters() };
  } catch (err) {
    end = failedEnd(toReachError(err), stream.counters());
  }
  const { seq, unsaved } = await stream.close(); // a short run's events are stored with its end, in one statement
  const at = { runId: run.runId, attempt: run.attempt, seq };
  try {
    await storeEnd(ctx, at, { ...end, unsaved });
    return true;
  } catch (err) {
    if (isStoreUnavailable(err)) log(`the end of run ${run.runId} is not stored (this worker stops while the store is unavailable); the run will be re-queued once its heartbeat is stale`);
    else log(`storing the end of run ${run.runId} failed: ${describe(err)}; the run will be re-queued once its heartbeat is stale`);
    return false;
  }
}

function failedEnd(e: { code: string; message: string }, counters: ProgressCounters): RunEnd {
  const error = { code: e.code, message: e.message };
  const events = eventsOf({ kind: "finished", status: "FAILED", runHash: null, error, artifacts: [], cancelled: false });
  return { status: "FAILED", runHash: null, engineRunId: null, capsule: null, result: null, error, events, counters };
}

function describe(err: unknown): string {
  const state = (err as { code?: unknown } | null)?.code;
  const text = (err instanceof Error ? err.message : String(err)).slice(0, 300);
  return typeof state === "string" && /^[0-9A-Z]{5}$/.test(state) ? `${text} (SQLSTATE ${state})` : text;
}

/** Store the end, waiting out an unavailable store; a refused end is replaced by a FAILED end naming the refusal. */
async function storeEnd(ctx: RunContext, at: { runId: string; attempt: number; seq: number }, end: RunEnd): Promise<void> {
  const { o, log } = ctx;
  let stored;
  try {
    const waiting = () => log(`run ${at.runId} ended ${end.status}; the database is unavailable, so its end is kept here and stored as soon as it answers`);
    stored = await whileUnavailable(() => finishRun(o.db, o.id, at, end), ctx.stopped, waiting);
  } catch (err) {
    if (isStoreUnavailable(err)) throw err;
    const message = `the run ended ${end.status}${end.runHash === null ? "" : ` (run hash ${end.runHash})`} but the service store refused to keep its end: ${describe(err)}; the run was not retried (it would fail the same way)`;
    log(`run ${at.runId}: ${message}`);
    stored = await whileUnavailable(() => finishRun(o.db, o.id, at, failedEnd({ code: "EXEC_OUTPUT_INVALID", message }, end.counters)), ctx.stopped);
  }
  if (stored.incident !== null) log(`DETERMINISM INCIDENT on run ${at.runId}: ${stored.incident} (run hash ${end.runHash}); recorded in reach_wasm.incidents`);
}

/**
 * Buffer a run's events and store them at most every 200 ms while it runs. Events that could not be stored (the
 * store away) keep their numbers and are stored with the run's end.
 */
function eventStream(db: SqlDatabase, run: ClaimedRun, log: (line: string) => void) {
  let counters: ProgressCounters = { currentStepIndex: 0, totalSteps: 0, replansCount: 0 };
  let buffer: EventDraft[] = [];
  const unsaved: NumberedEvent[] = [];
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
    flushing = flushing.then(() => flushEvents(db, { runId: run.runId, attempt: run.attempt, seq: from }, drafts, counters)).catch((err: unknown) => {
      unsaved.push(...numberEvents(from, drafts));
      if (!isStoreUnavailable(err)) log(`storing events of run ${run.runId} failed: ${describe(err)}; they are stored with its end`);
    });
    return flushing;
  };
  return {
    progress: (p: RunProgress) => {
      counters = advance(counters, p);
      buffer.push(...eventsOf({ kind: "progress", progress: p, attempt: run.attempt }));
      timer ??= setTimeout(() => void flush(), 200);
    },
    counters: () => counters,
    /** Stop the timer and wait for stores under way; the next sequence number, with the unstored events before it. */
    close: async (): Promise<{ seq: number; unsaved: NumberedEvent[] }> => {
      if (timer !== null) clearTimeout(timer);
      await flushing;
      const rest = numberEvents(seq, buffer);
      return { seq: seq + buffer.length, unsaved: [...unsaved, ...rest] };
    },
  };
}
