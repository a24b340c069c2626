/**
 * A sandbox: one QuickJS runtime and context with the determinism prelude set up (`prelude.ts`), its host functions
 * answering for whichever invocation its slot holds. Always built on a fresh engine (`warm.ts`) and never torn
 * down: the engine is dropped with it.
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { ReachError } from "../../protocol/mod.ts";
import type { HostApi } from "../types.ts";
import { InvocationState, makeHostFunctions } from "./bridge.ts";
import type { HostSlot } from "./bridge.ts";
import type { SandboxApiLevel } from "../types.ts";
import { API_SOURCE, GLOBAL_ALLOWLIST, preludeSource, RANDOM_SOURCE } from "./prelude.ts";

/** `GLOBAL_ALLOWLIST` as the JSON object (`{"Array":1,…}`) the prelude looks names up in. */
const ALLOWLIST_JSON = JSON.stringify(Object.fromEntries(GLOBAL_ALLOWLIST.map((name) => [name, 1])));

/** The guest's entry points (made by the prelude's `setup`). */
export type Guest = { run: QuickJSHandle; describe: QuickJSHandle };

/** What the sandbox's host functions and interrupt handler answer for: the current invocation. */
export type InvocationSlot = HostSlot;

/** A runtime and context, with the guest's entry points once the prelude ran. */
export type Sandbox = { runtime: QuickJSRuntime; ctx: QuickJSContext; guest: Guest | undefined };

/** Something a running invocation raises to unwind to the runner (never seen by callers). */
export class Stop {
  /** @param error the invocation's outcome */
  constructor(readonly error: ReachError) {}
}

const refuse = (): never => {
  throw new ReachError("EXEC_ABORTED", "no invocation is running in this sandbox");
};
/** A host that answers nothing: what a slot holds between invocations. */
const NO_HOST: HostApi = { invokeSync: refuse, invoke: refuse };

/**
 * A slot holding no invocation (a host that refuses every call).
 * @returns the slot
 */
export function idleSlot(): InvocationSlot {
  return { host: NO_HOST, state: new InvocationState(0) };
}

/**
 * Make a runtime and context with the runner's limits, the interrupt handler (a halting host error) and the
 * module loader that refuses every import.
 * @param module the engine's quickjs-emscripten module
 * @param memoryLimitBytes QuickJS's heap limit
 * @param maxStackBytes QuickJS's stack limit
 * @param slot the invocation the handlers answer for
 * @returns the sandbox, without a guest yet
 */
export function openSandbox(module: QuickJSWASMModule, memoryLimitBytes: number, maxStackBytes: number, slot: InvocationSlot): Sandbox {
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(memoryLimitBytes);
  runtime.setMaxStackSize(maxStackBytes);
  // Only a halting host error interrupts the guest here; time is fuel, metered in the engine itself (the meter's
  // refills are where a signal or the watchdog stops it, at a deterministic tick).
  runtime.setInterruptHandler(() => slot.state.violation !== undefined);
  runtime.setModuleLoader((name) => {
    slot.state.importAttempted = true;
    return { error: new Error(`tools cannot import modules ("${String(name).slice(0, 100)}"); a js tool is one self-contained module`) };
  });
  return { runtime, ctx: runtime.newContext(), guest: undefined };
}

/**
 * Evaluate the prelude and lock the globals down; stores the guest's entry points in the sandbox.
 * @param sb the sandbox
 * @param slot the invocation its host functions answer for
 * @param level the sandbox API level: which prelude (`preludeSource`)
 * @returns the guest's entry points
 * @throws Stop when the prelude could not run (a violation or an engine failure)
 */
export function prepareGuest(sb: Sandbox, slot: InvocationSlot, level: SandboxApiLevel = 1): Guest {
  const { ctx } = sb;
  const setupFn = unwrapSetup(ctx, ctx.evalCode(preludeSource(level), "reach-prelude.js", { type: "global", strict: true }), slot.state);
  const [callSync, callAsync] = makeHostFunctions(ctx, slot);
  const allow = ctx.newString(ALLOWLIST_JSON);
  // The lazily compiled parts of the prelude; their text is copied into the engine only when a tool needs them.
  const source = ctx.newFunction("source", (name) => ctx.newString(ctx.getString(name) === "random" ? RANDOM_SOURCE : API_SOURCE));
  const api = unwrapSetup(ctx, ctx.callFunction(setupFn, ctx.undefined, callSync, callAsync, allow, source), slot.state);
  for (const h of [setupFn, callSync, callAsync, allow, source]) h.dispose();
  const run = ctx.getProp(api, "run");
  const describe = ctx.getProp(api, "describe");
  api.dispose();
  sb.guest = { run, describe };
  return sb.guest;
}

/** Unwrap a result of the prelude; a failure is a `Stop` (the tool did not run yet). */
function unwrapSetup(ctx: QuickJSContext, result: ReturnType<QuickJSContext["evalCode"]>, state: InvocationState): QuickJSHandle {
  if (result.error === undefined) return result.value;
  const error = state.violation ??
    new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the QuickJS sandbox could not be prepared", { details: { reason: ctx.typeof(result.error) } });
  result.error.dispose();
  throw new Stop(error);
}
