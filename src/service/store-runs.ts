/**
 * The API's side of the run store: submit (the run row and its job in one transaction), read, list, cancel, events
 * and capsules. Every query is scoped by tenant: a tenant never sees another tenant's run, not even its existence.
 * @module
 */
import type { RunQueue, SqlDatabase, SqlExecutor } from "./ports.ts";
import { eventsOf } from "./events.ts";
import type { EventDraft } from "./events.ts";
import { RECORD_COLUMNS, toRecord } from "./records.ts";
import type { RunOptions, RunRecord, ServiceEvent, ServiceRunStatus } from "./schemas.ts";
import { deriveId } from "../canonical/mod.ts";
import { differingParts, requestDigest, requestParts, storedRequestParts } from "./request-digest.ts";

/** NOTIFY channels: a job was queued; a run changed (payload: run id); a run should stop (payload: run id). */
export const CHANNELS = { jobs: "reach_wasm_jobs", run: "reach_wasm_run", cancel: "reach_wasm_cancel" } as const;

/** A pack a run uses. */
export type RunPack = { digest: string; archiveSha256: string; id: string; version: string };

/** A new run: a fresh UUID, the tenant, the pack, the options and the names of the secrets sent with it (if any). */
export type NewRun = { id: string; tenant: string; pack: RunPack; options: RunOptions; secretNames?: readonly string[] };

/**
 * What a submission became: a new run, or the tenant's earlier run of the same `requestId` — with `differs` (the
 * parts that differ, never empty) when that run was asked with a different request (the caller answers 409).
 */
export type Submitted = { runId: string; status: ServiceRunStatus; existed: boolean; differs?: string[] };

/**
 * Record a run and queue its job, in one transaction. A repeated `requestId` returns the tenant's earlier run, and
 * tells whether that run was asked with the same request (its canonical digest, stored with it; a run stored before
 * digests were kept counts as the same).
 * @param db the database
 * @param queue the run queue
 * @param run the new run's id (a fresh UUID), tenant, pack, options and secrets' names
 * @returns the run id, its status, whether it already existed and, for an earlier run of another request, what differs
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example await submitRun(db, queue, { id, tenant: "local", pack, options: { seed: "1" } });
 */
export async function submitRun(db: SqlDatabase, queue: RunQueue, run: NewRun): Promise<Submitted> {
  const { requestId, ...request } = run.options;
  const parts = requestParts(run.pack.digest, request, run.secretNames ?? []);
  const digest = requestId === undefined ? null : requestDigest(parts);
  return await db.transaction(async (tx) => {
    const existing = async (): Promise<Submitted | null> => {
      const rows = await tx.query<{ id: string; status: ServiceRunStatus; request_digest: string | null; pack_digest: string; request: unknown }>(
        "SELECT id::text AS id, status, request_digest, pack_digest, request FROM reach_wasm.runs WHERE tenant = $1 AND request_id = $2",
        [run.tenant, requestId],
      );
      const row = rows[0];
      if (row === undefined) return null;
      const same = row.request_digest === null || row.request_digest === digest;
      return { runId: row.id, status: row.status, existed: true, ...(same ? {} : { differs: differingParts(storedRequestParts(row.pack_digest, row.request), parts) }) };
    };
    if (requestId !== undefined) {
      const found = await existing();
      if (found !== null) return found;
    }
    const inserted = await tx.query(
      `WITH ins AS (INSERT INTO reach_wasm.runs (id, tenant, request_id, request_digest, pack_digest, archive_sha256, pack_id, pack_version, request, status, phase, job_id)
         VALUES ($1, $2, $3, $10, $4, $5, $6, $7, $8, 'PENDING', 'queued', $1)
         ON CONFLICT (tenant, request_id) WHERE request_id IS NOT NULL DO NOTHING RETURNING id)
       SELECT id, pg_notify($9, '') FROM ins`, // the NOTIFY goes out at commit, after the job below exists
      [run.id, run.tenant, requestId ?? null, run.pack.digest, run.pack.archiveSha256, run.pack.id, run.pack.version, JSON.stringify(request), CHANNELS.jobs, digest],
    );
    if (inserted.length === 0) {
      const found = await existing(); // a submission of the same requestId committed meanwhile
      if (found !== null) return found;
    }
    await queue.enqueue(tx, { jobId: run.id, runId: run.id });
    return { runId: run.id, status: "PENDING" as const, existed: false };
  });
}

/**
 * Record several runs (without requestId) and queue their jobs, in one transaction of two statements.
 * @param db the database
 * @param queue the run queue
 * @param runs the new runs: fresh ids, tenants, packs and options without requestId
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @returns once the runs and their jobs are committed
 * @example await submitRuns(db, queue, [{ id, tenant: "local", pack, options: {} }]);
 */
