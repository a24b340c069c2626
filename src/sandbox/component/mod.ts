/**
 * The `component` tool kind: WebAssembly components (world `reach:tool/tool`) run through glue that jco generates
 * when a component is first loaded (checked, then cached), with every import, WASI included, supplied by reach-wasm.
 * See `README.md`.
 * @module
 */
export { ComponentRunner } from "./runner.ts";
export type { ComponentRunnerOptions } from "./runner.ts";
export { ComponentGlueSchema, encodeGlueDocument, GLUE_DOCUMENT_TYPE, glueToComponent, JCO_VERSION, parseGlueDocument, SUPPLIED_INTERFACES } from "./glue.ts";
export type { ComponentGlue } from "./glue.ts";
export { clearLoadedComponents, glueStoreKey, loadComponent, prepareComponent } from "./load.ts";
export type { ComponentGlueStore } from "./load.ts";
export { transpileComponent } from "./transpile.ts";
export { HOST_INTERFACE } from "./transpiled.ts";
export type { CoreModuleSource, InstantiateFn, ToolExports, TranspiledComponent } from "./transpiled.ts";
export { createWasiP2, GuestExit, WASI_P2_INTERFACES } from "./wasi-p2.ts";
export type { CapturedOutput, ImportObject, WasiP2, WasiP2Options } from "./wasi-p2.ts";
