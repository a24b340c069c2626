// Fuel metering of the component runner. Slow on purpose: instrumenting the ~12 MB SpiderMonkey core module with
// binaryen takes 10-30 s once per process (see README "Limits").
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../canonical/hex.ts";
import { formatIsoMillis } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import type { HostApi, HostOp, ToolInvocation } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { FuelMeter } from "../fuel/mod.ts";
import { TEXT_STATS } from "./_test-components.ts";
import { ComponentRunner } from "./runner.ts";

const COMPONENT = new Uint8Array(readFileSync(new URL("../../../wasm-tools/component/build/tool.component.wasm", import.meta.url)));

function fakeHost(): HostApi {
  let ms = 0;
  const random = deriveStream("1", "fuel-test");
  const invokeSync = (op: HostOp, request: JsonObject): JsonObject => {
    if (op === "clock.now") return { ms, iso: formatIsoMillis(ms++) };
    if (op === "random.bytes") return { data: bytesToBase64(random.bytes(request["n"] as number)) };
    return {};
  };
  return { invokeSync, invoke: (op, request) => Promise.resolve(invokeSync(op, request)) };
}

function invocation(input: unknown, fuel: bigint): ToolInvocation {
  return {
    toolName: "text-stats",
    invocationId: "inv-fuel",
    code: COMPONENT,
    input: input as ToolInvocation["input"],
    host: fakeHost(),
    timeoutMs: 60_000,
    fuel,
    memoryLimitBytes: 64 * 1024 * 1024,
  };
}

describe("ComponentRunner with fuel", () => {
  const metered = new ComponentRunner({ components: [TEXT_STATS] });
  const plain = new ComponentRunner({ components: [TEXT_STATS], meterFuel: false });
  const input = { text: "one two two three three three" };

  it("gives the same output metered, with the same fuel count every time", async () => {
    const a = await metered.run(invocation(input, 1_000_000_000n));
    // b runs on a's core instances, reset to their snapshot (instance reuse): same fuel to the unit.
    const b = await metered.run(invocation(input, 1_000_000_000n));
    const c = await plain.run(invocation(input, 1_000_000_000n));
    if (a.status !== "success" || b.status !== "success" || c.status !== "success") throw new Error("expected success");
    expect(a.output).toEqual(c.output);
    expect(a.fuelUsed).toBeGreaterThan(0n);
    expect(b.fuelUsed).toBe(a.fuelUsed);
  }, 300_000);

  it("stops a guest loop that never calls out with EXEC_RESOURCE_EXHAUSTED, and the next run works", async () => {
    const t = performance.now();
    const spin = await metered.run(invocation({ text: "", mode: "spin" }, 20_000_000n));
    expect(performance.now() - t).toBeLessThan(30_000);
    if (spin.status !== "error") throw new Error("expected an error");
    expect(spin.error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(spin.error.details["reason"]).toBe("fuel");
    expect(spin.fuelUsed).toBe(20_000_000n);
    const again = await metered.run(invocation(input, 1_000_000_000n));
    expect(again.status).toBe("success");
  }, 300_000);

  it("a stop from outside lands at a fuel refill: EXEC_TOOL_TIMEOUT (watchdog) with its fuel count, and the next run works", async () => {
    const meter = new FuelMeter({ budget: 1n << 40n, slice: 10_000n, poll: () => "watchdog" });
    const out = await metered.run({ ...invocation({ text: "a b c" }, 1n << 40n), meter });
    expect(out.status === "error" && out.error.code).toBe("EXEC_TOOL_TIMEOUT");
    expect(out.status === "error" && out.error.details["reason"]).toBe("watchdog");
    expect((await metered.run(invocation({ text: "a b c" }, 10_000_000_000n))).status).toBe("success");
  }, 120_000);
});
