/**
 * Write the generated JSON Schemas to `conformance/schemas/` (CONVENTIONS "Validation").
 *
 *   deno run --allow-read --allow-write scripts/gen-schemas.ts     (npm run schemas)
 *
 * Uses `node:fs`, which Deno provides, so that the script also type-checks under tsc and runs under Node
 * (`vite-node scripts/gen-schemas.ts`). Stale `*.schema.json` files are removed. `src/protocol/json-schema.test.ts`
 * fails when the committed files differ from what this script would write.
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generateJsonSchemas, serializeJsonSchema } from "../src/protocol/json-schema.ts";

const outDir = fileURLToPath(new URL("../conformance/schemas/", import.meta.url));
mkdirSync(outDir, { recursive: true });

const schemas = generateJsonSchemas();
let changed = 0;
for (const [name, schema] of Object.entries(schemas)) {
  const path = outDir + name;
  const text = serializeJsonSchema(schema);
  let old: string | null = null;
  try {
    old = readFileSync(path, "utf8");
  } catch {
    old = null;
  }
  if (old !== text) {
    writeFileSync(path, text);
    changed++;
    console.log(`wrote ${name}`);
  }
}
for (const name of readdirSync(outDir)) {
  if (name.endsWith(".schema.json") && !(name in schemas)) {
    rmSync(outDir + name);
    changed++;
    console.log(`removed stale ${name}`);
  }
}
console.log(`${Object.keys(schemas).length} schemas in conformance/schemas/, ${changed} changed`);
