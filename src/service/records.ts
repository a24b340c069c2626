/**
 * Rows of `reach_wasm.runs` as run records (the HTTP face of a run), and the record fields derived from a run's end.
 * @module
 */
import type { SqlRow } from "./ports.ts";
import type { RunOptions, RunPhase, RunRecord, ServiceRunStatus } from "./schemas.ts";
import { TIMEOUT_CODES } from "./events.ts";

/** The columns every record query selects (`r` is `reach_wasm.runs`). */
export const RECORD_COLUMNS = `r.id::text AS id, r.seq::text AS seq, r.tenant, r.request_id, r.pack_digest, r.pack_id, r.pack_version, r.request,
  r.status, r.phase, r.worker, r.attempts, r.cancel_requested_at IS NOT NULL AS cancel_requested, r.submitted_at, r.started_at,
  r.updated_at, r.completed_at, r.progress, r.run_hash, r.engine_run_id, r.result, r.error, r.error_type,
  (SELECT c.size FROM reach_wasm.capsules c WHERE c.run_hash = r.run_hash) AS capsule_size,
  (SELECT count(*)::int FROM reach_wasm.incidents i WHERE i.run_id = r.id) AS incidents`;

function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const d = value instanceof Date ? value : new Date(String(value));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function json<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/**
 * Turn a row selected with {@link RECORD_COLUMNS} into a run record.
 * @param row the row
 * @returns the record
 * @example const record = toRecord(rows[0]!);
 */
export function toRecord(row: SqlRow): RunRecord {
  const progress = json<{ currentStepIndex?: number; totalSteps?: number; replansCount?: number }>(row["progress"]) ?? {};
  const request = json<Omit<RunOptions, "requestId">>(row["request"]);
  const id = String(row["id"]);
  const size = row["capsule_size"];
  return {
    runId: id,
    requestId: (row["request_id"] as string | null) ?? null,
    tenant: String(row["tenant"]),
    status: row["status"] as ServiceRunStatus,
    phase: row["phase"] as RunPhase,
    pack: { digest: String(row["pack_digest"]), id: String(row["pack_id"]), version: String(row["pack_version"]) },
    request,
    submittedAt: iso(row["submitted_at"])!,
    startedAt: iso(row["started_at"]),
    updatedAt: iso(row["updated_at"])!,
    completedAt: iso(row["completed_at"]),
    currentStepIndex: progress.currentStepIndex ?? 0,
    totalSteps: progress.totalSteps ?? 0,
    replansCount: progress.replansCount ?? 0,
    attempts: Number(row["attempts"]),
    worker: (row["worker"] as string | null) ?? null,
    cancelRequested: row["cancel_requested"] === true,
    runHash: (row["run_hash"] as string | null) ?? null,
    engineRunId: (row["engine_run_id"] as string | null) ?? null,
    result: json<Record<string, unknown> | null>(row["result"]) ?? null,
    error: json<RunRecord["error"]>(row["error"]) ?? null,
    errorType: (row["error_type"] as RunRecord["errorType"]) ?? null,
    capsule: size === null || size === undefined ? null : { url: `/runs/${id}/capsule`, size: Number(size) },
    incidents: Number(row["incidents"] ?? 0),
  };
}

/**
 * The phase (seed 004) and error type of a run that ended.
 * @param status the terminal status
 * @param code the code of the error that ended it, if any
 * @returns phase and errorType
 * @example endOf("FAILED", "EXEC_TOOL_TIMEOUT") // { phase: "timeout", errorType: "TIMEOUT_ERROR" }
 */
export function endOf(status: ServiceRunStatus, code: string | null): { phase: RunPhase; errorType: RunRecord["errorType"] } {
  if (status === "COMPLETED") return { phase: "completed", errorType: null };
  if (status === "ABORTED") return { phase: "cancelled", errorType: "CANCELLED" };
  if (code !== null && TIMEOUT_CODES.has(code)) return { phase: "timeout", errorType: "TIMEOUT_ERROR" };
  if (code !== null && (code.startsWith("PLAN_") || code.startsWith("PACK_"))) return { phase: "failed", errorType: "PLANNING_ERROR" };
  return { phase: "failed", errorType: "EXECUTION_ERROR" };
}
