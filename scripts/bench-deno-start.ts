/**
 * Start-up cost of the CLI on Deno: `reach-wasm run packs/hello` as a whole process, in CPU time (user + system,
 * every thread), against `deno eval 0`, measured interleaved in the same run (the machine is shared: load moves both
 * sides alike). Set side by side: the Deno entry (`dist/cli/deno.mjs`, built by `npm run build`: the CLI script with
 * the code cache the build trained on this Deno), the ES modules it takes on a Deno with no cache
 * (`dist/cli/deno-modules.mjs`), the TypeScript sources (`src/cli/main.ts`), the Node bin run by Deno
 * (`dist/cli/main.js`: the same script and cache as the entry), and for reference Node's bin against
 * `node -e 0`, with and without NODE_EXTRA_CA_CERTS (where it is set, Node parses that CA bundle at every start, ~40 ms
 * that `node -e 0` pays too: it shrinks Node's ratio). Each prints its run hash, which must be the same everywhere.
 * Target: the Deno entry ≤ 2.5× `deno eval 0`. The load average is printed before and after (a shared machine).
 * Run with `deno run -A scripts/bench-deno-start.ts` (or vite-node); `REACH_BENCH_SMOKE=1` runs 2 rounds instead of
 * 12 (CI). Linux only: a child's CPU time is read from /proc.
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { n } from "./bench/smoke.ts";
import { cpuOf, mean } from "./bench/startup.ts";

const root = new URL("../", import.meta.url).pathname;
const rounds = n(12, 2);
const deno = join(root, "node_modules/.bin/deno");
const node = process.env["REACH_BENCH_NODE"] ?? "node";
const out = mkdtempSync(join(tmpdir(), "reach-bench-deno-"));
const hello = ["run", "packs/hello", "--out", out, "--quiet"];

// through env(1): Deno's child processes inherit every variable of the parent that `env` does not override
const noCa = (args: string[]): string[] => ["-u", "NODE_EXTRA_CA_CERTS", node, ...args];
const sides: [string, string, string[]][] = [
  ["deno eval 0", deno, ["eval", "0"]],
  ["deno run -A dist/cli/deno.mjs (the Deno entry)", deno, ["run", "-A", "dist/cli/deno.mjs", ...hello]],
  ["deno run -A dist/cli/deno-modules.mjs (no cache: ES modules)", deno, ["run", "-A", "dist/cli/deno-modules.mjs", ...hello]],
  ["deno run -A src/cli/main.ts (the sources)", deno, ["run", "-A", "src/cli/main.ts", ...hello]],
  ["deno run -A dist/cli/main.js (the Node bin)", deno, ["run", "-A", "dist/cli/main.js", ...hello]],
  ["node -e 0", node, ["-e", "0"]],
  ["node dist/cli/main.js (the Node bin)", node, ["dist/cli/main.js", ...hello]],
  ["node -e 0, without NODE_EXTRA_CA_CERTS", "env", noCa(["-e", "0"])],
  ["node dist/cli/main.js, without NODE_EXTRA_CA_CERTS", "env", noCa(["dist/cli/main.js", ...hello])],
];
/** The side each side is set against: `deno eval 0`, or `node -e 0` in the same environment. */
const baseOf = (k: number): number => (k >= 7 ? 7 : k >= 5 ? 5 : 0);
const load = (): string => (existsSync("/proc/loadavg") ? readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") : "unknown");

/** The run hash `args` prints with --json (every side must print the same). */
function runHash(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, [...args, "--json"], { cwd: root, encoding: "utf8" });
  return (JSON.parse(r.stdout) as { runHash?: string }).runHash ?? `none (exit ${r.status})`;
}

if (!existsSync("/proc/self/stat")) {
  console.log("bench-deno-start: CPU time of child processes is read from /proc; skipped on this system");
} else if (!existsSync(join(root, "dist/cli/deno.mjs"))) {
  console.log("bench-deno-start: dist/cli/deno.mjs is missing; run `npm run build` first");
  process.exitCode = 1;
} else {
  const before = load();
  for (const [, cmd, args] of sides) cpuOf(cmd, args); // fills the fuel cache and Deno's code cache
  const cpu = sides.map((): number[] => []);
  for (let i = 0; i < rounds; i++) sides.forEach(([, cmd, args], k) => cpu[k]!.push(cpuOf(cmd, args)));
  const ms = cpu.map(mean); // a mean: the CPU time of a child is counted in 10 ms clock ticks
  console.log(`bench-deno-start: load average ${before} before, ${load()} after`);
  for (const [k, [label, cmd, args]] of sides.entries()) {
    const base = ms[baseOf(k)]!;
    const hash = baseOf(k) === k || k === 8 ? "" : `, run hash ${runHash(cmd, args).slice(0, 16)}…`;
    console.log(`bench-deno-start: ${label.padEnd(62)} ${ms[k]!.toFixed(0).padStart(4)} ms CPU, ${(ms[k]! / base).toFixed(2)}× ${sides[baseOf(k)]![0].replace(/,.*/, "")}${hash}`);
  }
  const ratio = ms[1]! / ms[0]!;
  console.log(`bench-deno-start: the Deno entry ${ratio.toFixed(2)}× \`deno eval 0\` (target ≤ 2.5×: ${ratio <= 2.5 ? "met" : "MISSED"}), ` +
    `the ES modules ${(ms[2]! / ms[1]!).toFixed(2)}× and the sources ${(ms[3]! / ms[1]!).toFixed(2)}× the entry's CPU; ${rounds} interleaved rounds`);
}
rmSync(out, { recursive: true, force: true });
