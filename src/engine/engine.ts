/**
 * The engine call (ARCHITECTURE "Faces over one engine call"): pack + request → run record, capsule bytes and run
 * files. The CLI, the library, the MCP server, the federation node and the run service's workers all run packs
 * through {@link runEngine} and nothing else; none of them plans, gates, executes or hashes by itself.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import type { AnnexEvent } from "./annex.ts";
import { buildRunCapsule, capsuleFileName } from "./capsule.ts";
import { INFRA_TOOL_NAMES, isInfraTool } from "./infra-tools.ts";
import { runPack } from "./coordinator.ts";
import { loadPack, packTrust } from "./pack.ts";
import { readPackDocument } from "./pack-document.ts";
import { packArchiveFiles } from "./pack-archive.ts";
import type { LoadedPack, PackTrust } from "./pack.ts";
import type { Pack } from "../protocol/mod.ts";
import { runFiles, runResult } from "./run-files.ts";
import { packLoading, turnLoop, useHashing } from "./runners.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { RunProgress, RunRecord, RunRequest, RunStatus, SessionChain } from "./types.ts";
import { Session } from "./session.ts";
import { checkSecretValues } from "../sandbox/mod.ts";
import type { SecretValues } from "../sandbox/mod.ts";
import { checkSessionChain } from "./session-chain.ts";
import type { SessionBudget, SessionCall, SessionScope, SessionTool, WorkspaceFile } from "./session.ts";

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
  /** Signed approval records of a risk-3 plan (`--approval FILE`), counted when a key of `trust.store` signed them. */
  approvals?: readonly unknown[];
  /** The plan gate's step limit (default: the pack's `run.maxSteps`, else 10). */
  maxSteps?: number;
  /** The per-step timeout when the plan sets none (default 30 s). */
  stepTimeoutMs?: number;
  /**
   * How many independent steps may run at once (default 1): on the platform's step threads when it gives them. The
   * run hash and capsule are the same for every value (`step-graph.ts`).
   */
  parallel?: number;
  /**
   * The trust decision: a pack signed by a key in `store` runs unrestricted; any other pack runs in the restricted
   * executor unless `unrestricted` is set. A bad signature is always refused (`PACK_INVALID_SIGNATURE`).
   */
  trust?: { store?: TrustStore | null; unrestricted?: boolean };
  /** Sign the run with this Ed25519 private key seed (32 bytes): the capsule gets `proof.json`. */
  key?: Uint8Array;
  /** Aborts the run: it ends ABORTED with its capsule. */
  signal?: AbortSignal;
  /**
   * How the run lets the event loop turn at its checks, for `signal`'s handler (default the environment's `turn`;
   * `inline-first.ts` gives its own, which its hold watch does not count as a break).
   */
  turn?: (last?: boolean) => Promise<void>;
  /** Read at every fuel refill (a shared word in a worker, so a signal lands while a tool holds the thread). */
  interrupted?: () => boolean;
  /** The fetch behind `http.fetch` (default: none, so network calls fail). */
  fetch?: FetchLike;
  /** The value of a declared secret by name, for `{{secret:NAME}}` in an MCP server's `env` (`RunRequest.secretValue`). */
  secretValue?: (name: string) => string | undefined;
  /**
   * Values of the secrets the pack declares (`reach.json` `secrets`), by name: every declared secret needs one (at
   * least 8 bytes), else the call throws `PROTO_INVALID_ARGUMENT` before anything runs. Tools see only the
   * placeholder `{{secret:NAME}}`; the host substitutes the value for requests to the secret's hosts and scrubs it from
   * what comes back. Held in memory for this run only: never in `request.json`, the capsule or any record.
   */
  secrets?: SecretValues;
  /** Progress reports (never part of the hashed record). */
  onProgress?: (p: RunProgress) => void;
  /** The caller's correlation id (seed 004 `requestId`; 1–128 of A–Z a–z 0–9 . _ : -); default: derived from the run id. */
  requestId?: string;
  /** Report each hashed event through `onProgress` (`{kind: "event"}`) as it is appended (`run --events`). */
  liveEvents?: boolean;
  /** The wall clock for the run files' real times (default the real clock's `epochMs`, `src/determinism/real-clock.ts`); never hashed. */
  wallClock?: () => number;
  /**
   * Stop this invocation at this fuel count (decimal), as aborted by `signal`: for a run started again after an
   * earlier attempt of the same run was stopped there (`runInlineFirst` in `reach-wasm/node`); or (`atEnd`) stop at
   * the check before the terminal state, for a run started again because the signal came after an earlier
   * execution's check but before its results were taken. The stop is recorded like any other, so the capsule
   * replays to it.
   */
  stopAt?: { invocationId: string; fuel: string; signal: string } | { atEnd: true; signal: string };
  /**
   * A session run's place in its session's chain of runs (`openSession` only; conformance/HASHING.md "Session
   * chains"): give `{ segment: 1, previousRunHash: null, memory: [] }` to start a chain, and a finished run's `next`
   * to continue it. Without it a session run is not part of a chain (as capsules made before chains).
   */
  session?: SessionChain;
  /**
   * Federation events for the capsule's annex (`federation.jsonl`, `src/engine/annex.ts`), given the finished run;
   * they are chained onto the run hash and never change it.
   */
  annex?: (run: { runId: string; runHash: string; status: RunStatus }) => readonly AnnexEvent[];
  /**
   * The infrastructure tools (`write_memory`, `read_memory`, `write_temp`, `read_lines`, `exec_python`) the run may
   * call; default every one. A plan that calls another — static, from the planner, or a replan — is refused before
   * any of it runs: `runEngine` throws `POLICY_VIOLATION` (`violationType` `UNDEFINED_TOOL`, details `infraTool`) and
   * writes no capsule, since a capsule recording the refusal could not be replayed without the narrowing. A run it
   * does not refuse is exactly the run without it (same run hash). A session call to another is refused unrecorded.
   * A federation delegate passes the ones its delegated scope names (seed 003 §6.2).
   */
  infraTools?: readonly string[];
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
  /** A session run in a chain: the link the session's next run starts from (its workspace and memory as this one ended). */
  next?: SessionChain;
};

