/**
 * `createHost`: the one host API of a tool invocation (sandbox/types.ts `HostApi`).
 *
 * Every call: count (over `maxCalls` is `POLICY_RATE_LIMIT_EXCEEDED`) → reserve a tape seq → canonicalise the
 * request (a non-JSON request is refused; the validated copy is what runs and what is recorded, so getters or
 * proxies cannot change it afterwards) → in replay, match the tape (`TapePlayer.next`) → validate → capability
 * check → perform → record request and response or error → in replay, compare with the tape → return.
 *
 * Halting: the first halting error (`../halting.ts`: `POLICY_*`, `REPLAY_*`, a stop while waiting) is kept as
 * `host.violation`, so the runner/executor halts the step (seed 003 §4.3 "Immediate Halt") even if the guest caught
 * the error; every later call throws that same error again without running or being recorded.
 *
 * Replay: with `player`, `http.fetch` and `mcp.call` answer from the tape and never reach a server; every other op runs
 * against the replayed workspace, memory, clock and random stream and its outcome must equal the recorded one.
 * `http.fetch` and `mcp.call` calls run one at a time (queued in call order), so the tape's order never depends on the
 * network.
 *
 * The ops themselves: the synchronous ones in `_ops.ts`, the ones that wait on a server (`http.fetch`, `mcp.call`) in
 * `_remote-ops.ts`; this file counts, records, replays and queues them.
 * @module
 */
import { canonicalize } from "../../canonical/mod.ts";
import type { VirtualClock } from "../../determinism/mod.ts";
import type { RandomStream } from "../../determinism/mod.ts";
import type { CapabilityPolicy } from "../../policy/mod.ts";
import { ReachError, toReachError } from "../../protocol/mod.ts";
import { errorFromDetails } from "../../record/mod.ts";
import type { PlayedCall, TapePlayer } from "../../record/mod.ts";
import type { TapeOutcome, TapeRecorder } from "../../record/mod.ts";
import { BLOB_THRESHOLD } from "../../record/mod.ts";
import { bytesToBase64 } from "../../canonical/mod.ts";
import { isHostOp } from "../types.ts";
import type { HostApi, HostOp } from "../types.ts";
import type { JsonObject } from "../../protocol/mod.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import type { ArtifactStage } from "./artifact-sink.ts";
import { DEFAULT_HTTP_LIMITS } from "./http.ts";
import type { HttpLimits } from "./http.ts";
import type { FetchLike } from "../../protocol/mod.ts";
import { LogSink } from "./log-sink.ts";
import type { MemoryTransaction } from "./memory-store.ts";
import { DEFAULT_OP_LIMITS, runSyncOp } from "./_ops.ts";
import type { OpContext, OpLimits } from "./_ops.ts";
import { invalid } from "./_assert.ts";
import { fetchOp, keysInOrder, mcpOp } from "./_remote-ops.ts";
import type { McpBinding } from "./_remote-ops.ts";
import { haltsTool } from "../halting.ts";
import type { SecretBox } from "./secrets.ts";

/** Fuel charged for each host call (the host's own work, which the tool's metered code does not count). */
export const HOST_CALL_FUEL = 1_000;
/** Default most host calls per invocation. */
export const DEFAULT_MAX_CALLS = 10_000;
/** Largest canonical request accepted, in UTF-16 code units (32 Mi). */
export const MAX_REQUEST_CHARS = 32 * 1024 * 1024;

/** Limits of a host. */
export type HostLimits = OpLimits & HttpLimits & {
  /** Most host calls per invocation (default 10,000). */
  maxCalls: number;
};

