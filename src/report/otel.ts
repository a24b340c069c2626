/**
 * A run as OpenTelemetry traces: the span model of a capsule (`reach-wasm export otel`, and the live export of
 * `--otlp-endpoint`), web-standard and deterministic. One trace per run:
 *
 * | span | from | name | kind | conventions |
 * |---|---|---|---|---|
 * | the run | `run.started` … terminal event | `invoke_workflow {packId}` | INTERNAL | `gen_ai.operation.name` `invoke_workflow` |
 * | each step | `run.step.started` … `run.step.completed`/`failed` | `step {stepId}` | INTERNAL | `reach.step.*` |
 * | each tool call | `tool.invoked` … `tool.completed`/`failed` | `execute_tool {tool}` | INTERNAL | GenAI `execute_tool` |
 * | each MCP call (a session run) | the same events | `tools/call {tool}` | SERVER | GenAI `execute_tool` + MCP |
 *
 * Host calls (`tape.jsonl`) are span events `reach.host_call` on their tool call's span; policy violations are span
 * events `reach.policy.violation` on the run's span. The MCP semantic conventions say an MCP tool call's span is the
 * GenAI `execute_tool` span with the MCP attributes added, so a session run's tool spans carry both.
 *
 * Ids (docs/opentelemetry.md): trace id = the first 16 bytes of SHA-256(`reach-wasm/otel/trace:` + runHash); the run's
 * span id = the first 8 bytes of SHA-256(`reach-wasm/otel/run:` + runHash); any other span's = the first 8 bytes of
 * SHA-256(`reach-wasm/otel/span:` + runHash + `:` + the hash of the event that opened it). A session run links its
 * run span to the run span of the run it continues (`previousRunHash`), whose ids follow from that hash alone.
 * Times: each event's virtual timestamp (the capsule's clock) unless the caller gives real ones.
 * @module
 */
import { sha256 } from "../canonical/mod.ts";
import { bytesToHex } from "../canonical/mod.ts";
import { verifyJsonl, readJsonl } from "../ledger/mod.ts";
import { isCommittedTape, readTapeJsonl } from "../record/mod.ts";
import type { TapeRecord } from "../record/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { OtelSpan, OtelTrace, OtelValue } from "../protocol/mod.ts";
import { get, obj, parseJsonBytes, str } from "./_json.ts";
import type { Obj } from "./_json.ts";

export type { OtelSpan, OtelTrace, OtelValue } from "../protocol/mod.ts";

/** What an event's time is, in ns since the Unix epoch (default: its virtual timestamp). */
export type EventClock = (event: { eventHash: string; timestamp: string; sequence: number }) => bigint;

/** Options of {@link otelTrace}. */
export type OtelOptions = {
  /** The instrumentation scope (the exporter's name and version). */
  scope: { name: string; version: string };
  /** Real event times (live export); default each event's virtual timestamp. */
  clock?: EventClock;
  /** The MCP session this run belongs to (`mcp.session.id`: its chain's first run hash), when known. */
  mcpSessionId?: string;
};

type Event = { type: string; sequence: number; timestamp: string; eventHash: string; payload: Obj };

const hexPrefix = (text: string, bytes: number): string => {
  const h = bytesToHex(sha256(text).subarray(0, bytes));
  return /^0+$/.test(h) ? `${h.slice(0, -1)}1` : h; // the all-zero id is invalid (W3C trace context)
};

/**
 * The trace id of a run.
 * @param runHash the run hash (64 hex)
 * @returns 32 lowercase hex
 */
export const traceIdOf = (runHash: string): string => hexPrefix(`reach-wasm/otel/trace:${runHash}`, 16);
/**
 * The span id of a run's own span.
 * @param runHash the run hash (64 hex)
 * @returns 16 lowercase hex
 */
export const runSpanIdOf = (runHash: string): string => hexPrefix(`reach-wasm/otel/run:${runHash}`, 8);
const spanIdOf = (runHash: string, eventHash: string): string => hexPrefix(`reach-wasm/otel/span:${runHash}:${eventHash}`, 8);

/** The virtual clock: the event's own timestamp (ms) in ns. */
export const virtualClock: EventClock = (e) => {
  const ms = Date.parse(e.timestamp);
  return Number.isFinite(ms) && ms >= 0 ? BigInt(ms) * 1_000_000n : 0n;
};

