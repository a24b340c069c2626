import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";
import { runEngine } from "./engine.ts";
import type { EngineRunRequest } from "./engine.ts";
import { inlineFirst } from "./inline-first.ts";

const env = { quickjsEngine: readQuickJsEngineWasm };
const enc = new TextEncoder();

/** A pack whose one JavaScript tool counts for a while, then answers. */
function busyPack(): Map<string, Uint8Array> {
  const plan = { contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "t", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["t"] }, steps: [{ id: "s", tool: "t", arguments: {}, return_spec: { type: "object" } }], success_criteria: [] };
  return new Map([
    ["reach.json", enc.encode(JSON.stringify({ specVersion: "1.0.0", id: "busy", version: "1.0.0", entrypoint: "plan.json", manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "t" }] } }, tools: { t: { kind: "js", module: "tools/t.js" } } }))],
    ["plan.json", enc.encode(JSON.stringify(plan))],
    ["tools/t.js", enc.encode("export default () => { let c = 0; for (let i = 0; i < 2e6; i++) c = (c + i) % 1000003; return { count: c }; }\n")],
  ]);
}

describe("inlineFirst", () => {
  it("keeps an attempt while the process used no CPU meanwhile (a loaded machine, not a long run); moves it when it did", async () => {
    const request: EngineRunRequest = { pack: { files: busyPack() } };
    let moved = 0;
    const elsewhere = () => (moved++, runEngine(env, request));
    const frozen = await inlineFirst({ ms: 0, cpuMs: () => 0 })((r) => runEngine(env, r), request, elsewhere);
    expect([moved, frozen.status]).toEqual([0, "COMPLETED"]);
    let cpu = 0;
    const moving = await inlineFirst({ ms: 0, cpuMs: () => (cpu += 1) })((r) => runEngine(env, r), request, elsewhere);
    expect(moved).toBe(1);
    expect(moving.runHash).toBe(frozen.runHash);
  }, 60_000);

  it("refuses a budget that is not a finite number of milliseconds", () => {
    expect(() => inlineFirst({ ms: -1 })).toThrow(RangeError);
    expect(() => inlineFirst({ ms: Number.NaN })).toThrow(RangeError);
  });
});
