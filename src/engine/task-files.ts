/**
 * Seed 001 §7's evidence files as its origin's tools write and read them: `TASK_<task_id>.json` and the execution
 * header's plan lock and state (seed 001 §5, §6).
 *
 * A `TASK_<id>.json` is the step's evidence (seed 004 `RunEvidence`) with seed 001's fields:
 *
 * | field | value |
 * |---|---|
 * | `contract_version` | `"S2-B-06.v1"` (seed 001's execution envelope) |
 * | `plan_id`, `task_id` | the plan's id and the step's (task's) id |
 * | `status` | `SUCCESS`, `FAILED` or `SKIPPED` (seed 004's `completed`, `failed`, `skipped`) |
 * | `started_at_utc`, `ended_at_utc` | when the step started and ended; null for a step that never ran |
 *
 * In the capsule the times are the run's virtual clock (its `run.step.started` and end events), so the entry is a
 * pure function of the run like the rest of the body; the run files' copy holds the real times, never hashed —
 * as with `run.json` (`run-document.ts`). `run.json`'s `evidence` stays seed 004's ({@link evidenceOfTask}).
 * @module
 */
import { sha256Hex, utf8 } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { formatIsoMillis } from "../determinism/mod.ts";
import type { RunEvidence } from "../protocol/mod.ts";
import type { LoadedPack } from "./pack.ts";
import type { RunStatus } from "./types.ts";

/** Seed 001's execution envelope contract, named by the header and every TASK file. */
export const EXECUTION_CONTRACT_VERSION = "S2-B-06.v1";

/** Seed 001 `TASK_<id>.json` status. */
export type TaskStatus = "SUCCESS" | "FAILED" | "SKIPPED";

const TO_TASK: Readonly<Record<string, TaskStatus>> = { completed: "SUCCESS", failed: "FAILED", skipped: "SKIPPED" };
const TO_EVIDENCE: Readonly<Record<string, string>> = { SUCCESS: "completed", FAILED: "failed", SKIPPED: "skipped" };
const ORIGIN_FIELDS = ["contract_version", "plan_id", "task_id", "started_at_utc", "ended_at_utc"] as const;

/**
 * A step's `TASK_<id>.json` document.
 * @param ev the step's evidence
 * @param planId the plan's id (null when there was none)
 * @param times when it started and ended (ms since the Unix epoch on the clock the copy uses), null when it never ran
 * @param durationMs the duration this copy records
 * @returns the document
 * @example taskDocument(ev, "p1", { startedAt: 0, endedAt: 12 }, 12).status // "SUCCESS"
 */
export function taskDocument(ev: RunEvidence, planId: string | null, times: { startedAt: number; endedAt: number } | null, durationMs: number): Record<string, unknown> {
  return {
    ...ev,
    durationMs,
    status: TO_TASK[ev.status] ?? "FAILED",
    contract_version: EXECUTION_CONTRACT_VERSION,
    plan_id: planId,
    task_id: ev.stepId,
    started_at_utc: times === null ? null : formatIsoMillis(Math.round(times.startedAt)),
    ended_at_utc: times === null ? null : formatIsoMillis(Math.round(times.endedAt)),
  };
}

/**
 * The seed 004 evidence a `TASK_<id>.json` holds (`run.json`'s `evidence`): seed 001's fields left out, the status in
 * seed 004's words. A TASK file made before seed 001's fields is its evidence as it is.
 * @param task the parsed TASK document
 * @returns the evidence
 * @example evidenceOfTask({ stepId: "a", status: "SUCCESS", task_id: "a" }) // { stepId: "a", status: "completed" }
 */
export function evidenceOfTask<T>(task: T): T {
  if (task === null || typeof task !== "object" || Array.isArray(task) || !Object.hasOwn(task, "task_id")) return task;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(task as Record<string, unknown>)) {
    if ((ORIGIN_FIELDS as readonly string[]).includes(k)) continue;
    out[k] = k === "status" && typeof v === "string" ? (TO_EVIDENCE[v] ?? v) : v;
  }
  return out as T;
}

/**
 * Seed 001 §5's state a run ended in.
 * @param status the run's terminal status
 * @returns `COMPLETED`, or `FAILED` (an aborted run did not complete)
 */
export function executionState(status: RunStatus): "COMPLETED" | "FAILED" {
  return status === "COMPLETED" ? "COMPLETED" : "FAILED";
}

/**
 * The plan file a run read and the SHA-256 of its bytes (seed 001 §6 "SHA256 hash computed at start", as its origin
 * computes it: the file's bytes as read). A static plan is the pack's entrypoint (`pack/<path>` in the capsule); a
 * planner's or a session's plan is the capsule's `plan.json`.
 * @param loaded the pack
 * @param plan the plan that ran last (null when none was gated)
 * @param session whether the run is a session's (its plan is the calls made)
 * @returns the capsule entry and its hash, both null when there is no plan file
 */
export function planLock(loaded: LoadedPack, plan: unknown, session: boolean): { plan_path: string | null; plan_sha256: string | null } {
  const entry = loaded.entrypoint;
  if (!session && entry.kind === "plan") {
    const bytes = loaded.files.get(entry.path);
    if (bytes !== undefined) return { plan_path: `pack/${entry.path}`, plan_sha256: sha256Hex(bytes) };
  }
  if (plan === null || plan === undefined) return { plan_path: null, plan_sha256: null };
  return { plan_path: "plan.json", plan_sha256: sha256Hex(utf8(canonicalize(plan) + "\n")) };
}

/**
 * Seed 001 §6 "hash mismatch → execution refused", checked on a capsule: the header's `plan_sha256` is the SHA-256 of
 * the entry its `plan_path` names (either case of hex is read: seed 001's origin writes upper case).
 * @param entries the capsule's entries
 * @returns null when the header has no plan lock (made before it, or no plan file), else the verdict
 */
export function headerPlanLock(entries: ReadonlyMap<string, Uint8Array>): { ok: boolean; message: string } | null {
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(entries.get("EXECUTION_HEADER.json") ?? new Uint8Array()));
  } catch {
    return null; // the files check names a damaged header
  }
  const h = header as { plan_path?: unknown; plan_sha256?: unknown } | null;
  if (typeof h?.plan_path !== "string" || typeof h.plan_sha256 !== "string") return null;
  const bytes = entries.get(h.plan_path);
  if (bytes === undefined) return { ok: false, message: `EXECUTION_HEADER.json names plan file ${JSON.stringify(h.plan_path)}, which the capsule does not hold` };
  const actual = sha256Hex(bytes);
  return actual === h.plan_sha256.toLowerCase()
    ? { ok: true, message: `${h.plan_path} hashes to the header's plan_sha256` }
    : { ok: false, message: `${h.plan_path} hashes to ${actual}; EXECUTION_HEADER.json locked ${h.plan_sha256}` };
}