/** What a host works on: one invocation's view of the run. */
export type HostContext = {
  /** The invocation (recorded on every tape record; names artifacts). */
  invocationId: string;
  /** The pack's capability decisions. */
  policy: CapabilityPolicy;
  /** The step's workspace transaction (or any workspace view). */
  workspace: WorkspaceView;
  /** The step's memory transaction. */
  memory: MemoryTransaction;
  /** The step's artifact stage. */
  artifacts: ArtifactStage;
  /** The invocation's virtual clock (`clock.now` uses `read()`). */
  clock: VirtualClock;
  /** The invocation's random stream. */
  random: RandomStream;
  /** The run's tape. */
  tape: TapeRecorder;
  /** The log sink (default: a new bounded one). */
  log?: LogSink;
  /** The fetch to use (required for `http.fetch` unless replaying). */
  fetch?: FetchLike;
  /** Replay mode: the recorded tape. */
  player?: TapePlayer;
  /**
   * A fork's step (`src/engine/branch.ts`): these calls (1-based numbers) do not run; each is answered with its
   * outcome, which the tape records (and a replay of the fork answers the same way).
   */
  answers?: ReadonlyMap<number, TapeOutcome>;
  /**
   * The run's secrets (`./secrets.ts`): `http.fetch` checks every placeholder against the secret's hosts, live and in
   * replay, and (live) substitutes the values and scrubs them from what comes back.
   */
  secrets?: SecretBox;
  /**
   * Stops the invocation while it waits (`../stops.ts`): in-flight and later fetches fail with the signal's reason
   * when it is a `ReachError` (a halting one), else as aborted fetches.
   */
  signal?: AbortSignal;
  /**
   * The one MCP tool this invocation may call with `mcp.call` (an `mcp` tool's invocation only; any other gets
   * `POLICY_VIOLATION`): its server and tool, and how to call it live (absent in replay, where the tape answers and
   * no server is started).
   */
  mcp?: McpBinding;
  /** Limits (defaults: DEFAULT_OP_LIMITS, DEFAULT_HTTP_LIMITS, DEFAULT_MAX_CALLS). */
  limits?: Partial<HostLimits>;
  /**
   * The invocation's fuel meter: every call is charged {@link HOST_CALL_FUEL} plus one unit per 64 characters of its
   * request, so a loop of host calls uses fuel like any loop.
   */
  fuel?: { charge(units: number): void };
};

/** A host API with its halting state. */
export interface Host extends HostApi {
  /** The first halting error (POLICY_VIOLATION, POLICY_RATE_LIMIT_EXCEEDED, REPLAY_DIVERGENCE), or null. */
  readonly violation: ReachError | null;
  /** Host calls counted so far. */
  readonly calls: number;
  /** The invocation's log. */
  readonly log: LogSink;
}


/** The default limits, merged once (never mutated: {@link limitsOf} copies before it overrides). */
const DEFAULT_LIMITS: Readonly<HostLimits> = Object.freeze({ ...DEFAULT_OP_LIMITS, ...DEFAULT_HTTP_LIMITS, maxCalls: DEFAULT_MAX_CALLS });

function limitsOf(partial?: Partial<HostLimits>): HostLimits {
  if (partial === undefined) return DEFAULT_LIMITS;
  const out: HostLimits = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(partial)) {
    if (v === undefined) continue;
    if (!(k in out)) throw new TypeError(`"limits.${k}" is not a host limit`);
    if (!Number.isSafeInteger(v) || (v as number) < (k === "maxRedirects" ? 0 : 1)) {
      throw new RangeError(`"limits.${k}" expected a positive safe integer, got ${String(v)}`);
    }
    (out as Record<string, number>)[k] = v as number;
  }
  return out;
}

/**
 * Make the host API of one tool invocation.
 * @param ctx what the host works on (see {@link HostContext})
 * @returns the host
 * @throws TypeError | RangeError for bad limits
 * @example
 * const host = createHost({ invocationId, policy, workspace: step, memory: memTx, artifacts: stage, clock, random, tape, fetch });
 * host.invokeSync("fs.write", { path: "temp/a.txt", text: "hi" }); // { size: 2 }
 * if (host.violation) step.rollback();
 */
export function createHost(ctx: HostContext): Host {
  return new InvocationHost(ctx);
}

/**
 * One call in progress. `text` is `canonicalize(request)` once the request has been validated, and `request` then the
 * host's own parse of it: what the op runs on and what the tape keeps (nothing changes it afterwards).
 */
