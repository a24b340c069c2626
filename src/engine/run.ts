/**
 * One run's state and its phases (seed 003 §3.1; ARCHITECTURE "Data flow"): `Run.prepare` (PENDING → PREPARING:
 * input hash, seed, workspace, policy, runners), `plan` (a planner call, gated), `start` (`run.started`),
 * `execute` (one step: budgets, envelope, events, evidence), and `finish` (the terminal event and the record).
 * The coordinator (`coordinator.ts`) walks a plan with these phases; a session run (`session.ts`) feeds them steps
 * that arrive from outside.
 *
 * Stops: the run's abort (a signal, an interrupt word), a step's wall-clock watchdog and a planner's are noticed at
 * a fuel refill or while a tool waits for the host (`src/sandbox/stops.ts`), between steps, or before planning. Each
 * one is recorded where replay can find it: the stopped invocation's fuel count (`stops` of the terminal event) and,
 * for an abort outside any invocation, the place it was noticed (`abortedAt` of `run.aborted`). A replay is given
 * them back as {@link ReplayDirectives} and stops at the same points.
 * @module
 */
import { deriveId } from "../canonical/ids.ts";
import { hashCanonical } from "../canonical/jcs.ts";
import { parseIsoMillis, VirtualClock } from "../determinism/clock.ts";
import { parseSeed } from "../determinism/prng.ts";
import { EventLog } from "../ledger/event-log.ts";
import { capabilityPolicy, workspaceResources } from "../policy/capabilities.ts";
import type { CapabilityPolicy } from "../policy/capabilities.ts";
import { auditCapabilities, changedPaths } from "../policy/audit.ts";
import type { CapabilityAudit } from "../policy/audit.ts";
import { ExecutionEnvelopeSchema } from "../protocol/envelope.ts";
import { planDeprecations } from "../protocol/deprecations.ts";
import type { DeprecationNotice } from "../protocol/deprecations.ts";
import { ReachError, toReachError } from "../protocol/errors.ts";
import type { RunEvidence } from "../protocol/evidence.ts";
import { parseOrThrow } from "../protocol/parse.ts";
import type { PlanStep } from "../protocol/plan.ts";
import { TapeRecorder } from "../record/tape.ts";
import type { StopPoint } from "../sandbox/fuel/mod.ts";
import { ArtifactSink } from "../sandbox/host/artifact-sink.ts";
import { MemoryStore } from "../sandbox/host/memory-store.ts";
import { DEFAULT_TIMEOUT_MS } from "../sandbox/types.ts";
import type { JsonObject, JsonValue } from "../sandbox/types.ts";
import { Workspace } from "../sandbox/workspace/workspace.ts";
import { snapshotDigest } from "../sandbox/workspace/workspace.ts";
import type { SnapshotEntry } from "../sandbox/workspace/workspace.ts";
import { capsuleBody, contentsDigest } from "../capsule/run-capsule.ts";
import { utf8 } from "../canonical/sha256.ts";
import type { CapsuleRequest } from "./capsule.ts";
import { resolveArguments } from "./arguments.ts";
import { executeEnvelope, FUEL_PER_MS, invocationIdOf } from "./executor.ts";
import type { ExecutorRunState, StepExecution } from "./executor.ts";
import { DEFAULT_MAX_STEPS, gatePlanAsync } from "./plan-gate.ts";
import type { GatedPlan } from "./plan-gate.ts";
import { makePlan, plannerContext, plannerInvocationId } from "./planner.ts";
import type { ReplanContext } from "./planner.ts";
import { runRunners } from "./runners.ts";
import { INFRA_TOOL_NAMES, infraTool } from "./infra-tools.ts";
import { recordPlanViolation, recordStep, stepEvidence, terminalReason } from "./step-events.ts";
import type { ExecutionHeader, RunPhase, RunRecord, RunRequest, RunStatus } from "./types.ts";

