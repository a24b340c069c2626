/**
 * `exec_python` against the bare interpreter, cold and warm, measured interleaved in the same run and printed as
 * ratios (the machines are shared and noisy; nothing here is asserted by tests). Runs under Node
 * (`npx vite-node scripts/bench-python.ts`) and Deno (`deno run --allow-read --allow-env scripts/bench-python.ts`).
 *
 * - bare: MicroPython's own package (`loadMicroPython`, its emscripten glue in this realm, unmetered), running the
 *   same 10-line snippet with `runPython` on one kept interpreter (warm), or on a new interpreter each time (cold).
 * - ours: `execPython` on a `PythonRunner` with the real capability-checked, recording host (a new host, tape,
 *   clock and random stream per invocation, as `conformance/lib/tool-harness.ts` makes them): warm is a kept
 *   interpreter restored from its snapshot (fuel-metered); cold is a new runner (a fresh interpreter prepared:
 *   instantiate, MicroPython init, prelude; the metered module is compiled once per process).
 * Targets (README "Benchmarks"): warm ≤ 5 ms and ≤ 1.5× bare.
 * @module
 */
import { readFileSync } from "node:fs";
import { invokeOnce, newWorkspace } from "../conformance/lib/tool-harness.ts";
import { setSha256Backend } from "../src/canonical/sha256.ts";
import { nativeSha256Backend } from "../src/platform/native-sha256.ts";
import { execPython, PythonRunner } from "../src/sandbox/python/mod.ts";
import type { ToolInvocation, ToolRunner } from "../src/sandbox/types.ts";
import { n } from "./bench/smoke.ts";
import { interleaved } from "./bench/tools.ts";

setSha256Backend(nativeSha256Backend); // as an engine call on Node hashes
const root = new URL("../", import.meta.url);
const runtime = "Deno" in globalThis ? `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}` : `node ${globalThis.process?.version}`;
const log = (line: string) => console.log(`[${runtime}] ${line}`);

/** The 10-line snippet: a little arithmetic, a list, sorting, string building, printing and a result. */
const SNIPPET = `data = input if input is not None else [3, 1, 4, 1, 5, 9, 2, 6]
total = 0
squares = []
for x in data:
    total += x
    squares.append(x * x)
words = " ".join([str(s) for s in sorted(squares)])
stats = {"n": len(data), "mean": total / len(data), "max": max(data)}
print("total", total, "words", words)
result = {"total": total, "words": words, "stats": stats}
`;
const INPUT = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9];

type Bare = { runPython(code: string): unknown; globals: { set(k: string, v: unknown): void } };
const glueUrl = new URL("node_modules/@micropython/micropython-webassembly-pyscript/micropython.mjs", root).href;
const { loadMicroPython } = (await import(glueUrl)) as { loadMicroPython(o: object): Promise<Bare> };
const bareRun = (mp: Bare) => {
  mp.runPython(`input = ${JSON.stringify(INPUT)}\n${SNIPPET}\nimport json\n_text = json.dumps(result)`);
};
const bareWarm = await loadMicroPython({ stdout: () => undefined, linebuffer: false });
const bareCold = async () => bareRun(await loadMicroPython({ stdout: () => undefined, linebuffer: false }));

const pythonWasm = new Uint8Array(readFileSync(new URL("node_modules/@micropython/micropython-webassembly-pyscript/micropython.wasm", root)));
const asTool = (runner: PythonRunner): ToolRunner => ({
  kind: "python",
  run: (inv: ToolInvocation) => execPython(runner, { code: new TextDecoder().decode(inv.code), input: inv.input }, inv),
});
const ws = newWorkspace();
const spec = (runner: PythonRunner) => ({ code: new TextEncoder().encode(SNIPPET), input: INPUT, seed: "1", runner: () => asTool(runner) });
const oursOnce = async (runner: PythonRunner) => {
  const { outcome, step } = await invokeOnce(ws, spec(runner));
  step.rollback();
  if (outcome.status !== "success") throw new Error(`exec_python failed: ${outcome.error.message}`);
};

const t0 = performance.now();
const first = new PythonRunner({ pythonWasm });
await oursOnce(first);
log(`python: first exec_python in this process ${(performance.now() - t0).toFixed(0)} ms (fuel instrumentation, compile, prepare; the instrumented module is cached on disk only when the platform's store is installed)`);

const warm = new PythonRunner({ pythonWasm });
const [bareUs, oursUs] = (await interleaved([() => bareRun(bareWarm), () => oursOnce(warm)], n(30, 1), n(200, 2))) as [number, number];
log(`python warm: exec_python ${(oursUs / 1000).toFixed(2)} ms (snapshot restore + fuel + host + tape), bare runPython ${(bareUs / 1000).toFixed(2)} ms, ` +
  `ratio ${(oursUs / bareUs).toFixed(2)} (targets: ≤ 5 ms, ≤ 1.5× bare) — ${oursUs <= 5000 && oursUs <= 1.5 * bareUs ? "met" : "MISSED"}`);

const [bareColdUs, oursColdUs] = (await interleaved([bareCold, () => oursOnce(new PythonRunner({ pythonWasm }))], 3, 20)) as [number, number];
log(`python cold: exec_python on a new runner ${(oursColdUs / 1000).toFixed(2)} ms (instantiate + init + prelude + snapshot + run), ` +
  `bare loadMicroPython + runPython ${(bareColdUs / 1000).toFixed(2)} ms, ratio ${(oursColdUs / bareColdUs).toFixed(2)}`);
