// Build the example component tools (issue 3 "Example tools"; src/sandbox/component/README.md).
//
// text-stats (componentize-js, src/tool.js):
//   npm ci && node build.mjs               componentize src/tool.js -> build/tool.component.wasm, record its
//                                          sha256 in build/SHA256SUMS, then transpile (below)
//   node build.mjs --transpile             transpile the committed component again (no componentize)
// c-wordcount (C without libc, ../c-component/wordcount.c):
//   node build.mjs --c-component           clang -> ../c-component/build/wordcount.core.wasm (build-core.sh), jco
//                                          componentEmbed + componentNew -> wordcount.component.wasm, both sha256s
//                                          in ../c-component/build/SHA256SUMS, then transpile
// Both:
//   node build.mjs --check                 verify both SHA256SUMS, that transpiling each committed component
//                                          reproduces its committed glue byte for byte, and that embedding the
//                                          committed C core module reproduces the committed C component (exit 1
//                                          otherwise)
//
// componentize-js output is NOT byte-reproducible (wizer snapshots differ between runs), so that component is
// committed with its hash and only rebuilt on purpose. The C component IS reproducible (clang with fixed flags, then
// jco's wit-component, which is deterministic), and so is the jco transpile step: the glue in
// src/sandbox/component/generated/ is derived from the committed components and checked by `--check`.
//
// The glue is written as a TypeScript file (`// @ts-nocheck`) so that tsc copies it to dist/ and Node and Deno
// load the same source. The guest core modules are NOT copied next to it: they are embedded in the component, and
// the runner extracts them from the component bytes it is given (so the code that runs is the code the pack
// declared). Core modules that jco generates itself (small trampolines) are inlined as base64.
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const generated = join(root, "src", "sandbox", "component", "generated");
/** The componentize-js example. */
const TEXT_STATS = {
  name: "tool",
  dir: join(here, "build"),
  file: "tool.component.wasm",
  from: "build/tool.component.wasm",
  glue: join(generated, "text-stats.ts"),
  regenerate: "(cd wasm-tools/component && npm ci && node build.mjs --transpile)",
};
/** The C example (no JS engine): its core module is built by ../c-component/build-core.sh. */
const C_WORDCOUNT = {
  name: "c-wordcount",
  dir: join(here, "..", "c-component", "build"),
  file: "wordcount.component.wasm",
  core: "wordcount.core.wasm",
  from: "wasm-tools/c-component/build/wordcount.component.wasm",
  glue: join(generated, "c-wordcount.ts"),
  regenerate: "(cd wasm-tools/component && npm ci && node build.mjs --c-component)",
};

/** WASI features the example keeps: console.* (stdio), Date (clocks), Math.random / crypto (random). */
const DISABLED_FEATURES = ["http", "fetch-event"];
/** jco transpile flags; `--name <target name>` is appended per component. */
const JCO_FLAGS = [
  "--instantiation", "async",
  "--no-wasi-shim", // WASI imports stay bare `wasi:*` specifiers; the runner supplies every one of them
  "--no-nodejs-compat",
  "--valid-lifting-optimization",
  "--no-typescript",
];
const jcoFlags = (target) => [...JCO_FLAGS, "--name", target.name, "--quiet"];

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const sumsLine = (bytes, file) => `${sha256(bytes)}  ${file}\n`;

function pkgVersion(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", ...name.split("/"), "package.json"), "utf8")).version;
}

/** The top-level core modules (section id 1) of a component, in order. */
function embeddedCoreModules(component) {
  let p = 8;
  const out = [];
  const leb = () => {
    let r = 0, s = 0, b;
    do { b = component[p++]; r += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80);
    return r;
  };
  while (p < component.length) {
    const id = component[p++];
    const len = leb();
    if (id === 1) out.push(component.subarray(p, p + len));
    p += len;
  }
  return out;
}

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

