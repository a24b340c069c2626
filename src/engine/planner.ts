/**
 * Planners (seed 000 §2, seed 002 "Planner — SubAgent-A"): a pure function of (context, objective, seed) that
 * returns an OrchestrationBlueprint. Two kinds:
 * - a static plan (`plan.json`): returned as written;
 * - a planner module (`planner.js`): `export default (request, reach) => blueprint` evaluated inside QuickJS with a
 *   host that grants nothing (no files, no network, no memory writes, no tools), a virtual clock at the run's
 *   epoch and a random stream derived from the seed. It may be async. Its output is JSON; the plan gate checks it.
 *
 * `request` is `{ context, objective, seed }`: `context` names the pack, its tools (with their schemas), the step
 * limit, and on a replan (`context.replan`) the failure and the steps already completed.
 * @module
 */
import { deriveId } from "../canonical/mod.ts";
import { VirtualClock } from "../determinism/mod.ts";
import type { RunIntent } from "./intent.ts";
import { deriveStream } from "../determinism/mod.ts";
import { capabilityPolicy } from "../policy/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { ManifestSchema } from "../protocol/mod.ts";
import { TapeRecorder } from "../record/mod.ts";
import { ArtifactSink } from "../sandbox/mod.ts";
import { createHost } from "../sandbox/mod.ts";
import { MemoryStore } from "../sandbox/mod.ts";
import type { SandboxApiLevel, ToolOutcome, ToolRunner } from "../sandbox/mod.ts";
import type { JsonObject, JsonValue } from "../protocol/mod.ts";
import { FuelMeter } from "../sandbox/mod.ts";
import { invocationStops } from "../sandbox/mod.ts";
import type { ExecutorRunState } from "./executor.ts";
import { WATCHDOG_GRACE_MS } from "./executor.ts";
import { Workspace } from "../sandbox/mod.ts";
import type { LoadedPack } from "./pack.ts";

/** A planner's time budget (fuel is derived from it like a tool's). */
export const PLANNER_TIMEOUT_MS = 5_000;
/** A planner's memory limit. */
export const PLANNER_MEMORY_BYTES = 64 * 1024 * 1024;

/** What a replanning planner is told. */
export type ReplanContext = {
  /** 1 for the first replan. */
  attempt: number;
  /** The step that failed and why. */
  failure: { stepId: string; tool: string; code: string; message: string };
  /** Steps that completed, in order, with their outputs. */
  completed: { stepId: string; tool: string; output: JsonValue }[];
  /** The plan that failed. */
  previousPlanId: string;
};

/** The planner's input. */
export type PlannerRequest = {
  context: JsonObject;
  objective: JsonValue;
  seed: string;
};

/**
 * The context a planner sees: the pack, its tools and schemas (and what they generate), the step limit, the replan
 * state, and — for a pack that declares intents — the query and the intent the router found (seed 004).
 * @param loaded the pack
 * @param maxSteps the plan gate's step limit
 * @param replan the replan state, when replanning
 * @param router the query and its intent
 * @returns a JSON object
 */
export function plannerContext(loaded: LoadedPack, maxSteps: number, replan?: ReplanContext, router?: { query: string; intent: RunIntent | null }): JsonObject {
  const tools: JsonObject[] = [];
  for (const t of loaded.tools.values()) {
    const d = t.definition;
    const entry: JsonObject = { name: t.name, kind: d.kind };
    if (d.description !== undefined) entry["description"] = d.description;
    if (d.inputSchema !== undefined) entry["inputSchema"] = d.inputSchema as JsonObject;
    if (d.outputSchema !== undefined) entry["outputSchema"] = d.outputSchema as JsonObject;
    if ("generates" in d && d.generates !== undefined) entry["generates"] = [...d.generates];
    tools.push(entry);
  }
  const ctx: JsonObject = { packId: loaded.pack.id, packVersion: loaded.pack.version, tools, maxSteps };
  if (router !== undefined) {
    ctx["query"] = router.query;
    ctx["intent"] = router.intent;
  }
  if (replan !== undefined) ctx["replan"] = replan as unknown as JsonObject;
  return ctx;
}