/** The default virtual epoch (ARCHITECTURE "Determinism"). */
export const DEFAULT_EPOCH = "1970-01-01T00:00:00.000Z";
/** Prefix of step ids the coordinator reserves for its own steps (replans). */
export const RESERVED_STEP_PREFIX = "reach.";

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
   * Whether the recorded run's `result.json` holds the capability audit (seed 003 §4.2); capsules made before the
   * audit existed replay without it, so they keep their run hash. Absent: true.
   */
  audit?: boolean;
};

/** One recorded stop: the invocation and its stop point. */
type RecordedStop = { invocationId: string; reason: StopPoint["reason"]; fuel: number | string };

/** The run was aborted; thrown out of a phase to the coordinator, which ends the run ABORTED. */
export class Aborted extends Error {
  constructor(readonly at: AbortPoint | null) {
    super("aborted");
  }
}

/** The seed of a run: `--seed`, else the first 64 bits of the input hash (decimal). */
export function runSeed(inputHash: string, seed?: string): string {
  return seed === undefined ? BigInt(`0x${inputHash.slice(0, 16)}`).toString() : parseSeed(seed);
}

/** The stop point an error records (`reason` aborted/watchdog with a `fuel` count), or null. */
function stopOf(error: ReachError | null): Omit<RecordedStop, "invocationId"> | null {
  const d = error?.details;
  if (d === undefined || (d["reason"] !== "aborted" && d["reason"] !== "watchdog")) return null;
  const fuel = d["fuel"];
  if (typeof fuel !== "number" && typeof fuel !== "string") return null;
  return { reason: d["reason"] === "aborted" ? "abort" : "watchdog", fuel };
}

/** One run, phase by phase (see the module notes). */
export class Run {
  readonly runId: string;
  readonly seed: string;
  readonly epoch: string;
  readonly epochMs: number;
  readonly input: JsonValue;
  readonly inputHash: string;
  readonly restricted: boolean;
  readonly log: EventLog;
  readonly policy: CapabilityPolicy;
  readonly workspace: Workspace;
  readonly workspaceBefore: SnapshotEntry[];
  /** `request.json`: what the run was asked (replay asks it again); its hash is in `run.started`. */
  readonly requestDoc: CapsuleRequest;
  readonly tape = new TapeRecorder();
  readonly memory = new MemoryStore();
  readonly artifacts = new ArtifactSink();
  readonly maxSteps: number;
  readonly phases: RunPhase[] = ["PENDING"];
  readonly evidence: RunEvidence[] = [];
  readonly outputs: JsonObject = {};
  readonly usedStepIds = new Set<string>();
  readonly stops: RecordedStop[] = [];
  gated: GatedPlan | null = null;
  stepIndex = 0;
  toolCalls = 0;
  fuelSpent = 0n;
  failedStep: string | undefined;
  /** Deprecated features the run used (seed 003 §9.2). */
  readonly deprecations: DeprecationNotice[] = [];
  /** The post-execution capability audit (seed 003 §4.2), made when the run terminates. */
  capabilityAudit: CapabilityAudit | null = null;
  readonly #request: RunRequest;
  readonly #runners: ReturnType<typeof runRunners>;
  readonly #state: ExecutorRunState;

