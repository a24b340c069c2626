/**
 * Test support (not exported from mod.ts): a runner on the installed interpreter, and one-line helpers to run a
 * `python` tool or an `exec_python` snippet against the stub host of `../quickjs/_test-host.ts`.
 * @module
 */
import { readPythonWasm } from "../../src/platform/python-engine.ts";
import { invocation } from "../../src/sandbox/quickjs/_test-host.ts";
import type { ToolInvocation, ToolOutcome } from "../../src/sandbox/types.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { execPython } from "../../src/sandbox/python/exec-python.ts";
import { PythonRunner } from "../../src/sandbox/python/runner.ts";
import type { PythonRunnerOptions } from "../../src/sandbox/python/runner.ts";

export { invocation, testHost } from "../../src/sandbox/quickjs/_test-host.ts";

/**
 * A runner on the installed interpreter.
 * @param options more options
 * @returns the runner
 */
export function pythonRunner(options: Partial<PythonRunnerOptions> = {}): PythonRunner {
  return new PythonRunner({ pythonWasm: readPythonWasm, ...options });
}

/**
 * Run `tool.py` source as a `python` tool.
 * @param runner the runner
 * @param source the module's source
 * @param input its input
 * @param extra invocation overrides
 * @returns the outcome
 */
export function runTool(runner: PythonRunner, source: string, input: JsonValue = null, extra: Partial<ToolInvocation> = {}): Promise<ToolOutcome> {
  return runner.run(invocation(source, input, extra));
}

/**
 * Run a snippet through `execPython`.
 * @param runner the runner
 * @param code the snippet
 * @param input its `input`
 * @param extra invocation overrides
 * @returns the outcome
 */
export function runSnippet(runner: PythonRunner, code: string, input?: JsonValue, extra: Partial<ToolInvocation> = {}): Promise<ToolOutcome> {
  return execPython(runner, input === undefined ? { code } : { code, input }, invocation("", null, { toolName: "exec_python", ...extra }));
}

/**
 * The output of a successful outcome, or a thrown error naming what happened instead.
 * @param out the outcome
 * @returns its output
 */
export function outputOf(out: ToolOutcome): JsonValue {
  if (out.status !== "success") throw new Error(`expected success, got ${out.error.code}: ${out.error.message}`);
  return out.output;
}
