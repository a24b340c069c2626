/**
 * What the MCP server tells an agent: the server's instructions (the session's rules and budget), and the answers to
 * `tools/call` — an output, or a tool execution error (`isError`) saying what went wrong and what to do next (MCP
 * specification 2025-11-25, "Tools" / Error Handling: errors an agent can correct are tool results, not protocol
 * errors). Every answer carries, under `_meta["reach-wasm/run"]`, which run of the session it belongs to and what that
 * run may still spend.
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { SessionBudget, SessionScope, SessionSpent } from "../engine/mod.ts";
import type { RunStatus } from "../engine/mod.ts";
import type { ReachError } from "../protocol/mod.ts";
import type { JsonObject } from "../protocol/mod.ts";

/** Where a call stands in its session: the run (segment) it went to and what that run may still spend. */
export type RunStanding = {
  /** The run's place in the session (1, 2, …). */
  segment: number;
  /** Tool calls the run may still make. */
  callsLeft: number;
  /** Milliseconds of tool time (fuel) the run may still use. */
  timeLeftMs: number;
  /** The run's budget (each run of the session gets it whole). */
  budget: SessionBudget;
};

/**
 * What a session's calls may reach, in words: "workspace data/ (read), temp/ (readwrite); memory keys under notes/
 * (readwrite); network: none".
 * @param scope the scope
 * @returns the text
 */
export function scopeText(scope: SessionScope): string {
  const ws = scope.workspace.map((w) => `${w.root} (${w.access})`).join(", ");
  const memory = scope.memory === null ? "any memory key" : scope.memory.length === 0 ? "no memory keys" : `memory keys under ${scope.memory.map((m) => `${m.prefix === "" ? "(any)" : m.prefix} (${m.access})`).join(", ")}`;
  const net = scope.hosts.length === 0 ? "network: none" : `network hosts: ${scope.hosts.join(", ")}`;
  return `workspace ${ws}; ${memory}; ${net}`;
}

/** A session run that ended: how, and where its capsule went. */
export type EndedRun = { segment: number; runHash: string | null; status: RunStatus | null; capsule: string | null; problem: string | null };

/**
 * The standing of a run that has spent `spent` of `budget`.
 * @param segment the run's place in the session
 * @param budget what each run may spend
 * @param spent what this one spent
 * @returns the standing
 */
export function standing(segment: number, budget: SessionBudget, spent: SessionSpent): RunStanding {
  return { segment, callsLeft: Math.max(0, budget.maxToolCalls - spent.toolCalls), timeLeftMs: Math.max(0, budget.maxExecutionTimeMs - spent.executionTimeMs), budget };
}

/**
 * The server's `instructions`: how calls are recorded, what a refusal does to the session, and the budget.
 * @param budget what each run may spend, when known
 * @param scope what the pack lets calls reach, when known
 * @returns the text
 */
export function instructions(budget: SessionBudget | null, scope: SessionScope | null = null): string {
  const spend = budget === null
    ? "Each run has the pack's budget of tool calls and tool time (manifest.policies)."
    : `Budget: each run of this session may make ${budget.maxToolCalls} tool calls and use ${budget.maxExecutionTimeMs} ms of tool time (counted in fuel, so the same on every machine).`;
  return [
    "Every tools/call is one recorded step of a reach-wasm session run: checked against the pack's policy and the tool's input schema, executed in a sandbox, and recorded so that the run can be verified and replayed from its capsule.",
    "An unknown tool name is a JSON-RPC error (-32602) and arguments that do not match the tool's inputSchema are answered with isError: neither runs, is recorded or costs budget.",
    "A tool that fails or runs out of time is answered with isError; its effects are rolled back and the run goes on.",
    "A policy violation (a path, memory key or host outside what the pack declares) or a spent budget ends the current run: its capsule is written at once, the call is answered with isError naming it, and your next call continues the session in a new run that starts from the same workspace and memory, with a fresh budget.",
    spend,
    ...(scope === null ? [] : [`The pack lets calls reach: ${scopeText(scope)}.`]),
    "tools/list's _meta \"reach-wasm/run\" and every tools/call result's _meta \"reach-wasm/run\" say which run you are in and what it may still spend.",
    "The run's workspace files are resources (workspace:///<path>, read-only).",
  ].join(" ");
}

/**
 * A successful call's answer: the output as `structuredContent` and as a JSON text block.
 * @param output the tool's output
 * @param where the run it went to
 * @returns the result
 */
export function outputResult(output: JsonObject, where: RunStanding): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output, _meta: { "reach-wasm/run": where } };
}

