/**
 * `reach-wasm diff`: where two runs first part ways, and what else differs. The first divergence is the first
 * event whose hash differs (its index, the step it belongs to, the first differing field, and — when the step's
 * tool made host calls — the first host call whose record differs); the summary compares the requests (input,
 * seed, approval, limits), the pack files, the tool modules (`module` commitments of `tool.completed` /
 * `tool.failed`), the workspaces before and after, and the step outputs (by output hash).
 *
 * Two capsules are identical when every entry but `proof.json` is byte for byte the same (then the run hashes are
 * equal too); a different proof alone (signed by another key, or unsigned) is noted, not counted as a difference.
 * @module
 */
import { sha256Hex } from "../canonical/mod.ts";
import { readJsonl } from "../ledger/mod.ts";
import { firstDifference } from "../record/mod.ts";
import { get, obj, parseJsonBytes, str } from "./_json.ts";
import type { Obj } from "./_json.ts";
import type { RunView, StepView } from "./model.ts";
import { buildRunView } from "./model.ts";
import type { RunSource } from "./model.ts";
import { workspaceChanges } from "./workspace-diff.ts";
import type { WorkspaceChanges } from "./workspace-diff.ts";

/** The first place two runs differ. */
export type FirstDivergence = {
  eventIndex: number;
  stepId: string | null;
  field: string;
  type: { a: string | null; b: string | null };
  /** The first differing host call of the step's invocation (positions within that invocation's calls). */
  hostCall: { index: number; seq: { a: number | null; b: number | null }; op: { a: string | null; b: string | null }; field: string } | null;
};

/** Paths added in B, removed from A, changed between them. */
export type PathChanges = Omit<WorkspaceChanges, "unchanged">;

/** One side of a comparison; `redacted` (steps and entries) when the capsule is redacted (HASHING.md "Redaction"). */
export type RunSide = { runHash: string; status: string; steps: number; events: number; damaged: number; redacted?: { steps: string[]; entries: string[] } };

/** What a redacted capsule lacks, for its side of the comparison. */
function redactedOf(s: RunSource): Pick<RunSide, "redacted"> {
  const r = s.index?.redacted;
  return r === undefined ? {} : { redacted: { steps: [...r.steps], entries: r.entries.map((e) => e.path) } };
}

/** The comparison of two runs. */
export type RunDiff = {
  identical: boolean;
  a: RunSide;
  b: RunSide;
  firstDivergence: FirstDivergence | null;
  inputs: string[];
  packFiles: PathChanges;
  modules: { tool: string; a: string | null; b: string | null }[];
  workspaceBefore: PathChanges;
  workspaceAfter: PathChanges;
  outputs: { stepId: string; a: string | null; b: string | null }[];
  /** Other entries that differ (plan, header, result, tape, blobs, artifacts, …). */
  entries: PathChanges;
  /** Whether the proofs differ (never a difference of the run by itself). */
  proofDiffers: boolean;
};

type Ev = { type: string; eventHash: string; timestamp: string; payload: Obj };

function events(bytes: Uint8Array | undefined): Ev[] {
  return readJsonl(bytes ?? new Uint8Array()).events.map(obj).filter((e): e is Obj => e !== null)
    .map((e) => ({ type: str(e, "type") ?? "", eventHash: str(e, "eventHash") ?? "", timestamp: str(e, "timestamp") ?? "", payload: obj(get(e, "payload")) ?? {} }));
}

function pathChanges(a: ReadonlyMap<string, Uint8Array>, b: ReadonlyMap<string, Uint8Array>): PathChanges {
  const c = workspaceChanges({ files: new Map(a), links: new Map() }, { files: new Map(b), links: new Map() });
  return { added: c.added, removed: c.removed, changed: c.changed };
}

function under(entries: ReadonlyMap<string, Uint8Array>, prefix: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [p, bytes] of entries) if (p.startsWith(prefix)) out.set(p.slice(prefix.length), bytes);
  return out;
}

