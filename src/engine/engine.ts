/**
 * The engine call (ARCHITECTURE "Faces over one engine call"): pack + request → run record, capsule bytes and run
 * files. The CLI, the library, the MCP server, the federation node and the run service's workers all run packs
 * through {@link runEngine} and nothing else; none of them plans, gates, executes or hashes by itself.
 * @module
 */
import { readArchive } from "../capsule/archive.ts";
import { ReachError } from "../protocol/errors.ts";
import type { FetchLike } from "../sandbox/host/http.ts";
import type { JsonValue } from "../sandbox/types.ts";
import type { TrustStore } from "../trust/trust-store.ts";
import type { AnnexEvent } from "./annex.ts";
import { buildRunCapsule, capsuleFileName, capsuleRequest } from "./capsule.ts";
import { runPack } from "./coordinator.ts";
import { loadPack, packTrust } from "./pack.ts";
import type { LoadedPack, PackTrust } from "./pack.ts";
import { runFiles, runResult } from "./run-files.ts";
import { builtinComponents } from "./runners.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { RunProgress, RunStatus } from "./types.ts";

/** Largest pack accepted (all files together), as a directory or an archive. */
export const MAX_PACK_BYTES = 256 * 1024 * 1024;

/** Where a pack comes from: its files (relative `/` paths → bytes), or the bytes of a `.tar.gz` of them. */
export type PackSource = { readonly files: ReadonlyMap<string, Uint8Array> } | { readonly archive: Uint8Array };

/** What a run is asked to do. */
export type EngineRunRequest = {
  /** The pack. */
  pack: PackSource;
  /** The run input / objective (default `{}`). */
  input?: JsonValue;
  /** Decimal seed 0..2^64-1 (default: derived from the input hash). */
  seed?: string;
  /** Explicit approval of a risk-3 plan (`--approve`). */
  approve?: boolean;
  /** The plan gate's step limit (default: the pack's `run.maxSteps`, else 10). */
  maxSteps?: number;
  /** The per-step timeout when the plan sets none (default 30 s). */
  stepTimeoutMs?: number;
  /**
   * The trust decision: a pack signed by a key in `store` runs unrestricted; any other pack runs in the restricted
   * executor unless `unrestricted` is set. A bad signature is always refused (`PACK_INVALID_SIGNATURE`).
   */
  trust?: { store?: TrustStore | null; unrestricted?: boolean };
  /** Sign the run with this Ed25519 private key seed (32 bytes): the capsule gets `proof.json`. */
  key?: Uint8Array;
  /** Aborts the run: it ends ABORTED with its capsule. */
  signal?: AbortSignal;
  /** The fetch behind `http.fetch` (default: none, so network calls fail). */
  fetch?: FetchLike;
  /** Progress reports (never part of the hashed record). */
  onProgress?: (p: RunProgress) => void;
  /**
   * Federation events for the capsule's annex (`federation.jsonl`, `src/engine/annex.ts`), given the finished run;
   * they are chained onto the run hash and never change it.
   */
  annex?: (run: { runId: string; runHash: string; status: RunStatus }) => readonly AnnexEvent[];
};

/** What a run leaves behind. */
export type EngineRun = {
  runId: string;
  runHash: string;
  status: RunStatus;
  /** The error that ended a FAILED or ABORTED run. */
  error: ReachError | null;
  /** The capsule: its file name (`{runHash}.capsule.tar.gz`) and bytes. */
  capsule: { name: string; bytes: Uint8Array; signed: boolean };
  /** The readable run files (relative `/` paths → bytes): result, header, plan, events, evidence, tape, workspace. */
  files: Map<string, Uint8Array>;
  /** The result document (`result.json`). */
  result: Record<string, unknown>;
  /** The pack that ran and how far it was trusted. */
  pack: { id: string; version: string; digest: string; trust: PackTrust; restricted: boolean };
  /** Non-fatal findings for stderr. */
  warnings: string[];
};

