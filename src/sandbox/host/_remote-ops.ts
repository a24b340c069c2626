/**
 * The host ops that wait on something outside the run: `http.fetch` (a web server) and `mcp.call` (an MCP server).
 * `host.ts` counts, records and queues them (one at a time, in call order); here each is validated, checked against
 * the pack's capabilities and, live, performed. In replay the tape answers: the checks still run (a violation must
 * recur) and no server is reached.
 *
 * A stop while the tool waits (an abort, the watchdog: `../stops.ts`) fails the call with the signal's halting error,
 * which the tape records, so a replay halts at this same call (seed 003 §4.3 "Immediate Halt").
 * @module
 */
import { canonicalize, sortKeys } from "../../canonical/mod.ts";
import type { CapabilityPolicy } from "../../policy/mod.ts";
import { checkFetchUrl, checkOp } from "../../policy/mod.ts";
import { policyViolation, ReachError } from "../../protocol/mod.ts";
import type { FetchLike, JsonObject } from "../../protocol/mod.ts";
import { errorFromDetails } from "../../record/mod.ts";
import type { PlayedCall } from "../../record/mod.ts";
import { performFetch, validateFetch } from "./http.ts";
import type { HttpLimits } from "./http.ts";
import { invalid } from "./_assert.ts";
import type { SecretBox } from "./secrets.ts";

/**
 * The one MCP tool an `mcp` tool's invocation may call with `mcp.call`: its server and tool, and how to call it live
 * (absent in replay, where the tape answers and no server is started).
 */
export type McpBinding = {
  server: string;
  tool: string;
  call?: (args: JsonObject, signal?: AbortSignal) => Promise<JsonObject>;
};

/** What these ops read of the host's context (`HostContext` in `host.ts`, which holds more). */
export type RemoteContext = {
  /** The pack's capability decisions. */
  policy: CapabilityPolicy;
  /** The fetch to use (required for a live `http.fetch`). */
  fetch?: FetchLike;
  /** The run's secrets: placeholders are checked against their hosts, live and in replay. */
  secrets?: SecretBox;
  /** Stops the invocation while it waits. */
  signal?: AbortSignal;
  /** The invocation's own MCP tool (an `mcp` tool's invocation only). */
  mcp?: McpBinding;
};

/**
 * A call under way, as these ops read it: the host's validated copy of the request, its canonical text (null when the
 * host rewrote a large `text` body as `data`), and in replay the tape's record of it.
 */
export type RemoteCall = { request: unknown; text: string | null; played: PlayedCall | null };

const utf8 = new TextEncoder();

/**
 * A copy of a JSON object whose keys, at every depth, are in canonical (RFC 8785) order; built from entries
 * (CreateDataProperty), so a `"__proto__"` member (a header of that name) stays a member.
 * @param value a JSON value
 * @returns the copy
 */
export function keysInOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map(keysInOrder) as T;
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  sortKeys(keys);
  return Object.fromEntries(keys.map((k) => [k, keysInOrder((value as Record<string, unknown>)[k])])) as T;
}

/** The halting error a stop carries, once the signal has fired with one (else null: an abort fails as aborted). */
function stopReason(signal: AbortSignal | undefined): ReachError | null {
  return signal?.aborted === true && signal.reason instanceof ReachError ? signal.reason : null;
}

/** The tape's answer to a replayed call: its error thrown, or its response with keys in canonical order. */
function taped(played: PlayedCall): JsonObject {
  if ("error" in played.outcome) throw errorFromDetails(played.outcome.error);
  return keysInOrder(played.outcome.response as JsonObject);
}

/**
 * `http.fetch`: validate, check the URL, check every secret placeholder against its secret's hosts, then (live) fetch;
 * in replay the tape answers after the same checks.
 * @param ctx the host's context
 * @param limits the host's limits
 * @param call the call under way
 * @returns the response, keys in canonical order
 * @throws ReachError as the checks, the fetch or the recorded outcome say
 */
