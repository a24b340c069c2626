/**
 * Replay (seed 003 §3.4; `reach-wasm replay`): re-execute a capsule's own pack against its tape, with no
 * network and no host file, and compare every event with the recorded one. The first difference is a
 * `REPLAY_DIVERGENCE` naming the step, the event index and the first differing field. `noExec` checks the capsule
 * without running tools (`verifyRunCapsule`).
 * @module
 */
import { FEDERATION_ENTRY } from "../capsule/mod.ts";
import type { AnnexEvent } from "./annex.ts";
import { HEADER_ENTRY, PLAN_ENTRY, RUN_DOC_ENTRY } from "../capsule/mod.ts";
import { BLOB_PREFIX, capsuleIndexDigest, entriesUnder, EVENTS_ENTRY, PACK_PREFIX, PROOF_ENTRY, REQUEST_ENTRY, RESULT_ENTRY, TAPE_ENTRY } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { verifyRunCapsule } from "./verify.ts";
import type { VerifyCheck } from "./verify.ts";
import { readJsonl } from "../ledger/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { TapePlayer } from "../record/mod.ts";
import { readTapeJsonl } from "../record/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import { buildRunCapsule, recordedSandboxApi, recordedCommitments } from "./capsule.ts";
import type { CapsuleRequest } from "./capsule.ts";
import { runPack } from "./coordinator.ts";
import { loadPack } from "./pack.ts";
import type { LoadedPack, LoadPackOptions } from "./pack.ts";
import { branchOfCapsule } from "./branch-capsule.ts";
import { packLoading, realNow, useHashing } from "./runners.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { ObservedStep, RunProgress, RunRecord, RunRequest, RunStatus } from "./types.ts";
import { Session } from "./session.ts";
import { chainOfCapsule } from "./session-chain.ts";
import type { AbortPoint, ReplayDirectives } from "./run.ts";
import type { StopPoint } from "../sandbox/mod.ts";
import { redactedDigest, redactedStop, replayBlockers } from "./replay-redacted.ts";
import { eventsDivergence, workspaceDivergence } from "./replay-divergence.ts";
import type { Divergence, Ev } from "./replay-divergence.ts";
import type { ReplayRedacted } from "./replay-redacted.ts";

/** The outcome of a replay. */
export type ReplayReport = {
  runHash: string;
  expectedRunHash: string;
  matches: boolean;
  /** The replayed run's status (null with noExec). */
  status: RunStatus | null;
  divergence: Divergence | null;
  /** With noExec: the verification checks. */
  checks?: VerifyCheck[];
  /**
   * The capsule rebuilt from the replayed run: its bytes (unsigned) and whether its index digest equals the
   * recorded capsule's (every entry byte-identical, the proof aside). Null with noExec or when not rebuilt.
   */
  rebuilt: { bytes: Uint8Array; indexMatches: boolean } | null;
  /** A redacted capsule that lacks what replay needs (`matches` false, `divergence` null: no verdict on the run). */
  redacted?: ReplayRedacted;
  durationMs: number;
};

export type { Divergence } from "./replay-divergence.ts";

/**
 * The stops a recorded run made outside its deterministic budgets — invocations a signal or the watchdog stopped
 * (the terminal event's `stops`), where an abort was noticed outside any invocation (`run.aborted`'s `abortedAt`)
 * and the signal's name — so that the replay stops at the same points.
 * @param events the recorded events
 * @returns the directives
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when they are malformed
 * @example const directives = replayDirectives(recordedEvents);
 */
export function replayDirectives(events: readonly Pick<Ev, "type" | "payload">[]): ReplayDirectives {
  const last = events[events.length - 1];
  const p = last?.payload ?? {};
  const stops = new Map<string, StopPoint>();
  const list = p["stops"] ?? [];
  if (!Array.isArray(list)) throw invalid("the terminal event's stops is not a list");
  for (const s of list as Record<string, unknown>[]) {
    const fuel = s?.["fuel"];
    const fuelText = typeof fuel === "number" ? String(fuel) : fuel;
    if (typeof s?.["invocationId"] !== "string" || (s["reason"] !== "abort" && s["reason"] !== "watchdog") || typeof fuelText !== "string" || !/^\d{1,20}$/.test(fuelText)) {
      throw invalid("a recorded stop point is malformed");
    }
    stops.set(s["invocationId"], { reason: s["reason"], fuel: BigInt(fuelText) });
  }
  let abortedAt: AbortPoint | null = null;
  let signal: string | null = null;
  if (last?.type === "run.aborted") {
    signal = typeof p["signal"] === "string" ? p["signal"] : null;
    const at = p["abortedAt"] as Record<string, unknown> | undefined;
    if (at !== undefined) {
      if (at?.["phase"] === "planning" && Number.isSafeInteger(at["attempt"])) abortedAt = { phase: "planning", attempt: at["attempt"] as number };
      else if (at?.["phase"] === "executing" && Number.isSafeInteger(at["stepIndex"])) abortedAt = { phase: "executing", stepIndex: at["stepIndex"] as number };
      else throw invalid("run.aborted's abortedAt is malformed");
    }
  }
  return { stops, abortedAt, signal };
}

