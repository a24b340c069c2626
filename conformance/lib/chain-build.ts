/**
 * The two documented runs behind the hash-chain vectors (see conformance/HASHING.md). Building them goes through
 * the real EventLog, so the committed vectors also pin the ledger's behaviour.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { deriveId } from "../../src/canonical/ids.ts";
import { VirtualClock } from "../../src/determinism/clock.ts";
import { EventLog, payloadHash, toJsonl } from "../../src/ledger/mod.ts";
import type { Payload } from "../../src/ledger/mod.ts";
import type { EventType } from "../../src/protocol/event-types.ts";

/** Everything a re-implementer needs for one event. */
export type ExpectedEvent = {
  sequence: number;
  type: EventType;
  timestamp: string;
  canonicalPayload: string;
  payloadHash: string;
  prevEventHash: string;
  eventHashPreimage: string;
  eventHash: string;
};

/** One worked vector. */
export type ChainVector = {
  name: string;
  jsonl: string;
  expected: { description: string; runId: string; events: ExpectedEvent[]; runHashPreimage: string; runHash: string };
};

type Step = [EventType, Payload, Record<string, unknown>?];

function build(name: string, description: string, input: Payload, steps: (runId: string) => Step[]): ChainVector {
  const inputHash = payloadHash(input);
  const runId = deriveId("reach-wasm/run/v1", inputHash, "0");
  const log = new EventLog({ runId, clock: new VirtualClock("2026-01-01T00:00:00.000Z") });
  for (const [type, payload, metrics] of steps(runId)) log.append(type, payload, metrics);
  const events: ExpectedEvent[] = log.events.map((e) => ({
    sequence: e.sequence,
    type: e.type,
    timestamp: e.timestamp,
    canonicalPayload: canonicalize(e.payload),
    payloadHash: e.payloadHash,
    prevEventHash: e.prevEventHash,
    eventHashPreimage: e.type + e.timestamp + e.payloadHash + e.prevEventHash,
    eventHash: e.eventHash,
  }));
  return {
    name,
    jsonl: toJsonl(log.events),
    expected: {
      description,
      runId,
      events,
      runHashPreimage: events.map((e) => e.eventHash).join(""),
      runHash: log.runHash(),
    },
  };
}

const manifestHash = (tools: string[]) => payloadHash({ manifestVersion: "1.0.0", capabilities: { tools: tools.map((name) => ({ name })) } });

/**
 * Build the vectors: `success` (a two-step run that completes, with unhashed metrics on one event) and `failure`
 * (a step denied by policy: violation, tool failure, step failure, run failure).
 * @returns the vectors, in a fixed order
 */
export function buildChainVectors(): ChainVector[] {
  const success = build(
    "success",
    "pack hello-twice: step greet (wasm tool hello.greet) then step shout (js tool text.upper); the run completes",
    { name: "world", "é": "unicode key" },
    (runId) => {
      const inv1 = deriveId("reach-wasm/invocation/v1", runId, "greet", "0");
      const inv2 = deriveId("reach-wasm/invocation/v1", runId, "shout", "0");
      const out1 = { greeting: "Hello, world!" };
      const out2 = { text: "HELLO, WORLD!", length: 13, ratio: 0.5, nested: { z: [1, 2.5, -0, 1e21], a: null, "€": true } };
      return [
        ["run.started", {
          runId, packId: "hello-twice", packVersion: "1.0.0", specVersion: "1.0.0",
          inputHash: payloadHash({ name: "world", "é": "unicode key" }),
          manifestHash: manifestHash(["hello.greet", "text.upper"]),
          seed: "0", epoch: "2026-01-01T00:00:00.000Z",
        }],
        ["run.step.started", { stepId: "greet", stepType: "tool", stepIndex: 0, toolName: "hello.greet", description: "greet the user" }],
        ["tool.invoked", { toolName: "hello.greet", invocationId: inv1, arguments: { name: "world" }, timeoutMs: 30000, stepId: "greet" }],
        ["tool.completed", { invocationId: inv1, result: out1, outputHash: payloadHash(out1) }, { durationMs: 0.412, host: "ci-runner-7" }],
        ["run.step.completed", { stepId: "greet", result: out1 }],
        ["run.step.started", { stepId: "shout", stepType: "tool", stepIndex: 1, toolName: "text.upper" }],
        ["tool.invoked", { toolName: "text.upper", invocationId: inv2, arguments: { text: "Hello, world!" }, timeoutMs: 5000, stepId: "shout" }],
        ["tool.completed", { invocationId: inv2, result: out2, outputHash: payloadHash(out2) }],
        ["run.step.completed", { stepId: "shout", result: out2, artifacts: [] }],
        ["run.completed", { runId, status: "success", outputHash: payloadHash(out2), artifacts: [] }],
      ];
    },
  );
  const failure = build(
    "failure",
    "pack reader: step read asks fs.read for ../etc/passwd outside its declared resource; policy denies, the run fails",
    { path: "../etc/passwd" },
    (runId) => {
      const inv = deriveId("reach-wasm/invocation/v1", runId, "read", "0");
      const error = {
        code: "POLICY_VIOLATION",
        message: "fs.read of \"../etc/passwd\" is outside the declared resources; declare it in manifest.capabilities.resources",
        details: { violationType: "RESOURCE_ACCESS", attemptedCapability: "fs.read:../etc/passwd" },
        recoverable: false,
      };
      return [
        ["run.started", {
          runId, packId: "reader", packVersion: "0.2.0", specVersion: "1.0.0",
          inputHash: payloadHash({ path: "../etc/passwd" }), manifestHash: manifestHash(["fs.reader"]),
          seed: "7", epoch: "2026-01-01T00:00:00.000Z",
        }],
        ["run.step.started", { stepId: "read", stepType: "tool", stepIndex: 0, toolName: "fs.reader" }],
        ["tool.invoked", { toolName: "fs.reader", invocationId: inv, arguments: { path: "../etc/passwd" }, timeoutMs: 30000, stepId: "read" }],
        ["policy.violation", {
          violationType: "RESOURCE_ACCESS", details: "fs.read outside declared resources",
          attemptedCapability: "fs.read:../etc/passwd", declaredCapabilities: ["workspace:///data/"], stepId: "read",
        }],
        ["tool.failed", { invocationId: inv, error }],
        ["run.step.failed", { stepId: "read", result: { status: "failure", reason: "policy_violation" }, error }],
        ["run.failed", { runId, status: "failure", error, failedStep: "read", reason: "policy_violation" }],
      ];
    },
  );
  return [success, failure];
}
