/**
 * Seed 004's run model (`src/engine/run-document.ts`, `src/engine/live-events.ts`): the mapping between seed 003
 * §3.1 phases and seed 004 states (watchdog → `timeout`/`TIMEOUT_ERROR`, a cancel → `cancelled`/`CANCELLED`), the
 * per-step watchdog restarting with each step (shown by fuel counts, never by the clock), the evidence (requestId,
 * the guest's errorStack, skipped steps, `TASK_<id>.json`) and the live event stream of the committed capsules.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import { buildRunCapsule } from "../../src/engine/capsule.ts";
import { runPack } from "../../src/engine/coordinator.ts";
import { liveEventMapper } from "../../src/engine/live-events.ts";
import { loadPack } from "../../src/engine/pack.ts";
import { productionOutcome, statusHistory } from "../../src/engine/run-document.ts";
import type { EngineEnvironment } from "../../src/engine/runners.ts";
import type { RunRecord, RunRequest } from "../../src/engine/types.ts";
import { verifyRunCapsule } from "../../src/engine/verify.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";
import { jsPack as jsPackFiles } from "./js-pack.ts";

const dec = new TextDecoder();

/** A pack of JS tools and a static plan. */
function pack(tools: Record<string, string>, steps: object[]): Map<string, Uint8Array> {
  return jsPackFiles("runmodel-case", tools, steps, []);
}

const SPIN = `export default (input) => { let x = 0; for (let i = 0; i < input.n; i++) x = (x + i) % 7919; return { x }; };`;
const THROW = `function inner(v) { throw new TypeError("bad value " + v); }
export default (input) => inner(input.v);`;

