/**
 * A run as people look at it: one {@link RunView} built from a capsule's entries (or a run directory's files mapped
 * onto the same names), read defensively (a capsule is hostile input: a missing or odd field becomes `null` and a
 * note in `warnings`, never an exception, except when there are no events at all). `show`, the HTML report and
 * `diff` all render this one view.
 *
 * Where things come from (seed 003 §3.2 events; `src/capsule/run-capsule.ts` entries; `src/engine/step-events.ts`):
 * steps from `run.step.*` events, each step's tool, arguments and outputs from `tool.invoked` / `tool.completed`
 * (outputs are stored once there), fuel, host calls and module commitments from `tool.completed` / `tool.failed`,
 * stops from the terminal event's `stops` and `run.aborted`'s `abortedAt`, host calls from `tape.jsonl`, tool kinds
 * from the archived `pack/reach.json` (`infra` for seed 002's infrastructure tools), real durations from `evidence.json` (run directories only; never hashed).
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import type { CapsuleIndex } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { readTapeJsonl } from "../record/mod.ts";
import { INFRA_TOOL_NAMES } from "../sandbox/mod.ts";
import type { TapeRecord } from "../record/mod.ts";
import { arr, get, obj, parseJsonBytes, str, strings } from "./_json.ts";
import type { Obj } from "./_json.ts";
import { buildSteps } from "./_steps.ts";
import { lineageOf } from "./lineage.ts";
import type { LineageView } from "./lineage.ts";
import { buildStepStates } from "./step-states.ts";
import type { RunStates } from "./step-states.ts";
import type { WorkspaceView } from "./_state-types.ts";
import { redactionOf } from "./_replayed-states.ts";
import type { ReplayedRun } from "./_replayed-states.ts";
import type { RawEvent, StepView, StopView } from "./_steps.ts";

export type { ArtifactView, StepView, StopView, ViolationView } from "./_steps.ts";

/** What a view is built from: entries named as in a capsule (`events.jsonl`, `workspace/after/…`, …). */
export type RunSource = {
  /** Where the entries came from. */
  origin: "capsule" | "run-dir";
  /** Entries by capsule name (every entry but `capsule.json`). */
  entries: ReadonlyMap<string, Uint8Array>;
  /** The capsule's index, when the source is a capsule. */
  index?: CapsuleIndex | null;
  /** Entries whose bytes do not match the index (from `readRunCapsule`). */
  damaged?: readonly { path: string; reason: string }[];
  /** `evidence.json` (a run directory's, or one found beside a capsule): real durations, unhashed. */
  evidence?: unknown;
  /**
   * What a replay of the capsule observed after each step (run outside `src/report/`, e.g. by the CLI's `report`):
   * the states the record alone cannot give (`_replayed-states.ts`).
   */
  replayed?: ReplayedRun;
};

/** The run's end. */
export type TerminalView = {
  type: "run.completed" | "run.failed" | "run.aborted";
  at: string;
  reason: string | null;
  error: { code: string; message: string } | null;
  failedStep: string | null;
  signal: string | null;
  abortedAt: Obj | null;
};

/** A workspace snapshot: regular files and symbolic links (link → target text). */
export type { WorkspaceView } from "./_state-types.ts";

/** A run, ready to render. */
export type RunView = {
  origin: RunSource["origin"];
  runId: string | null;
  runHash: string;
  status: "COMPLETED" | "FAILED" | "ABORTED" | "INCOMPLETE";
  pack: { id: string | null; version: string | null; digest: string | null };
  seed: string | null;
  epoch: string | null;
  restricted: boolean | null;
  phases: string[];
  input: unknown;
  plan: { id: string | null; hash: string | null; steps: { id: string; tool: string; description: string | null; dependsOn: string[] }[] } | null;
  steps: StepView[];
  /** Every stop a signal or the watchdog made (`stepId` null: a planner's). */
  stops: StopView[];
  terminal: TerminalView | null;
  eventCount: number;
  tape: TapeRecord[];
  blobs: Map<string, Uint8Array>;
  workspace: { before: WorkspaceView | null; after: WorkspaceView };
  /** Signer of `proof.json` as the index names it (not verified here: see `verification.ts`). */
  proofSigner: string | null;
  /** The post-execution capability audit of `result.json` (seed 003 §4.2); null when the run record has none. */
  capabilityAudit: Obj | null;
  /** The deprecated features the run used (`result.json` `deprecations`, seed 003 §9.2). */
  deprecations: { id: string; message: string }[];
  /** A session run's place in its MCP session (`request.json` `session`): its run number and the run it continues. */
  session: { segment: number; previousRunHash: string | null } | null;
  /** The runs this one was forked from, resumed or continues (`request.json`; `lineage.ts`). */
  lineage: LineageView;
  /** The workspace and the memory store after each step, where the record can say (`step-states.ts`). */
  states: RunStates;
  warnings: string[];
};

