/**
 * What a run is asked to do and what it leaves behind.
 * @module
 */
import type { StopPoint } from "../sandbox/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { SandboxApiLevel, SecretValues } from "../sandbox/mod.ts";
import type { StoredArtifact } from "../sandbox/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import type { SnapshotEntry } from "../sandbox/mod.ts";
import type { RecordedEvent } from "../ledger/mod.ts";
import type { TapePlayer } from "../record/mod.ts";
import type { TapeRecorder } from "../record/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import type { RunEvidence } from "../protocol/mod.ts";
import type { Blueprint } from "../protocol/mod.ts";
import type { LoadedPack } from "./pack.ts";
import type { EngineEnvironment } from "./runners.ts";
import type { TrustStore } from "../trust/mod.ts";
import type { CapabilityAudit } from "../policy/mod.ts";
import type { DeprecationNotice } from "../protocol/mod.ts";
import type { Branch } from "./branch-types.ts";

/** Where an abort was noticed outside any invocation (recorded in `run.aborted` as `abortedAt`). */
export type AbortPoint = { phase: "planning"; attempt: number } | { phase: "executing"; stepIndex: number };

/** What a replay is told about the recorded run's stops (read from its events: `replay.ts`). */
export type ReplayDirectives = {
  /** Invocations (tools and planners) a signal or the watchdog stopped, with their fuel counts. */
  stops: ReadonlyMap<string, StopPoint>;
  /** An abort noticed outside any invocation. */
  abortedAt: AbortPoint | null;
  /** The recorded signal name of an aborted run. */
  signal: string | null;
  /**
   * Whether the recorded capsule holds the run document (`run.json`) and the per-step `TASK_<id>.json` entries;
   * capsules made before they existed replay without them, so they keep their run hash. Absent: true.
   */
  runDocument?: boolean;
  /**
   * Whether the recorded run's `result.json` holds the capability audit (seed 003 §4.2); capsules made before the
   * audit existed replay without it, so they keep their run hash. Absent: true.
   */
  audit?: boolean;
  /**
   * Whether the recorded `EXECUTION_HEADER.json` and `TASK_<id>.json` carry seed 001's execution fields (`plan_path`,
   * `plan_sha256`, `state`; `task_id`, `status`, `started_at_utc`, `ended_at_utc`: `task-files.ts`); capsules made
   * before them replay without them, so they keep their run hash. Absent: true.
   */
  executionFields?: boolean;
};

/**
 * Real times of a run (ms since the Unix epoch, from the platform's wall clock; never hashed), and of each step that
 * ran (`steps`, by step id: the run files' `TASK_<id>.json`).
 */
export type RealTimes = { createdAt: number; startedAt: number | null; completedAt: number; steps?: Record<string, { startedAt: number; endedAt: number }> };

/** The three terminal states (seed 003 §3.1). */
export type RunStatus = "COMPLETED" | "FAILED" | "ABORTED";
/** Every state a run passes through (seed 003 §3.1; ARCHITECTURE "State machines"). */
export type RunPhase = "PENDING" | "PREPARING" | "EXECUTING" | RunStatus;

/** Progress reports for the CLI (stderr), never part of the run's hashed record. */
export type RunProgress =
  | { kind: "pack"; id: string; version: string; trust: { signed: boolean; trusted: boolean; publicKey: string | null; keyName: string | null }; restricted: boolean }
  | { kind: "warning"; message: string }
  | { kind: "planning"; attempt: number }
  | { kind: "planned"; planId: string; steps: number; planHash: string }
  | { kind: "step"; index: number; total: number; stepId: string; tool: string; status: "started" }
  /** `fuel`: the fuel the step's tool used (decimal). */
  | { kind: "step"; index: number; total: number; stepId: string; tool: string; status: "completed" | "failed"; durationMs: number; fuel?: string; code?: string }
  | { kind: "replan"; attempt: number; reason: string }
  /** A hashed event as it is appended (only with `liveEvents`; `live-events.ts` maps it to seed 004's stream). */
  | { kind: "event"; event: { type: string; sequence: number; timestamp: string; eventHash: string; runId: string; payload: Record<string, unknown> } };

/**
 * The run's state right after one step was written into it (`RunRequest.observeStep`): the workspace (regular files'
 * bytes and symbolic links' targets, by path) and the memory store (`[key, canonical value text]`, sorted by key).
 * The byte arrays are the run's own: read them, never change them.
 */
export type ObservedStep = {
  /** The step's id (a tool step's, or a recorded replan's). */
  stepId: string;
  /** Its `stepIndex` (its place among the run's `run.step.started` events, from 0). */
  stepIndex: number;
  workspace: { files: ReadonlyMap<string, Uint8Array>; links: ReadonlyMap<string, string> };
  memory: readonly (readonly [string, string])[];
};

