/**
 * Sandboxes served from a memory snapshot (README.md "Reuse"): the same outcomes, tape and fuel as a sandbox built
 * per invocation, over a sequence that walks every path (first invocation, heap growth, import attempts, dropped
 * engines, budgets below the setup cost, another heap limit), and no way for a hostile tool to reach the next one.
 */
import { readFileSync } from "node:fs";
import { QuickJSWASMModule } from "quickjs-emscripten-core";
import { describe, expect, it, vi } from "vitest";
import { readQuickJsEngineWasm } from "../../platform/quickjs-engine.ts";
import type { ToolInvocation, ToolOutcome } from "../types.ts";
import { GLOBAL_ALLOWLIST } from "./prelude.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation, testHost } from "./_test-host.ts";

const SLUGIFY = readFileSync(new URL("../../../wasm-tools/js-slugify/tool.js", import.meta.url), "utf8");
const LOOP = `export default () => { let s = 0; for (let i = 0; i < 2000; i++) s += i; return s }`;

type Step = [name: string, source: string, input?: unknown, extra?: Partial<ToolInvocation>, slowHost?: boolean];
const SEQUENCE: Step[] = [
  ["first on a fresh engine", `export default () => 1`],
  ["slugify", SLUGIFY, { text: "Héllo, Wörld — Straße 42!" }],
  ["the reach API", `export default (i, reach) => { reach.log("hi", { n: 1 }); reach.fs.write("out/a.txt", "abc");
    reach.memory.set("k", [1]); return { k: reach.memory.get("k"), t: reach.clock.now(), r: reach.random.bytes(3).length } }`],
  ["Date and Math.random", `export default () => [Date.now(), new Date().toISOString(), Math.random(), Math.random()]`],
  ["an async host call", `export default async (i, reach) => (await reach.http.fetch("https://api.example.com/x")).json()`],
  ["a thrown error", `export default () => { throw new TypeError("bad input") }`],
  ["a violation read by describe", `export default (i, reach) => { throw { get name() { try { reach.fs.read("secret/x") } catch {} return "X" } } }`],
  ["after a violation", LOOP],
  ["a heap that grows", `export default () => { const a = []; for (let i = 0; i < 100000; i++) a.push("s" + i); return a.length }`],
  ["after growth", LOOP],
  ["an import attempt", `export default () => import("node:fs").then(() => "loaded", (e) => e.message)`],
  ["after an import 1", LOOP],
  ["after an import 2", SLUGIFY, { text: "again" }],
  ["a memory bomb (engine dropped)", `export default () => { let a = []; for (let i = 0;; i++) a.push({ i, s: "v" + i }) }`],
  ["first on the next engine", LOOP],
  ["second on it", LOOP],
  ["a budget below the sandbox's setup cost", LOOP, null, { fuel: 150_000n }],
  ["first after the fuel trap", LOOP],
  ["second after the fuel trap", LOOP],
  ["a budget that runs out in the tool", LOOP, null, { fuel: 260_000n }],
  ["warm again 1", LOOP],
  ["warm again 2", LOOP],
  ["another heap limit, same engine", LOOP, null, { memoryLimitBytes: 32 * 1024 * 1024 - 4096 }],
  ["the first heap limit again", LOOP],
  ["a tool left waiting on the host", `export default (i, reach) => reach.http.fetch("https://api.example.com/slow")`, null, { timeoutMs: 200 }, true],
  ["after the timeout", SLUGIFY, { text: "after" }],
];

function summary(out: ToolOutcome, calls: unknown, timing: boolean): string {
  const result = out.status === "success" ? out.output : `${out.error.code}: ${out.error.message}`;
  return JSON.stringify({ status: out.status, result, log: out.log, fuel: timing ? "(wall clock)" : String(out.fuelUsed), calls });
}

async function runSequence(runner: QuickJsRunner): Promise<string[]> {
  const out: string[] = [];
  for (const [name, source, input, extra, slow] of SEQUENCE) {
    const host = testHost("9", "inv-3", slow === true ? { "http.fetch": () => new Promise(() => {}) } : {});
    const o = await runner.run(invocation(source, (input ?? null) as never, { host, invocationId: "inv-3", ...extra }));
    out.push(`${name}: ${summary(o, host.calls, slow === true)}`);
  }
  return out;
}

describe("sandboxes restored from a snapshot", () => {
  it("give the same outcomes, tape and fuel as a sandbox per invocation", async () => {
    const fresh = await runSequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm, reuseSandboxes: false }));
    const reused = await runSequence(new QuickJsRunner({ engineWasm: readQuickJsEngineWasm }));
    expect(reused).toEqual(fresh);
    expect(fresh.find((s) => s.startsWith("a budget below"))).toContain("EXEC_RESOURCE_EXHAUSTED");
    expect(fresh.find((s) => s.startsWith("a budget that runs out"))).toContain("EXEC_RESOURCE_EXHAUSTED");
  }, 120_000);

  it("are used after an engine's first invocation (no new runtime per invocation)", async () => {
    const spy = vi.spyOn(QuickJSWASMModule.prototype, "newRuntime");
    try {
      for (const reuse of [true, false]) {
        spy.mockClear();
        const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm, reuseSandboxes: reuse });
        for (let i = 0; i < 5; i++) expect(await runner.run(invocation(LOOP))).toMatchObject({ status: "success" });
        expect(spy).toHaveBeenCalledTimes(reuse ? 2 : 5); // the first invocation's, and the snapshotted one
      }
    } finally {
      spy.mockRestore();
    }
  }, 60_000);

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
      await runner.run(invocation(LOOP)); // the engine's first invocation; with reuse, the next ones start from the snapshot
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
      expect(out).toEqual(expected[k]); // output and fuel: as if the hostile tool had had a sandbox of its own
    }
  }, 60_000);
});
