/**
 * Run event types: the six of seed 003 §3.2 and the rest of the upstream `event.schema.json` enum.
 * @module
 */

/** Every event type, in the order the upstream schema lists them. */
export const EVENT_TYPES = [
  "run.started",
  "run.step.started",
  "tool.invoked",
  "tool.completed",
  "tool.failed",
  "run.step.completed",
  "run.step.failed",
  "run.completed",
  "run.failed",
  "run.aborted",
  "policy.violation",
  "federation.delegation",
  "capsule.sync",
] as const;

/** A run event type. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The three types that end a run (seed 003 §3.1 terminal states). */
export const TERMINAL_EVENT_TYPES: readonly EventType[] = ["run.completed", "run.failed", "run.aborted"];

const TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** True when `t` is a known event type. */
export function isEventType(t: unknown): t is EventType {
  return typeof t === "string" && TYPE_SET.has(t);
}
