/**
 * Sandboxes served from a memory snapshot (README.md "Reuse"): every invocation starts from the state of a sandbox
 * just prepared on a fresh engine, so outcome, tape and fuel do not depend on what ran before in the process — not
 * on the runner being new, nor on tools that grew the heap, tried an import, ran out of fuel or memory, or polluted
 * their globals — and no hostile tool reaches the next invocation.
 */
import { readFileSync } from "node:fs";
import { QuickJSWASMModule } from "quickjs-emscripten-core";
import { describe, expect, it, vi } from "vitest";
import { readQuickJsEngineWasm } from "../../../tests/support/platform.ts";
import type { ToolInvocation, ToolOutcome } from "../types.ts";
import { EngineHost } from "./engine.ts";
import { GLOBAL_ALLOWLIST } from "./prelude.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation, testHost } from "./_test-host.ts";

const SLUGIFY = readFileSync(new URL("../../../wasm-tools/js-slugify/tool.js", import.meta.url), "utf8");
const LOOP = `export default () => { let s = 0; for (let i = 0; i < 2000; i++) s += i; return s }`;
const GROW_HEAP = `export default () => { const a = []; for (let i = 0; i < 100000; i++) a.push("s" + i); return a.length }`;
const GROW_MEMORY = `export default () => { const a = []; for (let i = 0; i < 24; i++) a.push(new Uint8Array(1 << 20)); return a.length }`;
const IMPORT = `export default () => import("node:fs").then(() => "loaded", (e) => e.message)`;
const OUT_OF_FUEL = `export default () => new Array(1e9).join()`;
const MEMORY_BOMB = `export default () => { let a = []; for (let i = 0;; i++) a.push({ i, s: "v" + i }) }`;
const TYPED_ARRAY_BOMB = `export default () => { let a = []; for (;;) a.push(new Uint8Array(1e6)) }`;
const WAITS = `export default (i, reach) => reach.http.fetch("https://api.example.com/slow")`;

type Step = [name: string, source: string, input?: unknown, extra?: Partial<ToolInvocation>, slowHost?: boolean];

/** Tools whose outcome, tape and fuel are compared: plain JS, the lazily compiled `reach` API, Date / Math.random, errors. */
const PROBES: Step[] = [
  ["a loop", LOOP],
  ["slugify", SLUGIFY, { text: "Héllo, Wörld — Straße 42!" }],
  ["the reach API", `export default (i, reach) => { reach.log("hi", { n: 1 }); reach.fs.write("out/a.txt", "abc");
    reach.memory.set("k", [1]); return { k: reach.memory.get("k"), t: reach.clock.now(), r: reach.random.bytes(3).length } }`],
  ["Date and Math.random", `export default () => [Date.now(), new Date().toISOString(), Math.random(), Math.random()]`],
  ["an async host call", `export default async (i, reach) => (await reach.http.fetch("https://api.example.com/x")).json()`],
  ["a thrown error", `export default () => { throw new TypeError("bad input") }`],
];

/** Tools that change the engine's state, each run before every probe. */
const HISTORY: Step[] = [
  ["a heap that grows (within the engine's memory)", GROW_HEAP],
  ["a linear memory that grows", GROW_MEMORY],
  ["an import attempt", IMPORT],
  ["a static import", `import fs from "fs"; export default () => 1`],
  ["a tool that runs out of fuel", OUT_OF_FUEL, null, { fuel: 20_000_000n }],
  ["a JS loop that runs out of fuel", `export default () => { for (;;) {} }`, null, { fuel: 3_000_000n }],
  ["a memory bomb", MEMORY_BOMB, null, { memoryLimitBytes: 8 * 1024 * 1024 }],
  ["a typed-array memory bomb", TYPED_ARRAY_BOMB],
  ["a recursion bomb", `function f(n) { return f(n + 1) + 1 } export default () => f(0)`],
  ["a violation read by describe", `export default (i, reach) => { throw { get name() { try { reach.fs.read("secret/x") } catch {} return "X" } } }`],
  ["another heap limit", LOOP, null, { memoryLimitBytes: 32 * 1024 * 1024 - 4096 }],
  ["a tool left waiting on the host", WAITS, null, { timeoutMs: 200 }, true],
  ["globals changed", `export default () => { Object.prototype.x = 1; Math.random = () => 0.5; globalThis.y = new Uint8Array(1 << 16); return 1 }`],
];

function summary(out: ToolOutcome, calls: unknown, timing: boolean): string {
  const result = out.status === "success" ? out.output : `${out.error.code}: ${out.error.message}`;
  return JSON.stringify({ status: out.status, result, log: out.log, fuel: timing ? "(wall clock)" : String(out.fuelUsed), calls });
}

async function runStep(runner: QuickJsRunner, [, source, input, extra, slow]: Step): Promise<string> {
  const host = testHost("9", "inv-3", slow === true ? { "http.fetch": () => new Promise(() => {}) } : {});
  const o = await runner.run(invocation(source, (input ?? null) as never, { host, invocationId: "inv-3", ...extra }));
  return summary(o, host.calls, slow === true);
}

/** Each probe as the first invocation of its own new runner. */
async function firstInvocations(): Promise<string[]> {
  const out: string[] = [];
  for (const probe of PROBES) out.push(await runStep(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm }), probe));
  return out;
}

