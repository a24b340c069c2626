// The run service on a real PostgreSQL server (issue "Tests"): 200 runs of the example packs submitted at once to
// `serve` with 3 worker processes, one of them killed with SIGKILL while it holds runs. Every run must end exactly
// once, with a capsule whose run hash is the one `reach-wasm run` computes locally; none lost, none duplicated, no
// determinism incident. Verdicts are counts and hashes; the only clock is a generous deadline.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { readArchive } from "../src/capsule/archive.ts";
import { cliBundle, freshPostgres, packArchive, root, spinPackArchive, startTestService, testPostgres } from "./support/service.ts";
import type { TestService } from "./support/service.ts";
import { createToken } from "../src/service/tokens.ts";

const pg = testPostgres();
const RUNS = 200;
const PACKS = ["hello", "notes"] as const;
const SEEDS = 10;
const scratch = mkdtempSync(join(tmpdir(), "reach-load-"));
let t: TestService;
let token: string;
let dbUrl: string;
let bundle: { main: string; remove(): void } | undefined;
const workers: ChildProcess[] = [];

async function startWorker(bundle: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bundle, "worker", "--db", dbUrl, "--concurrency", "2", "--stale-after", "3", "--poll", "500"], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
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

beforeAll(async () => {
  if (pg === null) return;
  dbUrl = await freshPostgres(pg.url, "reach_wasm_load");
  t = await startTestService({ dbUrl, workers: 0, requireToken: true });
  token = await createToken(t.db, "load");
  bundle = await cliBundle();
  for (let i = 0; i < 3; i++) workers.push(await startWorker(bundle.main));
}, 180_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGTERM");
  await Promise.all(workers.map((w) => (w.exitCode === null && w.signalCode === null ? new Promise((r) => w.once("exit", r)) : null)));
  await t?.close();
  bundle?.remove();
  pg?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

type Json = Record<string, unknown>;
async function api(method: string, path: string, body?: BodyInit, type?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (type !== undefined) headers["content-type"] = type;
  return await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
}

/** What `reach-wasm run <pack> --seed N --json` reports, per pack and seed. */
async function localRuns(): Promise<Map<string, { status: string; runHash: string }>> {
  const out = new Map<string, { status: string; runHash: string }>();
  for (const pack of PACKS) {
    for (let seed = 0; seed < SEEDS; seed++) {
      let stdout = "";
      await main(["run", join(root, "packs", pack), "--seed", String(seed), "--json", "--out", join(scratch, "local")], { stdout: (s) => void (stdout += s), stderr: () => {} });
      const r = JSON.parse(stdout) as { status: string; runHash: string };
      out.set(`${pack}/${seed}`, { status: r.status, runHash: r.runHash });
    }
  }
  return out;
}

describe.skipIf(pg === null)("run service on PostgreSQL under load", () => {
  it("ends 200 concurrent runs exactly once each with the local run hash, though a worker is killed mid-run", async () => {
    const expected = await localRuns();
    const digests: Record<string, string> = {};
    for (const pack of PACKS) {
      const res = await api("POST", "/packs", (await packArchive(pack)) as Uint8Array<ArrayBuffer>, "application/gzip");
      expect(res.status).toBe(201);
      digests[pack] = ((await res.json()) as { digest: string }).digest;
    }
    const plan = Array.from({ length: RUNS }, (_, i) => ({ pack: PACKS[i % PACKS.length]!, seed: Math.floor(i / PACKS.length) % SEEDS }));
    const submitted = Promise.all(plan.map(async (p) => {
      const res = await api("POST", "/runs", JSON.stringify({ pack: digests[p.pack], seed: p.seed }), "application/json");
      expect(res.status).toBe(202);
      return { ...p, runId: ((await res.json()) as { runId: string }).runId };
    }));

    // kill the first worker while it holds runs (claimed, not finished)
    const victim = workers[0]!;
    const victimId = `${hostname()}:${victim.pid}`;
    let orphans: string[] = [];
    for (let i = 0; i < 2000 && orphans.length === 0; i++) {
      const holding = await t.db.query("SELECT 1 FROM reach_wasm.runs WHERE worker = $1 AND status = 'EXECUTING'", [victimId]);
      if (holding.length > 0) {
        victim.kill("SIGKILL");
        await new Promise((r) => victim.once("exit", r));
        orphans = (await t.db.query<{ id: string }>("SELECT id::text AS id FROM reach_wasm.runs WHERE worker = $1 AND status = 'EXECUTING'", [victimId])).map((r) => r.id);
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(victim.signalCode).toBe("SIGKILL");
    expect(orphans.length).toBeGreaterThan(0);
    const runs = await submitted;
    expect(new Set(runs.map((r) => r.runId)).size).toBe(RUNS);

    // wait for every run to end (no speed assumption: a deadline of minutes, only to turn a hang into a failure)
    const deadline = performance.now() + 300_000;
    for (;;) {
      const [{ open }] = (await t.db.query<{ open: number }>("SELECT count(*)::int AS open FROM reach_wasm.runs WHERE status IN ('PENDING', 'EXECUTING')")) as [{ open: number }];
      if (open === 0) break;
      if (performance.now() > deadline) {
        const stuck = await t.db.query("SELECT r.id, r.status, r.worker, r.attempts, r.heartbeat_at, r.job_id, j.state AS job_state FROM reach_wasm.runs r LEFT JOIN pgboss.job j ON j.id = r.job_id WHERE r.status IN ('PENDING', 'EXECUTING')");
        expect.fail(`${open} run(s) never ended: ${JSON.stringify(stuck)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }

    const [{ n }] = (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM reach_wasm.runs")) as [{ n: number }];
    expect(n).toBe(RUNS); // none duplicated
    for (const r of runs) {
      const res = await api("GET", `/runs/${r.runId}`);
      const record = (await res.json()) as Json;
      const want = expected.get(`${r.pack}/${r.seed}`)!;
      expect([record["status"], record["runHash"]], `${r.pack} seed ${r.seed}`).toEqual([want.status, want.runHash]);
      const capsule = await api("GET", `/runs/${r.runId}/capsule`);
      expect(capsule.headers.get("x-reach-run-hash")).toBe(want.runHash);
      expect(readArchive(new Uint8Array(await capsule.arrayBuffer())).has("capsule.json")).toBe(true);
    }
    const terminal = await t.db.query<{ run_id: string; n: number }>(
      "SELECT run_id::text AS run_id, count(*)::int AS n FROM reach_wasm.run_events WHERE event_type IN ('run_completed', 'run_failed', 'run_cancelled') GROUP BY run_id",
    );
    expect(terminal.length).toBe(RUNS);
    expect(terminal.every((row) => row.n === 1)).toBe(true); // each run ended exactly once
    const distinct = new Set([...expected.values()].map((e) => e.runHash));
    const [{ c }] = (await t.db.query<{ c: number }>("SELECT count(*)::int AS c FROM reach_wasm.capsules")) as [{ c: number }];
    expect(c).toBe(distinct.size); // one capsule per run hash
    const again = await t.db.query<{ attempts: number }>("SELECT attempts FROM reach_wasm.runs WHERE id = ANY($1::uuid[])", [orphans]);
    expect(again.every((row) => row.attempts >= 2)).toBe(true); // the dead worker's runs were taken up again
    expect((await t.db.query("SELECT 1 FROM reach_wasm.incidents")).length).toBe(0);
  }, 600_000);
});

describe.skipIf(pg === null)("run service on PostgreSQL across processes", () => {
  it("the API process has no worker; worker processes run the pack and its events stream live through NOTIFY", async () => {
    const f = new FormData();
    f.set("pack", new Blob([spinPackArchive(3, 1000, "cross") as Uint8Array<ArrayBuffer>]), "cross.tar.gz");
    f.set("request", JSON.stringify({ seed: "5" }));
    const res = await api("POST", "/runs", f);
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const events = await (await api("GET", `/runs/${runId}/events`)).text();
    expect(events.match(/event: step_completed/g)?.length).toBe(3);
    expect(events.match(/event: run_completed/g)?.length).toBe(1);
    const record = (await (await api("GET", `/runs/${runId}`)).json()) as Json;
    expect(record["status"]).toBe("COMPLETED");
    expect(workers.slice(1).map((w) => `${hostname()}:${w.pid}`)).toContain(record["worker"]);
  }, 120_000);

  it("cancels a tool that computes in a tight loop within a second: the worker's inline attempt moved it to an engine thread", async () => {
    const f = new FormData();
    f.set("pack", new Blob([spinPackArchive(1, 2_000_000_000, "tight") as Uint8Array<ArrayBuffer>]), "tight.tar.gz");
    const res = await api("POST", "/runs", f);
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    for (let i = 0; i < 600; i++) {
      const rows = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM reach_wasm.run_events WHERE run_id = $1 AND event_type = 'step_started'", [runId]);
      if (rows[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300)); // well past the inline budget: the tool computes on an engine thread now
    const t0 = performance.now();
    expect((await api("POST", `/runs/${runId}/cancel`)).status).toBeLessThan(300);
    let record: Json = {};
    for (let i = 0; i < 200 && record["status"] !== "ABORTED"; i++) {
      record = (await (await api("GET", `/runs/${runId}?wait=1`)).json()) as Json;
    }
    const seconds = (performance.now() - t0) / 1000;
    expect(record["status"]).toBe("ABORTED");
    expect(seconds).toBeLessThan(10); // the target is 1 s; 10x headroom for a loaded machine
    const capsule = await api("GET", `/runs/${runId}/capsule`);
    expect(capsule.headers.get("x-reach-run-hash")).toBe(record["runHash"]);
  }, 120_000);
});
