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
 * @module
 */
import { ReachError, policyViolation } from "../protocol/errors.ts";
import { PLAN_CONTRACT_VERSION } from "../protocol/plan.ts";
import type { Blueprint, PlanStep } from "../protocol/plan.ts";
import type { JsonObject, JsonValue } from "../sandbox/types.ts";
import { hashCanonical } from "../canonical/jcs.ts";
import { deepFreeze } from "./pack.ts";
import type { LoadedPack, PackTool } from "./pack.ts";
import { infraAllowed, infraRefusal, infraTool, infraTools } from "./infra-tools.ts";
import { Aborted, Run } from "./run.ts";
import type { StepOutcome } from "./run-steps.ts";
import type { RunRecord, RunRequest } from "./types.ts";

/** A tool as a session offers it (MCP `tools/list`). */
export type SessionTool = { name: string; description: string; inputSchema: JsonObject; outputSchema: JsonObject | null };

/** A regular file of the session's workspace (MCP resources). */
export type WorkspaceFile = { path: string; size: number };

/** The answer to one call. */
export type SessionCall =
  | { ok: true; stepId: string; output: JsonObject }
  | { ok: false; stepId: string | null; error: ReachError; ended: boolean };

/** Whether an error ends the session (hard failures do, except arguments that did not match the input schema). */
function endsSession(error: ReachError): boolean {
  return error.severity === "hard" && error.code !== "PROTO_SCHEMA_VIOLATION";
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

  /** The tools a caller may use: the pack's, then the infra tools (those `infraTools` allows). */
  tools(): SessionTool[] {
    const all: PackTool[] = [...this.#loaded.tools.values(), ...infraTools().filter((t) => infraAllowed(t.name, this.run.request.infraTools))];
    return all.map((t) => ({
      name: t.name,
      description: t.definition.description ?? `${t.definition.kind} tool ${t.name}`,
      inputSchema: (t.definition.inputSchema as JsonObject | undefined) ?? { type: "object" },
      outputSchema: (t.definition.outputSchema as JsonObject | undefined) ?? null,
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
    const stepId = `call-${this.#steps.length + 1}`;
    const refused = infraRefusal([{ id: stepId, tool }], this.run.request.infraTools);
    if (refused !== null) throw refused;
    const arguments_ = (args !== null && typeof args === "object" && !Array.isArray(args) ? args : {}) as JsonObject;
    const step: PlanStep = deepFreeze({ id: stepId, tool, arguments: arguments_, return_spec: { type: "object" } });
    this.#steps.push(step);
    const known = this.#loaded.tools.has(tool) || infraTool(tool) !== undefined;
    let exec: StepOutcome;
    try {
      if (!known) {
        const error = policyViolation("UNDEFINED_TOOL", tool, `tool "${tool}" is not one of this pack's tools nor an infra tool; call tools/list for the tools you may use`);
        this.run.refuse(step, error);
        return this.#end(stepId, error);
      }
      exec = await this.run.execute(step, 0, this.#steps.length);
    } catch (err) {
      const error = err instanceof Aborted ? this.run.abortError() : err instanceof ReachError ? err : new ReachError("EXEC_TOOL_FAILED", String(err));
      this.#record = this.#finish(err);
      return { ok: false, stepId, error, ended: true };
    }
    if (exec.stepError === null) return { ok: true, stepId, output: exec.toolOutput! };
    if (endsSession(exec.stepError)) return this.#end(stepId, exec.stepError);
    return { ok: false, stepId, error: exec.stepError, ended: false };
  }

  #end(stepId: string, error: ReachError): SessionCall {
    this.run.failedStep = stepId;
    this.#record = this.#finish(error);
    return { ok: false, stepId, error, ended: true };
  }

  #finish(err: unknown): RunRecord {
    const plan = deepFreeze(sessionPlan(this.run.runId, this.run.epoch, this.#steps));
    this.run.gated = Object.freeze({ plan, planHash: hashCanonical(plan), approvedBy: null });
    return this.run.finish(err);
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
    return this.#record;
  }
}