const decoderText = new TextDecoder("utf-8");

/**
 * Build the view of a run.
 * @param source the entries (and the capsule index, damage list and evidence when known)
 * @returns the view
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when there is no `events.jsonl` or not one event can be read from it
 * @example const view = buildRunView({ origin: "capsule", entries: capsule.entries, index: capsule.index });
 */
export function buildRunView(source: RunSource): RunView {
  const { entries } = source;
  const warnings: string[] = (source.damaged ?? []).map((d) => `${d.path}: ${d.reason}`);
  const events = readEvents(entries.get("events.jsonl"), warnings);
  const started = events[0]?.type === "run.started" ? events[0].payload : null;
  const header = obj(parseJsonBytes(entries.get("EXECUTION_HEADER.json")));
  const request = obj(parseJsonBytes(entries.get("request.json")));
  const tape = readTape(entries.get("tape.jsonl"), entries, warnings);
  const kinds = toolKinds(entries.get("pack/reach.json"));
  const { steps, stops } = buildSteps(events, { tape, kinds, entries, evidence: source.evidence, warnings });
  const terminal = terminalOf(events);
  const restricted = get(obj(get(started, "capabilities")), "restricted");
  const view: Omit<RunView, "states"> = {
    origin: source.origin,
    runId: str(started, "runId"),
    runHash: source.index?.runHash ?? runHashOf(events, entries),
    status: terminal === null ? "INCOMPLETE" : terminal.type === "run.completed" ? "COMPLETED" : terminal.type === "run.failed" ? "FAILED" : "ABORTED",
    pack: { id: str(started, "packId"), version: str(started, "packVersion"), digest: str(started, "packDigest") },
    seed: str(started, "seed"),
    epoch: str(started, "epoch"),
    restricted: typeof restricted === "boolean" ? restricted : null,
    phases: strings(header, "phases"),
    input: request === null ? undefined : get(request, "input"),
    plan: planOf(entries.get("plan.json"), started),
    steps,
    stops,
    terminal,
    eventCount: events.length,
    tape,
    blobs: under(entries, "blobs/"),
    workspace: { before: source.origin === "capsule" ? workspaceOf(entries, "before") : null, after: workspaceOf(entries, "after") },
    proofSigner: source.index?.proof?.attestations?.[0]?.nodeId ?? null,
    ...recordedAudit(entries),
    session: sessionOf(request),
    lineage: lineageOf(entries.get("request.json")),
    warnings,
  };
  // A redacted capsule's states never come from a replay (it would show what was removed again).
  const redacted = source.replayed === undefined ? null : redactionOf(source.index);
  return { ...view, states: buildStepStates(view, entries, redacted === null ? source.replayed : { matches: false, reason: redacted }) };
}

/** `request.json`'s session link, when it is well formed. */
function sessionOf(request: Obj | null): RunView["session"] {
  const session = obj(get(request, "session"));
  const segment = get(session, "segment");
  const previous = get(session, "previousRunHash");
  if (typeof segment !== "number" || !Number.isSafeInteger(segment) || segment < 1) return null;
  return { segment, previousRunHash: typeof previous === "string" && /^[0-9a-f]{64}$/.test(previous) ? previous : null };
}