function readEvents(entries: ReadonlyMap<string, Uint8Array>): { events: Event[]; runHash: string } {
  const bytes = entries.get("events.jsonl");
  if (bytes === undefined) throw new ReachError("REPLAY_CAPSULE_INVALID", "there is no events.jsonl: this is not a reach-wasm capsule or run directory");
  const chain = verifyJsonl(bytes);
  if (!chain.valid) throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule's event chain does not verify (event ${chain.index}${chain.field === "" ? "" : ` field ${chain.field}`}: ${chain.reason}); run \`reach-wasm verify\` on it — a damaged capsule is not exported`);
  const events = readJsonl(bytes).events.map((raw) => {
    const o = obj(raw)!;
    return { type: str(o, "type")!, sequence: Number(get(o, "sequence")), timestamp: str(o, "timestamp") ?? "", eventHash: str(o, "eventHash")!, payload: obj(get(o, "payload")) ?? {} };
  });
  return { events, runHash: chain.runHash };
}

function tapeOf(entries: ReadonlyMap<string, Uint8Array>): TapeRecord[] {
  const bytes = entries.get("tape.jsonl");
  if (bytes === undefined) return [];
  try {
    const records = readTapeJsonl(bytes, undefined, entries);
    if (!isCommittedTape(bytes)) return records;
    // A salted tape (conformance/HASHING.md "Value commitments"): a call's hashes are its salted commitments, the same
    // whether its values were redacted or not, so a trace gives away no plain hash a short value could be found from.
    const lines = new TextDecoder().decode(bytes).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { requestCommit: string; responseCommit: string });
    return records.map((r, i) => ({ ...r, requestHash: lines[i]!.requestCommit, responseHash: lines[i]!.responseCommit }));
  } catch (err) {
    throw new ReachError("REPLAY_CAPSULE_INVALID", `the capsule's tape.jsonl cannot be read (${err instanceof Error ? err.message : String(err)}); run \`reach-wasm verify\` on it`);
  }
}

/** The error code of a failed event's payload, else null. */
const errorCode = (p: Obj): string | null => str(obj(get(p, "error")), "code");

const TERMINAL = new Set(["run.completed", "run.failed", "run.aborted"]);

/** The session link of a session run (request.json `session`), or null. */
function sessionOf(entries: ReadonlyMap<string, Uint8Array>): { segment: number; previousRunHash: string | null } | null {
  const request = obj(parseJsonBytes(entries.get("request.json")));
  if (str(request, "mode") !== "session") return null;
  const s = obj(get(request, "session"));
  const segment = get(s, "segment");
  const previous = str(s, "previousRunHash");
  return { segment: typeof segment === "number" ? segment : 1, previousRunHash: previous !== null && /^[0-9a-f]{64}$/.test(previous) ? previous : null };
}

/**
 * The trace of one run, from its capsule's entries (or a run directory's files under the same names).
 * @param entries the entries by capsule name (`events.jsonl`, `tape.jsonl`, `request.json`)
 * @param options scope, clock, MCP session
 * @returns the run's trace
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when there are no events, the chain does not verify, or the tape is unreadable
 * @example encodeOtlpJson([otelTrace(capsule.entries, { scope: { name: "reach-wasm", version: "0.1.0" } })])
 */
export function otelTrace(entries: ReadonlyMap<string, Uint8Array>, options: OtelOptions): OtelTrace {
  const { events, runHash } = readEvents(entries);
  const clock = options.clock ?? virtualClock;
  const at = (e: Event): bigint => clock(e);
  const session = sessionOf(entries);
  // an MCP session is named by its chain's first run (`--out/sessions/<first run hash>.json`): known here for the
  // first run of a chain; a later run's comes from the caller (the live export follows the chain), else it is left out
  const mcpSessionId = options.mcpSessionId ?? (session !== null && session.previousRunHash === null ? runHash : undefined);
  const traceId = traceIdOf(runHash);
  const first = events[0]!;
  const last = events[events.length - 1]!;
  const started = first.payload;
  const packId = str(started, "packId") ?? "pack";
  const root: OtelSpan = {
    traceId, spanId: runSpanIdOf(runHash), parentSpanId: null, name: `invoke_workflow ${packId}`, kind: 1, startNs: at(first), endNs: at(last),
    attributes: runAttributes(started, runHash, last, session, mcpSessionId),
    events: [], links: session?.previousRunHash ? [{ traceId: traceIdOf(session.previousRunHash), spanId: runSpanIdOf(session.previousRunHash), attributes: [["reach.link", "previous_session_run"]] }] : [],
    status: TERMINAL.has(last.type) && last.type !== "run.completed" ? { code: 2, message: errorCode(last.payload) ?? last.type } : { code: 0 },
  };
  if (!TERMINAL.has(last.type)) root.attributes.push(["reach.run.incomplete", true]);
  const spans = [root, ...childSpans(events, runHash, root, at, session !== null, mcpSessionId)];
  addHostCalls(spans, tapeOf(entries));
  return { resource: [["service.name", "reach-wasm"]], scope: options.scope, spans };
}

