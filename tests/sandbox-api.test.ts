// Sandbox API levels (conformance/HASHING.md "What request.json holds"): a run records the level of the `reach` object
// its js and python tools get (`sandboxApi`, absent = 1); level 2 adds reach.secret(name), which gives the placeholder
// {{secret:NAME}} of a declared secret and refuses any other name with a recorded PROTO_INVALID_ARGUMENT. Runs recorded
// before levels existed (every committed capsule but secret-api-v2) replay, fork and resume at level 1 with the fuel
// they recorded; the runners keep one prepared sandbox per level.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../src/capsule/archive.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import type { RunCapsule } from "../src/capsule/run-capsule.ts";
import { recordedSandboxApi } from "../src/engine/capsule.ts";
import { runEngine } from "../src/engine/engine.ts";
import type { EngineRun } from "../src/engine/engine.ts";
import { forkCapsule, resumeCapsule } from "../src/engine/fork.ts";
import { replayCapsule } from "../src/engine/replay.ts";
import { defaultEnvironment } from "../src/host/environment.ts";
import { readTapeJsonl } from "../src/record/tape-jsonl.ts";
import type { ReachError } from "../src/protocol/errors.ts";
import { QuickJsRunner } from "../src/sandbox/quickjs/runner.ts";
import type { ToolOutcome } from "../src/sandbox/types.ts";
import { readQuickJsEngineWasm } from "./support/platform.ts";
import { jsPack, packFromDisk, planOf } from "./support/pack.ts";
import { invocation, pythonRunner, runTool, testHost } from "./support/python.ts";
import { leaksIn, startEchoServer } from "./support/secret-server.ts";
import type { EchoServer } from "./support/secret-server.ts";

const TOKEN = "level-two-token-0123456789";
const env = defaultEnvironment();
let server: EchoServer;
beforeAll(async () => {
  server = await startEchoServer([TOKEN]);
});
afterAll(async () => {
  await server?.close();
});

const dec = new TextDecoder();
const requestOf = (capsule: Uint8Array | RunCapsule): Record<string, unknown> =>
  JSON.parse(dec.decode((capsule instanceof Uint8Array ? readRunCapsule(capsule) : capsule).entries.get("request.json")!)) as Record<string, unknown>;
const committed = (folder: string): RunCapsule => {
  const dir = new URL(`../conformance/capsules/${folder}/`, import.meta.url);
  const file = readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!;
  return readRunCapsule(new Uint8Array(readFileSync(new URL(file, dir))));
};
const brief = (o: ToolOutcome): unknown => (o.status === "success" ? o.output : `${o.error.code}: ${o.error.message}`);

/** A pack with one js and one python step, both asking for secrets; `declared` secrets in reach.json. */
function askingPack(js: string, py: string): Map<string, Uint8Array> {
  const files = jsPack({
    tools: { js },
    plan: planOf([{ id: "py", tool: "py" }, { id: "js", tool: "js" }]),
    manifest: { capabilities: { tools: [{ name: "js" }, { name: "py" }] } },
  });
  files.set("tools/py.py", new TextEncoder().encode(py));
  const doc = JSON.parse(dec.decode(files.get("reach.json")));
  doc.tools.py = { kind: "python", module: "tools/py.py" };
  doc.secrets = { API_TOKEN: { hosts: ["127.0.0.1"] } };
  files.set("reach.json", new TextEncoder().encode(JSON.stringify(doc)));
  return files;
}

