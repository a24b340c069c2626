/**
 * The `js` tool runner: a tool is an ES module whose default export is `(input, reach) => output` (sync or async),
 * evaluated in a fresh QuickJS runtime and context per invocation (issue 3 "Tool kinds", "Determinism and
 * isolation"; README.md in this folder).
 *
 * Limits, and what stops which bomb:
 * - wall-clock timeout → QuickJS's interrupt handler (JS loops, `for(;;){}`) and a host timer while the tool waits
 *   for `http.fetch` → `EXEC_TOOL_TIMEOUT`;
 * - fuel (the engine's WebAssembly is instrumented) → loops inside QuickJS's C code, where the interrupt handler
 *   never runs (`new Array(1e9).join()`) → `EXEC_RESOURCE_EXHAUSTED` at the same tick on every run;
 * - `runtime.setMemoryLimit` → `EXEC_RESOURCE_EXHAUSTED`; `setMaxStackSize` (and the host stack, should it
 *   overflow first) → `EXEC_RESOURCE_EXHAUSTED`.
 * A trapped engine is dropped (never disposed) and the next invocation gets a fresh one.
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { ReachError } from "../../protocol/errors.ts";
import type { ErrorCode } from "../../protocol/errors.ts";
import { fuelError, fuelUsed, isFuelExhausted, MAX_FUEL, setFuel } from "../fuel/mod.ts";
import type { JsonValue, ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import { InvocationState, makeHostFunctions } from "./bridge.ts";
import type { Settled } from "./bridge.ts";
import { EngineHost } from "./engine.ts";
import type { EngineWasmSource, QuickJsEngine } from "./engine.ts";
import { API_SOURCE, GLOBAL_ALLOWLIST, PRELUDE_SOURCE, RANDOM_SOURCE } from "./prelude.ts";

/** Options of {@link QuickJsRunner}. */
export type QuickJsRunnerOptions = {
  /** The QuickJS engine's WebAssembly bytes (`@jitl/quickjs-wasmfile-release-sync/wasm`), or a loader for them. */
  engineWasm: EngineWasmSource;
  /** Instrument the engine with fuel (default true). Without fuel, loops inside QuickJS's C code are unbounded. */
  metered?: boolean;
  /** Largest output, in UTF-8 bytes of its JSON text (default 4 MiB). */
  maxOutputBytes?: number;
  /** QuickJS stack limit in bytes (default 256 KiB: below the host's own stack on Node and Deno). */
  maxStackSizeBytes?: number;
  /** Cap of the collected log, in characters (default 64 Ki). */
  maxLogChars?: number;
  /** An engine whose linear memory grew beyond this is dropped after the invocation (default 64 MiB). */
  maxRetainedEngineBytes?: number;
};

/** Default output cap: 4 MiB of JSON. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Default QuickJS stack limit: 256 KiB. */
export const DEFAULT_MAX_STACK_BYTES = 256 * 1024;

/** `GLOBAL_ALLOWLIST` as the JSON object (`{"Array":1,…}`) the prelude looks names up in. */
const ALLOWLIST_JSON = JSON.stringify(Object.fromEntries(GLOBAL_ALLOWLIST.map((name) => [name, 1])));

/** Fuel for tearing a runtime down after the tool's own budget was measured. */
const CLEANUP_FUEL = MAX_FUEL;
/** Extra memory allowed while reading an error out of a context that hit its memory limit. */
const DESCRIBE_HEADROOM = 1024 * 1024;

type Guest = { run: QuickJSHandle; describe: QuickJSHandle };
type Finish = { output: JsonValue } | { error: ReachError };

/** Something a running invocation raises to unwind to `run` (never seen by callers). */
class Stop {
  constructor(readonly error: ReachError) {}
}

/**
 * Runs `js` tools in QuickJS. Invocations on one runner are serialised (they share one engine instance and its
 * fuel counter); each gets a fresh runtime and context.
 * @example
 * const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });
 * const outcome = await runner.run({ toolName: "slugify", invocationId, code, input, host, timeoutMs: 30_000,
 *   fuel: DEFAULT_FUEL, memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES });
 */
