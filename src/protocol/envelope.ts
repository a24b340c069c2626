/**
 * The executor's contract: `ExecutionEnvelope` in, `ExecutionResult` out (seed 000 §3.1, §3.2; seed 002
 * `insufficient`).
 * @module
 */
import { z } from "zod";
import { ErrorDetailsSchema } from "./error-details.ts";
import { ArtifactInfoSchema } from "./evidence.ts";
import { jsonObject, nonEmpty, strictObject, TOOL_NAME_RE, toolName } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import { typedSchema } from "./_lazy.ts";

/** One side-effecting tool call, as handed to the executor (seed 000 §3.1). */
export const ExecutionEnvelopeSchema: () => StrictObject<{
  id: z.ZodString;
  task_id: z.ZodString;
  tool: z.ZodString;
  arguments: z.ZodRecord<z.ZodString, z.ZodUnknown>;
  context: StrictObject<{ session_id: z.ZodString; permissions: z.ZodArray<z.ZodString> }>;
  timeout_ms: z.ZodInt;
}> = typedSchema(() => strictObject("envelope", {
  id: nonEmpty(),
  task_id: nonEmpty(),
  tool: toolName(),
  arguments: jsonObject(),
  context: strictObject("envelope.context", {
    session_id: nonEmpty(),
    permissions: z.array(z.string()),
  }),
  timeout_ms: z.int().min(1),
}).meta({ description: "An ExecutionEnvelope (seed 000 §3.1)" }));

/** Unhashed measurements of one execution; `duration_ms` is required, other numbers may be added. */
export const ExecutionMetricsSchema: () => z.ZodObject<{ duration_ms: z.ZodInt }, z.core.$loose> = typedSchema(() => z.looseObject({ duration_ms: z.int().min(0) }));

/** The members every result has. */
interface CommonShape {
  envelope_id: z.ZodString;
  artifacts: z.ZodOptional<z.ZodArray<ReturnType<typeof ArtifactInfoSchema>>>;
  metrics: z.ZodOptional<ReturnType<typeof ExecutionMetricsSchema>>;
}

const common = (): CommonShape => ({
  envelope_id: nonEmpty(),
  artifacts: z.array(ArtifactInfoSchema()).optional(),
  metrics: ExecutionMetricsSchema().optional(),
});

/** A successful execution: `output` holds the tool's result; there is no `error`. */
export const ExecutionSuccessSchema: () => StrictObject<CommonShape & {
  status: z.ZodLiteral<"success">;
  output: z.ZodOptional<z.ZodUnknown>;
}> = typedSchema(() => strictObject("result", {
  ...common(),
  status: z.literal("success"),
  output: z.unknown().optional(),
}).meta({ id: "ExecutionSuccess" }));

/** A failed execution (`failure`: the tool reported failure; `error`: the executor or sandbox failed). */
export const ExecutionFailureSchema: () => StrictObject<CommonShape & {
  status: z.ZodEnum<{ failure: "failure"; error: "error" }>;
  output: z.ZodOptional<z.ZodUnknown>;
  error: ReturnType<typeof ErrorDetailsSchema>;
}> = typedSchema(() => strictObject("result", {
  ...common(),
  status: z.enum(["failure", "error"]),
  output: z.unknown().optional(),
  error: ErrorDetailsSchema(),
}).meta({ id: "ExecutionFailure" }));

/** The step needs more than one tool call (seed 002 "`{ status: insufficient }` for multi-step needs"). */
export const ExecutionInsufficientSchema: () => StrictObject<CommonShape & {
  status: z.ZodLiteral<"insufficient">;
  output: z.ZodOptional<z.ZodUnknown>;
  error: z.ZodOptional<ReturnType<typeof ErrorDetailsSchema>>;
}> = typedSchema(() => strictObject("result", {
  ...common(),
  status: z.literal("insufficient"),
  output: z.unknown().optional(),
  error: ErrorDetailsSchema().optional(),
}).meta({ id: "ExecutionInsufficient" }));

/** The executor's answer (seed 000 §3.2), discriminated by `status`. */
export const ExecutionResultSchema: () => z.ZodDiscriminatedUnion<[
  ReturnType<typeof ExecutionSuccessSchema>,
  ReturnType<typeof ExecutionFailureSchema>,
  ReturnType<typeof ExecutionInsufficientSchema>,
], "status"> = typedSchema(() => z
  .discriminatedUnion("status", [ExecutionSuccessSchema(), ExecutionFailureSchema(), ExecutionInsufficientSchema()])
  .meta({ description: "An ExecutionResult (seed 000 §3.2)" }));

/** An execution envelope. */
export type ExecutionEnvelope = z.output<ReturnType<typeof ExecutionEnvelopeSchema>>;
/** An execution result. */
export type ExecutionResult = z.output<ReturnType<typeof ExecutionResultSchema>>;
/** The result status. */
export type ExecutionStatus = ExecutionResult["status"];
/** Execution metrics. */
export type ExecutionMetrics = z.output<ReturnType<typeof ExecutionMetricsSchema>>;

const nonEmptyText = (v: unknown): boolean => typeof v === "string" && v.length >= 1 && v.length <= 256;

/**
 * True when {@link ExecutionEnvelopeSchema} accepts `value` and gives it back unchanged, checked without zod (the
 * engine builds an envelope for every step; building the schema cost a short run ~1 ms). False says nothing: ask the
 * schema, for its verdict and its message. Unchanged means: exactly the schema's fields, in its order, `arguments` a
 * plain object without an own `__proto__` (the schema drops that key) or symbol keys.
 * @param value a candidate envelope
 * @returns whether it is one, as is
 * @example isExactEnvelope({ id: "e", task_id: "s", tool: "t", arguments: {}, context: { session_id: "r", permissions: [] }, timeout_ms: 1 }) // true
 */
export function isExactEnvelope(value: unknown): value is ExecutionEnvelope {
  if (!isPlainRecord(value) || Object.keys(value).join() !== "id,task_id,tool,arguments,context,timeout_ms") return false;
  const { id, task_id, tool, arguments: args, context, timeout_ms } = value;
  if (!nonEmptyText(id) || !nonEmptyText(task_id)) return false;
  if (typeof tool !== "string" || tool.length > 128 || !TOOL_NAME_RE.test(tool)) return false;
  if (!isPlainRecord(args) || Object.prototype.hasOwnProperty.call(args, "__proto__") || Object.getOwnPropertySymbols(args).length !== 0) return false;
  if (!isPlainRecord(context) || Object.keys(context).join() !== "session_id,permissions" || !nonEmptyText(context["session_id"])) return false;
  const permissions = context["permissions"];
  if (!Array.isArray(permissions)) return false;
  for (let i = 0; i < permissions.length; i++) if (typeof permissions[i] !== "string") return false; // holes too
  return Number.isSafeInteger(timeout_ms) && (timeout_ms as number) >= 1;
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