/**
 * A session run again: its recorded calls (`plan.json`, committed by the run hash) as the same session calls.
 * @param request the run request (with the tape, in a replay)
 * @param capsule the capsule
 * @returns the record
 */
export async function replaySession(request: RunRequest, capsule: RunCapsule): Promise<RunRecord> {
  const raw = capsule.entries.get(PLAN_ENTRY);
  let steps: { tool: string; arguments: JsonValue }[];
  try {
    steps = (JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw ?? new Uint8Array())) as { steps: { tool: string; arguments: JsonValue }[] }).steps;
    if (!Array.isArray(steps)) throw new Error("no steps");
  } catch {
    throw invalid(`a session capsule needs its calls in ${PLAN_ENTRY}`);
  }
  let session: Session;
  try {
    session = Session.open(request);
  } catch (err) {
    // the carried workspace of a session chain's later run names a path the pack does not declare
    if (err instanceof ReachError && err.code === "PROTO_INVALID_ARGUMENT") throw invalid(`the session run cannot start from its workspace/before: ${err.message}`);
    throw err;
  }
  for (const step of steps) {
    if (session.ended !== null) break;
    await session.call(String(step.tool), step.arguments);
  }
  return await session.close();
}

/** Whether the recorded `result.json` holds the capability audit (capsules made before it existed do not). */
function recordedHasAudit(capsule: RunCapsule): boolean {
  try {
    const result = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(capsule.entries.get(RESULT_ENTRY) ?? new Uint8Array())) as unknown;
    return result !== null && typeof result === "object" && Object.hasOwn(result, "capabilityAudit");
  } catch {
    return true; // a damaged result.json diverges on its own
  }
}

/** Whether the recorded header carries seed 001's execution fields (`state`, `plan_sha256`: `task-files.ts`). */
function recordedHasExecutionFields(capsule: RunCapsule): boolean {
  try {
    const header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(capsule.entries.get(HEADER_ENTRY) ?? new Uint8Array())) as unknown;
    return header !== null && typeof header === "object" && Object.hasOwn(header, "state");
  } catch {
    return true; // a damaged header diverges on its own
  }
}

function invalid(message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("REPLAY_CAPSULE_INVALID", message, { details });
}

/** The request a capsule recorded (request.json). */
type RecordedRequest = CapsuleRequest & { input: JsonValue };

/** The recorded events and request of a capsule. @throws ReachError `REPLAY_CAPSULE_INVALID` when unreadable */
function replayInputs(capsule: RunCapsule): { recorded: Ev[]; request: RecordedRequest } {
  const rawEvents = capsule.entries.get(EVENTS_ENTRY);
  const rawRequest = capsule.entries.get(REQUEST_ENTRY);
  if (rawEvents === undefined || rawRequest === undefined) throw invalid(`the capsule lacks ${rawEvents === undefined ? EVENTS_ENTRY : REQUEST_ENTRY}; it cannot be replayed`);
  const read = readJsonl(rawEvents);
  if (read.error !== undefined) throw invalid(`${EVENTS_ENTRY} line ${read.error.index}: ${read.error.reason}`, { eventIndex: read.error.index });
  let request: RecordedRequest;
  try {
    request = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(rawRequest));
    if (typeof request.seed !== "string" || typeof request.approve !== "boolean" || typeof request.restricted !== "boolean") throw new Error("bad fields");
  } catch {
    throw invalid(`${REQUEST_ENTRY} is not a replay request document`);
  }
  return { recorded: read.events as Ev[], request };
}

