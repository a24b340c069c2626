/**
 * A minimal, runtime-neutral harness that runs one example tool the way the executor will: a fresh workspace from
 * declared resources, the step's transactions, the real capability-checked host API and a tape. It returns what a
 * run would commit to (the output, the tape, the workspace digest) so that two runs, and two runtimes, can be
 * compared byte for byte.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { VirtualClock } from "../../src/determinism/clock.ts";
import { deriveStream } from "../../src/determinism/prng.ts";
import { capabilityPolicy, workspaceResources } from "../../src/policy/capabilities.ts";
import { ManifestSchema } from "../../src/protocol/pack.ts";
import { TapeRecorder } from "../../src/record/tape.ts";
import { ArtifactSink } from "../../src/sandbox/host/artifact-sink.ts";
import { createHost } from "../../src/sandbox/host/host.ts";
import { MemoryStore } from "../../src/sandbox/host/memory-store.ts";
import type { ToolInvocation, ToolRunner } from "../../src/sandbox/types.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import type { StepTransaction } from "../../src/sandbox/workspace/workspace.ts";
import { Workspace } from "../../src/sandbox/workspace/workspace.ts";

/** What one tool run commits to. */
export type ToolRunRecord = {
  status: "success" | "error";
  output: JsonValue;
  errorCode: string | null;
  tape: string;
  workspaceDigest: string;
};

/** One example tool run. */
export type ToolRunSpec = {
  code: Uint8Array;
  input: JsonValue;
  seed: string;
  /** Files of the read-only `data` root. */
  files?: Record<string, Uint8Array>;
  /** Makes the runner for this run; it receives the step's workspace view. */
  runner: (step: StepTransaction) => ToolRunner;
  fuel?: bigint;
};

const INVOCATION = "00000000-0000-8000-8000-00000000c0de";

/**
 * Run one tool in a fresh, isolated setup.
 * @param spec the tool, input, seed and runner
 * @returns the output, error code, tape JSONL and the committed workspace digest
 */
export async function runTool(spec: ToolRunSpec): Promise<ToolRunRecord> {
  const ws = newWorkspace(spec.files);
  const { outcome, tape, violation, step } = await invokeOnce(ws, spec);
  if (outcome.status === "success" && violation === null) step.commit();
  else step.rollback();
  return {
    status: outcome.status,
    output: outcome.status === "success" ? outcome.output : null,
    errorCode: outcome.status === "error" ? outcome.error.code : null,
    tape: tape.toJsonl(),
    workspaceDigest: ws.digest(),
  };
}

const POLICY = (() => {
  const manifest = ManifestSchema().parse({
    manifestVersion: "1.0.0",
    capabilities: {
      permissions: ["filesystem"],
      resources: [
        { uri: "workspace:///data/", access: "read" },
        { uri: "workspace:///out/", access: "readwrite" },
      ],
    },
  });
  return capabilityPolicy(manifest);
})();

/**
 * A fresh workspace with a read-only `data` root and a read-write `out` root (once per run).
 * @param files the files of `data`
 * @returns the workspace
 */
export function newWorkspace(files: Record<string, Uint8Array> = {}): Workspace {
  return Workspace.fromResources(workspaceResources(POLICY, { data: files, out: {} }));
}

/**
 * One invocation in an open step of `ws`: the step's transactions, a new host and tape, the runner (per step).
 * @param ws the run's workspace (no step open)
 * @param spec the tool run
 * @returns the outcome, the tape, the host's halting violation and the open step (commit or roll it back)
 */
export async function invokeOnce(ws: Workspace, spec: ToolRunSpec) {
  const policy = POLICY;
  const step = ws.beginStep();
  const memory = new MemoryStore().beginStep();
  const artifacts = new ArtifactSink().beginStep();
  const tape = new TapeRecorder();
  const host = createHost({
    invocationId: INVOCATION,
    policy,
    workspace: step,
    memory,
    artifacts,
    clock: new VirtualClock("2026-01-01T00:00:00.000Z"),
    random: deriveStream(spec.seed, `invocation:${INVOCATION}`),
    tape,
  });
  const invocation: ToolInvocation = {
    toolName: "example",
    invocationId: INVOCATION,
    code: spec.code,
    input: spec.input,
    host,
    timeoutMs: 10_000,
    fuel: spec.fuel ?? 200_000_000n,
    memoryLimitBytes: 64 * 1024 * 1024,
  };
  const outcome = await spec.runner(step).run(invocation);
  return { outcome, tape, violation: host.violation, step };
}

/** A digest of everything a run commits to (the case fingerprint). */
export function fingerprint(r: ToolRunRecord): string {
  return sha256Hex(canonicalize({ ...r, tape: sha256Hex(r.tape) }));
}
