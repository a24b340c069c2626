// Test helpers for runs of the service as processes (`serve`, `worker` from the bundled CLI) against a PostgreSQL
// server that a test stops and starts: a private cluster, spawning the processes, reading their log lines, waiting
// for a line, telling whether they live. Free of vitest, so that scripts (scripts/fault-service-pg.ts) use them too.
import { execFile, execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeArchive } from "../../src/capsule/archive.ts";
import { openDatabase } from "../../src/platform/postgres.ts";

const root = new URL("../../", import.meta.url).pathname;

/** A PostgreSQL cluster of a test's own, which the test may stop and start (fault injection). */
export type PrivatePostgres = {
  url: string;
  /** Stop the server (`pg_ctl stop -m mode`; `immediate` is a crash: no shutdown checkpoint). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Start it again (resolves once it accepts connections). */
  start(): Promise<void>;
  /** `pg_ctl restart -m mode`: down and up again at once. */
  restart(mode?: "fast" | "immediate"): Promise<void>;
  /** Stop it and delete the cluster. */
  remove(): void;
};

/**
 * A private PostgreSQL cluster in a temporary directory, started with Debian's binaries (as the postgres user when
 * running as root, as .ci/run does), listening on 127.0.0.1:`port`; null without the binaries.
 * @param port the TCP port (choose one no other test uses)
 */
export function privatePostgres(port: number): PrivatePostgres | null {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(a) - Number(b)) : [];
  if (versions.length === 0) return null;
  const bin = `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`;
  try {
    execFileSync(`${bin}/pg_ctl`, ["--version"], { stdio: "ignore" });
  } catch {
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), "reach-pg-"));
  const asPg = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
  const run = (args: string[]) => execFileSync(asPg[0] ?? args[0]!, asPg.length > 0 ? [...asPg.slice(1), ...args] : args.slice(1), { stdio: "ignore" });
  const data = join(dir, "data");
  const options = ["-D", data, "-l", join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`];
  try {
    if (asPg.length > 0) execFileSync("chown", ["postgres", dir]);
    run([`${bin}/initdb`, "-D", data, "-A", "trust", "-U", "postgres"]);
    run([`${bin}/pg_ctl`, ...options, "start"]);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  // asynchronous, so that the test's clients and servers go on while the server stops and starts
  const runAsync = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      execFile(asPg[0] ?? args[0]!, asPg.length > 0 ? [...asPg.slice(1), ...args] : args.slice(1), (err) => (err === null ? resolve() : reject(err)));
    });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode = "fast") => runAsync([`${bin}/pg_ctl`, "-D", data, "-m", mode, "-w", "stop"]),
    start: () => runAsync([`${bin}/pg_ctl`, ...options, "start"]),
    restart: (mode = "fast") => runAsync([`${bin}/pg_ctl`, ...options, "-m", mode, "restart"]),
    remove: () => {
      try {
        run([`${bin}/pg_ctl`, "-D", data, "-m", "immediate", "stop"]);
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}


/** A fresh database on the test server (dropped and created). */
export async function freshPostgres(base: string, name: string): Promise<string> {
  const admin = await openDatabase({ url: base, poolSize: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.close();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}


/** A pack of `steps` steps of a QuickJS tool that counts to `n` (a run that takes a while, cancellable between steps). */
export function spinPackArchive(steps: number, n: number, id = "spin"): Uint8Array {
  const enc = new TextEncoder();
  const pack = {
    specVersion: "1.0.0",
    id,
    version: "1.0.0",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "spin" }] }, policies: { maxToolCalls: steps } },
    entrypoint: "plan.json",
    tools: { spin: { kind: "js", module: "tools/spin.js", outputSchema: { type: "object", required: ["count"] } } },
  };
  const plan = {
    contract_version: "S2-B-05.v1", plan_id: `${id}-1`, goal_id: "spin", created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED",
    risk: { level: 0 }, scope: { allowed: ["spin"] },
    steps: Array.from({ length: steps }, (_, i) => ({ id: `s${i}`, tool: "spin", arguments: { n }, return_spec: { type: "object", required: ["count"] } })),
    success_criteria: ["counted"],
  };
  const tool = "export default function spin(input) { let c = 0; for (let i = 0; i < input.n; i++) c = (c + i) % 1000003; return { count: c }; }\n";
  return writeArchive([
    { path: "plan.json", bytes: enc.encode(JSON.stringify(plan)) },
    { path: "reach.json", bytes: enc.encode(JSON.stringify(pack)) },
    { path: "tools/spin.js", bytes: enc.encode(tool) },
  ]);
}


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

/** The CLI on Deno, from the sources: the command line before a `reach-wasm` command. */
export const DENO_CLI = [join(root, "node_modules/.bin/deno"), "run", "-A", "--quiet", join(root, "src/cli/main.ts")];

/**
 * Start `node <bundle> <args…>` (or `<cli…> <args…>`, e.g. {@link DENO_CLI}) from the repository root.
 * @param cli the bundled CLI (`cliBundle().main`), or a whole command line
 * @param args the command and its options
 */
export function spawnCli(cli: string | readonly string[], args: string[]): CliProcess {
  const [cmd, ...pre] = typeof cli === "string" ? [process.execPath, cli] : cli;
  const child = spawn(cmd!, [...pre, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, REACH_WASM_CONNECT_WAIT: "0" } });
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
