/**
 * Engine and replay benchmarks (README "Benchmarks"), as ratios against baselines measured in the same run:
 * - a 10-step pack of small WASI tools (the hello pack's AssemblyScript word counter, ten steps) end to end through
 *   `runPack` (load excluded, warm: modules compiled and instrumented once), against ten bare invocations of the same
 *   tool through `WasmToolRunner` with the recording host (the sandbox floor the engine adds to);
 *   target ≤ 100 ms per run on Node;
 * - replay of the same pack's capsule (read, verify, re-execute against the tape, rebuild and compare the capsule)
 *   against the original run;
 * - `reach-wasm run packs/hello` as a whole process (Node only: it spawns `node dist/cli/main.js`, the esbuild bundle), against
 *   `node -e 0` (process start); target ≤ 400 ms.
 * @module
 */
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { invokeOnce, newWorkspace } from "../../conformance/lib/tool-harness.ts";
import { readRunCapsule } from "../../src/capsule/run-capsule.ts";
import { buildRunCapsule, capsuleRequest } from "../../src/engine/capsule.ts";
import { runPack } from "../../src/engine/coordinator.ts";
import { replayCapsule } from "../../src/engine/replay.ts";
import { loadPack } from "../../src/engine/pack.ts";
import { readQuickJsEngineWasm } from "../../src/platform/quickjs-engine.ts";
import { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
import { readPythonWasm } from "../../src/platform/python-engine.ts";
import { WasmToolRunner } from "../../src/sandbox/wasi/runner.ts";
import { n } from "./smoke.ts";

const root = new URL("../../", import.meta.url);
const enc = new TextEncoder();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** The 10-step pack: the hello tool ten times over different texts. */
export function tenStepPack(): Map<string, Uint8Array> {
  const wasm = new Uint8Array(readFileSync(new URL("packs/hello/tools/wordcount.wasm", root)));
  const steps = Array.from({ length: 10 }, (_, i) => ({
    id: `count-${i}`,
    tool: "wordcount",
    arguments: { text: `step ${i}: ${"lorem ipsum dolor sit amet ".repeat(4 + i)}` },
    return_spec: { type: "object", required: ["words"] },
  }));
  const plan = { contract_version: "S2-B-05.v1", plan_id: "bench", goal_id: "bench", created_at: "1970-01-01T00:00:00.000Z", planner: "bench", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["wordcount"] }, steps, success_criteria: [] };
  const doc = { specVersion: "1.0.0", id: "bench-ten", version: "1.0.0", manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "wordcount" }] }, policies: { maxToolCalls: 10 } }, entrypoint: "plan.json", tools: { wordcount: { kind: "wasm", module: "tools/wordcount.wasm" } } };
  return new Map([["reach.json", enc.encode(JSON.stringify(doc))], ["plan.json", enc.encode(JSON.stringify(plan))], ["tools/wordcount.wasm", wasm]]);
}

/**
 * Run the engine benchmarks.
 * @param log where to print
 * @returns the medians in ms
 */
export async function benchEngine(log: (line: string) => void): Promise<{ runMs: number; floorMs: number; replayMs: number; processMs: number | null }> {
  const loaded = await loadPack(tenStepPack());
  const wasm = loaded.tools.get("wordcount")!.code;
  const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm, sha256: nativeSha256Backend };
  const run = async () => {
    const r = await runPack({ loaded, env });
    if (r.status !== "COMPLETED") throw new Error(`bench run ${r.status}: ${r.error?.message}`);
  };
  const floor = async () => {
    const ws = newWorkspace();
    for (let i = 0; i < 10; i++) {
      const { outcome, step } = await invokeOnce(ws, { code: wasm, input: { text: `step ${i}` }, seed: "1", runner: () => new WasmToolRunner() });
      if (outcome.status !== "success") throw new Error("floor failed");
      step.commit();
    }
  };
  for (let i = 0; i < 5; i++) {
    await run();
    await floor();
  }
  const runs: number[] = [];
  const floors: number[] = [];
  for (let i = 0; i < n(30, 2); i++) {
    let t = performance.now();
    await run();
    runs.push(performance.now() - t);
    t = performance.now();
    await floor();
    floors.push(performance.now() - t);
  }
  const runMs = median(runs);
  const floorMs = median(floors);
  log(`engine: 10-step WASI pack ${runMs.toFixed(1)} ms per run (warm, load excluded); 10 bare recorded invocations ${floorMs.toFixed(1)} ms; ratio ${(runMs / floorMs).toFixed(2)}×; target ≤ 100 ms ${runMs <= 100 ? "met" : "MISSED"}`);

  const record = await runPack({ loaded, env });
  const capsule = buildRunCapsule(record, loaded, capsuleRequest(record, {})).bytes;
  const replays: number[] = [];
  const runs2: number[] = [];
  for (let i = 0; i < n(20, 2); i++) {
    let t = performance.now();
    const report = await replayCapsule(readRunCapsule(capsule), env);
    if (!report.matches) throw new Error(`bench replay diverged: ${report.divergence?.message}`);
    replays.push(performance.now() - t);
    t = performance.now();
    await run();
    runs2.push(performance.now() - t);
  }
  const replayMs = median(replays);
  log(`engine: replay of the 10-step capsule (${capsule.length} bytes: read, verify, re-execute, rebuild) ${replayMs.toFixed(1)} ms; the run itself ${median(runs2).toFixed(1)} ms; ratio ${(replayMs / median(runs2)).toFixed(2)}×`);

  let processMs: number | null = null;
  if (!("Deno" in globalThis)) {
    const cli = new URL("dist/cli/main.js", root).pathname;
    const out = "/tmp/reach-bench-out";
    const spawnMs = (args: string[]): number => {
      const t = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: new URL(".", root).pathname, stdio: "ignore" });
      if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`);
      return performance.now() - t;
    };
    spawnMs([cli, "run", "packs/hello", "--out", out]); // warms the fuel cache
    const whole: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < n(10, 2); i++) {
      whole.push(spawnMs([cli, "run", "packs/hello", "--out", out]));
      bare.push(spawnMs(["-e", "0"]));
    }
    processMs = median(whole);
    log(`engine: \`reach-wasm run packs/hello\` ${processMs.toFixed(0)} ms as a whole process; \`node -e 0\` ${median(bare).toFixed(0)} ms; ratio ${(processMs / median(bare)).toFixed(1)}×; target ≤ 400 ms ${processMs <= 400 ? "met" : "MISSED"}`);
  }
  return { runMs, floorMs, replayMs, processMs };
}