/** A run request. */
export type RunRequest = {
  /** The loaded pack. */
  loaded: LoadedPack;
  /** The run input / objective (default `{}`). */
  input?: JsonValue;
  /** Decimal seed 0..2^64-1 (default: derived from the input hash). */
  seed?: string;
  /** Explicit approval of a risk-3 plan (`--approve`). */
  approve?: boolean;
  /**
   * The caller's correlation id (seed 004 `requestId`; `--request-id`): recorded in `request.json`, the evidence and
   * `run.json`. Default: derived from the run id.
   */
  requestId?: string;
  /** Signed approval records of a risk-3 plan (`--approval FILE`; `src/trust/approval.ts`). */
  approvals?: readonly unknown[];
  /** The trust store whose keys' approvals count. */
  trustStore?: TrustStore | null;
  /** Plan step limit (default: the pack's `run.maxSteps`, else 10). */
  maxSteps?: number;
  /**
   * How many independent steps may run at once (`step-graph.ts`; default 1). On step threads when the platform gives
   * them (`EngineEnvironment.stepThreads`); the record is the same for every value.
   */
  parallel?: number;
  /** Per-step watchdog in ms when the plan does not set one (default 30 s). */
  stepTimeoutMs?: number;
  /** Run in the restricted executor (untrusted pack). */
  restricted?: boolean;
  /** Aborts the run (SIGINT/SIGTERM): it ends ABORTED with its terminal event written. */
  signal?: AbortSignal;
  /** How the run lets the event loop turn at its checks (default the environment's `turn`: `EngineEnvironment.turn`). */
  turn?: (last?: boolean) => Promise<void>;
  /**
   * Whether the run was aborted, read at every fuel refill while a tool computes (in a worker: a word of shared
   * memory the main thread sets on a signal, so the stop lands while the tool holds the thread). Default: `signal`.
   */
  interrupted?: () => boolean;
  /** `session`: the steps arrive from outside (`session.ts`); recorded in `request.json` so replay walks them alike. */
  mode?: "session";
  /**
   * A session run's place in its session's chain of runs (`session.ts`): recorded in `request.json` (so the run hash
   * commits to it); a run after the first starts from the workspace and memory its previous run ended with.
   */
  session?: SessionChain;
  /**
   * The value-commitment scheme (`request.json` `commitments`, conformance/HASHING.md "Value commitments"): salted
   * (the default) or `null` for the legacy unsalted form a capsule recorded before it asks for on replay.
   */
  commitments?: "salted-v1" | null;
  /** Replay: the recorded stops to reproduce (`replay.ts` reads them from the capsule's events). */
  replay?: ReplayDirectives;
  /**
   * A fork or a resume of a recorded run (`branch.ts`): its lineage (in `request.json`), the changes from its branch
   * point on and, while it is made, the parent's tape for the steps before that point.
   */
  branch?: Branch;
  /**
   * Stop these invocations at these fuel counts, as aborted by `signal` (a run started again after an earlier attempt
   * of it was stopped there by that signal: `EngineRunRequest.stopAt`). Recorded like any stop, so replay repeats it.
   */
  resume?: { stops: ReadonlyMap<string, StopPoint>; signal: string; atEnd?: boolean };
  /** The fetch for `http.fetch` (default: none, so network calls fail). */
  fetch?: FetchLike;
  /**
   * The value of a declared secret by name, for `{{secret:NAME}}` in an MCP server's `env` (substituted when the
   * server starts; scrubbed back to the placeholder from everything it answers). Default: none.
   */
  secretValue?: (name: string) => string | undefined;
  /**
   * The values of the pack's declared secrets, by name (`EngineRunRequest.secrets`): held in memory for this run
   * only, never recorded. Ignored in a replay (`player`), which needs none.
   */
  secrets?: SecretValues;
  /**
   * The sandbox API level the run's js and python tools get (`SandboxApiLevel`): default the current one
   * (`SANDBOX_API_LEVEL`) for a new run; a replay, fork or resume passes the level its capsule recorded.
   */
  sandboxApi?: SandboxApiLevel;
  /** Replay: answer from this tape instead of the network (seed 003 §3.4). */
  player?: TapePlayer;
  /** Progress callback. */
  onProgress?: (p: RunProgress) => void;
  /**
   * Called after each step is written into the run (in the record's order, whatever ran at the same time), with the
   * workspace and the memory store as the run stands then (`step-observer.ts`). Never part of the record.
   */
  observeStep?: (step: ObservedStep) => void;
  /**
   * The wall clock (ms since the Unix epoch) for the real times of the run files' `run.json` and the live event stream;
   * never hashed (default the real clock's `epochMs`, `src/determinism/real-clock.ts`).
   */
  wallClock?: () => number;
  /** Report each hashed event through `onProgress` as it is appended (`run --events`). */
  liveEvents?: boolean;
  /** The platform's engines. */
  env: EngineEnvironment;
  /**
   * The infrastructure tools (`infra-tools.ts`) the run may call; default every one. A plan (static, planned or
   * replanned) naming another ends the run before that plan runs, with no record: `runPack` throws the
   * `POLICY_VIOLATION` (`InfraRefused`, `run-stops.ts`); a session call naming one is refused unrecorded.
   */
  infraTools?: readonly string[];
};