async function packFiles(source: PackSource): Promise<ReadonlyMap<string, Uint8Array>> {
  if ("files" in source) return source.files;
  if (!(source.archive instanceof Uint8Array)) throw new TypeError('"pack.archive" expected the bytes of a .tar.gz pack');
  return await packArchiveFiles(source.archive, "the pack archive");
}

/**
 * Load and check a pack exactly as a run does (schema, specVersion, tools, planner, workspace seeds).
 * @param env the platform (its components decide which component tools can run)
 * @param source the pack's files or archive bytes
 * @returns the loaded, locked pack
 * @throws ReachError `PACK_*` / `PROTO_VERSION_MISMATCH` for a pack that cannot run
 * @example
 * ```ts
 * import { defaultEnvironment, readPackFiles } from "../host/node.ts";
 * const loaded = await loadPackFrom(defaultEnvironment(), { files: await readPackFiles("packs/hello") });
 * console.log(loaded.pack.id, loaded.packDigest);
 * ```
 */
export async function loadPackFrom(env: EngineEnvironment, source: PackSource): Promise<LoadedPack> {
  useHashing(env);
  const files = await packFiles(source);
  return await loadPack(files, packLoading(env));
}

/**
 * Read and check a pack's declaration (`reach.json`) exactly as a run does, and nothing else of the pack: for a host
 * deciding about a run before it starts (validated documents come from the platform's cache, as a run's do).
 * @param env the platform (its hashing and document cache)
 * @param files the pack's files
 * @returns the pack document (deprecated forms read as their current ones, defaults filled)
 * @throws ReachError `PACK_NOT_FOUND`, `PACK_MALFORMED`, `PROTO_VERSION_MISMATCH`, `PACK_INVALID_MANIFEST`
 * @example const { manifest } = await readPackDeclaration(defaultEnvironment(), files);
 */
export async function readPackDeclaration(env: EngineEnvironment, files: ReadonlyMap<string, Uint8Array>): Promise<Pack> {
  useHashing(env);
  return (await readPackDocument(files, env.documents)).pack;
}

/**
 * Run a pack to a terminal state and build its capsule: the one engine call every face uses.
 * @param env the platform's engines (QuickJS engine bytes, components)
 * @param request the pack and what to do with it
 * @returns the run: status, run hash, capsule bytes, run files
 * @throws ReachError for a pack or request that cannot run at all (`PACK_*`, `PROTO_*`, `PACK_INVALID_SIGNATURE`), or
 *   `POLICY_VIOLATION` for a plan calling an infrastructure tool outside `request.infraTools`; anything else the plan
 *   or the tools do ends in the run's status instead
 * @example
 * ```ts
 * import { defaultEnvironment, readPackFiles } from "../host/node.ts";
 * const run = await runEngine(defaultEnvironment(), { pack: { files: await readPackFiles("packs/hello") }, input: { text: "a b c" } });
 * console.log(run.status, run.runHash, run.capsule.name);
 * ```
 */
