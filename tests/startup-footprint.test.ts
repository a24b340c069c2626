// Start-up (README "Benchmarks"): what a warm `reach-wasm run packs/hello` must not load, checked by what the process
// loaded (not by a clock). Each item was a measured share of a short run's CPU: zod and its schemas (~17 ms; a warm run
// finds its pack and plan in the validated-document cache), Node's promise file system with its readline modules
// (~3 ms), and perf_hooks (~1 ms).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withCliBundle } from "./support/cli-bundle-hooks.ts";

const root = new URL("../", import.meta.url).pathname;
const { scratch, main } = withCliBundle("reach-footprint-");

/** Run the CLI with a preload that writes, at exit, the modules Node loaded and whether zod was initialised. */
function footprint(args: string[]): { modules: string[]; zod: boolean } {
  const report = join(scratch, "report.json");
  const preload = join(scratch, "preload.cjs");
  writeFileSync(preload, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify({
    modules: process.moduleLoadList, zod: globalThis.__zod_globalRegistry !== undefined,
  })));\n`);
  const env = { ...process.env, REACH_WASM_CACHE: join(scratch, "cache") };
  execFileSync(process.execPath, ["-r", preload, main(), ...args], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
  return JSON.parse(readFileSync(report, "utf8")) as { modules: string[]; zod: boolean };
}

describe("a warm run of packs/hello", () => {
  it("loads neither zod nor node:fs/promises nor perf_hooks (the first run, cold, may)", () => {
    const out = join(scratch, "out");
    const cold = footprint(["run", "packs/hello", "--out", out, "--quiet"]);
    expect(cold.zod).toBe(true); // the cold run validated reach.json and plan.json with the schemas
    const warm = footprint(["run", "packs/hello", "--out", out, "--quiet"]);
    expect(warm.zod).toBe(false);
    expect(warm.modules.filter((m) => /^NativeModule (fs\/promises|perf_hooks|internal\/readline\/interface)$/.test(m))).toEqual([]);
  });

  it("other commands still build schemas where they need them (verify reads the capsule index with zod)", () => {
    const out = join(scratch, "out2");
    footprint(["run", "packs/hello", "--out", out, "--quiet"]);
    const capsule = execFileSync("sh", ["-c", `ls ${out}/*.capsule.tar.gz`], { encoding: "utf8" }).trim();
    expect(footprint(["verify", capsule]).zod).toBe(true);
  });
});
