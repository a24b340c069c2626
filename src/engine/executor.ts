/**
 * The executor (seed 000 §3; seed 002 "Executor — SubAgent-B"): exactly one plan step per envelope. It opens the
 * step's transactions (workspace, memory, artifacts), makes a fresh capability-checked host for the invocation,
 * runs the tool in its sandbox under the envelope's limits, validates the output, and commits the step's effects
 * only when the step succeeded (seed 003 §4.3): a failed, timed-out, insufficient or violating step leaves nothing.
 *
 * Time: the envelope's `timeout_ms` becomes a deterministic fuel budget (`FUEL_PER_MS` units per millisecond), so
 * a tool that never stops runs out at the same instruction on every run and runtime and is reported as
 * `EXEC_TOOL_TIMEOUT` (reason `timeout`). The wall clock is only a safety net above that budget: the invocation's
 * watchdog (`timeout_ms` + {@link WATCHDOG_GRACE_MS}, counted from when the tool's code starts) and the run's abort
 * stop the tool at its fuel meter's next refill, or fail the host call it waits for (`src/sandbox/stops.ts`), and
 * the stop point (the fuel count) is recorded in the error, so a replay stops at the same instruction.
 *
 * Output contract: a tool returns one JSON object. `{"status": "insufficient", …}` means the step needs more than
 * one tool call (seed 002); any other object is the step's output and must satisfy the tool's `outputSchema` and
 * the step's `return_spec` (else `EXEC_OUTPUT_INVALID`, `schemaValidation: "fail"`).
 * @module
 */
import { canonicalize, deriveId } from "../canonical/mod.ts";
import type { VirtualClock } from "../determinism/mod.ts";
import { deriveStream } from "../determinism/mod.ts";
import type { CapabilityPolicy } from "../policy/mod.ts";
type Permission = CapabilityPolicy["permissions"] extends ReadonlySet<infer P> ? P : never;
import type { ExecutionEnvelope, ExecutionResult } from "../protocol/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { ArtifactInfo } from "../protocol/mod.ts";
import type { TapePlayer } from "../record/mod.ts";
import type { TapeOutcome, TapeRecorder } from "../record/mod.ts";
import type { ArtifactSink } from "../sandbox/mod.ts";
import { FuelMeter, STEP_TIMEOUT_HINT } from "../sandbox/mod.ts";
import type { StopPoint } from "../sandbox/mod.ts";
import { createHost } from "../sandbox/mod.ts";
import type { HostContext } from "../sandbox/mod.ts";
import { invocationStops } from "../sandbox/mod.ts";
import type { FetchLike } from "../protocol/mod.ts";
import type { MemoryStore } from "../sandbox/mod.ts";
import type { ModuleIdentity, SandboxApiLevel, ToolRunner } from "../sandbox/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import type { StepTransaction, Workspace } from "../sandbox/mod.ts";
import type { PackTool } from "./pack.ts";
import type { McpSessions } from "../sandbox/mod.ts";
import { compileSchema } from "./schema-check.ts";
import { monotonicMs } from "../determinism/mod.ts";
import type { SecretBox } from "../sandbox/mod.ts";

/**
 * Fuel units granted per millisecond of `timeout_ms`. Measured on the 2-core CI machine: a tight WASI loop burns
 * ~1,600,000 units per ms, JavaScript in QuickJS 190,000–380,000; at 50,000 per ms a looping JS tool runs out of
 * fuel at ~25% of its timeout on a quiet machine and ~65% at load 4, so the deterministic budget, not the wall-clock
 * watchdog, decides its outcome under load too.
 */
export const FUEL_PER_MS = 50_000n;
/** Wall-clock grace beyond the step timeout (the envelope's `timeout_ms`) before its watchdog stops it (the fuel budget normally acts first). */
export const WATCHDOG_GRACE_MS = 500;
/** Memory limit of one invocation (256 MiB). */
export const STEP_MEMORY_BYTES = 256 * 1024 * 1024;

