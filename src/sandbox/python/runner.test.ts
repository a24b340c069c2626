import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { FuelMeter } from "../fuel/mod.ts";
import { invocation, outputOf, pythonRunner, runTool, testHost } from "../../../tests/support/python.ts";
import { PythonRunner } from "./runner.ts";

const runner = pythonRunner();

describe("python tools", () => {
  it("runs main(input, reach) and returns its JSON output; print goes to the log", async () => {
    const src = `
def main(input, reach):
    print("got", len(input["items"]), "items")
    reach.log("counted", {"n": len(input["items"])}, level="warn")
    return {"total": sum(input["items"]), "first": input["items"][0], "name": input["name"].upper(), "ratio": 1 / 4}
`;
    const out = await runTool(runner, src, { items: [3, 4, 5], name: "ada – é" });
    expect(outputOf(out)).toEqual({ total: 12, first: 3, name: "ADA – é", ratio: 0.25 }); // MicroPython's upper() is ASCII-only
    expect(out.log).toBe('got 3 items\n[warn] counted {"n": 3}\n');
    expect(out.fuelUsed).toBeGreaterThan(0n);
    expect(runner.kind).toBe("python");
  });

  it("reaches the host only through reach: files, memory, clock and randomness are host calls", async () => {
    const host = testHost();
    const src = `
def main(input, reach):
    text = reach.read_text("data/hello.txt")
    size = reach.write_text("out/copy.txt", text.upper())
    reach.write_bytes("out/raw.bin", bytes([0, 1, 255]))
    reach.memory_set("k", {"v": [1, 2]})
    try:
        reach.read_text("data/missing.txt")
        missing = None
    except reach.ReachError as e:
        missing = e.code
    return {"text": text, "size": size, "mem": reach.memory_get("k"), "absent": reach.memory_get("nope", 7),
            "missing": missing, "now": reach.now()["iso"], "rand": len(reach.random_bytes(5))}
`;
    const out = await runTool(runner, src, null, { host });
    expect(outputOf(out)).toEqual({
      text: "héllo wörld\n", size: 14, mem: { v: [1, 2] }, absent: 7, missing: "EXEC_RESOURCE_UNAVAILABLE", now: "2026-01-01T00:00:00.000Z", rand: 5,
    });
    expect(new TextDecoder().decode(host.files.get("out/copy.txt"))).toBe("HéLLO WöRLD\n"); // upper() is ASCII-only
    expect([...host.files.get("out/raw.bin")!]).toEqual([0, 1, 255]);
    expect(host.calls.map((c) => c.op)).toEqual(["fs.read", "fs.write", "fs.write", "memory.set", "fs.read", "memory.get", "memory.get", "clock.now", "random.bytes"]);
  });

  it("a Python exception is EXEC_TOOL_FAILED with the guest's traceback (no prelude frames, no host paths)", async () => {
    const src = "def helper(x):\n    return {}[x]\n\ndef main(input, reach):\n    return helper('missing')\n";
    const out = await runTool(runner, src);
    expect(out.status).toBe("error");
    if (out.status !== "error") return;
    expect(out.error.code).toBe("EXEC_TOOL_FAILED");
    expect(out.error.message).toBe('tool "t" raised KeyError: missing');
    const stack = String(out.error.details?.["errorStack"]);
    expect(stack).toBe('Traceback (most recent call last):\n  File "tool.py", line 5, in main\n  File "tool.py", line 2, in helper\nKeyError: missing\n');
    expect(out.error.details?.["errorName"]).toBe("KeyError");
    expect(JSON.stringify(out.error.toJSON())).not.toMatch(/stdin|node_modules|\.ts\b|wasm-function|file:/);
  });

  it.each([
    ["no main", "x = 1\n", /must define a function main\(input, reach\)/],
    ["a syntax error", "def main(input, reach)\n    return 1\n", /raised SyntaxError/],
    ["a result that is not JSON", "def main(input, reach):\n    return {1, 2}\n", /not valid JSON|not JSON-serialisable/],
    ["NaN", "def main(input, reach):\n    return float('nan')\n", /not valid JSON/],
    ["sys.exit", "import sys\ndef main(input, reach):\n    sys.exit(2)\n", /raised SystemExit: 2/],
  ])("%s is EXEC_TOOL_FAILED", async (_what, src, message) => {
    const out = await runTool(runner, src);
    expect(out).toMatchObject({ status: "error", error: { code: "EXEC_TOOL_FAILED" } });
    if (out.status === "error") expect(out.error.message).toMatch(message);
  });

  it("refuses source that is not UTF-8, and output above maxOutputBytes", async () => {
    const bad = await runner.run({ ...invocation(""), code: new Uint8Array([0xff, 0xfe, 0x41]) });
    expect(bad).toMatchObject({ status: "error", error: { code: "EXEC_TOOL_FAILED" } });
    const small = pythonRunner({ maxOutputBytes: 100 });
    const big = await runTool(small, "def main(input, reach):\n    return 'x' * 200\n");
    expect(big.status === "error" && big.error.message).toMatch(/more than 100 bytes of JSON/);
  });

  it("stops an endless loop with fuel, at the budget", async () => {
    const out = await runTool(runner, "def main(input, reach):\n    while True:\n        pass\n", null, { fuel: 3_000_000n });
    expect(out).toMatchObject({ status: "error", fuelUsed: 3_000_000n, error: { code: "EXEC_RESOURCE_EXHAUSTED", details: { reason: "fuel" } } });
  });

  it("stops a memory bomb at the memory limit, and deep recursion at the stack limit (200 frames still work)", async () => {
    const bomb = await runTool(runner, "def main(input, reach):\n    a = []\n    while True:\n        a.append(bytearray(1000000))\n");
    expect(bomb).toMatchObject({ status: "error", error: { code: "EXEC_RESOURCE_EXHAUSTED", details: { reason: "memory", memoryLimitBytes: 32 * 1024 * 1024 } } });
    const deep = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\ndef main(input, reach):\n    return f(input)\n";
    expect(outputOf(await runTool(runner, deep, 200))).toBe(200);
    expect(await runTool(runner, deep, 100_000)).toMatchObject({ status: "error", error: { code: "EXEC_RESOURCE_EXHAUSTED", details: { reason: "stack" } } });
  });

  it("the invocation's meter stops a busy loop for the watchdog or an abort, at a recorded fuel count", async () => {
    const src = "def main(input, reach):\n    while True:\n        pass\n";
    let polls = 0;
    const watchdog = new FuelMeter({ budget: 10n ** 9n, poll: () => (++polls > 3 ? "watchdog" : null) });
    const out = await runTool(runner, src, null, { meter: watchdog });
    expect(out).toMatchObject({ status: "error", error: { code: "EXEC_TOOL_TIMEOUT", details: { reason: "watchdog" } } });
    expect(out.status === "error" && out.error.details["fuel"]).toBe(Number(out.fuelUsed));
    const aborted = await runTool(runner, src, null, { meter: new FuelMeter({ budget: 10n ** 9n, poll: () => "abort" }) });
    expect(aborted).toMatchObject({ status: "error", error: { code: "EXEC_ABORTED", details: { reason: "aborted" } } });
    const replayed = await runTool(runner, src, null, { meter: new FuelMeter({ budget: 10n ** 9n, stopAt: { fuel: out.fuelUsed, reason: "watchdog" } }) });
    expect(replayed).toEqual(out);
  });

  it("a policy violation halts the tool even when it catches the error", async () => {
    const host = testHost();
    const src = "def main(input, reach):\n    try:\n        reach.read_text('secret/key')\n    except Exception:\n        pass\n    reach.write_text('out/after.txt', 'x')\n    return 'escaped'\n";
    const out = await runTool(runner, src, null, { host });
    expect(out).toMatchObject({ status: "error", error: { code: "POLICY_VIOLATION" } });
    expect(host.files.has("out/after.txt")).toBe(false);
  });

  it("refuses interpreter bytes that are not the pinned build, as an outcome", async () => {
    const wrong = new PythonRunner({ pythonWasm: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) });
    const out = await runTool(wrong, "def main(input, reach):\n    return 1\n");
    expect(out).toMatchObject({ status: "error", error: { code: "EXEC_RESOURCE_UNAVAILABLE" } });
    expect(out.status === "error" && out.error).toBeInstanceOf(ReachError);
  });

  it("throws for a malformed invocation", () => {
    expect(() => runner.run({ ...invocation(""), fuel: -1n })).toThrow(RangeError);
    expect(() => runner.run({ ...invocation(""), memoryLimitBytes: 0 })).toThrow(RangeError);
    expect(() => new PythonRunner({} as never)).toThrow(TypeError);
  });
});
