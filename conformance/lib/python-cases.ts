/**
 * Python conformance (seed 002 `exec_python`; src/sandbox/python/README.md): a `python` tool and `exec_python` snippets
 * run twice in fresh setups through the real capability-checked, recording host; both runs must commit to the same
 * output, tape and workspace, and the fingerprints are compared across runtimes through conformance/fingerprints.json —
 * so virtual time, seeded randomness, hashes, limits and fuel counts are the same on Node and Deno.
 * @module
 */
import { canonicalize } from "../../src/canonical/jcs.ts";
import { sha256Hex } from "../../src/canonical/sha256.ts";
import { DETERMINISM_CORPUS } from "../../src/sandbox/python/_test-corpus.ts";
import type { Payload } from "../../src/sandbox/python/_test-corpus.ts";
import { execPython, PythonRunner } from "../../src/sandbox/python/mod.ts";
import type { ToolInvocation, ToolRunner } from "../../src/sandbox/types.ts";
import { fingerprint, invokeOnce, newWorkspace, runTool } from "./tool-harness.ts";
import type { ToolRunSpec } from "./tool-harness.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

const enc = (s: string) => new TextEncoder().encode(s);

const TOOL = `import time, random, os, datetime, json
def main(input, reach):
    words = reach.read_text("data/input.txt").split()
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    stamp = str(datetime.datetime.now())
    reach.write_text("out/result.json", json.dumps({"counts": counts, "stamp": stamp}))
    reach.log("counted", len(words), level="info")
    print("words:", len(words))
    return {"words": len(words), "unique": sorted(counts), "t": time.time(), "r": random.random(),
            "u": os.urandom(4).hex(), "stamp": stamp, "h": hash("reach"), "scale": input["scale"] * 1.5}
`;

/** A `ToolRunner` face of `exec_python` (the snippet is the invocation's code), for the harness. */
function execRunner(runner: PythonRunner): ToolRunner {
  return {
    kind: "python",
    run: (inv: ToolInvocation) => execPython(runner, { code: new TextDecoder().decode(inv.code), input: inv.input }, inv),
  };
}

/** Run a spec twice in fresh setups; both must commit to the same bytes. Returns the fingerprint. */
async function twice(spec: ToolRunSpec, expectStatus: "success" | "error", expectCode?: string): Promise<string> {
  const a = await runTool(spec);
  const b = await runTool(spec);
  check(a.status === expectStatus, `status ${a.status} (${a.errorCode}), expected ${expectStatus}`);
  if (expectCode !== undefined) check(a.errorCode === expectCode, `error ${a.errorCode}, expected ${expectCode}`);
  check(a.tape === b.tape, "two identical runs recorded different tapes");
  check(fingerprint(a) === fingerprint(b), "two identical runs differ (output, tape or workspace)");
  return fingerprint(a);
}

/** One invocation: status, error code and reason, fuel, and the fingerprint of output and tape. */
async function once(spec: ToolRunSpec): Promise<string> {
  const { outcome, tape, step } = await invokeOnce(newWorkspace(spec.files), spec);
  step.rollback();
  const output = outcome.status === "success" ? outcome.output : null;
  const errorCode = outcome.status === "error" ? outcome.error.code : null;
  const reason = outcome.status === "error" ? String(outcome.error.details?.["reason"] ?? "") : "";
  const print = fingerprint({ status: outcome.status, output, errorCode, tape: tape.toJsonl(), workspaceDigest: "" });
  return `${outcome.status}/${errorCode ?? ""}/${reason}/${outcome.fuelUsed}/${print.slice(0, 16)}`;
}

function snippet(runner: () => PythonRunner, p: Payload): ToolRunSpec {
  return { code: enc(p.code), input: null, seed: "7", runner: () => execRunner(runner()), ...(p.fuel === undefined ? {} : { fuel: p.fuel }) };
}

