/**
 * The workers' side of the run store: claim a queued run, heartbeat it, stream its events, store its end (capsule
 * unique by run hash; a second execution is compared and a difference recorded as a determinism incident), and
 * re-queue the runs of workers that stopped heartbeating (or, on a store whose previous holder ended, at once).
 * @module
 */
import type { RunQueue, SqlDatabase, SqlExecutor } from "./ports.ts";
import type { EventDraft, ProgressCounters } from "./events.ts";
import { eventsOf } from "./events.ts";
import { endOf } from "./records.ts";
import type { RunOptions } from "./schemas.ts";
import { CHANNELS, appendEventsNow } from "./store-runs.ts";

/** A run a worker has claimed. */
export type ClaimedRun = {
  runId: string;
  jobId: string;
  archiveSha256: string;
  options: Omit<RunOptions, "requestId">;
  attempt: number;
  cancelRequested: boolean;
  /** The sequence number of the run's next event. */
  nextSeq: number;
};

/**
 * Claim the runs of taken jobs. A job whose run is no longer queued under that job (cancelled, re-queued under a
 * new job, ended) is not claimed: the caller completes it without running anything.
 * @param db the database
 * @param worker this worker's id
 * @param jobs the taken jobs
 * @returns the claimed runs
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const runs = await claimRuns(db, "w1", jobs);
 */
export async function claimRuns(db: SqlExecutor, worker: string, jobs: readonly { jobId: string; runId: string }[]): Promise<ClaimedRun[]> {
  if (jobs.length === 0) return [];
  const rows = await db.query(
    `WITH c AS (UPDATE reach_wasm.runs r SET status = 'EXECUTING', phase = 'running', worker = $1, attempts = r.attempts + 1, heartbeat_at = now(),
         started_at = coalesce(r.started_at, now()), updated_at = now()
       FROM jsonb_to_recordset($2::jsonb) AS j(run_id uuid, job_id uuid)
       WHERE r.id = j.run_id AND r.job_id = j.job_id AND r.status = 'PENDING'
       RETURNING r.id::text AS id, r.job_id::text AS job_id, r.archive_sha256, r.request, r.attempts, r.cancel_requested_at IS NOT NULL AS cancel_requested,
         (SELECT coalesce(max(e.seq) + 1, 0) FROM reach_wasm.run_events e WHERE e.run_id = r.id)::int AS next_seq)
     SELECT c.* FROM c`, // no NOTIFY: waiters care about events and ends, and the first events follow within 200 ms
    [worker, JSON.stringify(jobs.map((j) => ({ run_id: j.runId, job_id: j.jobId })))],
  );
  return rows.map((r) => ({
    runId: String(r["id"]),
    jobId: String(r["job_id"]),
    archiveSha256: String(r["archive_sha256"]),
    options: (typeof r["request"] === "string" ? JSON.parse(r["request"]) : r["request"]) as Omit<RunOptions, "requestId">,
    attempt: Number(r["attempts"]),
    cancelRequested: r["cancel_requested"] === true,
    nextSeq: Number(r["next_seq"]),
  }));
}

/**
 * Heartbeat a worker's running runs and learn which of them should stop.
 * @param db the database
 * @param worker this worker's id
 * @param runIds the runs it is executing
 * @returns the ids of those runs whose cancel was requested
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const stop = await heartbeat(db, "w1", ["…"]);
 */
export async function heartbeat(db: SqlExecutor, worker: string, runIds: readonly string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `UPDATE reach_wasm.runs SET heartbeat_at = now()
     WHERE id IN (SELECT x::uuid FROM jsonb_array_elements_text($1::jsonb) AS x) AND worker = $2 AND status = 'EXECUTING'
     RETURNING id::text AS id, cancel_requested_at IS NOT NULL AS cancel`,
    [JSON.stringify(runIds), worker],
  );
  return rows.filter((r) => (r as { cancel?: unknown }).cancel === true).map((r) => r.id);
}

/** An event with its sequence number. */
export type NumberedEvent = { seq: number; draft: EventDraft };

/**
 * Number events from `seq`.
 * @param seq the first sequence number
 * @param drafts the events
 * @returns the events with their numbers
 */
export function numberEvents(seq: number, drafts: readonly EventDraft[]): NumberedEvent[] {
  return drafts.map((draft, i) => ({ seq: seq + i, draft }));
}