function runAttributes(p: Obj, runHash: string, last: Event, session: ReturnType<typeof sessionOf>, mcpSessionId: string | undefined): [string, OtelValue][] {
  const a: [string, OtelValue][] = [["gen_ai.operation.name", "invoke_workflow"], ["gen_ai.workflow.name", str(p, "packId") ?? ""], ["reach.run.hash", runHash]];
  for (const [key, field] of [["reach.run.id", "runId"], ["reach.pack.id", "packId"], ["reach.pack.version", "packVersion"], ["reach.pack.digest", "packDigest"], ["reach.plan.id", "planId"], ["reach.plan.hash", "planHash"], ["reach.seed", "seed"]] as const) {
    const v = str(p, field);
    if (v !== null) a.push([key, v]);
  }
  a.push(["reach.run.status", last.type === "run.completed" ? "COMPLETED" : last.type === "run.aborted" ? "ABORTED" : last.type === "run.failed" ? "FAILED" : "INCOMPLETE"]);
  const code = errorCode(last.payload);
  if (code !== null) a.push(["error.type", code]);
  if (session !== null) {
    a.push(["reach.session.segment", session.segment]);
    if (session.previousRunHash !== null) a.push(["reach.session.previous_run_hash", session.previousRunHash]);
    if (mcpSessionId !== undefined) a.push(["mcp.session.id", mcpSessionId]);
  }
  return a;
}

/** A span still open. */
type Open = { span: OtelSpan };

function toolSpan(e: Event, runHash: string, parent: OtelSpan, at: (e: Event) => bigint, mcp: boolean, mcpSessionId: string | undefined): OtelSpan {
  const tool = str(e.payload, "toolName") ?? "";
  const a: [string, OtelValue][] = [["gen_ai.operation.name", "execute_tool"], ["gen_ai.tool.name", tool], ["gen_ai.tool.type", "function"]];
  const call = str(e.payload, "invocationId");
  if (call !== null) a.push(["gen_ai.tool.call.id", call]);
  if (mcp) {
    a.push(["mcp.method.name", "tools/call"]);
    if (mcpSessionId !== undefined) a.push(["mcp.session.id", mcpSessionId]);
  }
  const stepId = str(e.payload, "stepId");
  if (stepId !== null) a.push(["reach.step.id", stepId]);
  const name = mcp ? `tools/call ${tool}` : `execute_tool ${tool}`;
  return { traceId: parent.traceId, spanId: spanIdOf(runHash, e.eventHash), parentSpanId: parent.spanId, name, kind: mcp ? 2 : 1, startNs: at(e), endNs: at(e), attributes: a, events: [], links: [], status: { code: 0 } };
}

function stepSpan(e: Event, runHash: string, parent: OtelSpan, at: (e: Event) => bigint): OtelSpan {
  const a: [string, OtelValue][] = [["reach.step.id", str(e.payload, "stepId") ?? ""]];
  const index = get(e.payload, "stepIndex");
  if (typeof index === "number" && Number.isSafeInteger(index)) a.push(["reach.step.index", index]);
  const type = str(e.payload, "stepType");
  if (type !== null) a.push(["reach.step.type", type]);
  const tool = str(e.payload, "toolName");
  if (tool !== null) a.push(["reach.tool.name", tool]);
  return { traceId: parent.traceId, spanId: spanIdOf(runHash, e.eventHash), parentSpanId: parent.spanId, name: `step ${str(e.payload, "stepId") ?? ""}`, kind: 1, startNs: at(e), endNs: at(e), attributes: a, events: [], links: [], status: { code: 0 } };
}

