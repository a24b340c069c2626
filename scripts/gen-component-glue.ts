// Regenerate (or --check) the glue fixtures of the example components: wasm-tools/component/glue/*.glue.json, made
// by the same load-time transpile reach-wasm runs (src/sandbox/component/transpile.ts, jco 1.17.0). Tests load
// them so that they do not pay jco's transpile (~6 s for the 12 MB componentize-js tool) in every test file;
// src/sandbox/component/transpile.test.ts checks they are what jco makes of the committed components.
//   npx vite-node scripts/gen-component-glue.ts [--check]
import { readFileSync, writeFileSync } from "node:fs";
import { encodeGlueDocument } from "../src/sandbox/component/glue.ts";
import { transpileComponent } from "../src/sandbox/component/transpile.ts";

/** fixture ← component (paths relative to the repository root). */
const GLUE_FIXTURES: ReadonlyArray<readonly [string, string]> = [
  ["wasm-tools/component/glue/text-stats.glue.json", "wasm-tools/component/build/tool.component.wasm"],
  ["wasm-tools/component/glue/c-wordcount.glue.json", "wasm-tools/c-component/build/wordcount.component.wasm"],
];

const root = new URL("../", import.meta.url);
const check = process.argv.includes("--check");
let stale = 0;
for (const [fixture, component] of GLUE_FIXTURES) {
  const bytes = encodeGlueDocument(await transpileComponent(new Uint8Array(readFileSync(new URL(component, root)))));
  if (!check) {
    writeFileSync(new URL(fixture, root), bytes);
    console.error(`wrote ${fixture} (${bytes.length} bytes)`);
  } else if (Buffer.compare(Buffer.from(bytes), readFileSync(new URL(fixture, root))) !== 0) {
    console.error(`${fixture} is not what jco makes of ${component}; run npx vite-node scripts/gen-component-glue.ts`);
    stale++;
  }
}
if (check && stale === 0) console.error("ok: the glue fixtures are what jco makes of the example components");
process.exitCode = stale === 0 ? 0 : 1;