/** Numbered events as the JSON `jsonb_to_recordset` reads: each event's data is its JSON text, stored as it is. */
function numbered(events: readonly NumberedEvent[], at: string): string {
  return JSON.stringify(events.map(({ seq, draft: d }) => ({ seq, event_type: d.eventType, at, step_index: d.stepIndex ?? null, tool_name: d.toolName ?? null, data: d.data === undefined ? null : JSON.stringify(d.data) })));
}

/** The INSERT of numbered events; the arguments name the parameters (`$1`…) holding run id, attempt and events. */
function insertEvents(runId: string, attempt: string, events: string, condition = ""): string {
  return `INSERT INTO reach_wasm.run_events (run_id, seq, attempt, event_type, at, step_index, tool_name, data)
  SELECT ${runId}, x.seq, ${attempt}, x.event_type, x.at, x.step_index, x.tool_name, x.data
  FROM jsonb_to_recordset(${events}::jsonb) AS x(seq int, event_type text, at timestamptz, step_index int, tool_name text, data text) ${condition}
  ON CONFLICT DO NOTHING`;
}

/**
 * Store a running run's buffered events and counters, and tell listeners.
 * @param db the database
 * @param run the run, its attempt and the sequence number of the first event
 * @param drafts the events
 * @param counters the seed 004 counters so far
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @returns once the events and counters are stored
 * @example await flushEvents(db, { runId, attempt: 1, seq: 0 }, drafts, counters);
 */
export async function flushEvents(db: SqlExecutor, run: { runId: string; attempt: number; seq: number }, drafts: readonly EventDraft[], counters: ProgressCounters): Promise<void> {
  await db.query(
    `WITH ins AS (${insertEvents("$1", "$2", "$3")}), upd AS (UPDATE reach_wasm.runs SET progress = $4, updated_at = now() WHERE id = $1 AND status = 'EXECUTING')
     SELECT pg_notify($5, $1::text)`,
    [run.runId, run.attempt, numbered(numberEvents(run.seq, drafts), new Date().toISOString()), JSON.stringify(counters), CHANNELS.run],
  );
}

/** How a run ended, as the worker stores it. */
export type RunEnd = {
  status: "COMPLETED" | "FAILED" | "ABORTED";
  /** Null when the pack could not run at all (no capsule). */
  runHash: string | null;
  engineRunId: string | null;
  capsule: Uint8Array | null;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  /** The run's final events (numbered from the `seq` given with the run), stored only when this execution is the one recorded. */
  events: readonly EventDraft[];
  /** Earlier events of this execution that could not be stored while it ran, stored with its end. */
  unsaved?: readonly NumberedEvent[];
  counters: ProgressCounters;
};

/** What storing an end did. */
export type StoredEnd = { recorded: boolean; incident: "run_hash_mismatch" | "capsule_mismatch" | null };

/**
 * Store a run's end: the capsule (once per run hash), the record (once per run), its last events and a NOTIFY, in
 * one statement (the caller completes the job afterwards; a crash in between only leaves a stale job). A run that already ended (it was executed twice, e.g. after its first
 * worker was presumed dead) keeps its first end; this one is compared with it, and a different run hash or different
 * capsule bytes is recorded as a determinism incident (with this capsule: nothing is dropped).
 * @param db the database
 * @param worker this worker's id
 * @param run the run, its attempt and next event number
 * @param end the outcome
 * @returns whether this end was recorded and which incident, if any, it caused
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const stored = await finishRun(db, "w1", { runId, attempt: 1, seq: 5 }, end);
 */
