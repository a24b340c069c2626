// Session runs: steps that arrive one at a time from outside, checked and recorded like plan steps; the capsule
// records the calls as its plan, and verify and replay accept it like any other.
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { readPythonWasm } from "../platform/python-engine.ts";
import { readQuickJsEngineWasm } from "../platform/quickjs-engine.ts";
import { openSession } from "./engine.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";
import { packFromDisk } from "./_test-pack.ts";
import type { EngineRun } from "./engine.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };

async function checkCapsule(run: EngineRun): Promise<void> {
  const capsule = readRunCapsule(run.capsule.bytes);
  const v = verifyRunCapsule(capsule);
  expect(v.checks.filter((c) => !c.ok)).toEqual([]);
  const replay = await replayCapsule(capsule, env);
  expect(replay.matches, replay.divergence?.message).toBe(true);
  expect(replay.rebuilt?.indexMatches).toBe(true);
}

describe("session runs", () => {
  it("lists the pack's tools and the infra tools; calls are steps; a bad argument is answered and the session goes on; close → COMPLETED; verify and replay accept it", async () => {
    const session = await openSession(env, { pack: { files: packFromDisk("hello") } });
    expect(session.tools().map((t) => t.name)).toEqual(["wordcount", "write_memory", "read_memory", "write_temp", "read_lines", "exec_python"]);
    const counted = await session.call("wordcount", { text: "one two three" });
    expect(counted).toMatchObject({ ok: true, stepId: "call-1", output: { words: 3 } });
    expect(await session.call("write_memory", { key: "k", value: [1] })).toMatchObject({ ok: true, output: { ok: true } });
    const bad = await session.call("write_memory", { value: 1 });
    expect(bad).toMatchObject({ ok: false, ended: false });
    expect(!bad.ok && bad.error.code).toBe("PROTO_SCHEMA_VIOLATION");
    const py = await session.call("exec_python", { code: "result = 6 * 7" });
    expect(py, !py.ok ? py.error.message : "").toMatchObject({ ok: true, output: { result: 42 } });
    const run = await session.close();
    expect(run.status).toBe("COMPLETED");
    expect(JSON.parse(new TextDecoder().decode(readRunCapsule(run.capsule.bytes).entries.get("plan.json")!)).steps).toHaveLength(4);
    await checkCapsule(run);
  });

  it("lists and reads the workspace's files as the committed steps left them, without recording anything", async () => {
    const session = await openSession(env, { pack: { files: packFromDisk("hello") } });
    expect(session.workspace()).toEqual([]);
    const written = await session.call("write_temp", { name: "notes.txt", content: "one\ntwo\n" });
    expect(written).toMatchObject({ ok: true, output: { path: "temp/notes.txt" } });
    expect(session.workspace()).toEqual([{ path: "temp/notes.txt", size: 8 }]);
    expect(new TextDecoder().decode(session.readWorkspace("temp/notes.txt")!)).toBe("one\ntwo\n");
    expect(session.readWorkspace("temp/absent.txt")).toBeNull();
    expect(session.readWorkspace("../etc/passwd")).toBeNull();
    const run = await session.close();
    expect(JSON.parse(new TextDecoder().decode(readRunCapsule(run.capsule.bytes).entries.get("plan.json")!)).steps).toHaveLength(1);
    await checkCapsule(run);
  });

  it("the run's budgets hold: a call past manifest.policies.maxToolCalls ends the session FAILED", async () => {
    const session = await openSession(env, { pack: { files: packFromDisk("hello") } }); // maxToolCalls 4
    for (let i = 0; i < 4; i++) expect((await session.call("read_memory", { key: `k${i}` })).ok).toBe(true);
    const over = await session.call("read_memory", { key: "k4" });
    expect(over).toMatchObject({ ok: false, ended: true });
    expect(!over.ok && over.error.code).toBe("POLICY_RATE_LIMIT_EXCEEDED");
    await checkCapsule(await session.close());
  });

  it("an undefined tool is a recorded POLICY_VIOLATION (UNDEFINED_TOOL) that ends the session FAILED; later calls name the capsule", async () => {
    const session = await openSession(env, { pack: { files: packFromDisk("hello") } });
    await session.call("wordcount", { text: "a" });
    const denied = await session.call("rm_rf", {});
    expect(denied).toMatchObject({ ok: false, ended: true });
    expect(!denied.ok && denied.error.details["violationType"]).toBe("UNDEFINED_TOOL");
    expect(session.ended?.status).toBe("FAILED");
    await expect(session.call("wordcount", { text: "b" })).rejects.toMatchObject({ code: "PROTO_SEQUENCE_ERROR", message: expect.stringContaining(session.ended!.runHash) });
    const run = await session.close();
    expect(run.runHash).toBe(session.ended!.runHash);
    await checkCapsule(run);
  });

  it("an abort ends the session ABORTED, between calls, and the capsule replays", async () => {
    const controller = new AbortController();
    const session = await openSession(env, { pack: { files: packFromDisk("hello") }, signal: controller.signal });
    await session.call("wordcount", { text: "a" });
    controller.abort("SIGTERM");
    const run = await session.close();
    expect(run.status).toBe("ABORTED");
    await checkCapsule(run);
  });
});
