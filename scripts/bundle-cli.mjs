// Bundle the CLI (`dist/cli/main.js`, the `reach-wasm` bin, and `dist/cli/engine-worker.js`, the engine thread it
// starts) with esbuild after `tsc`: ESM entries plus chunks for
// what commands load lazily. Measured on the 2-core CI machine, `reach-wasm run packs/hello` as a whole process
// went from ~430–610 ms to ~320–430 ms: Node's ESM loader resolving ~120 small modules was the largest start-up
// cost. `dist/mod.js` (the library) stays tsc's unbundled output; Deno runs `src/` directly.
// binaryen (14 MB, loaded only to instrument a module the fuel cache has not seen), Ajv (only for schemas the small
// validator does not cover), the QuickJS variant (located through its package) and jco with its WASI shim (loaded only
// to transpile a component the glue cache has not seen; it finds its own .wasm files beside its modules) stay external.
import { build } from "esbuild";
import { chmodSync, rmSync } from "node:fs";

rmSync("dist/cli/chunks", { recursive: true, force: true });
await build({
  // conformance-cases.js: the runtime-neutral cases of conformance/lib/ that `reach-wasm conformance` runs in process
  entryPoints: ["src/cli/main.ts", "src/platform/engine-worker.ts", { in: "conformance/lib/all.ts", out: "conformance-cases" }],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: "dist/cli",
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  // the run service's drivers stay external too: PGlite loads its WebAssembly and data files beside its own module
  external: ["binaryen", "ajv", "ajv/*", "ajv-formats", "@jitl/*", "quickjs-emscripten-core", "@electric-sql/pglite", "pg", "pg-boss", "@bytecodealliance/*"],
  logLevel: "error",
  legalComments: "none",
  minify: true,
  // names are data here: a refusal names the class of what it refused (conformance jcs/refuse/class_instance)
  keepNames: true,
});
chmodSync("dist/cli/main.js", 0o755);