/** The run state an invocation works on. */
export type ExecutorRunState = {
  readonly seed: string;
  readonly policy: CapabilityPolicy;
  readonly workspace: Workspace;
  readonly memory: MemoryStore;
  readonly artifacts: ArtifactSink;
  readonly tape: TapeRecorder;
  /** The run's clock; the invocation's clock is forked from it. */
  readonly clock: VirtualClock;
  readonly fetch?: FetchLike;
  /** The run's MCP connections (for `mcp` tools; a replay never uses them). */
  readonly mcp?: McpSessions;
  readonly player?: TapePlayer;
  /** A fork's step: host calls (1-based numbers) answered with these outcomes instead of running. */
  readonly answers?: ReadonlyMap<number, TapeOutcome>;
  /** The run's secrets: placeholders checked against their hosts, values substituted and scrubbed (live). */
  readonly secrets?: SecretBox;
  /** The run's sandbox API level: which `reach` object js and python tools get (default 1). */
  readonly sandboxApi?: SandboxApiLevel;
  /** The runner for a tool kind, given the step's workspace transaction. */
  readonly runnerFor: (tool: PackTool, step: StepTransaction) => Promise<ToolRunner>;
  /** The run's abort signal (async waits). */
  readonly signal?: AbortSignal;
  /** Whether the run was aborted, read at every fuel refill (a shared word in a worker; default: the signal). */
  readonly interrupted?: () => boolean;
  /** Replay: the recorded stop points of invocations a signal or the watchdog stopped, by invocation id. */
  readonly stopPoints?: ReadonlyMap<string, StopPoint>;
  /** Multiplies the watchdog's wall-clock limit (replay uses a generous one: recorded stops come from stopPoints). */
  readonly watchdogFactor?: number;
  /** The fuel left in the run's budget (`manifest.policies.maxExecutionTime` × FUEL_PER_MS), if it bounds this step. */
  readonly runFuelLeft?: () => bigint;
  /** The real clock in ms (`EngineEnvironment.clock`; default `performance`): durations and the watchdog, never hashed. */
  readonly now?: () => number;
};

/** Everything the coordinator needs to record one executed step. */
export type StepExecution = {
  readonly invocationId: string;
  readonly result: ExecutionResult;
  /** The tool's own output (also when it failed validation), or null when the tool failed. */
  readonly toolOutput: JsonObject | null;
  /** The tool's failure (when it did not return an output). */
  readonly toolError: ReachError | null;
  /** The step's failure (tool failure, violation, invalid output, insufficient), or null. */
  readonly stepError: ReachError | null;
  /** A halting policy violation, for the `policy.violation` event. */
  readonly violation: ReachError | null;
  readonly schemaValidation: "pass" | "fail";
  readonly artifacts: readonly ArtifactInfo[];
  readonly log: string;
  readonly fuelUsed: bigint;
  /** What ran (the tool's code and the instrumented module), when the tool got as far as running. */
  readonly module: ModuleIdentity | null;
  /** The invocation's host calls on the tape: how many, and the hash of their tape lines. */
  readonly hostCalls: { count: number; hash: string };
  readonly durationMs: number;
  /** Where the invocation's virtual clock stood when it ended (ms): its dependents' clocks start there or later. */
  readonly clockEndMs: number;
};

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Map a fuel exhaustion to the time budget it stands for: the step timeout (`EXEC_TOOL_TIMEOUT`), or the
 * run's `maxExecutionTime` when that was the smaller budget (`POLICY_TIMEOUT_EXCEEDED`). A watchdog stop gets the
 * step's timeout in its details.
 */
function asTimeout(error: ReachError, tool: string, timeoutMs: number, runBound: boolean): ReachError {
  if (error.code === "EXEC_RESOURCE_EXHAUSTED" && error.details["reason"] === "fuel") {
    if (runBound) {
      return new ReachError("POLICY_TIMEOUT_EXCEEDED", `tool "${tool}" used the rest of the run's time budget (manifest.policies.maxExecutionTime, ${error.details["fuelLimit"]} fuel units left for it); raise maxExecutionTime or give the run less work`, {
        details: { reason: "timeout", fuelLimit: error.details["fuelLimit"] as number },
      });
    }
    return new ReachError("EXEC_TOOL_TIMEOUT", `tool "${tool}" did not finish within its budget of ${timeoutMs} ms (${error.details["fuelLimit"]} fuel units); it probably loops forever — otherwise ${STEP_TIMEOUT_HINT}`, {
      details: { reason: "timeout", timeoutMs, fuelLimit: error.details["fuelLimit"] as number },
    });
  }
  if (error.code === "EXEC_TOOL_TIMEOUT" && error.details["reason"] === "watchdog") {
    return new ReachError(error.code, error.message, { details: { ...error.details, timeoutMs } });
  }
  return error;
}

