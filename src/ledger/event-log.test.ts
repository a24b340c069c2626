import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../determinism/clock.ts";
import { ReachError } from "../protocol/errors.ts";
import type { EventType } from "../protocol/event-types.ts";
import { EventLog, GENESIS_HASH, readJsonl, toJsonl, verifyChain, verifyJsonl } from "./mod.ts";
import type { Payload } from "./mod.ts";

const RUN = "6f1c2d3e-4a5b-8c6d-9e7f-0a1b2c3d4e5f";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const started: Payload = { runId: RUN, packId: "p", packVersion: "1.0.0", specVersion: "1.0.0", inputHash: "0".repeat(64), manifestHash: "1".repeat(64), seed: "0", epoch: "1970-01-01T00:00:00.000Z" };

function newLog() {
  return new EventLog({ runId: RUN, clock: new VirtualClock() });
}

/** A complete, well-ordered run with `steps` one-tool steps. */
function fullRun(steps = 2): EventLog {
  const log = newLog();
  log.append("run.started", started);
  for (let s = 0; s < steps; s++) {
    const stepId = `s${s}`;
    const inv = `inv-${s}`;
    log.append("run.step.started", { stepId, stepType: "tool", stepIndex: s, toolName: "t" });
    log.append("tool.invoked", { toolName: "t", invocationId: inv, arguments: { n: s }, timeoutMs: 100, stepId });
    log.append("tool.completed", { invocationId: inv, result: { ok: s }, outputHash: "2".repeat(64) }, { durationMs: 1.5 + s });
    log.append("run.step.completed", { stepId, result: { ok: s } });
  }
  log.append("run.completed", { runId: RUN, status: "success", outputHash: "3".repeat(64) });
  return log;
}

function expectSequenceError(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).code).toBe("PROTO_SEQUENCE_ERROR");
    return;
  }
  throw new Error("expected PROTO_SEQUENCE_ERROR");
}

