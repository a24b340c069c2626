/**
 * What a run leaves when it ends (`finishRun`): the terminal event, the capsule's body (every entry but the events),
 * the per-step `TASK_<id>.json` documents, the execution header, and the run record the engine call returns.
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { utf8 } from "../canonical/mod.ts";
import { capsuleBody, TAPE_ENTRY } from "../capsule/mod.ts";
import { committedTape } from "../record/mod.ts";
import { parseIsoMillis } from "../determinism/mod.ts";
import { auditCapabilities, changedPaths } from "../policy/mod.ts";
import { contentsDigest } from "../capsule/mod.ts";
import { toReachError } from "../protocol/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import { Aborted } from "./run-stops.ts";
import type { Run } from "./run.ts";
import { memoryDigest } from "./session-chain.ts";
import { BRANCH_FILE_PREFIX } from "./branch.ts";
import { outputHashes, outputsDigest } from "./value-commits.ts";
import { recordPlanViolation, skippedEvidence, terminalReason } from "./step-events.ts";
import { executionState, planLock, taskDocument } from "./task-files.ts";
import type { AbortPoint, ExecutionHeader, RunRecord, RunStatus } from "./types.ts";

/**
 * The capsule's body (`capsuleBody`): pack, request, header, plan, result, tape, blobs, workspaces, artifacts. Makes
 * the run's capability audit on the way (seed 003 §4.2, hashed with the run through `contents`).
 * @param run the run, ending
 * @param status how it ends
 * @param error why, unless it completed
 * @returns the body's entries
 */
export function runBody(run: Run, status: RunStatus, error: ReachError | null): Map<string, Uint8Array> {
  const request = run.request;
  const { loaded } = request;
  const carried = request.session?.workspace;
  const before = new Map<string, Uint8Array>(carried?.files ?? []);
  if (carried === undefined) for (const [root, files] of Object.entries(loaded.workspaceFiles)) for (const [p, b] of Object.entries(files)) before.set(`${root}/${p}`, b);
  const outputs = outputHashes(run.valueKey, run.outputs, run.outputCommits);
  const result: Record<string, unknown> = { runId: run.runId, status, planHash: run.gated?.planHash ?? null, outputs, artifacts: run.artifacts.artifacts.map((a) => a.info) };
  if (status === "COMPLETED") result["outputHash"] = outputsDigest(run.valueKey, run.outputs, run.outputCommits);
  if (error !== null) result["error"] = error.toDetails();
  if (run.deprecations.length > 0) result["deprecations"] = run.deprecations.map((d) => ({ ...d }));
  // A session's run commits the memory it ends with, which the next run of the session starts from (HASHING.md).
  if (request.session !== undefined) result["session"] = { segment: request.session.segment, previousRunHash: request.session.previousRunHash, memoryAfter: memoryDigest(run.memoryEntries()) };
  // seed 003 §4.2 post-execution audit, before the terminal event: hashed with the run through `contents`
  if (request.replay?.audit !== false) {
    run.capabilityAudit = auditCapabilities(loaded.pack.manifest, run.log.events, run.tape.records, changedPaths(run.workspaceBefore, run.workspace.snapshot()), Object.keys(loaded.pack.secrets ?? {}));
    result["capabilityAudit"] = run.capabilityAudit;
  }
  const body = capsuleBody({
    packFiles: loaded.files,
    request: run.requestDoc,
    header: runHeader(run, status),
    plan: run.gated?.plan ?? null,
    result,
    tape: utf8(run.tape.toJsonl()),
    blobs: run.tape.blobEntries(),
    workspaceBefore: { files: before, links: new Map(carried?.links ?? []) },
    workspaceAfter: run.workspace.contents(),
    artifacts: new Map(run.artifacts.artifacts.map((a) => [a.info.path, a.bytes])),
    ...(request.replay?.runDocument === false ? {} : { tasks: runTasks(run) }),
  });
  // Salted commitments: each host call committed apart (`tape.jsonl` lines hold commitments, `tape/<seq>.json` values).
  if (run.valueKey !== null) {
    const committed = committedTape(run.valueKey, run.tape.records);
    body.set(TAPE_ENTRY, committed.tape);
    for (const [path, bytes] of committed.values) body.set(path, bytes);
  }
  // A fork's change files (tool builds, host responses), by SHA-256: committed with the body (`branch.ts`).
  for (const [sha, bytes] of request.branch?.files ?? []) body.set(`${BRANCH_FILE_PREFIX}${sha}`, bytes);
  return body;
}

