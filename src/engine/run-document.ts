/**
 * `run.json`: one document that is both seed 004's `ProductionRun` and the upstream protocol's run
 * (`conformance/upstream-schemas/run.schema.json`, which allows extra properties), beside seed 003 §3.1's phases.
 *
 * | field | from |
 * |---|---|
 * | `specVersion`, `runId`, `state`, `createdAt`, `startedAt`, `completedAt`, `runHash`, `packMetadata`, `capabilities`, `result` | upstream run schema |
 * | `requestId`, `status`, `updatedAt`, `currentStepIndex`, `totalSteps`, `replansCount`, `query`, `intent`, `plan`, `evidence`, `artifacts`, `error`, `errorType` | seed 004 `ProductionRun` |
 * | `phases` (seed 003 §3.1), `statusHistory` (the same path in seed 004's states), `errorCode`, `clock`, `virtualTime` | reach-wasm |
 *
 * The state sets map as ARCHITECTURE "State machines" says ({@link PRODUCTION_STATES}): PENDING → `queued`,
 * PREPARING → `planning`, EXECUTING → `running` then `verifying` (the output is hashed and the capsule committed),
 * COMPLETED → `completed`; FAILED → `timeout` with `errorType: TIMEOUT_ERROR` when the watchdog or a time budget ended
 * it (`EXEC_TOOL_TIMEOUT`, `POLICY_TIMEOUT_EXCEEDED`), else `failed` with `PLANNING_ERROR` (the planner or the plan
 * gate refused: a `PLAN_*` code, `PLANNING_ERROR`) or `EXECUTION_ERROR` (anything a step did); ABORTED (a signal, a
 * cancel) → `cancelled` with `CANCELLED`.
 *
 * Two copies: the capsule's `run.json` is a pure function of the run — virtual times only (`clock: "virtual"`), the
 * evidence with virtual durations — derived by {@link runDocument} from the chain (`events.jsonl`) and entries the
 * chain commits (`EXECUTION_HEADER.json`, `plan.json`, `request.json`, `pack/reach.json`, `TASK_<id>.json`); since it
 * names the run hash it is outside the body's `contents` digest, and `verify` derives it again and compares. The run
 * files' `run.json` holds real times (`clock: "real"`) with their virtual offsets beside them in `virtualTime`, and
 * real step durations; it is never hashed.
 * @module
 */
import { deriveId } from "../canonical/mod.ts";
import { formatIsoMillis, parseIsoMillis } from "../determinism/mod.ts";
import { prefixOf } from "../protocol/mod.ts";
import type { ErrorCode } from "../protocol/mod.ts";
import { isErrorCode } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { queryOf } from "./intent.ts";
import { evidenceOfTask } from "./task-files.ts";
import type { RealTimes, RunPhase, RunStatus } from "./types.ts";

/** Seed 004's run states. */
export type ProductionStatus = "queued" | "planning" | "running" | "verifying" | "completed" | "failed" | "timeout" | "cancelled";
/** Seed 004's error types. */
export type ProductionErrorType = "PLANNING_ERROR" | "EXECUTION_ERROR" | "TIMEOUT_ERROR" | "CANCELLED";

/** Seed 003 §3.1 phase → the seed 004 state a live run is in (terminal phases: see {@link productionOutcome}). */
export const PRODUCTION_STATES: Readonly<Record<"PENDING" | "PREPARING" | "EXECUTING", ProductionStatus>> = { PENDING: "queued", PREPARING: "planning", EXECUTING: "running" };

/** Codes of a run the watchdog or a time budget ended (seed 004 `timeout`). */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(["EXEC_TOOL_TIMEOUT", "POLICY_TIMEOUT_EXCEEDED", "PROTO_TIMEOUT"]);

/**
 * The seed 004 state and error type of a run that ended (see the module notes).
 * @param status the terminal status
 * @param code the code of the error that ended it, if any
 * @returns `{status, errorType}` (`errorType` null for a completed run)
 * @example productionOutcome("FAILED", "EXEC_TOOL_TIMEOUT") // { status: "timeout", errorType: "TIMEOUT_ERROR" }
 */
