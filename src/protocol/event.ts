/**
 * Run events as the ledger writes them, one JSONL line each (seed 003 §3.2, §3.3; upstream `event.schema.json`).
 *
 * Upstream validates `payload` with `oneOf` over ten payload shapes, none of which forbids extra keys, so a
 * payload must carry the required keys of exactly one branch and not those of any other. Each payload below is
 * a strict object designed for that; the branch it matches is named in its description:
 *
 * | type                  | upstream branch         | keys that keep it out of the others            |
 * |-----------------------|-------------------------|------------------------------------------------|
 * | run.started           | RunStartedPayload       | no `status`                                    |
 * | run.step.started      | StepStartedPayload      | no `result`, no `invocationId`                 |
 * | tool.invoked          | ToolInvokedPayload      | no `result`/`error`; `stepId` but no `stepType`|
 * | tool.completed        | ToolCompletedPayload    | no `stepId`                                    |
 * | tool.failed           | ToolFailedPayload       | no `runId`, no `stepId`                        |
 * | run.step.completed    | StepCompletedPayload    | no `invocationId`                              |
 * | run.step.failed       | StepCompletedPayload    | no `invocationId` (so not ToolFailed)          |
 * | run.completed         | RunCompletedPayload     | no `packId`                                    |
 * | run.failed            | RunFailedPayload        | `status: "failure"`                            |
 * | run.aborted           | RunFailedPayload        | (upstream has no aborted payload)              |
 * | policy.violation      | PolicyViolationPayload  | no `stepType`, no `result`                     |
 * | federation.delegation | FederationDelegation    | —                                              |
 * | capsule.sync          | RunCompletedPayload     | no `packId`                                    |
 *
 * Durations are never in hashed payloads; they go in the unhashed `metrics` (seed 003 §3.3 rule 4).
 * @module
 */
import { z } from "zod";
import type { EventType } from "./event-types.ts";
import type { ViolationType } from "./errors.ts";
import { ErrorDetailsSchema } from "./error-details.ts";
import { ArtifactInfoSchema } from "./evidence.ts";
import {
  identifier,
  jsonObject,
  nonEmpty,
  semver,
  sha256Hex,
  strictObject,
  timestamp,
  toolName,
  uuid,
} from "./_common.ts";

import { EVENT_SPEC_VERSION } from "./event-version.ts";
import { lazySchema } from "./_lazy.ts";

export { EVENT_SPEC_VERSION };

/** `run.started`: the run is prepared; the input and manifest hashes are recorded (seed 003 §3.1). */
export const RunStartedPayloadSchema = lazySchema(() => strictObject("run.started payload", {
  runId: uuid(),
  packId: identifier(),
  packVersion: semver(),
  specVersion: semver(),
  inputHash: sha256Hex(),
  manifestHash: sha256Hex(),
  /** The pack digest (every file but the signature; src/trust `packDigest`). */
  packDigest: sha256Hex().optional(),
  seed: z.string().min(1),
  epoch: timestamp(),
  capabilities: jsonObject().optional(),
  /** The approved plan's id and canonical hash (seed 001 §6 plan lock); absent when planning failed. */
  planId: identifier().optional(),
  planHash: sha256Hex().optional(),
  requestHash: sha256Hex().optional(),
  workspaceBefore: sha256Hex().optional(),
}).meta({ id: "RunStartedPayload", description: "run.started (upstream RunStartedPayload)" }));

/**
 * `run.step.started`: a plan step begins (seed 003 §3.2 step 2). `stepType` is `tool` for a plan step (with its
 * `toolName`) or `replan` for a recorded replan (each replan is a recorded event: seed 004 "Event Types"), which has no
 * tool.
 */
export const StepStartedPayloadSchema = lazySchema(() => strictObject("run.step.started payload", {
  stepId: identifier(),
  stepType: z.enum(["tool", "replan"]),
  stepIndex: z.int().min(0),
  toolName: toolName().optional(),
  description: z.string().optional(),
  dependsOn: z.array(identifier()).optional(),
})
  .refine((p) => (p.stepType === "tool") === (p.toolName !== undefined), {
    message: "run.step.started: a tool step names its toolName, a replan step does not",
    path: ["toolName"],
  })
  .meta({ id: "StepStartedPayload", description: "run.step.started (upstream StepStartedPayload)" }));

