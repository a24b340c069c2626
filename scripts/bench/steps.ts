/**
 * Linear cost per step (README "Benchmarks"): a plan of N steps, each with 10 KB of arguments (the hello pack's WASI
 * word counter), run end to end through `runPack` (load excluded, warm) at N = 10, 50 and 100 (100 steps of each size
 * per round: 10 runs of 10, 2 of 50, 1 of 100), the sizes interleaved round by round; printed per step, with the
 * 100-step figure against the 10-step one (target ≤ 1.3×: no per-step cost grows with the plan, such as re-hashing it
 * before every step).
 * @module
 */
import { readFileSync } from "node:fs";
import { runPack } from "../../src/engine/coordinator.ts";
import { loadPack } from "../../src/engine/pack.ts";
import type { LoadedPack } from "../../src/engine/pack.ts";
import { readQuickJsEngineWasm } from "../../src/platform/quickjs-engine.ts";
import { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
import { n } from "./smoke.ts";

const root = new URL("../../", import.meta.url);
const enc = new TextEncoder();
const ARG_BYTES = 10 * 1024;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** A pack of `n` steps of the word counter, each over its own ~10 KB text. */
export function stepsPack(n: number): Map<string, Uint8Array> {
  const wasm = new Uint8Array(readFileSync(new URL("packs/hello/tools/wordcount.wasm", root)));
  const steps = Array.from({ length: n }, (_, i) => ({
    id: `count-${i}`,
    tool: "wordcount",
    arguments: { text: `step ${i} `.padEnd(ARG_BYTES, "lorem ipsum dolor sit amet ") },
    return_spec: { type: "object", required: ["words"] },
  }));
  const plan = { contract_version: "S2-B-05.v1", plan_id: `bench-${n}`, goal_id: "bench", created_at: "1970-01-01T00:00:00.000Z", planner: "bench", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["wordcount"] }, steps, success_criteria: [] };
  const doc = { specVersion: "1.0.0", id: `bench-${n}`, version: "1.0.0", manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "wordcount" }] }, policies: { maxToolCalls: n, maxExecutionTime: 600_000 } }, run: { maxSteps: n }, entrypoint: "plan.json", tools: { wordcount: { kind: "wasm", module: "tools/wordcount.wasm" } } };
  return new Map([["reach.json", enc.encode(JSON.stringify(doc))], ["plan.json", enc.encode(JSON.stringify(plan))], ["tools/wordcount.wasm", wasm]]);
}

/**
 * Measure and print the per-step cost at 10, 50 and 100 steps.
 * @param log where to print
 * @param rounds interleaved rounds
 * @returns the 100-step per-step cost over the 10-step one
 */
export async function benchSteps(log: (line: string) => void, rounds = n(5)): Promise<number> {
  const sizes = [10, 50, 100];
  const packs = new Map<number, LoadedPack>();
  for (const n of sizes) packs.set(n, await loadPack(stepsPack(n)));
  const env = { quickjsEngine: readQuickJsEngineWasm, sha256: nativeSha256Backend };
  const perStep = new Map<number, number[]>(sizes.map((n) => [n, []]));
  for (let r = -1; r < rounds; r++) {
    for (const n of sizes) {
      const reps = 100 / n; // every size runs 100 steps per round
      const t = performance.now();
      for (let k = 0; k < reps; k++) {
        const run = await runPack({ loaded: packs.get(n)!, env });
        if (run.status !== "COMPLETED") throw new Error(`bench run of ${n} steps ${run.status}: ${run.error?.message}`);
      }
      if (r >= 0) perStep.get(n)!.push((performance.now() - t) / 100); // round -1 warms the module cache
    }
  }
  const m = (n: number): number => median(perStep.get(n)!);
  const ratio = m(100) / m(10);
  log(`steps: per-step cost with ${ARG_BYTES / 1024} KB arguments: 10 steps ${m(10).toFixed(2)} ms, 50 steps ${m(50).toFixed(2)} ms, ` +
    `100 steps ${m(100).toFixed(2)} ms; 100/10 ratio ${ratio.toFixed(2)}×; target ≤ 1.3× ${ratio <= 1.3 ? "met" : "MISSED"}`);
  return ratio;
}