/**
 * Each step's evidence with its virtual duration (from its `run.step.started` to its end event) and, unless the
 * replayed capsule predates them, seed 001's fields with its virtual times (`task-files.ts`): `TASK_<id>.json`.
 */
function runTasks(run: Run): Map<string, unknown> {
  const span = new Map<string, [number, number]>();
  for (const e of run.log.events) {
    const id = String(e.payload["stepId"]);
    const ms = parseIsoMillis(e.timestamp);
    if (e.type === "run.step.started") span.set(id, [ms, ms]);
    else if (e.type === "run.step.completed" || e.type === "run.step.failed") span.set(id, [span.get(id)?.[0] ?? ms, ms]);
  }
  const tasks = new Map<string, unknown>();
  const planId = run.gated?.plan.plan_id ?? null;
  for (const ev of run.evidence) {
    const s = span.get(ev.stepId);
    const durationMs = s === undefined ? 0 : s[1] - s[0];
    tasks.set(ev.stepId, run.request.replay?.executionFields === false ? { ...ev, durationMs } : taskDocument(ev, planId, s === undefined ? null : { startedAt: s[0], endedAt: s[1] }, durationMs));
  }
  return tasks;
}

/** The execution header (seed 001 §5–§7): with seed 001's plan lock and state unless the replayed capsule predates them. */
function runHeader(run: Run, status: RunStatus): ExecutionHeader {
  const { loaded } = run.request;
  const origin = run.request.replay?.executionFields === false ? {} : { ...planLock(loaded, run.gated?.plan ?? null, run.request.mode === "session"), state: executionState(status) };
  return {
    contract_version: "S2-B-06.v1",
    run_id: run.runId,
    pack_id: loaded.pack.id,
    pack_version: loaded.pack.version,
    manifest_hash: loaded.manifestHash,
    input_hash: run.inputHash,
    seed: run.seed,
    epoch: run.epoch,
    restricted: run.restricted,
    plan_id: run.gated?.plan.plan_id ?? null,
    plan_hash: run.gated?.planHash ?? null,
    approved_by: run.gated?.approvedBy ?? null,
    phases: run.phases,
    ...origin,
  };
}

/**
 * The run record of a run that ended.
 * @param run the run
 * @param status how it ended
 * @param error why, unless it completed
 * @param body the capsule's body ({@link runBody})
 * @returns the record
 */
export function runRecord(run: Run, status: RunStatus, error: ReachError | null, body: Map<string, Uint8Array>): RunRecord {
  const after = run.workspace.snapshot();
  const contents = run.workspace.contents();
  const files = contents.files;
  const runHash = run.log.runHash();
  const chain = run.request.session;
  return {
    runId: run.runId,
    status,
    runHash,
    error,
    events: run.log.events,
    evidence: run.evidence,
    artifacts: run.artifacts.artifacts,
    plan: run.gated?.plan ?? null,
    planHash: run.gated?.planHash ?? null,
    header: runHeader(run, status),
    inputHash: run.inputHash,
    input: run.input,
    seed: run.seed,
    outputs: run.outputs,
    ...(run.valueKey === null ? {} : { outputCommits: run.outputCommits }),
    tape: run.tape,
    workspaceBefore: run.workspaceBefore,
    workspaceAfter: after,
    workspaceFiles: files,
    workspaceLinks: contents.links,
    warnings: [...run.request.loaded.warnings, ...run.deprecations.map((d) => d.message)],
    ...(run.capabilityAudit === null ? {} : { capabilityAudit: run.capabilityAudit }),
    ...(run.deprecations.length === 0 ? {} : { deprecations: [...run.deprecations] }),
    body,
    requestId: run.requestId,
    realTimes: run.realTimes,
    ...(run.request.replay?.runDocument === false ? { runDocument: false } : {}),
    ...(chain === undefined ? {} : { next: { segment: chain.segment + 1, previousRunHash: runHash, workspace: contents, memory: run.memoryEntries() } }),
  };
}

