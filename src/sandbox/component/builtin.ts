/**
 * The transpiled components that ship with reach-wasm: today the example tool of `wasm-tools/component/`
 * (text statistics; `build/tool.component.wasm`, sha256 in `build/SHA256SUMS`).
 * @module
 */
import * as textStats from "./generated/text-stats.ts";
import type { InstantiateFn, TranspiledComponent } from "./runner.ts";

/** The example component `wasm-tools/component/build/tool.component.wasm` (world `reach:tool/tool`). */
export const TEXT_STATS: TranspiledComponent = Object.freeze({
  componentSha256: textStats.COMPONENT_SHA256 as string,
  coreModules: textStats.CORE_MODULES as TranspiledComponent["coreModules"],
  importNames: Object.freeze([...(textStats.IMPORT_NAMES as string[])]),
  instantiate: textStats.instantiate as InstantiateFn,
});

/** All built-in transpiled components. */
export const BUILTIN_COMPONENTS: readonly TranspiledComponent[] = Object.freeze([TEXT_STATS]);
