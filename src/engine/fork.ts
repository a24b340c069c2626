/**
 * Fork and resume (conformance/HASHING.md "Forks and resumed runs"; `branch.ts`): a new run made from a recorded
 * one. The steps before the branch point are the parent's — played against the parent's tape and checked event by
 * event against the parent's record, like a replay, so they cost what a replay costs — and the rest runs live. The
 * new run keeps the parent's run id; its `request.json` names the parent (`forkedFrom` / `resumedFrom`), so its run
 * hash commits to where it came from. Its capsule verifies and replays like any other.
 *
 * - {@link forkCapsule}: at a step, with changes there (its arguments, the run input from there on, other builds of
 *   tools, answers to its host calls, the seed from there on).
 * - {@link resumeCapsule}: an ABORTED run, or one that FAILED because the watchdog stopped a step, continued from
 *   its last completed step.
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { BLOB_PREFIX, entriesUnder, TAPE_ENTRY } from "../capsule/mod.ts";
import { parseSeed } from "../determinism/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import { acceptJsonValue } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { TapePlayer } from "../record/mod.ts";
import { readTapeJsonl } from "../record/mod.ts";
import type { TapeOutcome } from "../record/mod.ts";
import type { SecretValues } from "../sandbox/mod.ts";
import { answerOf, branchOfCapsule, stepsBefore } from "./branch-capsule.ts";
import type { Branch, BranchChanges, ForkedFrom } from "./branch.ts";
import { buildRunCapsule, capsuleFileName } from "./capsule.ts";
import { runPack } from "./coordinator.ts";
import type { LoadPackOptions, PackTool } from "./pack.ts";
import { toolBuild } from "./pack.ts";
import { recordedRequest, replayDirectives, replaySession } from "./replay.ts";
import type { RecordedRun } from "./replay.ts";
import { runFiles, runResult } from "./run-files.ts";
import { useHashing } from "./runners.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { RunProgress, RunRecord, RunStatus } from "./types.ts";
import { verifyRunCapsule } from "./verify.ts";

/** What a fork changes at its step (at least one). */
export type ForkChanges = {
  /** The step's arguments (a JSON object), in place of those the plan gives it. */
  arguments?: JsonObject;
  /** The run input from the step on (what `$input` references and replans see). */
  input?: JsonValue;
  /** The seed of the random streams from the step on (decimal 0..2^64-1). */
  seed?: string;
  /** Other builds of tools, by tool name (the module's bytes), from the step on. */
  tools?: ReadonlyMap<string, Uint8Array>;
  /** The step's K-th host call (1-based) answered with this response (a JSON object's bytes) instead of running. */
  responses?: ReadonlyMap<number, Uint8Array>;
};

/** Options of a fork or a resume. */
export type BranchOptions = {
  /** The fetch for the live steps' `http.fetch` (default none). */
  fetch?: FetchLike;
  /** Aborts the live steps (the new run then ends ABORTED, and can be resumed). */
  signal?: AbortSignal;
  /** Sign the new run with this Ed25519 seed. */
  key?: Uint8Array;
  /**
   * Values of the secrets the pack declares, for the live steps (as a run's `secrets`: in memory only, never
   * recorded; the steps taken from the parent need none).
   */
  secrets?: SecretValues;
  onProgress?: (p: RunProgress) => void;
  parallel?: number;
} & LoadPackOptions;

/** A forked or resumed run, with its capsule and run files. */
export type BranchedRun = {
  runId: string;
  runHash: string;
  status: RunStatus;
  error: ReachError | null;
  capsule: { name: string; bytes: Uint8Array; signed: boolean };
  files: Map<string, Uint8Array>;
  result: Record<string, unknown>;
  /** The parent's run hash. */
  parentRunHash: string;
  /** Where the new run left its parent's record: the step (null when a resume continues after the last step). */
  at: string | null;
  /** The steps taken from the parent. */
  before: string[];
};

type Ev = RecordedRun["recorded"][number];

function usage(message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", message, { details });
}

