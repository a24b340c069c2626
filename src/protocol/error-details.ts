/**
 * Error details and the error document (seed 003 §7; upstream `error.schema.json`).
 * @module
 */
import { z } from "zod";
import { ALL_ERROR_CODES } from "./errors.ts";
import type { ErrorCode, ErrorDetails as ErrorDetailsType, ErrorDocument as ErrorDocumentType } from "./errors.ts";
import { jsonObject, strictObject, timestamp, uuid } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import { typedSchema } from "./_lazy.ts";
import type { Same } from "./_lazy.ts";

/** An error code from the closed set of `errors.ts` (seed 003 §7.1). */
export const ErrorCodeSchema: () => z.ZodEnum<{ [K in ErrorCode]: K }> = typedSchema(() => z.enum(
  ALL_ERROR_CODES as unknown as readonly [ErrorCode, ...ErrorCode[]],
  { error: "expected a reach-wasm error code (PROTO_*, POLICY_*, EXEC_*, FED_*, PACK_*, PLAN_*, REPLAY_*)" },
));

/**
 * `ErrorDetails`, as carried by events and results (upstream `event.schema.json#/$defs/ErrorDetails`;
 * seed 003 §7.2 "Error Response Structure"). Every code of the closed set matches the upstream pattern
 * `^[A-Z]+_[A-Z_]+$`. `retryAfter: null` is written by omitting the field.
 */
export const ErrorDetailsSchema: () => StrictObject<{
  code: ReturnType<typeof ErrorCodeSchema>;
  message: z.ZodString;
  details: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  recoverable: z.ZodOptional<z.ZodBoolean>;
  retryAfter: z.ZodOptional<z.ZodInt>;
}> = typedSchema(() => strictObject("error", {
  code: ErrorCodeSchema(),
  message: z.string().min(1),
  details: jsonObject().optional(),
  recoverable: z.boolean().optional(),
  retryAfter: z.int().min(0).optional(),
}).meta({ id: "ErrorDetails", description: "Error details (seed 003 §7.2)" }));

// The type is `ErrorDetails` of errors.ts; the check at the end of this file keeps the two identical.
type ParsedErrorDetails = z.infer<ReturnType<typeof ErrorDetailsSchema>>;

/** Where an error happened (upstream `ErrorContext`). `stackTrace` is accepted but reach-wasm never writes it. */
export const ErrorContextSchema: () => StrictObject<{
  runId: z.ZodOptional<z.ZodString>;
  stepId: z.ZodOptional<z.ZodString>;
  invocationId: z.ZodOptional<z.ZodString>;
  timestamp: z.ZodOptional<z.ZodISODateTime>;
  nodeId: z.ZodOptional<z.ZodString>;
  stackTrace: z.ZodOptional<z.ZodArray<StrictObject<{
    function: z.ZodOptional<z.ZodString>;
    file: z.ZodOptional<z.ZodString>;
    line: z.ZodOptional<z.ZodInt>;
    column: z.ZodOptional<z.ZodInt>;
  }>>>;
}> = typedSchema(() => strictObject("error document context", {
  runId: uuid().optional(),
  stepId: z.string().optional(),
  invocationId: z.string().optional(),
  timestamp: timestamp().optional(),
  nodeId: z.string().optional(),
  stackTrace: z
    .array(
      strictObject("stack frame", {
        function: z.string().optional(),
        file: z.string().optional(),
        line: z.int().optional(),
        column: z.int().optional(),
      }),
    )
    .optional(),
}));

/**
 * The error document (`ReachError.toJSON()`): `{specVersion, error, context?}`; validates against upstream
 * `error.schema.json`.
 */
export const ErrorDocumentSchema: () => StrictObject<{
  specVersion: z.ZodLiteral<"1.0.0">;
  error: StrictObject<ReturnType<typeof ErrorDetailsSchema>["shape"] & {
    category: z.ZodEnum<{ PROTOCOL: "PROTOCOL"; POLICY: "POLICY"; EXECUTION: "EXECUTION"; FEDERATION: "FEDERATION"; PACK: "PACK"; SYSTEM: "SYSTEM" }>;
    severity: z.ZodEnum<{ FATAL: "FATAL"; ERROR: "ERROR"; WARNING: "WARNING"; INFO: "INFO" }>;
    retryable: z.ZodBoolean;
  }>;
  context: z.ZodOptional<ReturnType<typeof ErrorContextSchema>>;
}> = typedSchema(() => strictObject("error document", {
  specVersion: z.literal("1.0.0"),
  error: strictObject("error document error", {
    ...ErrorDetailsSchema().shape,
    category: z.enum(["PROTOCOL", "POLICY", "EXECUTION", "FEDERATION", "PACK", "SYSTEM"]),
    severity: z.enum(["FATAL", "ERROR", "WARNING", "INFO"]),
    retryable: z.boolean(),
  }),
  context: ErrorContextSchema().optional(),
}).meta({ description: "A reach-wasm error document (seed 003 §7.2)" }));

/** An error document, as validated by {@link ErrorDocumentSchema}. */
export type ErrorDocumentParsed = z.infer<ReturnType<typeof ErrorDocumentSchema>>;

// Compile-time agreement with the hand-written types in errors.ts.
const _detailsAgree: Same<ParsedErrorDetails, ErrorDetailsType> = true;
// What `ReachError.toJSON()` produces is always a valid document.
const _documentAssignable: ErrorDocumentType extends z.input<ReturnType<typeof ErrorDocumentSchema>> ? true : false = true;
void _detailsAgree;
void _documentAssignable;
