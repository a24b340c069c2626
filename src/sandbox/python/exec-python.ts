/**
 * The `exec_python` infra tool (seed 002's infrastructure suite): `{code: string, input?: JSON}` →
 * `{stdout: string, result: JSON}`. The snippet runs like a `python` tool (same interpreter, limits and host API):
 * `input` and `reach` are predefined, `result` (null when the snippet does not set it) is the result, and what it
 * prints is `stdout` (at most the runner's `maxStdoutBytes`, cut with a marker).
 * @module
 */
import { z } from "zod";
import { canonicalize } from "../../canonical/mod.ts";
import { parseOrThrow } from "../../protocol/mod.ts";
import { lazySchema } from "../../protocol/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import type { ToolOutcome } from "../types.ts";
import type { JsonValue } from "../../protocol/mod.ts";
import type { PythonInvocation, PythonRunner } from "./runner.ts";

/** Largest snippet, in characters. */
export const MAX_SNIPPET_CHARS = 1024 * 1024;

/**
 * The request of `exec_python` (validated at the boundary: it comes from a plan). `input` is any JSON value, taken
 * as given: `z.json()` would rebuild it and drop its `"__proto__"` members, so the snippet would not see what was
 * recorded (conformance/HASHING.md "What a tool sees"); that it is JSON data is checked by canonicalising it.
 */
export const ExecPythonRequestSchema = lazySchema(() => z.strictObject({
  code: z.string().min(1).max(MAX_SNIPPET_CHARS),
  input: z.unknown().refine(isJsonData, "must be a JSON value").optional(),
}));

function isJsonData(value: unknown): boolean {
  try {
    canonicalize(value);
    return true;
  } catch {
    return false;
  }
}

/** A validated `exec_python` request. */
export type ExecPythonRequest = z.output<ReturnType<typeof ExecPythonRequestSchema>>;

/** What `exec_python` returns. */
export type ExecPythonResult = { stdout: string; result: JsonValue };

/**
 * Run an `exec_python` request.
 * @param runner the Python runner (shared with the `python` tool kind)
 * @param request the untrusted request `{code, input?}`
 * @param invocation host and limits (toolName is usually `"exec_python"`)
 * @returns the outcome: on success the output is {@link ExecPythonResult}; on failure the error (`EXEC_TOOL_FAILED`
 *   with the traceback in `details.errorStack`, `EXEC_RESOURCE_EXHAUSTED`, `EXEC_TOOL_TIMEOUT`, a `POLICY_*`, or
 *   `PROTO_SCHEMA_VIOLATION` for a malformed request) and the stdout so far as `log`
 * @throws TypeError / RangeError when the invocation itself is malformed
 * @example
 * const outcome = await execPython(runner, { code: "result = sum(input)", input: [1, 2] }, { toolName: "exec_python",
 *   invocationId, host, timeoutMs: 30_000, fuel: DEFAULT_FUEL, memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES });
 * // outcome.output → { stdout: "", result: 3 }
 */
export async function execPython(runner: PythonRunner, request: unknown, invocation: PythonInvocation): Promise<ToolOutcome> {
  let parsed: ExecPythonRequest;
  try {
    parsed = parseOrThrow(ExecPythonRequestSchema(), request, "PROTO_SCHEMA_VIOLATION", "the exec_python request");
  } catch (err) {
    if (!(err instanceof ReachError)) throw err;
    return { status: "error", error: err, log: "", fuelUsed: 0n };
  }
  return runner.runSnippet(parsed.code, (parsed.input ?? null) as JsonValue, invocation);
}
