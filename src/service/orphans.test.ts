// The embedded store taken over from a process that ended mid-run (SIGKILL: its data directory's lock names a pid
// that is gone, its runs are still EXECUTING under its worker): the next service on that directory hands those runs
// back to the queue as it starts — the stale path's re-queue, without waiting for the stale limit (an hour here) — so
// they end, once more executed, with the local run hash and a capsule that verifies and replays; a run that already
// lost every allowed worker ends FAILED as the stale path ends it. A shared (PostgreSQL) store is left alone: there,
// other live workers may hold the runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { replayCapsule } from "../engine/replay.ts";
import { verifyRunCapsule } from "../engine/verify.ts";
import { openDatabase, openRunQueue } from "../../tests/support/platform.ts";
import { env, localRunHash, packArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import type { SqlDatabase } from "./ports.ts";
import { claimRuns, flushEvents } from "./store-worker.ts";

type Json = Record<string, unknown>;
const HOUR = 3600;

async function call(t: TestService, method: string, path: string, body?: BodyInit, type?: string): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${t.url}${path}`, { method, ...(body === undefined ? {} : { body }), headers: type === undefined ? {} : { "content-type": type } });
  const text = await res.text();
  return { status: res.status, json: text.startsWith("{") ? (JSON.parse(text) as Json) : {} };
}

/** Register `hello` and submit runs of it (seeds given), on a service without workers: they stay queued. */
async function submitHello(t: TestService, seeds: readonly string[]): Promise<string[]> {
  const up = await call(t, "POST", "/packs", (await packArchive("hello")) as Uint8Array<ArrayBuffer>, "application/gzip");
  expect(up.status).toBe(201);
  const ids: string[] = [];
  for (const seed of seeds) {
    const s = await call(t, "POST", "/runs", JSON.stringify({ pack: up.json["digest"], seed }), "application/json");
    expect(s.status).toBe(202);
    ids.push(s.json["runId"] as string);
  }
  return ids;
}

/** Take and claim every queued run as worker `worker` would, with a first event of each (a run in flight). */
async function claimAll(t: TestService, worker: string): Promise<void> {
  const claimed = await claimRuns(t.db, worker, await t.queue.take(10));
  for (const c of claimed) await flushEvents(t.db, { runId: c.runId, attempt: c.attempt, seq: c.nextSeq }, [{ eventType: "run_started" }], { currentStepIndex: 0, totalSteps: 1, replansCount: 0 });
}

const row = async (db: SqlDatabase, id: string) =>
  (await db.query<{ status: string; attempts: number; worker: string | null; error: string | null }>("SELECT status, attempts, worker, error FROM reach_wasm.runs WHERE id = $1", [id]))[0]!;

/** The run's end, waited for (the deadline only turns a hang into a failure; the stale limit is an hour). */
async function ended(t: TestService, id: string): Promise<Json> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const r = await call(t, "GET", `/runs/${id}?wait=5`);
    if (r.json["status"] !== "PENDING" && r.json["status"] !== "EXECUTING") return r.json;
    if (performance.now() > deadline) throw new Error(`run ${id} still ${String(r.json["status"])}: not handed back at start`);
  }
}

/** The pid of a process that has ended (as the lock of a SIGKILLed holder names one). */
function deadPid(): number {
  const p = spawnSync(process.execPath, ["-e", ""]);
  expect(p.status).toBe(0);
  return p.pid;
}

describe("the embedded store after its holder was killed mid-run", () => {
  const dir = mkdtempSync(join(tmpdir(), "reach-orphans-"));
  const open: TestService[] = [];
  afterAll(async () => {
    for (const t of open) await t.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it("hands its EXECUTING runs back to the queue at start, without waiting for the stale limit; they end once more executed, capsules replaying", async () => {
    const data = join(dir, "data");
    // the process that held the store: its worker took the runs and died with them in flight
    const first = await startTestService({ db: await openDatabase({ dataDir: data }), workers: 0, worker: { staleSeconds: HOUR } });
    open.push(first);
    const [again, spent] = await submitHello(first, ["7", "8"]) as [string, string];
    const dead = deadPid();
    await claimAll(first, `host:${dead}`);
    await first.db.query("UPDATE reach_wasm.runs SET attempts = 3 WHERE id = $1", [spent]); // it lost two workers before
    await first.close();
    open.pop();
    writeFileSync(join(data, "reach-wasm.lock"), `${dead}\n`); // what a SIGKILLed holder leaves behind
    // the next service on the directory, with a stale limit no run could wait out here
    const db = await openDatabase({ dataDir: data });
    const lines: string[] = [];
    const t = await startTestService({ db, queue: await openRunQueue(db, { maintenance: false }), worker: { staleSeconds: HOUR, heartbeatMs: 200, pollMs: 500 }, log: (l) => lines.push(l) });
    open.push(t);
    const record = await ended(t, again);
    expect([record["status"], record["attempts"], record["runHash"]]).toEqual(["COMPLETED", 2, await localRunHash("hello", { seed: "7" })]);
    const res = await fetch(`${t.url}/runs/${again}/capsule`);
    expect(res.status).toBe(200);
    const capsule = readRunCapsule(new Uint8Array(await res.arrayBuffer()));
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    const replay = await replayCapsule(capsule, env);
    expect([replay.matches, replay.runHash]).toEqual([true, record["runHash"]]);
    // one execution recorded: the dead attempt's event kept, one end, of the second attempt
    const events = await t.db.query<{ event_type: string; attempt: number }>("SELECT event_type, attempt FROM reach_wasm.run_events WHERE run_id = $1 ORDER BY seq", [again]);
    expect(events[0]).toEqual({ event_type: "run_started", attempt: 1 });
    expect(events.filter((e) => e.event_type === "run_completed")).toEqual([{ event_type: "run_completed", attempt: 2 }]);
    // the run that lost its third worker ends as the stale path ends it: FAILED, once, not executed again
    const given = await ended(t, spent);
    const spentRow = await row(t.db, spent);
    expect([given["status"], spentRow.attempts, (JSON.parse(spentRow.error!) as { code: string; message: string }).code]).toEqual(["FAILED", 3, "EXEC_RESOURCE_UNAVAILABLE"]);
    expect((JSON.parse(spentRow.error!) as { message: string }).message).toMatch(/stopped responding 3 times/);
    const failed = await t.db.query("SELECT attempt FROM reach_wasm.run_events WHERE run_id = $1 AND event_type = 'run_failed'", [spent]);
    expect(failed).toEqual([{ attempt: 3 }]);
    expect(lines.join("\n")).toMatch(/re-queued 1 run\(s\) left executing by the embedded store's previous process/);
  }, 120_000);

  it("hands them back on a service without workers too: the records say queued, not executing under a dead worker", async () => {
    const data = join(dir, "no-workers");
    const first = await startTestService({ db: await openDatabase({ dataDir: data }), workers: 0 });
    open.push(first);
    const [id] = await submitHello(first, ["10"]) as [string];
    const dead = deadPid();
    await claimAll(first, `host:${dead}`);
    await first.close();
    open.pop();
    writeFileSync(join(data, "reach-wasm.lock"), `${dead}\n`);
    const db = await openDatabase({ dataDir: data });
    const t = await startTestService({ db, queue: await openRunQueue(db, { maintenance: false }), workers: 0, worker: { staleSeconds: HOUR } });
    open.push(t);
    const r = await row(t.db, id);
    expect([r.status, r.worker, r.attempts]).toEqual(["PENDING", null, 1]);
    expect((await t.queue.take(10)).map((j) => j.runId)).toEqual([id]); // under a new job, offered again
  }, 120_000);

  it("leaves the runs of a shared store's other workers alone (they may be alive): only the stale limit re-queues them", async () => {
    const base = await openDatabase({ memory: true });
    const shared: SqlDatabase = { ...base, kind: "postgres", where: "a shared server (test)" };
    const t = await startTestService({ db: shared, queue: await openRunQueue(shared, { maintenance: false }), workers: 0, worker: { staleSeconds: HOUR } });
    open.push(t);
    const [id] = await submitHello(t, ["9"]) as [string];
    await claimAll(t, "elsewhere:1");
    const second = await startTestService({ db: shared, queue: t.queue, worker: { staleSeconds: HOUR, heartbeatMs: 200, pollMs: 500 } });
    const r = await row(shared, id);
    await second.svc.close(0);
    expect([r.status, r.worker, r.attempts]).toEqual(["EXECUTING", "elsewhere:1", 1]);
  }, 120_000);
});
