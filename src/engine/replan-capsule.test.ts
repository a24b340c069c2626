// A run that replans (seed 001 §4: the planner asked again after a soft failure) ends in a capsule like any other:
// it verifies and replays, and its plan.json is the plan that locked the run.
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { readJsonl } from "../ledger/jsonl.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { runEngine } from "./engine.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";
import { jsPack } from "../../tests/support/pack.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const ECHO = `export default (input) => ({ echo: input })`;
const planner = `export default ({ context }) => {
  const bad = context.replan === undefined;
  return { contract_version: "S2-B-05.v1", plan_id: bad ? "first" : "second", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z",
    planner: "test", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["echo"] },
    steps: [{ id: bad ? "try" : "again", tool: "echo", arguments: { attempt: context.replan?.attempt ?? 0 },
      return_spec: bad ? { type: "object", required: ["missing"] } : { type: "object" } }], success_criteria: [] };
}`;

describe("a replanned run's capsule", () => {
  it("verifies and replays with the same run hash", async () => {
    const run = await runEngine(env, { pack: { files: jsPack({ tools: { echo: ECHO }, plan: planner, run: { maxReplans: 1 } }) } });
    expect(run.status, run.error?.message).toBe("COMPLETED");
    const capsule = readRunCapsule(run.capsule.bytes);
    const verification = verifyRunCapsule(capsule);
    expect(verification.checks.filter((c) => !c.ok), JSON.stringify(verification.checks.filter((c) => !c.ok))).toEqual([]);
    expect(verification.valid).toBe(true);
    const observed: { stepId: string; stepIndex: number }[] = [];
    const replay = await replayCapsule(capsule, env, { onStep: (s) => observed.push({ stepId: s.stepId, stepIndex: s.stepIndex }) });
    expect(replay.matches, JSON.stringify(replay.divergence ?? null)).toBe(true);
    expect(replay.runHash).toBe(run.runHash);
    // the observer hears of every step the record holds, the replan too, in the record's order
    const events = readJsonl(capsule.entries.get("events.jsonl")!).events as { type: string; payload: Record<string, unknown> }[];
    const started = events.filter((e) => e.type === "run.step.started").map((e) => ({ stepId: e.payload["stepId"], stepIndex: e.payload["stepIndex"] }));
    expect(observed).toEqual(started);
    expect(observed.map((s) => s.stepId)).toEqual(["try", "reach.replan.1", "again"]);
  });
});