/**
 * A successful call's answer for a tool of an MCP server: the server's own result (its content of every type, its
 * structuredContent, its _meta) passed through, with the run's standing added to `_meta`.
 * @param output the step's output: the server's CallToolResult as recorded
 * @param where the run it went to
 * @returns the result
 */
export function mcpToolResult(output: JsonObject, where: RunStanding): CallToolResult {
  const meta = output["_meta"] !== null && typeof output["_meta"] === "object" && !Array.isArray(output["_meta"]) ? output["_meta"] : {};
  return { ...output, content: Array.isArray(output["content"]) ? output["content"] : [], _meta: { ...meta, "reach-wasm/run": where } } as unknown as CallToolResult;
}

/** What to do about an error, by its code (the run went on). */
function advice(error: ReachError): string {
  switch (error.code) {
    case "PROTO_SCHEMA_VIOLATION":
      return "Fix the arguments to match the tool's inputSchema (tools/list) and call again.";
    case "EXEC_TOOL_TIMEOUT":
      return "The tool was stopped at its time limit and what it did was rolled back; the run goes on. Call it with less work (smaller input, or the work split across calls).";
    case "EXEC_OUTPUT_INVALID":
      return "The tool's answer did not match its outputSchema and was not kept; the run goes on. Try other arguments or another tool.";
    case "EXEC_STEP_REFERENCE_UNRESOLVED":
      return "An argument refers to a call's output that has no such value; the run goes on. Pass the value itself.";
    default:
      return error.severity === "soft" ? "The tool failed and what it did was rolled back; the run goes on. Check the arguments against the message and call again, or use another tool." : "";
  }
}

/** Why a run ended, and what the next call does. */
function endedNote(ended: EndedRun, budget: SessionBudget, continues: boolean): string {
  const capsule = ended.capsule !== null ? `its capsule is ${ended.capsule}` : `its capsule could not be written (${ended.problem ?? "unknown"})`;
  const run = ended.runHash === null ? `Run ${ended.segment} of this session ended without a capsule (${ended.problem ?? "unknown"})` : `Run ${ended.segment} of this session ended ${ended.status} (run hash ${ended.runHash}); ${capsule}`;
  if (!continues) return `${run}. The server is stopping: no further calls.`;
  const next = ended.runHash === null ? 1 : ended.segment + 1;
  const from = ended.runHash === null ? "the pack's initial workspace and an empty memory (the ended run's state was lost)" : `the workspace and memory run ${ended.segment} ended with`;
  return `${run}. This call was not carried out. Your next call continues the session in run ${next}, which starts from ${from}, with a fresh budget (${budget.maxToolCalls} tool calls, ${budget.maxExecutionTimeMs} ms); repeat the call if you still need it.`;
}

/** Why an error ended its run. */
function whyEnded(error: ReachError, budget: SessionBudget, scope: SessionScope | null): string {
  if (error.code === "POLICY_RATE_LIMIT_EXCEEDED") return `This run's budget of ${budget.maxToolCalls} tool calls is spent. `;
  if (error.code === "POLICY_TIMEOUT_EXCEEDED") return `This run's budget of ${budget.maxExecutionTimeMs} ms of tool time is spent. `;
  if (error.code === "POLICY_VIOLATION") return `A policy violation ends the run it happens in (Reach Protocol §7.2): use only what the pack declares${scope === null ? "" : ` — ${scopeText(scope)}`}. `;
  return "";
}

/**
 * A refused or failed call's answer (a tool execution error): the code and message, what to do next, and — when the
 * call ended its run — which capsule that run went to and how the session goes on. The error document
 * (error.schema.json) is under `_meta["reach-wasm/error"]`.
 * @param error what went wrong
 * @param where the run the call went to (for an ended run: the next one, not opened yet)
 * @param ended the run the call ended, if it did
 * @param continues whether the session goes on after it (false when the server is stopping)
 * @param scope what the pack lets calls reach (named when a policy violation ended the run)
 * @returns the result
 */
export function errorResult(error: ReachError, where: RunStanding | null, ended: EndedRun | null = null, continues = true, scope: SessionScope | null = null): CallToolResult {
  const budget = where?.budget ?? { maxToolCalls: 0, maxExecutionTimeMs: 0 };
  const hint = ended === null ? advice(error) : whyEnded(error, budget, scope) + endedNote(ended, budget, continues);
  const text = `${error.code}: ${error.message}${hint === "" ? "" : ` — ${hint}`}`;
  const meta: Record<string, unknown> = { "reach-wasm/error": error.toJSON() };
  if (where !== null) meta["reach-wasm/run"] = where;
  if (ended !== null) meta["reach-wasm/ended"] = ended;
  return { isError: true, content: [{ type: "text", text }], _meta: meta };
}
