// Fixtures of the run service for tests and benchmarks: a service on PGlite (in memory) or on the test PostgreSQL
// server, pack archives, the local run hash of a pack (what `reach-wasm run` computes), the CLI bundled from the
// sources. Free of any test runner, so that scripts (scripts/bench-service.ts, scripts/bench-mcp.ts) use it too; the
// vitest hooks are in cli-bundle-hooks.ts.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeArchive } from "../../src/capsule/archive.ts";
import { runEngine } from "../../src/engine/engine.ts";
import { openRunQueue } from "../../src/platform/job-queue.ts";
import type { RunQueue } from "../../src/platform/job-queue.ts";
import { openDatabase } from "../../src/platform/postgres.ts";
import type { SqlDatabase } from "../../src/platform/postgres.ts";
import { serveHttp } from "../../src/platform/http-server.ts";
import { readPackFiles } from "../../src/host/pack-files.ts";
import { defaultEnvironment } from "../../src/host/environment.ts";
import { privatePostgres } from "./fleet.ts";
import { startService } from "../../src/service/service.ts";
import type { RunningService, ServiceOptions } from "../../src/service/service.ts";
import { migrate } from "../../src/service/schema.ts";

export const root = new URL("../../", import.meta.url).pathname;
export { freshPostgres, privatePostgres, spinPackArchive } from "./fleet.ts";
export type { PrivatePostgres } from "./fleet.ts";
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

/**
 * The folder the test files of one vitest run share the CLI bundle in (tests/_global-setup.ts names it), or
 * undefined outside such a run (a benchmark script, a test run without the repository's vitest configuration).
 */
const sharedBundle = (): string | undefined => process.env["REACH_WASM_TEST_CLI_BUNDLE"] || undefined;

/** Where {@link cliBundle} writes the bundle: the run's shared one, else this test process's own. */
const cliBundleDir = (): string => {
  const shared = sharedBundle();
  return shared === undefined ? join(root, "node_modules", ".cache", `reach-wasm-test-${process.pid}`) : join(shared, "cli");
};

/**
 * The CLI bundled from the current sources (as `npm run build` bundles it), for tests that start `reach-wasm`
 * processes (workers to kill, `serve`). Written under node_modules/.cache so that its external packages resolve.
 * Within a vitest run it is built once and shared by every test file (the sources do not change during a run);
 * `remove` is then a no-op, the run's global teardown removes it.
 */
export async function cliBundle(): Promise<{ main: string; deno: string; remove(): void }> {
  const { bundleCli } = await import("../../scripts/bundle/bundle.mjs");
  const out = cliBundleDir();
  // as `npm run build` bundles it, with the code caches its training runs make (on Deno, the entry takes the script
  // only with one: what ships is what is tested)
  const build = (): Promise<void> => bundleCli({ outdir: out });
  const shared = sharedBundle();
  if (shared === undefined) await build();
  else await buildOnce(shared, build);
  const remove = shared === undefined ? () => rmSync(out, { recursive: true, force: true }) : () => {};
  return { main: join(out, "main.js"), deno: join(out, "deno.mjs"), remove };
}

/**
 * Build into a folder several test processes share, once: the first caller takes `building` (mkdir is atomic) and
 * builds, the others wait for its `built` marker, or its `failed` one (with the error, which they throw too).
 */
async function buildOnce(dir: string, build: () => Promise<void>): Promise<void> {
  const [built, failed] = [join(dir, "built"), join(dir, "failed")];
  try {
    mkdirSync(join(dir, "building"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    while (!existsSync(built)) {
      if (existsSync(failed)) throw new Error(`the CLI bundle the test files share failed to build: ${readFileSync(failed, "utf8")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return;
  }
  try {
    await build();
  } catch (e) {
    writeFileSync(failed, e instanceof Error ? (e.stack ?? e.message) : String(e));
    throw e;
  }
  writeFileSync(built, "");
}

/**
 * The CLI on both runtimes, for tests that spawn it, each from its entry in the bundle ({@link cliBundle}): Node's
 * bin (behind a shim written in `scratch`), and Deno's `deno.mjs` (as `npm run build` ships them). `setup` in
 * `beforeAll`, `remove` in `afterAll`.
 */
export function cliRuntimes(scratch: string): { runtimes: [string, string[]][]; setup(): Promise<void>; remove(): void } {
  let bundle: { main: string; remove(): void } | undefined;
  const shim = join(scratch, "main.js");
  return {
    runtimes: [
      ["node", [process.execPath, shim]],
      ["deno", [join(root, "node_modules/.bin/deno"), "run", "-A", "--quiet", join(cliBundleDir(), "deno.mjs")]],
    ],
    setup: async () => {
      bundle = await cliBundle();
      writeFileSync(shim, `await import(${JSON.stringify(bundle.main)});\n`);
    },
    remove: () => bundle?.remove(),
  };
}

/**
 * The URL a `serve --json` child prints on its first JSON line of stdout.
 * @param child the spawned `serve` (stdout piped)
 * @param stderr what it has written on stderr so far, for the error if it exits first
 * @returns the service's base URL
 */
export function servedUrl(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr()}`)));
  });
}
