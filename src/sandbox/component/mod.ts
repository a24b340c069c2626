/**
 * The `component` tool kind: WebAssembly components (world `reach:tool/tool`) run through jco-transpiled glue with
 * every import, WASI included, supplied by reach-wasm. See `README.md`.
 * @module
 */
export { BUILTIN_COMPONENTS, C_WORDCOUNT, TEXT_STATS } from "./builtin.ts";
export { ComponentRunner } from "./runner.ts";
export type { ComponentRunnerOptions } from "./runner.ts";
export { HOST_INTERFACE } from "./transpiled.ts";
export type { CoreModuleSource, InstantiateFn, ToolExports, TranspiledComponent } from "./transpiled.ts";
export { createWasiP2, GuestExit, WASI_P2_INTERFACES } from "./wasi-p2.ts";
export type { CapturedOutput, ImportObject, WasiP2, WasiP2Options } from "./wasi-p2.ts";