/** Read a parent capsule: it must verify before anything is taken from it. */
async function parentOf(capsule: RunCapsule, env: EngineEnvironment, options: BranchOptions): Promise<RecordedRun> {
  useHashing(env);
  const bad = verifyRunCapsule(capsule).checks.find((c) => !c.ok);
  if (bad !== undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", `the parent capsule does not verify (${bad.name}: ${bad.message}); nothing can be taken from it`, { details: { check: bad.name } });
  const { fetch: _f, signal: _s, key: _k, ...read } = options;
  return await recordedRequest(capsule, env, read);
}

/** The tool step a fork's `--at` names: a step id, or N for the N-th tool step (1-based; call N of a session). */
function forkStep(recorded: readonly Ev[], at: string): { step: string; index: number } {
  const tools = recorded.flatMap((e, index) => (e.type === "run.step.started" && e.payload["stepType"] === "tool" ? [{ step: String(e.payload["stepId"]), index }] : []));
  const found = tools.find((t) => t.step === at) ?? (/^[1-9]\d{0,5}$/.test(at) ? tools[Number(at) - 1] : undefined);
  if (found === undefined) {
    const ids = tools.map((t) => t.step);
    throw usage(`the parent run has no tool step ${JSON.stringify(at.slice(0, 64))}; give a step id (${ids.slice(0, 20).join(", ")}${ids.length > 20 ? ", …" : ""}) or its number 1..${ids.length}`, { at: at.slice(0, 64) });
  }
  return found;
}

/** A fork's changes as its run takes them, as `request.json` records them, and their files. */
async function forkChanges(parent: RecordedRun, changes: ForkChanges, options: LoadPackOptions): Promise<{ changes: BranchChanges; record: ForkedFrom["changes"]; files: Map<string, Uint8Array> }> {
  const c: { -readonly [K in keyof BranchChanges]: BranchChanges[K] } = {};
  const record: ForkedFrom["changes"] = {};
  const files = new Map<string, Uint8Array>();
  if (changes.arguments !== undefined) {
    const v = acceptJsonValue(changes.arguments, { what: "the fork's arguments", code: "PROTO_INVALID_ARGUMENT" }).value;
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw usage("the fork's arguments must be a JSON object");
    c.arguments = record.arguments = v;
  }
  if (changes.input !== undefined) c.input = record.input = acceptJsonValue(changes.input, { what: "the fork's input", code: "PROTO_INVALID_ARGUMENT" }).value;
  if (changes.seed !== undefined) {
    try {
      c.seed = record.seed = parseSeed(changes.seed);
    } catch (err) {
      throw usage(`the fork's seed: ${(err as Error).message}`);
    }
  }
  if (changes.tools !== undefined && changes.tools.size > 0) {
    const tools = new Map<string, PackTool>();
    record.tools = [];
    for (const [name, bytes] of [...changes.tools].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      tools.set(name, await toolBuild(parent.loaded, name, bytes, options));
      const sha = sha256Hex(bytes);
      files.set(sha, bytes);
      record.tools.push({ name, sha256: sha, size: bytes.length });
    }
    c.tools = tools;
  }
  if (changes.responses !== undefined && changes.responses.size > 0) {
    const answers = new Map<number, TapeOutcome>();
    record.responses = [];
    for (const [call, bytes] of [...changes.responses].sort((a, b) => a[0] - b[0])) {
      if (!Number.isSafeInteger(call) || call < 1) throw usage(`a response's host call number must be 1 or more, got ${String(call)}`);
      answers.set(call, answerOf(bytes, `the response for host call ${call}`));
      const sha = sha256Hex(bytes);
      files.set(sha, bytes);
      record.responses.push({ call, sha256: sha, size: bytes.length });
    }
    c.answers = answers;
  }
  if (Object.keys(record).length === 0) throw usage("a fork needs at least one change at its step: its arguments, the input, a tool build, a host call's response or the seed");
  return { changes: c, record, files };
}

/**
 * Where the new run's record must equal the parent's: events 0..k-1 (`run.started` but for its request hash, which
 * names the lineage), and every record of the parent's tape that those steps made, played.
 */
function checkPrefix(parent: readonly Ev[], child: readonly Ev[], k: number, player: TapePlayer, at: string | null): void {
  const label = at === null ? "the parent's completed steps" : `the parent's steps before "${at}"`;
  for (let i = 0; i < k; i++) {
    const a = parent[i]!;
    const b = child[i];
    const strip = (e: Ev) => (i === 0 ? { ...e.payload, requestHash: null } : e.payload);
    const same = b !== undefined && a.type === b.type && a.timestamp === b.timestamp && canonicalize(strip(a)) === canonicalize(strip(b));
    if (!same) {
      throw new ReachError("REPLAY_DIVERGENCE", `${label} did not reproduce: event ${i} (${a.type}) differs${b === undefined ? " (the new run has fewer events)" : ""}; the pack or its tools no longer behave as the parent recorded`, { details: { eventIndex: i } });
    }
  }
  for (const e of parent.slice(0, k)) {
    if (e.type !== "tool.invoked") continue;
    const left = player.forInvocation(String(e.payload["invocationId"])).remaining;
    if (left > 0) throw new ReachError("REPLAY_DIVERGENCE", `${label} did not reproduce: step "${String(e.payload["stepId"])}" made ${left} host call(s) fewer than the parent recorded`, { details: { stepId: String(e.payload["stepId"]) } });
  }
}

/** Where a branch leaves its parent: the step (null: after the last), its event, and the steps before it. */
type Point = { at: string | null; index: number; before: Set<string> };

async function branchRun(capsule: RunCapsule, env: EngineEnvironment, parent: RecordedRun, branch: Omit<Branch, "prefix">, point: Point, options: BranchOptions): Promise<BranchedRun> {
  const player = new TapePlayer(readTapeJsonl(capsule.entries.get(TAPE_ENTRY) ?? new Uint8Array(), undefined, capsule.entries), entriesUnder(capsule.entries, BLOB_PREFIX));
  const stops = replayDirectives(parent.recorded).stops;
  const request = {
    ...parent.base,
    branch: { ...branch, prefix: { before: point.before, player, stops } },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.secrets === undefined ? {} : { secrets: options.secrets }),
  };
  const record: RunRecord = parent.request.mode === "session" ? await replaySession(request, capsule) : await runPack(request);
  try {
    checkPrefix(parent.recorded, record.events as unknown as Ev[], point.index, player, point.at);
  } catch (err) {
    // Stopped before it reached its branch point, the new run has nothing of its own to keep.
    if (options.signal?.aborted === true) throw new ReachError("EXEC_ABORTED", "the new run was aborted before it reached its branch point; nothing was written", { details: { signal: String(options.signal.reason ?? "abort") } });
    throw err;
  }
  const built = buildRunCapsule(record, parent.loaded, undefined, options.key);
  return {
    runId: record.runId,
    runHash: record.runHash,
    status: record.status,
    error: record.error,
    capsule: { name: capsuleFileName(record.runHash), bytes: built.bytes, signed: options.key !== undefined },
    files: runFiles(record),
    result: runResult(record),
    parentRunHash: capsule.index.runHash,
    at: point.at,
    before: [...point.before],
  };
}

