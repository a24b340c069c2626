/**
 * Example-tool conformance (seed 003 §10 "Determinism Tests"): every example tool gives byte-identical output and an
 * identical tape twice in a row and under Node and Deno. Each tool runs twice in fresh setups; both runs must commit to
 * the same output, tape and workspace, and the fingerprint of what they commit to is compared across runtimes through
 * conformance/fingerprints.json.
 * @module
 */
import { glueToComponent, parseGlueDocument } from "../../src/sandbox/component/glue.ts";
import { ComponentRunner } from "../../src/sandbox/component/runner.ts";
import { QuickJsRunner } from "../../src/sandbox/quickjs/runner.ts";
import type { ToolRunner } from "../../src/sandbox/types.ts";
import { WasmToolRunner } from "../../src/sandbox/wasi/runner.ts";
import { fingerprint, invokeOnce, newWorkspace, runTool } from "./tool-harness.ts";
import type { ToolRunSpec } from "./tool-harness.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";
import { check } from "./types.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** Run a spec twice and check both runs commit to the same bytes; return the fingerprint. */
async function twice(spec: ToolRunSpec, expectStatus: "success" | "error", expectCode?: string): Promise<string> {
  const a = await runTool(spec);
  const b = await runTool(spec);
  check(a.status === expectStatus, `status ${a.status} (${a.errorCode}), expected ${expectStatus}`);
  if (expectCode !== undefined) check(a.errorCode === expectCode, `error ${a.errorCode}, expected ${expectCode}`);
  check(fingerprint(a) === fingerprint(b), "two identical runs differ (output, tape or workspace)");
  check(a.tape === b.tape, "two identical runs recorded different tapes");
  return fingerprint(a);
}

/** One invocation of a spec: its status, the fingerprint of its output and tape, and the fuel it used. */
async function fuelRun(spec: ToolRunSpec): Promise<{ status: string; fuel: bigint; print: string }> {
  const { outcome, tape, step } = await invokeOnce(newWorkspace(spec.files), spec);
  step.rollback();
  const output = outcome.status === "success" ? outcome.output : null;
  const errorCode = outcome.status === "error" ? outcome.error.code : null;
  return { status: outcome.status, fuel: outcome.fuelUsed, print: fingerprint({ status: outcome.status, output, errorCode, tape: tape.toJsonl(), workspaceDigest: "" }) };
}

/**
 * A `js` tool's fuel is a function of the tool, its input, the host's answers and the budget: the same on a new
 * runner, after tools that move the engine's state (heap growth, an import, fuel and memory exhaustion), and on a
 * runner that other cases used. The fingerprint holds every fuel count, so Node and Deno must agree on them.
 */
async function jsFuel(io: ConformanceIO, shared: () => ToolRunner): Promise<string> {
  const engineWasm = io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm");
  const fresh = new QuickJsRunner({ engineWasm });
  const probe: ToolRunSpec = { code: io.readBytes("../wasm-tools/js-slugify/tool.js"), input: { text: "Héllo, Wörld — Straße 42!" }, seed: "7", runner: () => fresh };
  const first = await fuelRun(probe);
  check(first.status === "success" && first.fuel > 0n, `the probe: ${first.status}, fuel ${first.fuel}`);
  const history: Array<[string, string, bigint | undefined]> = [
    ["heap", "export default () => { const a = []; for (let i = 0; i < 100000; i++) a.push('s' + i); return a.length }", undefined],
    ["import", "export default () => import('node:fs').then(() => 'loaded', (e) => e.message)", undefined],
    ["fuel", "export default () => new Array(1e9).join()", 20_000_000n],
    ["loop", "export default () => { for (;;) {} }", 3_000_000n],
    ["memory", "export default () => { const a = []; for (;;) a.push(new Uint8Array(1e6)) }", undefined],
  ];
  const counts: string[] = [];
  for (const [name, code, fuel] of history) {
    const ran = await fuelRun({ code: enc(code), input: {}, seed: "7", runner: () => fresh, ...(fuel === undefined ? {} : { fuel }) });
    const again = await fuelRun(probe);
    check(again.print === first.print && again.fuel === first.fuel, `after "${name}" the probe used ${again.fuel} fuel, on a new runner ${first.fuel}`);
    counts.push(`${name}=${ran.status}/${ran.fuel}`);
  }
  const onShared = await fuelRun({ ...probe, runner: shared });
  check(onShared.print === first.print && onShared.fuel === first.fuel, `on the shared runner the probe used ${onShared.fuel} fuel, on a new one ${first.fuel}`);
  return `${first.print}:fuel=${first.fuel}:${counts.join(",")}`;
}

/**
 * The example-tool cases.
 * @param io file access rooted at conformance/ (the tools are read from ../wasm-tools/build/)
 * @returns the cases
 */