/** What the planner step needs from the run. */
export type PlanRequestOptions = {
  loaded: LoadedPack;
  request: PlannerRequest;
  /** The run's virtual epoch (ms). */
  epochMs: number;
  /** A QuickJS runner (for planner modules). */
  quickjs: () => ToolRunner;
  /** Fuel units per millisecond of timeout. */
  fuelPerMs: bigint;
  /** The run's sandbox API level (default 1). */
  sandboxApi?: SandboxApiLevel;
  /** The run's stops: its abort (signal, interrupt) and, in a replay, the recorded stop points. */
  state?: Pick<ExecutorRunState, "interrupted" | "signal" | "stopPoints" | "watchdogFactor" | "now">;
};

/**
 * The deterministic invocation id of a planner call.
 * @param loaded the pack
 * @param seed the run's seed
 * @param attempt 0 for the first plan, then the replan attempt
 * @returns a UUID
 * @example plannerInvocationId(loaded, "7", 0)
 */
export function plannerInvocationId(loaded: LoadedPack, seed: string, attempt: number): string {
  return deriveId("reach-wasm/planner", loaded.manifestHash, seed, String(attempt));
}

/** The planner's policy (nothing granted), made on first use: a static plan never needs it. */
let emptyPolicy: ReturnType<typeof capabilityPolicy> | undefined;
const plannerPolicy = (): ReturnType<typeof capabilityPolicy> => (emptyPolicy ??= capabilityPolicy(ManifestSchema().parse({ manifestVersion: "1.0.0", capabilities: {} }), { restricted: true }));

/**
 * Produce a plan (not yet gated).
 * @param options the pack, the request, the epoch and a QuickJS runner
 * @returns the plan document (untrusted JSON: the gate checks it)
 * @throws ReachError `PLAN_PLANNER_FAILED` when a planner module fails, loops, or asks the host for anything
 */
export async function makePlan(options: PlanRequestOptions): Promise<unknown> {
  const { loaded, request } = options;
  const entry = loaded.entrypoint;
  if (entry.kind === "plan") return entry.document;
  const replan = (request.context["replan"] as { attempt?: number } | undefined)?.attempt ?? 0;
  const invocationId = plannerInvocationId(loaded, request.seed, replan);
  const state = options.state ?? {};
  const stops = invocationStops({
    limitMs: (PLANNER_TIMEOUT_MS + WATCHDOG_GRACE_MS) * (state.watchdogFactor ?? 1),
    ...(state.interrupted === undefined ? {} : { interrupted: state.interrupted }),
    ...(state.signal === undefined ? {} : { signal: state.signal }),
    ...(state.now === undefined ? {} : { now: state.now }),
  });
  const budget = BigInt(PLANNER_TIMEOUT_MS) * options.fuelPerMs;
  const meter = new FuelMeter({ budget, ...stops.meter, stopAt: state.stopPoints?.get(invocationId) ?? null });
  const host = createHost({
    invocationId,
    policy: plannerPolicy(),
    workspace: new Workspace().beginStep(),
    memory: new MemoryStore().beginStep(),
    artifacts: new ArtifactSink().beginStep(),
    clock: new VirtualClock(options.epochMs),
    random: deriveStream(request.seed, `planner:${replan}`),
    tape: new TapeRecorder(),
    signal: stops.signal,
    fuel: meter,
  });
  let outcome: ToolOutcome;
  try {
    outcome = await options.quickjs().run({
      toolName: "planner",
      invocationId,
      code: entry.source,
      input: request as unknown as JsonValue,
      host,
      timeoutMs: PLANNER_TIMEOUT_MS,
      fuel: budget,
      meter,
      memoryLimitBytes: PLANNER_MEMORY_BYTES,
      ...(options.sandboxApi === undefined ? {} : { sandboxApi: options.sandboxApi }),
    });
  } finally {
    stops.dispose();
  }
  if (outcome.status === "error" && outcome.error.code === "EXEC_ABORTED") throw outcome.error; // the run ends ABORTED
  if (outcome.status === "error") {
    throw new ReachError("PLAN_PLANNER_FAILED", `the planner ${entry.path} failed: ${outcome.error.message}`, {
      details: { cause: outcome.error.code, planner: entry.path },
      cause: outcome.error,
    });
  }
  return outcome.output;
}