describe("sandboxes restored from a snapshot", () => {
  it("give a tool the same outcome, tape and fuel on a new runner as on one that already ran it", async () => {
    const first = await firstInvocations();
    const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });
    for (let round = 0; round < 2; round++) {
      for (const [k, probe] of PROBES.entries()) expect(await runStep(runner, probe), `${probe[0]}, round ${round}`).toBe(first[k]);
    }
    expect(first[0]).toMatch(/"status":"success".*"fuel":"[1-9]/);
  }, 120_000);

  it("give a tool the same outcome, tape and fuel whatever other tools ran before on the runner", async () => {
    const first = await firstInvocations();
    const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });
    const history: string[] = [];
    for (const step of HISTORY) {
      history.push(`${step[0]}: ${await runStep(runner, step)}`);
      for (const [k, probe] of PROBES.entries()) expect(await runStep(runner, probe), `${probe[0]} after ${step[0]}`).toBe(first[k]);
    }
    // The history did what it says (a check that this test exercises those paths).
    const outcome = (name: string) => history.find((h) => h.startsWith(name))!;
    expect(outcome("a tool that runs out")).toMatch(/EXEC_RESOURCE_EXHAUSTED.*"fuel":"20000000"/);
    expect(outcome("a JS loop that runs out")).toMatch(/EXEC_RESOURCE_EXHAUSTED.*"fuel":"3000000"/);
    expect(outcome("a memory bomb")).toMatch(/EXEC_RESOURCE_EXHAUSTED.*memory limit/);
    expect(outcome("a typed-array memory bomb")).toMatch(/EXEC_RESOURCE_EXHAUSTED.*memory limit/);
    expect(outcome("an import attempt")).toContain("tools cannot import modules");
    expect(outcome("a tool left waiting")).toContain("EXEC_TOOL_TIMEOUT");
  }, 300_000);

  it("give the same outcomes, tape and fuel as a fresh engine per invocation", async () => {
    const sequence = async (runner: QuickJsRunner) => {
      const out: string[] = [];
      for (const step of [...PROBES, ...HISTORY, ...PROBES]) out.push(`${step[0]}: ${await runStep(runner, step)}`);
      return out;
    };
    const fresh = await sequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm, reuseSandboxes: false }));
    expect(await sequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm }))).toEqual(fresh);
  }, 300_000);

  it("replace the engine (a fresh instance, never a re-prepared one) only when an invocation moved it", async () => {
    const runtimes = vi.spyOn(QuickJSWASMModule.prototype, "newRuntime");
    const engines = vi.spyOn(EngineHost.prototype, "instantiate");
    try {
      const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });
      const count = async (step: Step) => {
        await runStep(runner, step);
        await runStep(runner, PROBES[0]!); // an engine dropped after `step` is replaced here
        return [engines.mock.calls.length, runtimes.mock.calls.length];
      };
      expect(await count(PROBES[0]!)).toEqual([1, 1]);
      expect(await count(PROBES[1]!)).toEqual([1, 1]);
      expect(await count(["heap", GROW_HEAP])).toEqual([1, 1]); // restored: dlmalloc's state is in the snapshot
      expect(await count(["memory", GROW_MEMORY])).toEqual([2, 2]);
      expect(await count(["import", IMPORT])).toEqual([3, 3]);
      expect(await count(["fuel", OUT_OF_FUEL, null, { fuel: 20_000_000n }])).toEqual([4, 4]);
      expect(await count(["limit", LOOP, null, { memoryLimitBytes: 16 * 1024 * 1024 }])).toEqual([6, 6]);
      expect(await count(PROBES[2]!)).toEqual([6, 6]);
    } finally {
      runtimes.mockRestore();
      engines.mockRestore();
    }
  }, 120_000);

  it("let nothing a hostile tool changes reach the next invocation", async () => {
    const hostile = `export default (i, reach) => {
      Object.prototype.polluted = 1;
      Array.prototype.push = function () { return "hijacked" };
      JSON.stringify = () => '"hijacked"';
      String.prototype.toUpperCase = () => "hijacked";
      Date.prototype.getTime = () => 0;
      Math.random = () => 0.5;
      Object.defineProperty(Function.prototype, "hijacked", { value: 1, enumerable: false });
      globalThis.leak = "secret";
      globalThis.keep = new Uint8Array(1 << 20).fill(0x5a);
      eval("var leakedVar = 1");
      Promise.resolve().then(() => { globalThis.late = 1 });
      reach.http.fetch("https://api.example.com/slow");
      return "done";
    }`;
    const check = `export default () => {
      const a = []; a.push(1, 2);
      return { polluted: ({}).polluted ?? "clean", push: a.length, json: JSON.stringify({ x: 1 }), upper: "a".toUpperCase(),
        time: new Date(5).getTime(), random: Math.random() !== 0.5, fn: "hijacked" in Function.prototype,
        globals: Object.getOwnPropertyNames(globalThis).sort() };
    }`;
    const slowHost = () => testHost("9", "inv-3", { "http.fetch": () => new Promise(() => {}) });
    const sequence = async (runner: QuickJsRunner) => {
      const checks: ToolOutcome[] = [];
      for (let round = 0; round < 2; round++) {
        expect(await runner.run(invocation(hostile, null, { host: slowHost(), timeoutMs: 500 }))).toMatchObject({ status: "success", output: "done" });
        checks.push(await runner.run(invocation(check, null, { host: slowHost() })));
      }
      return checks;
    };
    const expected = await sequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm, reuseSandboxes: false }));
    const checks = await sequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm }));
    for (const [k, out] of checks.entries()) {
      expect(out).toMatchObject({
        status: "success",
        output: { polluted: "clean", push: 2, json: '{"x":1}', upper: "A", time: 5, random: true, fn: false },
      });
      const globals = (out.status === "success" ? (out.output as { globals: string[] }).globals : []);
      for (const name of globals) expect(GLOBAL_ALLOWLIST).toContain(name);
      expect(out).toEqual(expected[k]); // output and fuel: as if the hostile tool had had an engine of its own
    }
  }, 60_000);
});