/**
 * Close the run: the terminal event (with the output hash, or the error), and the record.
 * @param run the run
 * @param err what ended the run early (an error or {@link Aborted}), or null when every step succeeded
 * @returns the run record
 */
export function finishRun(run: Run, err: unknown): RunRecord {
  const { loaded } = run.request;
  const stops: Record<string, unknown> = run.stops.length === 0 ? {} : { stops: run.stops.map((s) => ({ ...s })) };
  if (err !== null) {
    // Close whatever is open so that the terminal event is legal (seed 003 §3.2: termination comes last).
    if (run.log.events.length === 0) run.start(null);
    const error = err instanceof Aborted ? run.abortError() : toReachError(err, "EXEC_TOOL_FAILED");
    if (run.log.openInvocation !== null) run.log.append("tool.failed", { invocationId: run.log.openInvocation, error: error.toDetails() });
    if (run.log.openStep !== null) {
      run.failedStep = run.log.openStep;
      run.log.append("run.step.failed", { stepId: run.log.openStep, result: { status: "error", reason: terminalReason(error) }, error: error.toDetails() });
    }
    recordPlanViolation(run.log, error, loaded.pack.manifest.capabilities.tools.map((t) => t.name));
    return terminate(run, err instanceof Aborted ? "ABORTED" : "FAILED", error, err instanceof Aborted ? err.at : null, stops);
  }
  if (hashCanonical(loaded.pack.manifest) !== loaded.manifestHash) throw new Error("internal: the locked manifest changed during the run");
  return terminate(run, "COMPLETED", null, null, stops);
}

/**
 * Build the capsule body (everything but the events), then append the terminal event, which commits the body's
 * digest (`contents`) and the workspace's digest: the run hash covers every entry of the capsule.
 */
function terminate(run: Run, status: RunStatus, error: ReachError | null, at: AbortPoint | null, stops: Record<string, unknown>): RunRecord {
  run.phases.push(status);
  run.markEnded();
  const ran = new Set(run.evidence.map((e) => e.stepId));
  for (const step of run.gated?.steps ?? []) if (!ran.has(step.id)) run.evidence.push(skippedEvidence(step, run.requestId));
  const body = runBody(run, status, error);
  const committed = { workspaceAfter: run.workspace.digest(), contents: contentsDigest(body), ...stops };
  if (status === "COMPLETED") {
    const artifacts = run.artifacts.artifacts.map((a) => a.info);
    run.log.append("run.completed", { runId: run.runId, status: "success", outputHash: outputsDigest(run.valueKey, run.outputs, run.outputCommits), ...(artifacts.length > 0 ? { artifacts } : {}), ...committed });
  } else if (status === "ABORTED") {
    run.log.append("run.aborted", { runId: run.runId, status: "failure", reason: "aborted", signal: run.signalName(), error: error!.toDetails(), ...(at === null ? {} : { abortedAt: at }), ...committed });
  } else {
    run.log.append("run.failed", { runId: run.runId, status: "failure", error: error!.toDetails(), reason: terminalReason(error!), ...(run.failedStep === undefined ? {} : { failedStep: run.failedStep }), ...committed });
  }
  return runRecord(run, status, error, body);
}
