// Build the example component tool (issue 3 "Example tools"; src/sandbox/component/README.md).
//
//   npm ci && node build.mjs               componentize src/tool.js -> build/tool.component.wasm, record its
//                                          sha256 in build/SHA256SUMS, then transpile (below)
//   node build.mjs --transpile             transpile the committed component again (no componentize)
//   node build.mjs --check                 verify build/SHA256SUMS and that transpiling the committed component
//                                          reproduces the committed glue byte for byte (exit 1 otherwise)
//
// componentize-js output is NOT byte-reproducible (wizer snapshots differ between runs), so the component is
// committed with its hash and only rebuilt on purpose. The jco transpile step IS reproducible: the glue in
// src/sandbox/component/generated/ is derived from the committed component and checked by `--check`.
//
// The glue is written as a TypeScript file (`// @ts-nocheck`) so that tsc copies it to dist/ and Node and Deno
// load the same source. The big core modules are NOT copied next to it: they are embedded in the component, and
// the runner extracts them from the component bytes it is given (so the code that runs is the code the pack
// declared). Core modules that jco generates itself (small trampolines) are inlined as base64.
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const componentPath = join(here, "build", "tool.component.wasm");
const sumsPath = join(here, "build", "SHA256SUMS");
const gluePath = join(root, "src", "sandbox", "component", "generated", "text-stats.ts");

/** WASI features the example keeps: console.* (stdio), Date (clocks), Math.random / crypto (random). */
const DISABLED_FEATURES = ["http", "fetch-event"];
const JCO_FLAGS = [
  "--instantiation", "async",
  "--no-wasi-shim", // WASI imports stay bare `wasi:*` specifiers; the runner supplies every one of them
  "--no-nodejs-compat",
  "--valid-lifting-optimization",
  "--no-typescript",
  "--name", "tool",
  "--quiet",
];

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

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
  mkdirSync(dirname(componentPath), { recursive: true });
  writeFileSync(componentPath, component);
  writeFileSync(sumsPath, `${sha256(component)}  tool.component.wasm\n`);
  console.error(`componentize: ${component.length} bytes, guest imports ${JSON.stringify(imports)}`);
}

async function transpile() {
  const { execFileSync } = await import("node:child_process");
  const component = readFileSync(componentPath);
  const out = mkdtempSync(join(tmpdir(), "reach-jco-"));
  try {
    execFileSync(join(here, "node_modules", ".bin", "jco"), ["transpile", componentPath, "-o", out, ...JCO_FLAGS], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, JCO_DEBUG: "" },
    });
    const embedded = embeddedCoreModules(component);
    const files = readdirSync(out).filter((f) => f.endsWith(".wasm")).sort((a, b) => coreIndex(a) - coreIndex(b));
    const table = {};
    for (const f of files) {
      const bytes = readFileSync(join(out, f));
      const i = embedded.findIndex((m) => Buffer.compare(m, bytes) === 0);
      table[f] = i >= 0 ? { embedded: i } : { base64: bytes.toString("base64") };
    }
    let glue = readFileSync(join(out, "tool.js"), "utf8");
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
      "//   (cd wasm-tools/component && npm ci && node build.mjs --transpile)",
      `// from build/tool.component.wasm (sha256 ${sha256(component)})`,
      `// with @bytecodealliance/jco ${pkgVersion("@bytecodealliance/jco")} transpile ${JCO_FLAGS.join(" ")}`,
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

function coreIndex(name) {
  const m = /^tool\.core(\d*)\.wasm$/.exec(name);
  if (!m) throw new Error(`unexpected jco output ${name}`);
  return m[1] === "" ? 1 : Number(m[1]);
}

/** The import specifiers the glue destructures from `imports[...]`. */
function importNames(glue) {
  return [...new Set([...glue.matchAll(/= imports\['([^']+)'\];/g)].map((m) => m[1]))].sort();
}

const mode = process.argv[2] ?? "--build";
if (mode === "--build") {
  await componentize();
  const glue = await transpile();
  mkdirSync(dirname(gluePath), { recursive: true });
  writeFileSync(gluePath, glue);
  console.error(`glue: ${gluePath} (${glue.length} bytes)`);
} else if (mode === "--transpile") {
  const glue = await transpile();
  mkdirSync(dirname(gluePath), { recursive: true });
  writeFileSync(gluePath, glue);
  console.error(`glue: ${gluePath} (${glue.length} bytes)`);
} else if (mode === "--check") {
  const line = readFileSync(sumsPath, "utf8").trim();
  const actual = sha256(readFileSync(componentPath));
  if (line !== `${actual}  tool.component.wasm`) {
    console.error(`SHA256SUMS mismatch: recorded "${line}", component is ${actual}`);
    process.exit(1);
  }
  const glue = await transpile();
  if (glue !== readFileSync(gluePath, "utf8")) {
    console.error(`${gluePath} differs from a fresh transpile of the committed component; run node build.mjs --transpile`);
    process.exit(1);
  }
  console.error("ok: component hash and glue match");
} else {
  console.error("usage: node build.mjs [--build | --transpile | --check]");
  process.exit(2);
}
