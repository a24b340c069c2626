import { describe, expect, it } from "vitest";
import { readQuickJsEngineWasm } from "../../../tests/support/platform.ts";
import type { ToolOutcome } from "../types.ts";
import { QuickJsRunner } from "./runner.ts";
import { invocation, testHost } from "./_test-host.ts";

const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });

function ok(out: ToolOutcome): unknown {
  if (out.status !== "success") throw new Error(`expected success, got ${out.error.code}: ${out.error.message}`);
  return out.output;
}

function failed(out: ToolOutcome): { code: string; message: string; details: Record<string, unknown> } {
  if (out.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(out.output)}`);
  return out.error;
}

describe("QuickJsRunner: normal tools", () => {
  it("runs a sync tool and returns its JSON output", async () => {
    const out = await runner.run(invocation(`export default (input) => ({ sum: input.a + input.b, s: "x".repeat(3) })`, { a: 2, b: 3 }));
    expect(ok(out)).toEqual({ sum: 5, s: "xxx" });
  }, 60_000);

  it("runs an async tool that awaits the host", async () => {
    const src = `export default async (input, reach) => {
      const r = await reach.http.fetch("https://api.example.com/v1?q=" + input.q, { method: "GET" });
      return { status: r.status, body: r.json(), text: reach.fs.read("data/hello.txt") };
    }`;
    expect(ok(await runner.run(invocation(src, { q: "z" })))).toEqual({
      status: 200, body: { got: "https://api.example.com/v1?q=z" }, text: "héllo wörld\n",
    });
  });

  it("exposes the reach API and collects the log", async () => {
    const host = testHost();
    const src = `export default (input, reach) => {
      reach.log("hello", { n: 1 });
      console.warn("careful");
      const size = reach.fs.write("out/a.txt", "abc");
      reach.fs.write("out/b.bin", new Uint8Array([0, 255, 7]));
      reach.memory.set("k", { v: [1, 2] });
      return { size, k: reach.memory.get("k"), missing: reach.memory.get("nope") ?? "none",
        bytes: Array.from(reach.fs.readBytes("out/b.bin")), rnd: reach.random.bytes(4).length,
        t1: reach.clock.now(), t2: reach.clock.now(), frozen: Object.isFrozen(reach) && Object.isFrozen(reach.fs) };
    }`;
    const out = await runner.run(invocation(src, null, { host }));
    expect(ok(out)).toEqual({
      size: 3, k: { v: [1, 2] }, missing: "none", bytes: [0, 255, 7], rnd: 4, t1: 1767225600000, t2: 1767225600001, frozen: true,
    });
    expect(out.log).toBe('[info] hello {"n":1}\n[warn] careful\n');
    expect([...host.files.get("out/b.bin")!]).toEqual([0, 255, 7]);
  });

  it("gives byte-identical output, tape and fuel twice in a row", async () => {
    const src = `export default (input, reach) => ({ now: Date.now(), d: new Date().toISOString(), r: [Math.random(), Math.random()],
      sorted: input.xs.slice().sort((a, b) => a - b), s: String(new Date(0)) })`;
    const runOnce = async () => {
      const host = testHost("42", "inv-9");
      const out = await runner.run(invocation(src, { xs: [3, 1, 2] }, { host, invocationId: "inv-9" }));
      return JSON.stringify({ out: ok(out), calls: host.calls, fuel: String(out.fuelUsed) });
    };
    const a = await runOnce();
    const b = await runOnce();
    expect(a).toBe(b);
    expect(JSON.parse(a).fuel).not.toBe("0");
  });

  it("makes Date virtual and Math.random seeded per seed and invocation", async () => {
    const src = `export default () => ({ now: Date.now(), d: new Date().getTime(), str: typeof Date(), r: Math.random(),
      withArgs: new Date(2020, 1, 3).toISOString(), utc: Date.UTC(2001, 0, 1), proto: new Date() instanceof Date })`;
    const go = async (seed: string, id: string) => ok(await runner.run(invocation(src, null, { host: testHost(seed, id), invocationId: id }))) as Record<string, unknown>;
    const a = await go("1", "x");
    expect(a).toMatchObject({ now: 1767225600000, d: 1767225600001, str: "string", withArgs: "2020-02-03T00:00:00.000Z", utc: 978307200000, proto: true });
    expect(await go("1", "x")).toEqual(a);
    expect((await go("2", "x"))["r"]).not.toBe(a["r"]);
    expect((await go("1", "y"))["r"]).not.toBe(a["r"]);
    expect(a["r"]).toBeGreaterThanOrEqual(0);
    expect(a["r"]).toBeLessThan(1);
  });
});

describe("QuickJsRunner: failures", () => {
  it("reports a thrown error as EXEC_TOOL_FAILED with its message", async () => {
    const e = failed(await runner.run(invocation(`export default () => { throw new TypeError("bad input") }`)));
    expect(e.code).toBe("EXEC_TOOL_FAILED");
    expect(e.message).toContain("TypeError: bad input");
  });

  it.each([
    ["undefined", `export default () => undefined`],
    ["a function", `export default () => () => 1`],
    ["a BigInt", `export default () => 1n`],
    ["a cycle", `export default () => { const a = {}; a.a = a; return a }`],
    ["no default export", `export const x = 1`],
    ["a never-settling promise", `export default () => new Promise(() => {})`],
    ["a static import", `import fs from "fs"; export default () => 1`],
    ["invalid syntax", `export default () => {`],
  ])("rejects %s with EXEC_TOOL_FAILED", async (_what, src) => {
    expect(failed(await runner.run(invocation(src))).code).toBe("EXEC_TOOL_FAILED");
  });

  it("caps the output size", async () => {
    const r = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm, maxOutputBytes: 1000 });
    const e = failed(await r.run(invocation(`export default () => "é".repeat(600)`)));
    expect(e.code).toBe("EXEC_TOOL_FAILED");
    expect(e.message).toContain("more than 1000 bytes");
  });

  it("halts on a policy violation even when the guest catches it", async () => {
    const host = testHost();
    const src = `export default (i, reach) => {
      try { reach.fs.read("secret/key") } catch (e) { }
      try { reach.fs.read("data/hello.txt") } catch (e) { }
      for (;;) {}
    }`;
    const t0 = performance.now();
    const e = failed(await runner.run(invocation(src, null, { host, timeoutMs: 10_000 })));
    expect(e.code).toBe("POLICY_VIOLATION");
    expect(e.details["violationType"]).toBe("RESOURCE_ACCESS");
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(host.calls.map((c) => c.op)).toEqual(["fs.read"]); // nothing answered after the violation
  });

  it("halts on a policy violation raised while the runner reads the tool's error", async () => {
    const src = `export default (i, reach) => { throw { get name() { try { reach.fs.read("secret/x") } catch (e) {} return "Sneaky" } } }`;
    expect(failed(await runner.run(invocation(src))).code).toBe("POLICY_VIOLATION");
  });

  it("halts on a policy violation from an async host call", async () => {
    const src = `export default async (i, reach) => {
      try { await reach.http.fetch("https://evil.example.net/") } catch (e) { }
      return "finished anyway";
    }`;
    expect(failed(await runner.run(invocation(src))).code).toBe("POLICY_VIOLATION");
  });

  it("passes ReachError codes to the guest without host internals", async () => {
    const host = testHost("7", "inv-1", {
      "fs.stat": () => { throw new Error("ENOENT: /home/runner/secret/path at Object.stat (node:fs)"); },
    });
    const src = `export default (i, reach) => {
      const seen = {};
      try { reach.fs.read("missing.txt") } catch (e) { seen.missing = { code: e.code, message: e.message } }
      try { reach.fs.stat("x") } catch (e) { seen.internal = { code: e.code, message: e.message, stack: String(e.stack), own: Object.getOwnPropertyNames(e) } }
      return seen;
    }`;
    const out = ok(await runner.run(invocation(src, null, { host }))) as Record<string, Record<string, unknown>>;
    expect(out["missing"]).toEqual({ code: "EXEC_RESOURCE_UNAVAILABLE", message: "no file missing.txt" });
    expect(out["internal"]!["code"]).toBe("EXEC_TOOL_FAILED");
    expect(out["internal"]!["message"]).toBe("the host operation failed");
    expect(JSON.stringify(out)).not.toMatch(/home|node:|\.ts|node_modules|file:/);
  });
});