async function run(env: EngineEnvironment, files: Map<string, Uint8Array>, extra: Partial<RunRequest> = {}): Promise<{ record: RunRecord; entries: Map<string, Uint8Array> }> {
  const loaded = await loadPack(files);
  const record = await runPack({ loaded, env, ...extra });
  const capsule = readRunCapsule(buildRunCapsule(record, loaded).bytes);
  const verified = verifyRunCapsule(capsule);
  check(verified.valid, `the capsule does not verify: ${verified.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.message}`).join("; ")}`);
  return { record, entries: capsule.entries };
}

function doc(entries: Map<string, Uint8Array>, path: string): Record<string, unknown> {
  const b = entries.get(path);
  check(b !== undefined, `the capsule has no ${path}`);
  return JSON.parse(dec.decode(b)) as Record<string, unknown>;
}

/** The fuel the first tool invocation of a record used. */
function fuelOf(record: RunRecord): number {
  const e = record.events.find((x) => x.type === "tool.completed");
  check(e !== undefined, `no tool.completed: ${record.status} ${record.error?.code} ${record.error?.message}`);
  return Number(e.payload["fuel"]);
}

/**
 * The run-model cases.
 * @param io file access rooted at `conformance/`
 * @returns the cases
 */
export function runModelCases(io: ConformanceIO): ConformanceCase[] {
  const env: EngineEnvironment = { quickjsEngine: io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm") };
  return [
    {
      name: "runmodel/states: seed 003 phases map to seed 004 states and error types",
      run: () => {
        const table = {
          completed: statusHistory(["PENDING", "PREPARING", "EXECUTING", "COMPLETED"], null),
          watchdog: statusHistory(["PENDING", "PREPARING", "EXECUTING", "FAILED"], "EXEC_TOOL_TIMEOUT"),
          budget: productionOutcome("FAILED", "POLICY_TIMEOUT_EXCEEDED"),
          cancel: statusHistory(["PENDING", "PREPARING", "ABORTED"], null),
          cancelType: productionOutcome("ABORTED", "EXEC_ABORTED"),
          plan: productionOutcome("FAILED", "PLANNING_ERROR"),
          gate: productionOutcome("FAILED", "PLAN_STEP_REFERENCE_INVALID"),
          tool: productionOutcome("FAILED", "EXEC_TOOL_FAILED"),
        };
        check(table.completed.join() === "queued,planning,running,verifying,completed", `completed: ${table.completed.join()}`);
        check(table.watchdog.at(-1) === "timeout" && table.budget.errorType === "TIMEOUT_ERROR", "the watchdog does not map to timeout/TIMEOUT_ERROR");
        check(table.cancel.at(-1) === "cancelled" && table.cancelType.errorType === "CANCELLED", "a cancel does not map to cancelled/CANCELLED");
        check(table.plan.errorType === "PLANNING_ERROR" && table.gate.errorType === "PLANNING_ERROR" && table.tool.errorType === "EXECUTION_ERROR", "error types");
        return sha256Hex(utf8(canonicalize(table)));
      },
    },
    {
      name: "runmodel/watchdog: the step budget restarts with each step (three steps of 0.6 budget complete; one of 1.2 is timeout/TIMEOUT_ERROR, the rest skipped)",
      run: async () => {
        const calib = await run(env, pack({ spin: SPIN }, [{ id: "c", tool: "spin", arguments: { n: 50000 } }]));
        const fuel = fuelOf(calib.record);
        const timeoutMs = Math.ceil(fuel / 0.6 / 50000); // FUEL_PER_MS = 50000: each step's own budget is ~1/0.6 of its use
        const three = await run(env, pack({ spin: SPIN }, ["a", "b", "c"].map((id, i) => ({ id, tool: "spin", arguments: { n: 50000 }, depends_on: i === 0 ? [] : [["a", "b"][i - 1]] }))), { stepTimeoutMs: timeoutMs });
        check(three.record.status === "COMPLETED", `three steps of 0.6 budget each: ${three.record.status} ${three.record.error?.code}`);
        const ok = doc(three.entries, "run.json");
        check(ok["status"] === "completed" && ok["totalSteps"] === 3 && ok["currentStepIndex"] === 2, `run.json ${JSON.stringify([ok["status"], ok["totalSteps"], ok["currentStepIndex"]])}`);
        const over = await run(env, pack({ spin: SPIN }, [
          { id: "big", tool: "spin", arguments: { n: 100000 } },
          { id: "after", tool: "spin", arguments: { n: 1 }, depends_on: ["big"] },
        ]), { stepTimeoutMs: timeoutMs });
        const d = doc(over.entries, "run.json");
        check(over.record.error?.code === "EXEC_TOOL_TIMEOUT", `one step of 1.2 budget: ${over.record.error?.code}`);
        check(d["status"] === "timeout" && d["errorType"] === "TIMEOUT_ERROR" && d["state"] === "FAILED", `run.json: ${d["status"]} ${d["errorType"]}`);
        const after = doc(over.entries, "TASK_after.json");
        check(after["status"] === "SKIPPED" && ((d["evidence"] as Record<string, unknown>[])[1] ?? {})["status"] === "skipped" && (d["evidence"] as unknown[]).length === 2, "the step after the timeout is not skipped evidence");
        return `${fuel}:${timeoutMs}:${three.record.runHash}:${over.record.runHash}`;
      },
    },
    {
      name: "runmodel/cancel: an aborted run is cancelled/CANCELLED in run.json; the live stream ends run_cancelled",
      run: async () => {
        const controller = new AbortController();
        controller.abort("SIGINT");
        const r = await run(env, pack({ spin: SPIN }, [{ id: "a", tool: "spin", arguments: { n: 10 } }]), { signal: controller.signal });
        const d = doc(r.entries, "run.json");
        check(r.record.status === "ABORTED" && d["status"] === "cancelled" && d["errorType"] === "CANCELLED", `${r.record.status} ${d["status"]} ${d["errorType"]}`);
        check((d["statusHistory"] as string[]).at(-1) === "cancelled", "statusHistory does not end cancelled");
        const map = liveEventMapper(() => "t");
        const types = r.record.events.flatMap((e) => map(e).map((x) => x.eventType));
        check(types.at(-1) === "run_cancelled", `live stream: ${types.join()}`);
        return r.record.runHash;
      },
    },
    {
      name: "runmodel/evidence: requestId given or derived, the guest's errorStack, skipped steps, TASK_<id>.json per step",
      run: async () => {
        const files = pack({ bad: THROW, spin: SPIN }, [{ id: "boom", tool: "bad", arguments: { v: 7 } }, { id: "later", tool: "spin", arguments: { n: 1 }, depends_on: ["boom"] }]);
        const given = await run(env, files, { requestId: "req-2026-001" });
        const boom = doc(given.entries, "TASK_boom.json");
        const stack = String(boom["errorStack"] ?? "");
        check(boom["requestId"] === "req-2026-001" && doc(given.entries, "run.json")["requestId"] === "req-2026-001", "the given requestId is not in the evidence and run.json");
        check(stack.includes("inner") && !/reach-prelude|node:|file:|\/src\//.test(stack), `errorStack is not the guest's own: ${JSON.stringify(stack)}`);
        check(doc(given.entries, "TASK_later.json")["status"] === "SKIPPED", "the step after the failure is not skipped (seed 001's TASK status)");
        check(doc(given.entries, "run.json")["errorType"] === "EXECUTION_ERROR", "a tool failure is not EXECUTION_ERROR");
        const derived = await run(env, files);
        const id = doc(derived.entries, "run.json")["requestId"];
        check(typeof id === "string" && /^[0-9a-f-]{36}$/.test(id) && doc(derived.entries, "TASK_boom.json")["requestId"] === id, "no derived requestId");
        check(given.record.runHash !== derived.record.runHash, "the requestId is not committed by the run hash");
        return `${given.record.runHash}:${derived.record.runHash}:${sha256Hex(utf8(stack))}`;
      },
    },
    ...["chart", "parallel", "path_escape_fail"].map((name) => ({
      name: `runmodel/live events of capsule ${name}: seed 004's stream mapped from the hashed events`,
      run: () => {
        const file = io.list(`capsules/${name}`).find((f) => f.endsWith(".capsule.tar.gz"))!;
        const capsule = readRunCapsule(io.readBytes(`capsules/${name}/${file}`));
        const events = dec.decode(capsule.entries.get("events.jsonl")!).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Parameters<ReturnType<typeof liveEventMapper>>[0]);
        const map = liveEventMapper(() => "1970-01-01T00:00:00.000Z");
        const live = events.flatMap((e) => map(e));
        check(live[0]?.eventType === "run_started", "the stream does not start with run_started");
        check(["run_completed", "run_failed", "run_cancelled"].includes(live.at(-1)!.eventType), "the stream does not end with a terminal event");
        check(live.every((e) => events[e.sourceSequence!]!.eventHash === e.sourceEventHash), "a live event names a source it does not come from");
        return sha256Hex(utf8(canonicalize(live)));
      },
    })),
  ];
}