describe("reach.secret (sandbox API level 2)", () => {
  it("js and python tools get the placeholder; the API gets the value; the capsule records level 2 and no byte of the value; replay needs no value", async () => {
    const before = server.seen.length;
    const r = await runEngine(env, { pack: { files: packFromDisk("secret-api") }, trust: { unrestricted: true }, fetch: (u, i) => fetch(u, i),
      input: { url: `http://127.0.0.1:${server.port}/echo` }, secrets: { API_TOKEN: TOKEN } });
    expect(r.status, JSON.stringify(r.error?.toDetails())).toBe("COMPLETED");
    // the python step's reach.secret and the js step's both went out as the value, to the secret's host only
    const got = server.seen.slice(before);
    expect(got.map((s) => [s.headers.authorization, s.headers["x-api-key"]])).toEqual([[`Bearer ${TOKEN}`, TOKEN]]);
    expect((r.result["outputs"] as Record<string, unknown>)["headers"]).toEqual({ "x-api-key": "{{secret:API_TOKEN}}" });
    expect(requestOf(r.capsule.bytes)["sandboxApi"]).toBe(2);
    const tape = dec.decode(readRunCapsule(r.capsule.bytes).entries.get("tape.jsonl"));
    expect(tape.match(/"secret\.placeholder"/g)?.length).toBe(2);
    for (const [name, bytes] of [["capsule", r.capsule.bytes], ...readArchive(r.capsule.bytes), ...r.files] as [string, Uint8Array][]) {
      expect(leaksIn(bytes, TOKEN), `${name} holds the secret`).toEqual([]);
    }
    const replay = await replayCapsule(readRunCapsule(r.capsule.bytes), env);
    expect(replay.divergence).toBeNull();
    expect(replay.runHash).toBe(r.runHash);
  }, 60_000);

  it("a malformed or undeclared name is a clear PROTO_INVALID_ARGUMENT, recorded on the tape, the same on replay", async () => {
    const py = [
      "def main(input, reach):",
      "    out = {}",
      "    for name in ['NOPE', '1 bad']:",
      "        try:",
      "            reach.secret(name)",
      "        except reach.ReachError as e:",
      "            out[name] = e.code + ': ' + e.message",
      "    return out",
      "",
    ].join("\n");
    const js = `export default (input, reach) => reach.secret("OTHER_TOKEN");\n`;
    const r: EngineRun = await runEngine(env, { pack: { files: askingPack(js, py) }, trust: { unrestricted: true }, secrets: { API_TOKEN: TOKEN } });
    const caught = (r.result["outputs"] as Record<string, Record<string, string>>)["py"]!;
    expect(caught["NOPE"]).toMatch(/^PROTO_INVALID_ARGUMENT: reach\.secret\("NOPE"\): the pack declares no secret NOPE; declare it under "secrets" in reach\.json.*it declares API_TOKEN$/);
    expect(caught["1 bad"]).toMatch(/^PROTO_INVALID_ARGUMENT: reach\.secret\("1 bad"\): a secret name is letters, digits and _/);
    // uncaught in the js tool: the step fails with the host's code and message
    expect(r.status).toBe("FAILED");
    expect(r.error?.code).toBe("EXEC_TOOL_FAILED");
    expect(r.error?.details["errorCode"]).toBe("PROTO_INVALID_ARGUMENT");
    expect(r.error?.message).toContain("the pack declares no secret OTHER_TOKEN");
    const capsule = readRunCapsule(r.capsule.bytes);
    const calls = readTapeJsonl(capsule.entries.get("tape.jsonl")!, undefined, capsule.entries) as unknown as { op: string; request: unknown; error?: { code: string } }[];
    expect(calls.map((c) => [c.op, c.request, c.error?.code])).toEqual([
      ["secret.placeholder", { name: "NOPE" }, "PROTO_INVALID_ARGUMENT"],
      ["secret.placeholder", { name: "1 bad" }, "PROTO_INVALID_ARGUMENT"],
      ["secret.placeholder", { name: "OTHER_TOKEN" }, "PROTO_INVALID_ARGUMENT"],
    ]);
    const replay = await replayCapsule(readRunCapsule(r.capsule.bytes), env);
    expect(replay.divergence).toBeNull();
    expect(replay.matches).toBe(true);
  }, 60_000);
});