export async function finishRun(db: SqlDatabase, worker: string, run: { runId: string; attempt: number; seq: number }, end: RunEnd): Promise<StoredEnd> {
  const { phase, errorType } = endOf(end.status, end.error?.code ?? null);
  const json = (v: unknown) => (v === null ? null : JSON.stringify(v));
  const [row] = await db.query<{ capsule_inserted: boolean; updated: boolean }>(
    `WITH cap AS (INSERT INTO reach_wasm.capsules (run_hash, bytes, size) SELECT $4::text, $11::bytea, $12::int WHERE $4::text IS NOT NULL AND $11::bytea IS NOT NULL
                  ON CONFLICT (run_hash) DO NOTHING RETURNING run_hash),
          upd AS (UPDATE reach_wasm.runs SET status = $2, phase = $3, run_hash = $4, engine_run_id = $5, result = $6, error = $7, error_type = $8,
                    progress = $9, worker = $10, heartbeat_at = NULL, completed_at = now(), updated_at = now()
                  WHERE id = $1 AND status IN ('PENDING', 'EXECUTING') RETURNING id),
          ev AS (${insertEvents("$1", "$13", "$14", "WHERE EXISTS (SELECT 1 FROM upd)")})
     SELECT EXISTS (SELECT 1 FROM cap) AS capsule_inserted, EXISTS (SELECT 1 FROM upd) AS updated, pg_notify($15, $1::text)`,
    [run.runId, end.status, phase, end.runHash, end.engineRunId, json(end.result), json(end.error), errorType, JSON.stringify(end.counters), worker,
      end.capsule, end.capsule?.length ?? null, run.attempt, numbered([...(end.unsaved ?? []), ...numberEvents(run.seq, end.events)], new Date().toISOString()), CHANNELS.run],
  );
  let incident: StoredEnd["incident"] = null;
  if (end.runHash !== null && end.capsule !== null && row?.capsule_inserted !== true) incident = await compareCapsule(db, worker, run.runId, end.runHash, end.capsule);
  if (row?.updated === true) return { recorded: true, incident };
  const first = await db.query<{ run_hash: string | null }>("SELECT run_hash FROM reach_wasm.runs WHERE id = $1", [run.runId]);
  const firstHash = first[0]?.run_hash ?? null;
  if (firstHash !== null && end.runHash !== null && firstHash !== end.runHash) {
    await db.query("INSERT INTO reach_wasm.incidents (run_id, kind, expected_run_hash, actual_run_hash, worker) VALUES ($1, 'run_hash_mismatch', $2, $3, $4)", [run.runId, firstHash, end.runHash, worker]);
    incident = "run_hash_mismatch";
  }
  return { recorded: false, incident };
}

/** Compare a capsule with the one stored under its run hash; a difference is a determinism incident. */
async function compareCapsule(db: SqlExecutor, worker: string, runId: string, runHash: string, bytes: Uint8Array): Promise<StoredEnd["incident"]> {
  const same = await db.query<{ same: boolean }>("SELECT bytes = $2 AS same FROM reach_wasm.capsules WHERE run_hash = $1", [runHash, bytes]);
  if (same[0]?.same !== false) return null;
  await db.query("INSERT INTO reach_wasm.incidents (run_id, kind, expected_run_hash, actual_run_hash, worker, capsule) VALUES ($1, 'capsule_mismatch', $2, $2, $3, $4)", [runId, runHash, worker, bytes]);
  return "capsule_mismatch";
}

/**
 * Re-queue the runs whose worker stopped heartbeating (killed, partitioned, its machine gone): each gets a new job
 * (in the same transaction) and its old job is cancelled. A run that lost `maxAttempts` workers ends FAILED.
 * @param db the database
 * @param queue the run queue
 * @param staleSeconds how long without a heartbeat makes a worker presumed dead
 * @param maxAttempts how many workers a run may lose
 * @returns the ids of the re-queued and of the given-up runs
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example await requeueStale(db, queue, 15, 3);
 */
export async function requeueStale(db: SqlDatabase, queue: RunQueue, staleSeconds: number, maxAttempts: number): Promise<{ requeued: string[]; givenUp: string[] }> {
  const requeued = await requeueBatch(db, queue, staleSeconds, maxAttempts);
  return { requeued, givenUp: await giveUp(db, queue, staleSeconds, maxAttempts) };
}

/**
 * Re-queue every run still EXECUTING, whatever its heartbeat: for a store whose every worker is known to be gone, the
 * embedded store just taken over from a process that ended (its in-process workers were that store's only workers).
 * Exactly what {@link requeueStale} does to a silent worker's runs (a new job each, the old one cancelled, the same
 * attempt counting; a run that lost `maxAttempts` workers ends FAILED with the same record and event), without
 * waiting for the stale limit. Never for a shared store, where other live workers hold runs.
 * @param db the database
 * @param queue the run queue
 * @param maxAttempts how many workers a run may lose
 * @returns the ids of the re-queued and of the given-up runs
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example await requeueOrphans(db, queue, 3);
 */
export async function requeueOrphans(db: SqlDatabase, queue: RunQueue, maxAttempts: number): Promise<{ requeued: string[]; givenUp: string[] }> {
  const requeued: string[] = [];
  for (let batch = await requeueBatch(db, queue, null, maxAttempts); batch.length > 0; batch = await requeueBatch(db, queue, null, maxAttempts)) requeued.push(...batch);
  return { requeued, givenUp: await giveUp(db, queue, null, maxAttempts) };
}

