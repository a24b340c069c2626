/**
 * The escape corpus (README.md in this folder, "Determinism and isolation"): each entry is a hostile tool module that
 * reports what it could reach. Every report must show nothing outside the sandbox and only allowlisted globals.
 */
import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../../../tests/support/platform.ts";
import type { ToolOutcome } from "../types.ts";
import { GLOBAL_ALLOWLIST } from "./prelude.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation, testHost } from "./_test-host.ts";

const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });

/** Shared probe: what a given global object exposes. */
const PROBE = `
function probe(g) {
  const names = Object.getOwnPropertyNames(g);
  return { names, symbols: Object.getOwnPropertySymbols(g).length,
    hostish: ["process", "Deno", "require", "module", "Buffer", "setTimeout", "setInterval", "setImmediate", "queueMicrotask",
      "WeakRef", "FinalizationRegistry", "SharedArrayBuffer", "Atomics", "fetch", "std", "os", "scriptArgs", "print", "globalThis.__proto__.process"]
      .filter((n) => { try { return typeof g[n] !== "undefined" } catch { return true } }) };
}`;

function report(out: ToolOutcome): Record<string, unknown> {
  if (out.status !== "success") throw new Error(`expected a report, got ${out.error.code}: ${out.error.message}`);
  return out.output as Record<string, unknown>;
}

function expectClean(p: unknown): void {
  const r = p as { names: string[]; symbols: number; hostish: string[] };
  expect(r.hostish).toEqual([]);
  expect(r.symbols).toBe(0);
  for (const name of r.names) expect(GLOBAL_ALLOWLIST).toContain(name);
}

