/**
 * A run's identity and what it was asked (seed 003 §3.1, PREPARING; conformance/HASHING.md): the input as its
 * canonical copy and its hash, the seed, the virtual epoch, the run id, the correlation id, the query the router
 * classified and its intent, and `request.json`, the document a replay asks again. Each is a function of the request
 * alone, so a replay that reads the request back gets the same identity.
 * @module
 */
import { deriveId, SALTED_COMMITMENTS, sha256Hex } from "../canonical/mod.ts";
import { parseIsoMillis, parseSeed } from "../determinism/mod.ts";
import { acceptJsonValue } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import type { SandboxApiLevel } from "../sandbox/mod.ts";
import type { CapsuleRequest } from "./capsule.ts";
import { classifyIntent, queryOf } from "./intent.ts";
import type { LoadedPack } from "./pack.ts";
import type { GatedPlan } from "./plan-gate.ts";
import type { RunIntent } from "./intent.ts";
import type { RunRequest } from "./types.ts";

/** The default virtual epoch (ARCHITECTURE "Determinism"). */
export const DEFAULT_EPOCH = "1970-01-01T00:00:00.000Z";

/** The seed of a run: `--seed`, else the first 64 bits of the input hash (decimal). */
export function runSeed(inputHash: string, seed?: string): string {
  return seed === undefined ? BigInt(`0x${inputHash.slice(0, 16)}`).toString() : parseSeed(seed);
}

/** Who a run is: what its events, records and ids are derived from (the fields of `Run` of the same names). */
export type RunIdentity = {
  /** The input as its canonical copy (conformance/HASHING.md "What a tool sees"). */
  input: JsonValue;
  inputHash: string;
  seed: string;
  epoch: string;
  epochMs: number;
  restricted: boolean;
  runId: string;
  /** The run's correlation id (seed 004 `requestId`): the caller's, else derived from the run id. */
  requestId: string;
  /** The query the router classified (seed 004; `intent.ts`) and the intent it found. */
  query: string;
  intent: RunIntent | null;
};

/**
 * The identity of the run a request asks for.
 * @param request the pack and what to do with it
 * @returns the run's identity
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the input is not JSON the run can take; a bad `--seed` or epoch
 */
export function runIdentity(request: RunRequest): RunIdentity {
  const { loaded } = request;
  // The input as its canonical copy (conformance/HASHING.md "What a tool sees"): what the run hands on — to the
  // planner, to `$input` references, to tools — is then the same whatever key order or number spelling the caller
  // used, live and when a replay reads it back from request.json.
  const accepted = acceptJsonValue(request.input ?? {}, { what: "the run input", code: "PROTO_INVALID_ARGUMENT" });
  const input = accepted.value;
  const inputHash = sha256Hex(accepted.text);
  const seed = runSeed(inputHash, request.seed);
  const epoch = loaded.pack.run?.epoch ?? DEFAULT_EPOCH;
  const epochMs = parseIsoMillis(epoch);
  const restricted = request.restricted === true;
  const chain = request.session;
  // A session's later runs each get their own id: it names the run it continues (conformance/HASHING.md).
  const runId = chain === undefined || chain.previousRunHash === null ? deriveId("reach-wasm/run", loaded.packDigest, inputHash, seed) : deriveId("reach-wasm/run", loaded.packDigest, inputHash, seed, chain.previousRunHash);
  const requestId = request.requestId ?? deriveId("reach-wasm/request", runId);
  const query = queryOf(input, loaded.pack);
  const intent = classifyIntent(loaded.pack.intents, query);
  return { input, inputHash, seed, epoch, epochMs, restricted, runId, requestId, query, intent };
}

/**
 * `request.json`: what the run was asked (conformance/HASHING.md "What request.json holds"); replay asks it again, and
 * its hash is in `run.started`.
 * @param request the pack and what to do with it
 * @param identity the run's identity ({@link runIdentity})
 * @param sandboxApi the sandbox API level of the run's js and python tools (recorded unless 1)
 * @returns the document
 */
export function requestDocument(request: RunRequest, identity: Pick<RunIdentity, "input" | "seed" | "restricted">, sandboxApi: SandboxApiLevel): CapsuleRequest {
  const chain = request.session;
  return {
    input: identity.input,
    seed: identity.seed,
    approve: request.approve === true,
    restricted: identity.restricted,
    maxSteps: request.maxSteps ?? null,
    stepTimeoutMs: request.stepTimeoutMs ?? null,
    ...(request.requestId === undefined ? {} : { requestId: request.requestId }),
    ...(request.mode === "session" ? { mode: "session" as const } : {}),
    ...(chain === undefined ? {} : { session: { segment: chain.segment, previousRunHash: chain.previousRunHash, memory: chain.memory.map(([k, v]) => [k, v] as [string, string]) } }),
    ...(request.approvals === undefined || request.approvals.length === 0 ? {} : { approvals: [...request.approvals] }),
    ...(request.branch === undefined ? {} : request.branch.lineage),
    ...(sandboxApi === 1 ? {} : { sandboxApi }),

    ...(request.commitments === null ? {} : { commitments: SALTED_COMMITMENTS }),
  };
}

/**
 * The payload of `run.started` (appended after planning, so that it names the locked plan): the run's identity, the
 * pack's, what the run may use, and the hashes of its request and of the workspace it starts from.
 * @param loaded the pack
 * @param identity the run's identity ({@link runIdentity})
 * @param requestHash the hash of the run's `request.json` ({@link requestDocument})
 * @param workspaceBefore the digest of the workspace the run starts from
 * @param gated the gated plan, or null when planning failed
 * @returns the payload
 */
export function runStartedPayload(loaded: LoadedPack, identity: RunIdentity, requestHash: string, workspaceBefore: string, gated: GatedPlan | null): JsonObject {
  const started: JsonObject = {
    runId: identity.runId,
    packId: loaded.pack.id,
    packVersion: loaded.pack.version,
    specVersion: loaded.pack.specVersion,
    inputHash: identity.inputHash,
    manifestHash: loaded.manifestHash,
    packDigest: loaded.packDigest,
    seed: identity.seed,
    epoch: identity.epoch,
    capabilities: { restricted: identity.restricted, permissions: [...loaded.pack.manifest.capabilities.permissions], tools: [...loaded.tools.keys()] },
    requestHash,
    workspaceBefore,
  };
  if (loaded.pack.intents !== undefined) started["intent"] = identity.intent;
  if (gated !== null) {
    started["planId"] = gated.plan.plan_id;
    started["planHash"] = gated.planHash;
  }
  return started;
}