export async function submitRuns(db: SqlDatabase, queue: RunQueue, runs: readonly NewRun[]): Promise<void> {
  const rows = runs.map((r) => {
    const { requestId: _none, ...request } = r.options;
    // the request travels as its JSON text (a string inside the batch document), stored as it is
    return { id: r.id, tenant: r.tenant, pack_digest: r.pack.digest, archive_sha256: r.pack.archiveSha256, pack_id: r.pack.id, pack_version: r.pack.version, request: JSON.stringify(request) };
  });
  await db.transaction(async (tx) => {
    await tx.query(
      `WITH ins AS (INSERT INTO reach_wasm.runs (id, tenant, pack_digest, archive_sha256, pack_id, pack_version, request, status, phase, job_id)
         SELECT x.id, x.tenant, x.pack_digest, x.archive_sha256, x.pack_id, x.pack_version, x.request, 'PENDING', 'queued', x.id
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, tenant text, pack_digest text, archive_sha256 text, pack_id text, pack_version text, request text)
         RETURNING id)
       SELECT count(*)::int AS n, pg_notify($2, '') FROM ins`,
      [JSON.stringify(rows), CHANNELS.jobs],
    );
    await queue.enqueueMany(tx, runs.map((r) => ({ jobId: r.id, runId: r.id })));
  });
}

/**
 * One of a tenant's runs.
 * @param db the database
 * @param tenant the tenant asking
 * @param runId the run id
 * @returns the record, or null when the tenant has no such run
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const record = await getRun(db, "local", runId);
 */
export async function getRun(db: SqlExecutor, tenant: string, runId: string): Promise<RunRecord | null> {
  const rows = await db.query(`SELECT ${RECORD_COLUMNS} FROM reach_wasm.runs r WHERE r.id = $1 AND r.tenant = $2`, [runId, tenant]);
  return rows[0] === undefined ? null : toRecord(rows[0]);
}

/**
 * A page of a tenant's runs, newest first.
 * @param db the database
 * @param tenant the tenant asking
 * @param q filters: status, pack id or digest, cursor (from the previous page), limit
 * @returns the runs and the cursor of the next page (null on the last page)
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const page = await listRuns(db, "local", { status: "COMPLETED", limit: 50 });
 */