export class QuickJsRunner implements ToolRunner {
  readonly kind = "js" as const;
  readonly #engines: EngineHost;
  readonly #maxOutputBytes: number;
  readonly #maxStack: number;
  readonly #maxLogChars: number;
  readonly #maxRetained: number;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * @param options see {@link QuickJsRunnerOptions}
   * @throws TypeError when `engineWasm` is missing
   */
  constructor(options: QuickJsRunnerOptions) {
    if (options?.engineWasm === undefined) {
      throw new TypeError('"engineWasm" expected the QuickJS engine bytes or a loader (src/platform readQuickJsEngineWasm)');
    }
    this.#engines = new EngineHost(options.engineWasm, options.metered ?? true);
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#maxStack = options.maxStackSizeBytes ?? DEFAULT_MAX_STACK_BYTES;
    this.#maxLogChars = options.maxLogChars ?? 64 * 1024;
    this.#maxRetained = options.maxRetainedEngineBytes ?? 64 * 1024 * 1024;
  }

  /**
   * Run one invocation to completion or to its limits. Tool misbehaviour is reported in the outcome, never thrown.
   * @param invocation the invocation (`code` is the module's UTF-8 source)
   * @returns the outcome: the output, or a `ReachError` (`EXEC_TOOL_FAILED`, `EXEC_TOOL_TIMEOUT`,
   *   `EXEC_RESOURCE_EXHAUSTED`, `EXEC_RESOURCE_UNAVAILABLE`, or the host's `POLICY_VIOLATION`)
   * @throws TypeError when the invocation itself is malformed
   */
  run(invocation: ToolInvocation): Promise<ToolOutcome> {
    checkInvocation(invocation);
    const next = this.#queue.then(() => this.#runOne(invocation));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #runOne(inv: ToolInvocation): Promise<ToolOutcome> {
    const state = new InvocationState(this.#maxLogChars);
    let engine: QuickJsEngine;
    try {
      engine = await this.#engines.acquire(inv.memoryLimitBytes);
    } catch (err) {
      const error = err instanceof ReachError ? err : new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS engine could not be loaded", { cause: err });
      return { status: "error", error, log: "", fuelUsed: 0n };
    }
    state.memory = engine.memory;
    state.memoryAtStart = engine.memory.buffer.byteLength;
    // The deadline starts once the engine is ready: compiling and instrumenting it is not the tool's time.
    const deadline = performance.now() + inv.timeoutMs;
    if (engine.metered) setFuel(engine.instance, inv.fuel);
    let used = 0n;
    let finish: Finish;
    try {
      finish = await this.#execute(engine, inv, state, deadline, () => {
        if (engine.metered) {
          used = fuelUsed(engine.instance, inv.fuel);
          setFuel(engine.instance, CLEANUP_FUEL);
        }
      });
    } catch (err) {
      // A trap (fuel, host stack overflow, abort) or a bug: the engine is torn; drop it without disposing.
      this.#engines.drop(engine);
      if (engine.metered && isFuelExhausted(err, engine.instance)) {
        used = inv.fuel;
        finish = { error: fuelError(inv.fuel, { toolName: inv.toolName }) };
      } else if (state.violation !== undefined) {
        finish = { error: state.violation };
      } else if (isStackTrap(err)) {
        finish = { error: exhausted("stack", inv.toolName) };
      } else {
        finish = { error: new ReachError("EXEC_TOOL_FAILED", `the QuickJS engine trapped while running tool "${inv.toolName}"`, { cause: err }) };
      }
      if (engine.metered && used === 0n) used = fuelUsed(engine.instance, inv.fuel);
    }
    // A heap that hit its limit is not kept: the next invocation starts from a small, fresh one.
    const memoryHit = "error" in finish && finish.error.details["reason"] === "memory";
    if (engine.dead || memoryHit || engine.memory.buffer.byteLength > this.#maxRetained) this.#engines.drop(engine);
    const log = state.log.length === 0 ? "" : state.log.join("\n") + "\n";
    return "output" in finish
      ? { status: "success", output: finish.output, log, fuelUsed: used }
      : { status: "error", error: finish.error, log, fuelUsed: used };
  }

