/**
 * The files a run leaves in `--out` (seed 001 §7 evidence folder):
 *
 * | path | content |
 * |---|---|
 * | `result.json` | `{runId, status, runHash, outputHash?, outputs, error?, artifacts, capabilityAudit, deprecations?}` (seed 003 §4.2, §9.2) |
 * | `EXECUTION_HEADER.json` | the execution header: plan hash lock, manifest hash, input hash, seed, phases |
 * | `plan.json` | the approved plan (canonical JSON), when there was one |
 * | `events.jsonl` | the hash-chained events (seed 003 §3.3) |
 * | `evidence.json` | per-step evidence (seed 004 RunEvidence; real durations, unhashed) |
 * | `TASK_<stepId>.json` | each step's evidence (seed 001 §7) as in `evidence.json`, with seed 001's fields and real times (`task-files.ts`) |
 * | `run.json` | the run document (seed 004 ProductionRun + upstream run schema; `run-document.ts`): real times, virtual offsets beside them |
 * | `tape.jsonl`, `blobs/<sha256>` | every host call with its request and response bytes |
 * | `artifacts/<invocationId>/<name>` | committed artifacts |
 * | `workspace/<path>` | the workspace after the run (a failed step's writes are not there) |
 *
 * Everything but `evidence.json`, `TASK_<stepId>.json` and `run.json` is a pure function of the run (the same run
 * gives the same bytes); their pure counterparts are in the capsule.
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { hashCanonical } from "../canonical/mod.ts";
import { utf8 } from "../canonical/mod.ts";
import { toJsonlBytes } from "../ledger/mod.ts";
import type { RunRecord } from "./types.ts";
import { liveRunDocument, runDocument } from "./run-document.ts";
import { taskDocument } from "./task-files.ts";

function json(value: unknown): Uint8Array {
  return utf8(JSON.stringify(value, null, 2) + "\n");
}

/**
 * The run's result document (also the body of `run --json` minus the capsule path).
 * @param record the run
 * @returns a JSON object
 */
export function runResult(record: RunRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    runId: record.runId,
    status: record.status,
    runHash: record.runHash,
    planHash: record.planHash,
    outputs: record.outputs,
    artifacts: record.artifacts.map((a) => a.info),
  };
  if (record.status === "COMPLETED") out["outputHash"] = hashCanonical(record.outputCommits ?? record.outputs);
  if (record.error !== null) out["error"] = record.error.toDetails();
  if (record.capabilityAudit !== undefined) out["capabilityAudit"] = record.capabilityAudit;
  if (record.deprecations !== undefined) out["deprecations"] = record.deprecations;
  return out;
}

/**
 * The files of a run's output folder.
 * @param record the run
 * @returns relative path → bytes, in a stable order
 */
export function runFiles(record: RunRecord): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  files.set("result.json", json(runResult(record)));
  files.set("EXECUTION_HEADER.json", json(record.header));
  if (record.plan !== null) files.set("plan.json", utf8(canonicalize(record.plan) + "\n"));
  files.set("events.jsonl", toJsonlBytes(record.events));
  files.set("evidence.json", json(record.evidence));
  const planId = record.plan?.plan_id ?? null;
  const origin = record.header.state !== undefined; // a replay of a capsule made before seed 001's fields leaves them out
  for (const ev of record.evidence) files.set(`TASK_${ev.stepId}.json`, json(origin ? taskDocument(ev, planId, record.realTimes.steps?.[ev.stepId] ?? null, ev.durationMs) : ev));
  files.set("run.json", json(liveRunDocument(runDocument(record.events, record.runHash, record.body), record.realTimes, record.evidence)));
  files.set("tape.jsonl", utf8(record.tape.toJsonl()));
  for (const [hash, bytes] of record.tape.blobEntries()) files.set(`blobs/${hash}`, bytes);
  for (const a of record.artifacts) files.set(a.info.path, a.bytes);
  for (const [path, bytes] of record.workspaceFiles) files.set(`workspace/${path}`, bytes);
  return files;
}