/** The parent's own lineage (a fork's changes keep acting in a fork or a resume of it). */
async function inheritedOf(capsule: RunCapsule, parent: RecordedRun, options: LoadPackOptions): Promise<Omit<Branch, "prefix">> {
  const b = await branchOfCapsule(capsule, parent.request, parent.recorded, parent.loaded, options);
  return b === null ? { lineage: {}, files: new Map(), layers: [] } : b;
}

/**
 * Fork a recorded run at a step: the steps before it are the parent's (played against its tape and checked), the
 * step and those after run live with the changes.
 * @param capsule the parent (from `readRunCapsule`)
 * @param env the platform's engines
 * @param at the step: its id, or N for the N-th tool step (call N of an MCP session run)
 * @param changes what changes at the step (at least one)
 * @param options the live steps' fetch and signal, a signing key, progress, parallelism
 * @returns the new run and its capsule
 * @throws ReachError `PROTO_INVALID_ARGUMENT` (no such step, no change, a malformed change), `PACK_MALFORMED` (a tool
 *   build of the wrong kind), `REPLAY_CAPSULE_INVALID` (the parent does not verify), `REPLAY_DIVERGENCE` (the parent's
 *   steps before `at` no longer reproduce)
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * import { defaultEnvironment } from "../host/node.ts";
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const child = await forkCapsule(readRunCapsule(bytes), defaultEnvironment(), "save", { arguments: { title: "Other" } });
 * console.log(child.status, child.runHash);
 * ```
 */
export async function forkCapsule(capsule: RunCapsule, env: EngineEnvironment, at: string, changes: ForkChanges, options: BranchOptions = {}): Promise<BranchedRun> {
  const parent = await parentOf(capsule, env, options);
  const { step, index } = forkStep(parent.recorded, at);
  const { fetch: _f, signal: _s, key: _k, onProgress: _p, parallel: _n, ...load } = options;
  const made = await forkChanges(parent, changes, load);
  const inherited = await inheritedOf(capsule, parent, load);
  const before = stepsBefore(parent.recorded, step);
  // The parent's own forks act as they did in it: only from a step at or after theirs is that the parent's run.
  const later = inherited.layers.find((l) => l.at !== step && !before.has(l.at));
  if (later !== undefined) throw usage(`the parent is a fork made at step "${later.at}", after "${step}"; fork the run it was forked from (its request.json forkedFrom.runHash) at "${step}" instead`, { at: step });
  const fork = inherited.lineage.forkedFrom;
  const forkedFrom: ForkedFrom = { runHash: capsule.index.runHash, step, changes: made.record, ...(fork === undefined ? {} : { forkedFrom: fork }) };
  const branch = { lineage: { forkedFrom }, files: new Map([...inherited.files, ...made.files]), layers: [...inherited.layers, { at: step, before, changes: made.changes }] };
  return await branchRun(capsule, env, parent, branch, { at: step, index, before }, options);
}