/** `tool.invoked`: the tool call is handed to the sandbox. */
export const ToolInvokedPayloadSchema = lazySchema(() => strictObject("tool.invoked payload", {
  toolName: toolName(),
  invocationId: nonEmpty(),
  /** The step's arguments; absent from a redacted capsule (`argumentsCommit` stays). */
  arguments: jsonObject().optional(),
  /** The salt of `argumentsCommit` (conformance/HASHING.md "Value commitments"); goes with the arguments. */
  argumentsSalt: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  /** The salted commitment to the arguments: the chain hashes this, not the arguments. */
  argumentsCommit: sha256Hex().optional(),
  timeoutMs: z.int().min(1),
  stepId: identifier(),
}).meta({ id: "ToolInvokedPayload", description: "tool.invoked (upstream ToolInvokedPayload)" }));

/** A fuel count: a JSON number, or a decimal string above 2^53 − 1. */
const fuelCount = () => z.union([z.int().min(0), z.string().regex(/^\d{1,20}$/)]);

/** What an invocation saw and what ran, committed by the run hash (ARCHITECTURE "Hashing"). */
const invocationCommitments = () => ({
  /** Fuel the invocation used (deterministic). */
  fuel: fuelCount().optional(),
  /** Its host calls on the tape: how many, and the SHA-256 of their tape lines. */
  hostCalls: strictObject("hostCalls", { count: z.int().min(0), hash: sha256Hex() }).optional(),
  /** The tool's code and the instrumented module that ran it. */
  module: strictObject("module", { sha256: sha256Hex(), metered: sha256Hex().nullable() }).optional(),
});

/**
 * `tool.completed`: the tool returned. `outputHash` is the SHA-256 of the canonical result, or with `resultSalt` its
 * salted commitment (conformance/HASHING.md "Value commitments"; the result is then outside the hashed payload, and a
 * redacted capsule drops both).
 */
export const ToolCompletedPayloadSchema = lazySchema(() => strictObject("tool.completed payload", {
  invocationId: nonEmpty(),
  result: jsonObject().optional(),
  resultSalt: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  outputHash: sha256Hex(),
  ...invocationCommitments(),
}).meta({ id: "ToolCompletedPayload", description: "tool.completed (upstream ToolCompletedPayload)" }));

/** `tool.failed`: the tool call failed. */
export const ToolFailedPayloadSchema = lazySchema(() => strictObject("tool.failed payload", {
  invocationId: nonEmpty(),
  error: ErrorDetailsSchema(),
  ...invocationCommitments(),
}).meta({ id: "ToolFailedPayload", description: "tool.failed (upstream ToolFailedPayload)" }));

/** `run.step.completed`: the step's output, validated against its `return_spec`. */
export const StepCompletedPayloadSchema = lazySchema(() => strictObject("run.step.completed payload", {
  stepId: identifier(),
  result: jsonObject(),
  artifacts: z.array(ArtifactInfoSchema()).optional(),
}).meta({ id: "StepCompletedPayload", description: "run.step.completed (upstream StepCompletedPayload)" }));

/** Why a step failed; `status` mirrors the `ExecutionResult` status. */
export const StepFailureResultSchema = lazySchema(() => strictObject("run.step.failed payload result", {
  status: z.enum(["failure", "error", "insufficient"]),
  reason: z.string().min(1),
}));

/** `run.step.failed`: shaped as upstream StepCompletedPayload (it has no step-failed branch). */
export const StepFailedPayloadSchema = lazySchema(() => strictObject("run.step.failed payload", {
  stepId: identifier(),
  result: StepFailureResultSchema(),
  error: ErrorDetailsSchema(),
}).meta({ id: "StepFailedPayload", description: "run.step.failed (matches upstream StepCompletedPayload)" }));

/** A stop a signal or the watchdog made outside the deterministic budgets, and where (replay follows it). */
const StopSchema = lazySchema(() => strictObject("stop", { invocationId: nonEmpty(), reason: z.enum(["abort", "watchdog"]), fuel: fuelCount() }));

/** What every terminal event commits: the workspace after the run and the capsule body (ARCHITECTURE "Hashing"). */
const terminalCommitments = () => ({
  workspaceAfter: sha256Hex().optional(),
  contents: sha256Hex().optional(),
  stops: z.array(StopSchema()).optional(),
});

/** `run.completed`: all steps succeeded; the output hash is committed (seed 003 §3.1). */
export const RunCompletedPayloadSchema = lazySchema(() => strictObject("run.completed payload", {
  runId: uuid(),
  status: z.literal("success"),
  outputHash: sha256Hex(),
  artifacts: z.array(ArtifactInfoSchema()).optional(),
  ...terminalCommitments(),
}).meta({ id: "RunCompletedPayload", description: "run.completed (upstream RunCompletedPayload)" }));

