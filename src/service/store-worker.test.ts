// The workers' side of the store on PGlite: one capsule per run hash, a second execution compared (a difference is a
// determinism incident, kept with its capsule), and the runs of a silent worker re-queued or given up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, utf8 } from "../canonical/sha256.ts";
import { openRunQueue, openDatabase } from "../../tests/support/platform.ts";
import type { RunQueue, SqlDatabase } from "./ports.ts";
import { migrate } from "./schema.ts";
import { submitRun } from "./store-runs.ts";
import { claimRuns, finishRun, requeueStale } from "./store-worker.ts";
import type { RunEnd } from "./store-worker.ts";
import { randomRunId } from "./tokens.ts";

let db: SqlDatabase;
let queue: RunQueue;
beforeAll(async () => {
  db = await openDatabase({ memory: true });
  await migrate(db);
  queue = await openRunQueue(db, { maintenance: false });
}, 120_000);
afterAll(async () => {
  await queue?.stop();
  await db?.close();
});

const PACK = { digest: "d".repeat(64), archiveSha256: "a".repeat(64), id: "p", version: "1.0.0" };
const counters = { currentStepIndex: 0, totalSteps: 1, replansCount: 0 };
function end(runHash: string, capsule: string): RunEnd {
  return { status: "COMPLETED", runHash, engineRunId: "e", capsule: utf8(capsule), result: { runHash }, error: null, events: [{ eventType: "run_completed" }], counters };
}

async function queuedAndClaimed(worker: string): Promise<{ runId: string; attempt: number }> {
  const runId = randomRunId();
  await submitRun(db, queue, { id: runId, tenant: "t", pack: PACK, options: {} });
  const jobs = await queue.take(10);
  const claimed = await claimRuns(db, worker, jobs);
  expect(claimed.map((c) => c.runId)).toEqual([runId]);
  return { runId, attempt: claimed[0]!.attempt };
}

const count = async (sql: string, params: unknown[]) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;

describe("storing a run's end", () => {
  it("keeps one capsule per run hash and one end per run; an equal second execution is no incident", async () => {
    const { runId, attempt } = await queuedAndClaimed("w1");
    const hash = sha256Hex("same");
    expect(await finishRun(db, "w1", { runId, attempt, seq: 0 }, end(hash, "bytes"))).toEqual({ recorded: true, incident: null });
    expect(await finishRun(db, "w2", { runId, attempt: 2, seq: 5 }, end(hash, "bytes"))).toEqual({ recorded: false, incident: null });
    expect(await count("reach_wasm.capsules WHERE run_hash = $1", [hash])).toBe(1);
    expect(await count("reach_wasm.run_events WHERE run_id = $1 AND event_type = 'run_completed'", [runId])).toBe(1);
    expect(await count("reach_wasm.incidents WHERE run_id = $1", [runId])).toBe(0);
  });

  it("records a second execution with another run hash as an incident, and keeps its capsule", async () => {
    const { runId, attempt } = await queuedAndClaimed("w1");
    const first = sha256Hex("first");
    const second = sha256Hex("second");
    await finishRun(db, "w1", { runId, attempt, seq: 0 }, end(first, "one"));
    expect(await finishRun(db, "w2", { runId, attempt: 2, seq: 5 }, end(second, "two"))).toEqual({ recorded: false, incident: "run_hash_mismatch" });
    const [row] = await db.query("SELECT kind, expected_run_hash, actual_run_hash, worker FROM reach_wasm.incidents WHERE run_id = $1", [runId]);
    expect(row).toEqual({ kind: "run_hash_mismatch", expected_run_hash: first, actual_run_hash: second, worker: "w2" });
    expect(await count("reach_wasm.capsules WHERE run_hash = $1", [second])).toBe(1);
    expect((await db.query("SELECT run_hash FROM reach_wasm.runs WHERE id = $1", [runId]))[0]).toEqual({ run_hash: first });
  });

  it("records equal run hashes with different capsule bytes as an incident, with the bytes", async () => {
    const a = await queuedAndClaimed("w1");
    const b = await queuedAndClaimed("w1");
    const hash = sha256Hex("shared");
    await finishRun(db, "w1", { runId: a.runId, attempt: a.attempt, seq: 0 }, end(hash, "original"));
    expect(await finishRun(db, "w1", { runId: b.runId, attempt: b.attempt, seq: 0 }, end(hash, "tampered"))).toEqual({ recorded: true, incident: "capsule_mismatch" });
    const [row] = await db.query<{ kind: string; capsule: Uint8Array }>("SELECT kind, capsule FROM reach_wasm.incidents WHERE run_id = $1", [b.runId]);
    expect(row!.kind).toBe("capsule_mismatch");
    expect(new TextDecoder().decode(row!.capsule)).toBe("tampered");
  });
});

describe("silent workers", () => {
  it("re-queues the runs of a worker that stopped heartbeating, under a new job; the old job claims nothing", async () => {
    const { runId } = await queuedAndClaimed("ghost");
    const [{ job_id: oldJob }] = (await db.query<{ job_id: string }>("SELECT job_id::text AS job_id FROM reach_wasm.runs WHERE id = $1", [runId])) as [{ job_id: string }];
    expect((await requeueStale(db, queue, 60, 3)).requeued).toEqual([]); // not stale yet
    await new Promise((r) => setTimeout(r, 1200));
    expect((await requeueStale(db, queue, 1, 3)).requeued).toEqual([runId]);
    expect(await claimRuns(db, "late", [{ jobId: oldJob, runId }])).toEqual([]);
    const jobs = await queue.take(10);
    expect(jobs.map((j) => j.runId)).toEqual([runId]);
    const again = await claimRuns(db, "w2", jobs);
    expect(again.map((c) => [c.runId, c.attempt])).toEqual([[runId, 2]]);
  });

  it("gives a run up after it lost maxAttempts workers", async () => {
    const { runId } = await queuedAndClaimed("ghost");
    await new Promise((r) => setTimeout(r, 1200));
    expect((await requeueStale(db, queue, 1, 1)).givenUp).toContain(runId);
    const [row] = await db.query<{ status: string; error: string }>("SELECT status, error FROM reach_wasm.runs WHERE id = $1", [runId]);
    expect([row!.status, (JSON.parse(row!.error) as { code: string }).code]).toEqual(["FAILED", "EXEC_RESOURCE_UNAVAILABLE"]);
    expect(await count("reach_wasm.run_events WHERE run_id = $1 AND event_type = 'run_failed'", [runId])).toBe(1);
  });
});
