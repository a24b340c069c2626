// Redaction that still verifies (conformance/HASHING.md "Value commitments", "Redaction"): a step's output leaves the
// archive, the run hash stays, verify passes and lists what is gone, replay replays what it can and names what it
// cannot (REPLAY_REDACTED, exit 3), and a capsule recorded before salted commitments still verifies and replays.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../src/capsule/archive.ts";
import type { ReachError } from "../src/protocol/errors.ts";
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
const SECRET = "NEKOT-TERCES-ZQX";
// shout turns its word into one the plan does not hold, which goes through its host calls (memory.set / memory.get),
// and its output is passed on to relay; count is independent of both
const tools = {
  shout: `export default (a) => { reach.memory.set("w", a.word.split("").reverse().join("")); return { loud: reach.memory.get("w").toUpperCase() + "-ZQX" }; }`,
  relay: `export default (a) => ({ seen: a.text.length })`,
  count: `export default (a) => ({ n: a.n + 1 })`,
};
const plan = planOf([{ id: "shout", tool: "shout", arguments: { word: "secret-token" } }, { id: "relay", tool: "relay", arguments: { text: { $step: "shout", pointer: "/loud" } } }, { id: "count", tool: "count", arguments: { n: 2 } }]);
const entriesOf = (bytes: Uint8Array): Map<string, Uint8Array> => readArchive(bytes);
/** Whether any entry (decompressed) holds the text raw, JSON-escaped or base64-encoded. */
const has = (bytes: Uint8Array, text: string): boolean => [...entriesOf(bytes).values()].some((b) => {
  const s = Buffer.from(b);
  return [text, JSON.stringify(text).slice(1, -1), Buffer.from(text).toString("base64").replace(/=+$/, "")].some((f) => s.includes(Buffer.from(f)));
});