  /** Everything that touches the engine; throws only for traps. `measured` is called once the tool is done. */
  async #execute(engine: QuickJsEngine, inv: ToolInvocation, state: InvocationState, deadline: number, measured: () => void): Promise<Finish> {
    const runtime = engine.module.newRuntime();
    runtime.setMemoryLimit(inv.memoryLimitBytes);
    runtime.setMaxStackSize(this.#maxStack);
    runtime.setInterruptHandler(() => {
      if (state.violation !== undefined) return true;
      if (performance.now() > deadline) state.timedOut = true;
      return state.timedOut;
    });
    runtime.setModuleLoader((name) => ({
      error: new Error(`tools cannot import modules ("${String(name).slice(0, 100)}"); a js tool is one self-contained module`),
    }));
    const ctx = runtime.newContext();
    let guest: Guest | undefined;
    let finish: Finish;
    try {
      guest = this.#setup(ctx, inv, state);
      finish = await this.#drive(runtime, ctx, guest, inv, state, deadline);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
      finish = { error: err.error };
    }
    measured();
    try {
      // Late async results are dropped (their settled promises are simply never read).
      for (const deferred of state.deferreds) deferred.dispose();
      state.deferreds.clear();
      guest?.run.dispose();
      guest?.describe.dispose();
      ctx.dispose();
      runtime.dispose();
    } catch {
      // Tearing down trapped (e.g. QuickJS found leaked objects): the outcome stands, the engine is dropped.
      engine.dead = true;
    }
    return finish;
  }

