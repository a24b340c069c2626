/**
 * Start-up cost of the CLI (README "Benchmarks"): `reach-wasm run packs/hello` as a whole process against the runtime
 * doing nothing (`node -e 0`, `deno eval 0`), in CPU time (user + system, every thread: the engine runs on its own
 * thread), interleaved, after one warm-up run that fills the fuel cache. Node runs its bin (`dist/cli/main.js`), Deno
 * its entry (`dist/cli/deno.mjs`; `scripts/bench-deno-start.ts` sets it against the sources). Also printed: the floor
 * any CLI that keeps its event loop free while a tool runs pays — the runtime plus one empty worker thread. CPU time of
 * a child is read from `/proc/self/stat` (cutime + cstime, in clock ticks of 10 ms: the mean over the rounds is what is
 * printed), so this part runs on Linux only.
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { n } from "./smoke.ts";

const root = new URL("../../", import.meta.url).pathname;
const TICK_MS = 10;

/**
 * CPU time of this process's waited-for children so far, in ms.
 * @returns user + system time, every thread, of the children waited for
 */
export function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS; // cutime, cstime (fields 16, 17 of the full line)
}

/**
 * Run a command to its end from the repository root and measure it.
 * @param cmd the executable
 * @param args its arguments
 * @param env its environment (default: this process's)
 * @returns its CPU time in ms
 * @throws Error when it exits other than 0
 */
export function cpuOf(cmd: string, args: string[], env?: Record<string, string | undefined>): number {
  const before = childrenCpuMs();
  const r = spawnSync(cmd, args, { cwd: root, stdio: "ignore", ...(env === undefined ? {} : { env }) });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
  return childrenCpuMs() - before;
}

/** The mean of some numbers. */
export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Measure and print the start-up ratios.
 * @param log where to print
 * @param rounds interleaved rounds
 * @returns the ratio on this runtime, or null where it cannot be measured
 */
export function benchStartup(log: (line: string) => void, rounds = n(12)): number | null {
  if (!existsSync("/proc/self/stat")) {
    log("startup: CPU time of child processes is read from /proc; skipped on this system");
    return null;
  }
  const deno = "Deno" in globalThis;
  const exe = deno ? (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath() : process.execPath;
  const out = "/tmp/reach-bench-startup";
  const cli = deno ? ["run", "-A", "dist/cli/deno.mjs", "run", "packs/hello", "--out", out] : ["dist/cli/main.js", "run", "packs/hello", "--out", out];
  const nothing = deno ? ["eval", "0"] : ["-e", "0"];
  const worker = deno
    ? ["eval", "new Worker(URL.createObjectURL(new Blob(['close()'])), { type: 'module' })"]
    : ["-e", "new (require('node:worker_threads').Worker)('0', { eval: true })"];
  cpuOf(exe, cli); // fills the fuel cache (and Deno's module cache)
  const a: number[] = [];
  const b: number[] = [];
  const w: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(cpuOf(exe, cli));
    b.push(cpuOf(exe, nothing));
    w.push(cpuOf(exe, worker));
  }
  const ratio = mean(a) / mean(b);
  const target = deno ? 2.5 : 2;
  log(`startup: \`reach-wasm run packs/hello\` ${mean(a).toFixed(0)} ms CPU as a whole process; \`${deno ? "deno eval 0" : "node -e 0"}\` ${mean(b).toFixed(0)} ms; ` +
    `ratio ${ratio.toFixed(1)}× (target ≤ ${target}×: ${ratio <= target ? "met" : "MISSED"}); floor with one empty worker thread ${(mean(w) / mean(b)).toFixed(1)}×`);
  if (!deno && process.env["NODE_EXTRA_CA_CERTS"] !== undefined) withoutExtraCaCerts(log, exe, cli, nothing, rounds);
  return ratio;
}

/**
 * The same ratio without NODE_EXTRA_CA_CERTS. Where it is set (this CI machine sets it to the system's CA bundle), Node
 * parses that bundle at every start, ~35–45 ms of CPU that `node -e 0` and the CLI both pay: it shrinks the ratio,
 * so the bench prints both.
 */
function withoutExtraCaCerts(log: (line: string) => void, exe: string, cli: string[], nothing: string[], rounds: number): void {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env["NODE_EXTRA_CA_CERTS"];
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(cpuOf(exe, cli, env));
    b.push(cpuOf(exe, nothing, env));
  }
  log(`startup: the same without NODE_EXTRA_CA_CERTS (set here; Node parses that CA bundle at every start): ${mean(a).toFixed(0)} ms; ` +
    `\`node -e 0\` ${mean(b).toFixed(0)} ms; ratio ${(mean(a) / mean(b)).toFixed(1)}×`);
}
