// Step data flow: {"$step": id, "pointer": p} takes an earlier step's output, only along depends_on (direct or
// transitive; a step without depends_on depends on the one before it). The gate refuses every other reference with
// PLAN_STEP_REFERENCE_INVALID naming why; a pointer the actual output lacks fails the step.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { jsPack, planOf, runFiles } from "../../tests/support/pack.ts";
import { gatePlan } from "./plan-gate.ts";
import { dependencyClosures, directDependencies } from "./step-graph.ts";

const tools = new Set(["echo"]);
const ref = (step: string, pointer?: string) => ({ $step: step, ...(pointer === undefined ? {} : { pointer }) });

function refusal(plan: unknown): { code: string; reason: unknown } | null {
  try {
    gatePlan(plan, { tools });
    return null;
  } catch (err) {
    if (!(err instanceof ReachError)) throw err;
    return { code: err.code, reason: err.details["reason"] };
  }
}

describe("the dependency graph", () => {
  it("a step without depends_on depends on the one before it; depends_on [] is a root; closures are transitive", () => {
    const steps = [{ id: "a" }, { id: "b" }, { id: "c", depends_on: [] }, { id: "d", depends_on: ["b", "c"] }];
    expect(directDependencies(steps)).toEqual([[], [0], [], [1, 2]]);
    expect(dependencyClosures(directDependencies(steps))).toEqual([[], [0], [], [0, 1, 2]]);
  });
});

describe("the plan gate and $step references", () => {
  const step = (id: string, args: object = {}, extra: object = {}) => ({ id, tool: "echo", arguments: args, ...extra });
  it("accepts references along depends_on, direct and transitive, and along the implicit chain", () => {
    expect(refusal(planOf([step("a"), step("b", {}, { depends_on: ["a"] }), step("c", { x: ref("a", "/echo") }, { depends_on: ["b"] })]))).toBeNull();
    expect(refusal(planOf([step("a"), step("b"), step("c", { x: ref("a") })]))).toBeNull();
  });
  const cases: [string, unknown, string][] = [
    ["an unknown step", planOf([step("a"), step("b", { x: ref("nope") })]), "unknown"],
    ["the step itself", planOf([step("a", { x: ref("a") })]), "self"],
    ["a later step", planOf([step("a", { x: ref("b") }, { depends_on: [] }), step("b", {}, { depends_on: [] })]), "later"],
    ["a step it does not depend on", planOf([step("a", {}, { depends_on: [] }), step("b", { x: ref("a", "/echo") }, { depends_on: [] })]), "not_a_dependency"],
    ["a reference with another key", planOf([step("a"), step("b", { x: { $step: "a", other: 1 } })]), "malformed"],
    ["a pointer that is not a JSON pointer", planOf([step("a"), step("b", { x: ref("a", "echo") })]), "malformed"],
    ["a reference nested in an array", planOf([step("a", {}, { depends_on: [] }), step("b", { x: [1, { y: ref("a") }] }, { depends_on: [] })]), "not_a_dependency"],
  ];
  for (const [name, plan, reason] of cases) {
    it(`refuses ${name} with PLAN_STEP_REFERENCE_INVALID (${reason})`, () => {
      expect(refusal(plan)).toEqual({ code: "PLAN_STEP_REFERENCE_INVALID", reason });
    });
  }
});

describe("runs with $step references", () => {
  const COUNT = "export default (input) => ({ words: input.text.split(' ').length, first: input.text.split(' ')[0] })";
  const ECHO = "export default (input) => ({ echo: input })";
  it("takes values out of earlier outputs (pointer or whole output)", async () => {
    const plan = planOf([
      { id: "count", tool: "count", arguments: { text: "a bb ccc" } },
      { id: "say", tool: "echo", arguments: { n: ref("count", "/words"), all: ref("count") } },
    ]);
    const r = await runFiles(jsPack({ tools: { count: COUNT, echo: ECHO }, plan }));
    expect(r.status).toBe("COMPLETED");
    expect(r.outputs["say"]).toEqual({ echo: { n: 3, all: { words: 3, first: "a" } } });
    const invoked = r.events.filter((e) => e.type === "tool.invoked").map((e) => e.payload["arguments"]);
    expect(invoked[1]).toEqual({ n: 3, all: { words: 3, first: "a" } });
  });

  it("a pointer the output lacks fails the step with EXEC_STEP_REFERENCE_UNRESOLVED, recorded as a failed step", async () => {
    const plan = planOf([
      { id: "count", tool: "count", arguments: { text: "a b" } },
      { id: "say", tool: "echo", arguments: { n: ref("count", "/nothing/here") } },
    ]);
    const r = await runFiles(jsPack({ tools: { count: COUNT, echo: ECHO }, plan }));
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("EXEC_STEP_REFERENCE_UNRESOLVED");
    expect(r.error?.details).toMatchObject({ from: "count", pointer: "/nothing/here" });
    expect(r.events.map((e) => e.type).slice(-3)).toEqual(["run.step.started", "run.step.failed", "run.failed"]);
    expect(r.evidence.at(-1)).toMatchObject({ stepId: "say", status: "failed" });
  });
});
