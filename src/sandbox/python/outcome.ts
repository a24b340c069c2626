/**
 * Turning how an execution of the driver ended into the invocation's output or `ReachError`: a Python exception
 * (with the guest's traceback in `details.errorStack`, prelude frames removed), the interpreter's limits (memory,
 * recursion), the fuel meter (out of fuel, an abort, the watchdog), a stop raised by an import (a halting host error,
 * FFI use), or a trap.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { JsonValue } from "../../protocol/mod.ts";
import { probeAfterTrap } from "./fuel.ts";
import { GuestStop } from "./imports.ts";
import type { Interpreter } from "./interpreter.ts";
import { STACK_TOP } from "./interpreter.ts";
import type { InvocationHooks } from "./invocation.ts";
import type { RawResult } from "./session.ts";

/** Largest traceback kept in `details.errorStack` (characters; the middle is cut). */
export const MAX_ERROR_STACK_CHARS = 16 * 1024;

/** How an invocation finished. */
export type Finish = { output: JsonValue } | { error: ReachError };

/** What classifying needs to know about the invocation. */
export type FinishContext = {
  toolName: string;
  memoryLimitBytes: number;
  maxOutputBytes: number;
  /** How the tool is named in messages (`tool "x"`, `the exec_python snippet`). */
  what: string;
  /** The fuel meter's error: the budget ran out, or an abort or the watchdog stopped the run (else null). */
  stopped: ReachError | null;
};

/**
 * The error for a tool that exhausted the interpreter's memory or stack.
 * @param reason which limit
 * @param ctx the invocation
 * @returns `EXEC_RESOURCE_EXHAUSTED` with `details.reason`
 */
export function exhausted(reason: "memory" | "stack", ctx: FinishContext): ReachError {
  const message = reason === "memory"
    ? `${ctx.what} exceeded its memory limit of ${ctx.memoryLimitBytes} bytes; give it less data (every invocation has this limit)`
    : `${ctx.what} recursed too deeply (the Python stack allows about 280 nested calls); make the recursion iterative or shallower`;
  const details = { reason, toolName: ctx.toolName, ...(reason === "memory" ? { memoryLimitBytes: ctx.memoryLimitBytes } : {}) };
  return new ReachError("EXEC_RESOURCE_EXHAUSTED", message, { details });
}

/** Drop the prelude's and driver's frames (`File "<stdin>"`) from a MicroPython traceback; bound its size. */
export function guestTraceback(text: string): string {
  const kept = text.split("\n").filter((line) => !line.startsWith('  File "<stdin>"')).join("\n");
  if (kept.length <= MAX_ERROR_STACK_CHARS) return kept;
  const half = MAX_ERROR_STACK_CHARS / 2;
  return `${kept.slice(0, half)}\n  [… ${kept.length - MAX_ERROR_STACK_CHARS} characters cut …]\n${kept.slice(-half)}`;
}

/** The exception line(s) after the last frame: `ValueError: boom`. */
function exceptionText(traceback: string): string {
  const lines = traceback.split("\n");
  let last = -1;
  lines.forEach((line, i) => {
    if (line.startsWith("  File ") || line.startsWith("Traceback ")) last = i;
  });
  const text = lines.slice(last + 1).join("\n").trim();
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

const STACK_MESSAGES = new Set(["RuntimeError: maximum recursion depth exceeded", "RuntimeError: pystack exhausted"]);

function raised(raw: { type: string; text: string }, hooks: InvocationHooks, ctx: FinishContext): ReachError {
  if (raw.type === "MemoryError" || (raw.text === "" && hooks.memoryExhausted)) return exhausted("memory", ctx);
  const errorStack = guestTraceback(raw.text);
  const text = exceptionText(errorStack) || raw.type || "an exception that could not be read (the interpreter's state was corrupted)";
  if (STACK_MESSAGES.has(text)) return exhausted("stack", ctx);
  return new ReachError("EXEC_TOOL_FAILED", `${ctx.what} raised ${text}`, {
    details: { toolName: ctx.toolName, errorName: raw.type, errorStack },
  });
}

/** Whether a trap is the C stack running out: the stack pointer left [0, STACK_TOP) (it wraps below 0). */
function isStackTrap(err: unknown, interp: Interpreter): boolean {
  if (err instanceof RangeError && /call stack/i.test(err.message)) return true; // the host's own stack
  if (!(err instanceof WebAssembly.RuntimeError)) return false;
  try {
    // The trap left the stack pointer where it was (the instance is dropped afterwards anyway).
    const sp = probeAfterTrap(interp, () => interp.exports.emscripten_stack_get_current() >>> 0);
    return sp > STACK_TOP || sp < 1024;
  } catch {
    return false;
  }
}

function threw(err: unknown, interp: Interpreter, hooks: InvocationHooks, ctx: FinishContext): ReachError {
  if (ctx.stopped !== null) return ctx.stopped;
  if (err instanceof GuestStop) return err.error;
  if (hooks.violation !== undefined) return hooks.violation;
  if (err instanceof ReachError) return err;
  if (isStackTrap(err, interp)) return exhausted("stack", ctx);
  if (hooks.memoryExhausted) return exhausted("memory", ctx);
  return new ReachError("EXEC_TOOL_FAILED",
    `the Python interpreter failed while running ${ctx.what} (a trap: its memory was written out of bounds, or an ` +
      "exception could not be raised because the heap was locked or full)", { cause: err, details: { toolName: ctx.toolName, reason: "trap" } });
}

/** The output the driver handed back, checked. */
function output(hooks: InvocationHooks, ctx: FinishContext): Finish {
  const fail = (why: string): Finish => ({ error: new ReachError("EXEC_TOOL_FAILED", `${ctx.what} ${why}`, { details: { toolName: ctx.toolName } }) });
  const text = hooks.result;
  if (text === undefined) return fail("produced no result");
  if (text.length > ctx.maxOutputBytes || new TextEncoder().encode(text).length > ctx.maxOutputBytes) {
    return fail(`returned more than ${ctx.maxOutputBytes} bytes of JSON; return less or write a file`);
  }
  try {
    return { output: JSON.parse(text) as JsonValue };
  } catch {
    return fail("returned a value that is not valid JSON (NaN, Infinity or non-string keys?)");
  }
}

/**
 * Classify how the driver ended.
 * @param raw what `WarmInterpreter.execute` returned
 * @param interp the interpreter it ran on (read only for a trap's stack pointer)
 * @param hooks the invocation's hooks
 * @param ctx the invocation
 * @returns the output or the error
 */
export function finish(raw: RawResult, interp: Interpreter, hooks: InvocationHooks, ctx: FinishContext): Finish {
  if (ctx.stopped !== null) return { error: ctx.stopped };
  if (raw.kind === "threw") return { error: threw(raw.error, interp, hooks, ctx) };
  if (hooks.violation !== undefined) return { error: hooks.violation };
  if (raw.kind === "raised") return { error: raised(raw, hooks, ctx) };
  return output(hooks, ctx);
}