  /** Evaluate the prelude, lock the globals down, evaluate the tool module; returns the guest's entry points. */
  #setup(ctx: QuickJSContext, inv: ToolInvocation, state: InvocationState): Guest {
    const setupFn = this.#unwrap(ctx, ctx.evalCode(PRELUDE_SOURCE, "reach-prelude.js", { type: "global", strict: true }), state, null);
    const [callSync, callAsync] = makeHostFunctions(ctx, inv.host, state);
    const allow = ctx.newString(ALLOWLIST_JSON);
    // The lazily compiled parts of the prelude; their text is copied into the engine only when a tool needs them.
    const source = ctx.newFunction("source", (name) => ctx.newString(ctx.getString(name) === "random" ? RANDOM_SOURCE : API_SOURCE));
    const api = this.#unwrap(ctx, ctx.callFunction(setupFn, ctx.undefined, callSync, callAsync, allow, source), state, null);
    for (const h of [setupFn, callSync, callAsync, allow, source]) h.dispose();
    const run = ctx.getProp(api, "run");
    const describe = ctx.getProp(api, "describe");
    api.dispose();
    return { run, describe };
  }

  /** Evaluate the tool, call it, and pump jobs and host calls until its promise settles. */
  async #drive(runtime: QuickJSRuntime, ctx: QuickJSContext, guest: Guest, inv: ToolInvocation, state: InvocationState, deadline: number): Promise<Finish> {
    let source: string;
    try {
      source = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(inv.code);
    } catch {
      throw new Stop(new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}": the code is not valid UTF-8 JavaScript`));
    }
    const ns = this.#unwrap(ctx, ctx.evalCode(source, `${inv.toolName}.js`, { type: "module", strict: true }), state, guest, inv);
    const inputJson = ctx.newString(JSON.stringify(inv.input));
    const promise = this.#unwrap(ctx, ctx.callFunction(guest.run, ctx.undefined, ns, inputJson), state, guest, inv);
    ns.dispose();
    inputJson.dispose();
    try {
      for (;;) {
        const jobs = runtime.executePendingJobs(-1);
        if (jobs.error) jobs.error.dispose();
        this.#checkStops(state, deadline, inv);
        const st = ctx.getPromiseState(promise);
        if (st.type === "fulfilled") {
          const text = ctx.typeof(st.value) === "string" ? ctx.getString(st.value) : undefined;
          st.value.dispose();
          return this.#output(text, inv);
        }
        if (st.type === "rejected") {
          const error = this.#guestError(ctx, runtime, st.error, state, guest, inv);
          st.error.dispose();
          throw new Stop(error);
        }
        if (state.inflight.size === 0) {
          throw new Stop(new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" returned a promise that never settles (there are no timers in the sandbox)`));
        }
        const settled = await waitForHost(state, deadline);
        if (settled === undefined) continue; // deadline; checked above
        state.inflight.delete(settled.from);
        const text = ctx.newString(settled.value.envelope);
        settled.value.deferred.resolve(text);
        text.dispose();
        settled.value.deferred.dispose();
        state.deferreds.delete(settled.value.deferred);
      }
    } finally {
      promise.dispose();
    }
  }

  #checkStops(state: InvocationState, deadline: number, inv: ToolInvocation): void {
    if (state.violation !== undefined) throw new Stop(state.violation);
    if (state.timedOut || performance.now() > deadline) {
      throw new Stop(new ReachError("EXEC_TOOL_TIMEOUT", `tool "${inv.toolName}" did not finish within ${inv.timeoutMs} ms; give it less work or raise the step's timeout_ms`, {
        details: { toolName: inv.toolName, timeoutMs: inv.timeoutMs },
      }));
    }
  }

  /** Unwrap an eval/call result; a guest exception becomes a `Stop` with the right code. */
  #unwrap(ctx: QuickJSContext, result: ReturnType<QuickJSContext["evalCode"]>, state: InvocationState, guest: Guest | null, inv?: ToolInvocation): QuickJSHandle {
    if (result.error === undefined) return result.value;
    const error = guest === null || inv === undefined
      ? state.violation ?? (state.timedOut ? new ReachError("EXEC_TOOL_TIMEOUT", "the tool's time ran out while its sandbox was prepared; raise the step's timeout_ms") : undefined) ?? new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS sandbox could not be prepared", { details: { reason: ctx.typeof(result.error) } })
      : this.#guestError(ctx, ctx.runtime, result.error, state, guest, inv);
    result.error.dispose();
    throw new Stop(error);
  }

  /** Classify what the guest threw (the handle is disposed by the caller or here). */
  #guestError(ctx: QuickJSContext, runtime: QuickJSRuntime, errHandle: QuickJSHandle, state: InvocationState, guest: Guest, inv: ToolInvocation): ReachError {
    if (state.violation !== undefined) return state.violation;
    if (state.timedOut) {
      return new ReachError("EXEC_TOOL_TIMEOUT", `tool "${inv.toolName}" did not finish within ${inv.timeoutMs} ms; give it less work or raise the step's timeout_ms`, {
        details: { toolName: inv.toolName, timeoutMs: inv.timeoutMs },
      });
    }
    let described: { name: string; message: string; code: string | null } | undefined;
    runtime.setMemoryLimit(inv.memoryLimitBytes + DESCRIBE_HEADROOM);
    const r = ctx.callFunction(guest.describe, ctx.undefined, errHandle);
    runtime.setMemoryLimit(inv.memoryLimitBytes);
    if (r.error === undefined) {
      if (ctx.typeof(r.value) === "string") described = JSON.parse(ctx.getString(r.value)) as typeof described;
      r.value.dispose();
    } else {
      r.error.dispose();
    }
    if (state.timedOut || state.violation !== undefined) return this.#guestError(ctx, runtime, errHandle, state, guest, inv);
    // QuickJS throws `null` when it cannot even allocate its "out of memory" error.
    if ((described === undefined || described.message === "null") && nearMemoryLimit(ctx, runtime, inv, state)) {
      return exhausted("memory", inv.toolName, inv.memoryLimitBytes);
    }
    if (described === undefined) return new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" failed (its error could not be read)`);
    if (described.name === "InternalError" && described.message === "out of memory") return exhausted("memory", inv.toolName, inv.memoryLimitBytes);
    if (described.name === "InternalError" && described.message === "stack overflow") return exhausted("stack", inv.toolName);
    if (described.name === "RangeError" && described.message === "Maximum call stack size exceeded") return exhausted("stack", inv.toolName);
    const text = described.message === "" ? described.name : `${described.name}: ${described.message}`;
    return new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" threw ${text}`, {
      details: { toolName: inv.toolName, errorName: described.name, ...(described.code === null ? {} : { errorCode: described.code }) },
    });
  }

  /** Check the output JSON text on the way back. */
  #output(text: string | undefined, inv: ToolInvocation): Finish {
    const fail = (why: string): Finish => ({ error: new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" ${why}`, { details: { toolName: inv.toolName } }) });
    if (text === undefined) return fail("did not produce JSON output");
    if (text.length > this.#maxOutputBytes || new TextEncoder().encode(text).length > this.#maxOutputBytes) {
      return fail(`returned more than ${this.#maxOutputBytes} bytes of JSON; return less or write a file`);
    }
    try {
      return { output: JSON.parse(text) as JsonValue };
    } catch {
      return fail("returned output that is not valid JSON");
    }
  }
}

