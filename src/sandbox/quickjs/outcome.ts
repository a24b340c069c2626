/**
 * Turning what a tool did into a `ReachError`: what the guest threw (read inside the sandbox by the prelude's
 * `describe`), the engine's limits (memory, stack), the timeout. Used by `runner.ts`.
 * @module
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { ReachError } from "../../protocol/mod.ts";
import type { ToolInvocation } from "../types.ts";
import type { InvocationState } from "./bridge.ts";
import type { Guest } from "./sandbox.ts";
import { stackPosition } from "./syntax.ts";

/** Extra memory allowed while reading an error out of a context that hit its memory limit. */
const DESCRIBE_HEADROOM = 1024 * 1024;

/**
 * The error for a tool that exhausted QuickJS's memory or stack.
 * @param reason which limit
 * @param toolName the tool
 * @param limit the memory limit, for `memory`
 * @returns `EXEC_RESOURCE_EXHAUSTED` with `details.reason`
 */
export function exhausted(reason: "memory" | "stack", toolName: string, limit?: number): ReachError {
  const message = reason === "memory"
    ? `tool "${toolName}" exceeded its memory limit of ${limit} bytes; give it less data (every invocation has this limit)`
    : `tool "${toolName}" recursed too deeply (stack limit); make the recursion iterative or shallower`;
  return new ReachError("EXEC_RESOURCE_EXHAUSTED", message, { details: { reason, toolName, ...(limit === undefined ? {} : { memoryLimitBytes: limit }) } });
}

/**
 * Whether a host-side error is the host's stack overflowing (before QuickJS's own limit).
 * @param err what the engine threw
 * @returns true for a stack overflow
 */
export function isStackTrap(err: unknown): boolean {
  return err instanceof Error && /call stack/i.test(err.message);
}

/**
 * Classify what the guest threw (the caller disposes `errHandle`).
 * @param ctx the sandbox's context
 * @param runtime its runtime
 * @param errHandle the thrown value
 * @param state the invocation's state
 * @param guest the guest's entry points (`describe`)
 * @param inv the invocation
 * @returns the invocation's error
 */
export function guestError(ctx: QuickJSContext, runtime: QuickJSRuntime, errHandle: QuickJSHandle, state: InvocationState, guest: Guest, inv: ToolInvocation): ReachError {
  if (state.violation !== undefined) return state.violation;
  let described: { name: string; message: string; code: string | null; stack?: string | null } | undefined;
  runtime.setMemoryLimit(inv.memoryLimitBytes + DESCRIBE_HEADROOM);
  const r = ctx.callFunction(guest.describe, ctx.undefined, errHandle);
  runtime.setMemoryLimit(inv.memoryLimitBytes);
  if (r.error === undefined) {
    if (ctx.typeof(r.value) === "string") described = JSON.parse(ctx.getString(r.value)) as typeof described;
    r.value.dispose();
  } else {
    r.error.dispose();
  }
  if (state.violation !== undefined) return guestError(ctx, runtime, errHandle, state, guest, inv);
  // QuickJS throws `null` when it cannot even allocate its "out of memory" error.
  if ((described === undefined || described.message === "null") && nearMemoryLimit(ctx, runtime, inv, state)) {
    return exhausted("memory", inv.toolName, inv.memoryLimitBytes);
  }
  if (described === undefined) return new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" failed (its error could not be read)`);
  if (described.name === "InternalError" && described.message === "out of memory") return exhausted("memory", inv.toolName, inv.memoryLimitBytes);
  if (described.name === "InternalError" && described.message === "stack overflow") return exhausted("stack", inv.toolName);
  if (described.name === "RangeError" && described.message === "Maximum call stack size exceeded") return exhausted("stack", inv.toolName);
  const text = described.message === "" ? described.name : `${described.name}: ${described.message}`;
  // A syntax error is the module's own: say where (QuickJS names the module `<tool>.js`).
  const at = described.name === "SyntaxError" && typeof described.stack === "string" ? stackPosition(described.stack, `${inv.toolName}.js`) : null;
  const where = at === null ? "" : ` at line ${at.line}, column ${at.column} of its module; run \`reach-wasm pack validate\` to check every module`;
  return new ReachError("EXEC_TOOL_FAILED", `tool "${inv.toolName}" threw ${text}${where}`, {
    details: { toolName: inv.toolName, errorName: described.name, ...(described.code === null ? {} : { errorCode: described.code }), ...(typeof described.stack === "string" ? { errorStack: guestStack(described.stack) } : {}), ...(at === null ? {} : { line: at.line, column: at.column }) },
  });
}

/**
 * The guest's stack as evidence (seed 004 `errorStack`): the tool's own frames; the sandbox's frames (the prelude,
 * `reach-prelude.js`, and native calls) are dropped.
 * @param stack the stack QuickJS gave the thrown error
 * @returns the frames, one per line
 */
function guestStack(stack: string): string {
  return stack.split("\n").filter((l) => l.trim() !== "" && !l.includes("reach-prelude.js") && !/\(native\)$/.test(l.trim())).join("\n");
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
