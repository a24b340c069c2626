// The service tables' versions: a database of version 1 (JSON documents in jsonb columns) is migrated to version 2
// (text holding the JSON text) on start, its rows kept and read back as the same values; one of version 2 gets the
// runs' request digest column, its runs (no digest) answering their requestId as before; a database of a newer
// version is refused. On PGlite, and on PostgreSQL when $REACH_WASM_TEST_PG_URL is set.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../tests/support/platform.ts";
import type { RunQueue, SqlDatabase } from "./ports.ts";
import { freshPostgres } from "../../tests/support/service.ts";
import { getRun, readEvents, submitRun } from "./store-runs.ts";
import { SCHEMA_VERSION, migrate } from "./schema.ts";

const stores: [string, () => Promise<SqlDatabase>][] = [["PGlite", () => openDatabase({ memory: true })]];
const pgUrl = process.env["REACH_WASM_TEST_PG_URL"];
if (pgUrl !== undefined && pgUrl !== "") stores.push(["PostgreSQL", async () => openDatabase({ url: await freshPostgres(pgUrl, "reach_wasm_schema") })]);

/** Turn freshly made tables back into version 1's: the JSON columns jsonb, the version 1. */
async function asVersion1(db: SqlDatabase): Promise<void> {
  await db.exec(`
    ALTER TABLE reach_wasm.runs ALTER COLUMN progress DROP DEFAULT;
    ALTER TABLE reach_wasm.runs ALTER COLUMN request TYPE jsonb USING request::jsonb, ALTER COLUMN progress TYPE jsonb USING progress::jsonb,
      ALTER COLUMN result TYPE jsonb USING result::jsonb, ALTER COLUMN error TYPE jsonb USING error::jsonb;
    ALTER TABLE reach_wasm.runs ALTER COLUMN progress SET DEFAULT '{"currentStepIndex":0,"totalSteps":0,"replansCount":0}'::jsonb;
    ALTER TABLE reach_wasm.run_events ALTER COLUMN data TYPE jsonb USING data::jsonb;
    DELETE FROM reach_wasm.schema_version;
    INSERT INTO reach_wasm.schema_version (version) VALUES (1);
  `);
}

describe.each(stores)("the service tables on %s", (_name, open) => {
  it("migrates a version 1 database to text columns, keeping its runs and events", async () => {
    const db = await open();
    try {
      await migrate(db);
      await asVersion1(db);
      const id = "6f1c0a52-0000-4000-8000-000000000001";
      await db.query(
        `INSERT INTO reach_wasm.runs (id, tenant, pack_digest, archive_sha256, pack_id, pack_version, request, status, phase, job_id, result, error)
         VALUES ($1, 't', $2, $2, 'p', '1.0.0', $3::jsonb, 'FAILED', 'failed', $1, $4::jsonb, $5::jsonb)`,
        [id, "d".repeat(64), JSON.stringify({ input: { b: 1, a: [2.5, "é"] }, seed: "7" }), JSON.stringify({ status: "FAILED" }), JSON.stringify({ code: "EXEC_TOOL_FAILED", message: "no" })],
      );
      await db.query("INSERT INTO reach_wasm.run_events (run_id, seq, attempt, event_type, at, data) VALUES ($1, 0, 1, 'run_failed', now(), $2::jsonb)", [id, JSON.stringify({ why: "x" })]);
      await migrate(db);
      const types = await db.query<{ data_type: string }>(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = 'reach_wasm' AND column_name IN ('request', 'progress', 'result', 'error', 'data') AND table_name IN ('runs', 'run_events')",
      );
      expect(types.map((t) => t.data_type)).toEqual(["text", "text", "text", "text", "text"]);
      expect((await db.query<{ v: number }>("SELECT max(version)::int AS v FROM reach_wasm.schema_version"))[0]!.v).toBe(SCHEMA_VERSION);
      const record = (await getRun(db, "t", id))!;
      expect([record.request, record.result, record.error, record.totalSteps]).toEqual([{ input: { a: [2.5, "é"], b: 1 }, seed: "7" }, { status: "FAILED" }, { code: "EXEC_TOOL_FAILED", message: "no" }, 0]);
      expect((await readEvents(db, id, -1, 10)).map((e) => e.data)).toEqual([{ why: "x" }]);
      await migrate(db); // again: nothing left to do
    } finally {
      await db.close();
    }
  }, 120_000);

  it("migrates a version 2 database: runs get a request digest column, and a run recorded before keeps answering its requestId", async () => {
    const db = await open();
    try {
      await migrate(db);
      await db.exec("ALTER TABLE reach_wasm.runs DROP COLUMN request_digest; DELETE FROM reach_wasm.schema_version; INSERT INTO reach_wasm.schema_version (version) VALUES (2)");
      const id = "6f1c0a52-0000-4000-8000-000000000002";
      await db.query(
        `INSERT INTO reach_wasm.runs (id, tenant, request_id, pack_digest, archive_sha256, pack_id, pack_version, request, status, phase, job_id)
         VALUES ($1, 't', 'r-old', $2, $2, 'p', '1.0.0', $3, 'PENDING', 'queued', $1)`,
        [id, "d".repeat(64), JSON.stringify({ seed: "7" })],
      );
      await migrate(db);
      expect((await db.query<{ v: number }>("SELECT max(version)::int AS v FROM reach_wasm.schema_version"))[0]!.v).toBe(SCHEMA_VERSION);
      expect(await db.query("SELECT request_digest FROM reach_wasm.runs WHERE id = $1", [id])).toEqual([{ request_digest: null }]);
      const pack = { digest: "d".repeat(64), archiveSha256: "d".repeat(64), id: "p", version: "1.0.0" };
      const noQueue = { enqueue: () => Promise.reject(new Error("no new run was expected")) } as unknown as RunQueue;
      const again = await submitRun(db, noQueue, { id: "6f1c0a52-0000-4000-8000-000000000003", tenant: "t", pack, options: { requestId: "r-old", seed: "8" } });
      expect(again).toEqual({ runId: id, status: "PENDING", existed: true });
    } finally {
      await db.close();
    }
  }, 120_000);

  it("refuses a database set up by a newer reach-wasm", async () => {
    const db = await open();
    try {
      await migrate(db);
      await db.query("INSERT INTO reach_wasm.schema_version (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
      await expect(migrate(db)).rejects.toMatchObject({ code: "PROTO_VERSION_MISMATCH" });
    } finally {
      await db.close();
    }
  }, 120_000);
});