export function toolCases(io: ConformanceIO): ConformanceCase[] {
  const wasm = (name: string) => io.readBytes(`../wasm-tools/build/${name}.wasm`);
  const data = { "input.txt": enc("reach-wasm conformance input\n") };
  const plain = () => new WasmToolRunner();
  const withData = (step: Parameters<ToolRunSpec["runner"]>[0]) =>
    new WasmToolRunner({ filesystem: () => ({ fs: step, preopens: [{ guest: "/data", path: "data" }] }) });
  // One runner per kind for the whole suite: engines and compiled modules are cached per runner or per process.
  let quickjs: ToolRunner | undefined;
  const js = () => (quickjs ??= new QuickJsRunner({
    engineWasm: io.readBytes("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm"),
  }));
  let components: ToolRunner | undefined;
  // Unmetered here: instrumenting the 11 MB SpiderMonkey engine costs 10–30 s per process (metering is tested in
  // src/sandbox/component/fuel.test.ts); the output, tape and workspace do not depend on it.
  // Their glue comes from the fixtures the load-time transpile made (wasm-tools/component/glue/), through the same
  // check and evaluation as a cached entry; transpiling the 12 MB component with jco takes seconds per process.
  const glue = (name: string) => glueToComponent(parseGlueDocument(io.readBytes(`../wasm-tools/component/glue/${name}.glue.json`)));
  const component = () => (components ??= new ComponentRunner({ components: [glue("text-stats")], meterFuel: false }));
  // The C component is a few KB: metered, as a real run is.
  let cComponents: ToolRunner | undefined;
  const cComponent = () => (cComponents ??= new ComponentRunner({ components: [glue("c-wordcount")] }));
  const cWordcount = () => io.readBytes("../wasm-tools/c-component/build/wordcount.component.wasm");
  return [
    {
      name: "tools/js js-slugify: same output and tape twice in a fresh QuickJS context",
      run: () => twice({ code: io.readBytes("../wasm-tools/js-slugify/tool.js"), input: { text: "Héllo, Wörld — Straße 42!" }, seed: "7", runner: js }, "success"),
    },
    {
      name: "tools/js clock-random: Date.now and Math.random are the virtual, seeded ones",
      run: () => twice({
        code: enc("export default () => ({ now: Date.now(), iso: new Date().toISOString(), r: [Math.random(), Math.random()] });"),
        input: {},
        seed: "7",
        runner: js,
      }, "success"),
    },
    {
      name: "tools/js fuel: the same on a new runner, after heap growth, an import, fuel and memory exhaustion, and on a used runner",
      run: () => jsFuel(io, js),
    },
    {
      name: "tools/component text-stats: same output and tape twice through our own WASI 0.2 imports",
      run: () => twice({
        code: io.readBytes("../wasm-tools/component/build/tool.component.wasm"),
        input: { text: "the cat and the hat\nthe end", top: 2 },
        seed: "7",
        runner: component,
      }, "success"),
    },
    {
      name: "tools/component c-wordcount (C, no libc): same output and tape twice, fuel metered",
      run: () => twice({
        code: cWordcount(),
        input: { text: "héllo wörld 😀\nline two\n", other: [1, { "}": "]" }] },
        seed: "7",
        runner: cComponent,
      }, "success"),
    },
    {
      name: "tools/component c-wordcount_fail: a non-string text is the tool's err (EXEC_TOOL_FAILED)",
      run: () => twice({ code: cWordcount(), input: { text: 5 }, seed: "7", runner: cComponent }, "error", "EXEC_TOOL_FAILED"),
    },
    {
      name: "tools/wasm as-wordcount: same output and tape twice (clock and random are the seeded ones)",
      run: () => twice({ code: wasm("as-wordcount"), input: { text: "one two\nthree" }, seed: "7", runner: plain }, "success"),
    },
    {
      name: "tools/wasm c-sha: reads a read-only resource through a preopen, same output and tape twice",
      run: () => twice({ code: wasm("c-sha"), input: {}, seed: "7", files: data, runner: withData }, "success"),
    },
    {
      name: "tools/wasm rs-stats (Rust std): parses its JSON input on stdin and measures the text (UTF-8, surrogate pairs, a nested decoy), same output and tape twice",
      run: () => twice({ code: wasm("rs-stats"), input: { a: [1, { text: "no" }], text: "héllo wörld 😀\nline two", z: null }, seed: "7", runner: plain }, "success"),
    },
    {
      name: "tools/wasm rs-stats_fail: input without a string text exits 2 (EXEC_TOOL_FAILED)",
      run: () => twice({ code: wasm("rs-stats"), input: { text: 5 }, seed: "7", runner: plain }, "error", "EXEC_TOOL_FAILED"),
    },
    {
      name: "tools/wasm hang_fail: runs out of fuel at the same point every time (EXEC_RESOURCE_EXHAUSTED)",
      run: () => twice({ code: wasm("hang"), input: {}, seed: "7", runner: plain, fuel: 2_000_000n }, "error", "EXEC_RESOURCE_EXHAUSTED"),
    },
    {
      name: "tools/wasm escape_fail: path escapes are refused and the workspace is unchanged",
      run: () => twice({ code: wasm("escape"), input: {}, seed: "7", files: data, runner: withData }, "error", "POLICY_VIOLATION"),
    },
  ];
}
