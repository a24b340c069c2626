import { describe, expect, it } from "vitest";
import type { PlanStep } from "../protocol/plan.ts";
import { Workspace } from "../sandbox/workspace/workspace.ts";
import { Generation } from "./generation.ts";

const step = (id: string, extra: Partial<PlanStep> = {}): PlanStep => ({ id, tool: "t", arguments: {}, ...extra }) as PlanStep;

function generation(steps: PlanStep[] = []): Generation {
  const image = new Workspace().image();
  return new Generation(steps, { workspace: image.state, memory: new Map(), artifacts: { count: 0, bytes: 0 }, fuel: 0n, tape: { records: 0, blobBytes: 0 } }, image.config, 0);
}

/** Walk step `i` the way the coordinator does: view, result (none here), emission. */
function walk(gen: Generation, i: number): void {
  const view = gen.viewOf(i);
  gen.complete(i, view.state.workspace, null, view.clockStartMs);
  gen.emitted(i);
}

describe("Generation: a session's calls one at a time", () => {
  it("a call that depends on every call before it sees the run's state as it is, without composing the calls again", () => {
    const gen = generation();
    for (let i = 0; i < 3000; i++) {
      expect(gen.add(step(`call-${i}`))).toBe(i);
      // The same object, not a composition of i earlier commits: the cost of a call does not grow with the session.
      expect(gen.viewOf(i).state).toBe(gen.current);
      walk(gen, i);
    }
    expect([...gen.closureOf(4)]).toEqual([0, 1, 2, 3]);
    expect(gen.closureOf(2999).length).toBe(2999);
    expect(gen.isChain).toBe(true);
  });

  it("a call reads the outputs of every call before it without copying them", () => {
    const gen = generation();
    const ran = (n: number) =>
      ({ exec: { stepError: null, toolOutput: { n }, clockEndMs: 0, fuelUsed: "1" }, workspace: null, memory: [], artifacts: [], tape: { records: [], blobs: [] } }) as unknown as Parameters<Generation["complete"]>[2];
    let first: object | undefined;
    for (let i = 0; i < 3000; i++) {
      gen.add(step(`call-${i}`));
      const view = gen.viewOf(i);
      expect(Object.keys(view.outputs).length).toBe(i);
      if (i > 0) expect(view.outputs[`call-${i - 1}`]).toEqual({ n: i - 1 });
      // One record kept as the calls are emitted, not a copy of i outputs per call.
      first ??= view.outputs;
      expect(view.outputs).toBe(first);
      gen.complete(i, view.state.workspace, ran(i), view.clockStartMs);
      gen.emitted(i);
    }
    // A step that does not see every emitted step gets its own outputs: those of its closure only.
    const gen2 = generation([step("a"), step("b", { depends_on: [] }), step("c", { depends_on: ["a"] })]);
    for (const i of [0, 1]) {
      const view = gen2.viewOf(i);
      gen2.complete(i, view.state.workspace, ran(i), view.clockStartMs);
      gen2.emitted(i);
    }
    expect(gen2.viewOf(2).outputs).toEqual({ a: { n: 0 } });
  });

  it("gives added steps the dependencies and closures a whole plan would have", () => {
    const steps = [step("a"), step("b", { depends_on: [] }), step("c", { depends_on: ["a", "b"] }), step("d"), step("e", { depends_on: ["b"] })];
    const whole = generation(steps);
    const added = generation();
    for (const s of steps) added.add(s);
    for (let i = 0; i < steps.length; i++) {
      expect(added.depsOf(i)).toEqual(whole.depsOf(i));
      expect([...added.closureOf(i)]).toEqual([...whole.closureOf(i)]);
    }
    expect([...added.closureOf(3)]).toEqual([0, 1, 2]);
    expect([...added.closureOf(4)]).toEqual([1]);
    expect(added.isChain).toBe(false);
  });
});
