/**
 * Reuse (README.md "Reuse"): a kept interpreter is restored from its snapshot after every invocation, so outputs,
 * tapes and fuel do not depend on what ran before — whatever that did to the interpreter's state or memory.
 */
import { describe, expect, it } from "vitest";
import type { ToolOutcome } from "../types.ts";
import { outputOf, pythonRunner, runSnippet, testHost } from "../../../tests/support/python.ts";
import type { PythonRunner } from "./runner.ts";

const PROBE = `import sys, json, builtins, random, time, uctypes
above = uctypes.bytearray_at(850000, 190000)
dirty = sum([above[i] for i in range(0, len(above), 31)])
class Point:
    pass
p = Point()
result = {"modules": sorted(sys.modules.keys()), "id": id(p) % 1000003, "hash": hash("probe"), "r": random.random(),
          "t": time.time(), "open": repr(builtins.open), "dumps": json.dumps([1, {"a": None}]), "big": len(str(2 ** 5000)), "dirty": dirty}
print(result["modules"])`;

/** The probe's outcome and the host calls it made. */
async function probe(runner: PythonRunner): Promise<{ out: ToolOutcome; calls: string }> {
  const host = testHost();
  const out = await runSnippet(runner, PROBE, undefined, { host });
  return { out, calls: JSON.stringify(host.calls) };
}

const HISTORY: Array<[string, string, bigint?]> = [
  ["poisoned globals, builtins and modules", "import sys, builtins, json\nbuiltins.open = 1\nbuiltins.len = None\njson.dumps = None\nsys.modules['random'] = None\nimport __main__\n__main__.reach = None"],
  ["heap growth", "a = [str(i) * 10 for i in range(200000)]\nresult = len(a)"],
  ["fuel exhaustion", "while True:\n    pass", 2_000_000n],
  ["a memory bomb", "a = []\nwhile True:\n    a.append(bytearray(10**6))"],
  ["a stack overflow", "def f(n):\n    return f(n + 1)\nf(0)"],
  ["an exception", "raise ValueError('x' * 1000)"],
  ["a scribble above the heap", "import uctypes\nb = uctypes.bytearray_at(850000, 190000)\nfor i in range(0, len(b), 31):\n    b[i] = 9"],
  ["a scribble over static data", "import uctypes\nb = uctypes.bytearray_at(66000, 100000)\nfor i in range(0, len(b), 7):\n    b[i] = 3"],
  ["a locked heap", "import micropython\nmicropython.heap_lock()"],
  ["a policy violation", "reach.read_text('secret/x')"],
];

describe("python interpreter reuse", () => {
  it("a probe gives the same output, host calls and fuel after any history as on a new runner", async () => {
    const fresh = await probe(pythonRunner());
    expect(outputOf(fresh.out)).toMatchObject({ result: { open: "<function>", dumps: '[1, {"a": null}]', big: 1506, dirty: 0 } });
    const runner = pythonRunner();
    for (const [what, code, fuel] of HISTORY) {
      await runSnippet(runner, code, undefined, fuel === undefined ? {} : { fuel });
      const again = await probe(runner);
      expect(again, `after ${what}`).toEqual(fresh);
    }
  });

  it("gives the same outcomes and fuel with and without reuse", async () => {
    const kept = pythonRunner();
    const unkept = pythonRunner({ reuseInterpreters: false });
    for (const code of [PROBE, "result = sum(i * i for i in range(10000))", "x = [1] * 10\nraise KeyError(len(x))"]) {
      for (let i = 0; i < 2; i++) expect(await runSnippet(kept, code)).toEqual(await runSnippet(unkept, code));
    }
  });

  it("a kept interpreter whose memory grew is held to the next invocation's limit", async () => {
    const runner = pythonRunner({ maxKeptMemoryBytes: 64 * 1024 * 1024 });
    const limit = 16 * 1024 * 1024;
    const grow = await runSnippet(runner, "b = bytearray(12 * 1024 * 1024)\nresult = len(b)", undefined, { memoryLimitBytes: limit });
    expect(outputOf(grow)).toEqual({ stdout: "", result: 12 * 1024 * 1024 });
    const over = await runSnippet(runner, "b = bytearray(20 * 1024 * 1024)", undefined, { memoryLimitBytes: limit });
    expect(over).toMatchObject({ status: "error", error: { code: "EXEC_RESOURCE_EXHAUSTED", details: { reason: "memory" } } });
    const smaller = await runSnippet(runner, "b = bytearray(6 * 1024 * 1024)", undefined, { memoryLimitBytes: 4 * 1024 * 1024 });
    expect(smaller).toMatchObject({ status: "error", error: { code: "EXEC_RESOURCE_EXHAUSTED", details: { reason: "memory" } } });
  });
});
