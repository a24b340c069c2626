/**
 * The closed set of reach-wasm error codes and the one error class, `ReachError` (seed 003 §7).
 *
 * Codes follow `CATEGORY_DETAIL`. The upstream enums of `error.schema.json` are all here; reach-wasm adds a
 * few where its seeds need them (`PLAN_*` for seed 001's plan gate, `REPLAY_*` for seed 003 §3.4, and
 * `EXEC_RESOURCE_EXHAUSTED`, `EXEC_ABORTED`, `EXEC_OUTPUT_INVALID`, `EXEC_INSUFFICIENT`, `PROTO_CHAIN_BROKEN`,
 * `PROTO_INVALID_ARGUMENT`, `FED_DELEGATION_REVOKED`, seed 004's `PLANNING_ERROR` (a plan that cannot satisfy the
 * query's intent), `PLAN_TASK_NOT_EXECUTABLE` (a seed 001 task the engine cannot execute) and `PLAN_STEP_REFERENCE_INVALID` / `EXEC_STEP_REFERENCE_UNRESOLVED` (step data flow), and for signed federation messages (seed 003 §6.1 "All federation
 * messages MUST be signed") `FED_SIGNATURE_MISSING`, `FED_MESSAGE_REPLAYED`, `FED_MESSAGE_STALE`).
 * @module
 */

/** Every error code reach-wasm can produce, grouped by prefix. */
export const ERROR_CODES = {
  PROTO: [
    "PROTO_VERSION_MISMATCH",
    "PROTO_SCHEMA_VIOLATION",
    "PROTO_INVALID_MESSAGE",
    "PROTO_SEQUENCE_ERROR",
    "PROTO_TIMEOUT",
    "PROTO_CHAIN_BROKEN",
    "PROTO_INVALID_ARGUMENT",
  ],
  POLICY: [
    "POLICY_VIOLATION",
    "POLICY_UNDEFINED_TOOL",
    "POLICY_RESOURCE_ACCESS_DENIED",
    "POLICY_PERMISSION_DENIED",
    "POLICY_TIMEOUT_EXCEEDED",
    "POLICY_RATE_LIMIT_EXCEEDED",
    "POLICY_CAPABILITY_MISMATCH",
  ],
  EXEC: [
    "EXEC_TOOL_NOT_FOUND",
    "EXEC_TOOL_TIMEOUT",
    "EXEC_TOOL_FAILED",
    "EXEC_RESOURCE_UNAVAILABLE",
    "EXEC_SANDBOX_VIOLATION",
    "EXEC_MEMORY_EXCEEDED",
    "EXEC_DISK_EXCEEDED",
    "EXEC_RESOURCE_EXHAUSTED",
    "EXEC_ABORTED",
    "EXEC_OUTPUT_INVALID",
    "EXEC_INSUFFICIENT",
    "EXEC_STEP_REFERENCE_UNRESOLVED",
  ],
  FED: [
    "FED_NODE_UNREACHABLE",
    "FED_NODE_UNAUTHORIZED",
    "FED_DELEGATION_INVALID",
    "FED_DELEGATION_EXPIRED",
    "FED_DELEGATION_REVOKED",
    "FED_SIGNATURE_INVALID",
    "FED_TRUST_VIOLATION",
    "FED_SIGNATURE_MISSING",
    "FED_MESSAGE_REPLAYED",
    "FED_MESSAGE_STALE",
  ],
  PACK: [
    "PACK_NOT_FOUND",
    "PACK_INVALID_MANIFEST",
    "PACK_INVALID_SIGNATURE",
    "PACK_VERSION_MISMATCH",
    "PACK_DEPENDENCY_UNRESOLVED",
    "PACK_MALFORMED",
  ],
  PLAN: [
    "PLAN_INVALID",
    "PLAN_NOT_APPROVED",
    "PLAN_RISK_TOO_HIGH",
    "PLAN_APPROVAL_REQUIRED",
    "PLAN_SCOPE_VIOLATION",
    "PLAN_TOO_MANY_STEPS",
    "PLAN_RETURN_SPEC_MISSING",
    "PLAN_HASH_MISMATCH",
    "PLAN_PLANNER_FAILED",
    "PLAN_STEP_REFERENCE_INVALID",
    "PLAN_TASK_NOT_EXECUTABLE",
    "PLANNING_ERROR",
  ],
  REPLAY: [
    "REPLAY_DIVERGENCE",
    "REPLAY_HASH_MISMATCH",
    "REPLAY_CAPSULE_INVALID",
    "REPLAY_CAPSULE_TOO_LARGE",
    "REPLAY_PROOF_INVALID",
    "REPLAY_REDACTED",
  ],
} as const;