  private constructor(request: RunRequest) {
    const { loaded } = request;
    this.#request = request;
    this.input = request.input ?? {};
    this.inputHash = hashCanonical(this.input);
    this.seed = runSeed(this.inputHash, request.seed);
    this.epoch = loaded.pack.run?.epoch ?? DEFAULT_EPOCH;
    this.epochMs = parseIsoMillis(this.epoch);
    this.restricted = request.restricted === true;
    this.runId = deriveId("reach-wasm/run", loaded.packDigest, this.inputHash, this.seed);
    const clock = new VirtualClock(this.epochMs);
    this.log = new EventLog({ runId: this.runId, clock });
    this.policy = capabilityPolicy(loaded.pack.manifest, { restricted: this.restricted });
    // WASI tools reach the workspace through preopens, not through the host API's checks, so the workspace itself
    // enforces what the policy allows: without the filesystem permission nothing is preopened (runRunners), and in
    // the restricted executor or with sandbox.filesystem "readonly" every declared root is read-only (temp/ stays
    // writable).
    const readOnly = this.policy.restricted || this.policy.filesystemReadonly;
    const resources = workspaceResources(this.policy, loaded.workspaceFiles).map((r) => (readOnly ? { ...r, access: "read" as const } : r));
    this.workspace = Workspace.fromResources(resources);
    this.workspaceBefore = this.workspace.snapshot();
    this.requestDoc = {
      input: this.input,
      seed: this.seed,
      approve: request.approve === true,
      restricted: this.restricted,
      maxSteps: request.maxSteps ?? null,
      stepTimeoutMs: request.stepTimeoutMs ?? null,
      ...(request.mode === "session" ? { mode: "session" as const } : {}),
      ...(request.approvals === undefined || request.approvals.length === 0 ? {} : { approvals: [...request.approvals] }),
    };
    const filesystem = this.policy.permissions.has("filesystem");
    this.#runners = runRunners(request.env, filesystem ? this.policy.workspaceRoots.map((r) => r.root) : null);
    this.maxSteps = request.maxSteps ?? loaded.pack.run?.maxSteps ?? DEFAULT_MAX_STEPS;
    const maxFuel = BigInt(loaded.pack.manifest.policies.maxExecutionTime) * FUEL_PER_MS;
    this.#state = {
      seed: this.seed,
      policy: this.policy,
      workspace: this.workspace,
      memory: this.memory,
      artifacts: this.artifacts,
      tape: this.tape,
      clock,
      runnerFor: this.#runners.runnerFor,
      interrupted: () => this.interrupted(),
      runFuelLeft: () => maxFuel - this.fuelSpent,
      ...(request.replay === undefined ? {} : { stopPoints: request.replay.stops, watchdogFactor: 10 }),
      ...(request.fetch === undefined ? {} : { fetch: request.fetch }),
      ...(request.player === undefined ? {} : { player: request.player }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    };
    for (const d of loaded.deprecations ?? []) this.noteDeprecation(d); // seed 003 §9.2: the pack's, before the plan's
  }

  /**
   * PENDING → PREPARING: the run's identity, seed, workspace, policy and sandboxes.
   * @param request the pack and what to do with it
   * @returns the run
   */
  static prepare(request: RunRequest): Run {
    const run = new Run(request);
    run.phases.push("PREPARING");
    return run;
  }

  /** The request this run serves. */
  get request(): RunRequest {
    return this.#request;
  }

