/**
 * Where a replay differs from the recording (`replay.ts`): the first differing event, with the field, both values and
 * the JSON pointer inside a tool's arguments or output, and the first differing path of the workspace after.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { AFTER_PREFIX, entriesUnder } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { differencePointer, firstDifference, showValue } from "../record/mod.ts";
import { redactedDigest } from "./replay-redacted.ts";
import type { RunRecord } from "./types.ts";

/** A recorded or replayed event, as compared. */
export type Ev = { type: string; timestamp: string; payload: Record<string, unknown>; eventHash: string };

/**
 * Where a replay first differed from the recording: the event (index, step), the first differing field of it, the
 * value each run has there, and, where a tool's arguments or output differ, the JSON pointer of the first differing
 * value inside them with both values. Values are canonical JSON clipped to 200 characters, with everything a
 * terminal would act on escaped (`showValue`).
 */
export type Divergence = {
  eventIndex: number;
  stepId: string | null;
  field: string;
  message: string;
  /** The recorded value at `field`, when the recorded run has one. */
  recorded?: string;
  /** The replayed value at `field`, when the replay has one. */
  replayed?: string;
  /** Where the step's `arguments` (tool.invoked) or `output` (tool.completed) differ first, and both values there. */
  value?: { of: "arguments" | "output"; pointer: string; recorded: string; replayed: string };
};

export function stepAt(events: readonly Ev[], index: number): string | null {
  let open: string | null = null;
  for (let i = 0; i <= Math.min(index, events.length - 1); i++) {
    const e = events[i]!;
    if (e.type === "run.step.started") open = String(e.payload["stepId"]);
    else if ((e.type === "run.step.completed" || e.type === "run.step.failed") && i < index) open = null;
  }
  return open;
}

/** The value at a dotted field path of an event (`payload.outputHash`, `payload.result.keys[0]`). */
function fieldValue(e: Ev, field: string): unknown {
  if (field === "type" || field === "timestamp") return e[field];
  if (field === "eventHash") return e.eventHash;
  const at = differencePath(field);
  let v: unknown = e;
  for (const seg of at) {
    if (v === null || typeof v !== "object" || !Object.prototype.hasOwnProperty.call(v, seg)) return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

/** The segments of a path made by `firstDifference` (`payload.a["b c"][2]`). */
function differencePath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /(?:^|\.)([A-Za-z_$][A-Za-z0-9_$]*)|\[("(?:[^"\\]|\\.)*"|\d+)\]/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(field)) !== null) out.push(m[1] ?? (m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : Number(m[2])));
  return out;
}

/**
 * The divergence at event `i`: the first differing field with both values, and for a tool's events the first
 * differing value inside its arguments or output.
 */
function eventDivergence(i: number, stepId: string | null, a: Ev | undefined, b: Ev | undefined, cause: string): Divergence {
  const where = `event ${i}${stepId === null ? "" : ` (step "${stepId}"${a === undefined ? "" : `, ${a.type}`})`}`;
  if (a === undefined || b === undefined) {
    const field = a === undefined ? "(the replay has more events)" : "(the replay has fewer events)";
    return { eventIndex: i, stepId, field, message: `${where} differs: ${field}: recorded ${a?.type ?? "nothing"}, replayed ${b?.type ?? "nothing"}${cause}` };
  }
  const field = a.type !== b.type ? "type" : a.timestamp !== b.timestamp ? "timestamp" : (firstDifference(a.payload, b.payload, "payload") ?? "eventHash");
  const recordedText = showValue(fieldValue(a, field));
  const replayedText = showValue(fieldValue(b, field));
  const of: "arguments" | "output" | null = a.type === b.type && a.type === "tool.invoked" ? "arguments" : a.type === b.type && a.type === "tool.completed" ? "output" : null;
  const inner = of === null ? null : differencePointer(a.payload[of === "output" ? "result" : "arguments"], b.payload[of === "output" ? "result" : "arguments"]);
  const value = of === null || inner === null ? undefined : { of, ...inner };
  const valueText = value === undefined ? "" : `; the ${value.of} differs first at ${value.pointer === "" ? "its root" : value.pointer}: recorded ${value.recorded}, replayed ${value.replayed}`;
  return {
    eventIndex: i,
    stepId,
    field,
    message: `${where} differs at ${field}: recorded ${recordedText}, replayed ${replayedText}${valueText}${cause}`,
    recorded: recordedText,
    replayed: replayedText,
    ...(value === undefined ? {} : { value }),
  };
}

/** The first event where the replay differs from the recording, or null. */
export function eventsDivergence(recorded: readonly Ev[], record: RunRecord): Divergence | null {
  const replayed = record.events as unknown as Ev[];
  for (let i = 0; i < Math.max(recorded.length, replayed.length); i++) {
    const a = recorded[i];
    const b = replayed[i];
    if (a !== undefined && b !== undefined && a.eventHash === b.eventHash) continue;
    const cause = record.error?.code === "REPLAY_DIVERGENCE" ? `; the tool's host calls differ from the tape: ${record.error.message}` : "";
    return eventDivergence(i, stepAt(recorded, i), a, b, cause);
  }
  return null;
}

/** The first path where the replayed workspace differs from the recorded `workspace/after/`, or null. */
export function workspaceDivergence(capsule: RunCapsule, record: RunRecord, eventIndex: number): Divergence | null {
  const after = entriesUnder(capsule.entries, AFTER_PREFIX);
  // The replayed workspace as the capsule stores it: regular files, and each link as its target's bytes.
  const mine = new Map(record.workspaceFiles);
  for (const [path, target] of record.workspaceLinks ?? []) mine.set(path, new TextEncoder().encode(target));
  const hidden = (capsule.index.redacted?.entries ?? []).filter((r) => r.path.startsWith(AFTER_PREFIX)).map((r) => r.path.slice(AFTER_PREFIX.length));
  const paths = new Set([...after.keys(), ...mine.keys(), ...hidden]);
  for (const p of [...paths].sort()) {
    const x = after.get(p);
    const y = mine.get(p);
    const recorded = x === undefined ? redactedDigest(capsule, `${AFTER_PREFIX}${p}`) : sha256Hex(x);
    if (recorded === undefined || y === undefined || recorded !== sha256Hex(y)) {
      return { eventIndex, stepId: null, field: `workspace/after/${p}`, message: `the workspace after the replay differs from the recorded one at ${p}` };
    }
  }
  return null;
}

