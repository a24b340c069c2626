/**
 * `npm run bench` (run service part; Node only): runs/s of `packs/hello` through `serve` with 1, 2 and 3 workers, on
 * PGlite (workers inside the serve process: the embedded store serves one process) and on PostgreSQL (worker
 * processes), against the same runs done in this process by the engine call right before and after each measurement
 * (the ratio), and the submit-to-completed latency (p50/p99) with 4 clients each waiting for its run before sending
 * the next. Each line also says where the CPU went per run (this process: serve and the bench's clients; the worker
 * processes and their main threads; PostgreSQL's server processes; from /proc). Printed with the machine's load: the
 * machines are shared and noisy; nothing here is asserted by tests.
 * Knobs: BENCH_SERVICE_RUNS, BENCH_SERVICE_CONCURRENCY, BENCH_SERVICE_WORKERS (e.g. "2"), BENCH_SERVICE_SKIP_PGLITE=1,
 * BENCH_SERVICE_NODE_ARGS (node flags of the worker processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 * Targets (run service): ≥ 0.7× the in-process rate with 2 workers on PostgreSQL; p99 ≤ 250 ms.
 * PostgreSQL: `$REACH_WASM_TEST_PG_URL`, else a private cluster of Debian's binaries, else that half is skipped.
 * @module
 */
import { spawn } from "node:child_process";
import http from "node:http";
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { hostname, loadavg } from "node:os";
import { join } from "node:path";
import { runEngine } from "../src/engine/engine.ts";
import { readPackFiles } from "../src/host/pack-files.ts";
import { cliBundle, env, freshPostgres, packArchive, root, startTestService, testPostgres } from "../tests/support/service.ts";
import type { TestService } from "../tests/support/service.ts";
import { SMOKE, n } from "./bench/smoke.ts";

const THROUGHPUT_RUNS = Number(process.env["BENCH_SERVICE_RUNS"] ?? n(400, 6));
const LATENCY_RUNS = n(200, 3);
const IN_FLIGHT = n(48, 4);
/** Runs at once per worker process: more slots than cores overlap database round trips with runs. */
const CONCURRENCY = Number(process.env["BENCH_SERVICE_CONCURRENCY"] ?? 8);
const log = (line: string) => console.log(`[service] ${line}`);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

const helloFiles = await readPackFiles(join(root, "packs/hello"));