export function productionOutcome(status: RunStatus, code: string | null): { status: ProductionStatus; errorType: ProductionErrorType | null } {
  if (status === "COMPLETED") return { status: "completed", errorType: null };
  if (status === "ABORTED") return { status: "cancelled", errorType: "CANCELLED" };
  if (code !== null && TIMEOUT_CODES.has(code)) return { status: "timeout", errorType: "TIMEOUT_ERROR" };
  if (code !== null && isErrorCode(code) && (prefixOf(code as ErrorCode) === "PLAN" || code.startsWith("PACK_"))) return { status: "failed", errorType: "PLANNING_ERROR" };
  return { status: "failed", errorType: "EXECUTION_ERROR" };
}

/**
 * The seed 004 states a run passed through, from its seed 003 phases.
 * @param phases the phases (PENDING, PREPARING, EXECUTING?, terminal)
 * @param code the code of the error that ended it, if any
 * @returns the states, in order
 * @example statusHistory(["PENDING", "PREPARING", "EXECUTING", "COMPLETED"], null) // ["queued", "planning", "running", "verifying", "completed"]
 */
export function statusHistory(phases: readonly RunPhase[], code: string | null): ProductionStatus[] {
  const out: ProductionStatus[] = [];
  for (const p of phases) {
    if (p === "PENDING" || p === "PREPARING" || p === "EXECUTING") out.push(PRODUCTION_STATES[p]);
    else {
      if (p === "COMPLETED") out.push("verifying");
      out.push(productionOutcome(p, code).status);
    }
  }
  return out;
}

type Ev = { type: string; timestamp: string; payload: Record<string, unknown> };

const dec = new TextDecoder("utf-8", { fatal: true });

function json(entries: ReadonlyMap<string, Uint8Array>, path: string): JsonValue | undefined {
  const b = entries.get(path);
  if (b === undefined) return undefined;
  try {
    return JSON.parse(dec.decode(b)) as JsonValue;
  } catch {
    return undefined;
  }
}

/** The ids of a plan.json's steps, or of its tasks (seed 001). */
function planIds(plan: JsonValue | undefined | null): string[] {
  const p = plan as { steps?: { id?: unknown }[]; tasks?: { task_id?: unknown }[] } | undefined | null;
  if (Array.isArray(p?.steps)) return p.steps.map((s) => String(s?.id));
  return Array.isArray(p?.tasks) ? p.tasks.map((t) => String(t?.task_id)) : [];
}

/** The evidence's step ids in order: tool steps as they ran, then the final plan's steps that never ran. */
function evidenceOrder(events: readonly Ev[], plan: JsonValue | undefined): string[] {
  const ran = events.filter((e) => e.type === "run.step.started" && e.payload["stepType"] === "tool").map((e) => String(e.payload["stepId"]));
  const seen = new Set(ran);
  return [...ran, ...planIds(plan).filter((id) => !seen.has(id))];
}

/**
 * The capsule's `run.json`, derived from the run's events and the entries they commit (see the module notes).
 * @param events the run's events, in order (a terminal one last)
 * @param runHash the run hash
 * @param entries the capsule's entries (`EXECUTION_HEADER.json`, `plan.json`, `request.json`, `pack/reach.json`, `TASK_<id>.json`)
 * @returns the document
 * @example const doc = runDocument(record.events, record.runHash, record.body);
 */
