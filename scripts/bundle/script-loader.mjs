#!/usr/bin/env node
// The `reach-wasm` bin (copied to dist/cli/main.js by scripts/bundle/bundle.mjs). It runs the CLI bundle, one CommonJS
// script (dist/cli/main.cjs), with the V8 code cache the build made for it (dist/cli/main.cjs.cache): compiling the
// CLI's code, and Node's ESM loader resolving its modules, were most of a short run's start-up CPU. The cache is part
// of the build, as trusted as the code beside it, and only read here; V8 checks it against the script's source and
// its own version and flags, and a cache it rejects (another Node version) only costs the compile it would have saved.
// REACH_WASM_WRITE_CODE_CACHE=1 (the build's training run) writes it when the process exits; REACH_WASM_DEBUG=1 says
// on stderr whether V8 took it.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";
import { URL } from "node:url";
import { Script } from "node:vm";

const file = new URL("./main.cjs", import.meta.url);
const cacheFile = new URL("./main.cjs.cache", import.meta.url);
const write = process.env.REACH_WASM_WRITE_CODE_CACHE === "1";
let cachedData;
if (!write) {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // no cache: compile
  }
}
const source = readFileSync(file, "utf8");
const script = new Script(`(function (require, module, exports, __filename, __dirname, __reachModuleUrl, __reachImport) {${source}\n})`, { filename: file.pathname, ...(cachedData === undefined ? {} : { cachedData }) });
if (process.env.REACH_WASM_DEBUG === "1") {
  process.stderr.write(`reach-wasm: code cache ${cachedData === undefined ? "absent" : script.cachedDataRejected === true ? "rejected" : "accepted"}\n`);
}
if (write) {
  process.on("exit", () => {
    writeFileSync(`${cacheFile.pathname}.tmp`, script.createCachedData());
    renameSync(`${cacheFile.pathname}.tmp`, cacheFile);
  });
}
const module = { exports: {} };
script.runInThisContext()(createRequire(file), module, module.exports, file.pathname, new URL(".", file).pathname, file.href, (specifier) => import(specifier));