/** Close a tool span with its `tool.completed` / `tool.failed` event. */
function endTool(span: OtelSpan, e: Event, at: (e: Event) => bigint): void {
  span.endNs = at(e);
  const fuel = get(e.payload, "fuel");
  if (typeof fuel === "number" && Number.isSafeInteger(fuel)) span.attributes.push(["reach.tool.fuel", fuel]);
  else if (typeof fuel === "string") span.attributes.push(["reach.tool.fuel", fuel]);
  const output = str(e.payload, "outputHash");
  if (output !== null) span.attributes.push(["reach.tool.output_hash", output]);
  if (e.type === "tool.failed") {
    const code = errorCode(e.payload) ?? "tool_error";
    span.attributes.push(["error.type", code]);
    span.status = { code: 2, message: code };
  }
}

/** The step and tool spans, in the order their opening events appear; still open at the end: closed there. */
function childSpans(events: readonly Event[], runHash: string, root: OtelSpan, at: (e: Event) => bigint, mcp: boolean, mcpSessionId: string | undefined): OtelSpan[] {
  const out: OtelSpan[] = [];
  const steps = new Map<string, Open>();
  const tools = new Map<string, Open>();
  for (const e of events) {
    if (e.type === "run.step.started") {
      const span = stepSpan(e, runHash, root, at);
      steps.set(str(e.payload, "stepId") ?? "", { span });
      out.push(span);
    } else if (e.type === "tool.invoked") {
      const step = steps.get(str(e.payload, "stepId") ?? "");
      const span = toolSpan(e, runHash, step?.span ?? root, at, mcp, mcpSessionId);
      tools.set(str(e.payload, "invocationId") ?? "", { span });
      out.push(span);
    } else if (e.type === "tool.completed" || e.type === "tool.failed") {
      const key = str(e.payload, "invocationId") ?? "";
      const open = tools.get(key);
      if (open !== undefined) endTool(open.span, e, at);
    } else if (e.type === "run.step.completed" || e.type === "run.step.failed") {
      const key = str(e.payload, "stepId") ?? "";
      const open = steps.get(key);
      if (open === undefined) continue;
      open.span.endNs = at(e);
      steps.delete(key);
      if (e.type === "run.step.failed") {
        const code = errorCode(e.payload) ?? "step_failed";
        open.span.attributes.push(["error.type", code]);
        open.span.status = { code: 2, message: code };
      }
    } else if (e.type === "policy.violation") {
      root.events.push({ name: "reach.policy.violation", timeNs: at(e), attributes: violationAttributes(e.payload) });
    }
  }
  for (const open of steps.values()) open.span.endNs = root.endNs;
  for (const s of out) if (s.endNs < s.startNs) s.endNs = s.startNs;
  return out;
}

function violationAttributes(p: Obj): [string, OtelValue][] {
  const a: [string, OtelValue][] = [];
  for (const [key, field] of [["reach.policy.violation_type", "violationType"], ["reach.policy.attempted_capability", "attemptedCapability"], ["reach.step.id", "stepId"]] as const) {
    const v = str(p, field);
    if (v !== null) a.push([key, v]);
  }
  return a;
}

/** Host calls as events of their tool call's span, at the call's start (the tape has order, not time). */
function addHostCalls(spans: readonly OtelSpan[], tape: readonly TapeRecord[]): void {
  const byCall = new Map<string, OtelSpan>();
  for (const s of spans) {
    const call = s.attributes.find(([k]) => k === "gen_ai.tool.call.id")?.[1];
    if (typeof call === "string") byCall.set(call, s);
  }
  for (const r of tape) {
    const span = byCall.get(r.invocationId);
    if (span === undefined) continue;
    const a: [string, OtelValue][] = [["reach.host.op", r.op], ["reach.host.seq", r.seq], ["reach.host.request_hash", r.requestHash], ["reach.host.response_hash", r.responseHash]];
    if (r.error !== undefined) a.push(["error.type", r.error.code]);
    span.events.push({ name: "reach.host_call", timeNs: span.startNs, attributes: a });
  }
}
