#!/usr/bin/env node
// The `reach-wasm` bin (copied to dist/cli/main.js by scripts/bundle/bundle.mjs; dist/cli/package.json makes it
// CommonJS). It runs the CLI bundle, one CommonJS script (dist/cli/main.cjs), with the V8 code cache the build made
// for it: `main.cjs.cache` on Node, `main.cjs.deno-<V8 version>.cache` on Deno (whose entry, dist/cli/deno.mjs, comes
// here when the build trained a cache for its V8). Measured on the 2-core CI machine: compiling the CLI's code, Node's
// ESM loader resolving its modules, and even an ES module entry file (Node then loads its ESM loader: ~10 ms) were
// most of a short run's start-up CPU; on Deno, whose own code cache of an ES module holds only the functions compiled
// before it runs, compiling the functions a run calls. The cache is part of the build, as trusted as the code beside
// it, and only read here; V8 checks it against the script's source and its own version and flags, and a cache it
// rejects (another Node version) only costs the compile it would have saved. REACH_WASM_WRITE_CODE_CACHE=1 (the
// build's training runs) writes it when the process exits; REACH_WASM_DEBUG=1 says on stderr whether V8 took it.
"use strict";
const { readFileSync, renameSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");
const { Script } = require("node:vm");

// WebAssembly runs on V8's baseline compiler (Liftoff) until a function has run a while, then a background thread
// compiles it again, optimized (TurboFan). For the short modules of a CLI run (the capsule's gzip writer, a small
// tool) that second compile cost more CPU than it saved: ~10 ms of a 40 KB capsule's 16 ms. A 100x budget lets a
// function that runs for tens of milliseconds still be optimized. Before anything compiles, and before the code cache
// is read: V8 checks the cache against its flags, and the build's training run goes through this file too.
try {
  require("node:v8").setFlagsFromString("--wasm-tiering-budget=180000000");
} catch {
  // not this V8: run with its defaults
}
const file = join(__dirname, "main.cjs");
const deno = globalThis.Deno;
const cacheFile = deno === undefined ? `${file}.cache` : `${file}.deno-${deno.version.v8}.cache`;
const write = process.env.REACH_WASM_WRITE_CODE_CACHE === "1";
let cachedData;
if (!write) {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // no cache: compile
  }
}
// The bundle is ASCII (esbuild escapes everything else), so latin1 reads it exactly, and faster than UTF-8; the
// build put the function wrapper into the file, so the source is used as read.
const source = readFileSync(file, "latin1");
const script = new Script(source, { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
if (process.env.REACH_WASM_DEBUG === "1") {
  process.stderr.write(`reach-wasm: code cache ${cachedData === undefined ? "absent" : script.cachedDataRejected === true ? "rejected" : "accepted"}\n`);
}
if (write) {
  process.on("exit", () => {
    writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
    renameSync(`${cacheFile}.tmp`, cacheFile);
  });
}
const module_ = { exports: {} };
script.runInThisContext()(createRequire(file), module_, module_.exports, file, __dirname, pathToFileURL(file).href, (specifier) => import(specifier));
