/**
 * The one place where federation uses the engine (ARCHITECTURE "Faces over one engine call"): a delegated run is
 * `runEngine` with the pack as archive bytes, the node key as the proof key and the federation annex. Everything
 * else in `src/federation/` goes through {@link runDelegatedPack}, so that the engine can be swapped (for example
 * for one isolated in a worker) here alone.
 * @module
 */
import { runEngine } from "../engine/engine.ts";
import type { EngineRun } from "../engine/engine.ts";
import type { AnnexEvent } from "../engine/annex.ts";
import type { EngineEnvironment } from "../engine/runners.ts";
import type { RunStatus } from "../engine/types.ts";
import type { FetchLike } from "../sandbox/host/http.ts";
import type { JsonValue } from "../sandbox/types.ts";

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
};

/**
 * Run a pack for a peer: the single engine call of `src/federation/`.
 * @param host the engine environment and fetch
 * @param req the pack bytes, the request and the federation annex
 * @returns the engine's run (status, run hash, capsule bytes, run files)
 * @throws ReachError `PACK_*` / `PROTO_*` for a pack that cannot run at all
 * @example const run = await runDelegatedPack(host, { archive, input: {}, approve: false, restricted: true, key, annex: () => [] });
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
  });
}
