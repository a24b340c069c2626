/**
 * The transpiled components that ship with reach-wasm: the example tools of `wasm-tools/component/` (text
 * statistics, componentize-js; `build/tool.component.wasm`) and `wasm-tools/c-component/` (a word count in C without
 * libc; `build/wordcount.component.wasm`), each with its sha256 in its `build/SHA256SUMS`.
 * @module
 */
import * as cWordcount from "./generated/c-wordcount.ts";
import * as textStats from "./generated/text-stats.ts";
import type { InstantiateFn, TranspiledComponent } from "./transpiled.ts";

/** The pieces a generated glue module exports (`wasm-tools/component/build.mjs`). */
type GeneratedGlue = { COMPONENT_SHA256: unknown; CORE_MODULES: unknown; IMPORT_NAMES: unknown; instantiate: unknown };

function fromGlue(glue: GeneratedGlue): TranspiledComponent {
  return Object.freeze({
    componentSha256: glue.COMPONENT_SHA256 as string,
    coreModules: glue.CORE_MODULES as TranspiledComponent["coreModules"],
    importNames: Object.freeze([...(glue.IMPORT_NAMES as string[])]),
    instantiate: glue.instantiate as InstantiateFn,
  });
}

/** The example component `wasm-tools/component/build/tool.component.wasm` (world `reach:tool/tool`). */
export const TEXT_STATS: TranspiledComponent = fromGlue(textStats);

/**
 * The example component `wasm-tools/c-component/build/wordcount.component.wasm` (world `reach:tool/tool`): a few KB
 * of C with a hand-written canonical ABI, no JS engine; `{"text"}` → `{"words","lines","chars","bytes","at"}`.
 */
export const C_WORDCOUNT: TranspiledComponent = fromGlue(cWordcount);

/** All built-in transpiled components. */
export const BUILTIN_COMPONENTS: readonly TranspiledComponent[] = Object.freeze([TEXT_STATS, C_WORDCOUNT]);