/** `run.failed`: the run halted on an error or a policy violation (seed 003 §3.1). */
export const RunFailedPayloadSchema = lazySchema(() => strictObject("run.failed payload", {
  runId: uuid(),
  status: z.literal("failure"),
  error: ErrorDetailsSchema(),
  failedStep: identifier().optional(),
  reason: z.string().min(1),
  ...terminalCommitments(),
}).meta({ id: "RunFailedPayload", description: "run.failed (upstream RunFailedPayload)" }));

/** `run.aborted`: terminated by an external signal (seed 003 §3.1); shaped as upstream RunFailedPayload. */
export const RunAbortedPayloadSchema = lazySchema(() => strictObject("run.aborted payload", {
  runId: uuid(),
  status: z.literal("failure"),
  reason: z.literal("aborted"),
  signal: z.string().min(1).optional(),
  error: ErrorDetailsSchema(),
  abortedAt: z.union([
    strictObject("abortedAt", { phase: z.literal("planning"), attempt: z.int().min(0) }),
    strictObject("abortedAt", { phase: z.literal("executing"), stepIndex: z.int().min(0) }),
  ]).optional(),
  ...terminalCommitments(),
}).meta({ id: "RunAbortedPayload", description: "run.aborted (matches upstream RunFailedPayload)" }));

/** Policy denial kinds (seed 003 §4.3, plus upstream's `TIMEOUT_EXCEEDED`). */
export const ViolationTypeSchema = lazySchema(() => z.enum(["UNDEFINED_TOOL", "RESOURCE_ACCESS", "PERMISSION_DENIED", "TIMEOUT_EXCEEDED"]));

/** `policy.violation`: a capability check failed (seed 003 §4.3 "Audit Trail"). */
export const PolicyViolationPayloadSchema = lazySchema(() => strictObject("policy.violation payload", {
  violationType: ViolationTypeSchema(),
  details: z.string().min(1),
  attemptedCapability: z.string().min(1),
  declaredCapabilities: z.array(z.string()),
  stepId: identifier().optional(),
}).meta({ id: "PolicyViolationPayload", description: "policy.violation (upstream PolicyViolationPayload)" }));

/** `federation.delegation`: this run executes under a delegation (seed 003 §6.2). */
export const FederationDelegationPayloadSchema = lazySchema(() => strictObject("federation.delegation payload", {
  delegator: nonEmpty(),
  delegate: nonEmpty(),
  scope: z.array(z.string()),
  expiresAt: timestamp(),
}).meta({ id: "FederationDelegationPayload", description: "federation.delegation (upstream FederationDelegationPayload)" }));

/** `capsule.sync`: a capsule of this run was sent to a peer; shaped as upstream RunCompletedPayload. */
export const CapsuleSyncPayloadSchema = lazySchema(() => strictObject("capsule.sync payload", {
  runId: uuid(),
  status: z.literal("success"),
  runHash: sha256Hex(),
  capsuleId: uuid(),
  peer: nonEmpty(),
}).meta({ id: "CapsuleSyncPayload", description: "capsule.sync (matches upstream RunCompletedPayload)" }));

/** The payload schema of each event type (built on first use, as every schema here is). */
export const payloadSchemas = lazySchema(() => ({
  "run.started": RunStartedPayloadSchema(),
  "run.step.started": StepStartedPayloadSchema(),
  "tool.invoked": ToolInvokedPayloadSchema(),
  "tool.completed": ToolCompletedPayloadSchema(),
  "tool.failed": ToolFailedPayloadSchema(),
  "run.step.completed": StepCompletedPayloadSchema(),
  "run.step.failed": StepFailedPayloadSchema(),
  "run.completed": RunCompletedPayloadSchema(),
  "run.failed": RunFailedPayloadSchema(),
  "run.aborted": RunAbortedPayloadSchema(),
  "policy.violation": PolicyViolationPayloadSchema(),
  "federation.delegation": FederationDelegationPayloadSchema(),
  "capsule.sync": CapsuleSyncPayloadSchema(),
}) as const satisfies Record<EventType, z.ZodType>);

type PayloadSchemas = ReturnType<typeof payloadSchemas>;

/** The payload type of event type `T`. */
export type EventPayload<T extends EventType> = z.output<PayloadSchemas[T]>;

