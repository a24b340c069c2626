/**
 * The `js` tool runner: a tool is an ES module whose default export is `(input, reach) => output` (sync or async),
 * evaluated in its own QuickJS runtime and context (docs/authoring.md "`js`: a module in QuickJS"; README.md in this
 * folder, "Determinism and isolation").
 *
 * Limits, and what stops which bomb:
 * - fuel (the engine's WebAssembly is instrumented, `../fuel/`) → every loop, JavaScript (`for(;;){}`) or inside
 *   QuickJS's C code (`new Array(1e9).join()`) → `EXEC_RESOURCE_EXHAUSTED` at the same tick on every run; the
 *   invocation's meter also stops it at a refill when the run is aborted or its wall-clock watchdog fires, and
 *   records the fuel count (`EXEC_ABORTED` / `EXEC_TOOL_TIMEOUT` reason `watchdog`);
 * - a halting host error (a policy denial, a stop that landed during an asynchronous host call) → the interrupt
 *   handler stops the guest at its next check;
 * - `runtime.setMemoryLimit` → `EXEC_RESOURCE_EXHAUSTED`; `setMaxStackSize` (and the host stack, should it
 *   overflow first) → `EXEC_RESOURCE_EXHAUSTED`.
 *
 * Every invocation starts from the same state: a sandbox prepared on a fresh engine, as prepared (the engine's first
 * invocation) or restored from a snapshot of its memory (`warm.ts`). An engine whose state an invocation moved past
 * the snapshot, or that trapped, is dropped (never disposed) and the next invocation gets a fresh one, so fuel does
 * not depend on what ran before in the process.
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import { FuelMeter, meterError } from "../fuel/mod.ts";
import type { MeteredModuleStore } from "../fuel/mod.ts";
import { checkSandboxApi } from "../types.ts";
import type { SandboxApiLevel, ToolInvocation, ToolOutcome, ToolRunner } from "../types.ts";
import type { JsonValue } from "../../protocol/mod.ts";
import { InvocationState } from "./bridge.ts";
import { EngineHost } from "./engine.ts";
import type { EngineWasmSource } from "./engine.ts";
import { exhausted, guestError, isStackTrap } from "./outcome.ts";
import { Stop } from "./sandbox.ts";
import type { Guest } from "./sandbox.ts";
import { WarmSandbox } from "./warm.ts";

/** Options of {@link QuickJsRunner}. */
export type QuickJsRunnerOptions = {
  /** The QuickJS engine's WebAssembly bytes (`@jitl/quickjs-wasmfile-release-sync/wasm`), or a loader for them. */
  engineWasm: EngineWasmSource;
  /** Instrument the engine with fuel (default true). Without fuel, loops inside QuickJS's C code are unbounded. */
  metered?: boolean;
  /** Where the instrumented engine is kept between processes (default: memory only). */
  meteredModules?: MeteredModuleStore;
  /** Largest output, in UTF-8 bytes of its JSON text (default 4 MiB). */
  maxOutputBytes?: number;
  /** QuickJS stack limit in bytes (default 256 KiB: below the host's own stack on Node and Deno). */
  maxStackSizeBytes?: number;
  /** Cap of the collected log, in characters (default 64 Ki). */
  maxLogChars?: number;
  /**
   * Keep an engine and its prepared sandbox across invocations, restoring a snapshot of its memory before each
   * (default true). Output, tape and fuel are the same either way; false gives every invocation a fresh engine and
   * sandbox (≈6 ms more per invocation).
   */
  reuseSandboxes?: boolean;
};

/** Default output cap: 4 MiB of JSON. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Default QuickJS stack limit: 256 KiB. */
export const DEFAULT_MAX_STACK_BYTES = 256 * 1024;

type Finish = { output: JsonValue } | { error: ReachError };