export async function runEngine(env: EngineEnvironment, request: EngineRunRequest): Promise<EngineRun> {
  const { loaded, trust, restricted } = await prepareRun(env, request);
  const record = await runPack({ loaded, restricted, env, ...runOptions(request) });
  return engineRun(record, loaded, trust, restricted, request);
}

/** Load the pack, check its signature and decide the executor (restricted unless trusted or `unrestricted`). */
async function prepareRun(env: EngineEnvironment, request: Pick<EngineRunRequest, "pack" | "trust" | "onProgress" | "secrets">): Promise<{ loaded: LoadedPack; trust: PackTrust; restricted: boolean }> {
  const loaded = await loadPackFrom(env, request.pack);
  // Every declared secret has a value before anything runs (no run, no capsule otherwise).
  checkSecretValues(loaded.pack.secrets ?? {}, request.secrets);
  const trust = packTrust(loaded, request.trust?.store ?? null);
  const restricted = !trust.trusted && request.trust?.unrestricted !== true;
  for (const message of loaded.warnings) request.onProgress?.({ kind: "warning", message });
  request.onProgress?.({ kind: "pack", id: loaded.pack.id, version: loaded.pack.version, trust, restricted });
  return { loaded, trust, restricted };
}

/** A caller's correlation id: 1–128 characters from A–Z a–z 0–9 . _ : - (it is recorded and shown everywhere). */
function checkRequestId(id: unknown): string {
  if (typeof id !== "string" || !/^[A-Za-z0-9._:-]{1,128}$/.test(id)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `the request id ${JSON.stringify(String(id).slice(0, 60))} is not 1-128 characters from A-Z a-z 0-9 . _ : -; pass a correlation id such as req-2026-001`);
  }
  return id;
}

/** The run options of an engine request (what `runPack` and sessions take besides the pack). */
function runOptions(request: EngineRunRequest): Omit<RunRequest, "loaded" | "env" | "restricted"> {
  return {
    ...(request.input === undefined ? {} : { input: request.input }),
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.approve === undefined ? {} : { approve: request.approve }),
    ...(request.approvals === undefined ? {} : { approvals: request.approvals }),
    trustStore: request.trust?.store ?? null,
    ...(request.maxSteps === undefined ? {} : { maxSteps: request.maxSteps }),
    ...(request.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: request.stepTimeoutMs }),
    ...(request.parallel === undefined ? {} : { parallel: request.parallel }),
    ...(request.requestId === undefined ? {} : { requestId: checkRequestId(request.requestId) }),
    ...(request.wallClock === undefined ? {} : { wallClock: request.wallClock }),
    ...(request.liveEvents === true ? { liveEvents: true } : {}),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.turn === undefined ? {} : { turn: request.turn }),
    ...(request.interrupted === undefined ? {} : { interrupted: request.interrupted }),
    ...(request.fetch === undefined ? {} : { fetch: request.fetch }),
    ...(request.secretValue === undefined ? {} : { secretValue: request.secretValue }),
    ...(request.secrets === undefined ? {} : { secrets: request.secrets }),
    ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
    ...(request.stopAt === undefined ? {} : { resume: resumeOf(request.stopAt) }),
    ...(request.infraTools === undefined ? {} : { infraTools: infraToolsOf(request.infraTools) }),
    ...(request.session === undefined ? {} : { session: checkSessionChain(request.session) }),
  };
}

/** `infraTools`, checked: infrastructure tool names only. */
function infraToolsOf(names: readonly string[]): readonly string[] {
  if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || !isInfraTool(n))) {
    throw new TypeError(`"infraTools" expected a list of infrastructure tool names (${INFRA_TOOL_NAMES.join(", ")}), got ${JSON.stringify(names)}`);
  }
  return Object.freeze([...names]);
}

/** `stopAt`, checked. */
function resumeOf(stopAt: NonNullable<EngineRunRequest["stopAt"]>): NonNullable<RunRequest["resume"]> {
  const signal: unknown = stopAt.signal;
  if (typeof signal !== "string" || signal === "") throw new ReachError("PROTO_INVALID_ARGUMENT", "stopAt needs a signal name");
  if ("atEnd" in stopAt && stopAt.atEnd === true) return { stops: new Map(), signal, atEnd: true };
  const { invocationId, fuel } = stopAt as { invocationId?: unknown; fuel?: unknown };
  if (typeof invocationId !== "string" || invocationId === "" || typeof fuel !== "string" || !/^\d{1,20}$/.test(fuel)) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", "stopAt needs an invocationId and a decimal fuel count, or atEnd: true");
  }
  return { stops: new Map([[invocationId, { fuel: BigInt(fuel), reason: "abort" as const }]]), signal };
}