/**
 * The payload schema for an event type.
 * @param type an event type
 * @returns the strict zod schema of that type's payload
 * @throws TypeError when `type` is not an event type
 * @example payloadSchemaFor("tool.failed").parse({ invocationId: "i-1", error: { code: "EXEC_TOOL_FAILED", message: "x" } })
 */
export function payloadSchemaFor<T extends EventType>(type: T): PayloadSchemas[T] {
  const schemas = payloadSchemas();
  const schema = Object.prototype.hasOwnProperty.call(schemas, type) ? schemas[type] : undefined;
  if (schema === undefined) throw new TypeError(`"type" expected a run event type, got ${JSON.stringify(type)}`);
  return schema;
}

/** Event fields other than `type` and `payload` (seed 003 §3.3; ARCHITECTURE "Hashing"). */
const envelopeShape = () => ({
  specVersion: z.literal(EVENT_SPEC_VERSION),
  eventId: uuid(),
  runId: uuid(),
  sequence: z.int().min(0),
  timestamp: timestamp(),
  payloadHash: sha256Hex(),
  prevEventHash: sha256Hex(),
  eventHash: sha256Hex(),
  /** Unhashed: real durations, host information. */
  metrics: jsonObject().optional(),
  /** Upstream `metadata` (unhashed). */
  metadata: strictObject("event.metadata", {
    source: z.string().optional(),
    nodeId: z.string().optional(),
    signature: z.string().optional(),
  }).optional(),
});

/** PascalCase `$defs` names of the per-type event schemas. */
const EVENT_DEF_NAMES: Record<EventType, string> = {
  "run.started": "RunStartedEvent",
  "run.step.started": "StepStartedEvent",
  "tool.invoked": "ToolInvokedEvent",
  "tool.completed": "ToolCompletedEvent",
  "tool.failed": "ToolFailedEvent",
  "run.step.completed": "StepCompletedEvent",
  "run.step.failed": "StepFailedEvent",
  "run.completed": "RunCompletedEvent",
  "run.failed": "RunFailedEvent",
  "run.aborted": "RunAbortedEvent",
  "policy.violation": "PolicyViolationEvent",
  "federation.delegation": "FederationDelegationEvent",
  "capsule.sync": "CapsuleSyncEvent",
};

function eventSchema<T extends EventType>(type: T) {
  return strictObject(`${type} event`, {
    ...envelopeShape(),
    type: z.literal(type),
    payload: payloadSchemas()[type],
  }).meta({ id: EVENT_DEF_NAMES[type] });
}

/**
 * One run event, discriminated by `type`: one line of `events.jsonl`. The hash fields are checked by the
 * ledger (`payloadHash = SHA256(JCS(payload))`, `eventHash = SHA256(type‖timestamp‖payloadHash‖prevEventHash)`).
 */
export const RunEventSchema = lazySchema(() => z
  .discriminatedUnion("type", [
    eventSchema("run.started"),
    eventSchema("run.step.started"),
    eventSchema("tool.invoked"),
    eventSchema("tool.completed"),
    eventSchema("tool.failed"),
    eventSchema("run.step.completed"),
    eventSchema("run.step.failed"),
    eventSchema("run.completed"),
    eventSchema("run.failed"),
    eventSchema("run.aborted"),
    eventSchema("policy.violation"),
    eventSchema("federation.delegation"),
    eventSchema("capsule.sync"),
  ])
  .meta({ description: "A reach-wasm run event, one line of events.jsonl (Reach Protocol v1.0.0 §3.2, §3.3)" }));

/** A run event (discriminated union on `type`). */
export type RunEvent = z.output<ReturnType<typeof RunEventSchema>>;
/** The run event of type `T`. */
export type RunEventOf<T extends EventType> = Extract<RunEvent, { type: T }>;
/** Any event payload. */
export type AnyEventPayload = RunEvent["payload"];
// Same union as `ViolationType` of errors.ts.
const _violationTypesAgree: z.output<ReturnType<typeof ViolationTypeSchema>> extends ViolationType
  ? ViolationType extends z.output<ReturnType<typeof ViolationTypeSchema>> ? true : false
  : false = true;
void _violationTypesAgree;

// Every event type has a branch in the union (compile-time agreement with event-types.ts; event.test.ts checks it at
// run time, so loading this module builds no schema).
const _allTypes: RunEvent["type"] extends EventType ? (EventType extends RunEvent["type"] ? true : false) : false = true;
void _allTypes;