describe("capsules recorded before sandbox API levels (level 1)", () => {
  it("replay with the fuel they recorded, and a resume of one stays at level 1", async () => {
    const chart = committed("chart"); // a python tool and a js tool that use reach
    expect(requestOf(chart)["sandboxApi"]).toBeUndefined();
    const replay = await replayCapsule(chart, env);
    expect(replay.divergence).toBeNull();
    expect(replay.matches).toBe(true);
    const resumed = await resumeCapsule(committed("notes-aborted"), env);
    expect(resumed.status).toBe("COMPLETED");
    expect(requestOf(resumed.capsule.bytes)["sandboxApi"]).toBeUndefined();
    expect((await replayCapsule(readRunCapsule(resumed.capsule.bytes), env)).matches).toBe(true);
  }, 120_000);

  it("a fork keeps its parent's level; request.json's level is read strictly", async () => {
    const probe = `export default (input, reach) => ({ secret: typeof reach.secret, tag: input.tag ?? null });\n`;
    const files = jsPack({ tools: { probe }, plan: planOf([{ id: "a", tool: "probe" }, { id: "b", tool: "probe", arguments: { tag: "parent" } }]) });
    const parent = await runEngine(env, { pack: { files } });
    expect(parent.result["outputs"]).toEqual({ a: { secret: "function", tag: null }, b: { secret: "function", tag: "parent" } });
    const fork = await forkCapsule(readRunCapsule(parent.capsule.bytes), env, "b", { arguments: { tag: "fork" } });
    expect(fork.result["outputs"]).toEqual({ a: { secret: "function", tag: null }, b: { secret: "function", tag: "fork" } });
    expect(requestOf(fork.capsule.bytes)["sandboxApi"]).toBe(2);
    expect((await replayCapsule(readRunCapsule(fork.capsule.bytes), env)).matches).toBe(true);
    expect(recordedSandboxApi({})).toBe(1);
    expect(recordedSandboxApi({ sandboxApi: 2 })).toBe(2);
    const newer = (() => { try { return recordedSandboxApi({ sandboxApi: 3 }); } catch (e) { return e; } })() as ReachError;
    expect(newer.code).toBe("PROTO_VERSION_MISMATCH");
    expect(newer.message).toMatch(/level 3; this reach-wasm runs levels 1, 2; replay it with a newer reach-wasm/);
    for (const bad of ["2", 0, 1.5, null]) expect(() => recordedSandboxApi({ sandboxApi: bad })).toThrow(/not a sandbox API level/);
  }, 60_000);
});

describe("one prepared sandbox per level", () => {
  const JS = `export default (input, reach) => { let s = 0; for (let i = 0; i < 500; i++) s += i; return { secret: typeof reach.secret, s }; }`;
  const host = () => testHost("7", "inv-1", { "secret.placeholder": () => ({ placeholder: "{{secret:X}}" }) });

  it("QuickJS: levels interleaved on one runner give each level's fresh-runner outcome and fuel", async () => {
    const fresh = async (level: 1 | 2) => new QuickJsRunner({ engineWasm: readQuickJsEngineWasm }).run(invocation(JS, null, { sandboxApi: level, host: host() }));
    const want = { 1: await fresh(1), 2: await fresh(2) };
    expect(brief(want[1])).toEqual({ secret: "undefined", s: 124750 });
    expect(brief(want[2])).toEqual({ secret: "function", s: 124750 });
    const runner = new QuickJsRunner({ engineWasm: readQuickJsEngineWasm });
    for (const level of [1, 2, 2, 1, 2, 1] as const) {
      const out = await runner.run(invocation(JS, null, { sandboxApi: level, host: host() }));
      expect([brief(out), out.fuelUsed], `level ${level}`).toEqual([brief(want[level]), want[level].fuelUsed]);
    }
  }, 60_000);

  it("Python: levels interleaved on one runner give each level's fresh-runner outcome and fuel", async () => {
    const PY = "def main(input, reach):\n    return {'secret': hasattr(reach, 'secret'), 's': sum(range(500))}\n";
    const want = { 1: await runTool(pythonRunner(), PY, null, { sandboxApi: 1 }), 2: await runTool(pythonRunner(), PY, null, { sandboxApi: 2 }) };
    expect(brief(want[1])).toEqual({ secret: false, s: 124750 });
    expect(brief(want[2])).toEqual({ secret: true, s: 124750 });
    const runner = pythonRunner();
    for (const level of [1, 2, 2, 1, 2, 1] as const) {
      const out = await runTool(runner, PY, null, { sandboxApi: level });
      expect([brief(out), out.fuelUsed], `level ${level}`).toEqual([brief(want[level]), want[level].fuelUsed]);
    }
  }, 60_000);
});