/** One of the closed set of error codes. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES][number];
/** The prefix (category) of an error code. */
export type ErrorPrefix = keyof typeof ERROR_CODES;

/** All codes as a flat, ordered list. */
export const ALL_ERROR_CODES: readonly ErrorCode[] = Object.values(ERROR_CODES).flat();
const CODE_SET: ReadonlySet<string> = new Set(ALL_ERROR_CODES);

/** True when `code` is in the closed set.
 * @example
 * ```ts
 * const ok: boolean = isErrorCode("POLICY_VIOLATION"); // true
 * ```
 */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && CODE_SET.has(code);
}

/** Policy denial kinds (seed 003 §4.3); `TIMEOUT_EXCEEDED` is allowed by the upstream event schema. */
export type ViolationType = "UNDEFINED_TOOL" | "RESOURCE_ACCESS" | "PERMISSION_DENIED" | "TIMEOUT_EXCEEDED";

/**
 * Hard failures terminate the run; soft failures may go back to the planner (seed 003 §7.2, seed 000 §6).
 * The three hard and three soft codes named by seed 003 §7.2 are fixed; the rest follow their category:
 * protocol, policy, pack, plan and replay errors are hard; execution errors are soft except a sandbox
 * violation, a missing tool and an abort; federation errors are hard except an unreachable node.
 */
export type Severity = "hard" | "soft";

const SOFT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "EXEC_TOOL_TIMEOUT",
  "EXEC_TOOL_FAILED",
  "EXEC_RESOURCE_UNAVAILABLE",
  "EXEC_MEMORY_EXCEEDED",
  "EXEC_DISK_EXCEEDED",
  "EXEC_RESOURCE_EXHAUSTED",
  "EXEC_OUTPUT_INVALID",
  "EXEC_INSUFFICIENT",
  "EXEC_STEP_REFERENCE_UNRESOLVED",
  "FED_NODE_UNREACHABLE",
]);

/**
 * Classify a code as a hard or soft failure.
 * @param code an error code
 * @returns "hard" or "soft"
 * @example severityOf("POLICY_VIOLATION") // "hard"
 */
export function severityOf(code: ErrorCode): Severity {
  return SOFT.has(code) ? "soft" : "hard";
}

const PREFIX_OF: ReadonlyMap<string, ErrorPrefix> = new Map(
  (Object.entries(ERROR_CODES) as [ErrorPrefix, readonly ErrorCode[]][]).flatMap(([prefix, codes]) => codes.map((c) => [c, prefix] as const)),
);

/**
 * The group (category prefix) a code is listed under; `PLANNING_ERROR` (seed 004's error type, kept verbatim) is a
 * `PLAN` code.
 * @param code an error code
 * @returns its group
 * @example prefixOf("PLANNING_ERROR") // "PLAN"
 */
export function prefixOf(code: ErrorCode): ErrorPrefix {
  return PREFIX_OF.get(code) ?? (code.slice(0, code.indexOf("_")) as ErrorPrefix);
}

/** Upstream `error.schema.json` categories. PLAN errors come from the plan gate (a policy); REPLAY from the protocol. */
const CATEGORY: Record<ErrorPrefix, "PROTOCOL" | "POLICY" | "EXECUTION" | "FEDERATION" | "PACK"> = {
  PROTO: "PROTOCOL",
  POLICY: "POLICY",
  EXEC: "EXECUTION",
  FED: "FEDERATION",
  PACK: "PACK",
  PLAN: "POLICY",
  REPLAY: "PROTOCOL",
};

/** JSON-safe details: only plain JSON values. */
export type ErrorDetailsData = Record<string, unknown>;

/** Error details as they appear inside events and results (`ErrorDetails` of the upstream schemas). */
export type ErrorDetails = {
  code: ErrorCode;
  message: string;
  details?: ErrorDetailsData;
  recoverable?: boolean;
  retryAfter?: number;
};