/** The run request fields the recorded request gives (input, seed, approvals, limits, the session's chain). */
function runRequestOf(
  capsule: RunCapsule,
  request: RecordedRequest,
): Omit<RunRequest, "loaded" | "player" | "replay" | "env"> {
  return {
    input: request.input,
    seed: request.seed,
    approve: request.approve,
    ...(typeof request.requestId === "string" ? { requestId: request.requestId } : {}),
    ...(Array.isArray(request.approvals) ? { approvals: request.approvals } : {}),
    restricted: request.restricted,
    ...(request.maxSteps === null ? {} : { maxSteps: request.maxSteps }),
    ...(request.stepTimeoutMs === null ? {} : { stepTimeoutMs: request.stepTimeoutMs }),
    ...(request.session === undefined ? {} : { session: chainOfCapsule(capsule, request.session) }),
    sandboxApi: recordedSandboxApi(request),
    commitments: recordedCommitments(request),
  };
}

/** A capsule's recorded run, as a replay or a branch (`fork.ts`) reads it. */
export type RecordedRun = {
  /** The recorded events. */
  recorded: Ev[];
  /** `request.json`. */
  request: RecordedRequest;
  /** The capsule's pack, loaded. */
  loaded: LoadedPack;
  /** The run request that asks for the same run again (without tape or replay directives). */
  base: RunRequest;
};

/**
 * Read what a capsule's run was asked (`request.json`, its pack, its events), to ask for it again.
 * @param capsule the capsule
 * @param env the platform's engines
 * @param options progress, parallelism and component preparation
 * @returns the recorded run
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the capsule lacks what asking again needs
 */
export async function recordedRequest(capsule: RunCapsule, env: EngineEnvironment, options: { onProgress?: (p: RunProgress) => void; parallel?: number } & LoadPackOptions = {}): Promise<RecordedRun> {
  const { recorded, request } = replayInputs(capsule);
  const { prepareComponent: _fromEnv, ...stores } = packLoading(env); // a replay checks components with `options`
  const { onProgress, parallel, ...loadOptions } = options;
  const loaded = await loadPack(entriesUnder(capsule.entries, PACK_PREFIX), { ...stores, ...loadOptions });
  const base: RunRequest = {
    loaded,
    ...runRequestOf(capsule, request),
    env,
    ...(parallel === undefined ? {} : { parallel }),
    ...(onProgress === undefined ? {} : { onProgress }),
  };
  return { recorded, request, loaded, base };
}

/** How a capsule is replayed (`replayCapsule`). */
export type ReplayOptions = {
  /** Check the capsule without executing (`verifyRunCapsule`). */
  noExec?: boolean;
  now?: () => number;
  /** The replayed run's progress. */
  onProgress?: (p: RunProgress) => void;
  /** Independent steps at once (the result is the same). */
  parallel?: number;
  /**
   * Called after each replayed step is written, with the workspace and memory store then (`RunRequest.observeStep`).
   * What it is told is the recorded run's state only when the replay as a whole matches (`ReplayReport.matches`).
   */
  onStep?: (step: ObservedStep) => void;
} & LoadPackOptions;

/**
 * Replay a capsule.
 * @param capsule the capsule (from `readRunCapsule`)
 * @param env the platform's engines
 * @param options `noExec`: check without executing; `prepareComponent` for component tools (default: jco, cached);
 *   `onProgress`: the replayed run's progress; `parallel`: independent steps at once (the result is the same);
 *   `onStep`: the state after each replayed step
 * @returns the report (`matches` false on any divergence)
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the capsule lacks what a replay needs
 * @example
 * ```ts
 * import { readRunCapsule } from "../capsule/run-capsule.ts";
 * import { defaultEnvironment } from "../host/node.ts";
 * declare const bytes: Uint8Array; // a capsule's .tar.gz bytes
 * const report = await replayCapsule(readRunCapsule(bytes), defaultEnvironment());
 * console.log(report.matches ? `same run hash ${report.runHash}` : report.divergence?.message);
 * ```
 */