function stepAt(evs: readonly Ev[], index: number): string | null {
  let open: string | null = null;
  for (let i = 0; i <= Math.min(index, evs.length - 1); i++) {
    const e = evs[i]!;
    if (e.type === "run.step.started") open = str(e.payload, "stepId");
    else if ((e.type === "run.step.completed" || e.type === "run.step.failed") && i < index) open = null;
  }
  return open;
}

function hostCallDivergence(sa: StepView | undefined, sb: StepView | undefined): FirstDivergence["hostCall"] {
  if (sa === undefined || sb === undefined) return null;
  const n = Math.max(sa.tape.length, sb.tape.length);
  for (let i = 0; i < n; i++) {
    const x = sa.tape[i];
    const y = sb.tape[i];
    const strip = (r: typeof x) => (r === undefined ? undefined : { op: r.op, request: r.request, response: r.response, error: r.error });
    const field = x === undefined || y === undefined ? (x === undefined ? "(A made fewer host calls)" : "(B made fewer host calls)") : firstDifference(strip(x), strip(y));
    if (field !== null) return { index: i, seq: { a: x?.seq ?? null, b: y?.seq ?? null }, op: { a: x?.op ?? null, b: y?.op ?? null }, field };
  }
  return null;
}

/** Members of `request.json` that say where a run came from (a fork's, a resumed run's), not what it did. */
const LINEAGE = ["forkedFrom", "resumedFrom"];

/** Whether two requests differ only in their lineage (a fork or a resumed run against its parent). */
function lineageOnly(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  const strip = (bytes: Uint8Array | undefined) => {
    const o = obj(parseJsonBytes(bytes));
    return o === null ? null : Object.fromEntries(Object.entries(o).filter(([k]) => !LINEAGE.includes(k)));
  };
  const x = strip(a);
  const y = strip(b);
  return x !== null && y !== null && firstDifference(x, y) === null;
}

/**
 * The first differing field of two events at index `i`, or null when they are the same. After an earlier difference
 * every event hash differs (the chain), so events are compared by content; `run.started`'s request hash is left out
 * when the requests differ only in their lineage (a fork first differs at its step, not at the request naming its
 * parent; the summary's `inputs` names the lineage).
 */
function eventDifference(x: Ev | undefined, y: Ev | undefined, lineage: boolean): string | null {
  if (x === undefined) return "(A has fewer events)";
  if (y === undefined) return "(B has fewer events)";
  if (x.eventHash === y.eventHash) return null;
  if (x.type !== y.type) return "type";
  if (x.timestamp !== y.timestamp) return "timestamp";
  const masked = (e: Ev) => (lineage && e.type === "run.started" ? { ...e.payload, requestHash: null } : e.payload);
  return firstDifference(masked(x), masked(y), "payload");
}

function firstDivergence(ea: readonly Ev[], eb: readonly Ev[], va: RunView, vb: RunView, lineage: boolean): FirstDivergence | null {
  for (let i = 0; i < Math.max(ea.length, eb.length); i++) {
    const x = ea[i];
    const y = eb[i];
    const field = eventDifference(x, y, lineage);
    if (field === null) continue;
    const stepId = stepAt(ea, i) ?? stepAt(eb, i);
    const inStep = (v: RunView) => v.steps.find((s) => s.stepId === stepId && s.events.first <= i && i <= s.events.last + 1);
    const hostCall = stepId === null ? null : hostCallDivergence(inStep(va), inStep(vb));
    return { eventIndex: i, stepId, field, type: { a: x?.type ?? null, b: y?.type ?? null }, hostCall };
  }
  return null;
}

function requestFields(a: Uint8Array | undefined, b: Uint8Array | undefined): string[] {
  const x = obj(parseJsonBytes(a)) ?? {};
  const y = obj(parseJsonBytes(b)) ?? {};
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  return keys.map((k) => firstDifference(get(x, k), get(y, k), k)).filter((d): d is string => d !== null);
}

