/**
 * Checking a JavaScript module's syntax without running it: the same QuickJS engine the tools run in compiles the
 * source (`compileOnly`), so what passes here parses when it runs. Used by `pack validate` (engine `checkPackSources`).
 * @module
 */
import type { EngineWasmSource } from "./engine.ts";
import { EngineHost } from "./engine.ts";

/** A syntax error, where QuickJS found it (1-based line and column). */
export type SyntaxProblem = { readonly path: string; readonly line: number; readonly column: number; readonly message: string };

/** Memory and stack for compiling one module (a pack's sources are at most a few MiB). */
const COMPILE_MEMORY_BYTES = 64 * 1024 * 1024;
const COMPILE_STACK_BYTES = 512 * 1024;

/**
 * Where a QuickJS error's stack places it: the first `at FILE:LINE:COL` frame of `path`.
 * @param stack the error's stack
 * @param path the module's name
 * @returns line and column, or null when the stack names no position in it
 * @example
 * ```ts
 * stackPosition("    at planner.js:2:10\n", "planner.js"); // { line: 2, column: 10 }
 * ```
 */
export function stackPosition(stack: string, path: string): { line: number; column: number } | null {
  for (const frame of stack.split("\n")) {
    const at = frame.trim().replace(/^at /, "").replace(/^.*\((.*)\)$/, "$1");
    if (!at.startsWith(`${path}:`)) continue;
    const m = /:(\d+):(\d+)$/.exec(at);
    if (m !== null) return { line: Number(m[1]), column: Number(m[2]) };
  }
  return null;
}

/**
 * Compile JavaScript modules in a fresh, unmetered QuickJS engine without evaluating them.
 * @param engineWasm the QuickJS engine's bytes (as the `js` runner takes them)
 * @param modules each module's path and source
 * @returns the syntax errors found (an import that cannot be resolved here is not one)
 * @example
 * ```ts
 * declare const engineWasm: Uint8Array;
 * const problems = await moduleSyntaxErrors(engineWasm, [{ path: "planner.js", source: "export default 1" }]);
 * ```
 */
export async function moduleSyntaxErrors(engineWasm: EngineWasmSource, modules: readonly { path: string; source: string }[]): Promise<SyntaxProblem[]> {
  if (modules.length === 0) return [];
  const engine = await new EngineHost(engineWasm, false).instantiate(COMPILE_MEMORY_BYTES);
  const runtime = engine.module.newRuntime();
  runtime.setMemoryLimit(COMPILE_MEMORY_BYTES);
  runtime.setMaxStackSize(COMPILE_STACK_BYTES);
  runtime.setModuleLoader(() => ({ error: new Error("not loaded") }));
  const ctx = runtime.newContext();
  const problems: SyntaxProblem[] = [];
  try {
    for (const { path, source } of modules) {
      const r = ctx.evalCode(source, path, { type: "module", strict: true, compileOnly: true });
      if (r.error === undefined) {
        r.value.dispose();
        continue;
      }
      const e = ctx.dump(r.error) as { name?: unknown; message?: unknown; stack?: unknown } | null;
      r.error.dispose();
      if (e === null || typeof e !== "object" || e.name !== "SyntaxError") continue;
      const at = typeof e.stack === "string" ? stackPosition(e.stack, path) : null;
      problems.push({ path, line: at?.line ?? 0, column: at?.column ?? 0, message: typeof e.message === "string" ? e.message.slice(0, 500) : "syntax error" });
    }
  } finally {
    ctx.dispose();
    runtime.dispose();
  }
  return problems;
}
