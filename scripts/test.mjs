#!/usr/bin/env node
// `npm test`: every half runs, whatever happened before it, and every verdict is printed at the end.
// A `&&` chain would skip the Deno half after a Node failure, hiding whether the runtimes still agree.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { performance } from "node:perf_hooks";

// No test reads the user's home or settings (tests/_setup-home.ts does the same for every vitest file): a HOME and XDG
// config and data folders of this run, the tests' own cache folder, none of the user's REACH_WASM_* settings. Deno's
// and npm's own caches stay where they were (what they hold is fetched once, not the user's reach-wasm state).
const home = mkdtempSync(join(tmpdir(), "reach-test-home-"));
const cache = join(process.cwd(), "node_modules", ".cache", "reach-wasm-tests", "cache");
mkdirSync(cache, { recursive: true });
const userCache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("REACH_WASM_") || /^REACH_WASM_(TEST_|DEBUG$)/.test(k)));
Object.assign(env, {
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  XDG_CACHE_HOME: cache,
  DENO_DIR: process.env.DENO_DIR || join(userCache, "deno"),
  npm_config_cache: process.env.npm_config_cache || join(homedir(), ".npm"),
});

// typecheck, lint and the Deno half are one process each, single-threaded for the most part: they run side by side
// (on the 2-core CI machine ~55 s instead of ~105 s one after another), each one's output held and printed whole when
// it ends. vitest runs after them, alone (it runs two test files at a time itself), its output live.
const together = [
  ["typecheck", "npm", ["run", "--silent", "typecheck"]],
  ["lint", "npm", ["run", "--silent", "lint"]],
  ["deno (check + test)", "npm", ["run", "--silent", "test:deno"]],
];
const alone = [["node (vitest)", "npm", ["run", "--silent", "test:node"]]];
const order = ["typecheck", "lint", "node (vitest)", "deno (check + test)"];

/** Run a step; its output is held (and printed whole at its end) unless `live`. Resolves with its verdict. */
function run([name, cmd, args], live) {
  const t0 = performance.now();
  if (live) process.stderr.write(`\n== npm test: ${name}\n`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: live ? "inherit" : ["ignore", "pipe", "pipe"], env });
    const held = [];
    child.stdout?.on("data", (d) => held.push(d));
    child.stderr?.on("data", (d) => held.push(d));
    let ended = false;
    const done = (status, signal, error) => {
      if (ended) return; // an "error" can be followed by "close"
      ended = true;
      const seconds = ((performance.now() - t0) / 1000).toFixed(1);
      if (!live) process.stderr.write(`\n== npm test: ${name} (${seconds} s)\n${Buffer.concat(held).toString("utf8")}`);
      const detail = error !== undefined ? error.message : status === null ? `killed by ${signal}` : `exit ${status}`;
      resolve({ name, ok: status === 0, detail, seconds });
    };
    child.on("error", (error) => done(null, null, error));
    child.on("close", (status, signal) => done(status, signal));
  });
}

const results = [...(await Promise.all(together.map((step) => run(step, false))))];
for (const step of alone) results.push(await run(step, true));
results.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
rmSync(home, { recursive: true, force: true });
process.stderr.write("\n== npm test: verdicts\n");
for (const r of results) process.stderr.write(`  ${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(22)} ${r.detail.padEnd(10)} ${r.seconds} s\n`);
const failed = results.filter((r) => !r.ok);
process.stderr.write(failed.length === 0 ? "== all passed\n" : `== ${failed.length} of ${results.length} failed\n`);
process.exit(failed.length === 0 ? 0 : 1);