function packFiles(source: PackSource): ReadonlyMap<string, Uint8Array> {
  if ("files" in source) return source.files;
  if (!(source.archive instanceof Uint8Array)) throw new TypeError('"pack.archive" expected the bytes of a .tar.gz pack');
  try {
    return readArchive(source.archive, { maxTotalBytes: MAX_PACK_BYTES });
  } catch (err) {
    if (err instanceof ReachError) throw new ReachError("PACK_MALFORMED", `the pack archive: ${err.message}`, { details: err.details, cause: err });
    throw err;
  }
}

function usesComponents(files: ReadonlyMap<string, Uint8Array>): boolean {
  const doc = files.get("reach.json");
  if (doc === undefined) return false;
  try {
    const tools = (JSON.parse(new TextDecoder().decode(doc)) as { tools?: Record<string, { kind?: unknown }> }).tools ?? {};
    return Object.values(tools).some((t) => t?.kind === "component");
  } catch {
    return false; // loadPack reports the malformed document
  }
}

/**
 * Load and check a pack exactly as a run does (schema, specVersion, tools, planner, workspace seeds).
 * @param env the platform (its components decide which component tools can run)
 * @param source the pack's files or archive bytes
 * @returns the loaded, locked pack
 * @throws ReachError `PACK_*` / `PROTO_VERSION_MISMATCH` for a pack that cannot run
 * @example const loaded = await loadPackFrom(env, { files });
 */
export async function loadPackFrom(env: EngineEnvironment, source: PackSource): Promise<LoadedPack> {
  const files = packFiles(source);
  if (!usesComponents(files)) return await loadPack(files);
  const componentDigests = new Set((await (env.components ?? builtinComponents)()).map((c) => c.componentSha256));
  return await loadPack(files, { componentDigests });
}

/**
 * Run a pack to a terminal state and build its capsule: the one engine call every face uses.
 * @param env the platform's engines (QuickJS engine bytes, components)
 * @param request the pack and what to do with it
 * @returns the run: status, run hash, capsule bytes, run files
 * @throws ReachError for a pack or request that cannot run at all (`PACK_*`, `PROTO_*`, `PACK_INVALID_SIGNATURE`);
 *   anything the plan or the tools do ends in the run's status instead
 * @example
 * const run = await runEngine(env, { pack: { files }, input: { text: "hello" } });
 * console.log(run.status, run.runHash, run.capsule.bytes.length);
 */
export async function runEngine(env: EngineEnvironment, request: EngineRunRequest): Promise<EngineRun> {
  const loaded = await loadPackFrom(env, request.pack);
  const trust = packTrust(loaded, request.trust?.store ?? null);
  const restricted = !trust.trusted && request.trust?.unrestricted !== true;
  const record = await runPack({
    loaded,
    restricted,
    env,
    ...(request.input === undefined ? {} : { input: request.input }),
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.approve === undefined ? {} : { approve: request.approve }),
    ...(request.maxSteps === undefined ? {} : { maxSteps: request.maxSteps }),
    ...(request.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: request.stepTimeoutMs }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.fetch === undefined ? {} : { fetch: request.fetch }),
    ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
  });
  const capsuleDoc = capsuleRequest(record, { approve: request.approve === true, restricted, ...(request.maxSteps === undefined ? {} : { maxSteps: request.maxSteps }), ...(request.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: request.stepTimeoutMs }) });
  const annex = request.annex?.({ runId: record.runId, runHash: record.runHash, status: record.status });
  const capsule = buildRunCapsule(record, loaded, capsuleDoc, request.key, annex);
  return {
    runId: record.runId,
    runHash: record.runHash,
    status: record.status,
    error: record.error,
    capsule: { name: capsuleFileName(record.runHash), bytes: capsule.bytes, signed: request.key !== undefined },
    files: runFiles(record),
    result: runResult(record),
    pack: { id: loaded.pack.id, version: loaded.pack.version, digest: loaded.packDigest, trust, restricted },
    warnings: [...loaded.warnings],
  };
}