export async function replayCapsule(capsule: RunCapsule, env: EngineEnvironment, options: ReplayOptions = {}): Promise<ReplayReport> {
  useHashing(env);
  const now = options.now ?? realNow(env);
  const started = now();
  const expected = capsule.index.runHash;
  if (options.noExec === true) {
    const v = verifyRunCapsule(capsule);
    const bad = v.checks.find((c) => !c.ok);
    const divergence = bad === undefined ? null : { eventIndex: Number(bad.location?.["eventIndex"] ?? -1), stepId: null, field: String(bad.location?.["field"] ?? bad.location?.["entry"] ?? bad.name), message: `${bad.name}: ${bad.message}` };
    return { runHash: expected, expectedRunHash: expected, matches: v.valid, status: null, divergence, checks: v.checks, rebuilt: null, durationMs: now() - started };
  }
  // Validate before executing (seed 003 §3.4): damage found here is reported where it is, without running tools.
  const pre = verifyRunCapsule(capsule);
  const bad = pre.checks.find((c) => !c.ok);
  if (bad !== undefined) {
    const eventIndex = typeof bad.location?.["eventIndex"] === "number" ? (bad.location["eventIndex"] as number) : -1;
    const field = String(bad.location?.["field"] ?? bad.location?.["entry"] ?? bad.name);
    return { runHash: "", expectedRunHash: expected, matches: false, status: null, divergence: { eventIndex, stepId: null, field, message: `the capsule is damaged before replay: ${bad.name}: ${bad.message}` }, checks: pre.checks, rebuilt: null, durationMs: now() - started };
  }
  const blocked = replayBlockers(capsule);
  if (blocked !== null) return { runHash: "", expectedRunHash: expected, matches: false, status: null, divergence: null, checks: pre.checks, rebuilt: null, redacted: blocked, durationMs: now() - started };
  const { recorded, request, loaded, base } = await recordedRequest(capsule, env, options);
  const replay = { ...replayDirectives(recorded), audit: recordedHasAudit(capsule), runDocument: capsule.entries.has(RUN_DOC_ENTRY) || redactedDigest(capsule, RUN_DOC_ENTRY) !== undefined, executionFields: recordedHasExecutionFields(capsule) };
  const player = new TapePlayer(readTapeJsonl(capsule.entries.get(TAPE_ENTRY) ?? new Uint8Array(), undefined, capsule.entries), entriesUnder(capsule.entries, BLOB_PREFIX));
  // A fork's or a resumed run's changes act again from its branch point (`branch.ts`); its own tape answers every step.
  const branch = await branchOfCapsule(capsule, request, recorded, loaded, options);
  const runRequest: RunRequest = { ...base, player, replay, ...(branch === null ? {} : { branch }), ...(options.onStep === undefined ? {} : { observeStep: options.onStep }) };
  const record = request.mode === "session" ? await replaySession(runRequest, capsule) : await runPack(runRequest);
  let divergence = eventsDivergence(recorded, record);
  const stop = redactedStop(record.events as unknown as Ev[], divergence?.eventIndex ?? null);
  if (stop !== null) return { runHash: "", expectedRunHash: expected, matches: false, status: null, divergence: null, checks: pre.checks, rebuilt: null, redacted: stop, durationMs: now() - started };
  if (divergence === null && player.remaining > 0) {
    divergence = { eventIndex: recorded.length, stepId: null, field: "tape", message: `the replay made fewer host calls than recorded (${player.remaining} left on the tape)` };
  }
  divergence ??= workspaceDivergence(capsule, record, recorded.length);
  // A delegated run's annex (federation.jsonl) is carried over: rebuilt on the replayed run hash, it must come out
  // byte for byte the same.
  const annexBytes = capsule.entries.get(FEDERATION_ENTRY);
  const annex = annexBytes === undefined ? undefined : (readJsonl(annexBytes).events as AnnexEvent[]).map((e) => ({ type: e.type, payload: e.payload }));
  const rebuiltCapsule = buildRunCapsule(record, loaded, request, undefined, annex);
  const indexMatches = capsuleIndexDigest(rebuiltCapsule.index) === capsuleIndexDigest(capsule.index);
  if (divergence === null && !indexMatches) {
    const mine = new Map(rebuiltCapsule.index.files.map((f) => [f.path, f.sha256]));
    const first = capsule.index.files.find((f) => f.path !== PROOF_ENTRY && mine.get(f.path) !== f.sha256) ?? rebuiltCapsule.index.files.find((f) => !capsule.index.files.some((g) => g.path === f.path));
    divergence = { eventIndex: recorded.length, stepId: null, field: first?.path ?? "capsule.json", message: `the capsule rebuilt from the replay differs from the recorded one at ${first?.path ?? "capsule.json"}` };
  }
  return {
    runHash: record.runHash,
    expectedRunHash: expected,
    matches: divergence === null && record.runHash === expected,
    status: record.status,
    divergence,
    rebuilt: { bytes: rebuiltCapsule.bytes, indexMatches },
    durationMs: now() - started,
  };
}
