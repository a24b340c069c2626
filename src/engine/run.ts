/**
 * One run's state and its phases (seed 003 §3.1; ARCHITECTURE "Data flow"): `Run.prepare` (PENDING → PREPARING:
 * the run's identity and `request.json` (`run-identity.ts`), workspace, policy, runners), `plan` (a planner call,
 * gated: `run-plan.ts`), `start` (`run.started`), each step (`run-steps.ts`: budgets, envelope, events, evidence; a
 * step refused before it could run: `step-refusal.ts`), and the end (`run-record.ts`: the terminal event and the
 * record). The coordinator (`coordinator.ts`) walks a plan with these phases; a session run (`session.ts`) feeds
 * them steps that arrive from outside.
 *
 * Stops: the run's abort (a signal, an interrupt word), a step's wall-clock watchdog and a planner's are noticed at
 * a fuel refill or while a tool waits for the host (`src/sandbox/stops.ts`), between steps, or before planning. Each
 * one is recorded where replay can find it: the stopped invocation's fuel count (`stops` of the terminal event) and,
 * for an abort outside any invocation, the place it was noticed (`abortedAt` of `run.aborted`). A replay is given
 * them back as {@link ReplayDirectives} and stops at the same points. What a stop throws out of a phase, and the
 * stop an invocation records, are in `run-stops.ts`.
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { epochMs, VirtualClock } from "../determinism/mod.ts";
import { EventLog } from "../ledger/mod.ts";
import type { RecordedEvent } from "../ledger/mod.ts";
import { capabilityPolicy, workspaceResources } from "../policy/mod.ts";
import type { CapabilityAudit, CapabilityPolicy } from "../policy/mod.ts";
import { planDeprecations, ReachError } from "../protocol/mod.ts";
import type { DeprecationNotice, JsonObject, JsonValue, PlanStep, RunEvidence } from "../protocol/mod.ts";
import { TapeRecorder } from "../record/mod.ts";
import { ArtifactSink, SANDBOX_API_LEVEL, SecretBox, Workspace } from "../sandbox/mod.ts";
import type { SandboxApiLevel, SecretSpec, SnapshotEntry, WorkspaceImage } from "../sandbox/mod.ts";
import type { CapsuleRequest } from "./capsule.ts";
import type { ExecutorRunState } from "./executor.ts";
import { Generation } from "./generation.ts";
import type { LedgerState } from "./generation.ts";
import type { RunIntent } from "./intent.ts";
import { DEFAULT_MAX_STEPS } from "./plan-gate.ts";
import type { GatedPlan } from "./plan-gate.ts";
import type { ReplanContext } from "./planner.ts";
import { requestDocument, runIdentity, runStartedPayload } from "./run-identity.ts";
import { callPlanner, gateRunPlan } from "./run-plan.ts";
import { Aborted, stopOf } from "./run-stops.ts";
import type { RecordedStop } from "./run-stops.ts";
import { mcpSecretLookup, realNow, runRunners, turnLoop } from "./runners.ts";
import { runStepJob } from "./step-job.ts";
import type { StepJob, StepJobResult, StepPool } from "./step-job.ts";
import type { AbortPoint, RealTimes, RunPhase, RunRequest } from "./types.ts";
import { runValueKey } from "./value-commits.ts";
import type { ValueKey } from "./value-commits.ts";

export { RESERVED_STEP_PREFIX } from "./types.ts";
export type { AbortPoint, ReplayDirectives } from "./types.ts";

/** One run, phase by phase (see the module notes). */
export class Run {
  readonly runId: string;
  readonly seed: string;
  readonly epoch: string;
  readonly epochMs: number;
  readonly input: JsonValue;
  readonly inputHash: string;
  readonly restricted: boolean;
  /** The run's correlation id (seed 004 `requestId`): the caller's, else derived from the run id. */
  readonly requestId: string;
  /** The query the router classified (seed 004; `intent.ts`) and the intent it found. */
  readonly query: string;
  readonly intent: RunIntent | null;
  readonly log: EventLog;
  readonly policy: CapabilityPolicy;
  /** The pack's secrets and (live) the caller's values, for the step jobs (in memory only, never recorded). */
  readonly secrets: SecretSpec;
  readonly workspaceBefore: SnapshotEntry[];
  /** `request.json`: what the run was asked (replay asks it again); its hash is in `run.started`. */
  readonly requestDoc: CapsuleRequest;
  /** The sandbox API level of the run's js and python tools (recorded in `request.json` unless 1). */
  readonly sandboxApi: SandboxApiLevel;
  readonly tape = new TapeRecorder();
  readonly artifacts = new ArtifactSink();
  readonly maxSteps: number;
  /** How many steps may run at once (`step-graph.ts`; the record does not depend on it). */
  readonly parallel: number;
  /** The workspace roots WASI tools get preopened, or null without the filesystem permission. */
  readonly preopenRoots: readonly string[] | null;
  readonly phases: RunPhase[] = ["PENDING"];
  readonly evidence: RunEvidence[] = [];
  readonly outputs: JsonObject = {};
  /** Each completed step's output commitment (`value-commits.ts`). */
  readonly outputCommits: Record<string, string> = {};
  /** The run's commit key, or null for the legacy unsalted form (`value-commits.ts`). */
  readonly valueKey: ValueKey;
  readonly usedStepIds = new Set<string>();
  readonly stops: RecordedStop[] = [];
  gated: GatedPlan | null = null;
  /** The plan generation being walked (its ledger holds the run's workspace, memory and budgets). */
  gen: Generation | null = null;
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
  /** What the planner's invocation shares with the run: its stops. */
  readonly #state: Pick<ExecutorRunState, "interrupted" | "signal" | "stopPoints" | "watchdogFactor" | "now">;
  readonly #clock: VirtualClock;
  readonly #initial: WorkspaceImage;
  readonly #initialMemory: ReadonlyMap<string, string>;
  readonly #workspaceBeforeDigest: string;
  #pool: StepPool | null = null;
  #serial: Promise<unknown> = Promise.resolve();
  #workspace: { image: WorkspaceImage; ws: Workspace } | null = null;
  /** The wall clock, and the real times it gave (run files and live events only; never hashed). */
  readonly wallClock: () => number;
  readonly #real: RealTimes;