export async function listRuns(db: SqlExecutor, tenant: string, q: { status?: string; pack?: string; cursor?: string; limit?: number }): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const rows = await db.query(
    `SELECT ${RECORD_COLUMNS} FROM reach_wasm.runs r
     WHERE r.tenant = $1 AND ($2::text IS NULL OR r.status = $2) AND ($3::text IS NULL OR r.pack_id = $3 OR r.pack_digest = $3)
       AND ($4::bigint IS NULL OR r.seq < $4::bigint)
     ORDER BY r.seq DESC LIMIT $5`,
    [tenant, q.status ?? null, q.pack ?? null, q.cursor ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  return { runs: page.map(toRecord), nextCursor: rows.length > limit ? String(page[page.length - 1]!["seq"]) : null };
}

/**
 * Append events to a run (numbered after the run's last event) and tell listeners.
 * @param tx the transaction
 * @param runId the run
 * @param attempt the attempt the events belong to (0 for the API's own)
 * @param drafts the events
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @returns once the events are written (visible at commit)
 * @example await appendEventsNow(tx, runId, 0, eventsOf({ kind: "cancelled-while-queued" }));
 */
export async function appendEventsNow(tx: SqlExecutor, runId: string, attempt: number, drafts: readonly EventDraft[]): Promise<void> {
  if (drafts.length === 0) return;
  const at = new Date().toISOString(); // service metadata, never hashed
  await tx.query(
    `INSERT INTO reach_wasm.run_events (run_id, seq, attempt, event_type, at, step_index, tool_name, data)
     SELECT $1, (SELECT coalesce(max(seq) + 1, 0) FROM reach_wasm.run_events WHERE run_id = $1) + x.i, $2, x.event_type, $3::timestamptz, x.step_index, x.tool_name, x.data
     FROM jsonb_to_recordset($4::jsonb) AS x(i int, event_type text, step_index int, tool_name text, data text)`,
    [runId, attempt, at, JSON.stringify(drafts.map((d, i) => ({ i, event_type: d.eventType, step_index: d.stepIndex ?? null, tool_name: d.toolName ?? null, data: d.data === undefined ? null : JSON.stringify(d.data) })))],
  );
  await tx.query("SELECT pg_notify($1, $2)", [CHANNELS.run, runId]);
}

/** What a cancel did: ended a queued run, asked a running one to stop, found no such run, or found it ended. */
export type CancelOutcome = { outcome: "cancelled" | "requested" | "missing" } | { outcome: "ended"; status: ServiceRunStatus };

/**
 * Cancel a tenant's run: a queued run ends ABORTED at once; a running one is asked to stop (its worker aborts it
 * within a second and stores its capsule).
 * @param db the database
 * @param queue the run queue (a queued run's job is cancelled)
 * @param tenant the tenant asking
 * @param runId the run
 * @returns what happened
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const { outcome } = await cancelRun(db, queue, "local", runId);
 */
export async function cancelRun(db: SqlDatabase, queue: RunQueue, tenant: string, runId: string): Promise<CancelOutcome> {
  const error = JSON.stringify({ code: "EXEC_ABORTED", message: "cancelled by the tenant before a worker took it", recoverable: false });
  const queued = await db.transaction(async (tx) => {
    const rows = await tx.query<{ job_id: string }>(
      `UPDATE reach_wasm.runs SET status = 'ABORTED', phase = 'cancelled', error_type = 'CANCELLED', error = $3,
         cancel_requested_at = now(), completed_at = now(), updated_at = now()
       WHERE id = $1 AND tenant = $2 AND status = 'PENDING' RETURNING job_id::text AS job_id`,
      [runId, tenant, error],
    );
    if (rows[0] !== undefined) await appendEventsNow(tx, runId, 0, eventsOf({ kind: "cancelled-while-queued" }));
    return rows[0]?.job_id ?? null;
  });
  if (queued !== null) {
    await queue.cancel([queued]);
    return { outcome: "cancelled" };
  }
  const running = await db.query(
    `UPDATE reach_wasm.runs SET cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now()
     WHERE id = $1 AND tenant = $2 AND status = 'EXECUTING' RETURNING id`,
    [runId, tenant],
  );
  if (running.length > 0) {
    await db.query("SELECT pg_notify($1, $3), pg_notify($2, $3)", [CHANNELS.cancel, CHANNELS.run, runId]);
    return { outcome: "requested" };
  }
  const rows = await db.query<{ status: ServiceRunStatus }>("SELECT status FROM reach_wasm.runs WHERE id = $1 AND tenant = $2", [runId, tenant]);
  const status = rows[0]?.status;
  if (status === undefined) return { outcome: "missing" };
  if (status === "PENDING" || status === "EXECUTING") return await cancelRun(db, queue, tenant, runId); // it moved meanwhile
  return { outcome: "ended", status };
}

/**
 * A run's events after `after` (exclusive), up to `limit`.
 * @param db the database
 * @param runId the run (the caller has checked the tenant)
 * @param after the last sequence number already seen (-1 for all)
 * @param limit the most to return
 * @returns the events in order
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const events = await readEvents(db, runId, -1, 500);
 */
export async function readEvents(db: SqlExecutor, runId: string, after: number, limit: number): Promise<ServiceEvent[]> {
  const rows = await db.query(
    `SELECT seq, attempt, event_type, at, step_index, tool_name, data FROM reach_wasm.run_events
     WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [runId, after, limit],
  );
  return rows.map((r) => {
    const seq = Number(r["seq"]);
    const e: ServiceEvent = {
      eventId: deriveId("reach-wasm/service-event", runId, String(seq)),
      runId,
      eventType: String(r["event_type"]),
      timestamp: (r["at"] instanceof Date ? r["at"] : new Date(String(r["at"]))).toISOString(),
      sequence: seq,
      attempt: Number(r["attempt"]),
    };
    if (r["step_index"] !== null && r["step_index"] !== undefined) e.stepIndex = Number(r["step_index"]);
    if (typeof r["tool_name"] === "string") e.toolName = r["tool_name"];
    if (r["data"] !== null && r["data"] !== undefined) e.data = typeof r["data"] === "string" ? JSON.parse(r["data"]) : r["data"];
    return e;
  });
}

/**
 * A tenant's run's capsule bytes.
 * @param db the database
 * @param tenant the tenant asking
 * @param runId the run
 * @returns the run hash and bytes, or null when the run has no capsule (yet)
 * @throws Error from the database driver when the store cannot be reached or the statement fails
 * @example const c = await readCapsule(db, "local", runId);
 */
export async function readCapsule(db: SqlExecutor, tenant: string, runId: string): Promise<{ runHash: string; bytes: Uint8Array } | null> {
  const rows = await db.query<{ run_hash: string; bytes: Uint8Array }>(
    "SELECT r.run_hash, c.bytes FROM reach_wasm.runs r JOIN reach_wasm.capsules c ON c.run_hash = r.run_hash WHERE r.id = $1 AND r.tenant = $2",
    [runId, tenant],
  );
  return rows[0] === undefined ? null : { runHash: rows[0].run_hash, bytes: new Uint8Array(rows[0].bytes) };
}
