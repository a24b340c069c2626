// The run service and its database's failures, on PGlite with a switch that makes every statement fail as an
// unavailable database does (the platform's "store unavailable" ReachError): requests during the outage get 503 with
// Retry-After; a run whose end cannot be stored is stored once the database is back, executed once, its events kept;
// a store that refuses a run's end (the same failure every time) ends it FAILED with that refusal, never re-executed;
// and PGlite's own files going away surfaces as 503, not as a crash. Real PostgreSQL restarts: tests/service-outage.test.ts.
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runEngine } from "../engine/engine.ts";
import { openRunQueue, openDatabase } from "../../tests/support/platform.ts";
import type { SqlDatabase, SqlExecutor } from "./ports.ts";
import { ReachError } from "../protocol/errors.ts";
import { env, localRunHash, packArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { ServiceClient } from "./client.ts";
import { outcomeOf } from "./engine-adapter.ts";
import type { runOnEngine } from "./engine-adapter.ts";
import { migrate } from "./schema.ts";

/** A database that can be switched off (every statement fails as an unavailable one), and poisoned statements. */
function switchable(db: SqlDatabase) {
  let down = false;
  let since = performance.now();
  const endFailures = { n: 0 };
  const check = (text: string, params?: readonly unknown[]) => {
    if (down) {
      if (text.includes("WITH cap AS")) endFailures.n++;
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", "the service database (test) is unavailable (switched off); retry in a few seconds", { retryAfter: 2000, details: { storeUnavailable: true } });
    }
    if (JSON.stringify(params ?? []).includes("poison-pill")) throw Object.assign(new Error("unsupported Unicode escape sequence"), { code: "22P05" });
  };
  const on = (x: SqlExecutor): SqlExecutor => ({
    query: async (text, params) => {
      check(text, params);
      return await x.query(text, params);
    },
  });
  const wrapped: SqlDatabase = {
    kind: db.kind,
    where: db.where,
    ...on(db),
    exec: async (text) => {
      check(text);
      return await db.exec(text);
    },
    transaction: async (fn) => {
      check("BEGIN");
      return await db.transaction((tx) => fn(on(tx)));
    },
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    close: () => db.close(),
    upForMs: () => (down ? 0 : performance.now() - since),
  };
  return { db: wrapped, endFailures, set: (d: boolean) => ((down = d), (since = performance.now())) };
}

const until = async (cond: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  const deadline = performance.now() + 60_000; // only turns a hang into a failure
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("the run service while its database is away", () => {
  let base: SqlDatabase;
  let sw: ReturnType<typeof switchable>;
  let t: TestService;
  let digest: string;
  let hello: Awaited<ReturnType<typeof runEngine>>;
  const calls = new Map<string, number>();
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  /** A stand-in engine: the real `hello` outcome (a poisoned result for input {poison: true}), counted per seed. */
  const engine: typeof runOnEngine = async (_env, job, hooks) => {
    const seed = String(job.options.seed);
    calls.set(seed, (calls.get(seed) ?? 0) + 1);
    hooks.onProgress({ kind: "step", index: 0, total: 1, stepId: "count", tool: "wordcount", status: "started" });
    await gate;
    hooks.onProgress({ kind: "step", index: 0, total: 1, stepId: "count", tool: "wordcount", status: "completed", durationMs: 1 });
    const out = outcomeOf(hello);
    return (job.options.input as { poison?: boolean } | undefined)?.poison === true ? { ...out, result: { ...out.result, note: "poison-pill" } } : out;
  };

  beforeAll(async () => {
    hello = await runEngine(env, { pack: { archive: await packArchive("hello") }, seed: "1" });
    base = await openDatabase({ memory: true });
    await migrate(base);
    sw = switchable(base);
    const queue = await openRunQueue(sw.db, { maintenance: false });
    t = await startTestService({ db: sw.db, queue, worker: { engine, staleSeconds: 1, heartbeatMs: 100, pollMs: 200 } });
    const res = await fetch(`${t.url}/packs`, { method: "POST", headers: { "content-type": "application/gzip" }, body: (await packArchive("hello")) as Uint8Array<ArrayBuffer> });
    digest = ((await res.json()) as { digest: string }).digest;
  }, 120_000);
  afterAll(async () => {
    sw?.set(false);
    release();
    await t?.close();
  });

  const submit = async (options: Record<string, unknown>) => {
    const res = await fetch(`${t.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pack: digest, ...options }) });
    expect(res.status).toBe(202);
    return ((await res.json()) as { runId: string }).runId;
  };
  const row = async (id: string) => (await base.query<{ status: string; attempts: number; error: string | null; run_hash: string | null }>("SELECT status, attempts, error, run_hash FROM reach_wasm.runs WHERE id = $1", [id]))[0]!;

  it("answers 503 with Retry-After during the outage, and stores a run's end once it is back, executed once", async () => {
    gate = new Promise((r) => (release = r));
    const id = await submit({ seed: "1" });
    await until(() => calls.get("1") === 1, "the run to start");
    // an event stream open while the database answers…
    const reader = (await fetch(`${t.url}/runs/${id}/events`)).body!.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = "";
    while (!streamed.includes("event: step_started")) streamed += (await reader.read()).value ?? "";
    const consoleError = vi.spyOn(console, "error");
    sw.set(true);
    // …ends as when idle once it is away (the client resumes with Last-Event-ID), without a stack on stderr
    for (let r = await reader.read(); !r.done; r = await reader.read()) streamed += r.value;
    expect(streamed).not.toMatch(/event: error/);
    expect(consoleError).not.toHaveBeenCalled();
    consoleError.mockRestore();
    for (const [method, path] of [["GET", "/runs"], ["GET", `/runs/${id}`], ["GET", `/runs/${id}?wait=5`], ["GET", "/healthz"], ["POST", "/runs"]] as const) {
      const res = await fetch(`${t.url}${path}`, { method, ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: JSON.stringify({ pack: digest, seed: "2" }) } : {}) });
      const body = (await res.json()) as { error: { code: string } };
      expect([path, res.status, body.error.code], method).toEqual([path, 503, "EXEC_RESOURCE_UNAVAILABLE"]);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const told: string[] = [];
    const waiting = new ServiceClient({ server: t.url, onWait: (m) => told.push(m) }).waitForEnd(id); // as `submit --wait` does
    release(); // the run ends while the database is away; its worker keeps trying to store the end
    await until(() => sw.endFailures.n >= 3, "the worker to retry storing the end");
    sw.set(false);
    await until(async () => (await row(id)).status === "COMPLETED", "the end to be stored");
    expect([calls.get("1"), (await row(id)).attempts, (await row(id)).run_hash]).toEqual([1, 1, hello.runHash]);
    expect([(await waiting).status, told.length]).toEqual(["COMPLETED", 1]); // the client waited out the 503s
    const events = await base.query<{ event_type: string }>("SELECT event_type FROM reach_wasm.run_events WHERE run_id = $1 ORDER BY seq", [id]);
    const types = events.map((e) => e.event_type);
    expect(types.filter((e) => e === "run_completed")).toHaveLength(1);
    expect(types).toEqual(expect.arrayContaining(["step_started", "step_completed", "run_completed"])); // the events of the outage too
    await new Promise((r) => setTimeout(r, 1500)); // past the stale limit (1 s): still one execution, one attempt
    expect([calls.get("1"), (await row(id)).attempts]).toEqual([1, 1]);
  });

  it("ends a run FAILED with the store's refusal when it refuses the run's end, without executing it again", async () => {
    const id = await submit({ seed: "3", input: { poison: true } });
    await until(async () => !["PENDING", "EXECUTING"].includes((await row(id)).status), "the run to end");
    const r = await row(id);
    const error = JSON.parse(r.error!) as { code: string; message: string };
    expect([r.status, r.attempts, calls.get("3"), error.code]).toEqual(["FAILED", 1, 1, "EXEC_OUTPUT_INVALID"]);
    expect(error.message).toMatch(/refused to keep its end: unsupported Unicode escape sequence \(SQLSTATE 22P05\); the run was not retried/);
    expect(error.message).not.toMatch(/stopped responding/);
  });
});

describe("PGlite's files going away", () => {
  const dir = mkdtempSync(join(tmpdir(), "reach-pglite-gone-"));
  let t: TestService;
  beforeAll(async () => {
    const db = await openDatabase({ dataDir: dir });
    await migrate(db);
    t = await startTestService({ db, queue: await openRunQueue(db, { maintenance: false }) });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.moved`, { recursive: true, force: true });
  });

  it("surfaces as 503 with Retry-After (never a crash or a 500), and the service works again once they are back", async () => {
    renameSync(join(dir, "pgdata"), join(dir, "pgdata.moved"));
    await expect(t.db.exec("CHECKPOINT")).rejects.toMatchObject({ code: "EXEC_RESOURCE_UNAVAILABLE", details: { storeUnavailable: true }, retryAfter: 2000 });
    const statuses = new Set<number>();
    for (const path of ["/runs", "/healthz", "/runs/00000000-0000-4000-8000-000000000000"]) {
      const res = await fetch(`${t.url}${path}`);
      statuses.add(res.status);
      if (res.status === 503) expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect([...statuses].every((s) => s === 503 || s < 500), [...statuses].join()).toBe(true);
    expect(statuses.has(503)).toBe(true);
    renameSync(join(dir, "pgdata.moved"), join(dir, "pgdata"));
    const up = await fetch(`${t.url}/packs`, { method: "POST", headers: { "content-type": "application/gzip" }, body: (await packArchive("hello")) as Uint8Array<ArrayBuffer> });
    expect(up.status).toBe(201);
    const digest = ((await up.json()) as { digest: string }).digest;
    const s = await fetch(`${t.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pack: digest, seed: "5" }) });
    const runId = ((await s.json()) as { runId: string }).runId;
    const done = (await (await fetch(`${t.url}/runs/${runId}?wait=60`)).json()) as { status: string; runHash: string };
    expect([done.status, done.runHash]).toEqual(["COMPLETED", await localRunHash("hello", { seed: "5" })]);
  }, 120_000);
});
