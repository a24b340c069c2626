// An outcome never depends on load (ARCHITECTURE "Stopping a tool that will not stop"). packs/hanging_tool_fail (a tool
// that spins until its fuel runs out) is run 5 times on Node (the CLI bundle) and 5 times on Deno (its entry in the
// same bundle) while 4 processes burn the CPU: one run hash, and every capsule replays to it. Nothing here is bounded
// by the clock except the test's generous time limit.
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliBundle } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), "reach-load-"));
const burners: ChildProcess[] = [];
let bundle: Awaited<ReturnType<typeof cliBundle>>;

beforeAll(async () => {
  bundle = await cliBundle();
  for (let i = 0; i < 4; i++) burners.push(spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
}, 120_000);
afterAll(() => {
  for (const b of burners) b.kill("SIGKILL");
  bundle?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

async function cli(runtime: "node" | "deno", args: string[]): Promise<{ code: number; stdout: string }> {
  const [cmd, pre] = runtime === "node" ? [process.execPath, [bundle.main]] : [join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", bundle.deno]];
  try {
    const r = await run(cmd, [...pre, ...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "" };
  }
}

describe("under 4 CPU burners", () => {
  it("packs/hanging_tool_fail gives one run hash 5 times on Node and 5 times on Deno, and the capsules replay on both", async () => {
    const capsules: string[] = [];
    const hashes = new Set<string>();
    for (const runtime of ["node", "deno"] as const) {
      for (let i = 0; i < 5; i++) {
        const r = await cli(runtime, ["run", "packs/hanging_tool_fail", "--json", "--quiet", "--out", join(scratch, `${runtime}-${i}`)]);
        expect(r.code, r.stdout).toBe(1);
        const out = JSON.parse(r.stdout) as { runHash: string; capsule: string; error: { code: string } };
        expect(out.error.code).toBe("EXEC_TOOL_TIMEOUT");
        hashes.add(out.runHash);
        capsules.push(out.capsule);
      }
    }
    expect([...hashes]).toHaveLength(1);
    // One run hash commits to one capsule content (conformance/HASHING.md): replaying one on each runtime covers all.
    for (const runtime of ["node", "deno"] as const) expect((await cli(runtime, ["replay", capsules[runtime === "node" ? 9 : 0]!, "--quiet"])).code).toBe(0);
  }, 600_000);
});
