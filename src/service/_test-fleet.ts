// Test helpers for runs of the service as processes (`serve`, `worker` from the bundled CLI) against a PostgreSQL
// server that a test stops and starts: spawn them, read their log lines, wait for a line, tell whether they live.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { root } from "./_test-service.ts";

/** A `reach-wasm` process of a test. */
export type CliProcess = {
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the first stderr line matching `re` (already written or to come); rejects if the process exits. */
  line(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Still running (neither exited nor killed). */
  alive(): boolean;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
};

/**
 * Start `node <bundle> <args…>` from the repository root.
 * @param bundle the bundled CLI (`cliBundle().main`)
 * @param args the command and its options
 */
export function spawnCli(bundle: string, args: string[]): CliProcess {
  const child = spawn(process.execPath, [bundle, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, REACH_WASM_CONNECT_WAIT: "0" } });
  let err = "";
  const waiters = new Set<() => void>();
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
    for (const w of [...waiters]) w();
  });
  child.stdout!.resume();
  child.once("exit", () => {
    for (const w of [...waiters]) w();
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    stderr: () => err,
    alive,
    line: (re, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no line ${re} within ${timeoutMs} ms: ${err}`)), timeoutMs);
        const check = () => {
          const hit = err.split("\n").find((l) => re.test(l));
          if (hit !== undefined) done(null, hit);
          else if (!alive()) done(new Error(`${args[0]} exited (${child.exitCode ?? child.signalCode}) before ${re}: ${err}`));
        };
        const done = (e: Error | null, value?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (e === null) resolve(value!);
          else reject(e);
        };
        waiters.add(check);
        check();
      }),
    stop: () =>
      new Promise((resolve) => {
        if (!alive()) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

/**
 * Wait until `cond` holds, polling; a generous deadline turns a hang into a failure (never a verdict on speed).
 * @param cond the condition
 * @param what what is waited for, for the failure message
 * @param timeoutMs the deadline
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 180_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
