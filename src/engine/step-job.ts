/**
 * One step's invocation as a self-contained job, so that it can run on another thread (`EngineEnvironment.
 * stepThreads`) or on this one with exactly the same result: the job carries everything the invocation may see —
 * the workspace, memory store and artifact counts its dependencies left (`step-graph.ts`), its clock's start, its
 * budgets, its recorded stop point and, in a replay, its part of the tape — and the result carries everything it
 * did: its execution record, its own tape segment (seqs from 0), its workspace delta, its memory writes and its
 * artifacts. The coordinator puts results together in plan order (`generation.ts`), so nothing in a run depends on
 * which thread ran what, or when.
 *
 * Everything crosses by structured clone; errors cross as their details and are rebuilt, also on this thread, so
 * both ways give identical records.
 * @module
 */
import { VirtualClock } from "../determinism/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import type { ExecutionEnvelope, ExecutionResult } from "../protocol/mod.ts";
import type { ArtifactInfo } from "../protocol/mod.ts";
import type { CapabilityPolicy } from "../policy/mod.ts";
import { errorFromDetails, TapePlayer } from "../record/mod.ts";
import { TapeRecorder } from "../record/mod.ts";
import type { TapeOutcome, TapeRecord } from "../record/mod.ts";
import type { StoredArtifact } from "../sandbox/mod.ts";
import { ArtifactSink } from "../sandbox/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import { MemoryStore } from "../sandbox/mod.ts";
import { SecretBox } from "../sandbox/mod.ts";
import type { SecretSpec } from "../sandbox/mod.ts";
import type { StopReason } from "../sandbox/mod.ts";
import type { ModuleIdentity, SandboxApiLevel, ToolRunner } from "../sandbox/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";
import { Workspace, workspaceDelta } from "../sandbox/mod.ts";
import type { StepTransaction, WorkspaceDelta, WorkspaceImage } from "../sandbox/mod.ts";
import { executeEnvelope } from "./executor.ts";
import type { StepExecution } from "./executor.ts";
import type { PackTool } from "./pack.ts";
import type { McpSessions } from "../sandbox/mod.ts";

/** What one invocation needs, whatever thread runs it. */
export type StepJob = {
  /** The run (a thread keeps runners per run). */
  readonly runId: string;
  readonly seed: string;
  readonly epochMs: number;
  /** The pack's manifest and the executor mode: the policy is made from them on another thread. */
  readonly manifest: unknown;
  readonly restricted: boolean;
  /** The roots to preopen for WASI tools, or null without the filesystem permission. */
  readonly roots: readonly string[] | null;
  readonly tool: PackTool;
  readonly envelope: ExecutionEnvelope;
  readonly returnSpec: Record<string, unknown>;
  readonly invocationId: string;
  /** The workspace, memory entries and artifact counts the step's dependencies left. */
  readonly workspace: WorkspaceImage;
  readonly memory: readonly (readonly [string, string])[];
  readonly artifactsUsed: { readonly count: number; readonly bytes: number };
  /** Where the invocation's clock starts (ms). */
  readonly clockStartMs: number;
  /** Fuel the run's budget leaves this step (decimal). */
  readonly runFuelLeft: string;
  /** Tape room the step's dependencies left. */
  readonly tapeRoom: { readonly records: number; readonly blobBytes: number };
  /** Replay: the recorded stop point of this invocation. */
  readonly stopAt: { readonly fuel: string; readonly reason: StopReason } | null;
  readonly watchdogFactor: number;
  /** Whether the run gives tools the network (on another thread: the runtime's fetch; the policy still decides). */
  readonly network: boolean;
  /**
   * The run's secrets: the pack's declarations and, live, the caller's values (in memory only: a job is never
   * written anywhere; `../sandbox/host/secrets.ts`).
   */
  readonly secrets: SecretSpec;
  /** The run's sandbox API level (js and python tools' `reach`). */
  readonly sandboxApi: SandboxApiLevel;
  /** Replay: this invocation's part of the tape. */
  readonly player: { readonly records: readonly TapeRecord[]; readonly blobs: readonly (readonly [string, Uint8Array])[] } | null;
  /** A fork's step: host calls (1-based numbers) answered with these outcomes instead of running (`branch.ts`). */
  readonly answers?: readonly (readonly [number, TapeOutcome])[] | null;
};

/** A step execution as it crosses: errors as details, fuel as a decimal. */
export type WireExecution = Omit<StepExecution, "toolError" | "stepError" | "violation" | "fuelUsed" | "hostCalls"> & {
  toolError: ErrorDetails | null;
  stepError: ErrorDetails | null;
  violation: ErrorDetails | null;
  fuelUsed: string;
};

/** What one invocation did. */
export type StepJobResult = {
  readonly exec: WireExecution;
  /** The invocation's tape segment (seqs from 0) and its blobs. */
  readonly tape: { readonly records: readonly TapeRecord[]; readonly blobs: readonly (readonly [string, Uint8Array])[] };
  /** Its committed workspace changes (null when it committed nothing). */
  readonly workspace: WorkspaceDelta | null;
  /** Its committed memory writes (`[key, canonicalValueText]`). */
  readonly memory: readonly (readonly [string, string])[];
  readonly artifacts: readonly StoredArtifact[];
  /** Where the invocation's clock stood at the end (ms). */
  readonly clockEndMs: number;
  /** Replay: tape records it played. */
  readonly played: number;
};

