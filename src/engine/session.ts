/**
 * Session runs: a run whose steps arrive one at a time from outside (an agent over MCP). Each call is checked like a
 * plan step — the tool must be one of the pack's or an infra tool (else a recorded `POLICY_VIOLATION`,
 * `UNDEFINED_TOOL`), the arguments must match its input schema, the run's budgets (`maxToolCalls`,
 * `maxExecutionTime`) must allow it — then executed and recorded exactly as a plan step is (`Run.execute`).
 *
 * Ending: a hard failure (seed 003 §7.2: a policy violation, a spent budget, an abort) ends the session run FAILED or
 * ABORTED; a soft failure (the tool failed, its output did not match) and arguments that do not match the tool's
 * input schema are answered as errors and the session goes on. `close()` ends it COMPLETED. Either way the capsule
 * records the calls as its plan (`plan.json`, planner `session`) and `request.json` says `mode: "session"`, so
 * `replay` walks the same calls with the same rules and `verify` checks it like any other capsule.
 *
 * A run that is part of a session chain (`RunRequest.session`, conformance/HASHING.md "Session chains") refuses
 * arguments that do not match the tool's input schema before they become a step: the call is answered and nothing is
 * recorded or counted against the run's budgets (it never ran). Runs without a chain (capsules made before chains)
 * record such a call as a failed step, and replay them that way.
 * @module
 */
import { ReachError, policyViolation } from "../protocol/mod.ts";
import { PLAN_CONTRACT_VERSION } from "../protocol/mod.ts";
import type { Blueprint, PlanStep } from "../protocol/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { hashCanonical } from "../canonical/mod.ts";
import { FUEL_PER_MS } from "./executor.ts";
import { compileSchema } from "./schema-check.ts";
import { acceptJsonValue } from "../protocol/mod.ts";
import { deepFreeze } from "./pack-document.ts";
import type { LoadedPack, PackTool } from "./pack.ts";
import { infraAllowed, infraRefusal, infraTool, infraTools } from "./infra-tools.ts";
import { Run } from "./run.ts";
import { Aborted } from "./run-stops.ts";
import { refuseStep } from "./step-refusal.ts";
import { executeStep } from "./run-steps.ts";
import type { StepOutcome } from "./run-steps.ts";
import { finishRun } from "./run-record.ts";
import type { RunRecord, RunRequest } from "./types.ts";

/** A tool as a session offers it (MCP `tools/list`). */
export type SessionTool = {
  name: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject | null;
  /** `mcp` for a tool of an MCP server (its output is the server's CallToolResult; recorded, not contained). */
  kind?: string;
};

/** A regular file of the session's workspace (MCP resources). */
export type WorkspaceFile = { path: string; size: number };

/** What a session run may spend (seed 003 §4.1 policies `maxToolCalls` and `maxExecutionTime`, the latter in fuel). */
export type SessionBudget = { maxToolCalls: number; maxExecutionTimeMs: number };

/**
 * What a session's calls may reach, as the run enforces the pack's declared resources (seed 003 §4.1): workspace
 * folders with their access (`temp` always read-write), memory key prefixes (null: any key), and network hosts. For
 * agents: the server states it, so that a refused path or key can be corrected.
 */
export type SessionScope = {
  workspace: { root: string; access: string }[];
  memory: { prefix: string; access: string }[] | null;
  hosts: string[];
};

/** What a session run has spent so far: tool calls, and tool time in ms of fuel ({@link FUEL_PER_MS} units per ms). */
export type SessionSpent = { toolCalls: number; executionTimeMs: number };

/** The answer to one call (with what the run has spent after it). */
export type SessionCall =
  | { ok: true; stepId: string; output: JsonObject; spent: SessionSpent }
  | { ok: false; stepId: string | null; error: ReachError; ended: boolean; spent: SessionSpent };

/** Whether an error ends the session (hard failures do, except arguments that did not match the input schema). */
function endsSession(error: ReachError): boolean {
  return error.severity === "hard" && error.code !== "PROTO_SCHEMA_VIOLATION";
}

/** Whether arguments hold a `$input` / `$step` reference (resolved when the step runs, so checked only then). */
function hasReference(value: JsonValue): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(hasReference);
  return Object.hasOwn(value, "$input") || Object.hasOwn(value, "$step") || Object.values(value).some(hasReference);
}

/**
 * Why a call's arguments cannot run (they do not match the tool's input schema), checked as the executor would, or
 * null. Arguments with references are left to the executor.
 */
function refusedArguments(tool: string, schema: JsonObject | undefined, args: JsonObject): ReachError | null {
  if (schema === undefined || hasReference(args)) return null;
  const check = compileSchema(schema)(args);
  if (check.ok) return null;
  return new ReachError("PROTO_SCHEMA_VIOLATION", `the arguments do not match tool "${tool}"'s inputSchema: ${check.problems.join("; ")}; nothing ran (the call is not recorded and costs no budget): fix the arguments and call again`, {
    details: { tool, problems: check.problems },
  });
}