/** Where a stopped run can go on: the step the watchdog or the abort stopped (null: between steps), and its event. */
function resumePoint(recorded: readonly Ev[]): { status: "ABORTED" | "FAILED"; step: string | null; index: number } {
  const last = recorded[recorded.length - 1];
  const p = last?.payload ?? {};
  const stops = Array.isArray(p["stops"]) ? (p["stops"] as Record<string, unknown>[]) : [];
  const stepOf = (invocationId: unknown) => recorded.find((e) => e.type === "tool.invoked" && e.payload["invocationId"] === invocationId)?.payload["stepId"];
  const startOf = (step: string) => recorded.findIndex((e) => e.type === "run.step.started" && e.payload["stepId"] === step);
  if (last?.type === "run.aborted") {
    const stopped = stepOf(stops.find((s) => s["reason"] === "abort")?.["invocationId"]);
    return typeof stopped === "string" ? { status: "ABORTED", step: stopped, index: startOf(stopped) } : { status: "ABORTED", step: null, index: recorded.length - 1 };
  }
  if (last?.type === "run.failed") {
    const timedOut = stepOf(stops.find((s) => s["reason"] === "watchdog")?.["invocationId"]);
    if (typeof timedOut === "string" && timedOut === p["failedStep"]) return { status: "FAILED", step: timedOut, index: startOf(timedOut) };
  }
  const status = last?.type === "run.completed" ? "COMPLETED" : "FAILED";
  const why = status === "COMPLETED" ? "it COMPLETED, so there is nothing to continue (fork it to change a step: reach-wasm fork)" : `it FAILED with ${String((p["error"] as Record<string, unknown> | undefined)?.["code"] ?? "an error")}, which running on would repeat; only an ABORTED run, or one the watchdog stopped, can be resumed (fork it to change the failing step)`;
  throw new ReachError("PROTO_SEQUENCE_ERROR", `the run cannot be resumed: ${why}`, { details: { status, resumable: false } });
}

/**
 * Resume an ABORTED run, or one whose step the watchdog stopped: its completed steps are the parent's (played
 * against its tape and checked), the stopped step and the rest run live.
 * @param capsule the parent (from `readRunCapsule`)
 * @param env the platform's engines
 * @param options the live steps' fetch and signal, a signing key, progress, parallelism
 * @returns the new run and its capsule
 * @throws ReachError `PROTO_SEQUENCE_ERROR` (the parent COMPLETED, or failed for another reason),
 *   `REPLAY_CAPSULE_INVALID` (the parent does not verify), `REPLAY_DIVERGENCE` (its completed steps no longer reproduce)
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * import { defaultEnvironment } from "../host/node.ts";
 * declare const bytes: Uint8Array; // an ABORTED run's capsule
 * const resumed = await resumeCapsule(readRunCapsule(bytes), defaultEnvironment());
 * console.log(resumed.status, resumed.before);
 * ```
 */
export async function resumeCapsule(capsule: RunCapsule, env: EngineEnvironment, options: BranchOptions = {}): Promise<BranchedRun> {
  const parent = await parentOf(capsule, env, options);
  const point = resumePoint(parent.recorded);
  const before = stepsBefore(parent.recorded, point.step);
  const { fetch: _f, signal: _s, key: _k, onProgress: _p, parallel: _n, ...load } = options;
  const inherited = await inheritedOf(capsule, parent, load);
  const resumedFrom = { runHash: capsule.index.runHash, status: point.status, completedSteps: [...before] };
  const lineage = { ...(inherited.lineage.forkedFrom === undefined ? {} : { forkedFrom: inherited.lineage.forkedFrom }), resumedFrom };
  return await branchRun(capsule, env, parent, { lineage, files: inherited.files, layers: inherited.layers }, { at: point.step, index: point.index, before }, options);
}
