import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { payloadSchemas, payloadSchemaFor, RunEventSchema } from "./event.ts";
import type { RunEventOf } from "./event.ts";
import { EVENT_TYPES } from "./event-types.ts";
import type { EventType } from "./event-types.ts";

const example = (type: EventType): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../conformance/examples/event/${type}.json`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;

describe("payloadSchemaFor", () => {
  it("has a schema for every event type", () => {
    expect(Object.keys(payloadSchemas()).sort()).toEqual([...EVENT_TYPES].sort());
    for (const t of EVENT_TYPES) expect(payloadSchemaFor(t)).toBe(payloadSchemas()[t]);
    expect(RunEventSchema().options.length).toBe(EVENT_TYPES.length); // the union has a branch per type
  });

  it("throws TypeError for an unknown type", () => {
    expect(() => payloadSchemaFor("run.paused" as EventType)).toThrow(TypeError);
    expect(() => payloadSchemaFor("toString" as EventType)).toThrow(/expected a run event type/);
  });

  it("durations are not allowed in hashed payloads (seed 003 §3.3 rule 4)", () => {
    const r = payloadSchemaFor("tool.completed").safeParse({ ...(example("tool.completed").payload as object), durationMs: 3 });
    expect(r.success).toBe(false);
  });
});

describe("RunEventSchema", () => {
  it("narrows on type", () => {
    const ev = RunEventSchema().parse(example("run.failed"));
    expect(ev.type).toBe("run.failed");
    if (ev.type === "run.failed") {
      const typed: RunEventOf<"run.failed"> = ev;
      expect(typed.payload.error.code).toBe("EXEC_TOOL_FAILED");
    }
  });

  it("rejects a payload of another type (discriminated by type)", () => {
    const ev = { ...example("run.completed"), payload: example("run.failed").payload };
    expect(RunEventSchema().safeParse(ev).success).toBe(false);
  });

  it("keeps metrics unvalidated but requires an object", () => {
    expect(RunEventSchema().safeParse({ ...example("run.started"), metrics: { wallMs: 12, host: "h" } }).success).toBe(true);
    expect(RunEventSchema().safeParse({ ...example("run.started"), metrics: 12 }).success).toBe(false);
  });

  it("requires lowercase hex hashes and 64 digits", () => {
    expect(RunEventSchema().safeParse({ ...example("run.started"), eventHash: "A".repeat(64) }).success).toBe(false);
    expect(RunEventSchema().safeParse({ ...example("run.started"), prevEventHash: "0".repeat(63) }).success).toBe(false);
  });

  it("rejects a step failure carrying an invocationId (would also match upstream ToolFailedPayload)", () => {
    const ev = example("run.step.failed");
    const payload = { ...(ev.payload as object), invocationId: "x" };
    expect(RunEventSchema().safeParse({ ...ev, payload }).success).toBe(false);
  });
});
