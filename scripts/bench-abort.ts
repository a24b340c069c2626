/**
 * `npm run bench` (abort part; `npx vite-node scripts/bench-abort.ts`): how long the first SIGINT takes to end a run
 * whose tool is busy — a QuickJS loop, a long QuickJS builtin (`join`) and a WASM loop — from the signal to the
 * process's exit with its ABORTED capsule written, on Node (`dist/cli/main.js`) and Deno (the sources), on a quiet
 * machine and with 4 CPU-burning processes (load ≈ 4 on top of whatever else runs). Medians of 3. Targets (README
 * "Benchmarks"): ≤ 1 s quiet, ≤ 3 s at load 4. Printed with the load average; nothing here is asserted by tests.
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { SMOKE, n } from "./bench/smoke.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-bench-abort-"));
const ROUNDS = n(3);

function pack(name: string, kind: string, file: string, source: string | Uint8Array): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, "tools"), { recursive: true });
  writeFileSync(join(dir, "tools", file), source);
  writeFileSync(join(dir, "reach.json"), JSON.stringify({
    specVersion: "1.0.0", id: name, version: "1.0.0", entrypoint: "plan.json",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "t" }] } },
    tools: { t: { kind, module: `tools/${file}` } },
  }));
  writeFileSync(join(dir, "plan.json"), JSON.stringify({ contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "t", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["t"] }, steps: [{ id: "s", tool: "t", arguments: {}, return_spec: { type: "object" } }], success_criteria: [] }));
  return dir;
}

const PACKS: [string, string][] = [
  ["QuickJS loop", pack("js-loop", "js", "t.js", "export default () => { for (;;) {} }")],
  ["QuickJS join", pack("js-join", "js", "t.js", "export default () => { for (;;) { new Array(1e7).join('x') } }")],
  ["WASM loop", pack("wasm-loop", "wasm", "t.wasm", new Uint8Array(readFileSync(join(root, "wasm-tools/build/hang.wasm"))))],
];
const RUNTIMES: [string, string[]][] = [
  ["node", [process.execPath, join(root, "dist/cli/main.js")]],
  ["deno", [join(root, "node_modules/.bin/deno"), "run", "-A", "--quiet", join(root, "src/cli/main.ts")]],
];

/** Start a run, wait for its step to start, SIGINT it 300 ms later; ms from the signal to the exit. */
function latency(cmd: string[], dir: string, out: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0]!, [...cmd.slice(1), "run", dir, "--out", out, "--json", "--step-timeout", "600000"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let sentAt = 0;
    child.stderr.on("data", (d) => {
      stderr += d;
      if (sentAt === 0 && /\[1\/1\] s \(t\)/.test(stderr)) {
        sentAt = -1;
        setTimeout(() => {
          sentAt = performance.now();
          child.kill("SIGINT");
        }, 300);
      }
    });
    child.on("exit", (code) => (code === 1 && sentAt > 0 ? resolve(performance.now() - sentAt) : reject(new Error(`exit ${code}: ${stderr.slice(-400)}`))));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(" ");

try {
  for (const burners of SMOKE ? [0] : [0, 4]) {
    const burning: ChildProcess[] = Array.from({ length: burners }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
    try {
      for (const [runtime, cmd] of RUNTIMES) {
        const cells: string[] = [];
        for (const [what, dir] of PACKS) {
          const ms: number[] = [];
          for (let i = 0; i < ROUNDS; i++) ms.push(await latency(cmd, dir, join(scratch, "out")));
          cells.push(`${what} ${median(ms).toFixed(0)} ms`);
        }
        console.log(`[abort ${runtime}] ${burners === 0 ? "quiet" : `${burners} CPU burners`} (load ${load()}): SIGINT to exit, median of ${ROUNDS}: ${cells.join("; ")}; target ≤ ${burners === 0 ? 1000 : 3000} ms`);
      }
    } finally {
      for (const b of burning) b.kill("SIGKILL");
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
