// Test helpers of the run service: a service on PGlite (in memory) or on the test PostgreSQL server, pack archives,
// and the local run hash of a pack (what `reach-wasm run` computes).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { runEngine } from "../engine/engine.ts";
import { openRunQueue } from "../platform/job-queue.ts";
import type { RunQueue } from "../platform/job-queue.ts";
import { openDatabase } from "../platform/postgres.ts";
import type { SqlDatabase } from "../platform/postgres.ts";
import { serveHttp } from "../platform/http-server.ts";
import { readPackFiles } from "../platform/pack-files.ts";
import { defaultEnvironment } from "../platform/environment.ts";
import { startService } from "./service.ts";
import type { RunningService, ServiceOptions } from "./service.ts";
import { migrate } from "./schema.ts";

export const root = new URL("../../", import.meta.url).pathname;
export const env = defaultEnvironment();

/** The bytes of `reach-wasm pack build packs/<name>`. */
export async function packArchive(name: string): Promise<Uint8Array> {
  const files = await readPackFiles(join(root, "packs", name));
  return writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));
}

/** The run hash of a pack run in this process (the same engine call `reach-wasm run` makes). */
export async function localRunHash(name: string, options: { seed?: string; input?: unknown } = {}): Promise<string> {
  const files = await readPackFiles(join(root, "packs", name));
  const run = await runEngine(env, { pack: { files }, ...(options.seed === undefined ? {} : { seed: options.seed }), ...(options.input === undefined ? {} : { input: options.input as never }) });
  return run.runHash;
}

/** The PostgreSQL server of a test file: its URL and how to stop it (a no-op for a server the file did not start). */
export type TestPostgres = { url: string; stop(): void };

/**
 * The PostgreSQL server for tests: `$REACH_WASM_TEST_PG_URL` (set by .ci/run), else a private cluster started with
 * Debian's binaries when they exist (as the postgres user when running as root), else null (those tests skip).
 * Call `stop()` in `afterAll`.
 */
export function testPostgres(): TestPostgres | null {
  const env = process.env["REACH_WASM_TEST_PG_URL"];
  if (env !== undefined && env !== "") return { url: env, stop: () => {} };
  const own = privatePostgres(20000 + (process.pid % 20000));
  return own === null ? null : { url: own.url, stop: () => own.remove() };
}

/** A PostgreSQL cluster of a test's own, which the test may stop and start (fault injection). */
export type PrivatePostgres = {
  url: string;
  /** Stop the server (`pg_ctl stop -m mode`; `immediate` is a crash: no shutdown checkpoint). */
  stop(mode?: "fast" | "immediate"): void;
  /** Start it again (waits until it accepts connections). */
  start(): void;
  /** `pg_ctl restart -m mode`: down and up again at once. */
  restart(mode?: "fast" | "immediate"): void;
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
  const stop = (mode: "fast" | "immediate" = "fast") => run([`${bin}/pg_ctl`, "-D", data, "-m", mode, "-w", "stop"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start: () => run([`${bin}/pg_ctl`, ...options, "start"]),
    restart: (mode = "fast") => run([`${bin}/pg_ctl`, ...options, "-m", mode, "restart"]),
    remove: () => {
      try {
        stop("immediate");
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

export type TestService = { svc: RunningService; db: SqlDatabase; queue: RunQueue; url: string; close(): Promise<void> };

/** Start a service (on `db` and `queue` when given, else PGlite in memory unless `dbUrl`) on a free loopback port. */
export async function startTestService(options: Partial<ServiceOptions> & { dbUrl?: string } = {}): Promise<TestService> {
  const db = options.db ?? (await openDatabase(options.dbUrl === undefined ? { memory: true } : { url: options.dbUrl }));
  await migrate(db);
  const queue = options.queue ?? (await openRunQueue(db));
  const svc = await startService({
    db,
    queue,
    env,
    trust: null,
    requireToken: false,
    serve: (handler) => serveHttp(handler, { hostname: "127.0.0.1", port: 0 }),
    version: "test",
    workers: 1,
    workerId: `test:${process.pid}`,
    worker: { staleSeconds: 3, heartbeatMs: 200, pollMs: 500 },
    log: () => {},
    ...options,
  });
  return {
    svc,
    db,
    queue,
    url: svc.url,
    close: async () => {
      await svc.close(2000);
      await queue.stop();
      await db.close();
    },
  };
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

/**
 * The CLI bundled from the current sources (as `npm run build` bundles it), for tests that start `reach-wasm`
 * processes (workers to kill, `serve`). Written under node_modules/.cache so that its external packages resolve.
 */
export async function cliBundle(): Promise<{ main: string; remove(): void }> {
  const { bundleCli } = await import("../../scripts/bundle/bundle.mjs");
  const out = join(root, "node_modules", ".cache", `reach-wasm-test-${process.pid}`);
  await bundleCli({ outdir: out, train: false }); // as `npm run build` bundles it, without the code cache's training run
  return { main: join(out, "main.js"), remove: () => rmSync(out, { recursive: true, force: true }) };
}

/**
 * For a test file that spawns the bundled CLI: a scratch folder, and the bundle built in `beforeAll`; both removed in
 * `afterAll`. Call at the file's top level.
 * @param prefix the scratch folder's name prefix
 * @returns the scratch folder and the bundle's bin (valid once `beforeAll` ran)
 */
export function withCliBundle(prefix: string): { scratch: string; main: () => string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  let bundle: { main: string; remove(): void } | undefined;
  beforeAll(async () => {
    bundle = await cliBundle();
  }, 120_000);
  afterAll(() => {
    bundle?.remove();
    rmSync(scratch, { recursive: true, force: true });
  });
  return { scratch, main: () => bundle!.main };
}

/**
 * The CLI on both runtimes, for tests that spawn it: Node runs the bundle ({@link cliBundle}, behind a shim written
 * in `scratch`), Deno runs src/ directly. `setup` in `beforeAll`, `remove` in `afterAll`.
 */
export function cliRuntimes(scratch: string): { runtimes: [string, string[]][]; setup(): Promise<void>; remove(): void } {
  let bundle: { main: string; remove(): void } | undefined;
  const shim = join(scratch, "main.js");
  return {
    runtimes: [
      ["node", [process.execPath, shim]],
      ["deno", [join(root, "node_modules/.bin/deno"), "run", "-A", "--quiet", join(root, "src/cli/main.ts")]],
    ],
    setup: async () => {
      bundle = await cliBundle();
      writeFileSync(shim, `await import(${JSON.stringify(bundle.main)});\n`);
    },
    remove: () => bundle?.remove(),
  };
}
