#!/usr/bin/env node
// Run the official WASI preview1 test suite (github.com/WebAssembly/wasi-testsuite) through reach-wasm's shim,
// or through node:wasi for comparison, and print passed/failed per language with the failing names.
//
//   npm run build
//   node scripts/wasi-testsuite.mjs /path/to/wasi-testsuite [--runtime reach|node] [--only NAME]... [--verbose] [--json]
//   WASI_TESTSUITE=/path/to/wasi-testsuite node scripts/wasi-testsuite.mjs
//
// The suite is never committed here: check it out yourself. Its prebuilt binaries live on the branch
// `prod/testsuite-base` (tests/<lang>/testsuite/wasm32-wasip1/*.wasm); a checkout of main needs them built first.
// Each test follows the suite's own spec (`<name>.json` beside the module; absent means "no args, exit 0"):
// `args`, `env`, `root` (preopened as "/"), `exit_code` (default 0), `stdout`/`stderr` (the first N characters
// must match, as the suite's runner reads exactly that many). Every test gets a fresh copy of its root folder
// (symbolic links kept as links), so a run never changes the checkout. Not part of `npm test`.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const LANGUAGES = ["c", "rust", "assemblyscript"];
const TIMEOUT_MS = 120_000; // generous: a test that hangs is a failure, never a stuck script
const here = dirname(fileURLToPath(import.meta.url));
const cli = resolve(here, "../dist/cli/main.js");

function usage(message) {
  process.stderr.write(`wasi-testsuite: ${message}\n` +
    "usage: node scripts/wasi-testsuite.mjs <suite-dir> [--runtime reach|node] [--only NAME]... [--verbose] [--json]\n" +
    "       (or set WASI_TESTSUITE=<suite-dir>; check out the branch prod/testsuite-base for prebuilt modules)\n");
  process.exit(2);
}

function parseArgs(argv) {
  const o = { suite: process.env.WASI_TESTSUITE ?? "", runtime: "reach", only: [], verbose: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runtime") o.runtime = argv[++i] ?? usage("--runtime needs reach or node");
    else if (a === "--only") o.only.push(argv[++i] ?? usage("--only needs a test name"));
    else if (a === "--verbose") o.verbose = true;
    else if (a === "--json") o.json = true;
    else if (a.startsWith("-")) usage(`unknown option ${a}`);
    else o.suite = a;
  }
  if (o.suite === "") usage("the suite directory is missing");
  if (o.runtime !== "reach" && o.runtime !== "node") usage(`--runtime must be reach or node, got ${o.runtime}`);
  return o;
}

/** The folder holding a language's preview1 modules, in the newer or the older layout. */
function testDir(suite, lang) {
  for (const d of [join(suite, "tests", lang, "testsuite", "wasm32-wasip1"), join(suite, "tests", lang, "testsuite")]) {
    if (existsSync(d) && readdirSync(d).some((f) => f.endsWith(".wasm"))) return d;
  }
  return null;
}

function readSpec(wasm) {
  const file = wasm.replace(/\.wasm$/, ".json");
  const spec = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  if (spec.operations !== undefined) throw new Error("operations-style specs are not preview1 command tests");
  return {
    args: spec.args ?? [],
    env: spec.env ?? {},
    root: spec.root === undefined ? null : join(dirname(wasm), spec.root),
    exitCode: spec.exit_code ?? 0,
    stdout: spec.stdout ?? null,
    stderr: spec.stderr ?? null,
  };
}

const NODE_RUNNER = `
import { readFileSync } from "node:fs";
import { WASI } from "node:wasi";
const [wasm, specJson] = process.argv.slice(2);
const spec = JSON.parse(specJson);
const wasi = new WASI({ version: "preview1", args: [wasm, ...spec.args], env: spec.env, returnOnExit: true,
  preopens: spec.root === null ? {} : { "/": spec.root } });
const module = await WebAssembly.compile(readFileSync(wasm));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
`;