type Begun = { seq: number; op: unknown; request: unknown; text: string | null; played: PlayedCall | null; error: ReachError | null; answer: TapeOutcome | null };

/**
 * The host of {@link createHost}. A class rather than closures: a host is made for every tool invocation, and its
 * methods and getters then live once on the prototype. `invokeSync` and `invoke` are own bound functions, so a runner
 * may pass them around detached, as it could before.
 */
class InvocationHost implements Host {
  readonly log: LogSink;
  readonly invokeSync: (op: HostOp, request: JsonObject) => JsonObject;
  readonly invoke: (op: HostOp, request: JsonObject) => Promise<JsonObject>;
  readonly #ctx: HostContext;
  readonly #limits: HostLimits;
  readonly #opCtx: OpContext;
  #calls = 0;
  #violation: ReachError | null = null;
  /** The tail of the `http.fetch` queue (made at the first fetch). */
  #fetchQueue: Promise<unknown> | null = null;

  constructor(ctx: HostContext) {
    const limits = limitsOf(ctx.limits);
    const log = ctx.log ?? new LogSink();
    this.#ctx = ctx;
    this.#limits = limits;
    this.log = log;
    this.#opCtx = {
      invocationId: ctx.invocationId,
      policy: ctx.policy,
      workspace: ctx.workspace,
      memory: ctx.memory,
      artifacts: ctx.artifacts,
      clock: ctx.clock,
      random: ctx.random,
      log,
      limits,
      secrets: ctx.secrets,
    };
    this.invokeSync = (op, request) => this.#invokeSync(op, request);
    this.invoke = (op, request) => this.#invoke(op, request);
  }

  get violation(): ReachError | null {
    return this.#violation;
  }

  get calls(): number {
    return this.#calls;
  }

  /** Steps before the op runs. Returns the call's state; `error` set means the call fails with it. */
  #begin(op: unknown, request: unknown): Begun {
    if (this.#violation !== null) throw this.#violation;
    const ctx = this.#ctx;
    const calls = ++this.#calls;
    ctx.fuel?.charge(HOST_CALL_FUEL);
    const seq = ctx.tape.reserve();
    const b: Begun = { seq, op, request, text: null, played: null, error: null, answer: ctx.answers?.get(calls) ?? null };
    try {
      const max = this.#limits.maxCalls;
      if (calls > max) {
        throw new ReachError("POLICY_RATE_LIMIT_EXCEEDED", `this tool invocation made more than ${max} ` +
          `host calls; batch its work into fewer calls`, { details: { max, op: String(op).slice(0, 64) } });
      }
      if (!isHostOp(op)) throw invalid(String(op).slice(0, 64), "op", "is not a host operation");
      const text = canonicalize(request);
      if (text.length > MAX_REQUEST_CHARS) throw invalid(op, "request", `is over ${MAX_REQUEST_CHARS} characters`);
      if (text.length >= 64) ctx.fuel?.charge(text.length >>> 6);
      const parsed = text === "{}" ? {} : JSON.parse(text); // `{}`: clock.now's request, and what JSON.parse would make
      const asData = text.length > BLOB_THRESHOLD ? textBodyAsData(op, parsed) : null;
      b.request = asData ?? parsed;
      b.text = asData === null ? text : null;
    } catch (err) {
      b.error = err instanceof ReachError ? err : invalid(String(op).slice(0, 64), "request", `is not JSON: ${(err as Error).message}`);
    }
    if (ctx.player !== undefined) {
      try {
        b.played = ctx.player.next(typeof op === "string" ? op : String(op), b.request, ctx.invocationId);
      } catch (err) {
        b.error = toReachError(err, "REPLAY_DIVERGENCE");
      }
    }
    return b;
  }

  /**
   * Record the outcome (`response`, or `error` when `failed`), compare in replay, remember halting errors; returns the
   * response or throws.
   */
  #end(b: Begun, failed: boolean, response: JsonObject | null, error: unknown): JsonObject {
    const ctx = this.#ctx;
    let out: TapeOutcome;
    let thrown: ReachError | null = null;
    if (failed) {
      thrown = toReachError(error);
      out = { error: thrown.toDetails() };
    } else {
      out = { response: response! };
    }
    try {
      // A validated request is the host's own copy with its canonical text: the tape need not print and parse it again.
      if (b.text !== null) ctx.tape.recordOwned(b.seq, ctx.invocationId, b.op, b.request as JsonObject, b.text, out);
      else ctx.tape.record(b.seq, ctx.invocationId, b.op, b.request, out);
    } catch (err) {
      thrown = toReachError(err, "EXEC_RESOURCE_EXHAUSTED"); // e.g. the tape's blob limit: record the failure instead
      out = { error: thrown.toDetails() };
      ctx.tape.record(b.seq, ctx.invocationId, b.op, b.request, out);
    }
    if (b.played !== null && thrown?.code !== "REPLAY_DIVERGENCE") {
      try {
        ctx.player!.check(b.played, out);
      } catch (err) {
        thrown = toReachError(err, "REPLAY_DIVERGENCE");
      }
    }
    if (thrown !== null) {
      if (this.#violation === null && haltsTool(thrown)) this.#violation = thrown;
      throw thrown;
    }
    return (out as { response: JsonObject }).response;
  }

  /** A call a fork answers in place of running it (`HostContext.answers`). */
  #answered(b: Begun & { answer: TapeOutcome }): JsonObject {
    const a = b.answer;
    return "error" in a ? this.#end(b, true, null, errorFromDetails(a.error)) : this.#end(b, false, keysInOrder(a.response as JsonObject), null);
  }

  #invokeSync(op: HostOp, request: JsonObject): JsonObject {
    const b = this.#begin(op, request);
    if (b.error !== null) return this.#end(b, true, null, b.error);
    if (b.answer !== null) return this.#answered(b as Begun & { answer: TapeOutcome });
    let response: JsonObject;
    try {
      response = runSyncOp(this.#opCtx, op, b.request);
    } catch (err) {
      return this.#end(b, true, null, err);
    }
    return this.#end(b, false, response, null);
  }

  async #invoke(op: HostOp, request: JsonObject): Promise<JsonObject> {
    if (op !== "http.fetch" && op !== "mcp.call") return this.#invokeSync(op, request);
    const b = this.#begin(op, request);
    if (b.error !== null) return this.#end(b, true, null, b.error);
    if (b.answer !== null) return this.#answered(b as Begun & { answer: TapeOutcome });
    const perform = op === "mcp.call" ? mcpOp : fetchOp;
    const run = (this.#fetchQueue ?? Promise.resolve()).then(() => perform(this.#ctx, this.#limits, b));
    this.#fetchQueue = run.catch(() => undefined);
    let response: JsonObject;
    try {
      response = await run;
    } catch (err) {
      return this.#end(b, true, null, err);
    }
    return this.#end(b, false, response, null);
  }
}

/** Ops whose body may be sent as UTF-8 `text` or as base64 `data`. */
const TEXT_BODY_OPS: ReadonlySet<string> = new Set(["fs.write", "temp.write", "artifact.emit", "http.fetch"]);
const utf8 = new TextEncoder();

/**
 * A large well-formed `text` body as the same bytes in `data`: the tape then stores it once, as a blob by hash, instead
 * of inline in every record (a tool rewriting one 12 MiB text 200 times held 2.4 GB of tape). The op sees the same
 * bytes either way; a malformed `text` (a lone surrogate) is left for the op to refuse.
 */
function textBodyAsData(op: string, request: unknown): JsonObject | null {
  if (!TEXT_BODY_OPS.has(op) || typeof request !== "object" || request === null || Array.isArray(request)) return null;
  const r = request as JsonObject;
  const t = r["text"];
  if (typeof t !== "string" || t.length <= BLOB_THRESHOLD || Object.prototype.hasOwnProperty.call(r, "data")) return null;
  if (!(t as string & { isWellFormed(): boolean }).isWellFormed()) return null;
  const { text: _text, ...rest } = r;
  return { ...rest, data: bytesToBase64(utf8.encode(t)) };
}