/** The SQL condition on a run's heartbeat (`$1`: seconds, or null for any heartbeat) that makes its worker presumed dead. */
const SILENT = "($1::float8 IS NULL OR heartbeat_at < now() - make_interval(secs => $1::float8))";

/** Re-queue up to 100 runs of silent workers (`staleSeconds` null: of any worker) that may still be retried. */
async function requeueBatch(db: SqlDatabase, queue: RunQueue, staleSeconds: number | null, maxAttempts: number): Promise<string[]> {
  const moved = await db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; job_id: string; old_job: string }>(
      `WITH stale AS (SELECT id, job_id AS old_job FROM reach_wasm.runs WHERE status = 'EXECUTING' AND ${SILENT}
                      AND attempts < $2 ORDER BY heartbeat_at LIMIT 100 FOR UPDATE SKIP LOCKED)
       UPDATE reach_wasm.runs r SET status = 'PENDING', phase = 'queued', worker = NULL, heartbeat_at = NULL, job_id = gen_random_uuid(), updated_at = now()
       FROM stale WHERE r.id = stale.id RETURNING r.id::text AS id, r.job_id::text AS job_id, stale.old_job::text AS old_job`,
      [staleSeconds, maxAttempts],
    );
    for (const r of rows) await queue.enqueue(tx, { jobId: r.job_id, runId: r.id });
    if (rows.length > 0) await tx.query("SELECT pg_notify($1, '')", [CHANNELS.jobs]);
    return rows;
  });
  await queue.cancel(moved.map((r) => r.old_job));
  return moved.map((r) => r.id);
}

async function giveUp(db: SqlDatabase, queue: RunQueue, staleSeconds: number | null, maxAttempts: number): Promise<string[]> {
  const message = `the run's worker stopped responding ${maxAttempts} times (killed or out of memory?); the run was not retried again`;
  const rows = await db.transaction(async (tx) => {
    const ended = await tx.query<{ id: string; job_id: string; attempts: number }>(
      `UPDATE reach_wasm.runs SET status = 'FAILED', phase = 'failed', error_type = 'EXECUTION_ERROR', error = $3, worker = NULL, heartbeat_at = NULL,
         completed_at = now(), updated_at = now()
       WHERE status = 'EXECUTING' AND ${SILENT} AND attempts >= $2
       RETURNING id::text AS id, job_id::text AS job_id, attempts`,
      [staleSeconds, maxAttempts, JSON.stringify({ code: "EXEC_RESOURCE_UNAVAILABLE", message, recoverable: false })],
    );
    for (const r of ended) await appendEventsNow(tx, r.id, r.attempts, eventsOf({ kind: "given-up", attempts: r.attempts, message }));
    return ended;
  });
  await queue.cancel(rows.map((r) => r.job_id));
  return rows.map((r) => r.id);
}

/**
 * Hand a stopping worker's unfinished runs back to the queue at once (instead of waiting for them to go stale).
 * @param db the database
 * @param queue the run queue
 * @param worker the stopping worker's id
 * @param runIds its unfinished runs
 * @returns the re-queued run ids
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example await releaseRuns(db, queue, "w1", ["…"]);
 */
export async function releaseRuns(db: SqlDatabase, queue: RunQueue, worker: string, runIds: readonly string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const moved = await db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; job_id: string; old_job: string }>(
      `WITH mine AS (SELECT id, job_id AS old_job FROM reach_wasm.runs WHERE id IN (SELECT x::uuid FROM jsonb_array_elements_text($1::jsonb) AS x)
                     AND worker = $2 AND status = 'EXECUTING' FOR UPDATE)
       UPDATE reach_wasm.runs r SET status = 'PENDING', phase = 'queued', worker = NULL, heartbeat_at = NULL, job_id = gen_random_uuid(), updated_at = now()
       FROM mine WHERE r.id = mine.id RETURNING r.id::text AS id, r.job_id::text AS job_id, mine.old_job::text AS old_job`,
      [JSON.stringify(runIds), worker],
    );
    for (const r of rows) await queue.enqueue(tx, { jobId: r.job_id, runId: r.id });
    if (rows.length > 0) await tx.query("SELECT pg_notify($1, '')", [CHANNELS.jobs]);
    return rows;
  });
  await queue.cancel(moved.map((r) => r.old_job));
  return moved.map((r) => r.id);
}
