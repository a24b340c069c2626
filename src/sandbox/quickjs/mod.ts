/**
 * The `js` tool kind: JavaScript tools evaluated in QuickJS (every invocation starts from the state of a sandbox just
 * prepared on a fresh engine, restored from a memory snapshot) on a fuel-metered, deterministic engine instance. See
 * README.md in this folder for the in-sandbox `reach` API.
 * @module
 */
export { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_STACK_BYTES, QuickJsRunner } from "./runner.ts";
export type { QuickJsRunnerOptions } from "./runner.ts";
export { ENGINE_BASE_BYTES, engineMemoryCap } from "./engine.ts";
export type { EngineWasmSource } from "./engine.ts";
export { GLOBAL_ALLOWLIST } from "./prelude.ts";
export { moduleSyntaxErrors, stackPosition } from "./syntax.ts";
export type { SyntaxProblem } from "./syntax.ts";
