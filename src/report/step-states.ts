/**
 * The state of the workspace and of the memory store after each step of a run, derived from what the capsule holds
 * (nothing runs): the workspace before (`workspace/before/…`, committed by `run.started.workspaceBefore`), each
 * committed step's recorded writes and removals (`_state-effects.ts`), the workspace after (`workspace/after/…`,
 * committed by the terminal event's `workspaceAfter`), the memory the run started from (`request.json`
 * `session.memory`) and each step's `memory.set` calls, checked against `result.json` `session.memoryAfter`.
 *
 * A state is shown only when it is sure; otherwise the step says why it cannot be reconstructed:
 * - before the first step that changed anything the state is the workspace before (when it matches its digest);
 *   from the last such step on it is the workspace after (when it matches its digest);
 * - in between it is the workspace before with the recorded changes applied, step by step, up to the first step
 *   whose changes the record does not hold (a WASI tool writes through its preopened directories without host calls;
 *   a blob redacted). When every step's changes are known, the last state must give the recorded `workspaceAfter`
 *   digest (and the memory `memoryAfter`): if it does not, those states are not shown ("cannot reconstruct").
 * - a memory read (`memory.get`) a tool made must have seen what the reconstruction holds at that point.
 * @module
 */
import { readJsonl } from "../ledger/mod.ts";
import { arr, get, obj, parseJsonBytes, str, strings } from "./_json.ts";
import { isMutation, stepEffects } from "./_state-effects.ts";
import type { Effect, FsChange, MemoryCall } from "./_state-effects.ts";
import type { StepView } from "./_steps.ts";
import type { TapeRecord } from "../record/mod.ts";
import type { MemoryState, RunStates, StateBasis, WorkspaceState, WorkspaceView } from "./_state-types.ts";
import { changesBetween, memoryDigestOf, workspaceDigest } from "./_state-digests.ts";
import { joinReplayed } from "./_replayed-states.ts";
import type { ReplayedRun } from "./_replayed-states.ts";

export { fileSha256, workspaceDigest } from "./_state-digests.ts";
export type { Known, MemoryState, RunStates, StateBasis, StepState, WorkspaceState } from "./_state-types.ts";

/** What the states are built from: the run's view (`buildRunView`) without its states. */
type StatesView = {
  runHash: string;
  steps: readonly StepView[];
  tape: readonly TapeRecord[];
  blobs: ReadonlyMap<string, Uint8Array>;
  workspace: { before: WorkspaceView | null; after: WorkspaceView };
};

type Snapshot = { files: Map<string, Uint8Array>; links: Map<string, string> };


/**
 * Derive the state after each step of a run.
 * @param view the run (`buildRunView`)
 * @param entries the capsule's entries (events, request and result documents)
 * @param replayed what a replay of the capsule observed (`RunSource.replayed`), to fill in what the record cannot say
 * @returns one state per step, in the view's step order
 * @example const states = buildStepStates(view, capsule.entries); states.steps[0].memory.known
 */
export function buildStepStates(view: StatesView, entries: ReadonlyMap<string, Uint8Array>, replayed?: ReplayedRun): RunStates {
  const digests = recordedDigests(entries);
  const wasiFilesystem = digests.permissions === null || digests.permissions.includes("filesystem");
  const effects = view.steps.map((s) => stepEffects(s, { blobs: view.blobs, wasiFilesystem }));
  const stepIds = new Set(view.steps.map((s) => s.invocationId));
  const stray = view.tape.find((r) => isMutation(r) && !stepIds.has(r.invocationId));
  const strayReason = stray === undefined ? null : `host call ${stray.seq} (${stray.op}) changed the state outside any step`;
  const checks: string[] = [];
  const workspace = workspaceStates(view, effects.map((e) => (strayReason === null ? e.workspace : { known: false, reason: strayReason })), digests, checks);
  const memory = memoryStates(entries, effects.map((e) => (strayReason === null ? e.memory : { known: false, reason: strayReason })), checks);
  const tape: RunStates = {
    steps: view.steps.map((s, i) => ({ position: s.position, stepId: s.stepId, committed: s.type === "tool" && s.status === "completed", workspace: workspace[i]!, memory: memory[i]! })),
    checks,
    replay: null,
  };
  if (replayed === undefined) return tape;
  const before = view.workspace.before;
  return joinReplayed(view.steps, view.runHash, tape, replayed, {
    before: before !== null && digests.before !== null && workspaceDigest(before) === digests.before ? before : null,
    memoryStart: startMemory(entries),
    after: digests.after,
    memoryAfter: recordedMemoryAfter(entries),
  });
}