const infraPolicies = new WeakMap<CapabilityPolicy, CapabilityPolicy>();

/** The pack's policy, widened for the infra tools: the filesystem permission (temp/, reading declared roots) and memory writes. */
function infraPolicy(policy: CapabilityPolicy): CapabilityPolicy {
  let p = infraPolicies.get(policy);
  if (p === undefined) {
    const permissions = new Set<Permission>([...policy.permissions, "filesystem"]);
    p = Object.freeze({ ...policy, restricted: false, permissions });
    infraPolicies.set(policy, p);
  }
  return p;
}

/**
 * The deterministic id of a step's invocation.
 * @param runId the run
 * @param stepId the step
 * @param attempt the plan generation (0 unless replanned)
 * @returns a UUID
 */
export function invocationIdOf(runId: string, stepId: string, attempt: number): string {
  return deriveId("reach-wasm/invocation", runId, stepId, String(attempt));
}

/** A step's execution record before it is closed (`closeExecution`). */
type ExecutionParts = Omit<StepExecution, "durationMs" | "result" | "hostCalls" | "clockEndMs">;

/** Close a step's execution record: its protocol result (success, insufficient, failure or error) and metrics. */
function closeExecution(
  envelopeId: string,
  x: ExecutionParts,
  output: JsonValue | undefined,
  durationMs: number,
  hostCalls: { count: number; hash: string },
  clock: VirtualClock,
): StepExecution {
  const metrics = { duration_ms: durationMs, fuel_used: Number(x.fuelUsed) };
  let result: ExecutionResult;
  if (x.stepError === null) result = { envelope_id: envelopeId, status: "success", output, artifacts: [...x.artifacts], metrics };
  else if (x.stepError.code === "EXEC_INSUFFICIENT") result = { envelope_id: envelopeId, status: "insufficient", output, error: x.stepError.toDetails(), metrics };
  else result = { envelope_id: envelopeId, status: x.toolError === null && x.violation === null ? "failure" : "error", error: x.stepError.toDetails(), metrics };
  return { ...x, result, durationMs, hostCalls, clockEndMs: clock.now() };
}

/** The stops of a step's invocation: its watchdog (`timeout_ms` + grace) and the run's abort. */
function stepStops(envelope: ExecutionEnvelope, state: ExecutorRunState): ReturnType<typeof invocationStops> {
  return invocationStops({
    limitMs: (envelope.timeout_ms + WATCHDOG_GRACE_MS) * (state.watchdogFactor ?? 1),
    ...(state.interrupted === undefined ? {} : { interrupted: state.interrupted }),
    ...(state.signal === undefined ? {} : { signal: state.signal }),
    ...(state.now === undefined ? {} : { now: state.now }),
  });
}

/** What an invocation's host takes from the run: its policy, randomness, clock, tape, fetch and tape player. */
function hostContext(
  state: ExecutorRunState,
  tool: PackTool,
  invocationId: string,
  clock: VirtualClock,
): Omit<HostContext, "workspace" | "memory" | "artifacts" | "fuel" | "signal"> {
  return {
    invocationId,
    // The infra tools touch only the run's own memory store and temp/ (seed 002: always available), so they need
    // neither the filesystem permission nor memory writes; everything else stays as the pack's policy says.
    policy: tool.definition.kind === "infra" ? infraPolicy(state.policy) : state.policy,
    clock,
    random: deriveStream(state.seed, `invocation:${invocationId}`),
    tape: state.tape,
    ...(state.fetch === undefined ? {} : { fetch: state.fetch }),
    ...mcpBinding(tool, state),
    ...(state.player === undefined ? {} : { player: state.player }),
    ...(state.answers === undefined ? {} : { answers: state.answers }),
    ...(state.secrets === undefined || tool.definition.kind === "infra" ? {} : { secrets: state.secrets }),
  };
}

/** The host's `mcp.call` binding of an `mcp` tool's invocation (none for any other tool; no live call in replay). */
function mcpBinding(tool: PackTool, state: ExecutorRunState): Pick<HostContext, "mcp"> {
  const d = tool.definition;
  if (d.kind !== "mcp") return {};
  const server = d.server ?? "";
  const name = d.tool ?? "";
  const sessions = state.mcp;
  const live = sessions !== undefined && state.player === undefined;
  return { mcp: { server, tool: name, ...(live ? { call: (args: JsonObject, signal?: AbortSignal) => sessions.call(server, name, args, signal) } : {}) } };
}

