// The CLI bundle (used by `npm run build` through scripts/bundle-cli.mjs, and by the tests that start built CLI
// processes through `cliBundle()`: what is shipped is what is tested).
// - `main.cjs`, the whole CLI as one CommonJS script (a function expression: the loader calls it), run by `main.js`
//   (the `reach-wasm` bin, a copy of script-loader.cjs; `package.json` beside it makes it CommonJS) with a V8 code
//   cache made by one training run (`packs/hello`). Measured on the 2-core CI
//   machine: Node's ESM loader resolving the CLI's modules, then compiling them, were most of a short run's start-up
//   CPU (~120 unbundled modules: 430–610 ms; ESM chunks: 320–430 ms; one script with its code cache: see README
//   "Benchmarks"). The script gets `import.meta.url` as `__reachModuleUrl` and its dynamic imports through
//   `__reachImport` (a script compiled by `vm` has no dynamic-import host of its own).
// - `engine-worker.mjs` and `step-worker.mjs` (the engine and step threads) and `conformance-cases.mjs` (the
//   runtime-neutral cases of conformance/lib/ that `reach-wasm conformance` runs in process): ESM entries + chunks,
//   `.mjs` because the folder is CommonJS (src/platform/sibling.ts finds them).
// binaryen (14 MB, loaded only to instrument a module the fuel cache has not seen), Ajv (only for schemas the small
// validator does not cover), QuickJS (its variant is located through its package), jco with its WASI shim (loaded
// only to transpile a component the glue cache has not seen; it finds its own .wasm files beside its modules) and
// the run service's drivers (PGlite loads its WebAssembly and data files beside its own module) and the OpenTelemetry
// SDK (loaded only for `--otlp-endpoint`) stay external.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { URL } from "node:url";

const root = new URL("../../", import.meta.url).pathname;
const external = ["binaryen", "ajv", "ajv/*", "ajv-formats", "@jitl/*", "quickjs-emscripten-core", "@electric-sql/pglite", "pg", "pg-boss", "@bytecodealliance/*", "@opentelemetry/*"];

/**
 * zod's `locales` namespace with English only. zod re-exports its ~50 locales as `z.locales` (394 KB of the 770 KB
 * it added to the bundle), so no bundler can drop them; reach-wasm's messages are English (zod sets `en` itself, from
 * `locales/en.js`). Fewer functions in `main.cjs` make a smaller code cache, and V8 reads all of it at every start.
 * @type {import("esbuild").Plugin}
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (/[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: join(args.resolveDir, "../locales/en.js"), namespace: "zod-locales" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: root }));
  },
};

/**
 * zod, loaded when a schema is first built rather than at start-up (main.cjs only). Schemas are built on first use
 * (`src/protocol/_lazy.ts`) and a warm run builds none (`src/engine/document-cache.ts`), yet every module that imports
 * zod initialises it: ~7 ms of a short run's CPU, its code a third of the code cache. Here `import { z } from "zod"` in
 * reach-wasm's own sources gets a stand-in whose every property read loads zod (esbuild turns the `require` into the
 * lazy initialisation of the bundled module). zod is bundled once either way; other packages import it as they are.
 * @type {import("esbuild").Plugin}
 */