/** The capsule and run files of a finished run. */
function engineRun(record: RunRecord, loaded: LoadedPack, trust: PackTrust, restricted: boolean, request: EngineRunRequest): EngineRun {
  const annex = request.annex?.({ runId: record.runId, runHash: record.runHash, status: record.status });
  const capsule = buildRunCapsule(record, loaded, undefined, request.key, annex);
  return {
    runId: record.runId,
    runHash: record.runHash,
    status: record.status,
    error: record.error,
    capsule: { name: capsuleFileName(record.runHash), bytes: capsule.bytes, signed: request.key !== undefined },
    files: runFiles(record),
    result: runResult(record),
    pack: { id: loaded.pack.id, version: loaded.pack.version, digest: loaded.packDigest, trust, restricted },
    warnings: [...record.warnings], // the pack's, then deprecated features the run used (seed 003 §9.2)
    ...(record.next === undefined ? {} : { next: record.next }),
  };
}

/** A session run in progress, as the engine call hands it out: its tools, its calls, and its capsule at the end. */
export type EngineSession = {
  /** The pack that runs and how far it is trusted. */
  readonly pack: EngineRun["pack"];
  /** The tools a caller may use (the pack's, then the infra tools). */
  tools(): SessionTool[];
  /** What the run may spend (the pack's `maxToolCalls` and `maxExecutionTime`). */
  readonly budget: SessionBudget;
  /** What the run's calls may reach (the pack's declared resources). */
  readonly scope: SessionScope;
  /** One call, checked, executed and recorded as a step (see `session.ts`). */
  call(tool: string, args: JsonValue): Promise<SessionCall>;
  /** The workspace's regular files now (path and size, sorted); read-only. */
  workspace(): WorkspaceFile[];
  /** A copy of one workspace file's bytes, or null when there is no such file. */
  readWorkspace(path: string): Uint8Array | null;
  /** The ended run, once a hard failure ended it; null while it runs. */
  readonly ended: EngineRun | null;
  /** End the session (COMPLETED, or ABORTED with `aborted`) and build its capsule. */
  close(aborted?: boolean): Promise<EngineRun>;
};

/**
 * Open a session run: a run whose steps arrive one at a time from outside (the MCP server's engine call).
 * @param env the platform's engines
 * @param request the pack and the run's options (`approve` and `maxSteps` do not apply: there is no plan)
 * @returns the session
 * @throws ReachError for a pack that cannot run at all (`PACK_*`, `PROTO_*`, `PACK_INVALID_SIGNATURE`)
 * @example
 * ```ts
 * import { defaultEnvironment, readPackFiles } from "../host/node.ts";
 * const session = await openSession(defaultEnvironment(), { pack: { files: await readPackFiles("packs/hello") } });
 * const answer = await session.call("wordcount", { text: "a b c" });
 * const run = await session.close(); // run.capsule.bytes holds the calls as the capsule's plan
 * console.log(answer.ok, run.status);
 * ```
 */
export async function openSession(env: EngineEnvironment, request: EngineRunRequest): Promise<EngineSession> {
  const { loaded, trust, restricted } = await prepareRun(env, request);
  const session = Session.open({ loaded, restricted, env, ...runOptions(request) });
  let ended: EngineRun | null = null;
  const settle = (): EngineRun | null => {
    if (ended === null && session.ended !== null) ended = engineRun(session.ended, loaded, trust, restricted, request);
    return ended;
  };
  return {
    pack: { id: loaded.pack.id, version: loaded.pack.version, digest: loaded.packDigest, trust, restricted },
    tools: () => session.tools(),
    budget: session.budget(),
    scope: session.scope(),
    workspace: () => session.workspaceFiles(),
    readWorkspace: (path) => session.readWorkspaceFile(path),
    call: async (tool, args) => {
      const answer = await session.call(tool, args);
      settle();
      return answer;
    },
    get ended() {
      return settle();
    },
    close: async (aborted = false) => {
      // A signal that came while the last call held the thread is handled before the session decides how it ends.
      if (!aborted && request.signal !== undefined && !request.signal.aborted) await (request.turn ?? ((last) => turnLoop(env, last)))(true);
      await session.close(aborted);
      return settle()!;
    },
  };
}