/** `PROTO_SCHEMA_VIOLATION` when the step's arguments do not match the tool's `inputSchema`; else null. */
function inputSchemaError(envelope: ExecutionEnvelope, tool: PackTool): ReachError | null {
  const inputSchema = tool.definition.inputSchema;
  if (inputSchema === undefined) return null;
  const check = compileSchema(inputSchema)(envelope.arguments);
  if (check.ok) return null;
  return new ReachError("PROTO_SCHEMA_VIOLATION", `step "${envelope.task_id}": the arguments do not match tool "${tool.name}"'s inputSchema: ${check.problems.join("; ")}`, {
    details: { stepId: envelope.task_id, tool: tool.name, problems: check.problems },
  });
}

/** The step's fuel (its `timeout_ms` in fuel) and its budget: that, or the rest of the run's budget when smaller. */
function fuelBudget(envelope: ExecutionEnvelope, state: ExecutorRunState): { stepFuel: bigint; budget: bigint } {
  const stepFuel = BigInt(envelope.timeout_ms) * FUEL_PER_MS;
  const runLeft = state.runFuelLeft?.() ?? stepFuel;
  return { stepFuel, budget: runLeft < stepFuel ? (runLeft < 0n ? 0n : runLeft) : stepFuel };
}

/** `EXEC_OUTPUT_INVALID` for an output that is not one JSON object. */
function notAnObjectError(envelope: ExecutionEnvelope, tool: PackTool, output: JsonValue): ReachError {
  return new ReachError("EXEC_OUTPUT_INVALID", `tool "${tool.name}" returned ${output === null ? "null" : Array.isArray(output) ? "an array" : typeof output}; a tool returns one JSON object`, {
    details: { stepId: envelope.task_id, tool: tool.name },
  });
}

/**
 * `EXEC_OUTPUT_INVALID` for an output that cannot be recorded as canonical JSON (RFC 8785): a non-finite number (a
 * Python or WASI tool's JSON text with a number past the double range), a lone surrogate, nesting past the canonical
 * limit. The output is not kept and the run goes on, as for any output the tool's contract refuses; else null.
 */
function notJsonError(envelope: ExecutionEnvelope, tool: PackTool, output: JsonObject): ReachError | null {
  try {
    canonicalize(output);
    return null;
  } catch (err) {
    if (!(err instanceof TypeError || err instanceof RangeError)) throw err;
    return new ReachError("EXEC_OUTPUT_INVALID", `tool "${tool.name}" returned an output that is not JSON data: ${err.message.replace(/^canonicalize: /, "")}`, {
      details: { stepId: envelope.task_id, tool: tool.name },
    });
  }
}

/** `EXEC_INSUFFICIENT`: the tool answered that the step needs more than one tool call. */
function insufficientError(envelope: ExecutionEnvelope, tool: PackTool): ReachError {
  return new ReachError("EXEC_INSUFFICIENT", `step "${envelope.task_id}": tool "${tool.name}" answered insufficient: the step needs more than one tool call (seed 002)`, {
    details: { stepId: envelope.task_id, tool: tool.name },
  });
}

/** `EXEC_OUTPUT_INVALID` when the output does not satisfy the tool's `outputSchema` and the step's `return_spec`. */
function outputContractError(
  envelope: ExecutionEnvelope,
  tool: PackTool,
  returnSpec: Record<string, unknown>,
  output: JsonObject,
): ReachError | null {
  const problems: string[] = [];
  const outputSchema = tool.definition.outputSchema;
  if (outputSchema !== undefined) {
    // An MCP tool's outputSchema is that of its result's structuredContent (MCP "Structured Content").
    const mcp = tool.definition.kind === "mcp";
    const checked = mcp ? output["structuredContent"] : output;
    if (mcp && (checked === null || typeof checked !== "object" || Array.isArray(checked))) problems.push("outputSchema $.structuredContent: is missing (the tool declares an outputSchema)");
    else {
      const c = compileSchema(outputSchema)(checked);
      if (!c.ok) problems.push(...c.problems.map((p) => `outputSchema ${mcp ? p.replace(/^\$/, "$.structuredContent") : p}`));
    }
  }
  const c = compileSchema(returnSpec)(output);
  if (!c.ok) problems.push(...c.problems.map((p) => `return_spec ${p}`));
  if (problems.length === 0) return null;
  return new ReachError("EXEC_OUTPUT_INVALID", `step "${envelope.task_id}": the output of tool "${tool.name}" does not match its contract: ${problems.join("; ")}`, {
    details: { stepId: envelope.task_id, tool: tool.name, problems },
  });
}

