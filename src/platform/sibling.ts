/**
 * Where a sibling script of the running module is (internal). Three layouts: the sources (`.ts`, Deno and the
 * tests), tsc's output (`.js`, the library), and the CLI bundle, whose ES module entries are `.mjs` beside the
 * CommonJS script `main.cjs` (the bin is CommonJS: Node's ESM loader cost a short run ~10 ms of start-up).
 * @module
 */

/**
 * The URL of `name` beside the module at `here`, in that module's layout.
 * @param name the file name without its extension, e.g. `./step-worker`
 * @param here the running module's `import.meta.url`
 * @returns the sibling's URL
 * @example siblingScript("./step-worker", "file:///app/dist/cli/main.cjs").pathname // "/app/dist/cli/step-worker.mjs"
 */
export function siblingScript(name: string, here: string): URL {
  const ext = here.endsWith(".ts") ? ".ts" : here.endsWith(".cjs") || here.endsWith(".mjs") ? ".mjs" : ".js";
  return new URL(`${name}${ext}`, here);
}
