/**
 * The run service's tables (schema `reach_wasm`), the same SQL on a PostgreSQL server and on PGlite. pg-boss keeps
 * its own schema (`pgboss`) for the queue.
 *
 * - `runs`: one row per submitted run: tenant, request (and, with a requestId, the request's digest), status (seed 003 §3.1) and phase (seed 004), timestamps,
 *   the worker holding it and its heartbeat, the result, the run hash.
 * - `capsules`: capsule bytes, unique by run hash (two runs with the same run hash share one capsule).
 * - `run_events`: the live events of a run (seed 004 "Event Types"), numbered per run.
 * - `incidents`: determinism incidents (a run executed twice with different results), never dropped.
 * - `tokens` (SHA-256 of bearer tokens → tenant), `packs` (a tenant's registered packs by digest) and
 *   `pack_archives` (archive bytes by SHA-256).
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { SqlDatabase } from "./ports.ts";

/**
 * The version of the tables below; a database set up by a newer reach-wasm is refused, an older one is migrated.
 * 1: the first tables. 2: the JSON documents of runs and events (`request`, `progress`, `result`, `error`,
 * `run_events.data`) are `text` holding the exact JSON text the service wrote, instead of `jsonb` (which refuses
 * U+0000 and lone surrogates, reorders keys and rewrites numbers). 3: `runs.request_digest`, the digest of the
 * canonical request a `requestId` names (`request-digest.ts`), so that the requestId used again for a different request
 * is refused; runs recorded before it have none (NULL: a repeat of their requestId returns them, as before).
 */
export const SCHEMA_VERSION = 3;

const DDL = `
CREATE SCHEMA IF NOT EXISTS reach_wasm;
CREATE TABLE IF NOT EXISTS reach_wasm.schema_version (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS reach_wasm.tokens (
  token_hash text PRIMARY KEY,
  tenant text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS reach_wasm.pack_archives (
  archive_sha256 text PRIMARY KEY,
  bytes bytea NOT NULL,
  size int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS reach_wasm.packs (
  tenant text NOT NULL,
  pack_digest text NOT NULL,
  archive_sha256 text NOT NULL REFERENCES reach_wasm.pack_archives,
  pack_id text NOT NULL,
  pack_version text NOT NULL,
  signed boolean NOT NULL,
  signer text,
  registered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, pack_digest)
);
CREATE TABLE IF NOT EXISTS reach_wasm.capsules (
  run_hash text PRIMARY KEY,
  bytes bytea NOT NULL,
  size int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS reach_wasm.runs (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  tenant text NOT NULL,
  request_id text,
  request_digest text,
  pack_digest text NOT NULL,
  archive_sha256 text NOT NULL,
  pack_id text NOT NULL,
  pack_version text NOT NULL,
  request text NOT NULL,
  status text NOT NULL,
  phase text NOT NULL,
  job_id uuid NOT NULL,
  worker text,
  attempts int NOT NULL DEFAULT 0,
  cancel_requested_at timestamptz,
  heartbeat_at timestamptz,
  submitted_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  progress text NOT NULL DEFAULT '{"currentStepIndex":0,"totalSteps":0,"replansCount":0}',
  run_hash text,
  engine_run_id text,
  result text,
  error text,
  error_type text
);
ALTER TABLE reach_wasm.runs ADD COLUMN IF NOT EXISTS request_digest text;
CREATE UNIQUE INDEX IF NOT EXISTS runs_request_id ON reach_wasm.runs (tenant, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_tenant_seq ON reach_wasm.runs (tenant, seq);
CREATE INDEX IF NOT EXISTS runs_executing ON reach_wasm.runs (heartbeat_at) WHERE status = 'EXECUTING';
CREATE INDEX IF NOT EXISTS runs_run_hash ON reach_wasm.runs (run_hash);
CREATE TABLE IF NOT EXISTS reach_wasm.run_events (
  run_id uuid NOT NULL REFERENCES reach_wasm.runs ON DELETE CASCADE,
  seq int NOT NULL,
  attempt int NOT NULL,
  event_type text NOT NULL,
  at timestamptz NOT NULL,
  step_index int,
  tool_name text,
  data text,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS reach_wasm.incidents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id uuid NOT NULL,
  kind text NOT NULL,
  expected_run_hash text,
  actual_run_hash text,
  worker text,
  capsule bytea,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS incidents_run ON reach_wasm.incidents (run_id);
`;

/**
 * Version 1 → 2: the JSON columns become text. `jsonb::text` is PostgreSQL's rendering of the stored value (the
 * original bytes were never kept), valid JSON that reads back to the same value.
 */
const TO_TEXT = `
ALTER TABLE reach_wasm.runs ALTER COLUMN progress DROP DEFAULT;
ALTER TABLE reach_wasm.runs ALTER COLUMN request TYPE text USING request::text, ALTER COLUMN progress TYPE text USING progress::text,
  ALTER COLUMN result TYPE text USING result::text, ALTER COLUMN error TYPE text USING error::text;
ALTER TABLE reach_wasm.runs ALTER COLUMN progress SET DEFAULT '{"currentStepIndex":0,"totalSteps":0,"replansCount":0}';
ALTER TABLE reach_wasm.run_events ALTER COLUMN data TYPE text USING data::text
`;

const statements = (sql: string) => sql.split(";\n").map((s) => s.trim()).filter((s) => s !== "");

/**
 * Create the service's tables when missing, or migrate older ones (one process at a time: a transaction-scoped
 * advisory lock; the whole migration is one transaction).
 * @param db the open database
 * @throws ReachError `PROTO_VERSION_MISMATCH` when a newer reach-wasm set the database up
 * @returns once the tables exist
 * @example await migrate(db);
 */
export async function migrate(db: SqlDatabase): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(7411001)");
    for (const statement of statements(DDL)) await tx.query(statement);
    const rows = await tx.query<{ v: number | null }>("SELECT max(version)::int AS v FROM reach_wasm.schema_version");
    const found = rows[0]?.v ?? 0;
    if (found > SCHEMA_VERSION) {
      throw new ReachError("PROTO_VERSION_MISMATCH", `the service database ${db.where} was set up by a newer reach-wasm (tables version ${found}, this one knows ${SCHEMA_VERSION}); upgrade reach-wasm`);
    }
    const [json] = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'reach_wasm' AND data_type = 'jsonb'
         AND ((table_name = 'runs' AND column_name IN ('request', 'progress', 'result', 'error')) OR (table_name = 'run_events' AND column_name = 'data'))`,
    );
    if ((json?.n ?? 0) > 0) for (const statement of statements(TO_TEXT)) await tx.query(statement); // tables of version 1
    await tx.query("INSERT INTO reach_wasm.schema_version (version) VALUES ($1) ON CONFLICT DO NOTHING", [SCHEMA_VERSION]);
  });
}