const LIMITS: Payload[] = [
  { name: "fuel", code: "while True:\n    pass", expect: { code: "EXEC_RESOURCE_EXHAUSTED" }, fuel: 3_000_000n },
  { name: "memory", code: "a = []\nwhile True:\n    a.append(bytearray(10**6))", expect: { code: "EXEC_RESOURCE_EXHAUSTED" } },
  { name: "stack", code: "def f(n):\n    return f(n + 1)\nf(0)", expect: { code: "EXEC_RESOURCE_EXHAUSTED" } },
  { name: "ffi", code: "import js\njs.leak = 1", expect: { code: "EXEC_SANDBOX_VIOLATION" } },
  { name: "exception", code: "import json\njson.loads('{')", expect: { code: "EXEC_TOOL_FAILED" } },
  { name: "garbage", code: "s = 0.5\nfor i in range(20000):\n    s = s * 1.0001 + i\nresult = s", expect: { result: null } },
];

/** The fuel and outcome of a probe must not depend on what the runner ran before. */
async function fuelHistory(runner: () => PythonRunner, pythonWasm: Uint8Array): Promise<string> {
  const fresh = new PythonRunner({ pythonWasm });
  const probe = (r: PythonRunner) => once({ code: enc(TOOL), input: { scale: 2 }, seed: "7", files: { "input.txt": enc("b a b\n") }, runner: () => r });
  const first = await probe(fresh);
  const counts: string[] = [];
  for (const p of LIMITS) {
    counts.push(`${p.name}=${await once(snippet(() => fresh, p))}`);
    const again = await probe(fresh);
    check(again === first, `after "${p.name}" the probe gave ${again}, on a new runner ${first}`);
  }
  const onShared = await probe(runner());
  check(onShared === first, `on the shared runner the probe gave ${onShared}, on a new one ${first}`);
  return sha256Hex(canonicalize({ first, counts }));
}

/**
 * The Python cases.
 * @param io file access rooted at conformance/ (the interpreter is read from ../node_modules)
 * @returns the cases
 */
export function pythonCases(io: ConformanceIO): ConformanceCase[] {
  const pythonWasm = io.readBytes("../node_modules/@micropython/micropython-webassembly-pyscript/micropython.wasm");
  let shared: PythonRunner | undefined;
  const runner = () => (shared ??= new PythonRunner({ pythonWasm }));
  const data = { "input.txt": enc("to be or not to be\n") };
  return [
    {
      name: "python tool: output, tape and workspace identical twice",
      run: () => twice({ code: enc(TOOL), input: { scale: 3 }, seed: "7", files: data, runner: () => runner() }, "success"),
    },
    {
      name: "exec_python: stdout, result and tape identical twice",
      run: () => twice({ code: enc("print(sorted(input))\nresult = {'n': len(input), 'first': input[0]}"), input: [3, 1, 2], seed: "7", runner: () => execRunner(runner()) }, "success"),
    },
    ...DETERMINISM_CORPUS.map((p): ConformanceCase => ({
      name: `python determinism: ${p.name}`,
      run: async () => {
        const print = await twice(snippet(runner, p), "success");
        // The seeded values depend on the host's stream (pinned by the fingerprint); the others are fixed.
        if ("result" in p.expect && !p.name.startsWith("random")) {
          const got = JSON.stringify((await runTool(snippet(runner, p))).output);
          check(got === JSON.stringify({ stdout: "", result: p.expect.result }), `${p.name}: ${got}`);
        }
        return print;
      },
    })),
    {
      name: "python limits: fuel, memory, stack, FFI and exception outcomes and fuel counts",
      run: async () => {
        const lines: string[] = [];
        for (const p of LIMITS) {
          const line = await once(snippet(runner, p));
          if ("code" in p.expect) check(line.includes(`/${p.expect.code}/`), `${p.name}: ${line}, expected ${p.expect.code}`);
          lines.push(`${p.name}=${line}`);
        }
        return sha256Hex(canonicalize(lines));
      },
    },
    { name: "python fuel: a probe's fuel does not depend on what ran before", run: () => fuelHistory(runner, pythonWasm) },
  ];
}
