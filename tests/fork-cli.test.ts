// `reach-wasm fork` and `reach-wasm resume` (conformance/HASHING.md "Forks and resumed runs") on Node and on Deno's
// entry: the same parent with the same changes gives the same run hash on both; every capsule written verifies and
// replays; diff names the fork's step; a COMPLETED run is refused for resume with a clear code. Node runs in-process
// (the CLI's `main`), Deno once per command.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/cli.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "./support/platform.ts";
import { jsPack, planOf } from "./support/pack.ts";
import { cliRuntimes } from "./support/service.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-fork-cli-"));
const cli = cliRuntimes(scratch);
const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
beforeAll(() => cli.setup(), 120_000);
afterAll(() => {
  cli.remove();
  rmSync(scratch, { recursive: true, force: true });
});

const T = `export default (input, reach) => { let c = 0; for (let i = 0; i < (input.n ?? 0); i++) c = (c + i) % 1000003;
  const seen = reach.memory.get("k") ?? null; reach.memory.set("k", input.tag); return { tag: input.tag, c, seen, r: Math.floor(Math.random() * 1e6) }; }`;
const files = jsPack({
  tools: { t: T },
  plan: planOf([{ id: "a", tool: "t", arguments: { tag: "one" } }, { id: "b", tool: "t", arguments: { tag: "two", n: 300000 } }, { id: "c", tool: "t", arguments: { tag: "three" } }]),
  manifest: { capabilities: { tools: [{ name: "t" }], resources: [{ uri: "memory://", access: "readwrite" }] } },
});

type Line = { status: string; runHash: string; capsule: string; parentRunHash: string; before: string[] };

/** The CLI on Node, in-process. */
async function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** The CLI on Deno's entry. */
function deno(args: string[]): { code: number; stdout: string; stderr: string } {
  const [, cmd] = cli.runtimes.find(([name]) => name === "deno")!;
  const r = spawnSync(cmd[0]!, [...cmd.slice(1), ...args], { cwd: root, encoding: "utf8", env: { ...process.env, HOME: scratch } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function checked(path: string, runHash: string): Promise<void> {
  const capsule = readRunCapsule(new Uint8Array(readFileSync(path)));
  expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(replay.runHash).toBe(runHash);
}

describe("reach-wasm fork / resume", () => {
  it("fork: the same parent and changes give the same run hash on Node and Deno; it verifies, replays, and diff starts at the step", async () => {
    const parent = await runEngine(env, { pack: { files }, trust: { unrestricted: true } });
    const parentPath = join(scratch, parent.capsule.name);
    writeFileSync(parentPath, parent.capsule.bytes);
    writeFileSync(join(scratch, "answer.json"), JSON.stringify({ found: true, value: "answered" }));
    const args = (out: string) => ["fork", parentPath, "--at", "b", "--args", '{"tag":"cli","n":10}', "--seed", "5", "--response", `1=${join(scratch, "answer.json")}`, "--out", join(scratch, out), "--json", "--quiet"];
    const n = await node(args("n"));
    expect(n.code, n.stderr).toBe(0);
    const d = deno(args("d"));
    expect(d.code, d.stderr).toBe(0);
    const a = JSON.parse(n.stdout) as Line;
    const b = JSON.parse(d.stdout) as Line;
    expect(b.runHash).toBe(a.runHash);
    expect(a.parentRunHash).toBe(parent.runHash);
    expect(a.before).toEqual(["a"]);
    await checked(a.capsule, a.runHash);
    const diff = await node(["diff", parentPath, a.capsule, "--json"]);
    expect(diff.code).toBe(1);
    expect((JSON.parse(diff.stdout) as { firstDivergence: { stepId: string } }).firstDivergence.stepId).toBe("b");
    // a step the parent does not have, and a missing --at, are bad invocations
    expect((await node(["fork", parentPath, "--at", "zz", "--seed", "1", "--out", join(scratch, "x")])).code).toBe(2);
    expect((await node(["fork", parentPath, "--seed", "1"])).code).toBe(2);
  });

  it("resume: an ABORTED run continues to the same run hash on Node and Deno; a COMPLETED one is refused", async () => {
    const full = await runEngine(env, { pack: { files }, trust: { unrestricted: true } });
    const events = new TextDecoder().decode(readRunCapsule(full.capsule.bytes).entries.get("events.jsonl")!).trim().split("\n").map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    const invocationId = String(events.find((e) => e.type === "tool.invoked" && e.payload["stepId"] === "b")!.payload["invocationId"]);
    const aborted = await runEngine(env, { pack: { files }, trust: { unrestricted: true }, stopAt: { invocationId, fuel: "1", signal: "SIGTERM" } });
    expect(aborted.status).toBe("ABORTED");
    const path = join(scratch, aborted.capsule.name);
    writeFileSync(path, aborted.capsule.bytes);
    const n = await node(["resume", path, "--out", join(scratch, "rn"), "--json", "--quiet"]);
    expect(n.code, n.stderr).toBe(0);
    const d = deno(["resume", path, "--out", join(scratch, "rd"), "--json", "--quiet"]);
    expect(d.code, d.stderr).toBe(0);
    const a = JSON.parse(n.stdout) as Line;
    expect((JSON.parse(d.stdout) as Line).runHash).toBe(a.runHash);
    expect(a.status).toBe("COMPLETED");
    expect(a.before).toEqual(["a"]);
    await checked(a.capsule, a.runHash);
    const fullPath = join(scratch, full.capsule.name);
    writeFileSync(fullPath, full.capsule.bytes);
    const refused = await node(["resume", fullPath, "--out", join(scratch, "rx"), "--json"]);
    expect(refused.code).toBe(2);
    expect(refused.stdout + refused.stderr).toMatch(/PROTO_SEQUENCE_ERROR/);
  });
});