  /** The real times so far (run files and live events only; never hashed). */
  get realTimes(): RealTimes {
    return { ...this.#real };
  }

  private constructor(request: RunRequest) {
    const { loaded } = request;
    this.#request = request;
    const clock = request.env.clock;
    this.wallClock = request.wallClock ?? (clock === undefined ? epochMs : () => clock.epochMs());
    this.#real = { createdAt: this.wallClock(), startedAt: null, completedAt: 0 };
    const id = runIdentity(request);
    ({ input: this.input, inputHash: this.inputHash, seed: this.seed, epoch: this.epoch, epochMs: this.epochMs, restricted: this.restricted } = id);
    ({ runId: this.runId, requestId: this.requestId, query: this.query, intent: this.intent } = id);
    const chain = request.session;
    this.#clock = new VirtualClock(this.epochMs);
    const onProgress = request.onProgress;
    const live = request.liveEvents === true && onProgress !== undefined
      ? { onAppend: (e: RecordedEvent) => onProgress({ kind: "event", event: { type: e.type, sequence: e.sequence, timestamp: e.timestamp, eventHash: e.eventHash, runId: e.runId, payload: e.payload as Record<string, unknown> } }) }
      : {};
    this.log = new EventLog({ runId: this.runId, clock: this.#clock, ...live });
    this.policy = capabilityPolicy(loaded.pack.manifest, { restricted: this.restricted });
    // A replay needs no values: the tape answers, and the placeholder checks need only the declarations.
    this.secrets = new SecretBox(loaded.pack.secrets, request.player === undefined ? (request.secrets ?? {}) : null).spec();
    // WASI tools reach the workspace through preopens, not through the host API's checks, so the workspace itself
    // enforces what the policy allows: without the filesystem permission nothing is preopened (runRunners), and in
    // the restricted executor or with sandbox.filesystem "readonly" every declared root is read-only (temp/ stays
    // writable).
    const readOnly = this.policy.restricted || this.policy.filesystemReadonly;
    // A session's later run starts from the workspace the run before it ended with, in place of the pack's seeds.
    const carried = chain?.workspace;
    const resources = workspaceResources(this.policy, carried === undefined ? loaded.workspaceFiles : {}).map((r) => (readOnly ? { ...r, access: "read" as const } : r));
    const workspace = Workspace.fromResources(resources, {}, carried);
    this.#initial = workspace.image();
    this.#initialMemory = new Map(chain?.memory ?? []);
    this.workspaceBefore = workspace.snapshot();
    this.#workspaceBeforeDigest = workspace.digest();
    this.sandboxApi = request.sandboxApi ?? SANDBOX_API_LEVEL;
    this.requestDoc = requestDocument(request, id, this.sandboxApi);
    this.valueKey = runValueKey(this.seed, this.requestDoc.commitments);
    if (this.valueKey !== null) this.tape.commitWith(this.valueKey);
    const filesystem = this.policy.permissions.has("filesystem");
    this.preopenRoots = filesystem ? this.policy.workspaceRoots.map((r) => r.root) : null;
    this.#runners = runRunners(request.env, this.preopenRoots, {
      ...(loaded.pack.mcpServers === undefined ? {} : { servers: loaded.pack.mcpServers }),
      ...mcpSecretLookup(request),
    });
    this.maxSteps = request.maxSteps ?? loaded.pack.run?.maxSteps ?? DEFAULT_MAX_STEPS;
    this.parallel = request.parallel ?? 1;
    this.#state = {
      interrupted: () => this.interrupted(),
      now: realNow(request.env),
      ...(request.replay === undefined ? {} : { stopPoints: request.replay.stops, watchdogFactor: 10 }),
      ...(request.resume === undefined ? {} : { stopPoints: request.resume.stops }),
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
   * Let the event loop turn once when the run can be aborted from it (it has an abort signal; never in a replay), so
   * that an abort that came while this thread was held — a signal handler, a cancel waiting for the loop — is seen
   * by the check that follows (`EngineEnvironment.turn`).
   * @param last the check before the terminal state
   * @returns once the loop turned
   */
  async turn(last = false): Promise<void> {
    if (this.#request.signal === undefined || this.#request.replay !== undefined || this.#request.signal.aborted) return;
    await (this.#request.turn === undefined ? turnLoop(this.#request.env, last) : this.#request.turn(last));
  }

  /**
   * The check before the terminal state (after the last step, or after what failed the run): an abort that came
   * before it ends the run ABORTED, whatever else would have ended it, so a run is never COMPLETED once an abort
   * reached it; a run started again to stop at its end (`resume.atEnd`) stops here. Recorded as
   * `abortedAt: {phase: "executing", stepIndex}` with the index after the last step written; no other check uses
   * that index once the walk has ended, so a replay stops here too.
   * @throws Aborted when the run was aborted (or a replay reached its recorded abort here)
   */
  async checkEnd(): Promise<void> {
    await this.turn(true);
    const at: AbortPoint = { phase: "executing", stepIndex: this.stepIndex };
    if (this.#request.resume?.atEnd === true) throw new Aborted(at);
    this.checkAbort(at);
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
   * @throws InfraRefused when the plan calls an infrastructure tool the run may not use
   * @throws ReachError `PLAN_*` when the planner fails or the gate refuses the plan
   */
  async plan(replan?: ReplanContext): Promise<GatedPlan> {
    const attempt = replan?.attempt ?? 0;
    await this.turn();
    this.checkAbort({ phase: "planning", attempt });
    this.#request.onProgress?.({ kind: "planning", attempt });
    const document = await callPlanner(this, replan, { quickjs: this.#runners.quickjs, state: this.#state });
    for (const d of planDeprecations(document)) this.noteDeprecation(d);
    return gateRunPlan(this, document);
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
    const started = runStartedPayload(this.#request.loaded, this, hashCanonical(this.requestDoc), this.#workspaceBeforeDigest, gated);
    this.#real.startedAt = this.wallClock();
    this.log.append("run.started", started);
  }

  /**
   * Start walking a plan: a new generation whose base is the run's state now (`generation.ts`).
   * @param steps the plan's steps (gated)
   * @returns the generation
   */
  beginGeneration(steps: readonly PlanStep[]): Generation {
    this.gen = new Generation(steps, this.#ledger(), this.#initial.config, this.#clock.now());
    return this.gen;
  }

  /** The run's state now: the current generation's, else the start. */
  #ledger(): LedgerState {
    if (this.gen !== null) return this.gen.current;
    let blobBytes = 0;
    for (const b of this.tape.blobs.values()) blobBytes += b.length;
    return { workspace: this.#initial.state, memory: this.#initialMemory, artifacts: { count: 0, bytes: 0 }, fuel: this.fuelSpent, tape: { records: this.tape.records.length, blobBytes } };
  }

  /**
   * The memory store as the emitted steps left it: `[key, canonical value text]`, sorted by key (UTF-16 code units).
   * @returns the entries
   */
  memoryEntries(): [string, string][] {
    return [...this.#ledger().memory].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /** The run's workspace as the emitted steps left it. */
  get workspace(): Workspace {
    const image = this.gen?.image ?? this.#initial;
    if (this.#workspace?.image.state !== image.state) this.#workspace = { image, ws: Workspace.fromImage(image) };
    return this.#workspace.ws;
  }

  /**
   * Run a prepared step's job (`prepareStep`): on a step thread when the platform gives them, steps may run in parallel and the
   * current generation has steps that can (not a chain: starting a thread costs more than a step), else on this
   * thread, one job at a time in the order they were asked for. The result is the same either way.
   * @param job the step's job
   * @param signal aborts the job (its result is then never used)
   * @returns the job's result, or null when it was aborted before it started
   */
  runJob(job: StepJob, signal: AbortSignal): Promise<StepJobResult | null> {
    const threads = this.#request.env.stepThreads;
    // An MCP tool's server connection lives on this thread (one per run and server), so its steps run here.
    if (this.parallel > 1 && threads !== undefined && this.gen !== null && !this.gen.isChain && job.tool.definition.kind !== "mcp") {
      this.#pool ??= threads(this.parallel);
      return this.#pool.run(job, signal);
    }
    const interrupted = (): boolean => this.interrupted() || signal.aborted;
    // A step on this thread starts only after the loop turned: an abort that came meanwhile stops the run before it
    // (the abort signal only: the `interrupted` poll belongs to the tool's refills).
    const run = this.#serial.then(() => this.turn()).then(() => (signal.aborted || this.#request.signal?.aborted === true ? null : runStepJob(job, {
      policy: this.policy,
      runnerFor: this.#runners.runnerFor,
      mcp: this.#runners.mcp,
      interrupted,
      now: this.#state.now,
      signal: this.#request.signal === undefined ? signal : AbortSignal.any([signal, this.#request.signal]),
      ...(this.#request.fetch === undefined ? {} : { fetch: this.#request.fetch }),
    })));
    this.#serial = run.catch(() => undefined);
    return run;
  }

  /** Stop the step threads (the run is over). */
  closeThreads(): void {
    this.#pool?.close();
    this.#pool = null;
  }

  /** The run's MCP connections (servers started on first use; {@link closeMcp} stops them). */
  get mcp(): ReturnType<typeof runRunners>["mcp"] {
    return this.#runners.mcp;
  }

  /** Stop the run's MCP servers (the run is over); waits until they stopped. */
  async closeMcp(): Promise<void> {
    await this.#runners.mcp.close();
  }

  /**
   * Remember a stop a signal or the watchdog made in an emitted invocation (replay reproduces it).
   * @param invocationId the invocation
   * @param error its failure, if any
   */
  recordStop(invocationId: string, error: ReachError | null): void {
    const stop = stopOf(error);
    if (stop !== null) this.stops.push({ invocationId, ...stop });
  }

  /** Note the real time the run ended (run files and live events only; never hashed). */
  markEnded(): void {
    this.#real.completedAt = this.wallClock();
  }

  /**
   * Note the real time a step that ran took, ending now (the run files' `TASK_<id>.json`; never hashed).
   * @param stepId the step
   * @param durationMs its real duration
   */
  markStep(stepId: string, durationMs: number): void {
    const endedAt = this.wallClock();
    (this.#real.steps ??= {})[stepId] = { startedAt: endedAt - durationMs, endedAt };
  }

  /** The signal an abort came from (recorded; a replay repeats the recorded one). */
  signalName(): string {
    return this.#request.replay?.signal ?? this.#request.resume?.signal ?? String(this.#request.signal?.reason ?? "abort");
  }

  abortError(): ReachError {
    const signal = this.signalName();
    return new ReachError("EXEC_ABORTED", `the run was aborted (${signal}); the current step was stopped and rolled back`, { details: { signal } });
  }
}
