/**
 * The one place where federation uses the engine and capsule verification (ARCHITECTURE "Faces over one engine
 * call"): a delegated run is `runEngine` with the pack as archive bytes, the node key as the proof key and the
 * federation annex ({@link runDelegatedPack}); a returned capsule is read and verified by {@link verifyCapsule}; the
 * annex a chain implies is rebuilt by {@link annexJsonl}. Nothing else in `src/federation/` imports the engine or the
 * verifier, so either can be swapped (an engine isolated in a worker, a moved `verify`) here alone.
 * @module
 */
import { readRunCapsule } from "../capsule/mod.ts";
import type { RunCapsule } from "../capsule/mod.ts";
import { verifyRunCapsule } from "../engine/mod.ts";
import type { CapsuleVerification } from "../engine/mod.ts";
import { chainAnnex } from "../engine/mod.ts";
import { runEngine } from "../engine/mod.ts";
import { INFRA_TOOL_NAMES } from "../engine/mod.ts";
import { toJsonlBytes } from "../ledger/mod.ts";
import type { EngineRun } from "../engine/mod.ts";
import type { AnnexEvent } from "../engine/mod.ts";
import type { EngineEnvironment } from "../engine/mod.ts";
import type { RunStatus } from "../engine/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";

/** The engine's infrastructure tools (granted to a delegated run only by name, `scope.ts`). */
export const INFRA_TOOLS: readonly string[] = INFRA_TOOL_NAMES;

/** What the platform hands the federation node to run packs with. */
export type EngineHost = {
  /** The engine environment (QuickJS engine bytes, components). */
  env: EngineEnvironment;
  /** The fetch behind `http.fetch` for packs granted `permission:network` (default: none). */
  fetch?: FetchLike;
};

/** A delegated run, as the federation node asks for it. */
export type DelegatedEngineRequest = {
  /** The pack's `.tar.gz` bytes, as received. */
  archive: Uint8Array;
  input: JsonValue;
  seed?: string;
  approve: boolean;
  /** The restricted executor, as the requesting node decided (its own trust store and `--unrestricted`). */
  restricted: boolean;
  maxSteps?: number;
  stepTimeoutMs?: number;
  /** The node key: the run proof is signed by the delegate node. */
  key: Uint8Array;
  /** The federation annex events, given the finished run. */
  annex: (run: { runId: string; runHash: string; status: RunStatus }) => readonly AnnexEvent[];
  /** The infrastructure tools the delegated scope names; a plan calling another is refused (`POLICY_VIOLATION`). */
  infraTools: readonly string[];
};

/**
 * Run a pack for a peer: the single engine call of `src/federation/`.
 * @param host the engine environment and fetch
 * @param req the pack bytes, the request and the federation annex
 * @returns the engine's run (status, run hash, capsule bytes, run files)
 * @throws ReachError `PACK_*` / `PROTO_*` for a pack that cannot run at all; `POLICY_VIOLATION` (details `infraTool`)
 *   for a plan calling an infrastructure tool outside `req.infraTools`
 * @example const run = await runDelegatedPack(host, { archive, input: {}, approve: false, restricted: true, key, annex: () => [], infraTools: [] });
 */
export async function runDelegatedPack(host: EngineHost, req: DelegatedEngineRequest): Promise<EngineRun> {
  return await runEngine(host.env, {
    pack: { archive: req.archive },
    input: req.input,
    ...(req.seed === undefined ? {} : { seed: req.seed }),
    approve: req.approve,
    ...(req.maxSteps === undefined ? {} : { maxSteps: req.maxSteps }),
    ...(req.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: req.stepTimeoutMs }),
    trust: { store: null, unrestricted: !req.restricted },
    key: req.key,
    ...(host.fetch === undefined ? {} : { fetch: host.fetch }),
    annex: req.annex,
    infraTools: req.infraTools,
  });
}

/**
 * Read and verify a capsule without executing it (the checks of `reach-wasm verify`).
 * @param bytes the capsule `.tar.gz`
 * @returns the capsule and every check
 * @throws ReachError `REPLAY_CAPSULE_INVALID` / `REPLAY_CAPSULE_TOO_LARGE` for an archive that cannot be read
 * @example const { verification } = verifyCapsule(bytes); verification.valid // true
 */
export function verifyCapsule(bytes: Uint8Array): { capsule: RunCapsule; verification: CapsuleVerification } {
  const capsule = readRunCapsule(bytes);
  return { capsule, verification: verifyRunCapsule(capsule) };
}

/**
 * The bytes of the `federation.jsonl` annex that `events` chained onto a run produce.
 * @param runId the run
 * @param runHash the run hash (the annex's anchor)
 * @param timestamp the run's last event timestamp
 * @param events the annex events
 * @returns the JSONL bytes, as the engine writes them
 * @throws TypeError when a payload is not canonical JSON
 * @example annexJsonl(runId, runHash, lastTimestamp, delegationAnnex(chain, run, requester))
 */
export function annexJsonl(runId: string, runHash: string, timestamp: string, events: readonly AnnexEvent[]): Uint8Array {
  return toJsonlBytes(chainAnnex(runId, runHash, timestamp, events));
}