/** The in-process rate: `n` runs of packs/hello by the engine call, one after another, in this process. */
async function inProcessRate(runs = n(200, 3)): Promise<number> {
  const files = helloFiles;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await runEngine(env, { pack: { files }, seed: String(i) });
  return runs / ((performance.now() - t0) / 1000);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One JSON request over a keep-alive connection (node:http: about a third of fetch's CPU per request, measured). */
function request(base: string, method: string, path: string, body?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const req = http.request({ host: u.hostname, port: u.port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Submit `n` runs with at most `inFlight` outstanding; each client waits for its run's end before the next. */
async function drive(t: TestService, digest: string, n: number, inFlight: number, seed0: number): Promise<{ seconds: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const t0 = performance.now();
  const client = async () => {
    while (next < n) {
      const i = next++;
      const s = performance.now();
      const sub = await request(t.url, "POST", "/runs", JSON.stringify({ pack: digest, seed: seed0 + i }));
      if (sub.status !== 202) throw new Error(`submit: HTTP ${sub.status} ${JSON.stringify(sub.json)}`);
      const runId = sub.json["runId"] as string;
      for (;;) {
        const r = await request(t.url, "GET", `/runs/${runId}?wait=60`);
        if (r.json["status"] === "COMPLETED") break;
        if (r.json["status"] !== "PENDING" && r.json["status"] !== "EXECUTING") throw new Error(`run ${runId} ended ${String(r.json["status"])}`);
      }
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, client));
  return { seconds: (performance.now() - t0) / 1000, latencies };
}

/** With $BENCH_SERVICE_PROFILE=DIR, a CPU profile of this process (serve and the clients) over a throughput phase. */
async function profileStart(): Promise<(label: string) => Promise<void>> {
  const dir = process.env["BENCH_SERVICE_PROFILE"];
  if (dir === undefined || dir === "") return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async (label) => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(join(dir, `${label.replace(/[^A-Za-z0-9]+/g, "-")}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

/** CPU seconds (user + system, all threads) of a process, from /proc (0 where there is no /proc). */
function cpuSeconds(pid: number, path = String(pid)): number {
  try {
    const stat = readFileSync(`/proc/${path}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** The PostgreSQL server processes of the cluster listening on `port` (its postmaster and the postmaster's children). */
function postgresPids(port: string): number[] {
  const procs = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  const cmd = (pid: number) => { try { return readFileSync(`/proc/${pid}/cmdline`, "utf8"); } catch { return ""; } };
  const ppid = (pid: number) => { try { const s = readFileSync(`/proc/${pid}/stat`, "utf8"); return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[1]); } catch { return -1; } };
  const master = procs.find((p) => cmd(p).includes("postgres") && cmd(p).includes(`-p\0${port}\0`));
  return master === undefined ? [] : [master, ...procs.filter((p) => ppid(p) === master)];
}

/** Who used the CPU during a measurement: this process (serve + bench client), the worker processes, PostgreSQL. */
type CpuParts = { workers: number[]; pgPort: string | null };
/** Seconds a thread spent runnable but waiting for a CPU (/proc schedstat; 0 where there is none). */
function runQueueSeconds(path: string): number {
  try {
    return Number(readFileSync(`/proc/${path}/schedstat`, "utf8").split(" ")[1]) / 1e9;
  } catch {
    return 0;
  }
}

function cpuSnapshot(parts: CpuParts): { self: number; workers: number; workersMain: number; workersMainWait: number; pg: number } {
  const u = process.cpuUsage();
  return {
    self: (u.user + u.system) / 1e6,
    workersMain: parts.workers.reduce((a, p) => a + cpuSeconds(p, `${p}/task/${p}`), 0),
    workersMainWait: parts.workers.reduce((a, p) => a + runQueueSeconds(`${p}/task/${p}`), 0),
    workers: parts.workers.reduce((a, p) => a + cpuSeconds(p), 0),
    pg: parts.pgPort === null ? 0 : postgresPids(parts.pgPort).reduce((a, p) => a + cpuSeconds(p), 0),
  };
}

/**
 * Throughput (`IN_FLIGHT` clients) and latency (4 clients) of one configuration, against the in-process rate measured
 * right before and right after its throughput phase (interleaved, so that both see the same machine load).
 */
async function measure(label: string, t: TestService, parts: CpuParts = { workers: [], pgPort: null }): Promise<{ rate: number; ratio: number; p99: number }> {
  const reg = await fetch(`${t.url}/packs`, { method: "POST", headers: { "content-type": "application/gzip" }, body: (await packArchive("hello")) as Uint8Array<ArrayBuffer> });
  const { digest } = (await reg.json()) as { digest: string };
  await drive(t, digest, 40, 8, 1_000_000); // warm: fuel cache, JIT, connections
  const before = await inProcessRate();
  const profile = await profileStart();
  const c0 = cpuSnapshot(parts);
  const thr = await drive(t, digest, THROUGHPUT_RUNS, IN_FLIGHT, 2_000_000);
  const c1 = cpuSnapshot(parts);
  await profile(label);
  const after = await inProcessRate();
  const rate = THROUGHPUT_RUNS / thr.seconds;
  const baseline = (before + after) / 2;
  const perRun = (a: number, b: number) => (((b - a) * 1000) / THROUGHPUT_RUNS).toFixed(1);
  const lat = await drive(t, digest, LATENCY_RUNS, 4, 3_000_000);
  const p50 = pct(lat.latencies, 0.5);
  const p99 = pct(lat.latencies, 0.99);
  log(`${label}: ${rate.toFixed(0)} runs/s = ${(rate / baseline).toFixed(2)}× in-process (${before.toFixed(0)} before, ${after.toFixed(0)} after); latency with 4 clients p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms; under full load (${IN_FLIGHT} in flight) p50 ${pct(thr.latencies, 0.5).toFixed(0)} ms; CPU ms per run: serve+client ${perRun(c0.self, c1.self)}, workers ${perRun(c0.workers, c1.workers)} (main threads ${perRun(c0.workersMain, c1.workersMain)}, which waited for a CPU ${perRun(c0.workersMainWait, c1.workersMainWait)}), postgres ${perRun(c0.pg, c1.pg)}; load ${load()}`);
  return { rate, ratio: rate / baseline, p99 };
}

async function workerProcess(main: string, dbUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...(process.env["BENCH_SERVICE_NODE_ARGS"] ?? "").split(" ").filter((a) => a !== ""), main, "worker", "--db", dbUrl, "--concurrency", String(CONCURRENCY)], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("takes runs")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${err}`)));
  });
  return child;
}

log(`host ${hostname()}, load ${load()} (1/5/15 min), ${THROUGHPUT_RUNS} runs of packs/hello per configuration, ${IN_FLIGHT} in flight, worker processes with --concurrency ${CONCURRENCY}`);
for (let i = 0; i < n(20, 1); i++) await runEngine(env, { pack: { files: helloFiles }, seed: String(i) }); // warm
const first = await inProcessRate(n(300, 3));
log(`in-process engine call: ${first.toFixed(0)} runs/s (${(1000 / first).toFixed(1)} ms per run); load ${load()}`);

for (const workers of process.env["BENCH_SERVICE_SKIP_PGLITE"] === "1" ? [] : SMOKE ? [1] : [1, 2, 3]) {
  const t = await startTestService({ workers, worker: { pollMs: 2000, heartbeatMs: 500, staleSeconds: 45 } });
  try {
    await measure(`PGlite, serve with ${workers} worker slot(s) in-process`, t);
  } finally {
    await t.close();
  }
}

const pg = testPostgres();
if (pg === null) log("PostgreSQL: no server ($REACH_WASM_TEST_PG_URL) and no Debian binaries; skipped");
else {
  const bundle = await cliBundle();
  try {
    let two: { rate: number; ratio: number; p99: number } | null = null;
    for (const workers of (process.env["BENCH_SERVICE_WORKERS"] ?? (SMOKE ? "1" : "1,2,3")).split(",").map(Number)) {
      const dbUrl = await freshPostgres(pg.url, `reach_wasm_bench_${workers}`);
      const t = await startTestService({ dbUrl, workers: 0 });
      const children: ChildProcess[] = [];
      try {
        for (let i = 0; i < workers; i++) children.push(await workerProcess(bundle.main, dbUrl));
        const m = await measure(`PostgreSQL, serve + ${workers} worker process(es)`, t, { workers: children.map((c) => c.pid!), pgPort: new URL(pg.url).port });
        if (workers === 2) two = m;
      } finally {
        for (const c of children) c.kill("SIGTERM");
        await Promise.all(children.map((c) => new Promise((r) => c.once("exit", r))));
        await t.close();
      }
    }
    if (two !== null) {
      log(`targets: 2 workers on PostgreSQL ${two.ratio >= 0.7 ? "met" : "MISSED"} (${two.ratio.toFixed(2)}× ≥ 0.7×); p99 ${two.p99 <= 250 ? "met" : "MISSED"} (${two.p99.toFixed(0)} ms ≤ 250 ms)`);
    }
  } finally {
    bundle.remove();
    pg.stop();
  }
}
