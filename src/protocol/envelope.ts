/**
 * The executor's contract: `ExecutionEnvelope` in, `ExecutionResult` out (seed 000 §3.1, §3.2; seed 002
 * `insufficient`).
 * @module
 */
import { z } from "zod";
import { ErrorDetailsSchema } from "./error-details.ts";
import { ArtifactInfoSchema } from "./evidence.ts";
import { jsonObject, nonEmpty, strictObject, toolName } from "./_common.ts";

/** One side-effecting tool call, as handed to the executor (seed 000 §3.1). */
export const ExecutionEnvelopeSchema = strictObject("envelope", {
  id: nonEmpty(),
  task_id: nonEmpty(),
  tool: toolName(),
  arguments: jsonObject(),
  context: strictObject("envelope.context", {
    session_id: nonEmpty(),
    permissions: z.array(z.string()),
  }),
  timeout_ms: z.int().min(1),
}).meta({ description: "An ExecutionEnvelope (seed 000 §3.1)" });

/** Unhashed measurements of one execution; `duration_ms` is required, other numbers may be added. */
export const ExecutionMetricsSchema = z.looseObject({ duration_ms: z.int().min(0) });

const common = {
  envelope_id: nonEmpty(),
  artifacts: z.array(ArtifactInfoSchema).optional(),
  metrics: ExecutionMetricsSchema.optional(),
};

/** A successful execution: `output` holds the tool's result; there is no `error`. */
export const ExecutionSuccessSchema = strictObject("result", {
  ...common,
  status: z.literal("success"),
  output: z.unknown().optional(),
}).meta({ id: "ExecutionSuccess" });

/** A failed execution (`failure`: the tool reported failure; `error`: the executor or sandbox failed). */
export const ExecutionFailureSchema = strictObject("result", {
  ...common,
  status: z.enum(["failure", "error"]),
  output: z.unknown().optional(),
  error: ErrorDetailsSchema,
}).meta({ id: "ExecutionFailure" });

/** The step needs more than one tool call (seed 002 "`{ status: insufficient }` for multi-step needs"). */
export const ExecutionInsufficientSchema = strictObject("result", {
  ...common,
  status: z.literal("insufficient"),
  output: z.unknown().optional(),
  error: ErrorDetailsSchema.optional(),
}).meta({ id: "ExecutionInsufficient" });

/** The executor's answer (seed 000 §3.2), discriminated by `status`. */
export const ExecutionResultSchema = z
  .discriminatedUnion("status", [ExecutionSuccessSchema, ExecutionFailureSchema, ExecutionInsufficientSchema])
  .meta({ description: "An ExecutionResult (seed 000 §3.2)" });

/** An execution envelope. */
export type ExecutionEnvelope = z.output<typeof ExecutionEnvelopeSchema>;
/** An execution result. */
export type ExecutionResult = z.output<typeof ExecutionResultSchema>;
/** The result status. */
export type ExecutionStatus = ExecutionResult["status"];
/** Execution metrics. */
export type ExecutionMetrics = z.output<typeof ExecutionMetricsSchema>;