/**
 * Step threads, as the platform provides them (`EngineEnvironment.stepThreads`): jobs run there at the same time.
 * A job whose signal aborts stops at its tool's next fuel refill (its result is then never used).
 */
export type StepPool = {
  /** Run a job on a free thread (queued while all are busy). */
  run(job: StepJob, signal: AbortSignal): Promise<StepJobResult | null>;
  /** Stop the threads. */
  close(): void;
};

/** What the thread running a job provides. */
export type StepJobContext = {
  readonly policy: CapabilityPolicy;
  readonly runnerFor: (tool: PackTool, step: StepTransaction) => Promise<ToolRunner>;
  readonly fetch?: FetchLike;
  /** The run's MCP connections (MCP steps run on the engine's thread only). */
  readonly mcp?: McpSessions;
  readonly signal?: AbortSignal;
  readonly interrupted?: () => boolean;
  /** The real clock in ms (`EngineEnvironment.clock`): durations and the watchdog, never hashed. */
  readonly now?: () => number;
};

function wireExecution(x: StepExecution): WireExecution {
  const { toolError, stepError, violation, fuelUsed, hostCalls: _hostCalls, ...rest } = x;
  return { ...rest, toolError: toolError?.toDetails() ?? null, stepError: stepError?.toDetails() ?? null, violation: violation?.toDetails() ?? null, fuelUsed: fuelUsed.toString() };
}

/**
 * A step execution back from its wire form (the host-call digest comes from the run's tape, once the segment is in).
 * @param w the wire form
 * @param hostCalls the invocation's host calls on the run's tape
 * @returns the execution record
 * @example const exec = unwireExecution(result.exec, tape.invocationDigest(result.exec.invocationId));
 */
export function unwireExecution(w: WireExecution, hostCalls: StepExecution["hostCalls"]): StepExecution {
  const err = (d: ErrorDetails | null) => (d === null ? null : errorFromDetails(d));
  return { ...w, toolError: err(w.toolError), stepError: err(w.stepError), violation: err(w.violation), fuelUsed: BigInt(w.fuelUsed), hostCalls, result: w.result as ExecutionResult, artifacts: w.artifacts as ArtifactInfo[], module: w.module as ModuleIdentity | null, toolOutput: w.toolOutput as JsonObject | null };
}

/**
 * Run one job (on whichever thread).
 * @param job the job
 * @param ctx the runners, policy and stops of the thread
 * @returns what the invocation did
 * @example const result = await runStepJob(job, { policy, runnerFor });
 */
export async function runStepJob(job: StepJob, ctx: StepJobContext): Promise<StepJobResult> {
  const workspace = Workspace.fromImage(job.workspace);
  const base = workspace.image().state;
  const memory = MemoryStore.fromEntries(job.memory);
  const artifacts = new ArtifactSink({ used: job.artifactsUsed });
  const tape = new TapeRecorder({ maxRecords: Math.max(1, job.tapeRoom.records), maxBlobBytes: Math.max(1, job.tapeRoom.blobBytes) });
  const clock = new VirtualClock(job.epochMs).fork(job.clockStartMs);
  const player = job.player === null ? undefined : new TapePlayer(job.player.records, new Map(job.player.blobs), { segment: true });
  const runFuelLeft = BigInt(job.runFuelLeft);
  const exec = await executeEnvelope(job.envelope, job.tool, job.returnSpec, {
    seed: job.seed,
    policy: ctx.policy,
    workspace,
    memory,
    artifacts,
    tape,
    clock,
    runnerFor: ctx.runnerFor,
    runFuelLeft: () => runFuelLeft,
    watchdogFactor: job.watchdogFactor,
    ...(job.stopAt === null ? {} : { stopPoints: new Map([[job.invocationId, { fuel: BigInt(job.stopAt.fuel), reason: job.stopAt.reason }]]) }),
    ...(ctx.interrupted === undefined ? {} : { interrupted: ctx.interrupted }),
    ...(ctx.now === undefined ? {} : { now: ctx.now }),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    ...(ctx.fetch === undefined ? {} : { fetch: ctx.fetch }),
    ...(ctx.mcp === undefined ? {} : { mcp: ctx.mcp }),
    ...(player === undefined ? {} : { player }),
    ...(job.answers === undefined || job.answers === null ? {} : { answers: new Map(job.answers) }),
    secrets: SecretBox.from(job.secrets),
    sandboxApi: job.sandboxApi,
  }, job.invocationId);
  const after = workspace.image().state;
  const viewMemory = new Map(job.memory);
  return {
    exec: wireExecution(exec),
    tape: { records: tape.records, blobs: [...tape.blobs] },
    workspace: after === base ? null : workspaceDelta(base, after),
    memory: memory.entries().filter(([k, text]) => viewMemory.get(k) !== text),
    artifacts: artifacts.artifacts,
    clockEndMs: exec.clockEndMs,
    played: player?.played ?? 0,
  };
}