describe("EventLog hashing (seed 003 §3.3)", () => {
  it("chains events exactly as ARCHITECTURE.md defines, checked against node:crypto", () => {
    const log = fullRun(1);
    let prev = GENESIS_HASH;
    for (const e of log.events) {
      expect(e.prevEventHash).toBe(prev);
      expect(e.eventHash).toBe(sha(e.type + e.timestamp + e.payloadHash + prev));
      prev = e.eventHash;
    }
    expect(log.runHash()).toBe(sha(log.events.map((e) => e.eventHash).join("")));
    expect(log.head).toBe(prev);
  });

  it("stamps every event from the virtual clock, one millisecond apart, and numbers them from 0", () => {
    const log = fullRun(1);
    expect(log.events.map((e) => e.timestamp)).toEqual([0, 1, 2, 3, 4, 5].map((ms) => new Date(ms).toISOString()));
    expect(log.events.map((e) => e.sequence)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("keeps metrics out of the hash", () => {
    const a = newLog();
    const b = newLog();
    a.append("run.started", started, { durationMs: 1, host: "a" });
    b.append("run.started", started, { durationMs: 999, host: "b" });
    expect(a.events[0]!.eventHash).toBe(b.events[0]!.eventHash);
    expect(a.events[0]!.metrics).toEqual({ durationMs: 1, host: "a" });
  });

  it("gives the same run hash for the same events, and a different one when any payload differs", () => {
    expect(fullRun().runHash()).toBe(fullRun().runHash());
    const other = newLog();
    other.append("run.started", { ...started, seed: "1" });
    const first = newLog();
    first.append("run.started", started);
    expect(other.runHash()).not.toBe(first.runHash());
  });

  it("refuses payloads JCS cannot represent, and appends nothing", () => {
    const log = newLog();
    expect(() => log.append("run.started", { ...started, bad: Number.NaN })).toThrow(TypeError);
    expect(log.events).toHaveLength(0);
    expect(() => log.append("run.started", [] as unknown as Payload)).toThrow(TypeError);
  });
});

describe("EventLog ordering (seed 003 §3.2)", () => {
  const stepStart = (stepId: string): [EventType, Payload] => ["run.step.started", { stepId, stepType: "tool", stepIndex: 0, toolName: "t" }];
  const invoke = (invocationId: string, stepId = "a"): [EventType, Payload] => ["tool.invoked", { toolName: "t", invocationId, arguments: {}, timeoutMs: 1, stepId }];

  const bad: Array<[string, Array<[EventType, Payload]>]> = [
    ["an event before run.started", [stepStart("a")]],
    ["run.started twice", [["run.started", started], ["run.started", started]]],
    ["interleaved steps", [["run.started", started], stepStart("a"), stepStart("b")]],
    ["a reused step id", [["run.started", started], stepStart("a"), ["run.step.completed", { stepId: "a", result: {} }], stepStart("a")]],
    ["a tool outside a step", [["run.started", started], invoke("i")]],
    ["a tool naming another step", [["run.started", started], stepStart("a"), invoke("i", "b")]],
    ["two open tools", [["run.started", started], stepStart("a"), invoke("i"), invoke("j")]],
    ["a completion for another invocation", [["run.started", started], stepStart("a"), invoke("i"), ["tool.completed", { invocationId: "j", result: {} }]]],
    ["closing a step with its tool open", [["run.started", started], stepStart("a"), invoke("i"), ["run.step.completed", { stepId: "a", result: {} }]]],
    ["closing another step", [["run.started", started], stepStart("a"), ["run.step.failed", { stepId: "b", result: {} }]]],
    ["termination inside a step", [["run.started", started], stepStart("a"), ["run.failed", { runId: RUN, status: "failure" }]]],
    ["an event after termination", [["run.started", started], ["run.completed", { runId: RUN, status: "success" }], stepStart("a")]],
    ["capsule.sync inside a step", [["run.started", started], stepStart("a"), ["capsule.sync", { runId: RUN, status: "success" }]]],
    ["a payload naming another run", [["run.started", { ...started, runId: "x" }]]],
    ["a step without a stepId", [["run.started", started], ["run.step.started", { stepType: "tool" }]]],
  ];
  for (const [what, events] of bad) {
    it(`refuses ${what} with PROTO_SEQUENCE_ERROR and appends nothing`, () => {
      const log = newLog();
      const last = events.length - 1;
      events.slice(0, last).forEach(([t, p]) => log.append(t, p));
      const before = log.events.length;
      const head = log.head;
      expectSequenceError(() => log.append(events[last]![0], events[last]![1]));
      expect(log.events.length).toBe(before);
      expect(log.head).toBe(head);
    });
  }

  it("accepts a failed run with a policy violation inside the step", () => {
    const log = newLog();
    log.append("run.started", started);
    log.append(...stepStart("a"));
    log.append(...invoke("i"));
    log.append("policy.violation", { violationType: "RESOURCE_ACCESS", details: "x", attemptedCapability: "fs.read:/", declaredCapabilities: [], stepId: "a" });
    log.append("tool.failed", { invocationId: "i", error: { code: "POLICY_VIOLATION", message: "x" } });
    log.append("run.step.failed", { stepId: "a", result: { status: "failure" } });
    log.append("run.aborted", { runId: RUN, status: "failure", reason: "aborted" });
    expect(log.terminated).toBe(true);
    expect(verifyChain(log.events).valid).toBe(true);
  });
});

describe("JSONL and verifyChain", () => {
  it("round-trips through JSONL and verifies, reporting the run hash", () => {
    const log = fullRun();
    const text = toJsonl(log.events);
    const { events, error } = readJsonl(text);
    expect(error).toBeUndefined();
    expect(events).toEqual(JSON.parse(JSON.stringify(log.events)));
    expect(verifyJsonl(text, log.runHash())).toEqual({ valid: true, count: log.events.length, runHash: log.runHash(), head: log.head });
  });

  it("reports a wrong expected run hash at index = count", () => {
    const log = fullRun(1);
    const report = verifyChain(log.events, "f".repeat(64));
    expect(report).toMatchObject({ valid: false, index: log.events.length, field: "runHash" });
  });

  it("reports removed, reordered, duplicated and edited events at the first bad index", () => {
    const events = JSON.parse(JSON.stringify(fullRun(2).events)) as Array<Record<string, unknown>>;
    const at = (list: unknown[]) => verifyChain(list);
    expect(at([...events.slice(0, 3), ...events.slice(4)])).toMatchObject({ valid: false, index: 3 });
    expect(at([events[0], events[2], events[1], ...events.slice(3)])).toMatchObject({ valid: false, index: 1 });
    expect(at([...events, events[events.length - 1]])).toMatchObject({ valid: false, index: events.length });
    const edited = events.map((e, i) => (i === 5 ? { ...e, payload: { ...(e.payload as object), extra: 1 } } : e));
    expect(at(edited)).toMatchObject({ valid: false, index: 5, field: "payloadHash" });
    const renumbered = events.map((e, i) => (i === 2 ? { ...e, sequence: 7 } : e));
    expect(at(renumbered)).toMatchObject({ valid: false, index: 2, field: "sequence" });
    const extraKey = events.map((e, i) => (i === 4 ? { ...e, note: "x" } : e));
    expect(at(extraKey)).toMatchObject({ valid: false, index: 4, field: "note" });
    expect(at([])).toMatchObject({ valid: false, index: 0 });
  });

  it("detects every single-byte change of every event outside metrics, at that event's index", () => {
    const log = fullRun(1);
    const bytes = new TextEncoder().encode(toJsonl(log.events));
    const text = new TextDecoder().decode(bytes);
    let line = 0;
    let inMetrics = -1;
    const metricsStart = text.indexOf(',"metrics":') + ',"metrics":'.length;
    const metricsEnd = text.indexOf("}", metricsStart) + 1;
    for (let pos = 0; pos < bytes.length; pos++) {
      if (pos >= metricsStart && pos < metricsEnd) inMetrics++;
      else {
        const copy = bytes.slice();
        copy[pos] = copy[pos]! ^ 0x04;
        const report = verifyJsonl(copy);
        expect(report.valid, `byte ${pos}`).toBe(false);
        if (!report.valid) expect(report.index, `byte ${pos}`).toBe(line);
      }
      if (bytes[pos] === 0x0a) line++;
    }
    expect(inMetrics).toBeGreaterThan(0);
  });

  it("refuses non-canonical, truncated, blank and non-UTF-8 lines by index", () => {
    const text = toJsonl(fullRun(1).events);
    const lines = text.split("\n");
    expect(readJsonl(text.slice(0, -1)).error).toMatchObject({ index: lines.length - 2 });
    expect(readJsonl(lines[0] + "\n\n").error).toMatchObject({ index: 1, reason: "blank line" });
    expect(readJsonl(lines[0]!.replace('{"eventHash"', '{ "eventHash"') + "\n").error).toMatchObject({ index: 0 });
    expect(readJsonl(new Uint8Array([0xff, 0x0a])).error).toMatchObject({ index: 0 });
  });
});
