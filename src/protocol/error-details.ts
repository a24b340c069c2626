/**
 * Error details and the error document (seed 003 §7; upstream `error.schema.json`).
 * @module
 */
import { z } from "zod";
import { ALL_ERROR_CODES } from "./errors.ts";
import type { ErrorCode, ErrorDetails as ErrorDetailsType, ErrorDocument as ErrorDocumentType } from "./errors.ts";
import { jsonObject, strictObject, timestamp, uuid } from "./_common.ts";
import { lazySchema } from "./_lazy.ts";

/** An error code from the closed set of `errors.ts` (seed 003 §7.1). */
export const ErrorCodeSchema: () => z.ZodEnum<{ [K in ErrorCode]: K }> = lazySchema(() => z.enum(
  ALL_ERROR_CODES as unknown as readonly [ErrorCode, ...ErrorCode[]],
  { error: "expected a reach-wasm error code (PROTO_*, POLICY_*, EXEC_*, FED_*, PACK_*, PLAN_*, REPLAY_*)" },
));

/**
 * `ErrorDetails`, as carried by events and results (upstream `event.schema.json#/$defs/ErrorDetails`;
 * seed 003 §7.2 "Error Response Structure"). Every code of the closed set matches the upstream pattern
 * `^[A-Z]+_[A-Z_]+$`. `retryAfter: null` is written by omitting the field.
 */
export const ErrorDetailsSchema = lazySchema(() => strictObject("error", {
  code: ErrorCodeSchema(),
  message: z.string().min(1),
  details: jsonObject().optional(),
  recoverable: z.boolean().optional(),
  retryAfter: z.int().min(0).optional(),
}).meta({ id: "ErrorDetails", description: "Error details (seed 003 §7.2)" }));

// The type is `ErrorDetails` of errors.ts; the check at the end of this file keeps the two identical.
type ParsedErrorDetails = z.infer<ReturnType<typeof ErrorDetailsSchema>>;

/** Where an error happened (upstream `ErrorContext`). `stackTrace` is accepted but reach-wasm never writes it. */
export const ErrorContextSchema = lazySchema(() => strictObject("error document context", {
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
export const ErrorDocumentSchema = lazySchema(() => strictObject("error document", {
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
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _detailsAgree: Same<ParsedErrorDetails, ErrorDetailsType> = true;
// What `ReachError.toJSON()` produces is always a valid document.
const _documentAssignable: ErrorDocumentType extends z.input<ReturnType<typeof ErrorDocumentSchema>> ? true : false = true;
void _detailsAgree;
void _documentAssignable;
