/**
 * Fault injection of the run service on PostgreSQL (Node only; `vite-node scripts/fault-service-pg.ts`): `serve` and
 * three `worker` processes on a private PostgreSQL cluster, 120 runs submitted by clients that follow each run to its
 * end (`waitForEnd`, which waits out 503s; a submission refused with 503 is sent again after `Retry-After` with the
 * same requestId, so it is never doubled), one worker SIGKILLed while it holds runs (and started again), and the
 * database restarted (`pg_ctl restart`, alternately `-m fast` and `-m immediate`) while runs are in flight. Per try it
 * prints: processes that died, accepted runs that never ended, submissions that failed for good, 503 answers to
 * submissions, runs executed more than once that the killed worker did not hold, wrong run hashes, determinism
 * incidents, and submit-to-completed latency (p50/p99; the killed worker's runs apart: they wait for the stale limit),
 * after a baseline of the same runs without a fault. Nothing is asserted: the machines are shared and noisy; the
 * verdicts that tests hold are in tests/service-outage.test.ts.
 * Knobs: FAULT_TRIES (default 4), FAULT_RUNS (default 120), FAULT_STALE (the workers' --stale-after, default 45).
 * @module
 */
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { hostname, loadavg } from "node:os";
import { join } from "node:path";
import { runEngine } from "../src/engine/engine.ts";
import { openDatabase } from "../src/platform/postgres.ts";
import { ReachError } from "../src/protocol/errors.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { freshPostgres, privatePostgres, spawnCli, spinPackArchive, until } from "../tests/support/fleet.ts";
import type { CliProcess } from "../tests/support/fleet.ts";
import { ServiceClient } from "../src/service/client.ts";
import { createToken } from "../src/service/tokens.ts";

const TRIES = Number(process.env["FAULT_TRIES"] ?? 4);
const RUNS = Number(process.env["FAULT_RUNS"] ?? 120);
const STALE = process.env["FAULT_STALE"] ?? "45";
const SEEDS = 10;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!);

const pg = privatePostgres(await freePort());
if (pg === null) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
const env = defaultEnvironment();
const { bundleCli } = await import("./bundle/bundle.mjs");
const outdir = join(new URL("../", import.meta.url).pathname, "node_modules", ".cache", `reach-wasm-fault-${process.pid}`);
await bundleCli({ outdir, train: false }); // the CLI as `npm run build` bundles it, from the current sources
const bundle = { main: join(outdir, "main.js"), remove: () => rmSync(outdir, { recursive: true, force: true }) };
const archive = spinPackArchive(3, 30_000, "spin-fault");
const local = new Map<string, string>();
for (let seed = 0; seed < SEEDS; seed++) local.set(String(seed), (await runEngine(env, { pack: { archive }, seed: String(seed) })).runHash);

try {
  await oneTry(0, "none"); // the baseline: the same runs, no fault
  for (let attempt = 1; attempt <= TRIES; attempt++) await oneTry(attempt, attempt % 2 === 1 ? "fast" : "immediate");
} finally {
  bundle.remove();
  pg.remove();
}

