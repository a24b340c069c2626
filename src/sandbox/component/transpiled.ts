/**
 * What a transpiled component is to reach-wasm: the pieces of jco's `--instantiation async` glue for one component
 * of the world `reach:tool/tool` (`wasm-tools/component/wit/tool.wit`), as `glueToComponent` (`glue.ts`) makes them
 * from a glue document and `ComponentRunner` takes them. See `README.md`.
 * @module
 */
import type { ImportObject } from "./wasi-p2.ts";

/** The `instantiate` function of jco's `--instantiation async` glue. */
export type InstantiateFn = (
  getCoreModule: (name: string) => WebAssembly.Module,
  imports: ImportObject,
  instantiateCore?: (
    module: WebAssembly.Module,
    imports?: WebAssembly.Imports,
  ) => Promise<WebAssembly.Instance> | WebAssembly.Instance,
) => Promise<ToolExports> | ToolExports;

/** The exports of an instantiated `reach:tool/tool` component (jco's mapping of the world). */
export type ToolExports = {
  /** `ok(s)` returns `s`; `err(e)` throws jco's `ComponentError` whose `payload` is `e`. */
  invoke(input: string): string;
};

/** Where a core module named by the glue comes from. */
export type CoreModuleSource = { readonly embedded: number } | { readonly base64: string };

/** One transpiled component: the glue and what it belongs to. */
export type TranspiledComponent = {
  /** sha256 (hex) of the component bytes the glue was generated from. */
  readonly componentSha256: string;
  /** sha256 (hex) of the glue's source: part of the runner's module identity (what ran). */
  readonly glueSha256: string;
  /** Core module name (as the glue asks for it) → the n-th core module in the component, or inline bytes. */
  readonly coreModules: Readonly<Record<string, CoreModuleSource>>;
  /** Every import interface the glue looks up (`reach:tool/host`, `wasi:io/streams`, …). */
  readonly importNames: readonly string[];
  /** The glue's `instantiate`. */
  readonly instantiate: InstantiateFn;
};

/** The import interface of the host API (WIT `reach:tool/host`). */
export const HOST_INTERFACE = "reach:tool/host";