export function runDocument(events: readonly Ev[], runHash: string, entries: ReadonlyMap<string, Uint8Array>): JsonObject {
  const started = events[0]?.payload ?? {};
  const last = events[events.length - 1]!;
  const state: RunStatus = last.type === "run.completed" ? "COMPLETED" : last.type === "run.aborted" ? "ABORTED" : "FAILED";
  const error = last.payload["error"] as { code?: unknown; message?: unknown } | undefined;
  const code = typeof error?.code === "string" ? error.code : null;
  const outcome = productionOutcome(state, code);
  const header = json(entries, "EXECUTION_HEADER.json") as { phases?: RunPhase[] } | undefined;
  const plan = json(entries, "plan.json") ?? null;
  const request = json(entries, "request.json") as { input?: JsonValue; requestId?: unknown } | undefined;
  const pack = (json(entries, "pack/reach.json") ?? {}) as { run?: { query?: string } };
  const evidence = evidenceOrder(events, plan ?? undefined).flatMap((id) => {
    const task = json(entries, `TASK_${id}.json`);
    return task === undefined ? [] : [evidenceOfTask(task)];
  });
  const artifacts = events.filter((e) => e.type === "run.step.completed").flatMap((e) => (e.payload["artifacts"] as JsonObject[] | undefined) ?? []);
  const stepStarts = events.filter((e) => e.type === "run.step.started");
  const caps = (started["capabilities"] ?? {}) as { tools?: string[]; permissions?: string[] };
  const doc: JsonObject = {
    specVersion: "1.0.0",
    runId: String(started["runId"] ?? ""),
    state,
    createdAt: String(started["epoch"] ?? events[0]!.timestamp),
    startedAt: events[0]!.timestamp,
    completedAt: last.timestamp,
    updatedAt: last.timestamp,
    runHash,
    packMetadata: { id: String(started["packId"] ?? ""), version: String(started["packVersion"] ?? ""), specVersion: String(started["specVersion"] ?? ""), hash: String(started["packDigest"] ?? "") },
    capabilities: { tools: (caps.tools ?? []).map((name) => ({ name })), permissions: [...(caps.permissions ?? [])] },
    result: { status: state === "COMPLETED" ? "success" : state === "ABORTED" ? "aborted" : "failure", artifacts: artifacts.map((a) => ({ name: a["name"]!, hash: a["sha256"]!, uri: a["path"]! })) },
    phases: [...(header?.phases ?? [])],
    statusHistory: statusHistory(header?.phases ?? [], code),
    requestId: typeof request?.requestId === "string" ? request.requestId : deriveId("reach-wasm/request", String(started["runId"] ?? "")),
    status: outcome.status,
    currentStepIndex: Number(stepStarts[stepStarts.length - 1]?.payload["stepIndex"] ?? 0),
    totalSteps: planIds(plan).length,
    replansCount: stepStarts.filter((e) => e.payload["stepType"] === "replan").length,
    query: queryOf(request?.input ?? {}, pack as never),
    intent: (started["intent"] ?? null) as JsonValue,
    plan,
    evidence,
    artifacts,
    clock: "virtual",
    virtualTime: virtualTime(String(started["epoch"] ?? events[0]!.timestamp), events[0]!.timestamp, last.timestamp),
  };
  if (error !== undefined) {
    doc["error"] = String(error.message ?? "");
    doc["errorCode"] = code;
    doc["errorType"] = outcome.errorType;
  }
  return doc;
}

/** Offsets (ms from the run's epoch) of the start, the last update and the end. */
function virtualTime(epoch: string, startedAt: string, endedAt: string): JsonObject {
  const e = parseIsoMillis(epoch);
  return { epoch, startedAtOffsetMs: parseIsoMillis(startedAt) - e, updatedAtOffsetMs: parseIsoMillis(endedAt) - e, completedAtOffsetMs: parseIsoMillis(endedAt) - e };
}


/**
 * The run files' `run.json`: the capsule's document with real times (virtual offsets beside them) and real step
 * durations.
 * @param capsuleDoc the capsule's document ({@link runDocument})
 * @param real the real times
 * @param evidence the evidence with real durations
 * @returns the document
 * @example const doc = liveRunDocument(runDocument(events, runHash, entries), times, record.evidence);
 */
export function liveRunDocument(capsuleDoc: JsonObject, real: RealTimes, evidence: readonly unknown[]): JsonObject {
  const iso = (ms: number): string => formatIsoMillis(Math.round(ms));
  return {
    ...capsuleDoc,
    createdAt: iso(real.createdAt),
    startedAt: iso(real.startedAt ?? real.createdAt),
    updatedAt: iso(real.completedAt),
    completedAt: iso(real.completedAt),
    evidence: evidence as JsonValue[],
    clock: "real",
  };
}