/** The session's calls as a plan (`plan.json` of its capsule). */
function sessionPlan(runId: string, epoch: string, steps: readonly PlanStep[]): Blueprint {
  return {
    contract_version: PLAN_CONTRACT_VERSION,
    plan_id: `session-${runId}`,
    goal_id: "session",
    created_at: epoch,
    planner: "session",
    status: "APPROVED",
    risk: { level: 0 },
    scope: { allowed: [...new Set(steps.map((s) => s.tool))].sort() },
    steps: [...steps],
    success_criteria: [],
  };
}

/**
 * A session run in progress. Make one with {@link Session.open}; the engine call `openSession` (engine.ts) wraps it
 * with pack loading, trust and the capsule.
 * @example
 * const session = Session.open({ loaded, env, restricted: true });
 * const r = await session.call("wordcount", { text: "a b" });
 * const record = session.close();
 */
export class Session {
  readonly run: Run;
  readonly #loaded: LoadedPack;
  readonly #steps: PlanStep[] = [];
  #record: RunRecord | null = null;
  #busy: Promise<unknown> = Promise.resolve();

  private constructor(run: Run, loaded: LoadedPack) {
    this.run = run;
    this.#loaded = loaded;
  }

  /**
   * Open a session run: PENDING → PREPARING → EXECUTING, `run.started` written.
   * @param request the run request (its `replay`, when replaying a session capsule)
   * @returns the session
   */
  static open(request: Omit<RunRequest, "mode">): Session {
    const run = Run.prepare({ ...request, mode: "session" });
    run.start(null);
    run.phases.push("EXECUTING");
    return new Session(run, request.loaded);
  }

  /** What the run may spend (the pack's policies). */
  budget(): SessionBudget {
    const p = this.#loaded.pack.manifest.policies;
    return { maxToolCalls: p.maxToolCalls, maxExecutionTimeMs: p.maxExecutionTime };
  }

  /** What the run's calls may reach (the pack's declared resources, as this run enforces them). */
  scope(): SessionScope {
    const p = this.run.policy;
    const readOnly = p.restricted || p.filesystemReadonly;
    const workspace = p.workspaceRoots.map((r) => ({ root: `${r.root}/`, access: readOnly ? "read" : r.access }));
    const network = !p.restricted && !p.networkDisabled && p.permissions.has("network");
    return {
      workspace: [...workspace, { root: "temp/", access: "readwrite" }],
      memory: p.memoryGrants === null ? null : p.memoryGrants.map((g) => ({ prefix: g.prefix, access: g.access })),
      hosts: network ? [...p.allowedHosts] : [],
    };
  }

  /** What the run has spent so far. */
  spent(): SessionSpent {
    return { toolCalls: this.run.toolCalls, executionTimeMs: Number(this.run.fuelSpent / FUEL_PER_MS) };
  }