function recordedMemoryAfter(entries: ReadonlyMap<string, Uint8Array>): string | null {
  return str(obj(get(obj(parseJsonBytes(entries.get("result.json"))), "session")), "memoryAfter");
}

type Digests = { before: string | null; after: string | null; permissions: string[] | null };

function recordedDigests(entries: ReadonlyMap<string, Uint8Array>): Digests {
  const bytes = entries.get("events.jsonl");
  const events = bytes === undefined ? [] : readJsonl(bytes).events.map(obj);
  const first = obj(get(events[0] ?? null, "payload"));
  const last = events[events.length - 1] ?? null;
  const terminal = ["run.completed", "run.failed", "run.aborted"].includes(str(last, "type") ?? "") ? obj(get(last, "payload")) : null;
  const capabilities = obj(get(first, "capabilities"));
  return {
    before: str(first, "workspaceBefore"),
    after: str(terminal, "workspaceAfter"),
    permissions: capabilities === null ? null : strings(capabilities, "permissions"),
  };
}

function copy(w: WorkspaceView): Snapshot {
  return { files: new Map(w.files), links: new Map(w.links) };
}

function under(path: string, dir: string): boolean {
  return dir === "" || path === dir || path.startsWith(`${dir}/`);
}

/** Apply a step's changes; null when one goes through (or replaces) a symbolic link, which this does not model. */
function apply(state: Snapshot, changes: readonly FsChange[]): Snapshot | null {
  if (changes.length === 0) return state;
  const next = copy(state);
  for (const c of changes) {
    for (const link of next.links.keys()) if (under(c.path, link) || (c.op === "remove" && under(link, c.path))) return null;
    if (c.op === "write") {
      for (const p of next.files.keys()) if (under(c.path, p) && p !== c.path) return null; // a file where a directory must be
      next.files.set(c.path, c.bytes);
    } else for (const p of [...next.files.keys()]) if (under(p, c.path)) next.files.delete(p);
  }
  return next;
}

function shown(s: Snapshot, basis: StateBasis, checked: boolean, digest: string): WorkspaceState {
  return { known: true, basis, checked, digest, files: s.files, links: s.links, changes: null };
}

