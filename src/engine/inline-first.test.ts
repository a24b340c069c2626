import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { runEngine } from "./engine.ts";
import type { EngineRunRequest } from "./engine.ts";
import { inlineFirst } from "./inline-first.ts";
import { busyPack } from "../../tests/support/pack.ts";

const env = { quickjsEngine: readQuickJsEngineWasm };


describe("inlineFirst", () => {
  it("keeps an attempt while the process used no CPU meanwhile (a loaded machine, not a long run); moves it when it did", async () => {
    const request: EngineRunRequest = { pack: { files: busyPack(2e6) } };
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