  /** Whether the run was aborted (a signal or the interrupt word; never in a replay, which follows its directives). */
  interrupted(): boolean {
    if (this.#request.replay !== undefined) return false;
    return this.#request.signal?.aborted === true || this.#request.interrupted?.() === true;
  }

  /**
   * Throw {@link Aborted} when the run must stop here: it was aborted, or a replay reached its recorded abort point.
   * @param at where the run is
   */
  checkAbort(at: AbortPoint): void {
    const recorded = this.#request.replay?.abortedAt;
    const replayed = recorded !== undefined && recorded !== null && recorded.phase === at.phase &&
      (at.phase === "planning" ? recorded.phase === "planning" && recorded.attempt === at.attempt : recorded.phase === "executing" && recorded.stepIndex === at.stepIndex);
    if (replayed || this.interrupted()) throw new Aborted(at);
  }

  /**
   * Ask the planner for a plan and gate it (seed 001 §4), checking step ids against those already used.
   * @param replan the replan state, when replanning
   * @returns the gated plan
   * @throws Aborted when the run was aborted before or while the planner ran
   * @throws ReachError `PLAN_*` when the planner fails or the gate refuses the plan
   */
  async plan(replan?: ReplanContext): Promise<GatedPlan> {
    const { loaded } = this.#request;
    const attempt = replan?.attempt ?? 0;
    this.checkAbort({ phase: "planning", attempt });
    this.#request.onProgress?.({ kind: "planning", attempt });
    const context = plannerContext(loaded, this.maxSteps, replan);
    const invocationId = plannerInvocationId(loaded, this.seed, attempt);
    let document: unknown;
    try {
      document = await makePlan({
        loaded,
        request: { context, objective: this.input, seed: this.seed },
        epochMs: this.epochMs,
        quickjs: this.#runners.quickjs,
        fuelPerMs: FUEL_PER_MS,
        state: this.#state,
      });
    } catch (err) {
      const e = toReachError(err, "PLAN_PLANNER_FAILED");
      const stop = stopOf(e.code === "EXEC_ABORTED" ? e : (e.cause as ReachError | undefined) ?? null);
      if (stop !== null) this.stops.push({ invocationId, ...stop });
      if (e.code === "EXEC_ABORTED") throw new Aborted(null);
      throw e;
    }
    for (const d of planDeprecations(document)) this.noteDeprecation(d);
    const g = await gatePlanAsync(document, {
      tools: new Set([...loaded.tools.keys(), ...INFRA_TOOL_NAMES]),
      maxSteps: this.maxSteps,
      approve: this.#request.approve === true,
      // In a replay the approvals are the recorded ones, whose trust was decided (and recorded) at run time.
      approvals: { records: this.#request.approvals ?? [], store: this.#request.trustStore ?? null, anyKey: this.#request.replay !== undefined },
    });
    for (const s of g.plan.steps) {
      if (s.id.startsWith(RESERVED_STEP_PREFIX) || this.usedStepIds.has(s.id)) {
        throw new ReachError("PLAN_INVALID", `step id "${s.id}" is ${this.usedStepIds.has(s.id) ? "already used in this run" : `reserved (ids starting "${RESERVED_STEP_PREFIX}")`}; give the step another id`, {
          details: { stepId: s.id },
        });
      }
    }
    return g;
  }

  /**
   * Warn about a deprecated feature (seed 003 §9.2): on stderr through the progress callback, in the run record's
   * warnings, and in `result.json` (once per feature).
   * @param notice the use
   */
  noteDeprecation(notice: DeprecationNotice): void {
    if (this.deprecations.some((d) => d.id === notice.id)) return;
    this.deprecations.push(notice);
    this.#request.onProgress?.({ kind: "warning", message: notice.message });
  }

  /**
   * Append `run.started` (after planning, so that it names the locked plan).
   * @param gated the gated plan, or null when planning failed
   */
  start(gated: GatedPlan | null): void {
    const { loaded } = this.#request;
    const started: JsonObject = {
      runId: this.runId,
      packId: loaded.pack.id,
      packVersion: loaded.pack.version,
      specVersion: loaded.pack.specVersion,
      inputHash: this.inputHash,
      manifestHash: loaded.manifestHash,
      packDigest: loaded.packDigest,
      seed: this.seed,
      epoch: this.epoch,
      capabilities: { restricted: this.restricted, permissions: [...loaded.pack.manifest.capabilities.permissions], tools: [...loaded.tools.keys()] },
      requestHash: hashCanonical(this.requestDoc),
      workspaceBefore: snapshotDigest(this.workspaceBefore),
    };
    if (gated !== null) {
      started["planId"] = gated.plan.plan_id;
      started["planHash"] = gated.planHash;
    }
    this.log.append("run.started", started);
  }

  /**
   * Execute one step: budgets, the envelope, `run.step.started` … `run.step.completed | run.step.failed`.
   * @param step the plan step (already gated)
   * @param generation the plan generation (replans)
   * @param total the number of steps known so far (progress)
   * @returns the executed step
   * @throws Aborted when the run was aborted before or during the step (its events are written)
   * @throws ReachError `POLICY_RATE_LIMIT_EXCEEDED` / `POLICY_TIMEOUT_EXCEEDED` when a budget is spent
   */
  async execute(step: PlanStep, generation: number, total: number): Promise<StepExecution> {
    const { loaded } = this.#request;
    this.checkAbort({ phase: "executing", stepIndex: this.stepIndex });
    this.checkBudgets(step.id);
    this.toolCalls++;
    const invocationId = invocationIdOf(this.runId, step.id, generation);
    const timeout = this.gated?.plan.execution?.step_timeout_ms ?? this.#request.stepTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.usedStepIds.add(step.id);
    const envelope = parseOrThrow(
      ExecutionEnvelopeSchema,
      {
        id: deriveId("reach-wasm/envelope", this.runId, step.id, String(generation)),
        task_id: step.id,
        tool: step.tool,
        arguments: resolveArguments(step.arguments as JsonObject, this.input, step.id),
        context: { session_id: this.runId, permissions: [...loaded.pack.manifest.capabilities.permissions] },
        timeout_ms: timeout,
      },
      "PROTO_SCHEMA_VIOLATION",
      `the envelope of step "${step.id}"`,
    );
    const progress = this.#request.onProgress ?? (() => {});
    progress({ kind: "step", index: this.stepIndex, total, stepId: step.id, tool: step.tool, status: "started" });
    this.log.append("run.step.started", { stepId: step.id, stepType: "tool", stepIndex: this.stepIndex, toolName: step.tool, ...(step.description === undefined ? {} : { description: step.description }), ...(step.depends_on === undefined ? {} : { dependsOn: [...step.depends_on] }) });
    this.log.append("tool.invoked", { toolName: step.tool, invocationId, arguments: envelope.arguments, timeoutMs: envelope.timeout_ms, stepId: step.id });
    const tool = loaded.tools.get(step.tool) ?? infraTool(step.tool)!;
    const exec = await executeEnvelope(envelope, tool, step.return_spec!, this.#state, invocationId);
    this.fuelSpent += exec.fuelUsed;
    const stop = stopOf(exec.stepError);
    if (stop !== null) this.stops.push({ invocationId, ...stop });
    recordStep(this.log, step, exec, loaded.pack.manifest.capabilities.tools.map((t) => t.name));
    this.evidence.push(stepEvidence(step, envelope, exec.toolOutput, exec.stepError, exec.schemaValidation, exec.artifacts, exec.durationMs, []));
    progress({ kind: "step", index: this.stepIndex, total, stepId: step.id, tool: step.tool, status: exec.stepError === null ? "completed" : "failed", durationMs: exec.durationMs, fuel: exec.fuelUsed.toString(), ...(exec.stepError === null ? {} : { code: exec.stepError.code }) });
    this.stepIndex++;
    if (exec.stepError === null) this.outputs[step.id] = exec.toolOutput!;
    else if (exec.stepError.code === "EXEC_ABORTED") {
      this.failedStep = step.id;
      throw new Aborted(null);
    }
    return exec;
  }

  /**
   * Record a step that was refused before it could run (a session call naming a tool the run does not have):
   * `run.step.started`, `policy.violation` for a policy error, `run.step.failed`.
   * @param step the step
   * @param error why it was refused
   */
  refuse(step: PlanStep, error: ReachError): void {
    this.usedStepIds.add(step.id);
    this.log.append("run.step.started", { stepId: step.id, stepType: "tool", stepIndex: this.stepIndex, toolName: step.tool });
    if (error.code === "POLICY_VIOLATION") {
      const d = error.details;
      this.log.append("policy.violation", { violationType: (d["violationType"] as string | undefined) ?? "UNDEFINED_TOOL", details: error.message, attemptedCapability: (d["attemptedCapability"] as string | undefined) ?? step.tool, declaredCapabilities: this.#request.loaded.pack.manifest.capabilities.tools.map((t) => t.name), stepId: step.id });
    }
    this.log.append("run.step.failed", { stepId: step.id, result: { status: "error", reason: terminalReason(error) }, error: error.toDetails() });
    this.evidence.push({ stepId: step.id, toolName: step.tool, input: step.arguments, output: null, schemaValidation: "fail", durationMs: 0, retryCount: 0, replanEvents: [], status: "failed", artifacts: [], error: error.toDetails() });
    this.stepIndex++;
  }

  /** Refuse a step the run's budgets do not allow (seed 003 §4.1 policies; both budgets are deterministic). */
  checkBudgets(stepId: string): void {
    const policies = this.#request.loaded.pack.manifest.policies;
    if (this.toolCalls + 1 > policies.maxToolCalls) {
      this.failedStep = stepId;
      throw new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `step "${stepId}" would be tool call ${this.toolCalls + 1}; the pack allows ${policies.maxToolCalls} (manifest.policies.maxToolCalls)`, {
        details: { maxToolCalls: policies.maxToolCalls, stepId },
      });
    }
    if (this.fuelSpent >= BigInt(policies.maxExecutionTime) * FUEL_PER_MS) {
      this.failedStep = stepId;
      throw new ReachError("POLICY_TIMEOUT_EXCEEDED", `the run has used its ${policies.maxExecutionTime} ms budget (manifest.policies.maxExecutionTime, counted in fuel: ${FUEL_PER_MS} units per ms) before step "${stepId}"`, {
        details: { maxExecutionTime: policies.maxExecutionTime, stepId },
      });
    }
  }

  /**
   * Close the run: the terminal event (with the output hash, or the error), and the record.
   * @param err what ended the run early (an error or {@link Aborted}), or null when every step succeeded
   * @returns the run record
   */
  finish(err: unknown): RunRecord {
    const { loaded } = this.#request;
    const stops: Record<string, unknown> = this.stops.length === 0 ? {} : { stops: this.stops.map((s) => ({ ...s })) };
    if (err !== null) {
      // Close whatever is open so that the terminal event is legal (seed 003 §3.2: termination comes last).
      if (this.log.events.length === 0) this.start(null);
      const error = err instanceof Aborted ? this.abortError() : toReachError(err, "EXEC_TOOL_FAILED");
      if (this.log.openInvocation !== null) this.log.append("tool.failed", { invocationId: this.log.openInvocation, error: error.toDetails() });
      if (this.log.openStep !== null) {
        this.failedStep = this.log.openStep;
        this.log.append("run.step.failed", { stepId: this.log.openStep, result: { status: "error", reason: terminalReason(error) }, error: error.toDetails() });
      }
      recordPlanViolation(this.log, error, loaded.pack.manifest.capabilities.tools.map((t) => t.name));
      return this.#terminate(err instanceof Aborted ? "ABORTED" : "FAILED", error, err instanceof Aborted ? err.at : null, stops);
    }
    if (hashCanonical(loaded.pack.manifest) !== loaded.manifestHash) throw new Error("internal: the locked manifest changed during the run");
    return this.#terminate("COMPLETED", null, null, stops);
  }

  /**
   * Build the capsule body (everything but the events), then append the terminal event, which commits the body's
   * digest (`contents`) and the workspace's digest: the run hash covers every entry of the capsule.
   */
  #terminate(status: RunStatus, error: ReachError | null, at: AbortPoint | null, stops: Record<string, unknown>): RunRecord {
    this.phases.push(status);
    const body = this.#body(status, error);
    const committed = { workspaceAfter: this.workspace.digest(), contents: contentsDigest(body), ...stops };
    if (status === "COMPLETED") {
      const artifacts = this.artifacts.artifacts.map((a) => a.info);
      this.log.append("run.completed", { runId: this.runId, status: "success", outputHash: hashCanonical(this.outputs), ...(artifacts.length > 0 ? { artifacts } : {}), ...committed });
    } else if (status === "ABORTED") {
      this.log.append("run.aborted", { runId: this.runId, status: "failure", reason: "aborted", signal: this.signalName(), error: error!.toDetails(), ...(at === null ? {} : { abortedAt: at }), ...committed });
    } else {
      this.log.append("run.failed", { runId: this.runId, status: "failure", error: error!.toDetails(), reason: terminalReason(error!), ...(this.failedStep === undefined ? {} : { failedStep: this.failedStep }), ...committed });
    }
    return this.record(status, error, body);
  }

  /** The capsule's body (`capsuleBody`): pack, request, header, plan, result, tape, blobs, workspaces, artifacts. */
  #body(status: RunStatus, error: ReachError | null): Map<string, Uint8Array> {
    const { loaded } = this.#request;
    const before = new Map<string, Uint8Array>();
    for (const [root, files] of Object.entries(loaded.workspaceFiles)) for (const [p, b] of Object.entries(files)) before.set(`${root}/${p}`, b);
    const outputs: Record<string, string> = {};
    for (const [stepId, output] of Object.entries(this.outputs)) outputs[stepId] = hashCanonical(output);
    const result: Record<string, unknown> = { runId: this.runId, status, planHash: this.gated?.planHash ?? null, outputs, artifacts: this.artifacts.artifacts.map((a) => a.info) };
    if (status === "COMPLETED") result["outputHash"] = hashCanonical(this.outputs);
    if (error !== null) result["error"] = error.toDetails();
    if (this.deprecations.length > 0) result["deprecations"] = this.deprecations.map((d) => ({ ...d }));
    // seed 003 §4.2 post-execution audit, before the terminal event: hashed with the run through `contents`
    if (this.#request.replay?.audit !== false) {
      this.capabilityAudit = auditCapabilities(loaded.pack.manifest, this.log.events, this.tape.records, changedPaths(this.workspaceBefore, this.workspace.snapshot()));
      result["capabilityAudit"] = this.capabilityAudit;
    }
    return capsuleBody({
      packFiles: loaded.files,
      request: this.requestDoc,
      header: this.#header(),
      plan: this.gated?.plan ?? null,
      result,
      tape: utf8(this.tape.toJsonl()),
      blobs: this.tape.blobEntries(),
      workspaceBefore: { files: before, links: new Map() },
      workspaceAfter: this.workspace.contents(),
      artifacts: new Map(this.artifacts.artifacts.map((a) => [a.info.path, a.bytes])),
    });
  }

  /** The signal an abort came from (recorded; a replay repeats the recorded one). */
  signalName(): string {
    return this.#request.replay?.signal ?? String(this.#request.signal?.reason ?? "abort");
  }

  abortError(): ReachError {
    const signal = this.signalName();
    return new ReachError("EXEC_ABORTED", `the run was aborted (${signal}); the current step was stopped and rolled back`, { details: { signal } });
  }

  #header(): ExecutionHeader {
    const { loaded } = this.#request;
    return {
      contract_version: "S2-B-06.v1",
      run_id: this.runId,
      pack_id: loaded.pack.id,
      pack_version: loaded.pack.version,
      manifest_hash: loaded.manifestHash,
      input_hash: this.inputHash,
      seed: this.seed,
      epoch: this.epoch,
      restricted: this.restricted,
      plan_id: this.gated?.plan.plan_id ?? null,
      plan_hash: this.gated?.planHash ?? null,
      approved_by: this.gated?.approvedBy ?? null,
      phases: this.phases,
    };
  }

  record(status: RunStatus, error: ReachError | null, body: Map<string, Uint8Array>): RunRecord {
    const after = this.workspace.snapshot();
    const files = this.workspace.contents().files;
    return {
      runId: this.runId,
      status,
      runHash: this.log.runHash(),
      error,
      events: this.log.events,
      evidence: this.evidence,
      artifacts: this.artifacts.artifacts,
      plan: this.gated?.plan ?? null,
      planHash: this.gated?.planHash ?? null,
      header: this.#header(),
      inputHash: this.inputHash,
      input: this.input,
      seed: this.seed,
      outputs: this.outputs,
      tape: this.tape,
      workspaceBefore: this.workspaceBefore,
      workspaceAfter: after,
      workspaceFiles: files,
      warnings: [...this.#request.loaded.warnings, ...this.deprecations.map((d) => d.message)],
      ...(this.capabilityAudit === null ? {} : { capabilityAudit: this.capabilityAudit }),
      ...(this.deprecations.length === 0 ? {} : { deprecations: [...this.deprecations] }),
      body,
    };
  }
}
