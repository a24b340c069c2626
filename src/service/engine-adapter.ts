/**
 * The service's only way into the engine (ARCHITECTURE "Faces over one engine call"). Workers run every job through
 * {@link runOnEngine}; the API checks uploaded packs with {@link inspectPack}, which loads and verifies a pack
 * exactly as a run does but runs no tool. Swapping the engine (e.g. for one isolated in a worker thread, so that a
 * cancel can stop a tool stuck in a loop) means changing this file only. Until then an AbortSignal acts between
 * steps and at the engine's asynchronous host calls.
 *
 * {@link runInlineFirst} runs a job on the calling thread while that is harmless and hands it to an engine thread
 * otherwise: most runs are short, and a thread costs a short run more CPU than the run itself (measured: the worker
 * processes' CPU per `packs/hello` run fell from 8.6–13.7 ms to 4.8–6.0 ms; scripts/bench-service.ts).
 * @module
 */
import { loadPackFrom, runEngine } from "../engine/engine.ts";
import type { EngineRun, EngineRunRequest, PackSource } from "../engine/engine.ts";
import { packTrust } from "../engine/pack.ts";
import type { EngineEnvironment } from "../engine/runners.ts";
import type { RunProgress, RunStatus } from "../engine/types.ts";
import type { ReachError } from "../protocol/errors.ts";
import type { FetchLike } from "../sandbox/host/http.ts";
import type { JsonValue } from "../sandbox/types.ts";
import type { TrustStore } from "../trust/trust-store.ts";
import type { RunOptions } from "./schemas.ts";

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

/** Why an inline attempt was given up (its controller's abort reason; never recorded: the attempt is dropped). */
const PROMOTED = "moved to an engine thread";

/** When the calling thread's event loop last ran (one 10 ms ticker shared by every attempt under way). */
const loop = { free: 0, users: 0, timer: undefined as ReturnType<typeof setInterval> | undefined };

function heldMs(): number {
  return performance.now() - loop.free;
}

function holdLoop(): () => void {
  if (loop.users++ === 0) {
    loop.free = performance.now();
    loop.timer = setInterval(() => void (loop.free = performance.now()), 10);
  }
  return () => {
    if (--loop.users === 0) clearInterval(loop.timer);
  };
}

type Hooks = { signal: AbortSignal; onProgress: (p: RunProgress) => void };

/**
 * Run a job on the calling thread while that is harmless, else again from the start with `elsewhere` (an engine
 * thread). The attempt is given up — its result thrown away, nothing stored — once it has held the thread without a
 * break for longer than `budgetMs` (seen at a fuel refill, which every computing tool and planner reaches often: the
 * worker's heartbeats, cancels and HTTP wait at most that long), or when a tool asks for the network (a request is
 * never sent twice). A run is a pure function of its pack and request (virtual time, seeded randomness, no network
 * before that point), so the second execution records exactly what the first would have: the wall clock decides only
 * where a run executes, never what it records. Progress already reported is not reported again. A cancel during the
 * attempt ends the run there (ABORTED, with its capsule), as on a thread.
 * @param env the platform's engines
 * @param job the pack, options and trust
 * @param hooks `signal` cancels the run; `onProgress` reports steps
 * @param budgetMs how long the attempt may hold the thread without a break
 * @param elsewhere runs the job from the start on an engine thread, with the hooks it is given
 * @returns the outcome
 * @throws ReachError `PACK_*` / `PROTO_*` when the pack cannot run at all (no capsule then)
 * @example const out = await runInlineFirst(env, job, { signal, onProgress }, 50, (h) => onThread(job, h));
 */
export async function runInlineFirst(env: EngineEnvironment, job: EngineJob, hooks: Hooks, budgetMs: number, elsewhere: (hooks: Hooks) => Promise<EngineOutcome>): Promise<EngineOutcome> {
  const controller = new AbortController();
  let promoted = false;
  let reported = 0;
  // the reason an engine thread records for this signal (its interrupt word's): SIGINT, SIGTERM, else "abort"
  const cancel = (): void => controller.abort(["SIGINT", "SIGTERM"].includes(String(hooks.signal.reason)) ? String(hooks.signal.reason) : "abort");
  const promote = (): true => {
    promoted = true;
    controller.abort(PROMOTED);
    return true;
  };
  if (hooks.signal.aborted) cancel();
  else hooks.signal.addEventListener("abort", cancel, { once: true });
  const release = holdLoop();
  let out: EngineOutcome | null = null;
  try {
    out = outcomeOf(await runEngine(env, {
      ...jobRequest(job),
      trust: { store: job.trust },
      signal: controller.signal,
      interrupted: () => promoted || (!controller.signal.aborted && heldMs() > budgetMs && promote()),
      ...(job.fetch === undefined ? {} : { fetch: () => (promote(), Promise.reject(new Error(PROMOTED))) }),
      onProgress: (p) => {
        if (promoted) return;
        reported++;
        hooks.onProgress(p);
      },
    }));
  } catch (err) {
    if (!promoted) throw err;
  } finally {
    release();
    hooks.signal.removeEventListener("abort", cancel);
  }
  if (!promoted && out !== null) return out;
  let skip = reported;
  return await elsewhere({ signal: hooks.signal, onProgress: (p) => (skip > 0 ? void skip-- : hooks.onProgress(p)) });
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