/** Wait for the next async host result, or the deadline; `undefined` on the deadline. */
async function waitForHost(state: InvocationState, deadline: number): Promise<{ from: Promise<Settled>; value: Settled } | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now()) + 1);
  });
  try {
    return await Promise.race([...[...state.inflight].map((from) => from.then((value) => ({ from, value }))), expiry]);
  } finally {
    clearTimeout(timer);
  }
}

function exhausted(reason: "memory" | "stack", toolName: string, limit?: number): ReachError {
  const code: ErrorCode = "EXEC_RESOURCE_EXHAUSTED";
  const message = reason === "memory"
    ? `tool "${toolName}" exceeded its memory limit of ${limit} bytes; give it less data or raise the step's memory limit`
    : `tool "${toolName}" recursed too deeply (stack limit); make the recursion iterative or shallower`;
  return new ReachError(code, message, { details: { reason, toolName, ...(limit === undefined ? {} : { memoryLimitBytes: limit }) } });
}

/**
 * Whether a thrown `null` is QuickJS failing to allocate its "out of memory" error: the heap is still within 1 MiB
 * of its limit, or the engine's linear memory grew during this invocation (the tool's frames, and with them most
 * of what it allocated, are already freed by the time the error reaches us). A tool that itself throws `null`
 * after allocating a lot is reported as exhausting memory too; both are soft failures.
 */
function nearMemoryLimit(ctx: QuickJSContext, runtime: QuickJSRuntime, inv: ToolInvocation, state: InvocationState): boolean {
  if (state.memory !== undefined && state.memory.buffer.byteLength > state.memoryAtStart) return true;
  runtime.setMemoryLimit(inv.memoryLimitBytes + DESCRIBE_HEADROOM);
  try {
    const usage = runtime.computeMemoryUsage();
    const dumped = ctx.dump(usage) as { malloc_size?: unknown };
    usage.dispose();
    return typeof dumped.malloc_size === "number" && dumped.malloc_size >= inv.memoryLimitBytes - DESCRIBE_HEADROOM;
  } catch {
    return true; // even measuring failed: the heap is exhausted
  } finally {
    runtime.setMemoryLimit(inv.memoryLimitBytes);
  }
}

function isStackTrap(err: unknown): boolean {
  return err instanceof Error && /call stack/i.test(err.message);
}

function checkInvocation(inv: ToolInvocation): void {
  if (typeof inv !== "object" || inv === null) throw new TypeError(`"invocation" expected a ToolInvocation object`);
  if (!(inv.code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected Uint8Array (UTF-8 JavaScript source)`);
  if (!Number.isFinite(inv.timeoutMs) || inv.timeoutMs <= 0) throw new RangeError(`"invocation.timeoutMs" expected a positive number, got ${inv.timeoutMs}`);
  if (typeof inv.fuel !== "bigint" || inv.fuel < 0n) throw new RangeError(`"invocation.fuel" expected a non-negative bigint`);
  if (!Number.isSafeInteger(inv.memoryLimitBytes) || inv.memoryLimitBytes <= 0) {
    throw new RangeError(`"invocation.memoryLimitBytes" expected a positive integer, got ${inv.memoryLimitBytes}`);
  }
  if (typeof inv.host?.invokeSync !== "function" || typeof inv.host?.invoke !== "function") {
    throw new TypeError(`"invocation.host" expected a HostApi with invokeSync and invoke`);
  }
}