export async function fetchOp(ctx: RemoteContext, limits: HttpLimits, call: RemoteCall): Promise<JsonObject> {
  const req = validateFetch(call.request, limits.maxRequestBytes);
  checkOp(ctx.policy, "http.fetch", req.url);
  if (call.played !== null) {
    // Replay: the URL checks still run (a violation must recur), then the tape answers; no network.
    const url = checkFetchUrl(ctx.policy, req.url, req.method);
    ctx.secrets?.check({ url, headers: req.headers, body: req.body });
    return taped(call.played);
  }
  // A placeholder bound for a host outside its secret's hosts is refused before anything else, as in replay.
  if (ctx.secrets !== undefined && (call.text === null || call.text.includes("secret:"))) {
    ctx.secrets.check({ url: checkFetchUrl(ctx.policy, req.url, req.method), headers: req.headers, body: req.body });
  }
  if (ctx.fetch === undefined) {
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "http.fetch: this host has no fetch; the runner must inject one",
      { details: { op: "http.fetch" } });
  }
  const early = stopReason(ctx.signal);
  if (early !== null) throw early;
  try {
    // The tool sees the response with its keys in canonical order, live and in replay alike (a server's header
    // order must not change what the tool computes, nor its fuel).
    return keysInOrder(await performFetch(req, ctx.policy, ctx.fetch, limits, ctx.signal, ctx.secrets));
  } catch (err) {
    throw stopReason(ctx.signal) ?? err;
  }
}

/**
 * `mcp.call`: the invocation's own MCP tool only; in replay the tape answers (no server is started), live the
 * server does, and a stop while waiting fails the call with the stop's halting error (recorded, like a fetch's).
 * @param ctx the host's context
 * @param limits the host's limits (`maxResponseBytes` bounds the answer)
 * @param call the call under way
 * @returns the tool's answer, keys in canonical order
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for a malformed request, `POLICY_VIOLATION` for another tool,
 *   `EXEC_RESOURCE_EXHAUSTED` for an answer over the limit
 */
export async function mcpOp(ctx: RemoteContext, limits: HttpLimits, call: RemoteCall): Promise<JsonObject> {
  const r = call.request as JsonObject;
  const bound = ctx.mcp;
  const server = r["server"];
  const tool = r["tool"];
  const args = r["arguments"];
  const extra = Object.keys(r).some((k) => k !== "server" && k !== "tool" && k !== "arguments");
  if (extra || typeof server !== "string" || typeof tool !== "string" || args === null || typeof args !== "object" || Array.isArray(args)) {
    throw invalid("mcp.call", "request", "must be {server: string, tool: string, arguments: object}");
  }
  if (bound === undefined || bound.server !== server || bound.tool !== tool) {
    const only = bound === undefined ? "no MCP tool (it is not an mcp tool)" : `the MCP tool ${bound.tool} of server ${bound.server}`;
    throw policyViolation("UNDEFINED_TOOL", `mcp:${server.slice(0, 64)}/${tool.slice(0, 64)}`, `mcp.call: this invocation may call only ${only}`);
  }
  checkOp(ctx.policy, "mcp.call", `${server}/${tool}`);
  if (call.played !== null) return taped(call.played);
  if (bound.call === undefined) {
    throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "mcp.call: this host has no MCP client; the engine must hand one in",
      { details: { op: "mcp.call" } });
  }
  const early = stopReason(ctx.signal);
  if (early !== null) throw early;
  let answer: JsonObject;
  try {
    answer = keysInOrder(await bound.call(args as JsonObject, ctx.signal));
  } catch (err) {
    throw stopReason(ctx.signal) ?? err;
  }
  const max = limits.maxResponseBytes;
  const size = utf8.encode(canonicalize(answer)).length;
  if (size > max) {
    throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `mcp.call ${server}/${tool}: the answer is ${size} bytes, over the limit ` +
      `of ${max} bytes; ask the tool for less (a page, a narrower query) or raise the host's maxResponseBytes`,
      { details: { op: "mcp.call", server: server.slice(0, 64), tool: tool.slice(0, 64), limit: "responseBytes", max } });
  }
  return answer;
}
