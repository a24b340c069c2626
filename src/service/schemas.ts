/**
 * The run service's HTTP documents as zod schemas: the single source of the request checks and of `/openapi.json`.
 * Requests are strict (an unknown field is an error, so a typo is never silently ignored).
 * @module
 */
import { z } from "zod";

/** Protocol states of a run (seed 003 §3.1) as the service reports them. */
export const RunStatusSchema = z.enum(["PENDING", "EXECUTING", "COMPLETED", "FAILED", "ABORTED"]);
/** A run's status. */
export type ServiceRunStatus = z.infer<typeof RunStatusSchema>;
/** Terminal statuses. */
export const TERMINAL_STATUSES: readonly ServiceRunStatus[] = ["COMPLETED", "FAILED", "ABORTED"];

/** Seed 004's production-runner states, recorded as the run's `phase` (ARCHITECTURE "State machines"). */
export const RunPhaseSchema = z.enum(["queued", "running", "completed", "failed", "timeout", "cancelled"]);
/** A run's phase. */
export type RunPhase = z.infer<typeof RunPhaseSchema>;

const SHA256 = /^[0-9a-f]{64}$/;
/** A pack digest (64 lowercase hex, `reach-wasm pack validate --json` `packDigest`). */
export const PackDigestSchema = z.string().regex(SHA256, "a pack digest is 64 lowercase hex digits (see `reach-wasm pack validate --json`)");

/** What a run is asked to do, besides its pack. */
export const RunOptionsSchema = z.strictObject({
  input: z.json().optional().describe("the run input / objective (default {})"),
  seed: z.union([z.string().regex(/^(0|[1-9][0-9]{0,19})$/), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)]).optional().describe("decimal seed 0..2^64-1"),
  requestId: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/).optional().describe("correlation id; the same requestId with the same request returns the first run (200), with a different request is refused (409)"),
  approve: z.boolean().optional().describe("explicit approval of a risk-3 plan"),
  maxSteps: z.number().int().min(1).max(100).optional(),
  stepTimeoutMs: z.number().int().min(1).max(3_600_000).optional(),
});
/** Run options. */
export type RunOptions = z.infer<typeof RunOptionsSchema>;

/**
 * The values of the pack's declared secrets, by name: held in the service's memory for this run only (never stored,
 * never in the run record), so a run with secrets is executed by a worker of the service that accepted it.
 */
export const SecretValuesSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), z.string().min(1).max(65536)).describe("secret values by name (never stored)");

/** `POST /runs` with a JSON body: a registered pack by digest plus the options (and the secrets' values). */
export const SubmitRunSchema = RunOptionsSchema.extend({ pack: PackDigestSchema.describe("digest of a pack registered with POST /packs"), secrets: SecretValuesSchema.optional() });
/** The `request` part of a multipart submission: the options and the secrets' values. */
export const SubmitRunPartSchema = RunOptionsSchema.extend({ secrets: SecretValuesSchema.optional() });
/** A JSON run submission. */
export type SubmitRun = z.infer<typeof SubmitRunSchema>;

/** `POST /runs` as `multipart/form-data`: the pack archive and the options as JSON text. */
export const SubmitRunMultipartSchema = z.object({
  pack: z.string().describe("the pack as a .tar.gz (reach-wasm pack build), as a file part").meta({ format: "binary" }),
  request: z.string().optional().describe("the run options (input, seed, requestId, …) as JSON text"),
});

/** The answer to a submission. */
export const RunAcceptedSchema = z.strictObject({ runId: z.uuid(), status: RunStatusSchema, requestId: z.string().nullable() });

/** Error details inside a record (upstream `ErrorDetails`). */
export const RecordErrorSchema = z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional(), recoverable: z.boolean().optional(), retryAfter: z.number().optional() });

/** The run record (seed 004 `ProductionRun` fields where the service knows them, plus the protocol status). */
export const RunRecordSchema = z.strictObject({
  runId: z.uuid(),
  requestId: z.string().nullable(),
  tenant: z.string(),
  status: RunStatusSchema,
  phase: RunPhaseSchema,
  pack: z.strictObject({ digest: z.string(), id: z.string(), version: z.string() }),
  request: RunOptionsSchema.omit({ requestId: true }),
  submittedAt: z.string(),
  startedAt: z.string().nullable(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
  currentStepIndex: z.number().int(),
  totalSteps: z.number().int(),
  replansCount: z.number().int(),
  attempts: z.number().int().describe("how many times a worker started the run (more than one after a worker died)"),
  worker: z.string().nullable(),
  cancelRequested: z.boolean(),
  runHash: z.string().nullable(),
  engineRunId: z.string().nullable().describe("the run id inside the capsule (derived from the input hash)"),
  result: z.record(z.string(), z.unknown()).nullable().describe("the engine's result document (result.json)"),
  error: RecordErrorSchema.nullable(),
  errorType: z.enum(["PLANNING_ERROR", "EXECUTION_ERROR", "TIMEOUT_ERROR", "CANCELLED"]).nullable(),
  capsule: z.strictObject({ url: z.string(), size: z.number().int() }).nullable(),
  incidents: z.number().int().describe("determinism incidents recorded for this run (0 when every execution agreed)"),
});
/** A run record. */
export type RunRecord = z.infer<typeof RunRecordSchema>;

/** `GET /runs` query. */
export const ListRunsQuerySchema = z.strictObject({
  status: RunStatusSchema.optional(),
  pack: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/).optional().describe("a pack id (e.g. hello) or a pack digest"),
  cursor: z.string().regex(/^[0-9]{1,18}$/).optional().describe("nextCursor of the previous page"),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

/** A page of runs, newest first. */
export const RunListSchema = z.strictObject({ runs: z.array(RunRecordSchema), nextCursor: z.string().nullable() });

/** The answer to `POST /packs`. */
export const PackRegisteredSchema = z.strictObject({
  digest: z.string(),
  id: z.string(),
  version: z.string(),
  signed: z.boolean(),
  trusted: z.boolean(),
  signer: z.string().nullable(),
  size: z.number().int(),
});
/** A registered pack. */
export type PackRegistered = z.infer<typeof PackRegisteredSchema>;

/** One live event (seed 004 `RunEvent`), the `data:` of each Server-Sent Event. */
export const ServiceEventSchema = z.strictObject({
  eventId: z.uuid(),
  runId: z.uuid(),
  eventType: z.string(),
  timestamp: z.string(),
  sequence: z.number().int(),
  attempt: z.number().int(),
  stepIndex: z.number().int().optional(),
  toolName: z.string().optional(),
  data: z.unknown().optional(),
});
/** A live event. */
export type ServiceEvent = z.infer<typeof ServiceEventSchema>;