/**
 * Where a session run stands in its MCP session (conformance/HASHING.md "Session chains"): the session is a chain of
 * runs, each a capsule of its own. The first run starts from the pack's workspace and an empty memory store; a run
 * after a run that ended starts from that run's final workspace (regular files and symbolic links) and memory, and
 * names its run hash.
 */
export type SessionChain = {
  /** 1 for the session's first run, then 2, 3, … */
  readonly segment: number;
  /** The run hash of the run before this one (null for the first). */
  readonly previousRunHash: string | null;
  /** The workspace this run starts from (absent for the first run: the pack's own). */
  readonly workspace?: { readonly files: ReadonlyMap<string, Uint8Array>; readonly links: ReadonlyMap<string, string> };
  /** The memory store this run starts from: `[key, canonical value text]`, sorted by key (empty for the first run). */
  readonly memory: readonly (readonly [string, string])[];
};

/** The execution header (seed 001 §6–§7: the plan hash lock and what the run was bound to). */
export type ExecutionHeader = {
  contract_version: "S2-B-06.v1";
  run_id: string;
  pack_id: string;
  pack_version: string;
  manifest_hash: string;
  input_hash: string;
  seed: string;
  epoch: string;
  restricted: boolean;
  plan_id: string | null;
  plan_hash: string | null;
  approved_by: "cli" | "record" | null;
  phases: RunPhase[];
  /**
   * Seed 001 §6–§7 (absent in capsules made before them): the plan file the run read — the pack's static plan
   * (`pack/<entrypoint>`), else the capsule's `plan.json` — and the SHA-256 of its bytes (null when there is none);
   * `state`, where seed 001 §5's machine ended (`COMPLETED` or `FAILED`; an aborted run is FAILED).
   */
  plan_path?: string | null;
  plan_sha256?: string | null;
  state?: "COMPLETED" | "FAILED";
};

/** Everything a finished run produced. */
export type RunRecord = {
  runId: string;
  status: RunStatus;
  runHash: string;
  /** The error that ended a FAILED or ABORTED run. */
  error: ReachError | null;
  events: readonly RecordedEvent[];
  evidence: RunEvidence[];
  /** Committed artifacts with their bytes. */
  artifacts: readonly StoredArtifact[];
  /** The plan that ran last, and its hash. */
  plan: Blueprint | null;
  planHash: string | null;
  header: ExecutionHeader;
  inputHash: string;
  input: JsonValue;
  seed: string;
  /** Outputs of completed steps by step id (the run's output; its hash is committed in run.completed). */
  outputs: JsonObject;
  /** Each completed step's salted output commitment (absent for a run in the legacy unsalted form). */
  outputCommits?: Record<string, string>;
  tape: TapeRecorder;
  workspaceBefore: SnapshotEntry[];
  workspaceAfter: SnapshotEntry[];
  /** Workspace file contents (after the run) by path. */
  workspaceFiles: Map<string, Uint8Array>;
  /** The workspace's symbolic links (after the run): path → target. */
  workspaceLinks?: Map<string, string>;
  warnings: string[];
  /** What the run used of what its pack declared (seed 003 §4.2), also in the capsule's `result.json`. */
  capabilityAudit?: CapabilityAudit;
  /** Deprecated features the run used (seed 003 §9.2), also in the capsule's `result.json`; absent when none. */
  deprecations?: DeprecationNotice[];
  /** The capsule's body (every entry but the events, index, proof and annex); its digest is the terminal event's `contents`. */
  body: Map<string, Uint8Array>;
  /** The run's correlation id (seed 004). */
  requestId: string;
  /** Real times of the run (never hashed). */
  realTimes: RealTimes;
  /** False when a replay of a capsule made before `run.json` and `TASK_<id>.json` existed left them out. */
  runDocument?: false;
  /** A session run's link for the run that continues its session: its workspace and memory as it ended. */
  next?: SessionChain;
};

/** Prefix of step ids the coordinator reserves for its own steps (replans). */
export const RESERVED_STEP_PREFIX = "reach.";