function workspaceStates(view: StatesView, effects: readonly Effect<FsChange>[], d: Digests, checks: string[]): WorkspaceState[] {
  const n = effects.length;
  const touches = effects.map((e) => !e.known || e.changes.length > 0);
  const first = touches.indexOf(true);
  const last = touches.lastIndexOf(true);
  const before = view.workspace.before;
  const beforeOk = before !== null && d.before !== null && workspaceDigest(before) === d.before;
  const afterOk = d.after !== null && workspaceDigest(view.workspace.after) === d.after;
  checks.push(before === null ? "the workspace before is not in the source" : beforeOk ? "the workspace before matches run.started.workspaceBefore" : "the workspace before does NOT match run.started.workspaceBefore");
  checks.push(d.after === null ? "the run records no workspaceAfter" : afterOk ? "the workspace after matches the recorded workspaceAfter" : "the workspace after does NOT match the recorded workspaceAfter");
  // forward: the workspace before with each step's recorded changes, up to the first step whose changes are unknown
  const forward: (Snapshot | null)[] = [];
  let state: Snapshot | null = beforeOk ? copy(before) : null;
  let why = beforeOk ? "" : "the workspace before is not known (missing, or not matching its recorded digest)";
  for (const [i, e] of effects.entries()) {
    if (state !== null && !e.known) [state, why] = [null, `${e.reason} (step ${i + 1} ${JSON.stringify(view.steps[i]?.stepId ?? "")}; the steps after it start from that unknown state)`];
    else if (state !== null && e.known) {
      state = apply(state, e.changes);
      if (state === null) why = `a recorded write or removal of step ${i + 1} goes through a symbolic link, which the reconstruction does not follow`;
    }
    forward.push(state);
  }
  const end = forward[n - 1] ?? null;
  const complete = n > 0 && end !== null;
  const agrees = complete && afterOk && workspaceDigest(end) === d.after;
  if (complete) checks.push(agrees ? "the recorded changes of every step give the recorded workspaceAfter" : "the recorded changes do NOT give the recorded workspaceAfter: the states between are not shown");
  const out: WorkspaceState[] = [];
  const atStart = beforeOk ? copy(before) : null;
  const atEnd = copy(view.workspace.after);
  for (let k = 0; k < n; k++) {
    const f = forward[k]!;
    if (afterOk && (last < 0 || k >= last)) out.push(shown(atEnd, "after", true, d.after!));
    else if (beforeOk && (first < 0 || k < first)) out.push(shown(atStart!, "before", true, d.before!));
    else if (f !== null && (!complete || agrees)) out.push(shown(f, "tape", agrees, workspaceDigest(f)));
    else out.push({ known: false, reason: f === null ? why : "cannot reconstruct: the recorded changes do not give the recorded final workspace" });
  }
  let prev: WorkspaceState | null = atStart === null ? null : shown(atStart, "before", true, d.before!);
  for (const s of out) {
    if (s.known && prev !== null && prev.known) s.changes = changesBetween(prev, s);
    prev = s;
  }
  return out;
}

/** The memory the run started from: a session run's `request.json` `session.memory` pairs, else empty. */
function startMemory(entries: ReadonlyMap<string, Uint8Array>): Map<string, string> | null {
  const session = obj(get(obj(parseJsonBytes(entries.get("request.json"))), "session"));
  const memory = new Map<string, string>();
  if (session === null) return memory;
  for (const pair of arr(session, "memory")) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string") return null;
    memory.set(pair[0], pair[1]);
  }
  return memory;
}


function memoryStates(entries: ReadonlyMap<string, Uint8Array>, effects: readonly Effect<MemoryCall>[], checks: string[]): MemoryState[] {
  let state = startMemory(entries);
  let why = state === null ? "the session memory in request.json is malformed" : "";
  const states: { entries: Map<string, string>; changed: string[] }[] = [];
  for (const [i, e] of effects.entries()) {
    if (state === null) break;
    if (!e.known) [state, why] = [null, `${e.reason} (step ${i + 1}; the steps after it start from that unknown state)`];
    else {
      const next = new Map(state);
      const changed: string[] = [];
      for (const c of e.changes) {
        if (c.op === "set") {
          if (next.get(c.key) !== c.text) changed.push(c.key);
          next.set(c.key, c.text);
        } else if ((next.get(c.key) ?? null) !== c.text) {
          [state, why] = [null, `cannot reconstruct: step ${i + 1} read memory key ${JSON.stringify(c.key)} and saw what the reconstruction does not hold`];
          break;
        }
      }
      if (state !== null) state = next;
      if (state !== null) states.push({ entries: state, changed: [...new Set(changed)] });
    }
  }
  const recorded = recordedMemoryAfter(entries);
  const complete = state !== null && states.length === effects.length;
  const agrees = complete && recorded !== null && memoryDigestOf(state!) === recorded;
  if (complete && recorded !== null) checks.push(agrees ? "the memory after the last step matches result.json session.memoryAfter" : "the memory after the last step does NOT match result.json session.memoryAfter: no memory state is shown");
  if (complete && recorded !== null && !agrees) why = "cannot reconstruct: the recorded memory writes do not give the recorded memoryAfter";
  return effects.map((_, k) => {
    const s = states[k];
    if (s === undefined || (recorded !== null && complete && !agrees)) return { known: false, reason: why };
    return { known: true, basis: "tape", checked: agrees, entries: s.entries, changed: s.changed };
  });
}