async function oneTry(attempt: number, mode: "none" | "fast" | "immediate"): Promise<void> {
  const url = await freshPostgres(pg!.url, `reach_fault_${attempt}`);
  const procs: CliProcess[] = [];
  const start = (args: string[]) => {
    const p = spawnCli(bundle.main, args);
    procs.push(p);
    return p;
  };
  const serve = start(["serve", "--db", url, "--workers", "0", "--listen", "127.0.0.1:0", "--stale-after", STALE]);
  const server = / on (http:\/\/[^;\s]+)/.exec(await serve.line(/serving runs from \S+ on http:/))![1]!;
  const worker = () => start(["worker", "--db", url, "--concurrency", "4", "--stale-after", STALE, "--poll", "500"]);
  const workers = [worker(), worker(), worker()];
  await Promise.all(workers.map((w) => w.line(/takes runs/)));
  const admin = await openDatabase({ url, poolSize: 2 });
  const client = new ServiceClient({ server, token: await createToken(admin, "fault") });
  const digest = (await client.registerPack(archive)).digest;

  let refused503 = 0;
  let failedForGood = 0;
  const ended: { seed: string; runId: string; ms: number; status: string; runHash: string | null; attempts: number }[] = [];
  const follow = async (i: number) => {
    const seed = String(i % SEEDS);
    const t0 = performance.now();
    let runId: string | null = null;
    for (let tries = 0; runId === null && tries < 60; tries++) {
      try {
        runId = (await client.submit(digest, archive, { seed, requestId: `fault-${attempt}-${i}` })).runId;
      } catch (err) {
        if (!(err instanceof ReachError) || err.details["httpStatus"] !== 503) break;
        refused503++;
        await new Promise((r) => setTimeout(r, err.retryAfter ?? 1000));
      }
    }
    if (runId === null) return void failedForGood++;
    const r = await client.waitForEnd(runId);
    ended.push({ seed, runId, ms: performance.now() - t0, status: r.status, runHash: r.runHash, attempts: r.attempts });
  };
  // 40 runs at once, the rest one every 25 ms: some submissions meet the outage
  const clients: Promise<void>[] = [];
  const orphans = new Set<string>();
  let restarted: Promise<void> = Promise.resolve();
  for (let i = 0; i < RUNS; i++) {
    clients.push(follow(i).catch(() => void failedForGood++));
    if (i >= 40) await new Promise((r) => setTimeout(r, 25));
    if (i === 60 && mode !== "none") {
      // a worker killed while it holds runs, then one started in its place
      const victim = workers[0]!;
      const victimId = `${hostname()}:${victim.child.pid}`;
      await until(async () => (await admin.query("SELECT 1 FROM reach_wasm.runs WHERE worker = $1 AND status = 'EXECUTING'", [victimId])).length > 0, "the victim to hold runs", 60_000).catch(() => {});
      victim.child.kill("SIGKILL");
      for (const r of await admin.query<{ id: string }>("SELECT id::text AS id FROM reach_wasm.runs WHERE worker = $1 AND status = 'EXECUTING'", [victimId])) orphans.add(r.id);
      workers.push(worker());
    }
    if (i === 70 && mode !== "none") restarted = pg!.restart(mode);
  }
  await restarted;
  await Promise.all(clients);
  const [{ n: incidents }] = (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM reach_wasm.incidents")) as [{ n: number }];
  const [{ n: open }] = (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM reach_wasm.runs WHERE status IN ('PENDING', 'EXECUTING')")) as [{ n: number }];
  await admin.close();
  const died = procs.filter((p) => p !== workers[0] && !p.alive()).length;
  const bugs = procs.filter((p) => /this is a bug|internal error/i.test(p.stderr())).length;
  const wrong = ended.filter((e) => e.status !== "COMPLETED" || e.runHash !== local.get(e.seed)).length;
  const again = ended.filter((e) => e.attempts > 1 && !orphans.has(e.runId)).length;
  const ms = ended.filter((e) => !orphans.has(e.runId)).map((e) => e.ms);
  const orphanMs = ended.filter((e) => orphans.has(e.runId)).map((e) => e.ms);
  console.log(
    `${mode === "none" ? "baseline (no fault)" : `try ${attempt} (SIGKILL + restart -m ${mode})`}: died ${died}, bug lines ${bugs}, accepted ${ended.length + open}, never ended ${open}, submissions failed ${failedForGood}, 503 to submissions ${refused503}, ` +
      `killed worker's runs re-queued ${orphans.size}, other runs executed more than once ${again}, wrong ${wrong}, incidents ${incidents}, ` +
      `submit→completed p50 ${Math.round(pct(ms, 50))} ms p99 ${Math.round(pct(ms, 99))} ms max ${Math.round(Math.max(...ms))} ms` +
      `${orphanMs.length === 0 ? "" : ` (the killed worker's runs: max ${Math.round(Math.max(...orphanMs))} ms, the stale limit being ${STALE} s)`} (load ${loadavg()[0]!.toFixed(1)})`,
  );
  await Promise.all(procs.map((p) => p.stop()));
}
