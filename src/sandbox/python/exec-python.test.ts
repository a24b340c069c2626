import { describe, expect, it } from "vitest";
import { execPython } from "./exec-python.ts";
import { invocation, outputOf, pythonRunner, runSnippet } from "../../../tests/support/python.ts";

const runner = pythonRunner();

describe("exec_python", () => {
  it("returns what the snippet printed and the value of its variable result", async () => {
    const code = "total = sum(input)\nprint('sum is', total)\nprint('é')\nresult = {'total': total, 'n': len(input)}\n";
    const out = await runSnippet(runner, code, [1, 2, 3.5]);
    expect(outputOf(out)).toEqual({ stdout: "sum is 6.5\né\n", result: { total: 6.5, n: 3 } });
  });

  it("result is null when the snippet sets none; input is null when the request has none", async () => {
    expect(outputOf(await runSnippet(runner, "x = input"))).toEqual({ stdout: "", result: null });
    expect(outputOf(await runSnippet(runner, "result = input is None"))).toEqual({ stdout: "", result: true });
  });

  it("has the reach object, and logs what it logs", async () => {
    const out = await runSnippet(runner, "reach.log('hi', level='debug')\nresult = reach.read_text('data/hello.txt')");
    expect(outputOf(out)).toEqual({ stdout: "", result: "héllo wörld\n" });
    expect(out.log).toBe("[debug] hi\n");
  });

  it("cuts stdout at maxStdoutBytes, with a marker", async () => {
    const small = pythonRunner({ maxStdoutBytes: 100 });
    const out = outputOf(await runSnippet(small, "for i in range(1000):\n    print(i)\nresult = 1")) as { stdout: string; result: number };
    expect(out.result).toBe(1);
    const printed = Array.from({ length: 1000 }, (_, i) => `${i}\n`).join("").slice(0, 100);
    expect(out.stdout).toBe(`${printed}\n[reach] stdout truncated after 100 bytes\n`);
  });

  it("a failure carries the snippet's traceback, and the stdout so far as the log", async () => {
    const out = await runSnippet(runner, "print('before')\nx = 1 / 0\n");
    expect(out).toMatchObject({ status: "error", log: "before\n", error: { code: "EXEC_TOOL_FAILED", message: "the exec_python snippet raised ZeroDivisionError: divide by zero" } });
    if (out.status === "error") {
      expect(out.error.details?.["errorStack"]).toBe('Traceback (most recent call last):\n  File "<exec_python>", line 2, in <module>\nZeroDivisionError: divide by zero\n');
    }
  });

  it.each([
    ["no code", {}],
    ["empty code", { code: "" }],
    ["code that is not a string", { code: 42 }],
    ["an unknown field", { code: "result = 1", inputs: 1 }],
    ["not an object", "result = 1"],
  ])("refuses a request with %s (PROTO_SCHEMA_VIOLATION)", async (_what, request) => {
    const out = await execPython(runner, request, invocation("", null));
    expect(out).toMatchObject({ status: "error", fuelUsed: 0n, error: { code: "PROTO_SCHEMA_VIOLATION" } });
    if (out.status === "error") expect(out.error.message).toMatch(/^the exec_python request is invalid/);
  });
});
