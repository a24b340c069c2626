/**
 * The example components for tests: their bytes, and their glue from the fixtures in `wasm-tools/component/glue/`
 * (made by the load-time transpile, `scripts/gen-component-glue.ts`; `transpile.test.ts` checks they are current),
 * turned into runnable components by the same `glueToComponent` a cached entry goes through.
 * @module
 */
import { readFileSync } from "node:fs";
import { glueToComponent, parseGlueDocument } from "./glue.ts";
import type { TranspiledComponent } from "./transpiled.ts";

const root = new URL("../../../", import.meta.url);
const read = (path: string): Uint8Array => new Uint8Array(readFileSync(new URL(path, root)));

/** `wasm-tools/component/build/tool.component.wasm` (componentize-js text statistics). */
export const TEXT_STATS_CODE = read("wasm-tools/component/build/tool.component.wasm");
/** `wasm-tools/c-component/build/wordcount.component.wasm` (C without libc). */
export const C_WORDCOUNT_CODE = read("wasm-tools/c-component/build/wordcount.component.wasm");
/** The text-stats component's glue document bytes. */
export const TEXT_STATS_GLUE = read("wasm-tools/component/glue/text-stats.glue.json");
/** The C word count's glue document bytes. */
export const C_WORDCOUNT_GLUE = read("wasm-tools/component/glue/c-wordcount.glue.json");
/** The text-stats component, ready for `ComponentRunner({ components: [TEXT_STATS] })`. */
export const TEXT_STATS: TranspiledComponent = glueToComponent(parseGlueDocument(TEXT_STATS_GLUE));
/** The C word count component. */
export const C_WORDCOUNT: TranspiledComponent = glueToComponent(parseGlueDocument(C_WORDCOUNT_GLUE));