function moduleChanges(va: RunView, vb: RunView): RunDiff["modules"] {
  const byTool = (v: RunView) => {
    const m = new Map<string, string | null>();
    for (const s of v.steps) if (s.tool !== null && !m.has(s.tool) && s.module !== null) m.set(s.tool, s.module.sha256);
    return m;
  };
  const ma = byTool(va);
  const mb = byTool(vb);
  return [...new Set([...ma.keys(), ...mb.keys()])].sort().filter((t) => ma.get(t) !== mb.get(t)).map((tool) => ({ tool, a: ma.get(tool) ?? null, b: mb.get(tool) ?? null }));
}

function outputChanges(va: RunView, vb: RunView): RunDiff["outputs"] {
  const outs = (v: RunView) => new Map(v.steps.filter((s) => s.type === "tool").map((s) => [s.stepId, s.outputHash]));
  const oa = outs(va);
  const ob = outs(vb);
  return [...new Set([...oa.keys(), ...ob.keys()])].filter((k) => oa.get(k) !== ob.get(k)).map((stepId) => ({ stepId, a: oa.get(stepId) ?? null, b: ob.get(stepId) ?? null }));
}

const SUMMARISED = /^(pack\/|workspace\/(before|after)\/|proof\.json$|request\.json$)/;

/**
 * Compare two runs.
 * @param a the first run's source (a capsule's entries)
 * @param b the second
 * @returns the comparison
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when either has no readable events (see `buildRunView`)
 * @example const d = diffRuns(sourceA, sourceB); process.exitCode = d.identical ? 0 : 1;
 */
export function diffRuns(a: RunSource, b: RunSource): RunDiff {
  const va = buildRunView(a);
  const vb = buildRunView(b);
  const ea = events(a.entries.get("events.jsonl"));
  const eb = events(b.entries.get("events.jsonl"));
  const other = (e: ReadonlyMap<string, Uint8Array>) => new Map([...e].filter(([p]) => !SUMMARISED.test(p)));
  const entries = pathChanges(other(a.entries), other(b.entries));
  const proofA = a.entries.get("proof.json");
  const proofB = b.entries.get("proof.json");
  const proofDiffers = (proofA === undefined) !== (proofB === undefined) || (proofA !== undefined && proofB !== undefined && sha256Hex(proofA) !== sha256Hex(proofB));
  const diff: RunDiff = {
    identical: false,
    a: { runHash: va.runHash, status: va.status, steps: va.steps.length, events: ea.length, damaged: a.damaged?.length ?? 0, ...redactedOf(a) },
    b: { runHash: vb.runHash, status: vb.status, steps: vb.steps.length, events: eb.length, damaged: b.damaged?.length ?? 0, ...redactedOf(b) },
    firstDivergence: firstDivergence(ea, eb, va, vb, lineageOnly(a.entries.get("request.json"), b.entries.get("request.json"))),
    inputs: requestFields(a.entries.get("request.json"), b.entries.get("request.json")),
    packFiles: pathChanges(under(a.entries, "pack/"), under(b.entries, "pack/")),
    modules: moduleChanges(va, vb),
    workspaceBefore: pathChanges(under(a.entries, "workspace/before/"), under(b.entries, "workspace/before/")),
    workspaceAfter: pathChanges(under(a.entries, "workspace/after/"), under(b.entries, "workspace/after/")),
    outputs: outputChanges(va, vb),
    entries,
    proofDiffers,
  };
  const same = (c: PathChanges) => c.added.length + c.removed.length + c.changed.length === 0;
  diff.identical = diff.firstDivergence === null && va.runHash === vb.runHash && diff.inputs.length === 0 && same(diff.packFiles) &&
    same(diff.workspaceBefore) && same(diff.workspaceAfter) && same(entries) && diff.a.damaged + diff.b.damaged === 0;
  return diff;
}