async function transpile(target) {
  const { execFileSync } = await import("node:child_process");
  const componentPath = join(target.dir, target.file);
  const component = readFileSync(componentPath);
  const out = mkdtempSync(join(tmpdir(), "reach-jco-"));
  try {
    execFileSync(join(here, "node_modules", ".bin", "jco"), ["transpile", componentPath, "-o", out, ...jcoFlags(target)], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, JCO_DEBUG: "" },
    });
    const embedded = embeddedCoreModules(component);
    const files = readdirSync(out)
      .filter((f) => f.endsWith(".wasm"))
      .sort((a, b) => coreIndex(target, a) - coreIndex(target, b));
    const table = {};
    for (const f of files) {
      const bytes = readFileSync(join(out, f));
      const i = embedded.findIndex((m) => Buffer.compare(m, bytes) === 0);
      table[f] = i >= 0 ? { embedded: i } : { base64: bytes.toString("base64") };
    }
    let glue = readFileSync(join(out, `${target.name}.js`), "utf8");
    // The glue reads process.env.JCO_DEBUG for debug logging: an environment read (a permission prompt on Deno and
    // a nondeterministic input), so it is compiled out here. Exactly one occurrence is expected.
    const debugRead = "globalThis?.process?.env?.JCO_DEBUG";
    if (glue.split(debugRead).length !== 2) throw new Error(`expected exactly one ${debugRead} in the jco glue`);
    glue = glue.replace(debugRead, "false");
    for (const banned of ["preview2-shim", "node:", "process.", "require("]) {
      if (glue.includes(banned)) console.error(`warning: the glue mentions ${JSON.stringify(banned)}`);
    }
    const header = [
      "/* eslint-disable */",
      "// @ts-nocheck -- generated JavaScript (jco transpile), not type-checked",
      "// GENERATED by wasm-tools/component/build.mjs -- do not edit. Regenerate with",
      `//   ${target.regenerate}`,
      `// from ${target.from} (sha256 ${sha256(component)})`,
      `// with @bytecodealliance/jco ${pkgVersion("@bytecodealliance/jco")} transpile ${jcoFlags(target).join(" ")}`,
      "// (its one read of the JCO_DEBUG environment variable is replaced by `false`).",
      "",
      "/** sha256 (hex) of the component this glue was generated from. */",
      `export const COMPONENT_SHA256 = ${JSON.stringify(sha256(component))};`,
      "/** Where each core module comes from: the n-th core module embedded in the component, or inline base64. */",
      `export const CORE_MODULES = ${JSON.stringify(table, null, 2)};`,
      "/** The component's imports as the glue names them (versions stripped). */",
      `export const IMPORT_NAMES = ${JSON.stringify(importNames(glue), null, 2)};`,
      "",
    ].join("\n");
    return header + glue.replace(/^"use components";\n/, "");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function coreIndex(target, file) {
  const m = new RegExp(`^${target.name}\\.core(\\d*)\\.wasm$`).exec(file);
  if (!m) throw new Error(`unexpected jco output ${file}`);
  return m[1] === "" ? 1 : Number(m[1]);
}

/** The import specifiers the glue destructures from `imports[...]`. */
function importNames(glue) {
  return [...new Set([...glue.matchAll(/= imports\['([^']+)'\];/g)].map((m) => m[1]))].sort();
}

async function writeGlue(target) {
  const glue = await transpile(target);
  mkdirSync(dirname(target.glue), { recursive: true });
  writeFileSync(target.glue, glue);
  console.error(`glue: ${target.glue} (${glue.length} bytes)`);
}

/** Problems with one target's committed files: SHA256SUMS, glue, and (C) the component made from the core. */
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
  if ((await transpile(target)) !== readFileSync(target.glue, "utf8")) {
    problems.push(`${target.glue} differs from a fresh transpile of the committed component; run ${target.regenerate}`);
  }
  return problems;
}

const mode = process.argv[2] ?? "--build";
if (mode === "--build") {
  await componentize();
  await writeGlue(TEXT_STATS);
} else if (mode === "--transpile") {
  await writeGlue(TEXT_STATS);
} else if (mode === "--c-component") {
  await buildCComponent();
  await writeGlue(C_WORDCOUNT);
} else if (mode === "--check") {
  const problems = [...(await check(TEXT_STATS)), ...(await check(C_WORDCOUNT))];
  for (const p of problems) console.error(p);
  if (problems.length > 0) process.exit(1);
  console.error("ok: component hashes, the C component and the glue match");
} else {
  console.error("usage: node build.mjs [--build | --transpile | --c-component | --check]");
  process.exit(2);
}
