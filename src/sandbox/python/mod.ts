/**
 * The `python` tool kind and the `exec_python` infra tool: Python (MicroPython 1.27) in a fuel-metered WebAssembly
 * instance with our own imports — no JavaScript glue, no host realm, no files, virtual time and seeded randomness
 * through the host API. See README.md in this folder.
 * @module
 */
export { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_STDOUT_BYTES, PythonRunner } from "./runner.ts";
export type { PythonInvocation, PythonRunnerOptions } from "./runner.ts";
export { execPython, ExecPythonRequestSchema, MAX_SNIPPET_CHARS } from "./exec-python.ts";
export type { ExecPythonRequest, ExecPythonResult } from "./exec-python.ts";
export { interpreterMemoryCap, PYTHON_PACKAGE, PYTHON_WASM_SHA256 } from "./interpreter.ts";
export type { PythonWasmSource } from "./interpreter.ts";
export { SNIPPET_FILE, TOOL_FILE } from "./prelude.ts";
