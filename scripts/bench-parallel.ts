/**
 * `vite-node scripts/bench-parallel.ts` (or `deno run -A scripts/bench-parallel.ts`): parallel steps against sequential
 * ones. The pack is packs/parallel with a heavier CPU-bound part: 8 independent `crunch` steps (primes below LIMIT, in
 * QuickJS) and one `total` step that takes their outputs. Runs alternate `parallel: 1` and `parallel: N` (default the
 * core count) ROUNDS times; the medians, their ratio, the load average and the run hashes (which must be equal) are
 * printed. On Node the step thread runs a bundle of src/host/step-worker.ts (Node cannot start a TypeScript worker).
 * Environment: LIMIT (default 250000), ROUNDS (default 5), PARALLEL (default the core count).
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import process from "node:process";
import { runEngine } from "../src/engine/engine.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { readPackFiles } from "../src/host/pack-files.ts";
import { coreCount } from "../src/platform/threads.ts";

const root = new URL("../", import.meta.url);
const limit = Number(process.env["LIMIT"] ?? 250_000);
const rounds = Number(process.env["ROUNDS"] ?? 5);
const parallel = Number(process.env["PARALLEL"] ?? coreCount());
const deno = (globalThis as { Deno?: unknown }).Deno !== undefined;

let scratch: string | null = null;
if (!deno) {
  mkdirSync(new URL("node_modules/.cache/", root).pathname, { recursive: true });
  // inside node_modules, so that the bundle's external packages resolve
  scratch = mkdtempSync(join(new URL("node_modules/.cache/", root).pathname, "reach-wasm-bench-"));
  const { build } = await import("esbuild");
  await build({ entryPoints: [new URL("src/host/step-worker.ts", root).pathname], bundle: true, format: "esm", platform: "node", target: "node20", outfile: join(scratch, "step-worker.js"), logLevel: "error", external: ["binaryen", "ajv", "ajv/*", "ajv-formats", "@jitl/*", "quickjs-emscripten-core", "@bytecodealliance/*"] });
}

const files = await readPackFiles(new URL("packs/parallel", root).pathname);
const plan = JSON.parse(new TextDecoder().decode(files.get("plan.json")!)) as { steps: { tool: string; arguments: Record<string, unknown> }[] };
for (const s of plan.steps) if (s.tool === "crunch") s.arguments["limit"] = limit;
files.set("plan.json", new TextEncoder().encode(JSON.stringify(plan)));
const env = defaultEnvironment(scratch === null ? {} : { stepWorkerUrl: pathToFileURL(join(scratch, "step-worker.js")) });

async function once(n: number): Promise<{ ms: number; runHash: string }> {
  const t0 = performance.now();
  const run = await runEngine(env, { pack: { files }, parallel: n, trust: { unrestricted: true } });
  if (run.status !== "COMPLETED") throw new Error(`the run ended ${run.status}: ${run.error?.message}`);
  return { ms: performance.now() - t0, runHash: run.runHash };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seq: number[] = [];
const par: number[] = [];
const hashes = new Set<string>();
const load0 = loadavg()[0]!;
await once(1); // warm-up: compile and instrument QuickJS once (the fuel cache)
for (let i = 0; i < rounds; i++) {
  const a = await once(1);
  const b = await once(parallel);
  seq.push(a.ms);
  par.push(b.ms);
  hashes.add(a.runHash).add(b.runHash);
}
const load1 = loadavg()[0]!;
if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
const ratio = median(seq) / median(par);
console.log(`parallel steps (${deno ? "Deno" : "Node"}): 8 independent crunch steps (primes below ${limit}) + total, ${rounds} interleaved rounds`);
console.log(`  sequential (--parallel 1): median ${median(seq).toFixed(0)} ms  [${seq.map((x) => x.toFixed(0)).join(", ")}]`);
console.log(`  parallel (--parallel ${parallel}):   median ${median(par).toFixed(0)} ms  [${par.map((x) => x.toFixed(0)).join(", ")}]`);
console.log(`  speed-up ${ratio.toFixed(2)}x on ${coreCount()} cores; load average ${load0.toFixed(2)} → ${load1.toFixed(2)}; run hashes equal: ${hashes.size === 1}`);
if (hashes.size !== 1) process.exit(1);