describe("escape corpus", () => {
  it("globalThis holds only allowlisted names (module top level and inside the tool)", async () => {
    const src = `${PROBE} const top = probe(globalThis); export default () => ({ top, inner: probe(globalThis), self: globalThis.globalThis === globalThis })`;
    const r = report(await runner.run(invocation(src)));
    expectClean(r["top"]);
    expectClean(r["inner"]);
    expect((r["top"] as { names: string[] }).names).toContain("reach");
    expect(r["self"]).toBe(true);
  });

  it("the Function-constructor route reaches only the sandbox's own global", async () => {
    const src = `${PROBE} export default () => {
      const viaFn = (function () {}).constructor("return this")();
      const viaAsync = Object.getPrototypeOf(async function () {}).constructor("return globalThis");
      const viaGen = Object.getPrototypeOf(function* () {}).constructor("return this");
      const viaEval = (0, eval)("this");
      return { fn: probe(viaFn), same: viaFn === globalThis && viaEval === globalThis, gen: probe(viaGen().next().value ?? globalThis),
        proc: (function () {}).constructor("try { return typeof process } catch (e) { return 'threw' }")() };
    }`;
    const r = report(await runner.run(invocation(src)));
    expectClean(r["fn"]);
    expectClean(r["gen"]);
    expect(r["same"]).toBe(true);
    expect(r["proc"]).toBe("undefined");
  });

  it("Error.prepareStackTrace / captureStackTrace tricks see no host frames or objects", async () => {
    const src = `${PROBE} export default (i, reach) => {
      const seen = [];
      Error.prepareStackTrace = (err, frames) => { seen.push(typeof frames, Array.isArray(frames) ? frames.map((f) => typeof f.getThis === "function" ? probe(f.getThis() ?? {}) : typeof f) : null); return "x"; };
      const o = {};
      if (typeof Error.captureStackTrace === "function") Error.captureStackTrace(o);
      let hostStack = "";
      try { reach.fs.read("missing") } catch (e) { hostStack = String(e.stack); seen.push(Object.getPrototypeOf(e) === Error.prototype); }
      try { null.x } catch (e) { hostStack += String(e.stack) }
      return { seen: JSON.stringify(seen), stack: hostStack + String(o.stack), g: probe(globalThis) };
    }`;
    const r = report(await runner.run(invocation(src)));
    expectClean(r["g"]);
    expect(String(r["stack"])).not.toMatch(/node_modules|file:|node:|\.ts\b|wasm-function|runner|bridge/);
    expect(String(r["seen"])).not.toMatch(/process|require|Deno/);
  });

  it("Promise[Symbol.species] and then hooks only ever see guest values", async () => {
    const host = testHost();
    const src = `${PROBE} export default async (i, reach) => {
      const found = [];
      const inspect = (v) => { if (typeof v === "function") { try { found.push(v.constructor("return typeof process")()) } catch (e) { found.push("threw") } }
        else if (v && typeof v === "object") { try { found.push(Object.getOwnPropertyNames(v).join(",")) } catch (e) { found.push("threw") } } };
      const realThen = Promise.prototype.then;
      Promise.prototype.then = function (a, b) { inspect(this); inspect(a); inspect(b); return realThen.call(this, a, b); };
      class Sneaky extends Promise { constructor(ex) { super((res, rej) => { inspect(res); inspect(rej); ex(res, rej); }); } }
      Object.defineProperty(Promise, Symbol.species, { get() { found.push("species"); return Sneaky; } });
      const p = reach.http.fetch("https://api.example.com/a");
      inspect(p);
      const r = await p.then((x) => x);
      reach.log(JSON.stringify(found));
      return { status: r.status, found: found.filter((f) => f === "string" || f === "object" || f === "function"), g: probe(globalThis) };
    }`;
    const out = await runner.run(invocation(src, null, { host }));
    const r = report(out);
    expect(r["status"]).toBe(200);
    expect(r["found"]).toEqual([]); // no function whose realm has a `process`
    expectClean(r["g"]);
    expect(out.log).not.toMatch(/string|process/);
  });

  it("a thenable output or a hostile toJSON stays inside the sandbox", async () => {
    const src = `export default () => ({ then(resolve) { resolve({ toJSON() { return Object.getOwnPropertyNames(globalThis).filter((n) => typeof globalThis[n] === "undefined" && n !== "undefined") } }) } })`;
    const r = await runner.run(invocation(src));
    expect(r).toMatchObject({ status: "success", output: [] });
  });

  it.each([
    ["dynamic import of node:fs", `export default () => import("node:fs").then(() => "loaded", (e) => "refused: " + e.message)`],
    ["eval of import()", `export default () => eval("import('fs')").then(() => "loaded", (e) => "refused: " + e.message)`],
    ["Function of import()", `export default () => Function("return import('./x.js')")().then(() => "loaded", (e) => "refused: " + e.message)`],
  ])("%s is refused", async (_what, src) => {
    const r = await runner.run(invocation(src));
    expect(r.status === "success" && String(r.output)).toMatch(/^refused: tools cannot import modules/);
  });

  it.each(["require", "process", "Deno", "setTimeout", "WeakRef", "FinalizationRegistry", "SharedArrayBuffer", "InternalError"])(
    "%s is absent",
    async (name) => {
      const r = await runner.run(invocation(`export default () => [typeof ${name}, "${name}" in globalThis]`));
      expect(r).toMatchObject({ status: "success", output: ["undefined", false] });
    },
  );

  it("reach cannot be replaced, and changes to shared prototypes do not outlive the invocation", async () => {
    const first = await runner.run(invocation(`export default () => { Object.prototype.polluted = 1; Array.prototype.push = null;
      let replaced = true; try { globalThis.reach = null; } catch (e) { replaced = false } return { replaced, still: typeof reach.fs.read }; }`));
    expect(first).toMatchObject({ status: "success", output: { replaced: false, still: "function" } });
    const second = await runner.run(invocation(`export default () => [({}).polluted ?? "clean", typeof [].push]`));
    expect(second).toMatchObject({ status: "success", output: ["clean", "function"] });
  });

  it("the real Date is not reachable through the virtual one", async () => {
    const src = `export default () => { const D = new Date().constructor; const P = Object.getPrototypeOf(new Date(5)).constructor;
      return [D === Date, P === Date, new D().getTime(), new P().getTime()] }`;
    const r = await runner.run(invocation(src));
    expect(r).toMatchObject({ status: "success", output: [true, true, 1767225600001, 1767225600002] });
  });
});
