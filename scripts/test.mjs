#!/usr/bin/env node
// `npm test`: every half runs, whatever happened before it, and every verdict is printed at the end.
// A `&&` chain would skip the Deno half after a Node failure, hiding whether the runtimes still agree.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { performance } from "node:perf_hooks";

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
  const r = spawnSync(cmd, args, { stdio: "inherit" });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  results.push({ name, ok: r.status === 0, detail: r.status === null ? `killed by ${r.signal}` : `exit ${r.status}`, seconds });
}
process.stderr.write("\n== npm test: verdicts\n");
for (const r of results) process.stderr.write(`  ${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(22)} ${r.detail.padEnd(10)} ${r.seconds} s\n`);
const failed = results.filter((r) => !r.ok);
process.stderr.write(failed.length === 0 ? "== all passed\n" : `== ${failed.length} of ${results.length} failed\n`);
process.exit(failed.length === 0 ? 0 : 1);
