/**
 * Hang, recursion and memory bombs (README.md in this folder, "Limits, and what stops which bomb"): each ends with the
 * right code within its timeout plus one second, and the next invocation in the same process works.
 */
import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../../../tests/support/platform.ts";
import type { ToolInvocation } from "../types.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation } from "./_test-host.ts";

const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });

async function bomb(src: string, extra: Partial<ToolInvocation>) {
  const inv = invocation(src, null, extra);
  const t0 = performance.now();
  const out = await runner.run(inv);
  const ms = performance.now() - t0;
  expect(ms).toBeLessThan(inv.timeoutMs + 3000); // the watchdog acts at the meter's next refill: milliseconds
  const next = await runner.run(invocation(`export default (i) => ({ still: "alive", i })`, 7));
  expect(next).toMatchObject({ status: "success", output: { still: "alive", i: 7 } });
  if (out.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(out.output)}`);
  return { error: out.error, ms, fuelUsed: out.fuelUsed };
}

describe("limits", () => {
  it("warms the engine up (instrumentation is not the tools' time)", async () => {
    expect(await runner.run(invocation(`export default () => 1`))).toMatchObject({ status: "success", output: 1 });
  }, 60_000);

  it.each([
    ["for(;;){}", `export default () => { for (;;) {} }`],
    ["while(true){} in an async function", `export default async () => { await null; while (true) {} }`],
    ["a loop at module top level", `for (;;) {} export default () => 1`],
    ["a loop in a getter of the output", `export default () => ({ get x() { for (;;) {} } })`],
    ["a loop in a getter of the thrown error", `export default () => { throw { get name() { for (;;) {} } } }`],
    ["a loop after catching the interrupt", `export default () => { for (;;) { try { for (;;) {} } catch (e) {} } }`],
  ])("%s ends with EXEC_TOOL_TIMEOUT", async (_what, src) => {
    const { error } = await bomb(src, { timeoutMs: 500 });
    expect(error.code).toBe("EXEC_TOOL_TIMEOUT");
  });

  it("new Array(1e9).join() (a loop inside QuickJS's C code) runs out of fuel", async () => {
    const { error, fuelUsed } = await bomb(`export default () => new Array(1e9).join()`, { timeoutMs: 4000, fuel: 200_000_000n });
    expect(error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(error.details["reason"]).toBe("fuel");
    expect(fuelUsed).toBe(200_000_000n);
  });

  it("a fuel budget is deterministic: the same tool uses the same fuel on every run", async () => {
    const src = `export default () => { let s = 0; for (let i = 0; i < 10000; i++) s += i; return s }`;
    const a = await runner.run(invocation(src));
    const b = await runner.run(invocation(src));
    expect(a.status).toBe("success");
    expect(a.fuelUsed).toBeGreaterThan(10_000n);
    expect(b.fuelUsed).toBe(a.fuelUsed);
  });

  it("a recursion bomb ends with EXEC_RESOURCE_EXHAUSTED (stack)", async () => {
    const { error } = await bomb(`function f(n) { return f(n + 1) + 1 } export default () => f(0)`, { timeoutMs: 2000 });
    expect(error.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(error.details["reason"]).toBe("stack");
  });

  it.each([
    ["typed arrays (outside QuickJS's own accounting; bounded by the engine's memory ceiling)", `export default () => { let a = []; for (;;) a.push(new Uint8Array(1e6)) }`],
    ["doubling strings", `export default () => { let a = []; for (let n = 1;; n *= 2) a.push("x".repeat(n)) }`],
    ["objects", `export default () => { let a = []; for (let i = 0;; i++) a.push({ i, s: "v" + i }) }`],
  ])("a memory bomb of %s ends with EXEC_RESOURCE_EXHAUSTED (memory)", async (_what, src) => {
    const { error } = await bomb(src, { timeoutMs: 5000 });
    expect(`${error.code} ${error.message}`).toMatch(/^EXEC_RESOURCE_EXHAUSTED /);
    expect(error.details["reason"]).toBe("memory");
  });

  it("the sparse-array bomb (new Array(1e6) allocates nothing in QuickJS) is stopped by the timeout", async () => {
    const { error } = await bomb(`export default () => { let a = []; for (;;) a.push(new Array(1e6)) }`, { timeoutMs: 1000 });
    expect(["EXEC_TOOL_TIMEOUT", "EXEC_RESOURCE_EXHAUSTED"]).toContain(error.code);
  });

  it("a tool waiting on a slow host call ends with EXEC_TOOL_TIMEOUT", async () => {
    const host = (await import("./_test-host.ts")).testHost("7", "inv-1", { "http.fetch": () => new Promise(() => {}) });
    const { error } = await bomb(`export default (i, reach) => reach.http.fetch("https://api.example.com/slow")`, { timeoutMs: 300, host });
    expect(error.code).toBe("EXEC_TOOL_TIMEOUT");
  });
});
