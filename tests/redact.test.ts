// Redaction that still verifies (conformance/HASHING.md "Value commitments", "Redaction"): a step's output leaves the
// archive, the run hash stays, verify passes and lists what is gone, replay replays what it can and names what it
// cannot (REPLAY_REDACTED, exit 3), and a capsule recorded before salted commitments still verifies and replays.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../src/capsule/archive.ts";
import { readRunCapsule, runCapsuleFromEntries } from "../src/capsule/run-capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import { redactCapsule } from "../src/engine/redact.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { jsPack, planOf } from "./support/pack.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "./support/platform.ts";
import { cliRuntimes } from "./support/service.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const root = join(import.meta.dirname, "..");
const scratch = mkdtempSync(join(tmpdir(), "reach-redact-"));
const SECRET = "SECRET-TOKEN-ZQX";
const tools = { shout: `export default (a) => ({ loud: a.word.toUpperCase() + "-ZQX" })`, count: `export default (a) => ({ n: a.n + 1 })` };
const plan = planOf([{ id: "shout", tool: "shout", arguments: { word: "secret-token" } }, { id: "count", tool: "count", arguments: { n: 2 } }]);
const has = (bytes: Uint8Array, text: string): boolean => Buffer.from(gunzipSync(bytes)).includes(Buffer.from(text));

let original: { bytes: Uint8Array; runHash: string };
beforeAll(async () => {
  const run = await runEngine(env, { pack: { files: jsPack({ tools, plan }) } });
  expect(run.status, run.error?.message).toBe("COMPLETED");
  original = { bytes: run.capsule.bytes, runHash: run.runHash };
}, 60_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("reach-wasm redact", () => {
  it("removes a step's output from the archive, keeps the run hash, verifies, lists it, and replays", async () => {
    expect(has(original.bytes, SECRET)).toBe(true);
    const out = redactCapsule(readRunCapsule(original.bytes), { steps: ["shout"] });
    expect(has(out.bytes, SECRET)).toBe(false);
    expect(out.index.runHash).toBe(original.runHash);
    const capsule = readRunCapsule(out.bytes);
    const v = verifyRunCapsule(capsule);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.redacted?.steps).toEqual(["shout"]);
    expect(v.checks.find((c) => c.name === "redaction")?.message).toMatch(/step shout/);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, JSON.stringify(replay.divergence)).toBe(true);
    expect(replay.runHash).toBe(original.runHash);
  });

  it("names what replay cannot do without (REPLAY_REDACTED), and still verifies", async () => {
    const out = redactCapsule(readRunCapsule(redactCapsule(readRunCapsule(original.bytes), { steps: ["shout"] }).bytes), { entries: ["request.json"] });
    const capsule = readRunCapsule(out.bytes);
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    expect(capsule.index.redacted?.steps).toEqual(["shout"]);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches).toBe(false);
    expect(replay.divergence).toBeNull();
    expect(replay.redacted).toMatchObject({ code: "REPLAY_REDACTED", entries: ["request.json"] });
  });

  it("fails verification when a value is missing that capsule.json does not list as redacted", () => {
    const out = redactCapsule(readRunCapsule(original.bytes), { steps: ["shout"] });
    const entries = readArchive(out.bytes);
    const index = JSON.parse(new TextDecoder().decode(entries.get("capsule.json")));
    index.redacted.steps = [];
    entries.set("capsule.json", new TextEncoder().encode(JSON.stringify(index)));
    const v = verifyRunCapsule(runCapsuleFromEntries(entries));
    expect(v.valid).toBe(false);
    expect(v.checks.find((c) => !c.ok)?.name).toBe("outputs");
  });

  it("refuses what it cannot redact, with a fix in the message", () => {
    const c = readRunCapsule(original.bytes);
    expect(() => redactCapsule(c, { steps: ["nope"] })).toThrow(/no tool step "nope"/);
    expect(() => redactCapsule(c, { entries: ["pack/reach.json"] })).toThrow(/the pack is the code that ran/);
    expect(() => redactCapsule(c, { entries: ["events.jsonl"] })).toThrow(/cannot be redacted/);
    expect(() => redactCapsule(c, { blobs: ["xyz"] })).toThrow(/64 lowercase hex/);
    expect(() => redactCapsule(c, {})).toThrow(/nothing to redact/);
  });

  it("a capsule recorded before salted commitments still verifies and replays, and has entries (not steps) redacted", async () => {
    const dir = join(root, "conformance/capsules/hello");
    const file = join(dir, (await import("node:fs")).readdirSync(dir)[0]!);
    const legacy = readRunCapsule(readFileSync(file));
    expect(() => redactCapsule(legacy, { steps: [String((legacy.index.files.find((f) => f.path.startsWith("TASK_"))?.path ?? "TASK_x.json").slice(5, -5))] })).toThrow(/before salted value commitments/);
    const out = redactCapsule(legacy, { entries: ["result.json"] });
    const capsule = readRunCapsule(out.bytes);
    expect(verifyRunCapsule(capsule).checks.filter((c) => !c.ok)).toEqual([]);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches, JSON.stringify(replay.divergence)).toBe(true);
  }, 60_000);
});

describe("redact and verify through the CLI", () => {
  const cli = cliRuntimes(scratch);
  beforeAll(() => cli.setup(), 180_000);
  afterAll(() => cli.remove());
  it("Node redacts, Deno verifies the redacted capsule and replay exits 3 on Node", () => {
    const [node, deno] = [cli.runtimes[0]![1], cli.runtimes[1]![1]];
    const input = join(scratch, "in.capsule.tar.gz");
    const redacted = join(scratch, "out.capsule.tar.gz");
    writeFileSync(input, original.bytes);
    const r = spawnSync(node[0]!, [...node.slice(1), "redact", input, "--step", "shout", "--entry", "request.json", "--out", redacted, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ runHash: original.runHash, redacted: { steps: ["shout"] } });
    expect(has(readFileSync(redacted), SECRET)).toBe(false);
    const v = spawnSync(deno[0]!, [...deno.slice(1), "verify", redacted, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, runHash: original.runHash, redacted: { steps: ["shout"] } });
    const s = spawnSync(process.execPath, [join(root, "conformance/verifier/verify-capsule.mjs"), redacted], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(s.status, s.stdout + s.stderr).toBe(0);
    expect(s.stdout).toMatch(/redact/);
    const run = (...args: string[]) => spawnSync(node[0]!, [...node.slice(1), ...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
    const shown = JSON.parse(run("show", redacted, "--json").stdout);
    expect(shown.steps.find((st: { stepId: string }) => st.stepId === "shout").redacted).toEqual(["arguments", "output"]);
    expect(run("show", redacted).stdout).toMatch(/arguments and output redacted/);
    const diff = JSON.parse(run("diff", input, redacted, "--json").stdout);
    expect(diff.firstDivergence).toBeNull();
    expect(diff.b.redacted).toMatchObject({ steps: ["shout"] });
    const html = join(scratch, "r.html");
    expect(run("report", redacted, "--out", html).status).toBe(0);
    expect(readFileSync(html, "utf8")).toMatch(/output redacted/);
    const p = spawnSync(node[0]!, [...node.slice(1), "replay", redacted, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(p.status, p.stderr).toBe(3);
    expect(JSON.parse(p.stdout)).toMatchObject({ matches: false, redacted: { code: "REPLAY_REDACTED", entries: ["request.json"] } });
  }, 180_000);
});