/**
 * Runs `js` tools in QuickJS. Invocations on one runner are serialised (they share one engine instance and its
 * fuel counter); each starts from a sandbox in the same state, that of a sandbox just prepared on a fresh engine.
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
  readonly #reuse: boolean;
  /** The engine kept for the next invocation, in its snapshot's state. */
  #warm: WarmSandbox | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * @param options see {@link QuickJsRunnerOptions}
   * @throws TypeError when `engineWasm` is missing
   */
  constructor(options: QuickJsRunnerOptions) {
    if (options?.engineWasm === undefined) {
      throw new TypeError('"engineWasm" expected the QuickJS engine bytes or a loader (src/platform readQuickJsEngineWasm)');
    }
    this.#engines = new EngineHost(options.engineWasm, options.metered ?? true, options.meteredModules ?? null);
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#maxStack = options.maxStackSizeBytes ?? DEFAULT_MAX_STACK_BYTES;
    this.#maxLogChars = options.maxLogChars ?? 64 * 1024;
    this.#reuse = options.reuseSandboxes ?? true;
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
    let warm: WarmSandbox;
    try {
      warm = await this.#sandbox(inv.memoryLimitBytes, inv.sandboxApi ?? 1);
    } catch (err) {
      const error = err instanceof ReachError ? err : new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS engine could not be loaded", { cause: err });
      return { status: "error", error, log: "", fuelUsed: 0n };
    }
    const { engine, sandbox } = warm;
    state.memory = engine.memory;
    state.memoryAtStart = engine.memory.buffer.byteLength;
    // Fuel counts what the engine does from the prepared sandbox on: compiling and running the tool (and the lazily
    // compiled parts of the prelude it uses), until its output is read. Preparing the sandbox is not charged, and the
    // watchdog's clock starts only now.
    const meter = inv.meter ?? new FuelMeter({ budget: inv.fuel });
    if (engine.slot !== null) meter.bind(engine.slot);
    meter.start();
    let finish: Finish;
    let keep = false;
    try {
      warm.begin({ host: inv.host, state });
      try {
        finish = await this.#drive(sandbox.runtime, sandbox.ctx, sandbox.guest!, inv, state);
      } catch (err) {
        if (!(err instanceof Stop)) throw err;
        finish = { error: err.error };
      }
      keep = warm.end(state) && meter.outcome === null;
    } catch (err) {
      // A trap (fuel, a stop, host stack overflow, abort) or a bug: the engine is torn; it is dropped, not disposed.
      const stopped = meterError(meter, inv.toolName);
      if (stopped !== null) finish = { error: stopped };
      else if (state.violation !== undefined) finish = { error: state.violation };
      else if (isStackTrap(err)) finish = { error: exhausted("stack", inv.toolName) };
      else finish = { error: new ReachError("EXEC_TOOL_FAILED", `the QuickJS engine trapped while running tool "${inv.toolName}"`, { cause: err }) };
    }
    const used = meter.release();
    // Kept only in its snapshot's state; otherwise dropped, and the next invocation gets a fresh engine.
    if (keep) this.#warm = warm;
    const log = state.log.length === 0 ? "" : state.log.join("\n") + "\n";
    const module = { sha256: sourceDigest(inv.code), metered: engine.meteredDigest };
    return "output" in finish
      ? { status: "success", output: finish.output, log, fuelUsed: used, module }
      : { status: "error", error: finish.error, log, fuelUsed: used, module };
  }

  /**
   * The kept sandbox when its heap limit and sandbox API level are the invocation's, or a sandbox prepared on a
   * fresh engine (before the invocation's meter starts). Either way the engine's memory is that of the fresh engine
   * right after preparing that level's prelude (up to the dead part of the C stack, see README.md "Reuse").
   */
  async #sandbox(memoryLimitBytes: number, level: SandboxApiLevel): Promise<WarmSandbox> {
    const kept = this.#warm;
    this.#warm = undefined; // taken by this invocation; put back only if it leaves the engine reusable
    if (kept !== undefined && kept.memoryLimitBytes === memoryLimitBytes && kept.level === level) return kept;
    const engine = await this.#engines.instantiate(memoryLimitBytes);
    return WarmSandbox.prepare(engine, memoryLimitBytes, this.#maxStack, this.#reuse, level);
  }

  /** Evaluate the tool, call it, and pump jobs and host calls until its promise settles. */
  async #drive(runtime: QuickJSRuntime, ctx: QuickJSContext, guest: Guest, inv: ToolInvocation, state: InvocationState): Promise<Finish> {
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
        if (state.violation !== undefined) throw new Stop(state.violation);
        const st = ctx.getPromiseState(promise);
        if (st.type === "fulfilled") {
          const text = ctx.typeof(st.value) === "string" ? ctx.getString(st.value) : undefined;
          st.value.dispose();
          return this.#output(text, inv);
        }
        if (st.type === "rejected") {
          const error = guestError(ctx, runtime, st.error, state, guest, inv);
          st.error.dispose();
          throw new Stop(error);
        }
        if (state.inflight.size === 0) {
          throw new Stop(new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" returned a promise that never settles (there are no timers in the sandbox)`));
        }
        const settled = await Promise.race([...state.inflight].map((from) => from.then((value) => ({ from, value }))));
        state.inflight.delete(settled.from);
        const text = ctx.newString(settled.value.envelope);
        settled.value.deferred.resolve(text);
        text.dispose();
        settled.value.deferred.dispose();
      }
    } finally {
      promise.dispose();
    }
  }

  /** Unwrap an eval/call result of the tool; a guest exception becomes a `Stop` with the right code. */
  #unwrap(ctx: QuickJSContext, result: ReturnType<QuickJSContext["evalCode"]>, state: InvocationState, guest: Guest, inv: ToolInvocation): QuickJSHandle {
    if (result.error === undefined) return result.value;
    const error = guestError(ctx, ctx.runtime, result.error, state, guest, inv);
    result.error.dispose();
    throw new Stop(error);
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

/** SHA-256 of a tool's source, once per code array (the engine hands the same, never-mutated array every time). */
const digests = new WeakMap<Uint8Array, string>();
function sourceDigest(code: Uint8Array): string {
  let d = digests.get(code);
  if (d === undefined) digests.set(code, (d = sha256Hex(code)));
  return d;
}

function checkInvocation(inv: ToolInvocation): void {
  if (typeof inv !== "object" || inv === null) throw new TypeError(`"invocation" expected a ToolInvocation object`);
  if (!(inv.code instanceof Uint8Array)) throw new TypeError(`"invocation.code" expected Uint8Array (UTF-8 JavaScript source)`);
  if (!Number.isFinite(inv.timeoutMs) || inv.timeoutMs <= 0) throw new RangeError(`"invocation.timeoutMs" expected a positive number, got ${inv.timeoutMs}`);
  if (typeof inv.fuel !== "bigint" || inv.fuel < 0n) throw new RangeError(`"invocation.fuel" expected a non-negative bigint`);
  checkSandboxApi(inv.sandboxApi);
  if (!Number.isSafeInteger(inv.memoryLimitBytes) || inv.memoryLimitBytes <= 0) {
    throw new RangeError(`"invocation.memoryLimitBytes" expected a positive integer, got ${inv.memoryLimitBytes}`);
  }
  if (typeof inv.host?.invokeSync !== "function" || typeof inv.host?.invoke !== "function") {
    throw new TypeError(`"invocation.host" expected a HostApi with invokeSync and invoke`);
  }
}