const zodOnFirstUse = {
  name: "zod-on-first-use",
  setup(b) {
    const ours = (path) => path.startsWith(join(root, "src/")) || path.startsWith(join(root, "conformance/"));
    b.onResolve({ filter: /^zod$/ }, (args) => (ours(args.importer) ? { path: "zod", namespace: "zod-on-first-use" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "zod-on-first-use" }, () => ({
      contents: `let real;
const load = () => (real ??= require(${JSON.stringify(join(root, "node_modules/zod/index.js"))}).z);
export const z = new Proxy({}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_, key) => ({ ...Reflect.getOwnPropertyDescriptor(load(), key), configurable: true }),
});`,
      resolveDir: root,
      loader: "js",
    }));
  },
};

/**
 * The same for the signature and hash libraries (noble's ed25519 and SHA-2): a run that checks no signature and hashes
 * natively (`node:crypto`) does not need them, and their initialisation (tables, precomputed points) cost ~1.7 ms of a
 * short run; and for fflate, which only inflates (reading a capsule, `_gunzip.ts`) and builds its Huffman tables as it
 * loads (~5 ms of a Deno run that reads no capsule). Each export becomes a stand-in that loads the module on first use:
 * called, constructed, or read.
 * @param {string[]} specifiers the packages, as imported by reach-wasm's sources
 * @returns {Promise<import("esbuild").Plugin>}
 */
async function onFirstUse(specifiers) {
  const exportsOf = new Map();
  for (const spec of specifiers) exportsOf.set(spec, Object.keys(await import(spec)));
  const filter = new RegExp(`^(${specifiers.map((x) => x.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|")})$`);
  return {
    name: "on-first-use",
    setup(b) {
      const ours = (path) => path.startsWith(join(root, "src/")) || path.startsWith(join(root, "conformance/"));
      b.onResolve({ filter }, (args) => (ours(args.importer) ? { path: args.path, namespace: "on-first-use" } : undefined));
      b.onLoad({ filter: /.*/, namespace: "on-first-use" }, async (args) => {
        const real = await b.resolve(args.path, { kind: "require-call", resolveDir: root });
        const names = exportsOf.get(args.path);
        return {
          contents: `let real;
const load = () => (real ??= require(${JSON.stringify(real.path)}));
const standIn = (name) => new Proxy(function () {}, {
  apply: (_, self, args) => Reflect.apply(load()[name], self, args),
  construct: (_, args) => Reflect.construct(load()[name], args),
  get: (_, key) => load()[name][key],
  set: (_, key, value) => ((load()[name][key] = value), true),
  has: (_, key) => key in load()[name],
});
${names.map((n) => `export const ${n} = standIn(${JSON.stringify(n)});`).join("\n")}`,
          resolveDir: root,
          loader: "js",
        };
      });
    },
  };
}

/**
 * Bundle the CLI into `outdir`.
 * @param {{ outdir: string; minify?: boolean; train?: boolean }} options `train`: make the code cache (a run of packs/hello)
 * @returns {Promise<void>}
 */
export async function bundleCli({ outdir, minify = true, train = true }) {
  // Class and function names stay in the ES module entries (`keepNames`: messages name them; a class instance refused
  // by JCS names its class, conformance case determinism.jcs-24). main.cjs, whose start-up counts, is minified whole,
  // identifiers too, without `keepNames`: its thousands of start-up calls cost ~5 ms of a short run, and the shorter
  // source another ~5 (less to read, hold and page in). Nothing the CLI hands to JCS is a class instance, every error
  // class sets its `name` itself, and the conformance cases run from conformance-cases.mjs, which keeps names.
  // fflate's browser build: its Node build loads worker_threads at start-up for async APIs the capsule never uses.
  const common = { bundle: true, platform: "node", target: "node20", external, alias: { fflate: "fflate/browser" }, plugins: [zodEnglishOnly], logLevel: "error", legalComments: "none", minify, keepNames: true };
  const script = { ...common, keepNames: false, plugins: [zodEnglishOnly, zodOnFirstUse, await onFirstUse(["@noble/ed25519", "@noble/hashes/sha2.js", "fflate"])] };
  rmSync(join(outdir, "chunks"), { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  for (const f of readdirSync(outdir)) if (/^main\.cjs\..*cache$/.test(f)) rmSync(join(outdir, f), { force: true });
  writeFileSync(join(outdir, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
  // The ES module entries share their chunks: the engine and step threads, the conformance cases, and the CLI as ES
  // modules for Deno (`deno-modules.mjs`: Deno caches the compiled code of ES modules itself, and loads a chunk only
  // when a command imports it), which the Deno entry runs when the build trained no code cache for its V8 (see
  // `denoEntry`). Code moved into chunks/ would see its chunk's URL as `import.meta.url`, so every file takes
  // the folder's instead (a sibling script, the templates and the package root are found from it).
  await build({
    ...common,
    entryPoints: [join(root, "src/host/engine-worker.ts"), join(root, "src/host/step-worker.ts"), { in: join(root, "conformance/lib/all.ts"), out: "conformance-cases" }, { in: join(root, "src/cli/main.ts"), out: "deno-modules" }],
    splitting: true,
    format: "esm",
    outdir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    define: { "import.meta.url": "__reachModuleUrl" },
    banner: { js: 'const __reachModuleUrl = import.meta.url.replace(/\\/chunks\\/[^/]*$/, "/deno.mjs");' },
  });
  const modules = join(outdir, "deno-modules.mjs");
  writeFileSync(modules, readFileSync(modules, "utf8").replace(/^#!.*\n/, ""));
  writeFileSync(join(outdir, "deno.mjs"), denoEntry);
  chmodSync(join(outdir, "deno.mjs"), 0o755);
  const main = join(outdir, "main.cjs");
  await build({ ...script, entryPoints: [join(root, "src/cli/main.ts")], format: "cjs", outfile: main, define: { "import.meta.url": "__reachModuleUrl" } });
  // Every dynamic import() goes through the loader's `__reachImport` (a string or a computed specifier; not the
  // words "import()" inside a message). The shebang goes: the loader is the bin.
  let imports = 0;
  const source = readFileSync(main, "utf8").replace(/^#!.*/, "").replace(/(?<![\w$.'"`])import\((?!\))/g, () => (imports++, "__reachImport("));
  if (imports === 0) throw new Error("bundle-cli: no dynamic import found in main.cjs; the loader wiring is out of date");
  // The loader reads the script as latin1 (faster than UTF-8): esbuild's default ASCII charset escapes every other
  // character in code, so that is exact. Only comments keep UTF-8 (the unminified bundle's), and there it is harmless.
  if (minify && /[\u0080-\uffff]/.test(source)) throw new Error("bundle-cli: main.cjs is not ASCII; the loader reads it as latin1");
  writeFileSync(main, `(function (require, module, exports, __filename, __dirname, __reachModuleUrl, __reachImport) {${source}\n})`);
  copyFileSync(join(root, "scripts/bundle/script-loader.cjs"), join(outdir, "main.js"));
  chmodSync(join(outdir, "main.js"), 0o755);
  if (train) trainCodeCache(outdir);
}

/**
 * The Deno entry, `deno.mjs`. Deno's own code cache of an ES module holds the code V8 compiled before the module ran,
 * not the functions a command then calls, which every start compiles again: measured with scripts/bench-deno-start.ts,
 * `run packs/hello` from the ES modules cost ~1.5× the CPU it costs from `main.cjs` with a cache trained on Deno. The
 * entry takes the script (through `main.js`, as Node does) when the build trained a cache for this Deno's V8, and the ES
 * modules otherwise (another Deno than the build's: its V8 would reject the cache, and the script compiled without
 * one costs more than the modules). Both specifiers are computed, so that Deno does not load the path not taken.
 * First it asks for what every command needs, reading its own folder and the environment: run without them, loading
 * the CLI would stop on Deno's refusal with a stack trace; this says which flags to give instead (exit 2, with the
 * CLI's error document on stdout for `--json`). In a terminal Deno asks the user once for each.
 */
const denoEntry = `#!/usr/bin/env -S deno run -A
// The Deno entry (scripts/bundle/bundle.mjs: why it checks permissions first, and why two ways).
const need = [{ name: "read", path: new URL("./", import.meta.url) }, { name: "env" }];
const missing = need.filter((p) => Deno.permissions.querySync(p).state !== "granted" && Deno.permissions.requestSync(p).state !== "granted").map((p) => \`--allow-\${p.name}\`);
if (missing.length > 0) {
  const message = \`Deno did not grant \${missing.join(" and ")}, which every reach-wasm command needs; run it with -A (deno run -A \${decodeURIComponent(new URL(import.meta.url).pathname)} …), or with \${missing.join(" ")} at least (--allow-write to write runs, --allow-net and --allow-run for servers and MCP tools)\`;
  const document = { specVersion: "1.0.0", error: { code: "PROTO_INVALID_ARGUMENT", message, details: { missing }, recoverable: false, category: "PROTOCOL", severity: "FATAL", retryable: false } };
  if (Deno.args.slice(0, Deno.args.includes("--") ? Deno.args.indexOf("--") : undefined).includes("--json")) console.log(JSON.stringify(document));
  console.error(\`reach-wasm: PROTO_INVALID_ARGUMENT: \${message}\`);
  Deno.exit(2);
}
const cache = new URL(\`./main.cjs.deno-\${Deno.version.v8}.cache\`, import.meta.url);
let trained = false;
try {
  trained = Deno.statSync(cache).isFile;
} catch {
  // no cache for this V8: the ES modules
}
if (!trained && Deno.env.get("REACH_WASM_DEBUG") === "1") console.error(\`reach-wasm: no code cache for V8 \${Deno.version.v8}: the ES modules\`);
const entry = trained ? "./main.js" : "./deno-modules.mjs";
await import(entry);
`;

/**
 * The training runs, on Node and (where the `deno` package is installed) on Deno: each compiles what a short run
 * needs, and the loader writes that runtime's code cache as the process exits. A first run fills the disk caches
 * (fuel, validated documents), so that the training run takes the path of a warm run.
 */
function trainCodeCache(outdir) {
  const deno = join(root, "node_modules/.bin/deno");
  const runtimes = [["Node", process.execPath, []], ...(existsSync(deno) ? [["Deno", deno, ["run", "-A"]]] : [])];
  for (const [name, cmd, args] of runtimes) {
    const out = mkdtempSync(join(tmpdir(), "reach-bundle-"));
    const hello = [...args, join(outdir, "main.js"), "run", join(root, "packs/hello"), "--out", out, "--quiet"];
    spawnSync(cmd, hello, { stdio: "ignore" });
    const trained = spawnSync(cmd, hello, { env: { ...process.env, REACH_WASM_WRITE_CODE_CACHE: "1" }, stdio: ["ignore", "ignore", "inherit"] });
    rmSync(out, { recursive: true, force: true });
    // Without a cache the CLI only compiles at start-up (Deno runs the ES modules): say so, and build on.
    if (trained.status !== 0) {
      for (const f of readdirSync(outdir)) if (name === "Node" ? f === "main.cjs.cache" : /^main\.cjs\.deno-.*\.cache$/.test(f)) rmSync(join(outdir, f), { force: true });
      process.stderr.write(`bundle-cli: warning: the training run of packs/hello on ${name} exited ${trained.status}; the CLI is built without its code cache there\n`);
    }
  }
}
