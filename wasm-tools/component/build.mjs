// Build the example component tools (src/sandbox/component/README.md; README "Example packs").
//
// text-stats (componentize-js, src/tool.js):
//   npm ci && node build.mjs               componentize src/tool.js -> build/tool.component.wasm, record its
//                                          sha256 in build/SHA256SUMS
// c-wordcount (C without libc, ../c-component/wordcount.c):
//   node build.mjs --c-component           clang -> ../c-component/build/wordcount.core.wasm (build-core.sh), jco
//                                          componentEmbed + componentNew -> wordcount.component.wasm, both sha256s
//                                          in ../c-component/build/SHA256SUMS
// Both:
//   node build.mjs --check                 verify both SHA256SUMS and that embedding the committed C core module
//                                          reproduces the committed C component (exit 1 otherwise)
//
// componentize-js output is NOT byte-reproducible (wizer snapshots differ between runs), so that component is
// committed with its hash and only rebuilt on purpose. The C component IS reproducible (clang with fixed flags, then
// jco's wit-component, which is deterministic).
//
// reach-wasm makes the JavaScript glue of any component itself when a pack loads (src/sandbox/component/
// transpile.ts, jco 1.17.0 in-process), so nothing here writes glue. After rebuilding a component, regenerate the
// glue fixtures the tests load (wasm-tools/component/glue/) from the repository root:
//   npx vite-node scripts/gen-component-glue.ts
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The componentize-js example. */
const TEXT_STATS = {
  name: "tool",
  dir: join(here, "build"),
  file: "tool.component.wasm",
  regenerate: "(cd wasm-tools/component && npm ci && node build.mjs)",
};
/** The C example (no JS engine): its core module is built by ../c-component/build-core.sh. */
const C_WORDCOUNT = {
  name: "c-wordcount",
  dir: join(here, "..", "c-component", "build"),
  file: "wordcount.component.wasm",
  core: "wordcount.core.wasm",
  regenerate: "(cd wasm-tools/component && npm ci && node build.mjs --c-component)",
};

/** WASI features the example keeps: console.* (stdio), Date (clocks), Math.random / crypto (random). */
const DISABLED_FEATURES = ["http", "fetch-event"];

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const sumsLine = (bytes, file) => `${sha256(bytes)}  ${file}\n`;

async function componentize() {
  const { _setPreopens } = await import("@bytecodealliance/preview2-shim/filesystem");
  const { componentize: build } = await import("@bytecodealliance/componentize-js");
  // componentize-js reads the source and WIT through the preview2-shim file system: preopen "/".
  _setPreopens({ "/": "/" });
  const { component, imports } = await build({
    sourcePath: join(here, "src", "tool.js"),
    witPath: join(here, "wit", "tool.wit"),
    worldName: "tool",
    disableFeatures: DISABLED_FEATURES,
    env: {},
  });
  mkdirSync(TEXT_STATS.dir, { recursive: true });
  writeFileSync(join(TEXT_STATS.dir, TEXT_STATS.file), component);
  writeFileSync(join(TEXT_STATS.dir, "SHA256SUMS"), sumsLine(component, TEXT_STATS.file));
  console.error(`componentize: ${component.length} bytes, guest imports ${JSON.stringify(imports)}`);
}

/**
 * The C component from a core module: jco's componentEmbed (the world's type information as a custom section)
 * and componentNew (wit-component: the component, its shim and fixup modules). Deterministic for a given jco.
 */
async function componentFromCore(core) {
  const { componentEmbed, componentNew } = await import("@bytecodealliance/jco");
  const embedded = await componentEmbed({
    binary: core,
    witSource: readFileSync(join(here, "wit", "tool.wit"), "utf8"),
    world: "tool",
  });
  return Buffer.from(await componentNew(embedded, []));
}

/** Build the C core module (../c-component/build-core.sh) and its component; record both hashes. */
async function buildCComponent() {
  const { execFileSync } = await import("node:child_process");
  const t = C_WORDCOUNT;
  mkdirSync(t.dir, { recursive: true });
  execFileSync("bash", [join(here, "..", "c-component", "build-core.sh"), join(t.dir, t.core)], { stdio: "inherit" });
  const core = readFileSync(join(t.dir, t.core));
  const component = await componentFromCore(core);
  writeFileSync(join(t.dir, t.file), component);
  writeFileSync(join(t.dir, "SHA256SUMS"), sumsLine(core, t.core) + sumsLine(component, t.file));
  console.error(`c-component: core ${core.length} bytes, component ${component.length} bytes`);
}

/** Problems with one target's committed files: SHA256SUMS and (C) the component made from the core. */
async function check(target) {
  const problems = [];
  const sums = readFileSync(join(target.dir, "SHA256SUMS"), "utf8");
  const files = target.core === undefined ? [target.file] : [target.core, target.file];
  const expected = files.map((f) => sumsLine(readFileSync(join(target.dir, f)), f)).join("");
  if (sums !== expected) problems.push(`${join(target.dir, "SHA256SUMS")} is "${sums.trim()}", the files hash to "${expected.trim()}"`);
  if (target.core !== undefined) {
    const rebuilt = await componentFromCore(readFileSync(join(target.dir, target.core)));
    if (Buffer.compare(rebuilt, readFileSync(join(target.dir, target.file))) !== 0) {
      problems.push(`${target.file} is not what jco makes of ${target.core}; run ${target.regenerate}`);
    }
  }
  return problems;
}

const mode = process.argv[2] ?? "--build";
if (mode === "--build") {
  await componentize();
} else if (mode === "--c-component") {
  await buildCComponent();
} else if (mode === "--check") {
  const problems = [...(await check(TEXT_STATS)), ...(await check(C_WORDCOUNT))];
  for (const p of problems) console.error(p);
  if (problems.length > 0) process.exit(1);
  console.error("ok: component hashes and the C component match");
} else {
  console.error("usage: node build.mjs [--build | --c-component | --check]");
  process.exit(2);
}
