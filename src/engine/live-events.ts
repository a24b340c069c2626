/**
 * Seed 004's live event stream (`run --events FILE|-`): each hashed event of the run (seed 003 §3.3) mapped, as it
 * is appended, to seed 004 `RunEvent`s; a pure function of the hashed event, so the stream's `data` is what the
 * chain says. Only `timestamp` (the real time of emission) and the `heartbeat`s are outside the hash.
 *
 * | hashed event | seed 004 event(s) |
 * |---|---|
 * | `run.started` | `run_started` |
 * | `run.step.started` (a tool step) | `step_started` |
 * | `run.step.started` (a replan step) | `replan_triggered` |
 * | `tool.invoked` | `tool_called` |
 * | `tool.completed`, `tool.failed` | `tool_output` (`data.status` `ok` or `error`) |
 * | `run.step.completed` | `artifact_created` per artifact, then `step_completed` (`data.status: "completed"`) |
 * | `run.step.failed` | `step_completed` (`data.status: "failed"`) |
 * | `run.completed` | `run_completed` |
 * | `run.failed` | `timeout_error` first when the watchdog or a time budget ended it (seed 004 "Watchdog Timer"), then `run_failed` |
 * | `run.aborted` | `run_cancelled` |
 * | anything else (`policy.violation`, …) | none (it is in `events.jsonl`) |
 *
 * Each `RunEvent` carries `eventId` (a UUID derived from the source event's hash and its position among the events it
 * maps to), `runId`, `eventType`, `timestamp` (real), `virtualTimestamp` (the hashed one), `sourceSequence` and
 * `sourceEventHash`, and `stepIndex` / `toolName` / `data` where they apply.
 * @module
 */
import { deriveId } from "../canonical/mod.ts";
import { TIMEOUT_CODES } from "./run-document.ts";

/** A hashed event as the live stream sees it. */
export type LiveSourceEvent = { type: string; sequence: number; timestamp: string; eventHash: string; runId: string; payload: Record<string, unknown> };

/** A seed 004 `RunEvent`. */
export type LiveRunEvent = {
  eventId: string;
  runId: string | null;
  eventType: string;
  timestamp: string;
  virtualTimestamp?: string;
  sourceSequence?: number;
  sourceEventHash?: string;
  stepIndex?: number;
  toolName?: string;
  data?: unknown;
};

type Draft = Pick<LiveRunEvent, "eventType" | "stepIndex" | "toolName" | "data">;

/** The seed 004 drafts of one hashed event (see the module's table); `steps` tracks step ids → index and tool. */
function drafts(e: LiveSourceEvent, steps: Map<string, { index: number; tool: string }>, invocations: Map<string, unknown>): Draft[] {
  const p = { ...e.payload };
  if (e.type === "tool.invoked") invocations.set(String(p["invocationId"]), p["stepId"] ?? null);
  if (p["stepId"] === undefined) p["stepId"] = invocations.get(String(p["invocationId"])) ?? null;
  const at = (id: unknown): Pick<Draft, "stepIndex" | "toolName"> => {
    const s = steps.get(String(id));
    return s === undefined ? {} : { stepIndex: s.index, toolName: s.tool };
  };
  switch (e.type) {
    case "run.started":
      return [{ eventType: "run_started", data: { packId: p["packId"], packVersion: p["packVersion"], planHash: p["planHash"] ?? null, intent: p["intent"] ?? null } }];
    case "run.step.started": {
      steps.set(String(p["stepId"]), { index: Number(p["stepIndex"] ?? 0), tool: String(p["toolName"] ?? p["stepType"] ?? "") });
      if (p["stepType"] === "replan") return [{ eventType: "replan_triggered", ...at(p["stepId"]), data: { stepId: p["stepId"] } }];
      return [{ eventType: "step_started", ...at(p["stepId"]), data: { stepId: p["stepId"] } }];
    }
    case "tool.invoked":
      return [{ eventType: "tool_called", ...at(p["stepId"]), data: { stepId: p["stepId"], invocationId: p["invocationId"], arguments: p["arguments"] ?? null } }];
    case "tool.completed":
    case "tool.failed":
      return [{ eventType: "tool_output", ...at(p["stepId"]), data: { stepId: p["stepId"], status: e.type === "tool.completed" ? "ok" : "error", outputHash: p["outputHash"] ?? null, ...(p["result"] === undefined ? {} : { output: p["result"] }), ...(p["error"] === undefined ? {} : { error: p["error"] }) } }];
    case "run.step.completed": {
      const artifacts = Array.isArray(p["artifacts"]) ? (p["artifacts"] as unknown[]) : [];
      return [...artifacts.map((a) => ({ eventType: "artifact_created", ...at(p["stepId"]), data: a })), { eventType: "step_completed", ...at(p["stepId"]), data: { stepId: p["stepId"], status: "completed" } }];
    }
    case "run.step.failed":
      return [{ eventType: "step_completed", ...at(p["stepId"]), data: { stepId: p["stepId"], status: "failed", error: p["error"] ?? null } }];
    case "run.completed":
      return [{ eventType: "run_completed", data: { outputHash: p["outputHash"] ?? null } }];
    case "run.failed": {
      const error = p["error"] as { code?: unknown } | undefined;
      const timeout = typeof error?.code === "string" && TIMEOUT_CODES.has(error.code);
      return [...(timeout ? [{ eventType: "timeout_error", data: { error } }] : []), { eventType: "run_failed", data: { error: error ?? null } }];
    }
    case "run.aborted":
      return [{ eventType: "run_cancelled", data: { signal: p["signal"] ?? null } }];
    default:
      return [];
  }
}

/**
 * A mapper from hashed events to seed 004 `RunEvent`s, for one run (it remembers each step's index and tool).
 * @param now the real time of emission (ISO 8601)
 * @returns a function from one hashed event to its seed 004 events (often one, sometimes none or several)
 * @example const map = liveEventMapper(() => new Date().toISOString()); for (const e of map(event)) write(e);
 */
export function liveEventMapper(now: () => string): (e: LiveSourceEvent) => LiveRunEvent[] {
  const steps = new Map<string, { index: number; tool: string }>();
  const invocations = new Map<string, unknown>();
  return (e) =>
    drafts(e, steps, invocations).map((d, i) => ({
      eventId: deriveId("reach-wasm/live-event", e.eventHash, String(i)),
      runId: e.runId,
      eventType: d.eventType,
      timestamp: now(),
      virtualTimestamp: e.timestamp,
      sourceSequence: e.sequence,
      sourceEventHash: e.eventHash,
      ...(d.stepIndex === undefined ? {} : { stepIndex: d.stepIndex, toolName: d.toolName! }),
      ...(d.data === undefined ? {} : { data: d.data }),
    }));
}

/**
 * A heartbeat (seed 004 `heartbeat`: connection keep-alive; never hashed).
 * @param runId the run's id once known, else null
 * @param count how many heartbeats came before
 * @param now the real time (ISO 8601)
 * @returns the event
 * @example heartbeat(null, 0, new Date().toISOString()).eventType // "heartbeat"
 */
export function heartbeat(runId: string | null, count: number, now: string): LiveRunEvent {
  return { eventId: deriveId("reach-wasm/heartbeat", runId ?? "", String(count)), runId, eventType: "heartbeat", timestamp: now, data: { count } };
}