  /** The tools a caller may use: the pack's, then the infra tools (those `infraTools` allows). */
  tools(): SessionTool[] {
    const all: PackTool[] = [...this.#loaded.tools.values(), ...infraTools().filter((t) => infraAllowed(t.name, this.run.request.infraTools))];
    return all.map((t) => ({
      name: t.name,
      description: t.definition.description ?? `The ${t.definition.kind} tool "${t.name}" of pack ${this.#loaded.pack.id} (the pack gives no description; its arguments are described by inputSchema)`,
      inputSchema: (t.definition.inputSchema as JsonObject | undefined) ?? { type: "object" },
      outputSchema: (t.definition.outputSchema as JsonObject | undefined) ?? null,
      ...(t.definition.kind === "mcp" ? { kind: "mcp" } : {}),
    }));
  }

  /**
   * The workspace's regular files as the committed steps left them (a step in progress is not visible), sorted by
   * path; every root is listed, as the capsule holds them all. Reading never changes the run.
   * @returns path and size of each file
   * @example session.workspaceFiles() // [{ path: "temp/a.txt", size: 3 }]
   */
  workspaceFiles(): WorkspaceFile[] {
    return [...this.run.workspace.contents().files].map(([path, bytes]) => ({ path, size: bytes.length }));
  }

  /**
   * A copy of one workspace file's bytes, as the committed steps left it.
   * @param path a workspace path as {@link Session.workspaceFiles} lists it
   * @returns the bytes, or null when there is no such regular file
   * @example session.readWorkspaceFile("temp/a.txt")
   */
  readWorkspaceFile(path: string): Uint8Array | null {
    return this.run.workspace.contents().files.get(path)?.slice() ?? null;
  }

  /** The record once the session ended (closed, or a hard failure), else null. */
  get ended(): RunRecord | null {
    return this.#record;
  }

  /**
   * One call: checked, executed and recorded as a step. Calls are serialised (one step at a time, seed 003 §3.2).
   * @param tool the tool name
   * @param args its arguments (a JSON object)
   * @returns the output, or the error and whether it ended the session
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when the session already ended; `POLICY_VIOLATION` for an
   *   infrastructure tool outside `infraTools` (refused unrecorded: the session goes on)
   */
  call(tool: string, args: JsonValue): Promise<SessionCall> {
    const next = this.#busy.then(() => this.#call(tool, args));
    this.#busy = next.catch(() => undefined);
    return next;
  }

  async #call(tool: string, args: JsonValue): Promise<SessionCall> {
    if (this.#record !== null) {
      throw new ReachError("PROTO_SEQUENCE_ERROR", `the session run ended ${this.#record.status} (run hash ${this.#record.runHash}); its capsule is written — start a new session`, { details: { runHash: this.#record.runHash, status: this.#record.status } });
    }
    // The arguments as their canonical copy, as a replay reads them back from plan.json (conformance/HASHING.md
    // "What a tool sees"); arguments that are not JSON data or nest too deep are refused before anything is recorded.
    let taken: JsonValue;
    try {
      taken = acceptJsonValue(args, { what: `the arguments of the call to "${tool.slice(0, 64)}"`, code: "PROTO_INVALID_ARGUMENT" }).value;
    } catch (err) {
      if (err instanceof ReachError) return { ok: false, stepId: null, error: err, ended: false, spent: this.spent() };
      throw err;
    }
    const arguments_ = (taken !== null && typeof taken === "object" && !Array.isArray(taken) ? taken : {}) as JsonObject;
    const definition = (this.#loaded.tools.get(tool) ?? infraTool(tool))?.definition;
    if (definition !== undefined && this.run.request.session !== undefined) {
      const refused = refusedArguments(tool, definition.inputSchema as JsonObject | undefined, arguments_);
      if (refused !== null) return { ok: false, stepId: null, error: refused, ended: false, spent: this.spent() };
    }
    const stepId = `call-${this.#steps.length + 1}`;
    const infraRefused = infraRefusal([{ id: stepId, tool }], this.run.request.infraTools);
    if (infraRefused !== null) throw infraRefused;
    const step: PlanStep = deepFreeze({ id: stepId, tool, arguments: arguments_, return_spec: { type: "object" } });
    this.#steps.push(step);
    let exec: StepOutcome;
    try {
      if (definition === undefined) {
        const error = policyViolation("UNDEFINED_TOOL", tool, `tool "${tool}" is not one of this pack's tools nor an infra tool; call tools/list for the tools you may use`);
        refuseStep(this.run, step, error);
        return this.#end(stepId, error);
      }
      exec = await executeStep(this.run, step, 0, this.#steps.length);
    } catch (err) {
      const error = err instanceof Aborted ? this.run.abortError() : err instanceof ReachError ? err : new ReachError("EXEC_TOOL_FAILED", String(err));
      this.#record = this.#finish(err);
      return { ok: false, stepId, error, ended: true, spent: this.spent() };
    }
    if (exec.stepError === null) return { ok: true, stepId, output: exec.toolOutput!, spent: this.spent() };
    if (endsSession(exec.stepError)) return this.#end(stepId, exec.stepError);
    return { ok: false, stepId, error: exec.stepError, ended: false, spent: this.spent() };
  }

  #end(stepId: string, error: ReachError): SessionCall {
    this.run.failedStep = stepId;
    this.#record = this.#finish(error);
    return { ok: false, stepId, error, ended: true, spent: this.spent() };
  }

  #finish(err: unknown): RunRecord {
    const plan = deepFreeze(sessionPlan(this.run.runId, this.run.epoch, this.#steps));
    this.run.gated = Object.freeze({ plan, steps: plan.steps!, planHash: hashCanonical(plan), approvedBy: null });
    void this.run.closeMcp().catch(() => undefined); // the session is over: its MCP servers stop
    return finishRun(this.run, err);
  }

  /**
   * End the session (the client closed it, or a signal): COMPLETED, or ABORTED with `aborted`.
   * @param aborted end it ABORTED (a signal)
   * @returns the record (the same one when the session had already ended)
   */
  async close(aborted = false): Promise<RunRecord> {
    await this.#busy;
    if (this.#record !== null) return this.#record;
    let err: unknown = null;
    try {
      this.run.checkAbort({ phase: "executing", stepIndex: this.run.stepIndex });
      if (aborted) throw new Aborted({ phase: "executing", stepIndex: this.run.stepIndex });
    } catch (e) {
      err = e;
    }
    this.#record = this.#finish(err);
    await this.run.closeMcp().catch(() => undefined);
    return this.#record;
  }
}