let original: { bytes: Uint8Array; runHash: string };
beforeAll(async () => {
  const run = await runEngine(env, { pack: { files: jsPack({ tools, plan }) }, trust: { unrestricted: true } });
  expect(run.status, run.error?.message).toBe("COMPLETED");
  original = { bytes: run.capsule.bytes, runHash: run.runHash };
}, 60_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("reach-wasm redact", () => {
  it("removes a step's arguments, output and host calls, keeps the run hash, verifies, and replays up to that step", async () => {
    expect(has(original.bytes, "nekot-terces")).toBe(true);
    expect(has(original.bytes, SECRET)).toBe(true);
    const out = redactCapsule(readRunCapsule(original.bytes), { steps: ["shout", "relay"] });
    // the static plan still holds shout's argument: named, with how (or whether) it can go
    expect(out.stillHeld).toEqual([
      { step: "shout", entry: "pack/plan.json", fix: "cannot be redacted: the pack is the code that ran" },
      { step: "shout", entry: "plan.json", fix: "--entry plan.json" },
    ]);
    expect(has(out.bytes, SECRET)).toBe(false);
    expect(has(out.bytes, "nekot-terces")).toBe(false); // memory.set's request and memory.get's response
    expect(out.index.runHash).toBe(original.runHash);
    const capsule = readRunCapsule(out.bytes);
    const v = verifyRunCapsule(capsule);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.redacted?.steps).toEqual(["relay", "shout"]);
    expect(v.redacted?.entries.map((e) => e.path)).toEqual(expect.arrayContaining(["tape/0.json", "tape/1.json", "TASK_shout.json"]));
    expect(v.checks.find((c) => c.name === "redaction")?.message).toMatch(/steps relay, shout/);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches).toBe(false);
    expect(replay.divergence).toBeNull();
    expect(replay.redacted).toMatchObject({ code: "REPLAY_REDACTED", step: "shout", entries: ["tape/0.json"] });
    expect(replay.redacted!.replayedEvents).toBeGreaterThan(0);
    // idempotent: redacting the redacted capsule alike gives the same bytes
    expect(Buffer.from(redactCapsule(capsule, { steps: ["shout", "relay"] }).bytes).equals(Buffer.from(out.bytes))).toBe(true);
  });

  it("a step without host calls replays whole; the places that still hold its value are named with their fix", async () => {
    const out = redactCapsule(readRunCapsule(original.bytes), { steps: ["count"] });
    expect(out.stillHeld).toEqual([]);
    const replay = await replayCapsule(readRunCapsule(out.bytes), env);
    expect(replay.matches, JSON.stringify(replay.redacted ?? replay.divergence)).toBe(true);
    expect(replay.runHash).toBe(original.runHash);
    const partial = redactCapsule(readRunCapsule(original.bytes), { steps: ["shout"] });
    expect(partial.stillHeld).toContainEqual(expect.objectContaining({ step: "shout", entry: "events.jsonl", fix: "--step relay" }));
    expect(partial.stillHeld).toContainEqual(expect.objectContaining({ step: "shout", entry: "TASK_relay.json", fix: "--entry TASK_relay.json" }));
  });

  it("names what replay cannot do without (REPLAY_REDACTED), and still verifies", async () => {
    const out = redactCapsule(readRunCapsule(redactCapsule(readRunCapsule(original.bytes), { steps: ["count"] }).bytes), { entries: ["request.json"] });
    const capsule = readRunCapsule(out.bytes);
    expect(verifyRunCapsule(capsule).valid).toBe(true);
    expect(capsule.index.redacted?.steps).toEqual(["count"]);
    const replay = await replayCapsule(capsule, env);
    expect(replay.matches).toBe(false);
    expect(replay.divergence).toBeNull();
    expect(replay.redacted).toMatchObject({ code: "REPLAY_REDACTED", entries: ["request.json"] });
  });

  it("fails verification when a value is missing that capsule.json does not list as redacted", () => {
    const out = redactCapsule(readRunCapsule(original.bytes), { steps: ["shout"] });
    const entries = entriesOf(out.bytes);
    const index = JSON.parse(new TextDecoder().decode(entries.get("capsule.json")));
    index.redacted.steps = [];
    entries.set("capsule.json", new TextEncoder().encode(JSON.stringify(index)));
    const v = verifyRunCapsule(runCapsuleFromEntries(entries));
    expect(v.valid).toBe(false);
    expect(v.checks.find((c) => !c.ok)?.name).toBe("outputs");
    // a host call's value changed: its commitment no longer holds
    const forged = entriesOf(original.bytes);
    const call = JSON.parse(new TextDecoder().decode(forged.get("tape/0.json")));
    call.request.value = "something-else";
    forged.set("tape/0.json", new TextEncoder().encode(JSON.stringify(call) + "\n"));
    const f = verifyRunCapsule(runCapsuleFromEntries(forged));
    expect(f.valid).toBe(false);
  });

  it("refuses what it cannot redact, with a code and a fix in the message", () => {
    const c = readRunCapsule(original.bytes);
    const refused = (t: Parameters<typeof redactCapsule>[1], re: RegExp): void => {
      try {
        redactCapsule(c, t);
        expect.unreachable();
      } catch (e) {
        expect((e as ReachError).code).toBe("PROTO_INVALID_ARGUMENT");
        expect((e as Error).message).toMatch(re);
      }
    };
    refused({ steps: ["nope"] }, /no tool step "nope"; name a step/);
    refused({ entries: ["pack/reach.json"] }, /the pack is the code that ran/);
    refused({ entries: ["events.jsonl"] }, /cannot be redacted/);
    refused({ entries: ["../etc/passwd"] }, /no entry/);
    refused({ entries: ["workspace/after/../../request.json"] }, /no entry/);
    refused({ blobs: ["xyz"] }, /64 lowercase hex/);
    refused({ blobs: ["a".repeat(64)] }, /no entry/);
    refused({}, /nothing to redact/);
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
    const bad = spawnSync(node[0]!, [...node.slice(1), "redact", input, "--step", "shout", "--entry", "../../x", "--out", redacted], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/PROTO_INVALID_ARGUMENT.*no entry "\.\.\/\.\.\/x"/);
    expect(existsSync(redacted)).toBe(false); // nothing written, not even in part
    const r = spawnSync(node[0]!, [...node.slice(1), "redact", input, "--step", "shout", "--entry", "request.json", "--out", redacted, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ runHash: original.runHash, redacted: { steps: ["shout"] }, stillHeld: expect.arrayContaining([expect.objectContaining({ fix: "--step relay" })]) });
    expect(r.stderr).toMatch(/a value of step shout is still in events\.jsonl \(event \d+\); redact it too with --step relay/);
    expect(has(readFileSync(redacted), "nekot-terces")).toBe(false);
    const v = spawnSync(deno[0]!, [...deno.slice(1), "verify", redacted, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, runHash: original.runHash, redacted: { steps: ["shout"] } });
    const s = spawnSync(process.execPath, [join(root, "conformance/verifier/verify-capsule.mjs"), redacted], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(s.status, s.stdout + s.stderr).toBe(0);
    expect(s.stdout).toMatch(/redact/);
    const run = (...args: string[]) => spawnSync(node[0]!, [...node.slice(1), ...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
    const shown = JSON.parse(run("show", redacted, "--json").stdout);
    expect(shown.steps.find((st: { stepId: string }) => st.stepId === "shout").redacted).toEqual(["arguments", "output", "host calls"]);
    expect(run("show", redacted).stdout).toMatch(/arguments and output and host calls redacted/);
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
