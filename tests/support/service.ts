// Fixtures of the run service for tests and benchmarks: a service on PGlite (in memory) or on the test PostgreSQL
// server, pack archives, the local run hash of a pack (what `reach-wasm run` computes), the CLI bundled from the
// sources. Free of any test runner, so that scripts (scripts/bench-service.ts, scripts/bench-mcp.ts) use it too; the
// vitest hooks are in cli-bundle-hooks.ts.
import { rmSync, writeFileSync } from "node:fs";
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

/** Where {@link cliBundle} writes the bundle of this test process. */
const cliBundleDir = (): string => join(root, "node_modules", ".cache", `reach-wasm-test-${process.pid}`);

/**
 * The CLI bundled from the current sources (as `npm run build` bundles it), for tests that start `reach-wasm`
 * processes (workers to kill, `serve`). Written under node_modules/.cache so that its external packages resolve.
 */
export async function cliBundle(): Promise<{ main: string; deno: string; remove(): void }> {
  const { bundleCli } = await import("../../scripts/bundle/bundle.mjs");
  const out = cliBundleDir();
  await bundleCli({ outdir: out, train: false }); // as `npm run build` bundles it, without the code cache's training run
  return { main: join(out, "main.js"), deno: join(out, "deno.mjs"), remove: () => rmSync(out, { recursive: true, force: true }) };
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
