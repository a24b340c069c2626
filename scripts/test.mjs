#!/usr/bin/env node
// `npm test`: every half runs, whatever happened before it, and every verdict is printed at the end.
// A `&&` chain would skip the Deno half after a Node failure, hiding whether the runtimes still agree.
import { spawnSync } from "node:child_process";
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

const steps = [
  ["typecheck", "npm", ["run", "--silent", "typecheck"]],
  ["lint", "npm", ["run", "--silent", "lint"]],
  ["node (vitest)", "npm", ["run", "--silent", "test:node"]],
  ["deno (check + test)", "npm", ["run", "--silent", "test:deno"]],
];

const results = [];
for (const [name, cmd, args] of steps) {
  const t0 = performance.now();
  process.stderr.write(`\n== npm test: ${name}\n`);
  const r = spawnSync(cmd, args, { stdio: "inherit", env });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  results.push({ name, ok: r.status === 0, detail: r.status === null ? `killed by ${r.signal}` : `exit ${r.status}`, seconds });
}
rmSync(home, { recursive: true, force: true });
process.stderr.write("\n== npm test: verdicts\n");
for (const r of results) process.stderr.write(`  ${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(22)} ${r.detail.padEnd(10)} ${r.seconds} s\n`);
const failed = results.filter((r) => !r.ok);
process.stderr.write(failed.length === 0 ? "== all passed\n" : `== ${failed.length} of ${results.length} failed\n`);
process.exit(failed.length === 0 ? 0 : 1);