/**
 * Execute one envelope.
 * @param envelope the step's envelope (already validated)
 * @param tool the tool's code and definition
 * @param returnSpec the step's output contract
 * @param state the run state
 * @param invocationId the invocation's id
 * @returns the step's execution record; its effects are committed only on success
 */
export async function executeEnvelope(
  envelope: ExecutionEnvelope,
  tool: PackTool,
  returnSpec: Record<string, unknown>,
  state: ExecutorRunState,
  invocationId: string,
): Promise<StepExecution> {
  const now = state.now ?? monotonicMs;
  const started = now(); // wall clock: evidence only, never hashed
  const clock = state.clock.fork();
  const base = { invocationId, toolOutput: null, toolError: null, violation: null, artifacts: [], log: "", fuelUsed: 0n, module: null };
  const finish = (x: ExecutionParts, output?: JsonValue): StepExecution =>
    closeExecution(envelope.id, x, output, Math.max(0, Math.round(now() - started)),
      state.tape.invocationDigest(invocationId), clock);

  const inputError = inputSchemaError(envelope, tool);
  if (inputError !== null) return finish({ ...base, toolError: inputError, stepError: inputError, schemaValidation: "fail" });

  const step = state.workspace.beginStep();
  const memory = state.memory.beginStep();
  const artifacts = state.artifacts.beginStep();
  let committed = false;
  const { stepFuel, budget } = fuelBudget(envelope, state);
  const stops = stepStops(envelope, state);
  const meter = new FuelMeter({ budget, ...stops.meter, stopAt: state.stopPoints?.get(invocationId) ?? null });
  try {
    const host = createHost({
      ...hostContext(state, tool, invocationId, clock),
      workspace: step, memory, artifacts,
      fuel: meter,
      signal: stops.signal,
    });
    const runner = await state.runnerFor(tool, step);
    const outcome = await runner.run({
      toolName: tool.name,
      invocationId,
      code: tool.code,
      input: envelope.arguments as JsonValue,
      host,
      timeoutMs: envelope.timeout_ms,
      fuel: budget,
      meter,
      memoryLimitBytes: STEP_MEMORY_BYTES,
      sandboxApi: state.sandboxApi ?? 1,
    });
    const common = { ...base, log: outcome.log, fuelUsed: outcome.fuelUsed, module: outcome.module ?? null };
    const violation = host.violation ?? step.violation();
    if (violation !== null) {
      return finish({ ...common, violation, toolError: violation, stepError: violation, schemaValidation: "fail" });
    }
    if (outcome.status === "error") {
      const error = asTimeout(outcome.error, tool.name, envelope.timeout_ms, budget < stepFuel);
      return finish({ ...common, toolError: error, stepError: error, schemaValidation: "fail" });
    }
    const refused = isObject(outcome.output) ? notJsonError(envelope, tool, outcome.output) : notAnObjectError(envelope, tool, outcome.output);
    if (refused !== null) return finish({ ...common, toolError: refused, stepError: refused, schemaValidation: "fail" });
    const output = outcome.output as JsonObject;
    if (output["status"] === "insufficient") {
      return finish({ ...common, toolOutput: output, stepError: insufficientError(envelope, tool), schemaValidation: "pass" }, output);
    }
    const contractError = outputContractError(envelope, tool, returnSpec, output);
    if (contractError !== null) return finish({ ...common, toolOutput: output, stepError: contractError, schemaValidation: "fail" });
    const staged = artifacts.staged.map((a) => a.info);
    step.commit();
    memory.commit();
    artifacts.commit();
    committed = true;
    return finish({ ...common, toolOutput: output, stepError: null, schemaValidation: "pass", artifacts: staged }, output);
  } finally {
    stops.dispose();
    if (!committed) {
      if (step.isOpen()) step.rollback();
      if (memory.isOpen()) memory.rollback();
      artifacts.rollback();
    }
  }
}
