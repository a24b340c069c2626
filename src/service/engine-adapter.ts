/**
 * The service's only way into the engine (ARCHITECTURE "Faces over one engine call"). Workers run every job through
 * {@link runOnEngine}; the API checks uploaded packs with {@link inspectPack}, which loads and verifies a pack
 * exactly as a run does but runs no tool. Swapping the engine (e.g. for one isolated in a worker thread, so that a
 * cancel can stop a tool stuck in a loop) means changing this file only. Until then an AbortSignal acts between
 * steps and at the engine's asynchronous host calls.
 * @module
 */
import { loadPackFrom, runEngine } from "../engine/mod.ts";
import type { EngineRun, EngineRunRequest, PackSource } from "../engine/mod.ts";
import { packTrust } from "../engine/mod.ts";
import type { EngineEnvironment } from "../engine/mod.ts";
import type { RunProgress, RunStatus } from "../engine/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import type { RunOptions } from "./schemas.ts";
import type { SecretValues } from "../engine/mod.ts";

/**
 * The trust store of a service that runs for a long time: fixed, or (`watchTrustStore` of `reach-wasm/node`) a
 * function giving the store as it is now, asked before each use, so a key added or removed reaches the next run.
 */
export type TrustSource = TrustStore | null | (() => Promise<TrustStore | null>);

/**
 * The store a source gives now.
 * @param source the trust source
 * @returns the store (null: no key is trusted)
 * @example const store = await trustNow(async () => null); // null
 */
export async function trustNow(source: TrustSource): Promise<TrustStore | null> {
  return typeof source === "function" ? await source() : source;
}

/** What a worker hands the engine. */
export type EngineJob = {
  /** The pack's files or archive bytes. */
  pack: PackSource;
  /** The run's options as submitted (input, seed, approve, limits). */
  options: Omit<RunOptions, "requestId">;
  /** Packs signed by these keys run unrestricted; every other pack runs in the restricted executor. */
  trust: TrustStore | null;
  /** Sign capsules with this Ed25519 private key seed. */
  key?: Uint8Array;
  /** The network for trusted packs that declare hosts (default: none). */
  fetch?: FetchLike;
  /** The values of the pack's secrets, from the submission (memory only; `secret-vault.ts`). */
  secrets?: SecretValues;
};

/** What came out of a run. */
export type EngineOutcome = {
  status: RunStatus;
  runHash: string;
  /** The run id inside the capsule. */
  engineRunId: string;
  error: ReachError | null;
  capsule: Uint8Array;
  /** The result document (`result.json`). */
  result: Record<string, unknown>;
  /** Artifact descriptions of the result. */
  artifacts: readonly unknown[];
};

/**
 * Run one job on the engine.
 * @param env the platform's engines
 * @param job the pack, options and trust
 * @param hooks `signal` cancels the run (it ends ABORTED with its capsule); `onProgress` reports steps
 * @returns the outcome with the capsule bytes
 * @throws ReachError `PACK_*` / `PROTO_*` when the pack cannot run at all (no capsule then)
 * @example const out = await runOnEngine(env, { pack: { archive }, options: {}, trust: null }, { signal, onProgress: () => {} });
 */
export async function runOnEngine(env: EngineEnvironment, job: EngineJob, hooks: { signal: AbortSignal; onProgress: (p: RunProgress) => void }): Promise<EngineOutcome> {
  const run = await runEngine(env, {
    ...jobRequest(job),
    trust: { store: job.trust },
    ...(job.fetch === undefined ? {} : { fetch: job.fetch }),
    signal: hooks.signal,
    onProgress: hooks.onProgress,
  });
  return outcomeOf(run);
}

/** The plain part of a job's engine request (no functions, no trust store object): what can cross to a thread. */
export function jobRequest(job: EngineJob): Omit<EngineRunRequest, "trust" | "fetch" | "signal" | "onProgress" | "interrupted" | "annex"> {
  const o = job.options;
  return {
    pack: job.pack,
    input: (o.input ?? {}) as JsonValue,
    ...(o.seed === undefined ? {} : { seed: String(o.seed) }),
    ...(o.approve === undefined ? {} : { approve: o.approve }),
    ...(o.maxSteps === undefined ? {} : { maxSteps: o.maxSteps }),
    ...(o.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: o.stepTimeoutMs }),
    ...(job.key === undefined ? {} : { key: job.key }),
    ...(job.secrets === undefined ? {} : { secrets: job.secrets }),
  };
}

/**
 * A run's outcome as the service stores it.
 * @param run the engine's run
 * @returns the outcome
 */
export function outcomeOf(run: EngineRun): EngineOutcome {
  const artifacts = Array.isArray(run.result["artifacts"]) ? (run.result["artifacts"] as unknown[]) : [];
  return { status: run.status, runHash: run.runHash, engineRunId: run.runId, error: run.error, capsule: run.capsule.bytes, result: run.result, artifacts };
}

/** What a pack check finds. */
export type PackInspection = { digest: string; id: string; version: string; signed: boolean; trusted: boolean; signer: string | null };

/**
 * Load and verify a pack as a run would (schema, specVersion, tools, signature), without running anything.
 * @param env the platform's engines (its components decide which component tools exist)
 * @param archive the pack's `.tar.gz` bytes
 * @param trust the trust store deciding `trusted`
 * @returns the pack's digest, id, version and signature state
 * @throws ReachError `PACK_*` for a malformed pack, `PACK_INVALID_SIGNATURE` for a bad signature
 * @example const p = await inspectPack(env, bytes, null); // { digest: "…", id: "hello", … }
 */
export async function inspectPack(env: EngineEnvironment, archive: Uint8Array, trust: TrustStore | null): Promise<PackInspection> {
  const loaded = await loadPackFrom(env, { archive });
  const t = packTrust(loaded, trust);
  return { digest: loaded.packDigest, id: loaded.pack.id, version: loaded.pack.version, signed: t.signed, trusted: t.trusted, signer: t.publicKey };
}
