/**
 * A finished run as a capsule (seed 003 §8; ARCHITECTURE "Capsule"): the run record, the pack and the request become
 * the capsule's entries (`src/capsule/run-capsule.ts`); with a key, the run is signed (run proof over the run hash and
 * the capsule index digest, one step proof per step over its event range).
 * @module
 */
import { toJsonlBytes } from "../ledger/mod.ts";
import { writeRunCapsule } from "../capsule/mod.ts";
import type { CapsuleSigner, RunCapsuleContents } from "../capsule/mod.ts";
import type { CapsuleIndex } from "../protocol/mod.ts";
import { formatProof, signProof } from "../trust/mod.ts";
import type { StepProofStatement } from "../trust/mod.ts";
import type { LoadedPack } from "./pack.ts";
import type { RunRecord, RunRequest } from "./types.ts";
import type { RecordedEvent } from "../ledger/mod.ts";
import { chainAnnex } from "./annex.ts";
import { runDocument } from "./run-document.ts";
import type { AnnexEvent } from "./annex.ts";
import type { ForkedFrom, ResumedFrom } from "./branch.ts";
import { ReachError } from "../protocol/mod.ts";
import { SANDBOX_API_LEVEL, SANDBOX_API_LEVELS } from "../sandbox/mod.ts";
import { SALTED_COMMITMENTS } from "../canonical/mod.ts";
import type { SandboxApiLevel } from "../sandbox/mod.ts";

/** What replay needs to ask for the same run again (`request.json`). */
export type CapsuleRequest = {
  input: unknown;
  seed: string;
  approve: boolean;
  restricted: boolean;
  maxSteps: number | null;
  stepTimeoutMs: number | null;
  /** The caller's correlation id, when one was given (`--request-id`). */
  requestId?: string;
  /** `session` for a session run (its steps came from outside; replay walks `plan.json` as session calls). */
  mode?: "session";
  /** Signed approval records the run was given. */
  approvals?: unknown[];
  /**
   * A session run's place in its session (conformance/HASHING.md "Session chains"): its segment number, the run hash
   * of the run before it, and the memory store it starts from (`[key, canonical value text]`, sorted by key).
   */
  session?: { segment: number; previousRunHash: string | null; memory: [string, string][] };
  /** A fork's parent, branch step and changes (`branch.ts`; conformance/HASHING.md "Forks and resumed runs"). */
  forkedFrom?: ForkedFrom;
  /** A resumed run's parent, how it ended and the steps taken from it. */
  resumedFrom?: ResumedFrom;
  /**
   * The sandbox API level of the run's js and python tools (`SandboxApiLevel`, conformance/HASHING.md "What
   * request.json holds"); absent: level 1, the `reach` object runs recorded before levels existed had.
   */
  sandboxApi?: number;

  /** The value-commitment scheme (conformance/HASHING.md "Value commitments"); absent in a capsule recorded before it. */
  commitments?: string;
};

/**
 * The sandbox API level a recorded `request.json` asks for: its `sandboxApi`, or 1 when absent (capsules recorded
 * before levels existed). A replay, fork or resume runs the tools at that level, so they use the fuel they used.
 * @param request the recorded request document
 * @returns the level
 * @throws ReachError `PROTO_VERSION_MISMATCH` for a level newer than this build runs; `REPLAY_CAPSULE_INVALID` for a
 *   value that is not a level
 * @example recordedSandboxApi({ seed: "1" }) // 1
 */
export function recordedSandboxApi(request: { sandboxApi?: unknown }): SandboxApiLevel {
  const level = request.sandboxApi;
  if (level === undefined) return 1;
  if (SANDBOX_API_LEVELS.includes(level as SandboxApiLevel)) return level as SandboxApiLevel;
  if (Number.isSafeInteger(level) && (level as number) > SANDBOX_API_LEVEL) {
    throw new ReachError("PROTO_VERSION_MISMATCH", `request.json: the run was recorded at sandbox API level ${String(level)}; this reach-wasm runs ` +
      `levels ${SANDBOX_API_LEVELS.join(", ")}; replay it with a newer reach-wasm`, { details: { entry: "request.json", sandboxApi: level as number, supported: [...SANDBOX_API_LEVELS] } });
  }
  throw new ReachError("REPLAY_CAPSULE_INVALID", `request.json: "sandboxApi" is ${JSON.stringify(level)?.slice(0, 40)}, not a sandbox API level ` +
    `(${SANDBOX_API_LEVELS.join(", ")}); the capsule is damaged`, { details: { entry: "request.json", field: "sandboxApi" } });
}