/** Options for a `ReachError`. */
export type ReachErrorOptions = {
  /** Machine-readable context: the capability attempted, the failing path, the event index, … */
  details?: ErrorDetailsData;
  /** Overrides the default (soft ⇒ recoverable). */
  recoverable?: boolean;
  /** Suggested retry delay in milliseconds; `null` or absent when retrying is pointless. */
  retryAfter?: number | null;
  /** The underlying error, kept for debugging; never serialised into hashed data. */
  cause?: unknown;
};

/**
 * The one error type of reach-wasm. `code` is from the closed set; the message says how to fix the problem.
 * @example
 * ```ts
 * const e = new ReachError("POLICY_VIOLATION", "tool x reached outside its declared roots", { details: { violationType: "RESOURCE_ACCESS" } });
 * console.log(e.code, e.severity, JSON.stringify(e.toDetails()));
 * ```
 */
export class ReachError extends Error {
  /** Code from the closed set. */
  readonly code: ErrorCode;
  /** Machine-readable details (always an object). */
  readonly details: ErrorDetailsData;
  /** Whether the planner may recover from it. */
  readonly recoverable: boolean;
  /** Suggested retry delay in ms, or null. */
  readonly retryAfter: number | null;

  constructor(code: ErrorCode, message: string, options: ReachErrorOptions = {}) {
    if (!isErrorCode(code)) throw new TypeError(`"code" expected a reach-wasm error code, got ${String(code)}`);
    if (typeof message !== "string" || message.length === 0) {
      throw new TypeError(`"message" expected a non-empty string`);
    }
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ReachError";
    this.code = code;
    this.details = options.details ?? {};
    this.recoverable = options.recoverable ?? severityOf(code) === "soft";
    const retryAfter = options.retryAfter ?? null;
    if (retryAfter !== null && !(Number.isSafeInteger(retryAfter) && retryAfter >= 0)) {
      throw new RangeError(`"retryAfter" expected a non-negative integer of milliseconds, got ${retryAfter}`);
    }
    this.retryAfter = retryAfter;
  }

  /** hard or soft (seed 003 §7.2). */
  get severity(): Severity {
    return severityOf(this.code);
  }

  /** The `ErrorDetails` object used inside events and results. */
  toDetails(): ErrorDetails {
    const out: ErrorDetails = { code: this.code, message: this.message, details: this.details, recoverable: this.recoverable };
    if (this.retryAfter !== null) out.retryAfter = this.retryAfter;
    return out;
  }

  /**
   * The document form; validates against the upstream `error.schema.json`.
   * (`retryAfter: null` of seed 003 §7.2 is written by omitting the field, as the schema requires an integer.)
   */
  toJSON(): ErrorDocument {
    return {
      specVersion: "1.0.0",
      error: {
        ...this.toDetails(),
        category: CATEGORY[prefixOf(this.code)],
        severity: this.severity === "hard" ? "FATAL" : "ERROR",
        retryable: this.retryAfter !== null,
      },
    };
  }
}

/** The document form of an error (upstream `error.schema.json`). */
export type ErrorDocument = {
  specVersion: "1.0.0";
  error: ErrorDetails & {
    category: "PROTOCOL" | "POLICY" | "EXECUTION" | "FEDERATION" | "PACK";
    severity: "FATAL" | "ERROR";
    retryable: boolean;
  };
  context?: { runId?: string; stepId?: string; invocationId?: string; timestamp?: string; nodeId?: string };
};

/** Build a `POLICY_VIOLATION` (seed 003 §4.3): always hard, with the violation type and the capability attempted. */
export function policyViolation(
  violationType: ViolationType,
  attemptedCapability: string,
  message: string,
  extra: ErrorDetailsData = {},
): ReachError {
  return new ReachError("POLICY_VIOLATION", message, { details: { ...extra, violationType, attemptedCapability } });
}

/**
 * Wrap anything thrown into a ReachError without losing it (seed 000 §6 "panic recovery").
 * @param err the thrown value
 * @param fallback the code to use when `err` is not already a ReachError
 * @returns `err` itself when it is a ReachError, else a new one with `err` as its cause
 */
export function toReachError(err: unknown, fallback: ErrorCode = "EXEC_TOOL_FAILED"): ReachError {
  if (err instanceof ReachError) return err;
  const text = err instanceof Error ? err.message : String(err);
  return new ReachError(fallback, text.length > 0 ? text : "unknown error", { cause: err });
}
