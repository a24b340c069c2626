/**
 * `npm run bench`: reach-wasm's benchmarks, printed as ratios against baselines measured in the same run (the
 * machines are shared and noisy; nothing here is asserted by tests). Runs under Node (vite-node) and Deno.
 * Per-step cost at 10/50/100 steps (`bench/steps.ts`); start-up CPU against the bare runtime (`bench/startup.ts`).
 * Targets (README "Benchmarks"): ≥ 100,000 events/s appended and chained with 1 KiB payloads; SHA-256 of a 64 MiB
 * buffer at ≥ 70% of node:crypto's MB/s; per tool kind, warm per-invocation time against a raw baseline (≤ 1.5×).
 * @module
 */
import { setSha256Backend } from "../src/canonical/sha256.ts";
import { nativeSha256Backend } from "../src/platform/native-sha256.ts";
import { benchCapsule } from "./bench/capsule.ts";
import { benchEngine } from "./bench/engine.ts";
import { benchLedger } from "./bench/ledger.ts";
import { benchSha256 } from "./bench/sha256.ts";
import { benchStartup } from "./bench/startup.ts";
import { benchSteps } from "./bench/steps.ts";
import { benchComponent, benchQuickJs, benchTools } from "./bench/tools.ts";

setSha256Backend(nativeSha256Backend); // the core measured on the native backend, as an engine call on Node uses it
const runtime = "Deno" in globalThis ? `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}` : `node ${globalThis.process?.version}`;
const log = (line: string) => console.log(`[${runtime}] ${line}`);
const ledger = benchLedger(log);
const sha = await benchSha256(log);
await benchTools(log);
await benchQuickJs(log);
await benchComponent(log);
await benchEngine(log);
await benchCapsule(log);
await benchSteps(log);
benchStartup(log);
log(`targets: ledger ${ledger.eventsPerSec >= 100_000 ? "met" : "MISSED"} (≥ 100,000 events/s); ` +
  `SHA-256 ${sha.ratio >= 0.7 ? "met" : "MISSED"} (ours/native ${(sha.ratio * 100).toFixed(0)}% ≥ 70%)`);
// exec_python (seed 002) against the bare interpreter, cold and warm (its own script, also run alone)
await import("./bench-python.ts");
