/**
 * Artifacts and per-step evidence (seed 004 "Evidence Per Step", "Artifact Structure"; seed 001 §7).
 * @module
 */
import { z } from "zod";
import { ErrorDetailsSchema } from "./error-details.ts";
import { entryPath, identifier, sha256Hex, strictObject, timestamp, toolName, uuid } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import { typedSchema } from "./_lazy.ts";

/**
 * A file a tool produced. Unlike seed 004 (absolute path), `path` is relative to the run's workspace (seed 003
 * §8.2 "Normalized Paths"), and the content is identified by `sha256`. `createdAt` is virtual-clock time.
 */
export const ArtifactInfoSchema: () => StrictObject<{
  artifactId: z.ZodString;
  name: z.ZodString;
  type: z.ZodString;
  mimeType: z.ZodString;
  path: z.ZodString;
  sizeBytes: z.ZodInt;
  sha256: z.ZodString;
  createdAt: z.ZodISODateTime;
}> = typedSchema(() => strictObject("artifact", {
  artifactId: uuid(),
  name: z.string().min(1).max(255),
  type: z.string().min(1),
  mimeType: z.string().regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:;.*)?$/, {
    error: "expected a MIME type such as application/json",
  }),
  path: entryPath(),
  sizeBytes: z.int().min(0),
  sha256: sha256Hex(),
  createdAt: timestamp(),
}).meta({ id: "ArtifactInfo", description: "A file produced by a tool (seed 004 ArtifactInfo)" }));

/** Step status (seed 004). */
export const EvidenceStatusSchema: () => z.ZodEnum<{ pending: "pending"; running: "running"; completed: "completed"; failed: "failed"; skipped: "skipped" }> = typedSchema(() => z.enum(["pending", "running", "completed", "failed", "skipped"]));

/**
 * Evidence for one step (seed 004 `RunEvidence`; seed 001 §7 `TASK_<id>.json`). In the run files `durationMs` is a
 * real duration (a report, never hashed: seed 003 §3.3); in the capsule it is the step's virtual duration (from its
 * `run.step.started` to its end event), so the capsule stays a pure function of the run. `requestId` is the run's
 * correlation id; `errorStack` the guest's stack (QuickJS frames, a Python traceback) of a failed tool, never the
 * host's. `retryCount` stays 0 unless the plan allowed a retry (seed 001 "no silent retries"); `replanEvents` names
 * the replans this step caused. A step of the final plan that never ran has `status: "skipped"`.
 */
export const RunEvidenceSchema: () => StrictObject<{
  stepId: z.ZodString;
  toolName: z.ZodString;
  input: z.ZodUnknown;
  output: z.ZodUnknown;
  schemaValidation: z.ZodEnum<{ pass: "pass"; fail: "fail" }>;
  requestId: z.ZodString;
  durationMs: z.ZodInt;
  retryCount: z.ZodInt;
  replanEvents: z.ZodArray<z.ZodString>;
  status: ReturnType<typeof EvidenceStatusSchema>;
  artifacts: z.ZodArray<ReturnType<typeof ArtifactInfoSchema>>;
  errorStack: z.ZodOptional<z.ZodString>;
  error: z.ZodOptional<ReturnType<typeof ErrorDetailsSchema>>;
}> = typedSchema(() => strictObject("evidence", {
  stepId: identifier(),
  toolName: toolName(),
  input: z.unknown(),
  output: z.unknown(),
  schemaValidation: z.enum(["pass", "fail"]),
  requestId: z.string().min(1).max(128),
  durationMs: z.int().min(0),
  retryCount: z.int().min(0),
  replanEvents: z.array(z.string()),
  status: EvidenceStatusSchema(),
  artifacts: z.array(ArtifactInfoSchema()),
  errorStack: z.string().optional(),
  error: ErrorDetailsSchema().optional(),
}).meta({ description: "Evidence for one step (seed 004 RunEvidence)" }));

/** An artifact. */
export type ArtifactInfo = z.output<ReturnType<typeof ArtifactInfoSchema>>;
/** Step evidence. */
export type RunEvidence = z.output<ReturnType<typeof RunEvidenceSchema>>;
/** Evidence status. */
export type EvidenceStatus = z.output<ReturnType<typeof EvidenceStatusSchema>>;