/**
 * The value-commitment scheme a capsule's `request.json` names (conformance/HASHING.md "Value commitments"): absent
 * for a run recorded before salted commitments (null: values inline), `"salted-v1"` since.
 * @param request the capsule's `request.json`
 * @returns the scheme, or null for the previous format
 * @throws ReachError `PROTO_VERSION_MISMATCH` for a scheme this build does not know (a newer reach-wasm recorded
 *   it), `REPLAY_CAPSULE_INVALID` for a value that is not a scheme name
 */
export function recordedCommitments(request: { commitments?: unknown }): typeof SALTED_COMMITMENTS | null {
  const scheme = request.commitments;
  if (scheme === undefined) return null;
  if (scheme === SALTED_COMMITMENTS) return SALTED_COMMITMENTS;
  if (typeof scheme === "string" && /^[a-z0-9-]{1,40}$/.test(scheme)) {
    throw new ReachError("PROTO_VERSION_MISMATCH", `request.json: the run's values are committed by the scheme ${JSON.stringify(scheme)}; this ` +
      `reach-wasm knows ${SALTED_COMMITMENTS}; replay it with the reach-wasm that recorded it, or a newer one`, { details: { entry: "request.json", commitments: scheme, supported: [SALTED_COMMITMENTS] } });
  }
  throw new ReachError("REPLAY_CAPSULE_INVALID", `request.json: "commitments" is ${JSON.stringify(scheme)?.slice(0, 40)}, not a commitment scheme ` +
    `(${SALTED_COMMITMENTS}); the capsule is damaged`, { details: { entry: "request.json", field: "commitments" } });
}

/**
 * The request document of a run.
 * @param record the run
 * @param request what it was asked
 * @returns the request document
 */
export function capsuleRequest(record: RunRecord, request: Pick<RunRequest, "approve" | "restricted" | "maxSteps" | "stepTimeoutMs">): CapsuleRequest {
  return {
    input: record.input,
    seed: record.seed,
    approve: request.approve === true,
    restricted: request.restricted === true,
    maxSteps: request.maxSteps ?? null,
    stepTimeoutMs: request.stepTimeoutMs ?? null,
  };
}

/**
 * Each step's event range (`run.step.started` … `run.step.completed | run.step.failed`).
 * @param events the run's events
 * @returns step proof statements
 */
export function stepRanges(events: readonly Pick<RecordedEvent, "type" | "payload" | "eventHash">[]): StepProofStatement[] {
  const out: StepProofStatement[] = [];
  let open: { stepId: string; first: number } | null = null;
  events.forEach((e, i) => {
    if (e.type === "run.step.started") open = { stepId: String(e.payload["stepId"]), first: i };
    else if ((e.type === "run.step.completed" || e.type === "run.step.failed") && open !== null) {
      out.push({ stepId: open.stepId, firstEventIndex: open.first, lastEventIndex: i, firstEventHash: events[open.first]!.eventHash, lastEventHash: e.eventHash });
      open = null;
    }
  });
  return out;
}

/**
 * Build the capsule of a run.
 * @param record the run
 * @param loaded the pack it ran
 * @param request the request document
 * @param privateKey sign the run with this Ed25519 seed (optional)
 * @param annex federation events to chain onto the run in `federation.jsonl` (optional; the run hash is unchanged)
 * @returns the `.tar.gz` bytes and the index
 */
export function buildRunCapsule(record: RunRecord, loaded: LoadedPack, _request?: CapsuleRequest, privateKey?: Uint8Array, annex?: readonly AnnexEvent[]): { bytes: Uint8Array; index: CapsuleIndex } {
  const contents: RunCapsuleContents = {
    runId: record.runId,
    runHash: record.runHash,
    createdAt: record.header.epoch,
    packDigest: loaded.packDigest,
    packFiles: loaded.files,
    body: record.body,
    events: toJsonlBytes(record.events),
    ...(record.runDocument === false ? {} : { runDoc: runDocument(record.events, record.runHash, record.body) }),
  };
  if (annex !== undefined && annex.length > 0) {
    const last = record.events[record.events.length - 1]!;
    contents.federation = toJsonlBytes(chainAnnex(record.runId, record.runHash, last.timestamp, annex));
  }
  let signer: CapsuleSigner | undefined;
  if (privateKey !== undefined) {
    signer = (runHash, capsuleIndexDigest) => {
      const doc = signProof({ runHash, capsuleIndexDigest, steps: stepRanges(record.events) }, privateKey);
      return { proofJson: formatProof(doc), publicKey: doc.publicKey, signature: doc.run.signature };
    };
  }
  return writeRunCapsule(contents, signer);
}

/** The capsule file name of a run. */
export function capsuleFileName(runHash: string): string {
  return `${runHash}.capsule.tar.gz`;
}