function readEvents(bytes: Uint8Array | undefined, warnings: string[]): RawEvent[] {
  if (bytes === undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", "there is no events.jsonl: this is not a reach-wasm capsule or run directory");
  const read = readJsonl(bytes);
  if (read.error !== undefined) warnings.push(`events.jsonl line ${read.error.index}: ${read.error.reason}; the events after it are not shown`);
  const events: RawEvent[] = [];
  for (const [i, raw] of read.events.entries()) {
    const e = obj(raw);
    const type = str(e, "type");
    const payload = obj(get(e, "payload"));
    if (type === null || payload === null) {
      warnings.push(`event ${i} has no type or payload; the events from it on are not shown`);
      break;
    }
    events.push({ index: i, type, timestamp: str(e, "timestamp") ?? "", eventHash: str(e, "eventHash") ?? "", payload });
  }
  if (events.length === 0) throw new ReachError("REPLAY_CAPSULE_INVALID", `events.jsonl holds no readable event${read.error === undefined ? "" : ` (line ${read.error.index}: ${read.error.reason})`}; the capsule is damaged`);
  return events;
}

function readTape(bytes: Uint8Array | undefined, entries: ReadonlyMap<string, Uint8Array>, warnings: string[]): TapeRecord[] {
  if (bytes === undefined || bytes.length === 0) return [];
  try {
    return readTapeJsonl(bytes, undefined, entries);
  } catch (err) {
    warnings.push(`tape.jsonl: ${(err as Error).message}; host calls are not shown`);
    return [];
  }
}

function toolKinds(bytes: Uint8Array | undefined): Map<string, string> {
  // seed 002's infrastructure tools run in every run without a manifest entry
  const kinds = new Map<string, string>(INFRA_TOOL_NAMES.map((n) => [n, "infra"]));
  const tools = obj(get(obj(parseJsonBytes(bytes)), "tools"));
  if (tools === null) return kinds;
  for (const name of Object.keys(tools)) {
    const kind = str(obj(tools[name]), "kind");
    if (kind !== null) kinds.set(name, kind);
  }
  return kinds;
}

function terminalOf(events: readonly RawEvent[]): TerminalView | null {
  const last = events[events.length - 1];
  if (last === undefined || (last.type !== "run.completed" && last.type !== "run.failed" && last.type !== "run.aborted")) return null;
  const p = last.payload;
  const error = obj(get(p, "error"));
  return {
    type: last.type,
    at: last.timestamp,
    reason: str(p, "reason"),
    error: error === null ? null : { code: str(error, "code") ?? "?", message: str(error, "message") ?? "" },
    failedStep: str(p, "failedStep"),
    signal: str(p, "signal"),
    abortedAt: obj(get(p, "abortedAt")),
  };
}

function recordedAudit(entries: ReadonlyMap<string, Uint8Array>): Pick<RunView, "capabilityAudit" | "deprecations"> {
  const result = obj(parseJsonBytes(entries.get("result.json")));
  const deprecations = arr(result, "deprecations").map(obj).filter((d): d is Obj => d !== null);
  return {
    capabilityAudit: obj(get(result, "capabilityAudit")),
    deprecations: deprecations.map((d) => ({ id: str(d, "id") ?? "?", message: str(d, "message") ?? "" })),
  };
}

function runHashOf(events: readonly RawEvent[], entries: ReadonlyMap<string, Uint8Array>): string {
  const fromResult = str(obj(parseJsonBytes(entries.get("result.json"))), "runHash");
  return fromResult ?? sha256Hex(events.map((e) => e.eventHash).join(""));
}

function planOf(bytes: Uint8Array | undefined, started: Obj | null): RunView["plan"] {
  const plan = obj(parseJsonBytes(bytes));
  if (plan === null) return null;
  // a plan's steps, or seed 001's tasks (`task_id`, its one tool first in `tools`)
  const tasks = !Array.isArray(plan["steps"]) && Array.isArray(plan["tasks"]);
  const steps = arr(plan, tasks ? "tasks" : "steps").map(obj).filter((s): s is Obj => s !== null && str(s, tasks ? "task_id" : "id") !== null).map((s) => ({
    id: str(s, tasks ? "task_id" : "id")!,
    tool: (tasks ? strings(s, "tools")[0] : str(s, "tool")) ?? "?",
    description: str(s, "description"),
    dependsOn: strings(s, "depends_on"),
  }));
  return { id: str(plan, "plan_id"), hash: str(started, "planHash"), steps };
}

function under(entries: ReadonlyMap<string, Uint8Array>, prefix: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [path, bytes] of entries) if (path.startsWith(prefix) && path.length > prefix.length) out.set(path.slice(prefix.length), bytes);
  return out;
}

function workspaceOf(entries: ReadonlyMap<string, Uint8Array>, which: "before" | "after"): WorkspaceView {
  const all = under(entries, `workspace/${which}/`);
  const linkPaths = new Set(strings(obj(parseJsonBytes(entries.get("workspace/links.json"))), which));
  const files = new Map<string, Uint8Array>();
  const links = new Map<string, string>();
  for (const [path, bytes] of all) {
    if (linkPaths.has(path)) links.set(path, decoderText.decode(bytes));
    else files.set(path, bytes);
  }
  return { files, links };
}