function command(runtime, wasm, spec, root, nodeRunner) {
  if (runtime === "node") {
    return [process.execPath, ["--no-warnings", nodeRunner, wasm, JSON.stringify({ ...spec, root })]];
  }
  const argv = [cli, "wasi", wasm];
  for (const [k, v] of Object.entries(spec.env)) argv.push("--env", `${k}=${v}`);
  if (root !== null) argv.push("--dir", `${root}::/`);
  argv.push("--", ...spec.args);
  return [process.execPath, argv];
}

function runOne(runtime, wasm, nodeRunner) {
  const spec = readSpec(wasm);
  let work = null;
  let root = null;
  if (spec.root !== null) {
    work = mkdtempSync(join(tmpdir(), "wasi-testsuite-"));
    root = join(work, "root");
    cpSync(spec.root, root, { recursive: true, verbatimSymlinks: true });
  }
  try {
    const [cmd, argv] = command(runtime, wasm, spec, root, nodeRunner);
    const r = spawnSync(cmd, argv, { encoding: "utf8", timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    const problems = [];
    if (r.error !== undefined) problems.push(`did not finish: ${r.error.message}`);
    else if (r.status !== spec.exitCode) problems.push(`exit ${r.status ?? r.signal}, expected ${spec.exitCode}`);
    if (spec.stdout !== null && r.stdout.slice(0, spec.stdout.length) !== spec.stdout) problems.push(`stdout ${JSON.stringify(r.stdout.slice(0, 200))}, expected ${JSON.stringify(spec.stdout)}`);
    if (spec.stderr !== null && r.stderr.slice(0, spec.stderr.length) !== spec.stderr) problems.push(`stderr differs`);
    return { ok: problems.length === 0, problems, stderr: r.stderr ?? "" };
  } finally {
    if (work !== null) rmSync(work, { recursive: true, force: true });
  }
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.runtime === "reach" && !existsSync(cli)) usage(`${cli} is missing; run "npm run build" first`);
  const scratch = mkdtempSync(join(tmpdir(), "wasi-testsuite-runner-"));
  const nodeRunner = join(scratch, "node-wasi.mjs");
  writeFileSync(nodeRunner, NODE_RUNNER);
  const report = { runtime: o.runtime, languages: {} };
  try {
    for (const lang of LANGUAGES) {
      const dir = testDir(o.suite, lang);
      if (dir === null) continue;
      const names = readdirSync(dir).filter((f) => f.endsWith(".wasm")).sort();
      const res = { passed: 0, failed: 0, total: 0, failures: [] };
      for (const f of names) {
        const name = basename(f, ".wasm");
        if (o.only.length > 0 && !o.only.includes(name)) continue;
        const r = runOne(o.runtime, join(dir, f), nodeRunner);
        res.total++;
        if (r.ok) res.passed++;
        else {
          res.failed++;
          res.failures.push({ name, problems: r.problems });
          if (o.verbose) process.stderr.write(`FAIL ${lang}/${name}: ${r.problems.join("; ")}\n${r.stderr.trimEnd()}\n`);
        }
      }
      report.languages[lang] = res;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const all = Object.values(report.languages);
  if (all.length === 0) usage(`no tests under ${o.suite}/tests/<c|rust|assemblyscript>/testsuite[/wasm32-wasip1]/*.wasm`);
  report.passed = all.reduce((s, r) => s + r.passed, 0);
  report.total = all.reduce((s, r) => s + r.total, 0);
  if (o.json) {
    process.stdout.write(JSON.stringify(report) + "\n");
  } else {
    for (const [lang, r] of Object.entries(report.languages)) {
      process.stdout.write(`${lang.padEnd(15)} ${r.passed}/${r.total} passed\n`);
      for (const f of r.failures) process.stdout.write(`  FAIL ${f.name}: ${f.problems.join("; ")}\n`);
    }
    process.stdout.write(`total (${o.runtime}) ${report.passed}/${report.total} passed\n`);
  }
  process.exit(report.passed === report.total ? 0 : 1);
}

main();
