// Session runs: steps that arrive one at a time from outside, checked and recorded like plan steps; the capsule
// records the calls as its plan, and verify and replay accept it like any other.
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { readPythonWasm, readQuickJsEngineWasm } from "../../tests/support/platform.ts";
import { openSession } from "./engine.ts";
import { replayCapsule } from "./replay.ts";
import { verifyRunCapsule } from "./verify.ts";
import { packFromDisk } from "../../tests/support/pack.ts";
import { memoryDigest, SESSION_START, sessionLink } from "./session-chain.ts";
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

describe("session chains (conformance/HASHING.md)", () => {
  const enc = new TextEncoder();
  /** packs/hello with memory://notes/ declared and a read-write out/ folder. */
  function chainPack(): Map<string, Uint8Array> {
    const files = packFromDisk("hello");
    const m = JSON.parse(new TextDecoder().decode(files.get("reach.json")!)) as { manifest: { capabilities: Record<string, unknown>; policies: Record<string, unknown> } };
    m.manifest.capabilities["resources"] = [{ uri: "memory://notes/", access: "readwrite" }, { uri: "workspace:///out/", access: "readwrite" }];
    m.manifest.policies["maxToolCalls"] = 2;
    files.set("reach.json", enc.encode(JSON.stringify(m)));
    return files;
  }
  const A = "a".repeat(64);

  it("a later run starts from the workspace (files and links) and memory it is given, names the run before it (its own run id), and its capsule verifies and replays alone", async () => {
    const files = chainPack();
    const first = await openSession(env, { pack: { files }, session: SESSION_START });
    const workspace = { files: new Map([["temp/a.txt", enc.encode("carried\n")], ["out/deep/b.txt", enc.encode("b")]]), links: new Map([["out/deep/to-a", "../../temp/a.txt"]]) };
    const second = await openSession(env, { pack: { files }, session: { segment: 2, previousRunHash: A, workspace, memory: [["notes/k", '{"n":1}']] } });
    expect(await second.call("read_memory", { key: "notes/k" })).toMatchObject({ ok: true, output: { value: { n: 1 } } });
    expect(await second.call("read_lines", { path: "out/deep/to-a" })).toMatchObject({ ok: true, output: { lines: ["carried"] } });
    // refused arguments cost nothing in a chain: the budget of 2 calls is not touched
    expect(await second.call("read_lines", { path: 7 })).toMatchObject({ ok: false, stepId: null, ended: false, spent: { toolCalls: 2 } });
    const run = await second.close();
    expect(run.status).toBe("COMPLETED");
    expect(run.runId).not.toBe((await first.close()).runId);
    expect(run.next).toMatchObject({ segment: 3, previousRunHash: run.runHash, memory: [["notes/k", '{"n":1}']] });
    expect([...run.next!.workspace!.links]).toEqual([["out/deep/to-a", "../../temp/a.txt"]]);
    const capsule = readRunCapsule(run.capsule.bytes);
    expect(JSON.parse(new TextDecoder().decode(capsule.entries.get("request.json")!))).toMatchObject({ mode: "session", session: { segment: 2, previousRunHash: A, memory: [["notes/k", '{"n":1}']] } });
    expect(sessionLink(capsule)).toMatchObject({ segment: 2, previousRunHash: A, memoryBefore: memoryDigest([["notes/k", '{"n":1}']]), memoryAfter: memoryDigest([["notes/k", '{"n":1}']]) });
    expect(new TextDecoder().decode(capsule.entries.get("workspace/before/out/deep/to-a")!)).toBe("../../temp/a.txt");
    await checkCapsule(run);
  });

  it("a chain link from outside is checked before anything runs", async () => {
    const files = chainPack();
    const bad: unknown[] = [
      { segment: 0, previousRunHash: null, memory: [] },
      { segment: 1, previousRunHash: A, memory: [] },
      { segment: 2, previousRunHash: "nope", memory: [] },
      { segment: 2, previousRunHash: A, memory: [["notes/b", "1"], ["notes/a", "1"]] },
      { segment: 2, previousRunHash: A, memory: [["notes/a", "{ \"x\": 1 }"]] },
      { segment: 2, previousRunHash: A, memory: [], workspace: { files: new Map([["etc/passwd", enc.encode("x")]]), links: new Map() } },
    ];
    for (const session of bad) {
      await expect(openSession(env, { pack: { files }, session: session as typeof SESSION_START })).rejects.toMatchObject({ code: "PROTO_INVALID_ARGUMENT" });
    }
  });
});
